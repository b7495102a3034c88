//===- PoolingLowering.cpp - Pooling and col2im ---------------------------===//
//
// Part of Kiln. Max, average and adaptive average pooling over two or three
// spatial dimensions, their gradients, and col2im: reductions over each
// output's window, and gathers of the windows that read each input.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

/// The number of spatial dimensions pooling op `OpTy` pools over.
template <typename OpTy>
constexpr int64_t kPoolingRank =
    std::is_same_v<OpTy, fx::AvgPool3dOp> ||
            std::is_same_v<OpTy, fx::AdaptiveAvgPool3dOp> ||
            std::is_same_v<OpTy, fx::MaxPool3dWithIndicesOp>
        ? 3
        : 2;

/// Computes, for the output index `out` and window index `window` along
/// spatial dimension `dim`, the input position the window reads (possibly
/// outside the input) and whether it counts.
using WindowPositionFn = function_ref<std::pair<Value, Value>(
    OpBuilder &, Location, int64_t dim, Value out, Value window)>;

/// What a window reduction's body yields for one element of the window:
/// given the output's indices, the element (in the input's dtype), whether
/// its position counts, and the (clamped) input indices it was read at.
using WindowValueFn =
    function_ref<Value(OpBuilder &, Location, ValueRange out, Value element,
                       Value counts, ValueRange inputIndices)>;

/// Builds a loop.reduce of `resultType` ([leading..., spatial outputs...])
/// that combines, with `combiner`, the elements of `input` in each output's
/// window of `windowShape` (a dynamic size of which `dynamicWindow` gives,
/// in order); positions that do not count give the combiner's identity.
/// `value`, if given, yields something else for each element. A dynamic
/// spatial result size is `windowCounts`' (buildWindowCounts).
static Value buildWindowReduction(
    OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
    CombiningKind combiner, ArrayRef<int64_t> windowShape,
    WindowPositionFn position, WindowValueFn value = nullptr,
    ValueRange dynamicWindow = {}, ArrayRef<Value> windowCounts = {}) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  int64_t spatial = windowShape.size();
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    // A leading dimension's size is the input's; a spatial one's the
    // caller's (adaptive pooling's are static).
    if (dim < rank - spatial) {
      dynamicSizes.push_back(getDimSize(b, loc, input, dim));
      continue;
    }
    assert(!windowCounts.empty() && windowCounts[dim - (rank - spatial)] &&
           "a dynamic spatial result size without its count");
    dynamicSizes.push_back(windowCounts[dim - (rank - spatial)]);
  }
  SmallVector<Value> extents;
  for (int64_t dim = rank - spatial; dim < rank; ++dim)
    extents.push_back(getDimSize(b, loc, input, dim));
  auto node = loop::ReduceOp::create(
      b, loc, resultType, b.getAttr<loop::CombiningKindAttr>(combiner),
      dynamicSizes, dynamicWindow, b.getDenseI64ArrayAttr(windowShape));
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&node.getBody());
  body->addArguments(SmallVector<Type>(rank + spatial, b.getIndexType()),
                     SmallVector<Location>(rank + spatial, loc));
  SmallVector<Value> indices(body->getArguments().take_front(rank - spatial));
  Value counts;
  for (int64_t dim = 0; dim < spatial; ++dim) {
    auto [at, valid] =
        position(b, loc, dim, body->getArgument(rank - spatial + dim),
                 body->getArgument(rank + dim));
    counts = counts ? arith::AndIOp::create(b, loc, counts, valid).getResult()
                    : valid;
    indices.push_back(clampToRange(b, loc, at, extents[dim]));
  }
  Type accumulator = loop::getScalarType(resultType.getElementType());
  Value element = loop::LoadOp::create(b, loc, input, indices);
  if (value) {
    loop::YieldOp::create(b, loc,
                          value(b, loc, body->getArguments().take_front(rank),
                                element, counts, indices));
    return node.getResult();
  }
  element = convertScalar(b, loc, element, inputType.getElementType(),
                          resultType.getElementType());
  Value identity = getCombinerIdentity(b, loc, combiner, accumulator,
                                       resultType.getElementType());
  loop::YieldOp::create(
      b, loc,
      arith::SelectOp::create(b, loc, counts, element, identity).getResult());
  return node.getResult();
}

/// `value` (f32 sums of a 16-bit result, say) converted to `type`, by a
/// pointwise node that inlines into its readers; `value` if it has `type`.
static Value roundTo(OpBuilder &b, Location loc, Value value,
                     RankedTensorType type) {
  Type from = cast<RankedTensorType>(value.getType()).getElementType();
  if (from == type.getElementType())
    return value;
  return buildBroadcastPointwise(
      b, loc, type, value, from, from,
      [](OpBuilder &, Location, ValueRange elements) { return elements[0]; });
}

/// Builds a pooling gradient as a gather: a "sum" loop.reduce over
/// `candidates` (the outputs that may cover an input position, per spatial
/// dimension) into `resultType`'s shape (the pooling's `input`'s), in f32
/// for 16-bit results, whose body `value` builds from the input's indices
/// then the candidates'; rounded to `resultType`.
static Value buildPoolingGather(
    OpBuilder &b, Location loc, RankedTensorType resultType, Value input,
    ArrayRef<int64_t> candidates, Type sumDtype,
    function_ref<Value(OpBuilder &, Location, ValueRange)> value) {
  int64_t numArgs = resultType.getRank() + candidates.size();
  SmallVector<Value> dynamicSizes = collectDynamicSizes(
      resultType, [&](int64_t dim) { return getDimSize(b, loc, input, dim); });
  auto node = loop::ReduceOp::create(
      b, loc, resultType.clone(sumDtype),
      b.getAttr<loop::CombiningKindAttr>(CombiningKind::sum), dynamicSizes,
      ValueRange{}, b.getDenseI64ArrayAttr(candidates));
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = b.createBlock(&node.getBody());
    body->addArguments(SmallVector<Type>(numArgs, b.getIndexType()),
                       SmallVector<Location>(numArgs, loc));
    loop::YieldOp::create(b, loc, value(b, loc, body->getArguments()));
  }
  return roundTo(b, loc, node.getResult(), resultType);
}

/// The type pooling reduces into: the result's, in f32 for 16-bit floats.
static RankedTensorType getPoolingAccumulatorType(RankedTensorType type) {
  return type.clone(
      getComputeDtype(type.getElementType(), /*computeInF32=*/true));
}

/// Position and validity of strided, padded, dilated windows over `extent`
/// input positions.
static std::pair<Value, Value>
getStridedWindowPosition(OpBuilder &b, Location loc, Value out, Value window,
                         int64_t stride, int64_t padding, int64_t dilation,
                         Value extent) {
  Value at = arith::SubIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, out,
                                arith::ConstantIndexOp::create(b, loc, stride)),
          arith::MulIOp::create(
              b, loc, window,
              arith::ConstantIndexOp::create(b, loc, dilation))),
      arith::ConstantIndexOp::create(b, loc, padding));
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, at,
                            arith::ConstantIndexOp::create(b, loc, 0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at, extent));
  return {at, valid};
}

/// The number of windows of `kernel` positions `dilation` apart, every
/// `stride`, over `extent` positions padded by `padding` on each side, as
/// PyTorch's pooling_output_shape counts them: (extent + 2p - d(k - 1) - 1)
/// / s + 1, rounded down, or with `ceilMode` up, less the last window where
/// it would start in the right padding. A constant for a static extent.
static Value buildWindowCount(OpBuilder &b, Location loc, Value extent,
                              int64_t kernel, int64_t stride, int64_t padding,
                              int64_t dilation, bool ceilMode) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  int64_t reach = 2 * padding - dilation * (kernel - 1) - 1;
  Value count = b.createOrFold<arith::AddIOp>(
      loc,
      b.createOrFold<arith::DivSIOp>(
          loc,
          b.createOrFold<arith::AddIOp>(
              loc, extent, constant(reach + (ceilMode ? stride - 1 : 0))),
          constant(stride)),
      constant(1));
  if (!ceilMode)
    return count;
  Value lastStart = b.createOrFold<arith::MulIOp>(
      loc, b.createOrFold<arith::SubIOp>(loc, count, constant(1)),
      constant(stride));
  Value inPadding = b.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::sge, lastStart,
      b.createOrFold<arith::AddIOp>(loc, extent, constant(padding)));
  return b.createOrFold<arith::SelectOp>(
      loc, inPadding, b.createOrFold<arith::SubIOp>(loc, count, constant(1)),
      count);
}

/// The window counts of a pooling `op` over its input's spatial sizes
/// (`spatial` trailing ones), where the result's are dynamic (null where
/// they are static).
template <typename OpTy>
static SmallVector<Value> buildWindowCounts(OpBuilder &b, Location loc, OpTy op,
                                            int64_t spatial,
                                            ArrayRef<int64_t> dilation) {
  RankedTensorType inputType = op.getSelf().getType();
  RankedTensorType resultType = op.getResult().getType();
  ArrayRef<int64_t> kernel = op.getKernelSize();
  ArrayRef<int64_t> strides = op.getStride().empty() ? kernel : op.getStride();
  int64_t rank = inputType.getRank();
  SmallVector<Value> counts(spatial);
  for (int64_t dim = 0; dim < spatial; ++dim)
    if (resultType.isDynamicDim(rank - spatial + dim))
      counts[dim] = buildWindowCount(
          b, loc, getDimSize(b, loc, op.getSelf(), rank - spatial + dim),
          getSpatialAttr(kernel, dim), getSpatialAttr(strides, dim),
          getSpatialAttr(op.getPadding(), dim), getSpatialAttr(dilation, dim),
          op.getCeilMode());
  return counts;
}

/// An index value as a float of `type`.
static Value indexToFloat(OpBuilder &b, Location loc, Value index, Type type) {
  Value integer = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, type, integer);
}

/// Builds `resultType` as `sums` divided by the window size `divisor`
/// computes per spatial output index, rounded to the result's type.
static Value buildWindowAverage(
    OpBuilder &b, Location loc, Value sums, RankedTensorType resultType,
    int64_t spatial,
    function_ref<Value(OpBuilder &, Location, ValueRange)> divisor) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (resultType.isDynamicDim(dim))
      dynamicSizes.push_back(getDimSize(b, loc, sums, dim));
  auto node = loop::PointwiseOp::create(b, loc, resultType, dynamicSizes);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&node.getBody());
  body->addArguments(SmallVector<Type>(rank, b.getIndexType()),
                     SmallVector<Location>(rank, loc));
  Type sumType = cast<RankedTensorType>(sums.getType()).getElementType();
  Value sum = loop::LoadOp::create(b, loc, sums, body->getArguments());
  Value count = indexToFloat(
      b, loc, divisor(b, loc, body->getArguments().take_back(spatial)),
      sumType);
  Value average = arith::DivFOp::create(b, loc, sum, count);
  loop::YieldOp::create(
      b, loc,
      convertScalar(b, loc, average, sumType, resultType.getElementType()));
  return node.getResult();
}

namespace {
/// Lowers fx.max_pool2d_with_indices to a window reduction ("max" propagates
/// NaN, as PyTorch's pooling does) and, when something reads them, the
/// indices (h * W + w in the input plane) as a second reduction of the
/// window: the smallest index of an element equal to the maximum (PyTorch
/// keeps the first of equal maxima), but where the maximum is NaN the last
/// NaN's (PyTorch's pooling takes every NaN it meets), as the smallest of
/// the negated indices, negated back.
template <typename OpTy> struct MaxPoolLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr int64_t spatial = kPoolingRank<OpTy>;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType inputType = op.getSelf().getType();
    RankedTensorType resultType = op.getResult().getType();
    if (!isa<FloatType>(resultType.getElementType()))
      return rewriter.notifyMatchFailure(op, "integer pooling");
    ArrayRef<int64_t> kernel = op.getKernelSize();
    ArrayRef<int64_t> strides =
        op.getStride().empty() ? kernel : op.getStride();
    int64_t rank = inputType.getRank();
    Location loc = op.getLoc();
    SmallVector<int64_t> window;
    SmallVector<Value> extents;
    for (int64_t dim = 0; dim < spatial; ++dim) {
      window.push_back(getSpatialAttr(kernel, dim));
      extents.push_back(
          getDimSize(rewriter, loc, op.getSelf(), rank - spatial + dim));
    }
    auto position = [&](OpBuilder &b, Location loc, int64_t dim, Value out,
                        Value at) {
      return getStridedWindowPosition(
          b, loc, out, at, getSpatialAttr(strides, dim),
          getSpatialAttr(op.getPadding(), dim),
          getSpatialAttr(op.getDilation(), dim), extents[dim]);
    };
    SmallVector<Value> counts =
        buildWindowCounts(rewriter, loc, op, spatial, op.getDilation());
    RankedTensorType maximaType = getPoolingAccumulatorType(resultType);
    Value maxima = buildWindowReduction(rewriter, loc, op.getSelf(), maximaType,
                                        CombiningKind::max, window, position,
                                        nullptr, {}, counts);
    Value indices;
    if (!op.getIndices().use_empty())
      indices = buildIndices(rewriter, loc, op, maxima, window, position,
                             counts, extents);
    rewriter.replaceOp(op,
                       {roundTo(rewriter, loc, maxima, resultType), indices});
    return success();
  }

  static Value buildIndices(PatternRewriter &rewriter, Location loc, OpTy op,
                            Value maxima, ArrayRef<int64_t> window,
                            WindowPositionFn position, ArrayRef<Value> counts,
                            ArrayRef<Value> extents) {
    RankedTensorType inputType = op.getSelf().getType();
    RankedTensorType indicesType = op.getIndices().getType();
    Type dtype = cast<RankedTensorType>(maxima.getType()).getElementType();
    Type i64 = rewriter.getI64Type();
    Value encoded = buildWindowReduction(
        rewriter, loc, op.getSelf(), indicesType.clone(i64), CombiningKind::min,
        window, position,
        [&](OpBuilder &b, Location loc, ValueRange out, Value element,
            Value counts, ValueRange inputIndices) -> Value {
          element =
              convertScalar(b, loc, element, inputType.getElementType(), dtype);
          Value best = loop::LoadOp::create(b, loc, maxima, out);
          // The position in the input's spatial volume, row-major.
          ValueRange positions = inputIndices.take_back(spatial);
          Value flat = positions.front();
          for (int64_t dim = 1; dim < spatial; ++dim)
            flat = arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, flat, extents[dim]),
                positions[dim]);
          Value index = arith::IndexCastOp::create(b, loc, i64, flat);
          Value bestIsNaN = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::UNO, best, best);
          Value matches = arith::AndIOp::create(
              b, loc, counts, emitSameValue(b, loc, element, best));
          Value candidate = arith::SelectOp::create(
              b, loc, bestIsNaN,
              arith::SubIOp::create(b, loc, makeInteger(b, loc, i64, 0), index),
              index);
          return arith::SelectOp::create(
              b, loc, matches, candidate,
              makeInteger(b, loc, i64, std::numeric_limits<int64_t>::max()));
        },
        {}, counts);
    return buildBroadcastPointwise(
        rewriter, loc, indicesType, encoded, i64, i64,
        [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value zero = makeInteger(b, loc, elements[0].getType(), 0);
          Value negative = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, elements[0], zero);
          return arith::SelectOp::create(
              b, loc, negative,
              arith::SubIOp::create(b, loc, zero, elements[0]), elements[0]);
        });
  }
};

/// What the lowering of a 2-d pooling gradient reads off the op.
struct PoolingGradient {
  RankedTensorType grad, input, result;
  ArrayRef<int64_t> strides; // The kernel's size where none are given.
  int64_t rank;
};

/// The pooling gradient `op`'s types and strides; failure for integer
/// pooling.
template <typename OpTy>
static FailureOr<PoolingGradient> getPoolingGradient(OpTy op) {
  auto grad = cast<RankedTensorType>(op.getGradOutput().getType());
  auto input = cast<RankedTensorType>(op.getSelf().getType());
  auto result = cast<RankedTensorType>(op.getType());
  if (!isa<FloatType>(result.getElementType()))
    return failure();
  ArrayRef<int64_t> strides =
      op.getStride().empty() ? op.getKernelSize() : op.getStride();
  return PoolingGradient{grad, input, result, strides, input.getRank()};
}

/// The window of a 2-d pooling's `kernel_size` (one entry means square).
static SmallVector<int64_t> getPoolingWindow(ArrayRef<int64_t> kernel) {
  return {getSpatialAttr(kernel, 0), getSpatialAttr(kernel, 1)};
}

/// The outputs along a spatial dimension whose windows a pooling gradient's
/// gather tries for each input position: every window element k, or,
/// strided without dilation, only those that can cover it (k congruent to
/// the padded position modulo the stride): ceil(kernel / stride).
static int64_t getCandidateCount(int64_t kernel, int64_t stride,
                                 int64_t dilation) {
  return dilation == 1 && stride > 1 ? llvm::divideCeil(kernel, stride)
                                     : kernel;
}

/// The output whose window covers input `x` through candidate `j` (of
/// getCandidateCount), clamped among the `outputs`, and whether it does.
/// Strided without dilation, candidate j is window element
/// (x + padding) mod stride + j * stride, of output
/// (x + padding) div stride - j; otherwise window element j (getWindowAt).
static std::pair<Value, Value>
getCoveringOutput(OpBuilder &b, Location loc, Value x, Value j, int64_t kernel,
                  int64_t padding, int64_t dilation, int64_t stride,
                  Value outputs) {
  if (getCandidateCount(kernel, stride, dilation) == kernel)
    return getWindowAt(b, loc, x, j, padding, dilation, stride, outputs);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value padded = arith::AddIOp::create(b, loc, x, index(padding));
  Value element = arith::AddIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, padded, index(stride)),
      arith::MulIOp::create(b, loc, j, index(stride)));
  Value out = arith::SubIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, padded, index(stride)), j);
  auto compare = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs).getResult();
  };
  Value covers = arith::AndIOp::create(
      b, loc, compare(arith::CmpIPredicate::slt, element, index(kernel)),
      arith::AndIOp::create(b, loc,
                            compare(arith::CmpIPredicate::sge, out, index(0)),
                            compare(arith::CmpIPredicate::slt, out, outputs)));
  return {clampToRange(b, loc, out, outputs), covers};
}

/// Lowers fx.max_pool2d_with_indices_backward as a gather: each input
/// position sums the incoming gradients of the outputs whose window covers it
/// and whose index names it. Along each spatial dimension, window element k
/// covers input h from output (h + padding - k * dilation) / stride when
/// that divides exactly and lands among the outputs; the reduction runs
/// over the candidates that may (getCandidateCount: 2 x 2 of a 3 x 3
/// window of stride 2).
struct MaxPoolBackwardLowering
    : OpRewritePattern<fx::MaxPool2dWithIndicesBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::MaxPool2dWithIndicesBackwardOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<PoolingGradient> pooling = getPoolingGradient(op);
    if (failed(pooling))
      return rewriter.notifyMatchFailure(op, "integer pooling");
    RankedTensorType gradType = pooling->grad, resultType = pooling->result;
    ArrayRef<int64_t> strides = pooling->strides;
    int64_t rank = pooling->rank;
    SmallVector<int64_t> window = getPoolingWindow(op.getKernelSize());
    SmallVector<int64_t> candidates;
    for (int64_t dim = 0; dim < 2; ++dim)
      candidates.push_back(
          getCandidateCount(window[dim], getSpatialAttr(strides, dim),
                            getSpatialAttr(op.getDilation(), dim)));
    Location loc = op.getLoc();
    Value width = getDimSize(rewriter, loc, op.getSelf(), rank - 1);
    SmallVector<Value> outputs = {
        getDimSize(rewriter, loc, op.getGradOutput(), rank - 2),
        getDimSize(rewriter, loc, op.getGradOutput(), rank - 1)};
    Type sumDtype = getComputeDtype(resultType.getElementType(), true);
    Value result = buildPoolingGather(
        rewriter, loc, resultType, op.getSelf(), candidates, sumDtype,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          SmallVector<Value> outIndices(ivs.take_front(rank - 2));
          Value covers;
          for (int64_t dim = 0; dim < 2; ++dim) {
            auto [out, valid] = getCoveringOutput(
                b, loc, ivs[rank - 2 + dim], ivs[rank + dim], window[dim],
                getSpatialAttr(op.getPadding(), dim),
                getSpatialAttr(op.getDilation(), dim),
                getSpatialAttr(strides, dim), outputs[dim]);
            covers =
                covers
                    ? arith::AndIOp::create(b, loc, covers, valid).getResult()
                    : valid;
            outIndices.push_back(out);
          }
          // The output's maximum came from this input position.
          Value plane = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, ivs[rank - 2], width),
              ivs[rank - 1]);
          Value index =
              loop::LoadOp::create(b, loc, op.getIndices(), outIndices);
          Value named = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, index,
              arith::IndexCastOp::create(b, loc, b.getI64Type(), plane));
          Value grad = convertScalar(
              b, loc,
              loop::LoadOp::create(b, loc, op.getGradOutput(), outIndices),
              gradType.getElementType(), sumDtype);
          return arith::SelectOp::create(
              b, loc, arith::AndIOp::create(b, loc, covers, named), grad,
              makeFloat(b, loc, sumDtype, 0.0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// What avg_pool2d (or its gradient, `op`) divides the window sum of output
/// position `outs` by: `divisor_override`, or PyTorch's count, the window
/// clipped to the padded input (of spatial sizes `extents`) or, without
/// count_include_pad, to the input.
template <typename OpTy>
static Value buildAvgPoolDivisor(OpBuilder &b, Location loc, OpTy op,
                                 ArrayRef<Value> extents, ValueRange outs) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  if (std::optional<uint64_t> divisorOverride = op.getDivisorOverride())
    return constant(static_cast<int64_t>(*divisorOverride));
  ArrayRef<int64_t> kernel = op.getKernelSize();
  ArrayRef<int64_t> strides = op.getStride().empty() ? kernel : op.getStride();
  int64_t spatial = kPoolingRank<OpTy>;
  Value count;
  for (int64_t dim = 0; dim < spatial; ++dim) {
    int64_t padding = getSpatialAttr(op.getPadding(), dim);
    Value extent = extents[dim];
    Value start = arith::SubIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, outs[dim],
                              constant(getSpatialAttr(strides, dim))),
        constant(padding));
    Value end = arith::MinSIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, start,
                              constant(getSpatialAttr(kernel, dim))),
        b.createOrFold<arith::AddIOp>(loc, extent, constant(padding)));
    if (!op.getCountIncludePad()) {
      start = arith::MaxSIOp::create(b, loc, start, constant(0));
      end = arith::MinSIOp::create(b, loc, end, extent);
    }
    Value size = arith::SubIOp::create(b, loc, end, start);
    count =
        count ? arith::MulIOp::create(b, loc, count, size).getResult() : size;
  }
  return count;
}

/// Lowers fx.avg_pool2d to a window sum divided by the window's size (with
/// or without the padding it covers, or `divisor_override`).
template <typename OpTy> struct AvgPoolLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr int64_t spatial = kPoolingRank<OpTy>;
    RankedTensorType inputType = op.getSelf().getType();
    RankedTensorType resultType = op.getType();
    if (!isa<FloatType>(resultType.getElementType()))
      return rewriter.notifyMatchFailure(op, "integer pooling");
    ArrayRef<int64_t> kernel = op.getKernelSize();
    ArrayRef<int64_t> strides =
        op.getStride().empty() ? kernel : op.getStride();
    int64_t rank = inputType.getRank();
    Location loc = op.getLoc();
    SmallVector<int64_t> window;
    SmallVector<Value> extents;
    for (int64_t dim = 0; dim < spatial; ++dim) {
      window.push_back(getSpatialAttr(kernel, dim));
      extents.push_back(
          getDimSize(rewriter, loc, op.getSelf(), rank - spatial + dim));
    }
    Value sums = buildWindowReduction(
        rewriter, loc, op.getSelf(), getPoolingAccumulatorType(resultType),
        CombiningKind::sum, window,
        [&](OpBuilder &b, Location loc, int64_t dim, Value out, Value at) {
          return getStridedWindowPosition(b, loc, out, at,
                                          getSpatialAttr(strides, dim),
                                          getSpatialAttr(op.getPadding(), dim),
                                          /*dilation=*/1, extents[dim]);
        },
        nullptr, {},
        buildWindowCounts(rewriter, loc, op, spatial, /*dilation=*/{1}));
    Value result = buildWindowAverage(
        rewriter, loc, sums, resultType, spatial,
        [&](OpBuilder &b, Location loc, ValueRange outs) {
          return buildAvgPoolDivisor(b, loc, op, extents, outs);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.col2im (fold): output pixel (y, x) of channel c sums, over
/// the kernel positions (i, j), the column element of block (by, bx) whose
/// window puts (i, j) at (y, x): by = (y + p_h - i·d_h) / s_h when that
/// divides and falls inside the blocks (likewise bx). A [..., C, H, W, k_h,
/// k_w] node of those terms (zero where none), which inlining folds into
/// the sum over the last two dimensions.
struct Col2imLowering : OpRewritePattern<fx::Col2imOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::Col2imOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value columns = op.getSelf();
    auto columnsType = cast<RankedTensorType>(columns.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    if (!columnsType.hasStaticShape() || !resultType.hasStaticShape() ||
        !isa<FloatType>(resultType.getElementType()))
      return rewriter.notifyMatchFailure(op, "dynamic or not floats");
    SmallVector<int64_t> kernel, dilation, padding, stride, blocks;
    for (int64_t dim = 0; dim < 2; ++dim) {
      kernel.push_back(getSpatialAttr(op.getKernelSize(), dim));
      dilation.push_back(getSpatialAttr(op.getDilation(), dim));
      padding.push_back(getSpatialAttr(op.getPadding(), dim));
      stride.push_back(getSpatialAttr(op.getStride(), dim));
      int64_t extent = resultType.getDimSize(rank - 2 + dim);
      blocks.push_back(
          (extent + 2 * padding[dim] - dilation[dim] * (kernel[dim] - 1) - 1) /
              stride[dim] +
          1);
    }
    Type dtype = resultType.getElementType();
    Type sumType = getComputeDtype(dtype, /*computeInF32=*/true);
    SmallVector<int64_t> termsShape(resultType.getShape());
    termsShape.append(kernel);
    Value terms = buildGeneratorNode(
        rewriter, loc, RankedTensorType::get(termsShape, sumType), {},
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          auto index = [&](int64_t value) -> Value {
            return arith::ConstantIndexOp::create(b, loc, value);
          };
          Value valid;
          SmallVector<Value> blockAt;
          for (int64_t dim = 0; dim < 2; ++dim) {
            auto [block, fits] = getWindowAt(
                b, loc, ivs[rank - 2 + dim], ivs[rank + dim], padding[dim],
                dilation[dim], stride[dim], blocks[dim]);
            valid = valid
                        ? arith::AndIOp::create(b, loc, valid, fits).getResult()
                        : fits;
            blockAt.push_back(block);
          }
          // Row (c·k_h + i)·k_w + j, column by·L_w + bx of the columns.
          Value row = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(
                  b, loc,
                  arith::AddIOp::create(b, loc,
                                        arith::MulIOp::create(b, loc,
                                                              ivs[rank - 3],
                                                              index(kernel[0])),
                                        ivs[rank]),
                  index(kernel[1])),
              ivs[rank + 1]);
          Value column = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, blockAt[0], index(blocks[1])),
              blockAt[1]);
          SmallVector<Value> at(ivs.take_front(rank - 3));
          at.append({row, column});
          Value element =
              convertScalar(b, loc, loop::LoadOp::create(b, loc, columns, at),
                            columnsType.getElementType(), sumType);
          return arith::SelectOp::create(b, loc, valid, element,
                                         makeFloat(b, loc, sumType, 0.0))
              .getResult();
        });
    Value sums = buildReduction(rewriter, loc, terms, {rank, rank + 1},
                                /*keepdim=*/false, CombiningKind::sum,
                                resultType.clone(sumType));
    rewriter.replaceOp(op, roundTo(rewriter, loc, sums, resultType));
    return success();
  }
};

/// Lowers fx.avg_pool2d_backward as a gather: an input position receives
/// each covering output's gradient over that output's divisor.
struct AvgPoolBackwardLowering : OpRewritePattern<fx::AvgPool2dBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::AvgPool2dBackwardOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<PoolingGradient> pooling = getPoolingGradient(op);
    if (failed(pooling))
      return rewriter.notifyMatchFailure(op, "integer pooling");
    RankedTensorType gradType = pooling->grad, resultType = pooling->result;
    ArrayRef<int64_t> strides = pooling->strides;
    int64_t rank = pooling->rank;
    SmallVector<int64_t> window = getPoolingWindow(op.getKernelSize());
    SmallVector<int64_t> candidates;
    for (int64_t dim = 0; dim < 2; ++dim)
      candidates.push_back(getCandidateCount(
          window[dim], getSpatialAttr(strides, dim), /*dilation=*/1));
    Type sumDtype = getComputeDtype(resultType.getElementType(), true);
    SmallVector<Value> extents, outputs;
    for (int64_t dim = rank - 2; dim < rank; ++dim) {
      extents.push_back(getDimSize(rewriter, op.getLoc(), op.getSelf(), dim));
      outputs.push_back(
          getDimSize(rewriter, op.getLoc(), op.getGradOutput(), dim));
    }
    Value result = buildPoolingGather(
        rewriter, op.getLoc(), resultType, op.getSelf(), candidates, sumDtype,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          SmallVector<Value> outIndices(ivs.take_front(rank - 2));
          SmallVector<Value> outs;
          Value covers;
          for (int64_t dim = 0; dim < 2; ++dim) {
            auto [out, valid] = getCoveringOutput(
                b, loc, ivs[rank - 2 + dim], ivs[rank + dim], window[dim],
                getSpatialAttr(op.getPadding(), dim),
                /*dilation=*/1, getSpatialAttr(strides, dim), outputs[dim]);
            covers =
                covers
                    ? arith::AndIOp::create(b, loc, covers, valid).getResult()
                    : valid;
            outIndices.push_back(out);
            outs.push_back(out);
          }
          Value grad = convertScalar(
              b, loc,
              loop::LoadOp::create(b, loc, op.getGradOutput(), outIndices),
              gradType.getElementType(), sumDtype);
          Value divisor = buildAvgPoolDivisor(b, loc, op, extents, outs);
          Value share = arith::DivFOp::create(
              b, loc, grad, indexToFloat(b, loc, divisor, sumDtype));
          return arith::SelectOp::create(b, loc, covers, share,
                                         makeFloat(b, loc, sumDtype, 0.0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The input positions [floor(o In / Out), ceil((o + 1) In / Out)) that
/// adaptive pooling's output `out` of `count` averages along a dimension of
/// `extentValue` inputs.
static std::pair<Value, Value> getAdaptiveWindow(OpBuilder &b, Location loc,
                                                 Value out, Value extentValue,
                                                 int64_t count) {
  Value countValue = arith::ConstantIndexOp::create(b, loc, count);
  Value start = arith::DivUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, out, extentValue), countValue);
  Value next = arith::AddIOp::create(b, loc, out,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value end = arith::CeilDivUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, next, extentValue), countValue);
  return {start, end};
}

/// Lowers fx.adaptive_avg_pool2d: output o of an extent-In dimension with
/// Out outputs averages input positions [floor(o In / Out),
/// ceil((o + 1) In / Out)). A dynamic In (images of any size; Out is
/// static) bounds the windows by ceil(In / Out) + 1 at run time, one more
/// than the widest unless Out divides In.
template <typename OpTy>
struct AdaptiveAvgPoolLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr int64_t spatial = kPoolingRank<OpTy>;
    RankedTensorType inputType = op.getSelf().getType();
    RankedTensorType resultType = op.getType();
    int64_t rank = inputType.getRank();
    for (int64_t dim = rank - spatial; dim < rank; ++dim)
      if (resultType.isDynamicDim(dim) || resultType.getDimSize(dim) == 0)
        return rewriter.notifyMatchFailure(op, "dynamic or empty output");
    Location loc = op.getLoc();
    SmallVector<Value> extents, dynamicWindow;
    SmallVector<int64_t> outputs, window;
    for (int64_t dim = 0; dim < spatial; ++dim) {
      int64_t count = resultType.getDimSize(rank - spatial + dim);
      Value extent =
          getDimSize(rewriter, loc, op.getSelf(), rank - spatial + dim);
      extents.push_back(extent);
      outputs.push_back(count);
      if (inputType.isDynamicDim(rank - spatial + dim)) {
        window.push_back(ShapedType::kDynamic);
        dynamicWindow.push_back(arith::AddIOp::create(
            rewriter, loc,
            arith::CeilDivUIOp::create(
                rewriter, loc, extent,
                arith::ConstantIndexOp::create(rewriter, loc, count)),
            arith::ConstantIndexOp::create(rewriter, loc, 1)));
        continue;
      }
      int64_t size = inputType.getDimSize(rank - spatial + dim);
      int64_t widest = 0;
      for (int64_t o = 0; o < count; ++o)
        widest = std::max(widest, ((o + 1) * size + count - 1) / count -
                                      (o * size) / count);
      window.push_back(widest);
    }
    auto bounds = [&](OpBuilder &b, Location loc, int64_t dim, Value out) {
      return getAdaptiveWindow(b, loc, out, extents[dim], outputs[dim]);
    };
    Value sums = buildWindowReduction(
        rewriter, loc, op.getSelf(), getPoolingAccumulatorType(resultType),
        CombiningKind::sum, window,
        [&](OpBuilder &b, Location loc, int64_t dim, Value out, Value at) {
          auto [start, end] = bounds(b, loc, dim, out);
          Value position = arith::AddIOp::create(b, loc, start, at);
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              position, end);
          return std::make_pair(position, valid);
        },
        /*value=*/nullptr, dynamicWindow);
    Value result = buildWindowAverage(
        rewriter, loc, sums, resultType, spatial,
        [&](OpBuilder &b, Location loc, ValueRange outs) -> Value {
          Value count;
          for (int64_t dim = 0; dim < spatial; ++dim) {
            auto [start, end] = bounds(b, loc, dim, outs[dim]);
            Value size = arith::SubIOp::create(b, loc, end, start);
            count = count
                        ? arith::MulIOp::create(b, loc, count, size).getResult()
                        : size;
          }
          return count;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.adaptive_avg_pool2d_backward as a gather: input h sums
/// grad / window size over the outputs whose windows hold it, which are
/// floor(h Out / In) and the few after it whose windows start by h.
struct AdaptiveAvgPoolBackwardLowering
    : OpRewritePattern<fx::AdaptiveAvgPool2dBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::AdaptiveAvgPool2dBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto gradType = cast<RankedTensorType>(op.getGradOutput().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    if (gradType.isDynamicDim(rank - 2) || gradType.isDynamicDim(rank - 1))
      return rewriter.notifyMatchFailure(op, "dynamic pooling");
    Location loc = op.getLoc();
    SmallVector<Value> extents;
    SmallVector<int64_t> outputs, candidates;
    for (int64_t dim = 0; dim < 2; ++dim) {
      int64_t extent = resultType.getDimSize(rank - 2 + dim);
      int64_t count = gradType.getDimSize(rank - 2 + dim);
      if (count == 0 || extent == 0)
        return rewriter.notifyMatchFailure(op, "empty pooling");
      // The most outputs whose windows hold one input position; any of
      // them for an input size known only at run time.
      int64_t most = ShapedType::isDynamic(extent) ? count : 0;
      for (int64_t h = 0; h < extent && !ShapedType::isDynamic(extent); ++h) {
        int64_t holding = 0;
        for (int64_t o = h * count / extent; o < count; ++o) {
          if (o * extent / count > h)
            break;
          ++holding;
        }
        most = std::max(most, holding);
      }
      extents.push_back(
          getDimSize(rewriter, loc, op.getSelf(), rank - 2 + dim));
      outputs.push_back(count);
      candidates.push_back(most);
    }
    Type sumDtype = getComputeDtype(resultType.getElementType(), true);
    Value result = buildPoolingGather(
        rewriter, loc, resultType, op.getSelf(), candidates, sumDtype,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          SmallVector<Value> outIndices(ivs.take_front(rank - 2));
          Value holds, size;
          for (int64_t dim = 0; dim < 2; ++dim) {
            Value h = ivs[rank - 2 + dim];
            Value first = arith::DivUIOp::create(
                b, loc,
                arith::MulIOp::create(
                    b, loc, h,
                    arith::ConstantIndexOp::create(b, loc, outputs[dim])),
                extents[dim]);
            Value out = arith::AddIOp::create(b, loc, first, ivs[rank + dim]);
            Value last =
                arith::ConstantIndexOp::create(b, loc, outputs[dim] - 1);
            Value clamped = arith::MinUIOp::create(b, loc, out, last);
            auto [start, end] =
                getAdaptiveWindow(b, loc, clamped, extents[dim], outputs[dim]);
            Value valid = arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, out,
                                      last),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, start,
                                      h));
            holds =
                holds ? arith::AndIOp::create(b, loc, holds, valid).getResult()
                      : valid;
            Value extent = arith::SubIOp::create(b, loc, end, start);
            size = size
                       ? arith::MulIOp::create(b, loc, size, extent).getResult()
                       : extent;
            outIndices.push_back(clamped);
          }
          Value grad = convertScalar(
              b, loc,
              loop::LoadOp::create(b, loc, op.getGradOutput(), outIndices),
              gradType.getElementType(), sumDtype);
          Value share = arith::DivFOp::create(
              b, loc, grad, indexToFloat(b, loc, size, sumDtype));
          return arith::SelectOp::create(b, loc, holds, share,
                                         makeFloat(b, loc, sumDtype, 0.0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void fxtoloop::populatePoolingLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<MaxPoolLowering<fx::MaxPool2dWithIndicesOp>,
           MaxPoolLowering<fx::MaxPool3dWithIndicesOp>, MaxPoolBackwardLowering,
           Col2imLowering, AvgPoolLowering<fx::AvgPool2dOp>,
           AvgPoolLowering<fx::AvgPool3dOp>, AvgPoolBackwardLowering,
           AdaptiveAvgPoolLowering<fx::AdaptiveAvgPool2dOp>,
           AdaptiveAvgPoolLowering<fx::AdaptiveAvgPool3dOp>,
           AdaptiveAvgPoolBackwardLowering>(ctx);
}
