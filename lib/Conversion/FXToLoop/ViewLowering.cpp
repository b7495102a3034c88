//===- ViewLowering.cpp - Views, flips, repeats, splits and padding -------===//
//
// Part of Kiln. Views (clone, alias, permute, expand, squeeze, unsqueeze,
// slice, select, view, diagonal, as_strided) and flip, repeat, split and
// padding: index-map nodes that read their source where the result's element
// lies, which inlining folds into their readers, so that a view costs index
// arithmetic, not a copy.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The dynamic sizes of `resultType` when its dimension `dim` has the size of
/// `source`'s dimension `sourceDim(dim)` (negative: none); fails when a
/// dynamic result dimension has no dynamic source dimension.
static FailureOr<SmallVector<Value>>
getViewDynamicSizes(OpBuilder &b, Location loc, Value source,
                    RankedTensorType resultType,
                    function_ref<int64_t(int64_t)> sourceDim) {
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < resultType.getRank(); ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    int64_t from = sourceDim(dim);
    if (from < 0)
      return failure();
    sizes.push_back(getDimSize(b, loc, source, from));
  }
  return sizes;
}

/// Source dimensions and result dimensions of a view with as many elements.
using ViewGroup = std::pair<SmallVector<int64_t>, SmallVector<int64_t>>;

/// Splits a view's dimensions into the smallest groups with as many
/// elements on both sides, a dynamic dimension paired with the next dynamic
/// one as a group of its own; fails when the sizes do not regroup so.
static FailureOr<SmallVector<ViewGroup>>
groupViewDimensions(RankedTensorType sourceType, RankedTensorType resultType) {
  int64_t sourceRank = sourceType.getRank(), resultRank = resultType.getRank();
  SmallVector<ViewGroup> groups;
  int64_t i = 0, j = 0;
  while (i < sourceRank || j < resultRank) {
    SmallVector<int64_t> sourceDims, resultDims;
    if (i < sourceRank && j < resultRank && sourceType.isDynamicDim(i) &&
        resultType.isDynamicDim(j)) {
      groups.push_back({{i++}, {j++}});
      continue;
    }
    // A size-1 dimension before a dynamic one, or last, is a group of its
    // own (a mask's [T, T] -> [1, 1, T, T]).
    if (j < resultRank && resultType.getDimSize(j) == 1 &&
        (i >= sourceRank || sourceType.isDynamicDim(i))) {
      groups.push_back({{}, {j++}});
      continue;
    }
    if (i < sourceRank && sourceType.getDimSize(i) == 1 &&
        (j >= resultRank || resultType.isDynamicDim(j))) {
      groups.push_back({{i++}, {}});
      continue;
    }
    int64_t sourceElements = 1, resultElements = 1;
    do {
      if (i < sourceRank &&
          (sourceDims.empty() || sourceElements < resultElements ||
           (j >= resultRank))) {
        if (sourceType.isDynamicDim(i))
          return failure();
        sourceElements *= sourceType.getDimSize(i);
        sourceDims.push_back(i++);
      } else if (j < resultRank) {
        if (resultType.isDynamicDim(j))
          return failure();
        resultElements *= resultType.getDimSize(j);
        resultDims.push_back(j++);
      } else {
        break;
      }
    } while (sourceElements != resultElements || resultDims.empty() ||
             (i < sourceRank && sourceType.getDimSize(i) == 1 &&
              !sourceType.isDynamicDim(i) && j >= resultRank));
    if (sourceElements != resultElements)
      return failure();
    groups.push_back({sourceDims, resultDims});
  }
  return groups;
}

/// The sizes of a view's dynamic dimensions (null for static ones), when
/// the view maps through one linear index.
struct LinearizedViewSizes {
  SmallVector<Value> source, result;
};

/// The run-time sizes of a view from `source` to `resultType`, which has at
/// most one dynamic dimension: the source's element count over the
/// result's static sizes.
static LinearizedViewSizes getLinearizedViewSizes(OpBuilder &b, Location loc,
                                                  Value source,
                                                  RankedTensorType resultType) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  LinearizedViewSizes sizes;
  Value elements = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t dim = 0; dim < sourceType.getRank(); ++dim) {
    Value size = getDimSize(b, loc, source, dim);
    sizes.source.push_back(sourceType.isDynamicDim(dim) ? size : Value());
    elements = arith::MulIOp::create(b, loc, elements, size);
  }
  int64_t staticElements = 1;
  for (int64_t dim = 0; dim < resultType.getRank(); ++dim)
    if (!resultType.isDynamicDim(dim))
      staticElements *= resultType.getDimSize(dim);
  for (int64_t dim = 0; dim < resultType.getRank(); ++dim)
    sizes.result.push_back(
        resultType.isDynamicDim(dim)
            ? arith::DivUIOp::create(
                  b, loc, elements,
                  arith::ConstantIndexOp::create(b, loc, staticElements))
                  .getResult()
            : Value());
  return sizes;
}

/// The run-time sizes of a view whose result's dynamic sizes the graph's
/// size symbols `symbols` give, or failure if an argument binds none.
static FailureOr<LinearizedViewSizes>
getNamedViewSizes(OpBuilder &b, Location loc, Operation *op, Value source,
                  RankedTensorType resultType, ArrayAttr symbols) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  LinearizedViewSizes sizes;
  for (int64_t dim = 0; dim < sourceType.getRank(); ++dim)
    sizes.source.push_back(sourceType.isDynamicDim(dim)
                               ? getDimSize(b, loc, source, dim)
                               : Value());
  auto names = symbols.getAsValueRange<StringAttr>();
  auto name = names.begin();
  for (int64_t dim = 0; dim < resultType.getRank(); ++dim) {
    if (!resultType.isDynamicDim(dim)) {
      sizes.result.push_back(Value());
      continue;
    }
    Value size = getSizeExpressionValue(b, loc, op, *name++);
    if (!size)
      return failure();
    sizes.result.push_back(size);
  }
  return sizes;
}

/// A view dimension's size: its static size, or its run-time size.
static Value getViewSize(OpBuilder &b, Location loc, RankedTensorType type,
                         ArrayRef<Value> dynamicSizes, int64_t dim) {
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  return dynamicSizes[dim];
}

/// `source`, a matrix product's result, regrouped into `type` by a
/// tensor.expand_shape or tensor.collapse_shape; null unless both are static
/// and the view only splits or merges dimensions. The product's buffer is
/// contiguous, so the view costs nothing where an index-map node would copy
/// the product when nothing else reads it (a language model's logits).
static Value reshapeMatmulResult(OpBuilder &b, Location loc, Value source,
                                 RankedTensorType type) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (!source.getDefiningOp<loop::MatmulOp>() || !sourceType.hasStaticShape() ||
      !type.hasStaticShape() || sourceType.getRank() == type.getRank())
    return {};
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(sourceType, type);
  if (!groups)
    return {};
  if (sourceType.getRank() > type.getRank())
    return tensor::CollapseShapeOp::create(b, loc, type, source, *groups);
  return tensor::ExpandShapeOp::create(b, loc, type, source, *groups);
}

/// Lowers fx.permute, fx.expand, fx.squeeze, fx.unsqueeze, fx.slice,
/// fx.select, fx.view and fx.unsafe_view (and fx.clone, fx.alias) into
/// index-map nodes; a view that regroups a matrix product's dimensions is a
/// reshape of it instead (reshapeMatmulResult).
template <typename OpTy> struct ViewLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op->getOperand(0);
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if constexpr (std::is_same_v<OpTy, fx::ViewOp> ||
                  std::is_same_v<OpTy, fx::UnsafeViewOp>) {
      if (Value reshaped =
              reshapeMatmulResult(rewriter, loc, source, resultType)) {
        rewriter.replaceOp(op, reshaped);
        return success();
      }
    }
    int64_t sourceRank = sourceType.getRank();
    int64_t resultRank = resultType.getRank();
    auto normalize = [](int64_t dim, int64_t rank) {
      return dim < 0 ? dim + rank : dim;
    };
    // For each result dimension, the source dimension it comes from (or -1),
    // and how source indices follow from result indices.
    std::function<int64_t(int64_t)> sourceDim;
    std::function<SmallVector<Value>(OpBuilder &, Location, ValueRange)> map;
    // Run-time sizes of a view that regroups dynamic dimensions.
    LinearizedViewSizes linearSizes;

    if constexpr (std::is_same_v<OpTy, fx::CloneOp> ||
                  std::is_same_v<OpTy, fx::AliasOp> ||
                  std::is_same_v<OpTy, fx::LiftFreshCopyOp>) {
      sourceDim = [](int64_t dim) { return dim; };
      map = [](OpBuilder &, Location, ValueRange ivs) {
        return SmallVector<Value>(ivs);
      };
    } else if constexpr (std::is_same_v<OpTy, fx::PermuteOp>) {
      SmallVector<int64_t> dims = llvm::map_to_vector(
          op.getDims(), [&](int64_t d) { return normalize(d, sourceRank); });
      sourceDim = [dims](int64_t dim) { return dims[dim]; };
      map = [dims](OpBuilder &, Location, ValueRange ivs) {
        SmallVector<Value> indices(dims.size());
        for (auto [resultDim, from] : llvm::enumerate(dims))
          indices[from] = ivs[resultDim];
        return indices;
      };
    } else if constexpr (std::is_same_v<OpTy, fx::ExpandOp>) {
      int64_t offset = resultRank - sourceRank;
      sourceDim = [=](int64_t dim) {
        int64_t from = dim - offset;
        return from >= 0 && sourceType.getDimSize(from) != 1 ? from : -1;
      };
      map = [=](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> indices;
        for (int64_t dim = 0; dim < sourceRank; ++dim)
          indices.push_back(
              sourceType.getDimSize(dim) == 1 &&
                      resultType.getDimSize(dim + offset) != 1
                  ? arith::ConstantIndexOp::create(b, loc, 0).getResult()
                  : ivs[dim + offset]);
        return indices;
      };
    } else if constexpr (std::is_same_v<OpTy, fx::SqueezeOp> ||
                         std::is_same_v<OpTy, fx::UnsqueezeOp> ||
                         std::is_same_v<OpTy, fx::SelectOp>) {
      // Source dimensions that the result lacks, read at a fixed index.
      SmallVector<std::optional<int64_t>> fixed(sourceRank);
      if constexpr (std::is_same_v<OpTy, fx::SqueezeOp>) {
        for (int64_t d : op.getDim()) {
          int64_t dim = normalize(d, sourceRank);
          if (sourceType.getDimSize(dim) == 1)
            fixed[dim] = 0;
        }
      } else if constexpr (std::is_same_v<OpTy, fx::SelectOp>) {
        if (op.getDynamicIndex())
          return rewriter.notifyMatchFailure(op, "symbolic index");
        int64_t dim = normalize(op.getDim(), sourceRank);
        int64_t index = static_cast<int64_t>(op.getIndex().value_or(0));
        if (index < 0) {
          if (sourceType.isDynamicDim(dim))
            return rewriter.notifyMatchFailure(op, "negative dynamic index");
          index += sourceType.getDimSize(dim);
        }
        fixed[dim] = index;
      }
      if (static_cast<int64_t>(
              llvm::count_if(fixed, [](auto f) { return !f; })) != resultRank &&
          !std::is_same_v<OpTy, fx::UnsqueezeOp>)
        return rewriter.notifyMatchFailure(op, "squeezes a dynamic size");
      int64_t inserted = -1;
      if constexpr (std::is_same_v<OpTy, fx::UnsqueezeOp>)
        inserted = normalize(op.getDim(), resultRank);
      // The source dimension of each result dimension.
      SmallVector<int64_t> from;
      for (int64_t dim = 0, next = 0; dim < resultRank; ++dim) {
        if (dim == inserted) {
          from.push_back(-1);
          continue;
        }
        while (fixed[next])
          ++next;
        from.push_back(next++);
      }
      sourceDim = [from](int64_t dim) { return from[dim]; };
      map = [=](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> indices(sourceRank);
        for (int64_t dim = 0; dim < sourceRank; ++dim)
          if (fixed[dim])
            indices[dim] = arith::ConstantIndexOp::create(b, loc, *fixed[dim]);
        for (auto [dim, source] : llvm::enumerate(from))
          if (source >= 0)
            indices[source] = ivs[dim];
        return indices;
      };
    } else if constexpr (std::is_same_v<OpTy, fx::SliceOp>) {
      if (op.getDynamicStart() || op.getDynamicEnd())
        return rewriter.notifyMatchFailure(op, "symbolic bounds");
      int64_t dim = normalize(op.getDim(), sourceRank);
      int64_t size = sourceType.getDimSize(dim);
      int64_t start = op.getStart().value_or(0);
      if (start < 0) {
        if (ShapedType::isDynamic(size))
          return rewriter.notifyMatchFailure(op, "negative dynamic start");
        start = std::max<int64_t>(start + size, 0);
      }
      if (!ShapedType::isDynamic(size))
        start = std::min(start, size);
      int64_t step = op.getStep();
      // A dynamic sliced size would need the end; only others are derived.
      sourceDim = [dim](int64_t d) { return d == dim ? -1 : d; };
      map = [=](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> indices(ivs);
        Value scaled = ivs[dim];
        if (step != 1)
          scaled = arith::MulIOp::create(
              b, loc, scaled, arith::ConstantIndexOp::create(b, loc, step));
        if (start != 0)
          scaled = arith::AddIOp::create(
              b, loc, scaled, arith::ConstantIndexOp::create(b, loc, start));
        indices[dim] = scaled;
        return indices;
      };
    } else {
      // fx.view, fx.unsafe_view: dimensions regroup. With `size_symbols`,
      // the result's dynamic sizes are the named sizes' run-time values, and
      // the view is one group: the names say what the types cannot (sizes
      // that split, merge or change places). Without, each group of source
      // dimensions and result dimensions with the same number of elements
      // maps through its linear index; a dynamic dimension is a group of its
      // own on both sides, the same size in order (the importer names the
      // sizes of views where they are not). Failing that, a result with at
      // most one dynamic dimension is one group: that dimension's size is
      // the source's element count over the result's static sizes.
      ArrayAttr symbols = op.getSizeSymbolsAttr();
      FailureOr<SmallVector<ViewGroup>> grouped =
          symbols ? FailureOr<SmallVector<ViewGroup>>(failure())
                  : groupViewDimensions(sourceType, resultType);
      SmallVector<ViewGroup> groups;
      auto allDims = [&] {
        return ViewGroup{llvm::to_vector(llvm::seq<int64_t>(0, sourceRank)),
                         llvm::to_vector(llvm::seq<int64_t>(0, resultRank))};
      };
      if (succeeded(grouped)) {
        groups = std::move(*grouped);
      } else if (symbols) {
        FailureOr<LinearizedViewSizes> named =
            getNamedViewSizes(rewriter, loc, op, source, resultType, symbols);
        if (failed(named))
          return rewriter.notifyMatchFailure(op, "no argument binds a symbol");
        groups.push_back(allDims());
        linearSizes = std::move(*named);
      } else if (resultType.getNumDynamicDims() <= 1 &&
                 sourceType.getNumDynamicDims() >= 1) {
        groups.push_back(allDims());
        linearSizes = getLinearizedViewSizes(rewriter, loc, source, resultType);
      } else {
        return rewriter.notifyMatchFailure(
            op, "dimensions do not regroup, or dynamic ones ambiguously");
      }
      SmallVector<int64_t> from(resultRank, -1);
      for (auto &[sourceDims, resultDims] : groups)
        if (sourceDims.size() == 1 && resultDims.size() == 1)
          from[resultDims.front()] = sourceDims.front();
      sourceDim = [from](int64_t dim) { return from[dim]; };
      map = [=](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> indices(sourceRank);
        for (auto &[sourceDims, resultDims] : groups) {
          // Trailing size-1 result dimensions read no source dimension.
          if (sourceDims.empty())
            continue;
          if (sourceDims.size() == 1 && resultDims.size() == 1) {
            indices[sourceDims.front()] = ivs[resultDims.front()];
            continue;
          }
          // The group's linear index from the result's indices...
          Value linear;
          for (int64_t dim : resultDims) {
            Value iv = ivs[dim];
            linear = linear ? arith::AddIOp::create(
                                  b, loc,
                                  arith::MulIOp::create(
                                      b, loc, linear,
                                      getViewSize(b, loc, resultType,
                                                  linearSizes.result, dim)),
                                  iv)
                                  .getResult()
                            : iv;
          }
          if (!linear)
            linear = arith::ConstantIndexOp::create(b, loc, 0);
          // ... and the source's indices from it.
          SmallVector<Value> sizes(sourceDims.size());
          for (int64_t k = 1; k < static_cast<int64_t>(sourceDims.size()); ++k)
            sizes[k] = getViewSize(b, loc, sourceType, linearSizes.source,
                                   sourceDims[k]);
          for (auto [dim, digit] : llvm::zip(
                   sourceDims,
                   delinearizeBySizes(b, loc, linear, ArrayRef<Value>(sizes))))
            indices[dim] = digit;
        }
        return indices;
      };
    }

    FailureOr<SmallVector<Value>> dynamicSizes =
        linearSizes.result.empty()
            ? getViewDynamicSizes(rewriter, loc, source, resultType, sourceDim)
            : FailureOr<SmallVector<Value>>(
                  llvm::to_vector(llvm::make_filter_range(
                      linearSizes.result, [](Value size) { return size; })));
    // An expand from size 1 to `?` takes its size from the symbol it names.
    if constexpr (std::is_same_v<OpTy, fx::ExpandOp>)
      if (failed(dynamicSizes))
        dynamicSizes = getNamedDynamicSizes(rewriter, loc, op, resultType);
    if (failed(dynamicSizes))
      return rewriter.notifyMatchFailure(op, "a dynamic size is not derived");
    rewriter.replaceOp(op, buildIndexMapNode(rewriter, loc, source, resultType,
                                             *dynamicSizes, map));
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Flip, repeat, split and padding: more index arithmetic
//===----------------------------------------------------------------------===//

/// How much padding each dimension gets before and after it, from PyTorch's
/// pad list (pairs from the last dimension; negative values crop).
struct PadAmounts {
  SmallVector<int64_t> before, after;
};
static PadAmounts getPadAmounts(ArrayRef<int64_t> pad, int64_t rank) {
  PadAmounts amounts{SmallVector<int64_t>(rank, 0),
                     SmallVector<int64_t>(rank, 0)};
  for (int64_t pair = 0; 2 * pair + 1 < static_cast<int64_t>(pad.size());
       ++pair) {
    amounts.before[rank - 1 - pair] = pad[2 * pair];
    amounts.after[rank - 1 - pair] = pad[2 * pair + 1];
  }
  return amounts;
}

/// The dynamic sizes of `type`, `source` padded by `amounts`.
static SmallVector<Value> getPaddedDynamicSizes(OpBuilder &b, Location loc,
                                                Value source,
                                                RankedTensorType type,
                                                const PadAmounts &amounts) {
  return collectDynamicSizes(type, [&](int64_t dim) -> Value {
    return arith::AddIOp::create(
        b, loc, getDimSize(b, loc, source, dim),
        arith::ConstantIndexOp::create(
            b, loc, amounts.before[dim] + amounts.after[dim]));
  });
}

namespace {
/// fx.flip reads dimension d at size - 1 - i for the flipped dimensions.
struct FlipLowering : OpRewritePattern<fx::FlipOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::FlipOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getSelf();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<bool> flipped(rank, false);
    for (int64_t dim : op.getDims())
      flipped[(dim + rank) % rank] = true;
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(type, [&](int64_t dim) {
          return getDimSize(rewriter, loc, source, dim);
        });
    rewriter.replaceOp(
        op,
        buildIndexMapNode(rewriter, loc, source, type, dynamicSizes,
                          [&](OpBuilder &b, Location loc, ValueRange ivs) {
                            SmallVector<Value> indices(ivs);
                            for (int64_t dim = 0; dim < rank; ++dim) {
                              if (!flipped[dim])
                                continue;
                              Value last = arith::SubIOp::create(
                                  b, loc, getDimSize(b, loc, source, dim),
                                  arith::ConstantIndexOp::create(b, loc, 1));
                              indices[dim] =
                                  arith::SubIOp::create(b, loc, last, ivs[dim]);
                            }
                            return indices;
                          }));
    return success();
  }
};

/// fx.repeat tiles `self`: result dimension j + (R - r) reads source
/// dimension j at i mod size; leading new dimensions are not read.
struct RepeatLowering : OpRewritePattern<fx::RepeatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::RepeatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getSelf();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    int64_t sourceRank = op.getSelf().getType().getRank();
    int64_t offset = rank - sourceRank;
    ArrayRef<int64_t> repeats = op.getRepeats();
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(type, [&](int64_t dim) -> Value {
          Value size = getDimSize(rewriter, loc, source, dim - offset);
          return arith::MulIOp::create(
              rewriter, loc, size,
              arith::ConstantIndexOp::create(rewriter, loc, repeats[dim]));
        });
    rewriter.replaceOp(
        op, buildIndexMapNode(rewriter, loc, source, type, dynamicSizes,
                              [&](OpBuilder &b, Location loc, ValueRange ivs) {
                                SmallVector<Value> indices;
                                for (int64_t dim = 0; dim < sourceRank; ++dim)
                                  indices.push_back(arith::RemUIOp::create(
                                      b, loc, ivs[dim + offset],
                                      getDimSize(b, loc, source, dim)));
                                return indices;
                              }));
    return success();
  }
};

/// fx.split_with_sizes: each result reads `self` from its offset along the
/// split dimension (whose sizes must be static).
struct SplitLowering : OpRewritePattern<fx::SplitWithSizesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SplitWithSizesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getSelf();
    int64_t rank = op.getSelf().getType().getRank();
    int64_t dim = static_cast<int64_t>(op.getDim());
    dim = (dim + rank) % rank;
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Value result : op.getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      if (type.isDynamicDim(dim))
        return rewriter.notifyMatchFailure(op, "dynamic split sizes");
      SmallVector<Value> dynamicSizes =
          collectDynamicSizes(type, [&](int64_t d) {
            return getDimSize(rewriter, loc, source, d);
          });
      int64_t start = offset;
      results.push_back(buildIndexMapNode(
          rewriter, loc, source, type, dynamicSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) {
            SmallVector<Value> indices(ivs);
            indices[dim] = arith::AddIOp::create(
                b, loc, ivs[dim],
                arith::ConstantIndexOp::create(b, loc, start));
            return indices;
          }));
      offset += type.getDimSize(dim);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// fx.constant_pad_nd: position i of a dimension padded by (before, after)
/// reads i - before, or is `value` outside `self` (negative pads crop).
struct ConstantPadLowering : OpRewritePattern<fx::ConstantPadNdOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ConstantPadNdOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getSelf();
    RankedTensorType type = op.getType();
    Type dtype = type.getElementType();
    int64_t rank = type.getRank();
    PadAmounts amounts = getPadAmounts(op.getPad(), rank);
    SmallVector<Value> dynamicSizes =
        getPaddedDynamicSizes(rewriter, loc, source, type, amounts);
    Attribute zero = rewriter.getI64IntegerAttr(0);
    Attribute fill = op.getValue() ? *op.getValue() : zero;
    rewriter.replaceOp(
        op,
        buildGeneratorNode(
            rewriter, loc, type, dynamicSizes,
            [&](OpBuilder &b, Location loc, ValueRange ivs) {
              Value inside;
              SmallVector<Value> indices;
              for (int64_t dim = 0; dim < rank; ++dim) {
                Value at =
                    arith::SubIOp::create(b, loc, ivs[dim],
                                          arith::ConstantIndexOp::create(
                                              b, loc, amounts.before[dim]));
                auto [clamped, inRange] =
                    clampAndTest(b, loc, at, getDimSize(b, loc, source, dim));
                inside = inside ? arith::AndIOp::create(b, loc, inside, inRange)
                                      .getResult()
                                : inRange;
                indices.push_back(clamped);
              }
              Value element = loop::LoadOp::create(b, loc, source, indices);
              Value value = makeScalar(b, loc, fill, dtype);
              if (!inside)
                return element;
              return arith::SelectOp::create(b, loc, inside, element, value)
                  .getResult();
            }));
    return success();
  }
};
} // namespace

namespace {
/// Reflection and replication padding of the trailing dimensions: position
/// i reads i - before, reflected at the edges (-j reads j, n - 1 + j reads
/// n - 1 - j) or clamped to them.
template <typename OpTy, bool Reflect>
struct EdgePadLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getSelf();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    PadAmounts amounts = getPadAmounts(op.getPadding(), rank);
    SmallVector<Value> dynamicSizes =
        getPaddedDynamicSizes(rewriter, loc, source, type, amounts);
    ArrayRef<int64_t> before = amounts.before, after = amounts.after;
    rewriter.replaceOp(
        op, buildIndexMapNode(
                rewriter, loc, source, type, dynamicSizes,
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  SmallVector<Value> indices(ivs);
                  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
                  for (int64_t dim = 0; dim < rank; ++dim) {
                    if (!before[dim] && !after[dim])
                      continue;
                    Value at = arith::SubIOp::create(
                        b, loc, ivs[dim],
                        arith::ConstantIndexOp::create(b, loc, before[dim]));
                    Value last = arith::SubIOp::create(
                        b, loc, getDimSize(b, loc, source, dim),
                        arith::ConstantIndexOp::create(b, loc, 1));
                    if (Reflect) {
                      // |at|, then folded back from the far edge.
                      at = arith::MaxSIOp::create(
                          b, loc, at, arith::SubIOp::create(b, loc, zero, at));
                      Value twice = arith::AddIOp::create(b, loc, last, last);
                      at = arith::MinSIOp::create(
                          b, loc, at, arith::SubIOp::create(b, loc, twice, at));
                    } else {
                      at = arith::MaxSIOp::create(
                          b, loc, zero,
                          arith::MinSIOp::create(b, loc, at, last));
                    }
                    indices[dim] = at;
                  }
                  return indices;
                }));
    return success();
  }
};

} // namespace

namespace {
/// Lowers fx.diagonal to an index-map node: the result's dimensions are the
/// source's without `dim1` and `dim2`, then the diagonal, whose element `i`
/// reads `i + max(-offset, 0)` along `dim1` and `i + max(offset, 0)` along
/// `dim2`.
struct DiagonalLowering : OpRewritePattern<fx::DiagonalOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::DiagonalOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getSelf();
    RankedTensorType sourceType = op.getSelf().getType();
    RankedTensorType type = op.getType();
    int64_t rank = sourceType.getRank();
    int64_t dim1 = static_cast<int64_t>(op.getDim1());
    int64_t dim2 = static_cast<int64_t>(op.getDim2());
    if (dim1 < 0)
      dim1 += rank;
    if (dim2 < 0)
      dim2 += rank;
    int64_t offset = static_cast<int64_t>(op.getOffset());
    // The result's other dimensions, in the source's order.
    SmallVector<int64_t> kept;
    for (int64_t dim = 0; dim < rank; ++dim)
      if (dim != dim1 && dim != dim2)
        kept.push_back(dim);
    // A dynamic length: what both dimensions have past the offset's start,
    // and none if either has nothing.
    int64_t last = type.getRank() - 1;
    Value length;
    if (type.isDynamicDim(last)) {
      auto remaining = [&](int64_t dim, int64_t start) -> Value {
        return arith::SubIOp::create(
            rewriter, loc, getDimSize(rewriter, loc, source, dim),
            arith::ConstantIndexOp::create(rewriter, loc, start));
      };
      length = arith::MaxSIOp::create(
          rewriter, loc,
          arith::MinSIOp::create(rewriter, loc,
                                 remaining(dim1, std::max<int64_t>(-offset, 0)),
                                 remaining(dim2, std::max<int64_t>(offset, 0))),
          arith::ConstantIndexOp::create(rewriter, loc, 0));
    }
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(type, [&](int64_t dim) {
          return dim == last ? length
                             : getDimSize(rewriter, loc, source, kept[dim]);
        });
    Value result = buildIndexMapNode(
        rewriter, loc, source, type, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> indices(rank);
          for (auto [resultDim, dim] : llvm::enumerate(kept))
            indices[dim] = ivs[resultDim];
          Value along = ivs.back();
          auto shifted = [&](int64_t by) -> Value {
            if (by == 0)
              return along;
            return arith::AddIOp::create(
                b, loc, along, arith::ConstantIndexOp::create(b, loc, by));
          };
          indices[dim1] = shifted(std::max<int64_t>(-offset, 0));
          indices[dim2] = shifted(std::max<int64_t>(offset, 0));
          return indices;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.as_strided (static shapes) to an index-map node: result element
/// i reads element offset + sum(i_k * stride_k) of the operand's row-major
/// elements. Fails when some result element would read past them.
struct AsStridedLowering : OpRewritePattern<fx::AsStridedOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::AsStridedOp op,
                                PatternRewriter &rewriter) const override {
    auto sourceType = cast<RankedTensorType>(op.getSelf().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    if (!sourceType.hasStaticShape() || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic sizes");
    ArrayRef<int64_t> strides = op.getStride();
    int64_t offset = op.getStorageOffset().value_or(0);
    if (!isStridedViewWithin(resultType.getShape(), strides, offset,
                             sourceType.getNumElements()))
      return rewriter.notifyMatchFailure(op, "reads past its operand");
    rewriter.replaceOp(
        op,
        buildIndexMapNode(
            rewriter, op.getLoc(), op.getSelf(), resultType, {},
            [&](OpBuilder &b, Location loc, ValueRange ivs) {
              Value linear = buildStridedPosition(b, loc, ivs, strides, offset);
              if (sourceType.getRank() == 0)
                return SmallVector<Value>();
              return delinearizeIndex(b, loc, linear, sourceType.getShape());
            }));
    return success();
  }
};
} // namespace

void fxtoloop::populateViewLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<ViewLowering<fx::CloneOp>, ViewLowering<fx::AliasOp>,
           ViewLowering<fx::LiftFreshCopyOp>, ViewLowering<fx::PermuteOp>,
           ViewLowering<fx::ExpandOp>, ViewLowering<fx::SqueezeOp>,
           ViewLowering<fx::UnsqueezeOp>, ViewLowering<fx::SliceOp>,
           ViewLowering<fx::SelectOp>, ViewLowering<fx::ViewOp>,
           ViewLowering<fx::UnsafeViewOp>, AsStridedLowering, DiagonalLowering>(
          ctx);
  patterns
      .add<FlipLowering, RepeatLowering, SplitLowering, ConstantPadLowering>(
          ctx);
  patterns.add<EdgePadLowering<fx::ReflectionPad1dOp, true>,
               EdgePadLowering<fx::ReflectionPad2dOp, true>,
               EdgePadLowering<fx::ReflectionPad3dOp, true>,
               EdgePadLowering<fx::ReplicationPad2dOp, false>,
               EdgePadLowering<fx::ReplicationPad3dOp, false>>(ctx);
}
