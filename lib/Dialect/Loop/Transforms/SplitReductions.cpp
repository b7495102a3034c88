//===- SplitReductions.cpp - Splitting few long reductions ----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/SplitReductions.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

/// Lanes of a warp: a column reduction reads at least a warp's worth of
/// consecutive results.
static constexpr int64_t kWarpLanes = 32;

namespace {
/// How a reduction splits: its reduction dimension `dim` into `chunks`.
struct Split {
  int64_t dim = 0, chunks = 0;
};
} // namespace

/// How `reduce` splits; no chunks where it does not. The outermost
/// reduction dimension with room for the chunks wanted splits, else the
/// longest.
static Split getSplit(ReduceOp reduce, const SplitReductionsOptions &options) {
  RankedTensorType type = reduce.getResultType();
  ArrayRef<int64_t> reduction = reduce.getReductionShape();
  if (hasReductionState(reduce.getKind()) || !type.hasStaticShape() ||
      type.getNumElements() >= options.maxResults ||
      llvm::any_of(reduction, ShapedType::isDynamic))
    return {};
  int64_t elements = 1;
  for (int64_t size : reduction)
    elements *= size;
  if (elements < options.minElements)
    return {};
  int64_t wanted = std::max<int64_t>(
      options.partialResults / std::max<int64_t>(type.getNumElements(), 1), 2);
  const int64_t *room =
      llvm::find_if(reduction, [&](int64_t size) { return size >= wanted; });
  int64_t dim = room != reduction.end()
                    ? room - reduction.begin()
                    : llvm::max_element(reduction) - reduction.begin();
  int64_t chunk = llvm::divideCeil(reduction[dim], wanted);
  int64_t chunks = llvm::divideCeil(reduction[dim], chunk);
  if (chunks < 2)
    return {};
  return {dim, chunks};
}

/// Ends a partial reduction's body: `reduce`'s body ops, cloned with
/// `mapping` at the insertion point, and the value it yields; where
/// `inside` (if given) says the position is past the reduction's end,
/// sums and products yield their identity, and max and min the last
/// element again (harmless).
static void clonePartialBody(RewriterBase &rewriter, ReduceOp reduce,
                             IRMapping &mapping, Value inside) {
  Location loc = reduce.getLoc();
  CombiningKind kind = reduce.getKind();
  for (Operation &op : reduce.getBody().front().without_terminator())
    rewriter.clone(op, mapping);
  Value value = mapping.lookupOrDefault(reduce.getYield().getValue());
  if (inside && (kind == CombiningKind::sum || kind == CombiningKind::prod))
    value = arith::SelectOp::create(
        rewriter, loc, inside, value,
        getCombinerIdentity(rewriter, loc, kind, value.getType(),
                            reduce.getResultType().getElementType()));
  YieldOp::create(rewriter, loc, value);
}

/// Replaces `reduce` by the reduction of `partials` over their `chunks`
/// partials per result: the chunk is `partials`' last dimension, or its
/// first with `chunkFirst`. Returns that reduction.
static ReduceOp replaceByTotal(RewriterBase &rewriter, ReduceOp reduce,
                               Value partials, int64_t chunks,
                               bool chunkFirst) {
  Location loc = reduce.getLoc();
  int64_t rank = reduce.getResultType().getRank();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(reduce);
  auto total = ReduceOp::create(
      rewriter, loc, reduce.getResultType(), reduce.getKindAttr(), ValueRange{},
      ValueRange{}, rewriter.getDenseI64ArrayAttr({chunks}));
  Block *body = rewriter.createBlock(&total.getBody());
  body->addArguments(SmallVector<Type>(rank + 1, rewriter.getIndexType()),
                     SmallVector<Location>(rank + 1, loc));
  SmallVector<Value> indices(body->getArguments());
  if (chunkFirst)
    std::rotate(indices.begin(), indices.end() - 1, indices.end());
  YieldOp::create(rewriter, loc,
                  LoadOp::create(rewriter, loc, partials, indices));
  rewriter.replaceOp(reduce, total.getResult());
  return total;
}

/// Splits `reduce` as `split` says into partial reductions per result and
/// their reduction (splitReductions).
static void splitReduction(RewriterBase &rewriter, ReduceOp reduce,
                           Split split) {
  Location loc = reduce.getLoc();
  RankedTensorType type = reduce.getResultType();
  int64_t rank = type.getRank();
  ArrayRef<int64_t> reduction = reduce.getReductionShape();
  int64_t chunks = split.chunks;
  int64_t extent = reduction[split.dim];
  int64_t chunk = llvm::divideCeil(extent, chunks);
  // Partials keep the accumulator (f32 for f16/bf16 results): rounding
  // them would round every chunk.
  Type accumulator = reduce.getYield().getValue().getType();
  Type partialDtype =
      isa<FloatType>(accumulator) ? accumulator : type.getElementType();
  SmallVector<int64_t> partialShape(type.getShape());
  partialShape.push_back(chunks);
  SmallVector<int64_t> chunkShape(reduction);
  chunkShape[split.dim] = chunk;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(reduce);
  auto partials = ReduceOp::create(
      rewriter, loc, RankedTensorType::get(partialShape, partialDtype),
      reduce.getKindAttr(), ValueRange{}, ValueRange{},
      rewriter.getDenseI64ArrayAttr(chunkShape));
  {
    Block &body = reduce.getBody().front();
    Block *partialBody = rewriter.createBlock(&partials.getBody());
    int64_t numArgs = rank + 1 + reduction.size();
    partialBody->addArguments(
        SmallVector<Type>(numArgs, rewriter.getIndexType()),
        SmallVector<Location>(numArgs, loc));
    ValueRange args = partialBody->getArguments();
    Value chunkIndex = args[rank];
    // Position chunk·size + k along the split dimension, clamped.
    Value position = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(
            rewriter, loc, chunkIndex,
            arith::ConstantIndexOp::create(rewriter, loc, chunk)),
        args[rank + 1 + split.dim]);
    Value last = arith::ConstantIndexOp::create(rewriter, loc, extent - 1);
    Value inside = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ule, position, last);
    IRMapping mapping;
    for (int64_t dim = 0; dim < rank; ++dim)
      mapping.map(body.getArgument(dim), args[dim]);
    for (size_t dim = 0; dim < reduction.size(); ++dim)
      mapping.map(body.getArgument(rank + dim),
                  static_cast<int64_t>(dim) == split.dim
                      ? arith::MinUIOp::create(rewriter, loc, position, last)
                            .getResult()
                      : args[rank + 1 + dim]);
    clonePartialBody(rewriter, reduce, mapping, inside);
  }
  replaceByTotal(rewriter, reduce, partials.getResult(), chunks,
                 /*chunkFirst=*/false);
}

/// The index at which `load` reads its tensor's innermost dimension of
/// more than one element (the last index where there is none).
static Value innermostIndex(LoadOp load) {
  ArrayRef<int64_t> shape = load.getSource().getType().getShape();
  for (int64_t dim = shape.size() - 1; dim > 0; --dim)
    if (shape[dim] != 1)
      return load.getIndices()[dim];
  return load.getIndices().front();
}

/// Whether `reduce` reduces down its result dimension `dim`
/// (isColumnReduction, with `dim` for the innermost).
static bool reducesDownColumns(ReduceOp reduce, int64_t dim) {
  RankedTensorType type = reduce.getResultType();
  int64_t rank = type.getRank();
  if (dim < 0 || dim >= rank || hasReductionState(reduce.getKind()) ||
      type.isDynamicDim(dim) || type.getDimSize(dim) < kWarpLanes)
    return false;
  Block &body = reduce.getBody().front();
  BlockArgument column = body.getArgument(dim);
  // The values that vary with the column's result index, and with the
  // reduction's. A load that varies with the former must read at it last;
  // one that does not reads the same element for consecutive results (a
  // row's statistic), which they share.
  DenseSet<Value> alongColumn = {column};
  DenseSet<Value> alongReduction(body.args_begin() + rank, body.args_end());
  auto dependsOn = [](Operation &op, const DenseSet<Value> &values) {
    return llvm::any_of(op.getOperands(),
                        [&](Value v) { return values.contains(v); });
  };
  bool readsAlong = false;
  for (Operation &op : body.without_terminator()) {
    bool along = dependsOn(op, alongColumn);
    bool reduction = dependsOn(op, alongReduction);
    if (along)
      alongColumn.insert(op.result_begin(), op.result_end());
    if (reduction)
      alongReduction.insert(op.result_begin(), op.result_end());
    auto load = dyn_cast<LoadOp>(op);
    if (!load || !along)
      continue;
    if (innermostIndex(load) != column)
      return false;
    readsAlong |= reduction;
  }
  return readsAlong;
}

bool mlir::kiln::loop::isColumnReduction(ReduceOp reduce) {
  return reducesDownColumns(reduce, reduce.getResultType().getRank() - 1);
}

/// `reduce` without the unit dimensions of its static result, which its
/// users get back by a tensor.expand_shape, where that makes it a column
/// reduction (isColumnReduction): a per-channel statistic of a
/// channels-last image kept as [1, C, 1, 1] reads down columns whose
/// index, C's, is not the result's last. Returns the new reduction, or
/// null.
static ReduceOp dropUnitResultDims(RewriterBase &rewriter, ReduceOp reduce) {
  RankedTensorType type = reduce.getResultType();
  if (!type.hasStaticShape())
    return nullptr;
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> kept;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size != 1)
      kept.push_back(dim);
  if (kept.empty() || kept.size() == shape.size() ||
      !reducesDownColumns(reduce, kept.back()))
    return nullptr;
  // Each kept dimension groups with the unit ones before it; the last also
  // with those after it.
  SmallVector<ReassociationIndices> groups(kept.size());
  for (int64_t dim = 0, group = 0; dim < type.getRank(); ++dim) {
    groups[group].push_back(dim);
    if (group + 1 < static_cast<int64_t>(kept.size()) && dim == kept[group])
      ++group;
  }
  SmallVector<int64_t> narrowShape;
  for (int64_t dim : kept)
    narrowShape.push_back(shape[dim]);

  Location loc = reduce.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(reduce);
  auto narrow = ReduceOp::create(rewriter, loc, type.clone(narrowShape),
                                 reduce.getKindAttr(), ValueRange{},
                                 reduce.getReductionDynamicSizes(),
                                 reduce.getReductionShapeAttr());
  narrow->setDiscardableAttrs(reduce->getDiscardableAttrDictionary());
  Block &body = reduce.getBody().front();
  int64_t reductionRank = body.getNumArguments() - type.getRank();
  Block *narrowBody = rewriter.createBlock(&narrow.getBody());
  narrowBody->addArguments(
      SmallVector<Type>(kept.size() + reductionRank, rewriter.getIndexType()),
      SmallVector<Location>(kept.size() + reductionRank, loc));
  IRMapping mapping;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  for (int64_t dim = 0, next = 0; dim < type.getRank(); ++dim)
    mapping.map(body.getArgument(dim),
                next < static_cast<int64_t>(kept.size()) && kept[next] == dim
                    ? narrowBody->getArgument(next++)
                    : zero);
  for (int64_t dim = 0; dim < reductionRank; ++dim)
    mapping.map(body.getArgument(type.getRank() + dim),
                narrowBody->getArgument(kept.size() + dim));
  for (Operation &op : body)
    rewriter.clone(op, mapping);
  rewriter.setInsertionPoint(reduce);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(reduce, type, narrow,
                                                     groups);
  return narrow;
}

/// Splits column reduction `reduce` (isColumnReduction) of static sizes
/// whose reduction holds more than two chunks of `chunk` elements: partial
/// reductions over `chunk` consecutive elements of the flattened reduction
/// space, the chunk an extra, first, result dimension (so that a partial
/// still reads along its innermost dimension), then their reduction.
/// Returns the reduction of the partials, or null where it does not split.
static ReduceOp splitColumns(RewriterBase &rewriter, ReduceOp reduce,
                             int64_t chunk) {
  RankedTensorType type = reduce.getResultType();
  ArrayRef<int64_t> reduction = reduce.getReductionShape();
  if (chunk <= 0 || !type.hasStaticShape() ||
      ShapedType::isDynamicShape(reduction) || !isColumnReduction(reduce))
    return nullptr;
  int64_t extent = ShapedType::getNumElements(reduction);
  if (extent <= 2 * chunk)
    return nullptr;
  Location loc = reduce.getLoc();
  int64_t rank = type.getRank();
  int64_t chunks = llvm::divideCeil(extent, chunk);
  Type accumulator = reduce.getYield().getValue().getType();
  Type partialDtype =
      isa<FloatType>(accumulator) ? accumulator : type.getElementType();
  SmallVector<int64_t> partialShape = {chunks};
  llvm::append_range(partialShape, type.getShape());

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(reduce);
  auto partials = ReduceOp::create(
      rewriter, loc, RankedTensorType::get(partialShape, partialDtype),
      reduce.getKindAttr(), ValueRange{}, ValueRange{},
      rewriter.getDenseI64ArrayAttr({chunk}));
  {
    Block &body = reduce.getBody().front();
    Block *partialBody = rewriter.createBlock(&partials.getBody());
    partialBody->addArguments(
        SmallVector<Type>(rank + 2, rewriter.getIndexType()),
        SmallVector<Location>(rank + 2, loc));
    ValueRange args = partialBody->getArguments();
    // Position chunk·size + k of the flattened reduction space, clamped
    // where the chunks overrun it.
    Value position = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(
            rewriter, loc, args.front(),
            arith::ConstantIndexOp::create(rewriter, loc, chunk)),
        args.back());
    bool overruns = extent % chunk != 0;
    Value inside, clamped = position;
    if (overruns) {
      Value last = arith::ConstantIndexOp::create(rewriter, loc, extent - 1);
      inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                     position, last);
      clamped = arith::MinUIOp::create(rewriter, loc, position, last);
    }
    IRMapping mapping;
    for (int64_t dim = 0; dim < rank; ++dim)
      mapping.map(body.getArgument(dim), args[dim + 1]);
    // Row-major digits of the clamped position, the last fastest.
    for (int64_t dim = reduction.size() - 1, stride = 1; dim >= 0; --dim) {
      Value digit = clamped;
      if (stride > 1)
        digit = arith::DivUIOp::create(
            rewriter, loc, digit,
            arith::ConstantIndexOp::create(rewriter, loc, stride));
      if (dim > 0)
        digit = arith::RemUIOp::create(
            rewriter, loc, digit,
            arith::ConstantIndexOp::create(rewriter, loc, reduction[dim]));
      mapping.map(body.getArgument(rank + dim), digit);
      stride *= reduction[dim];
    }
    clonePartialBody(rewriter, reduce, mapping, inside);
  }
  return replaceByTotal(rewriter, reduce, partials.getResult(), chunks,
                        /*chunkFirst=*/true);
}

unsigned
mlir::kiln::loop::splitReductions(RewriterBase &rewriter, Block &block,
                                  const SplitReductionsOptions &options) {
  unsigned split = 0;
  for (ReduceOp reduce : llvm::make_early_inc_range(block.getOps<ReduceOp>())) {
    if (options.columnChunk > 0 && !isColumnReduction(reduce))
      if (ReduceOp narrow = dropUnitResultDims(rewriter, reduce))
        reduce = narrow;
    // Long column reductions split until their partials are few; the
    // last level's results are as many as the original's.
    if (ReduceOp total = splitColumns(rewriter, reduce, options.columnChunk)) {
      ++split;
      while ((total = splitColumns(rewriter, total, options.columnChunk)))
        ++split;
      continue;
    }
    Split how = getSplit(reduce, options);
    if (how.chunks) {
      splitReduction(rewriter, reduce, how);
      ++split;
    }
  }
  return split;
}
