//===- ScatterLowering.cpp - Scatters through index tensors ---------------===//
//
// Part of Kiln. fx.scatter_add, fx.index_put with `accumulate` and
// fx.embedding_dense_backward add values into a tensor at indices read from
// an index tensor: a loop.scatter "sum" over the values' index space,
// starting from `self` (or zeros). fx.scatter, fx.scatter_value and
// fx.index_put without `accumulate` replace elements: "assign". Indices out
// of range, an error in PyTorch, are clamped so that no update writes
// outside the result.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

Value fxtoloop::buildScatter(
    OpBuilder &b, Location loc, CombiningKind combiner, Value init,
    ArrayRef<int64_t> updateShape, ValueRange updateDynamicSizes,
    function_ref<ScatterUpdate(OpBuilder &, Location, ValueRange)> updateFn) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<Value> dynamicSizes = collectDynamicSizes(
      type, [&](int64_t dim) { return getDimSize(b, loc, init, dim); });
  auto node = loop::ScatterOp::create(
      b, loc, type, b.getAttr<loop::CombiningKindAttr>(combiner), init,
      dynamicSizes, updateDynamicSizes, b.getDenseI64ArrayAttr(updateShape));
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&node.getBody());
  body->addArguments(SmallVector<Type>(updateShape.size(), b.getIndexType()),
                     SmallVector<Location>(updateShape.size(), loc));
  ScatterUpdate update = updateFn(b, loc, body->getArguments());
  loop::ScatterYieldOp::create(b, loc, update.value, update.indices);
  return node.getResult();
}

Value fxtoloop::buildZeros(OpBuilder &b, Location loc, RankedTensorType type,
                           function_ref<Value(int64_t)> sizeOf) {
  return buildGeneratorNode(b, loc, type, collectDynamicSizes(type, sizeOf),
                            [&](OpBuilder &b, Location loc, ValueRange) {
                              return makeScalar(b, loc, b.getI64IntegerAttr(0),
                                                type.getElementType());
                            });
}

namespace {

/// A loop.scatter with `combiner` over the index space of tensor `space`.
static Value buildScatterOver(
    OpBuilder &b, Location loc, CombiningKind combiner, Value init, Value space,
    function_ref<ScatterUpdate(OpBuilder &, Location, ValueRange)> fn) {
  auto spaceType = cast<RankedTensorType>(space.getType());
  SmallVector<Value> sizes = collectDynamicSizes(
      spaceType, [&](int64_t dim) { return getDimSize(b, loc, space, dim); });
  return buildScatter(b, loc, combiner, init, spaceType.getShape(), sizes, fn);
}

/// What eager's scatters raise for an index outside self's dimension `dim`.
static std::string getScatterMessage(int64_t dim) {
  return ("RuntimeError: scatter(): index out of bounds for dimension " +
          Twine(dim))
      .str();
}

/// Loads index tensor `indices` at `ivs` as an index into a dimension of
/// `size` (wrapAndClampIndex), asserted in range with `checks.asserts`
/// (failing with `message`).
static Value loadIndex(OpBuilder &b, Location loc, Value indices,
                       ValueRange ivs, Value size,
                       const IndexChecks &checks = IndexChecks(),
                       StringRef message = "") {
  Value loaded = loop::LoadOp::create(b, loc, indices, ivs);
  checks.checkElement(b, loc, loaded, size, /*negative=*/false, message);
  return wrapAndClampIndex(b, loc, loaded, size);
}

/// A loop.scatter with `combiner` over the index space of `index` whose
/// values (`value` at the update's indices) go to `init`'s elements with
/// index's value at `dim` (scatter_add's and scatter_reduce's placement).
static Value buildScatterAlong(
    OpBuilder &b, Location loc, CombiningKind combiner, Value init, Value index,
    int64_t dim, const IndexChecks &checks,
    function_ref<Value(OpBuilder &, Location, ValueRange)> value) {
  Value size = getDimSize(b, loc, init, dim);
  std::string message = getScatterMessage(dim);
  return buildScatterOver(b, loc, combiner, init, index,
                          [&](OpBuilder &b, Location loc, ValueRange ivs) {
                            SmallVector<Value> indices(ivs);
                            indices[dim] = loadIndex(b, loc, index, ivs, size,
                                                     checks, message);
                            return ScatterUpdate{value(b, loc, ivs), indices};
                          });
}

/// Loads element `ivs` of `tensor`, broadcast against a space whose
/// trailing dimensions are `ivs`' (size-1 dimensions read index 0), as the
/// scalar type of `dtype`.
static Value loadBroadcast(OpBuilder &b, Location loc, Value tensor,
                           ValueRange ivs, Type dtype) {
  auto type = cast<RankedTensorType>(tensor.getType());
  ValueRange trailing = ivs.take_back(type.getRank());
  SmallVector<Value> indices;
  for (auto [dim, iv] : llvm::enumerate(trailing))
    indices.push_back(type.getDimSize(dim) == 1
                          ? arith::ConstantIndexOp::create(b, loc, 0)
                          : iv);
  Value value = loop::LoadOp::create(b, loc, tensor, indices);
  return convertScalar(b, loc, value, type.getElementType(), dtype);
}

/// Whether `type` holds numbers a scatter can add (not bool, not complex).
static bool isAddable(RankedTensorType type) {
  Type element = type.getElementType();
  return isa<FloatType>(element) ||
         (isa<IntegerType>(element) && !element.isInteger(1));
}

/// With `checks.flags`, fails the run where `index` names a position
/// outside `self`'s dimension `dim`, as eager's scatters raise.
static void checkScatterIndex(OpBuilder &b, Location loc,
                              const IndexChecks &checks, Value self,
                              Value index, int64_t dim) {
  checks.checkTensor(b, loc, index, getDimSize(b, loc, self, dim),
                     /*negative=*/false, getScatterMessage(dim));
}

/// Lowers fx.scatter_add, fx.scatter and fx.scatter_value: src[i] (or the
/// value) adds into, or replaces, result[i with index[i] at `dim`]. A
/// complex src replaces whole numbers, so that duplicate indices pick one
/// update for both parts (complex adds go part by part: ComplexLowering).
template <typename OpTy> struct ScatterAlongLowering : OpRewritePattern<OpTy> {
  ScatterAlongLowering(MLIRContext *ctx, IndexChecks checks)
      : OpRewritePattern<OpTy>(ctx), checks(checks) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool adds = std::is_same_v<OpTy, fx::ScatterAddOp>;
    auto type = cast<RankedTensorType>(op.getType());
    bool isComplex = isa<ComplexType>(type.getElementType());
    if ((adds && !isAddable(type)) ||
        (isComplex && std::is_same_v<OpTy, fx::ScatterValueOp>))
      return rewriter.notifyMatchFailure(op, "elements not combined");
    int64_t rank = type.getRank();
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    Type dtype = type.getElementType();
    checkScatterIndex(rewriter, op.getLoc(), checks, op.getSelf(),
                      op.getIndex(), dim);
    rewriter.replaceOp(
        op, buildScatterAlong(
                rewriter, op.getLoc(),
                adds ? CombiningKind::sum : CombiningKind::assign, op.getSelf(),
                op.getIndex(), dim, checks,
                [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
                  if constexpr (std::is_same_v<OpTy, fx::ScatterValueOp>) {
                    return makeScalar(b, loc, op.getValue(), dtype);
                  } else {
                    auto srcType =
                        cast<RankedTensorType>(op.getSrc().getType());
                    return convertScalar(
                        b, loc, loop::LoadOp::create(b, loc, op.getSrc(), ivs),
                        srcType.getElementType(), dtype);
                  }
                }));
    return success();
  }

  IndexChecks checks;
};

/// Whether fx.scatter_reduce `op` is a float product that
/// ScatterProductLowering gathers: along a `dim` of at most
/// kMaxGatheredProduct elements in self and in the index, static shapes.
static constexpr int64_t kMaxGatheredProduct = 4096;
static bool isGatheredProduct(fx::ScatterReduceOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  auto indexType = cast<RankedTensorType>(op.getIndex().getType());
  int64_t rank = type.getRank();
  int64_t dim = static_cast<int64_t>(op.getDim());
  if (dim < 0)
    dim += rank;
  return op.getReduce() == "prod" && isa<FloatType>(type.getElementType()) &&
         rank != 0 && type.hasStaticShape() && indexType.hasStaticShape() &&
         indexType.getRank() == rank &&
         type.getDimSize(dim) <= kMaxGatheredProduct &&
         indexType.getDimSize(dim) <= kMaxGatheredProduct &&
         indexType.getNumElements() != 0;
}

/// Lowers fx.scatter_reduce ("sum", "mean", "amax", "amin", and "prod" but
/// the float products that ScatterProductLowering gathers): a loop.scatter
/// combining src into self along `dim`, products by compare-and-swap. Without
/// `include_self`, the elements that receive values first take the
/// combiner's identity (an "assign" scatter); "mean" divides by the number
/// of values each element received (plus one for self's), floats only.
struct ScatterReduceLowering : OpRewritePattern<fx::ScatterReduceOp> {
  ScatterReduceLowering(MLIRContext *ctx, IndexChecks checks)
      : OpRewritePattern(ctx), checks(checks) {}

  LogicalResult matchAndRewrite(fx::ScatterReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type dtype = type.getElementType();
    StringRef reduce = op.getReduce();
    std::optional<CombiningKind> combiner =
        llvm::StringSwitch<std::optional<CombiningKind>>(reduce)
            .Case("sum", CombiningKind::sum)
            .Case("prod", CombiningKind::prod)
            .Case("mean", CombiningKind::sum)
            .Case("amax", CombiningKind::max)
            .Case("amin", CombiningKind::min)
            .Default(std::nullopt);
    bool mean = reduce == "mean";
    if (!combiner || !isAddable(type) || (mean && !isa<FloatType>(dtype)) ||
        isGatheredProduct(op))
      return rewriter.notifyMatchFailure(op, "reduction not combined");
    int64_t rank = type.getRank();
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    Location loc = op.getLoc();
    Value self = op.getSelf(), index = op.getIndex();
    checkScatterIndex(rewriter, loc, checks, self, index, dim);
    bool includeSelf = op.getIncludeSelf();
    auto scatter =
        [&](CombiningKind how, Value init,
            function_ref<Value(OpBuilder &, Location, ValueRange)> value) {
          return buildScatterAlong(rewriter, loc, how, init, index, dim, checks,
                                   value);
        };
    auto constant = [&](double number) {
      return [=](OpBuilder &b, Location loc, ValueRange) {
        return makeFloat(b, loc, loop::getScalarType(dtype), number);
      };
    };
    Value init = self;
    if (!includeSelf)
      init = scatter(CombiningKind::assign, self,
                     [&](OpBuilder &b, Location loc, ValueRange) {
                       // What an element that receives values but not self's
                       // starts from.
                       return getCombinerIdentity(b, loc, *combiner,
                                                  loop::getScalarType(dtype),
                                                  dtype);
                     });
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    Value result = scatter(
        *combiner, init, [&](OpBuilder &b, Location loc, ValueRange ivs) {
          return convertScalar(b, loc,
                               loop::LoadOp::create(b, loc, op.getSrc(), ivs),
                               srcType.getElementType(), dtype);
        });
    if (mean) {
      // How many values each element averages: self's (when included) and
      // those it received; elements that received none keep self.
      Value counts = buildGeneratorNode(
          rewriter, loc, type,
          collectDynamicSizes(
              type,
              [&](int64_t d) { return getDimSize(rewriter, loc, self, d); }),
          [&](OpBuilder &b, Location loc, ValueRange ivs) {
            return constant(includeSelf ? 1.0 : 0.0)(b, loc, ivs);
          });
      counts = scatter(CombiningKind::sum, counts, constant(1.0));
      result = buildBroadcastPointwise(
          rewriter, loc, type, ValueRange{result, counts},
          TypeRange{dtype, dtype}, dtype,
          [](OpBuilder &b, Location loc, ValueRange e) -> Value {
            Value none =
                arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, e[1],
                                      makeFloat(b, loc, e[1].getType(), 0.0));
            return arith::SelectOp::create(
                b, loc, none, e[0], arith::DivFOp::create(b, loc, e[0], e[1]));
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  IndexChecks checks;
};

/// Lowers fx.scatter_reduce "prod" of floats along short dimensions
/// (isGatheredProduct) as a gather, whose result does not depend on
/// threads (a scatter's compare-and-swap multiplies in whichever order
/// they come): output element o multiplies the src elements
/// whose index along `dim` names it, a loop.reduce "prod" over the index's
/// extent along `dim` (the factor is 1 where the index names another
/// element), and a loop.reduce "max" of the matches says whether any did
/// (else o keeps self's). Quadratic along `dim`.
struct ScatterProductLowering : OpRewritePattern<fx::ScatterReduceOp> {
  ScatterProductLowering(MLIRContext *ctx, IndexChecks checks)
      : OpRewritePattern(ctx), checks(checks) {}

  LogicalResult matchAndRewrite(fx::ScatterReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (!isGatheredProduct(op))
      return rewriter.notifyMatchFailure(op, "not a float product to gather");
    auto type = cast<RankedTensorType>(op.getType());
    Type dtype = type.getElementType();
    Value self = op.getSelf(), index = op.getIndex(), src = op.getSrc();
    auto indexType = cast<RankedTensorType>(index.getType());
    auto srcType = cast<RankedTensorType>(src.getType());
    int64_t rank = type.getRank();
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    Location loc = op.getLoc();
    checkScatterIndex(rewriter, loc, checks, self, index, dim);
    Type accumulator =
        dtype.isF16() || dtype.isBF16() ? Type(rewriter.getF32Type()) : dtype;
    auto accumulatorType = type.clone(accumulator);
    int64_t extent = indexType.getDimSize(dim);
    // A reduction over the index's extent along `dim` for every output
    // element: `factor` gets the element, the index's value along `dim`
    // (wrapped and clamped) and whether it names the element.
    auto gather =
        [&](CombiningKind combiner,
            function_ref<Value(OpBuilder &, Location, ValueRange, Value)>
                factor) -> Value {
      auto node = loop::ReduceOp::create(
          rewriter, loc, accumulatorType,
          rewriter.getAttr<loop::CombiningKindAttr>(combiner), ValueRange{},
          ValueRange{}, rewriter.getDenseI64ArrayAttr({extent}));
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = rewriter.createBlock(&node.getBody());
      body->addArguments(SmallVector<Type>(rank + 1, rewriter.getIndexType()),
                         SmallVector<Location>(rank + 1, loc));
      ValueRange outs = body->getArguments().take_front(rank);
      Value j = body->getArgument(rank);
      // The index element (clamped into the index where o lies beyond it).
      Value inside;
      SmallVector<Value> at;
      for (int64_t d = 0; d < rank; ++d) {
        if (d == dim) {
          at.push_back(j);
          continue;
        }
        int64_t size = indexType.getDimSize(d);
        Value inRange = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::ult, outs[d],
            arith::ConstantIndexOp::create(rewriter, loc, size));
        at.push_back(arith::MinUIOp::create(
            rewriter, loc, outs[d],
            arith::ConstantIndexOp::create(rewriter, loc, size - 1)));
        inside = inside ? arith::AndIOp::create(rewriter, loc, inside, inRange)
                              .getResult()
                        : inRange;
      }
      Value named = loadIndex(
          rewriter, loc, index, at,
          arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(dim)),
          checks, getScatterMessage(dim));
      Value matches = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, named, outs[dim]);
      if (inside)
        matches = arith::AndIOp::create(rewriter, loc, matches, inside);
      loop::YieldOp::create(rewriter, loc, factor(rewriter, loc, at, matches));
      return node.getResult();
    };
    Value one = makeFloat(rewriter, loc, accumulator, 1.0);
    Value zero = makeFloat(rewriter, loc, accumulator, 0.0);
    Value products = gather(
        CombiningKind::prod,
        [&](OpBuilder &b, Location loc, ValueRange at, Value matches) -> Value {
          Value element =
              convertScalar(b, loc, loop::LoadOp::create(b, loc, src, at),
                            srcType.getElementType(), accumulator);
          return arith::SelectOp::create(b, loc, matches, element, one);
        });
    Value matched = gather(
        CombiningKind::max,
        [&](OpBuilder &b, Location loc, ValueRange, Value matches) -> Value {
          return arith::SelectOp::create(b, loc, matches, one, zero);
        });
    bool includeSelf = op.getIncludeSelf();
    Value result = buildBroadcastPointwise(
        rewriter, loc, type, ValueRange{self, products, matched},
        TypeRange{accumulator, accumulator, accumulator}, accumulator,
        [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
          Value product =
              includeSelf
                  ? arith::MulFOp::create(b, loc, e[0], e[1]).getResult()
                  : e[1];
          Value any = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                            e[2], zero);
          return arith::SelectOp::create(b, loc, any, product, e[0]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  IndexChecks checks;
};

/// Lowers fx.as_strided_scatter of static shapes: each element of src goes
/// to the element of self at storage offset + Σ index·stride, self's
/// elements counted in row-major order (a functional graph's self owns its
/// storage); an "assign" scatter, so of several src elements at one
/// position one wins, unspecified which, as in PyTorch.
struct AsStridedScatterLowering : OpRewritePattern<fx::AsStridedScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::AsStridedScatterOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    RankedTensorType srcType = op.getSrc().getType();
    ArrayRef<int64_t> strides = op.getStride();
    if (!type.hasStaticShape() || !srcType.hasStaticShape() ||
        type.getRank() == 0 || srcType.getRank() == 0 ||
        static_cast<int64_t>(strides.size()) != srcType.getRank())
      return rewriter.notifyMatchFailure(op, "dynamic or scalar shapes");
    int64_t offset = static_cast<int64_t>(op.getStorageOffset().value_or(0));
    // The view must lie within self: PyTorch refuses one reaching past it.
    if (srcType.getNumElements() == 0 ||
        !isStridedViewWithin(srcType.getShape(), strides, offset,
                             type.getNumElements()))
      return rewriter.notifyMatchFailure(op, "the view reaches past self");
    Location loc = op.getLoc();
    Value src = op.getSrc();
    rewriter.replaceOp(
        op, buildScatterOver(
                rewriter, loc, CombiningKind::assign, op.getSelf(), src,
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  Value position =
                      buildStridedPosition(b, loc, ivs, strides, offset);
                  Value value = convertScalar(
                      b, loc, loop::LoadOp::create(b, loc, src, ivs),
                      srcType.getElementType(), type.getElementType());
                  return ScatterUpdate{
                      value,
                      delinearizeIndex(b, loc, position, type.getShape())};
                }));
    return success();
  }
};

/// Lowers fx.index_put with integer index tensors (`self[i, j] = values`,
/// or `+=` with `accumulate`): values, broadcast to the index space of
/// advanced indexing (as fx.index would read it), add into or replace the
/// elements of self that the indices name.
struct IndexPutLowering : OpRewritePattern<fx::IndexPutOp> {
  IndexPutLowering(MLIRContext *ctx, IndexChecks checks)
      : OpRewritePattern(ctx), checks(checks) {}

  LogicalResult matchAndRewrite(fx::IndexPutOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    // Complex numbers are replaced whole (added part by part elsewhere).
    if (op.getAccumulate() && !isAddable(type))
      return rewriter.notifyMatchFailure(op, "elements not combined");
    FailureOr<AdvancedIndexing> indexing = AdvancedIndexing::get(
        op.getSelf(), op.getIndices(), op.getIndexPositions());
    if (failed(indexing))
      return rewriter.notifyMatchFailure(op, "a mask");
    Location loc = op.getLoc();
    SmallVector<Value> indexedSizes = indexing->getIndexedSizes(rewriter, loc);
    indexing->checkIndices(rewriter, loc, checks, indexedSizes);
    Type dtype = type.getElementType();
    Value result = buildScatter(
        rewriter, loc,
        op.getAccumulate() ? CombiningKind::sum : CombiningKind::assign,
        op.getSelf(), indexing->spaceShape,
        indexing->getDynamicSizes(rewriter, loc),
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> indices =
              indexing->getSelfIndices(b, loc, ivs, indexedSizes, checks);
          return ScatterUpdate{
              loadBroadcast(b, loc, op.getValues(), ivs, dtype), indices};
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  IndexChecks checks;
};

/// Lowers fx.embedding_dense_backward: each position's gradient row adds
/// into the weight row its index names, except at `padding_idx`; with
/// `scale_grad_by_freq` divided by how often the index occurs (counted by
/// a scatter of ones first).
struct EmbeddingDenseBackwardLowering
    : OpRewritePattern<fx::EmbeddingDenseBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::EmbeddingDenseBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value grad = op.getGradOutput();
    auto gradType = cast<RankedTensorType>(grad.getType());
    if (type.isDynamicDim(0))
      return rewriter.notifyMatchFailure(op, "dynamic number of weights");
    Location loc = op.getLoc();
    Value zeros = buildZeros(rewriter, loc, type, [&](int64_t) {
      return getDimSize(rewriter, loc, grad, gradType.getRank() - 1);
    });
    Value rows =
        arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(0));
    int64_t padding = static_cast<int64_t>(op.getPaddingIdx());
    Type dtype = type.getElementType();
    Value indices = op.getIndices();
    Value counts;
    if (op.getScaleGradByFreq()) {
      auto countsType = RankedTensorType::get(
          {type.getDimSize(0)},
          IntegerType::get(getContext(), 64, IntegerType::Signed));
      counts = buildScatterOver(
          rewriter, loc, CombiningKind::sum,
          buildZeros(rewriter, loc, countsType,
                     [](int64_t) { return Value(); }),
          indices, [&](OpBuilder &b, Location loc, ValueRange ivs) {
            return ScatterUpdate{
                arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)),
                {loadIndex(b, loc, indices, ivs, rows)}};
          });
    }
    rewriter.replaceOp(
        op, buildScatterOver(
                rewriter, loc, CombiningKind::sum, zeros, grad,
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  Value row = loadIndex(b, loc, indices, ivs.drop_back(), rows);
                  Value value = convertScalar(
                      b, loc, loop::LoadOp::create(b, loc, grad, ivs),
                      gradType.getElementType(), dtype);
                  if (counts) {
                    Type scalarType = value.getType();
                    Value count = arith::SIToFPOp::create(
                        b, loc, scalarType,
                        loop::LoadOp::create(b, loc, counts, row));
                    // PyTorch scales by the count's reciprocal.
                    value = arith::MulFOp::create(
                        b, loc, value,
                        arith::DivFOp::create(
                            b, loc, makeFloat(b, loc, scalarType, 1.0), count));
                  }
                  if (padding >= 0) {
                    Value padded = arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::eq, row,
                        arith::ConstantIndexOp::create(b, loc, padding));
                    value = arith::SelectOp::create(
                        b, loc, padded, makeFloat(b, loc, dtype, 0.0), value);
                  }
                  return ScatterUpdate{value, {row, ivs.back()}};
                }));
    return success();
  }
};

} // namespace

void fxtoloop::populateScatterLoweringPatterns(RewritePatternSet &patterns,
                                               const FXToLoopOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ScatterProductLowering, ScatterAlongLowering<fx::ScatterAddOp>,
               ScatterAlongLowering<fx::ScatterOp>,
               ScatterAlongLowering<fx::ScatterValueOp>, ScatterReduceLowering,
               IndexPutLowering>(ctx, IndexChecks(options));
  patterns.add<AsStridedScatterLowering, EmbeddingDenseBackwardLowering>(ctx);
}
