//===- NormalizationLowering.cpp - Softmax and normalizations -------------===//
//
// Part of Kiln. var and var_mean, softmax, log_softmax, logsumexp and the
// batch, layer and group normalizations, and their gradients: reductions for
// the rows' statistics and pointwise nodes that read them, as PyTorch's
// kernels compute them (in f32 for f16/bf16 inputs).
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The number of elements of `tensor` over `dims`, as a float of `dtype`.
static Value getElementCount(OpBuilder &b, Location loc, Value tensor,
                             ArrayRef<int64_t> dims, Type dtype) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t dim : dims)
    count =
        arith::MulIOp::create(b, loc, count, getDimSize(b, loc, tensor, dim));
  return sizeToFloat(b, loc, count, dtype);
}

/// A pointwise node of `resultType` from `inputs` of the kept shape (size 1
/// at the `reduced` dimensions): with `keepdim` the shapes agree, else the
/// node drops the reduced dimensions and reads the inputs at index 0 there.
static Value buildFromKeptShape(OpBuilder &b, Location loc,
                                RankedTensorType resultType, ValueRange inputs,
                                ArrayRef<bool> reduced, Type dtype,
                                ScalarBodyFn bodyFn) {
  auto keptType = cast<RankedTensorType>(inputs.front().getType());
  bool keepdim = resultType.getRank() == keptType.getRank();
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < keptType.getRank(); ++dim) {
    if ((keepdim || !reduced[dim]) && keptType.isDynamicDim(dim))
      dynamicSizes.push_back(getDimSize(b, loc, inputs.front(), dim));
  }
  auto node = loop::PointwiseOp::create(b, loc, resultType, dynamicSizes);
  Block *body = b.createBlock(&node.getBody());
  int64_t rank = resultType.getRank();
  body->addArguments(SmallVector<Type>(rank, b.getIndexType()),
                     SmallVector<Location>(rank, loc));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> indices;
  int64_t next = 0;
  for (int64_t dim = 0; dim < keptType.getRank(); ++dim) {
    if (reduced[dim]) {
      indices.push_back(zero);
      next += keepdim;
    } else {
      indices.push_back(body->getArgument(next++));
    }
  }
  SmallVector<Value> elements;
  for (Value input : inputs) {
    Value element = loop::LoadOp::create(b, loc, input, indices);
    elements.push_back(convertScalar(
        b, loc, element,
        cast<RankedTensorType>(input.getType()).getElementType(), dtype));
  }
  Value result = convertScalar(b, loc, bodyFn(b, loc, elements), dtype,
                               resultType.getElementType());
  loop::YieldOp::create(b, loc, result);
  b.setInsertionPointAfter(node);
  return node.getResult();
}

/// A pattern that keeps the pass's options.
template <typename OpTy>
struct OpRewritePatternWithOptions : OpRewritePattern<OpTy> {
  OpRewritePatternWithOptions(MLIRContext *ctx, const FXToLoopOptions &options)
      : OpRewritePattern<OpTy>(ctx), options(options) {}

  FXToLoopOptions options;
};

/// The mean and variance over `dims` of `input`, in `dtype`, with the
/// size-1 dimensions kept: the sum, the rounded mean m, then over the
/// deviations d = x - m both sum(d) and sum(d^2) (one more pass, which row
/// and sibling fusion keep in cache), or with `options.welford` the squared
/// deviations in one pass of their own (a "welford" reduction).
///
/// sum((x - mean)^2) = sum(d^2) - sum(d)^2 / n for any m, and both sums
/// add small numbers: data on a large offset (1e4 + 0.01 randn) keep the
/// digits that the rounded m lost (squaring deviations from m alone gave a
/// relative error of 1e-1 over 10^5 elements, as much as n (m - mean)^2).
/// The mean returned is m + sum(d) / n.
struct Moments {
  Value count, mean, squaredDeviations;
};
static Moments buildMoments(OpBuilder &b, Location loc, Value input,
                            ArrayRef<int64_t> dims, Type dtype,
                            const FXToLoopOptions &options) {
  auto inputType = cast<RankedTensorType>(input.getType());
  RankedTensorType statsType = getStatisticsType(inputType, dims, dtype);
  Value count = getElementCount(b, loc, input, dims, dtype);
  Value sum = buildReduction(b, loc, input, dims, /*keepdim=*/true,
                             CombiningKind::sum, statsType);
  auto divideByCount = [&](Value total) {
    return buildBroadcastPointwise(
        b, loc, statsType, ValueRange{total}, TypeRange{dtype}, dtype,
        [&](OpBuilder &nested, Location loc, ValueRange elements) -> Value {
          return arith::DivFOp::create(nested, loc, elements[0], count);
        });
  };
  Value roughMean = divideByCount(sum);
  if (options.welford) {
    // One pass beside the sum's: Welford's M2.
    Value squaredDeviations =
        buildReduction(b, loc, input, dims, /*keepdim=*/true,
                       CombiningKind::welford, statsType);
    return {count, roughMean, squaredDeviations};
  }
  auto computeType = RankedTensorType::get(inputType.getShape(), dtype);
  Value deviations = buildBroadcastPointwise(
      b, loc, computeType, ValueRange{input, roughMean},
      TypeRange{dtype, dtype}, dtype,
      [](OpBuilder &nested, Location loc, ValueRange elements) -> Value {
        return arith::SubFOp::create(nested, loc, elements[0], elements[1]);
      });
  Value deviationSum =
      buildReduction(b, loc, deviations, dims,
                     /*keepdim=*/true, CombiningKind::sum, statsType);
  Value squares = buildBroadcastPointwise(
      b, loc, computeType, ValueRange{deviations}, TypeRange{dtype}, dtype,
      [](OpBuilder &nested, Location loc, ValueRange elements) -> Value {
        return arith::MulFOp::create(nested, loc, elements[0], elements[0]);
      });
  Value squaresSum =
      buildReduction(b, loc, squares, dims,
                     /*keepdim=*/true, CombiningKind::sum, statsType);
  Value mean = buildBroadcastPointwise(
      b, loc, statsType, ValueRange{roughMean, deviationSum},
      TypeRange{dtype, dtype}, dtype,
      [&](OpBuilder &nested, Location loc, ValueRange elements) -> Value {
        Value shift = arith::DivFOp::create(nested, loc, elements[1], count);
        return arith::AddFOp::create(nested, loc, elements[0], shift);
      });
  // sum(d^2) - sum(d)^2 / n, never below 0 (rounding; NaN stays NaN).
  Value squaredDeviations = buildBroadcastPointwise(
      b, loc, statsType, ValueRange{squaresSum, deviationSum},
      TypeRange{dtype, dtype}, dtype,
      [&](OpBuilder &nested, Location loc, ValueRange elements) -> Value {
        Value offset = arith::DivFOp::create(
            nested, loc,
            arith::MulFOp::create(nested, loc, elements[1], elements[1]),
            count);
        Value exact = arith::SubFOp::create(nested, loc, elements[0], offset);
        Value zero = arith::ConstantOp::create(nested, loc,
                                               nested.getFloatAttr(dtype, 0.0));
        return arith::MaximumFOp::create(nested, loc, exact, zero);
      });
  return {count, mean, squaredDeviations};
}

/// Lowers fx.var and fx.var_mean: the mean, then the sum of squared
/// deviations (two passes, which row fusion keeps in cache) over the element
/// count less `correction` (1 by default), as PyTorch divides.
template <typename OpTy>
struct VarianceLowering : OpRewritePatternWithOptions<OpTy> {
  using OpRewritePatternWithOptions<OpTy>::OpRewritePatternWithOptions;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getSelf();
    auto inputType = cast<RankedTensorType>(input.getType());
    if (isa<ComplexType>(inputType.getElementType()))
      return rewriter.notifyMatchFailure(op, "complex variance");
    int64_t rank = inputType.getRank();
    if (rank == 0)
      return rewriter.notifyMatchFailure(op, "variance of a scalar");
    double correction = 1.0;
    if (Attribute attr = op.getCorrectionAttr()) {
      if (auto floatAttr = dyn_cast<FloatAttr>(attr))
        correction = floatAttr.getValueAsDouble();
      else if (auto intAttr = dyn_cast<IntegerAttr>(attr))
        correction = static_cast<double>(intAttr.getInt());
      else
        correction = cast<BoolAttr>(attr).getValue() ? 1.0 : 0.0;
    }
    SmallVector<int64_t> dims;
    SmallVector<bool> reduced(rank, !op.getDim() || op.getDim()->empty());
    if (std::optional<ArrayRef<int64_t>> dim = op.getDim()) {
      for (int64_t d : *dim)
        reduced[d < 0 ? d + rank : d] = true;
    }
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d])
        dims.push_back(d);

    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    auto [count, mean, squaresSum] =
        buildMoments(rewriter, loc, input, dims, dtype, this->options);
    // max(count - correction, 0): PyTorch gives inf or nan below one degree
    // of freedom.
    Value degrees = arith::MaximumFOp::create(
        rewriter, loc,
        arith::SubFOp::create(
            rewriter, loc, count,
            arith::ConstantOp::create(
                rewriter, loc, rewriter.getFloatAttr(dtype, correction))),
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getFloatAttr(dtype, 0.0)));
    Value variance = buildFromKeptShape(
        rewriter, loc, cast<RankedTensorType>(op->getResult(0).getType()),
        ValueRange{squaresSum}, reduced, dtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          return arith::DivFOp::create(b, loc, elements[0], degrees);
        });
    SmallVector<Value> results = {variance};
    if constexpr (std::is_same_v<OpTy, fx::VarMeanOp>) {
      results.push_back(buildFromKeptShape(
          rewriter, loc, cast<RankedTensorType>(op.getMean().getType()),
          ValueRange{mean}, reduced, dtype,
          [](OpBuilder &, Location, ValueRange elements) {
            return elements[0];
          }));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Lowers fx.softmax and fx.log_softmax: the row's maximum, the sum of
/// exponentials of the shifted row, then each element; row fusion makes the
/// three one kernel.
template <typename OpTy> struct SoftmaxLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getSelf();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    if (inputType.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "softmax of a scalar");
    // The attribute's getter returns it unsigned.
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += inputType.getRank();
    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    RankedTensorType statsType = getStatisticsType(inputType, {dim}, dtype);
    Value max = buildReduction(rewriter, loc, input, {dim}, /*keepdim=*/true,
                               CombiningKind::max, statsType);
    auto computeType = RankedTensorType::get(inputType.getShape(), dtype);
    Value exps = buildBroadcastPointwise(
        rewriter, loc, computeType, ValueRange{input, max},
        TypeRange{dtype, dtype}, dtype,
        [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          return math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, elements[0], elements[1]));
        });
    Value sum = buildReduction(rewriter, loc, exps, {dim}, /*keepdim=*/true,
                               CombiningKind::sum, statsType);
    Value result;
    if constexpr (std::is_same_v<OpTy, fx::SoftmaxOp>) {
      // One division per row: the elements multiply by the reciprocal.
      Value one = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getFloatAttr(dtype, 1.0));
      result = buildBroadcastPointwise(
          rewriter, loc, resultType, ValueRange{exps, sum},
          TypeRange{dtype, dtype}, dtype,
          [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
            Value reciprocal = arith::DivFOp::create(b, loc, one, elements[1]);
            return arith::MulFOp::create(b, loc, elements[0], reciprocal);
          });
    } else {
      result = buildBroadcastPointwise(
          rewriter, loc, resultType, ValueRange{input, max, sum},
          TypeRange{dtype, dtype, dtype}, dtype,
          [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
            Value shifted =
                arith::SubFOp::create(b, loc, elements[0], elements[1]);
            return arith::SubFOp::create(
                b, loc, shifted, math::LogOp::create(b, loc, elements[2]));
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.softmax_backward_data, `y * (g - sum(g * y))` over `dim`, and
/// fx.log_softmax_backward_data, `g - exp(y) * sum(g)`, as PyTorch's kernels
/// compute them: the row sums in the statistics dtype (f32 for f16/bf16).
template <typename OpTy>
struct SoftmaxBackwardLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isSoftmax = std::is_same_v<OpTy, fx::SoftmaxBackwardDataOp>;
    Location loc = op.getLoc();
    Value grad = op.getGradOutput();
    Value output = op.getOutput();
    auto type = cast<RankedTensorType>(output.getType());
    if (type.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "softmax of a scalar");
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += type.getRank();
    Type dtype = getNormalizationDtype(rewriter, type.getElementType());
    RankedTensorType statsType = getStatisticsType(type, {dim}, dtype);
    Value summed = grad;
    if constexpr (isSoftmax)
      summed = buildBroadcastPointwise(
          rewriter, loc, RankedTensorType::get(type.getShape(), dtype),
          ValueRange{grad, output}, TypeRange{dtype, dtype}, dtype,
          [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
            return arith::MulFOp::create(b, loc, elements[0], elements[1]);
          });
    Value sum = buildReduction(rewriter, loc, summed, {dim}, /*keepdim=*/true,
                               CombiningKind::sum, statsType);
    Value result = buildBroadcastPointwise(
        rewriter, loc, cast<RankedTensorType>(op.getResult().getType()),
        ValueRange{grad, output, sum}, TypeRange{dtype, dtype, dtype}, dtype,
        [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value g = elements[0], y = elements[1], rowSum = elements[2];
          if constexpr (isSoftmax)
            return arith::MulFOp::create(
                b, loc, y, arith::SubFOp::create(b, loc, g, rowSum));
          return arith::SubFOp::create(
              b, loc, g,
              arith::MulFOp::create(b, loc, math::ExpOp::create(b, loc, y),
                                    rowSum));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.native_layer_norm: the mean, the mean of squared deviations
/// (two passes over a row, which row fusion keeps in cache, rather than the
/// less accurate E[x^2] - E[x]^2), then the normalized, scaled and shifted
/// elements.
/// Lowers fx.logsumexp stably: log(sum(exp(x - m))) + m with m the maximum
/// over the dimensions, or 0 where that is infinite (as PyTorch does, so
/// that all -inf rows give -inf and +inf rows +inf). Row fusion makes one
/// kernel of it, as of softmax.
struct LogSumExpLowering : OpRewritePattern<fx::LogsumexpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::LogsumexpOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getSelf();
    auto inputType = cast<RankedTensorType>(input.getType());
    RankedTensorType resultType = op.getType();
    int64_t rank = inputType.getRank();
    if (rank == 0 || !isa<FloatType>(inputType.getElementType()))
      return rewriter.notifyMatchFailure(op, "scalar or complex logsumexp");
    SmallVector<int64_t> dims;
    for (int64_t dim : op.getDim())
      dims.push_back(dim < 0 ? dim + rank : dim);
    if (dims.empty())
      dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    SmallVector<bool> reduced(rank, false);
    for (int64_t dim : dims)
      reduced[dim] = true;

    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    RankedTensorType statsType = getStatisticsType(inputType, dims, dtype);
    Value max = buildReduction(rewriter, loc, input, dims, /*keepdim=*/true,
                               CombiningKind::max, statsType);
    Value shift = buildBroadcastPointwise(
        rewriter, loc, statsType, max, dtype, dtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value magnitude = math::AbsFOp::create(b, loc, elements[0]);
          Value infinity = arith::ConstantOp::create(
              b, loc,
              b.getFloatAttr(
                  dtype,
                  APFloat::getInf(cast<FloatType>(dtype).getFloatSemantics())));
          Value zero =
              arith::ConstantOp::create(b, loc, b.getFloatAttr(dtype, 0.0));
          Value isInfinite = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, magnitude, infinity);
          return arith::SelectOp::create(b, loc, isInfinite, zero, elements[0]);
        });
    auto computeType = RankedTensorType::get(inputType.getShape(), dtype);
    Value exps = buildBroadcastPointwise(
        rewriter, loc, computeType, ValueRange{input, shift},
        TypeRange{dtype, dtype}, dtype,
        [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          return math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, elements[0], elements[1]));
        });
    Value sum = buildReduction(rewriter, loc, exps, dims, /*keepdim=*/true,
                               CombiningKind::sum, statsType);
    Value result = buildFromKeptShape(
        rewriter, loc, resultType, ValueRange{sum, shift}, reduced, dtype,
        [](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          return arith::AddFOp::create(
              b, loc, math::LogOp::create(b, loc, elements[0]), elements[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.native_group_norm: the input viewed as [N, G, C/G * spatial]
/// (index arithmetic; [N, G, C/G, ...spatial] when the spatial sizes are
/// dynamic), LayerNorm's moments over all but the first two, then
/// each element normalized by its group's statistics and scaled by its
/// channel's weight and bias.
struct GroupNormLowering : OpRewritePatternWithOptions<fx::NativeGroupNormOp> {
  using OpRewritePatternWithOptions::OpRewritePatternWithOptions;

  LogicalResult matchAndRewrite(fx::NativeGroupNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t groups = static_cast<int64_t>(op.getGroup());
    if (rank < 2 || groups <= 0)
      return rewriter.notifyMatchFailure(op, "no channels");
    if (inputType.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "dynamic channels");
    int64_t channels = inputType.getDimSize(1);
    int64_t groupChannels = channels / groups;
    ArrayRef<int64_t> extent = inputType.getShape().drop_front(2);
    // A static extent flattens with each group's channels into one reduced
    // dimension, [N, G, C/G * positions]; a dynamic one (images of any
    // size) stays as it is, [N, G, C/G, ...extent], reduced over all but
    // the first two. Either is a view the moments' reductions inline.
    bool flatten = llvm::none_of(extent, ShapedType::isDynamic);
    SmallVector<Value> batchSizes, groupedSizes;
    if (inputType.isDynamicDim(0))
      batchSizes.push_back(getDimSize(rewriter, loc, input, 0));
    SmallVector<int64_t> groupedShape = {inputType.getDimSize(0), groups,
                                         groupChannels};
    groupedSizes = batchSizes;
    if (flatten) {
      for (int64_t size : extent)
        groupedShape.back() *= size;
    } else {
      llvm::append_range(groupedShape, extent);
      for (int64_t dim = 2; dim < rank; ++dim)
        if (inputType.isDynamicDim(dim))
          groupedSizes.push_back(getDimSize(rewriter, loc, input, dim));
    }
    auto groupedType =
        RankedTensorType::get(groupedShape, inputType.getElementType());
    Value grouped = buildIndexMapNode(
        rewriter, loc, input, groupedType, groupedSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> digits(ivs.drop_front(2));
          if (flatten) {
            SmallVector<int64_t> shape = {groupChannels};
            llvm::append_range(shape, extent);
            digits = delinearizeIndex(b, loc, ivs[2], shape);
          }
          Value channel = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(
                  b, loc, ivs[1],
                  arith::ConstantIndexOp::create(b, loc, groupChannels)),
              digits[0]);
          SmallVector<Value> indices = {ivs[0], channel};
          llvm::append_range(indices, ArrayRef(digits).drop_front());
          return indices;
        });
    SmallVector<int64_t> reduced =
        llvm::to_vector(llvm::seq<int64_t>(2, groupedType.getRank()));

    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    RankedTensorType statsType = getStatisticsType(groupedType, reduced, dtype);
    Moments moments =
        buildMoments(rewriter, loc, grouped, reduced, dtype, options);
    Value eps = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(dtype, op.getEps().convertToDouble()));
    Value rstd = buildBroadcastPointwise(
        rewriter, loc, statsType, ValueRange{moments.squaredDeviations},
        TypeRange{dtype}, dtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value variance =
              arith::DivFOp::create(b, loc, elements[0], moments.count);
          return math::RsqrtOp::create(
              b, loc, arith::AddFOp::create(b, loc, variance, eps));
        });

    auto outputType = cast<RankedTensorType>(op.getOutput().getType());
    auto output = loop::PointwiseOp::create(
        rewriter, loc, outputType,
        collectDynamicSizes(outputType, [&](int64_t dim) {
          return getDimSize(rewriter, loc, input, dim);
        }));
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body =
          rewriter.createBlock(&output.getBody(), {},
                               SmallVector<Type>(rank, rewriter.getIndexType()),
                               SmallVector<Location>(rank, loc));
      ValueRange ivs = body->getArguments();
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value group = arith::DivUIOp::create(
          rewriter, loc, ivs[1],
          arith::ConstantIndexOp::create(rewriter, loc, groupChannels));
      auto loadAs = [&](Value tensor, ValueRange indices) {
        Value element = loop::LoadOp::create(rewriter, loc, tensor, indices);
        return convertScalar(
            rewriter, loc, element,
            cast<RankedTensorType>(tensor.getType()).getElementType(), dtype);
      };
      Value x = loadAs(input, ivs);
      // The statistics' indices: [n, g, 0, ...].
      SmallVector<Value> atGroup = {ivs[0], group};
      atGroup.append(reduced.size(), zero);
      Value mean = loadAs(moments.mean, atGroup);
      Value scale = loadAs(rstd, atGroup);
      Value value = arith::MulFOp::create(
          rewriter, loc, arith::SubFOp::create(rewriter, loc, x, mean), scale);
      if (Value weight = op.getWeight())
        value =
            arith::MulFOp::create(rewriter, loc, value, loadAs(weight, ivs[1]));
      if (Value bias = op.getBias())
        value =
            arith::AddFOp::create(rewriter, loc, value, loadAs(bias, ivs[1]));
      loop::YieldOp::create(rewriter, loc,
                            convertScalar(rewriter, loc, value, dtype,
                                          outputType.getElementType()));
    }
    // The statistics as [N, G], in the dtype the op returns them in.
    auto asResult = [&](Value stats, Value result) -> Value {
      auto type = cast<RankedTensorType>(result.getType());
      return buildIndexMapNode(
          rewriter, loc, stats, type.clone(dtype), batchSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) {
            SmallVector<Value> indices = {ivs[0], ivs[1]};
            indices.append(reduced.size(),
                           arith::ConstantIndexOp::create(b, loc, 0));
            return indices;
          });
    };
    auto convertStats = [&](Value stats, Value result) -> Value {
      Value view = asResult(stats, result);
      auto type = cast<RankedTensorType>(result.getType());
      if (type == view.getType())
        return view;
      return buildBroadcastPointwise(
          rewriter, loc, type, ValueRange{view}, TypeRange{dtype}, dtype,
          [](OpBuilder &, Location, ValueRange elements) {
            return elements[0];
          });
    };
    rewriter.replaceOp(op, {output.getResult(),
                            convertStats(moments.mean, op.getMean()),
                            convertStats(rstd, op.getRstd())});
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Normalizations: batch, layer and group
//===----------------------------------------------------------------------===//

namespace {

/// Lowers the batch normalizations of an [N, C, *] input (evaluation mode,
/// training mode with the running statistics' updates returned, and
/// training mode without running statistics): per channel, the batch's
/// moments over N and the extent (two passes) or the running statistics,
/// then the normalized, scaled and shifted elements. The saved statistics
/// are [C] in training mode and empty otherwise, as PyTorch returns them;
/// the updated running variance takes the unbiased batch variance.
template <typename OpTy>
struct BatchNormLowering : OpRewritePatternWithOptions<OpTy> {
  using OpRewritePatternWithOptions<OpTy>::OpRewritePatternWithOptions;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool hasRunningStats =
        !std::is_same_v<OpTy, fx::NativeBatchNormLegitNoStatsOp>;
    constexpr bool returnsRunningStats =
        std::is_same_v<OpTy, fx::NativeBatchNormLegitFunctionalOp>;
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    if (rank < 2 || inputType.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "no static channels");
    bool training = false;
    if constexpr (!std::is_same_v<OpTy, fx::NativeBatchNormLegitNoTrainingOp>)
      training = op.getTraining();
    if (!training && !hasRunningStats)
      return rewriter.notifyMatchFailure(op, "evaluation without statistics");
    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    SmallVector<int64_t> reduced = {0};
    for (int64_t dim = 2; dim < rank; ++dim)
      reduced.push_back(dim);
    RankedTensorType statsType = getStatisticsType(inputType, reduced, dtype);
    Value eps = makeFloat(rewriter, loc, dtype, op.getEps().convertToDouble());
    auto loadAs = [&](OpBuilder &b, Value tensor, ValueRange indices) {
      Value element = loop::LoadOp::create(b, loc, tensor, indices);
      return convertScalar(
          b, loc, element,
          cast<RankedTensorType>(tensor.getType()).getElementType(), dtype);
    };
    // Per channel, as [1, C, 1, ...]: the mean and 1 / sqrt(var + eps).
    Value mean, invstd, variance;
    Moments moments;
    if (training) {
      moments =
          buildMoments(rewriter, loc, input, reduced, dtype, this->options);
      mean = moments.mean;
      variance = buildBroadcastPointwise(
          rewriter, loc, statsType, ValueRange{moments.squaredDeviations},
          TypeRange{dtype}, dtype,
          [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
            return arith::DivFOp::create(b, loc, elements[0], moments.count);
          });
    }
    if (!training) {
      if constexpr (hasRunningStats) {
        auto perChannel = [&](Value stats) {
          return buildGeneratorNode(
              rewriter, loc, statsType, {},
              [&](OpBuilder &b, Location, ValueRange ivs) {
                return loadAs(b, stats, ivs[1]);
              });
        };
        mean = perChannel(op.getRunningMean());
        variance = perChannel(op.getRunningVar());
      }
    }
    invstd = buildBroadcastPointwise(
        rewriter, loc, statsType, ValueRange{variance}, TypeRange{dtype}, dtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          return math::RsqrtOp::create(
              b, loc, arith::AddFOp::create(b, loc, elements[0], eps));
        });

    auto outputType = cast<RankedTensorType>(op.getOutput().getType());
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(outputType, [&](int64_t dim) {
          return getDimSize(rewriter, loc, input, dim);
        });
    Value output = buildGeneratorNode(
        rewriter, loc, outputType, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value zero = arith::ConstantIndexOp::create(b, loc, 0);
          SmallVector<Value> statsIndices(rank, zero);
          statsIndices[1] = ivs[1];
          Value value = arith::MulFOp::create(
              b, loc,
              arith::SubFOp::create(b, loc, loadAs(b, input, ivs),
                                    loadAs(b, mean, statsIndices)),
              loadAs(b, invstd, statsIndices));
          if (Value weight = op.getWeight())
            value =
                arith::MulFOp::create(b, loc, value, loadAs(b, weight, ivs[1]));
          if (Value bias = op.getBias())
            value =
                arith::AddFOp::create(b, loc, value, loadAs(b, bias, ivs[1]));
          return convertScalar(b, loc, value, dtype,
                               outputType.getElementType());
        });
    // A [C] result from per-channel values `fn` gives.
    auto perChannelResult =
        [&](Value result,
            function_ref<Value(OpBuilder &, ValueRange)> fn) -> Value {
      auto type = cast<RankedTensorType>(result.getType());
      return buildGeneratorNode(
          rewriter, loc, type, {},
          [&](OpBuilder &b, Location loc, ValueRange ivs) {
            if (type.getNumElements() == 0)
              return makeFloat(b, loc, type.getElementType(), 0.0);
            Value zero = arith::ConstantIndexOp::create(b, loc, 0);
            SmallVector<Value> statsIndices(rank, zero);
            statsIndices[1] = ivs[0];
            return convertScalar(b, loc, fn(b, statsIndices), dtype,
                                 type.getElementType());
          });
    };
    auto savedOrEmpty = [&](Value result, Value stats) {
      return perChannelResult(result, [&](OpBuilder &b, ValueRange indices) {
        return loadAs(b, stats, indices);
      });
    };
    SmallVector<Value> results = {output, savedOrEmpty(op.getSaveMean(), mean),
                                  savedOrEmpty(op.getSaveInvstd(), invstd)};
    if constexpr (returnsRunningStats) {
      double momentum = op.getMomentum().convertToDouble();
      // The updates, or the running statistics unchanged in evaluation.
      auto update = [&](Value result, Value running, Value batch,
                        bool unbiased) {
        return perChannelResult(
            result, [&](OpBuilder &b, ValueRange indices) -> Value {
              Value old = loadAs(b, running, indices[1]);
              if (!training)
                return old;
              Value value = loadAs(b, batch, indices);
              if (unbiased)
                value = arith::DivFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, value, moments.count),
                    arith::SubFOp::create(b, loc, moments.count,
                                          makeFloat(b, loc, dtype, 1.0)));
              return arith::AddFOp::create(
                  b, loc,
                  arith::MulFOp::create(
                      b, loc, old, makeFloat(b, loc, dtype, 1.0 - momentum)),
                  arith::MulFOp::create(b, loc, value,
                                        makeFloat(b, loc, dtype, momentum)));
            });
      };
      results.push_back(update(op.getRunningMeanOut(), op.getRunningMean(),
                               mean, /*unbiased=*/false));
      results.push_back(update(op.getRunningVarOut(), op.getRunningVar(),
                               variance, /*unbiased=*/true));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Lowers fx.native_batch_norm_backward as PyTorch's kernels compute it,
/// per channel c over N and the extent (n elements): with xmu = x - mean,
/// sum_dy = Σ dy and dot = Σ dy·xmu, the input's gradient in training mode is
/// (dy - sum_dy/n - xmu·dot·invstd²/n)·invstd·w, in evaluation mode
/// dy·invstd·w (the running statistics); the weight's is dot·invstd, the
/// bias's sum_dy.
struct BatchNormBackwardLowering
    : OpRewritePattern<fx::NativeBatchNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::NativeBatchNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grad = op.getGradOut(), input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    if (rank < 2 || inputType.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "no static channels");
    bool train = op.getTrain();
    Value savedMean = train ? op.getSaveMean() : op.getRunningMean();
    Value savedScale = train ? op.getSaveInvstd() : op.getRunningVar();
    if (!savedMean || !savedScale)
      return rewriter.notifyMatchFailure(op, "statistics missing");
    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    GradientBuilder g{rewriter, loc, dtype};
    SmallVector<int64_t> reduced = {0};
    for (int64_t dim = 2; dim < rank; ++dim)
      reduced.push_back(dim);
    RankedTensorType statsType = getStatisticsType(inputType, reduced, dtype);
    // [C] operands as [1, C, 1, ...] statistics, so that they broadcast.
    auto perChannel = [&](Value channels, double missing,
                          function_ref<Value(OpBuilder &, Value)> map) {
      return buildGeneratorNode(
          rewriter, loc, statsType, {},
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            if (!channels)
              return makeFloat(b, loc, dtype, missing);
            Value element = convertScalar(
                b, loc, loop::LoadOp::create(b, loc, channels, ivs[1]),
                cast<RankedTensorType>(channels.getType()).getElementType(),
                dtype);
            return map ? map(b, element) : element;
          });
    };
    Value eps = makeFloat(rewriter, loc, dtype, op.getEps().convertToDouble());
    Value mean = perChannel(savedMean, 0.0, nullptr);
    Value invstd = perChannel(
        savedScale, 0.0,
        train ? function_ref<Value(OpBuilder &, Value)>(nullptr)
              : [&](OpBuilder &b, Value variance) -> Value {
          return math::RsqrtOp::create(
              b, loc, arith::AddFOp::create(b, loc, variance, eps));
        });
    Value weight = perChannel(op.getWeight(), 1.0, nullptr);
    auto computeType = RankedTensorType::get(inputType.getShape(), dtype);
    Value centred =
        g.pointwise(computeType, {input, mean},
                    [](OpBuilder &b, Location loc, ValueRange e) -> Value {
                      return arith::SubFOp::create(b, loc, e[0], e[1]);
                    });
    Value sumGrad = g.sum(grad, reduced, statsType);
    Value dot = g.sum(
        g.pointwise(computeType, {grad, centred},
                    [](OpBuilder &b, Location loc, ValueRange e) -> Value {
                      return arith::MulFOp::create(b, loc, e[0], e[1]);
                    }),
        reduced, statsType);
    Value count = getElementCount(rewriter, loc, input, reduced, dtype);
    ArrayRef<bool> mask = op.getOutputMask();
    Value gradInput;
    if (!mask[0]) {
      gradInput = g.maskedOff(op.getGradInput(), input);
    } else if (train) {
      gradInput = g.pointwise(
          cast<RankedTensorType>(op.getGradInput().getType()),
          {grad, centred, sumGrad, dot, invstd, weight},
          [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
            Value scale = e[4];
            Value projection = arith::DivFOp::create(
                b, loc,
                arith::MulFOp::create(
                    b, loc, e[3], arith::MulFOp::create(b, loc, scale, scale)),
                count);
            Value gradMean = arith::DivFOp::create(b, loc, e[2], count);
            Value value = arith::SubFOp::create(
                b, loc, arith::SubFOp::create(b, loc, e[0], gradMean),
                arith::MulFOp::create(b, loc, e[1], projection));
            return arith::MulFOp::create(
                b, loc, arith::MulFOp::create(b, loc, value, scale), e[5]);
          });
    } else {
      gradInput = g.pointwise(
          cast<RankedTensorType>(op.getGradInput().getType()),
          {grad, invstd, weight},
          [](OpBuilder &b, Location loc, ValueRange e) -> Value {
            return arith::MulFOp::create(
                b, loc, arith::MulFOp::create(b, loc, e[0], e[1]), e[2]);
          });
    }
    // [1, C, 1, ...] statistics as a [C] result.
    auto asChannels = [&](Value result, ValueRange stats,
                          ScalarBodyFn combine) -> Value {
      auto type = cast<RankedTensorType>(result.getType());
      return buildGeneratorNode(
          rewriter, loc, type, {},
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value zero = arith::ConstantIndexOp::create(b, loc, 0);
            SmallVector<Value> indices(rank, zero);
            indices[1] = ivs[0];
            SmallVector<Value> elements =
                llvm::map_to_vector(stats, [&](Value stat) -> Value {
                  return loop::LoadOp::create(b, loc, stat, indices);
                });
            return convertScalar(b, loc, combine(b, loc, elements), dtype,
                                 type.getElementType());
          });
    };
    Value gradWeight =
        mask[1]
            ? asChannels(op.getGradWeight(), {dot, invstd},
                         [](OpBuilder &b, Location loc, ValueRange e) -> Value {
                           return arith::MulFOp::create(b, loc, e[0], e[1]);
                         })
            : g.maskedOff(op.getGradWeight(), op.getGradWeight());
    Value gradBias = mask[2] ? asChannels(op.getGradBias(), {sumGrad},
                                          [](OpBuilder &, Location,
                                             ValueRange e) { return e[0]; })
                             : g.maskedOff(op.getGradBias(), op.getGradBias());
    rewriter.replaceOp(op, {gradInput, gradWeight, gradBias});
    return success();
  }
};

/// Lowers fx.native_layer_norm_backward as PyTorch's kernels compute it: per
/// row of n normalized elements, with xhat = (x - mean)·rstd and g = dy·w,
/// the input's gradient is rstd/n·(n·g - Σg - xhat·Σ g·xhat); the weight's
/// and bias's gradients sum dy·xhat and dy over the rows.
struct LayerNormBackwardLowering
    : OpRewritePattern<fx::NativeLayerNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::NativeLayerNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grad = op.getGradOut(), input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t normalized = op.getNormalizedShape().size();
    if (normalized == 0 || normalized > rank)
      return rewriter.notifyMatchFailure(op, "nothing to normalize over");
    int64_t axis = rank - normalized;
    SmallVector<int64_t> inner =
        llvm::to_vector(llvm::seq<int64_t>(axis, rank));
    SmallVector<int64_t> outer = llvm::to_vector(llvm::seq<int64_t>(0, axis));
    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    GradientBuilder g{rewriter, loc, dtype};
    RankedTensorType statsType = getStatisticsType(inputType, inner, dtype);
    auto computeType = RankedTensorType::get(inputType.getShape(), dtype);
    Value normalizedInput = g.pointwise(
        computeType, {input, op.getMean(), op.getRstd()},
        [](OpBuilder &b, Location loc, ValueRange e) -> Value {
          return arith::MulFOp::create(
              b, loc, arith::SubFOp::create(b, loc, e[0], e[1]), e[2]);
        });
    auto multiply = [](OpBuilder &b, Location loc, ValueRange e) -> Value {
      return arith::MulFOp::create(b, loc, e[0], e[1]);
    };
    Value scaledGrad = grad;
    if (Value weight = op.getWeight())
      scaledGrad = g.pointwise(computeType, {grad, weight}, multiply);
    ArrayRef<bool> mask = op.getOutputMask();
    Value gradInput;
    if (mask[0]) {
      Value sumGrad = g.sum(scaledGrad, inner, statsType);
      Value dot = g.sum(
          g.pointwise(computeType, {scaledGrad, normalizedInput}, multiply),
          inner, statsType);
      Value count = getElementCount(rewriter, loc, input, inner, dtype);
      gradInput = g.pointwise(
          cast<RankedTensorType>(op.getGradInput().getType()),
          {scaledGrad, normalizedInput, sumGrad, dot, op.getRstd()},
          [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
            Value value = arith::SubFOp::create(
                b, loc,
                arith::SubFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, count, e[0]), e[2]),
                arith::MulFOp::create(b, loc, e[1], e[3]));
            return arith::MulFOp::create(
                b, loc, arith::DivFOp::create(b, loc, e[4], count), value);
          });
    } else {
      gradInput = g.maskedOff(op.getGradInput(), input);
    }
    // Sums over the rows into the normalized shape.
    auto overRows = [&](Value result, Value values) {
      return g.sumInto(result, values, outer);
    };
    Value gradWeight =
        mask[1] ? overRows(op.getGradWeight(),
                           g.pointwise(computeType, {grad, normalizedInput},
                                       multiply))
                : g.maskedOff(op.getGradWeight(), op.getGradWeight());
    Value gradBias = mask[2] ? overRows(op.getGradBias(), grad)
                             : g.maskedOff(op.getGradBias(), op.getGradBias());
    rewriter.replaceOp(op, {gradInput, gradWeight, gradBias});
    return success();
  }
};

/// Lowers fx.native_group_norm_backward as PyTorch's kernels compute it.
/// Per sample n and channel c, ds = Σ dy·x and db = Σ dy over the extent;
/// per group, with D channels, m = D·extent elements, ds_g = Σ ds·w and
/// db_g = Σ db·w over its channels, c2 = (db_g·mean - ds_g)·rstd³/m and
/// c3 = -c2·mean - db_g·rstd/m; the input's gradient is rstd·w·dy + c2·x +
/// c3, the weight's Σ_n (ds - db·mean)·rstd, the bias's Σ_n db. The batch
/// and the extent may be dynamic; the channels are static.
struct GroupNormBackwardLowering
    : OpRewritePattern<fx::NativeGroupNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::NativeGroupNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grad = op.getGradOut(), input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t groups = static_cast<int64_t>(op.getGroup());
    if (rank < 2 || groups <= 0 || inputType.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "no static channels");
    int64_t batch = inputType.getDimSize(0);
    int64_t channels = inputType.getDimSize(1);
    int64_t groupChannels = channels / groups;
    // The [N, ...] nodes' dynamic size, if the batch is dynamic.
    SmallVector<Value> batchSizes;
    if (ShapedType::isDynamic(batch))
      batchSizes.push_back(getDimSize(rewriter, loc, input, 0));
    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    GradientBuilder g{rewriter, loc, dtype};
    auto perSampleChannel = RankedTensorType::get({batch, channels}, dtype);
    auto perGroup = RankedTensorType::get({batch, groups}, dtype);
    SmallVector<int64_t> extent = llvm::to_vector(llvm::seq<int64_t>(2, rank));
    auto computeType = RankedTensorType::get(inputType.getShape(), dtype);
    auto multiply = [](OpBuilder &b, Location loc, ValueRange e) -> Value {
      return arith::MulFOp::create(b, loc, e[0], e[1]);
    };
    // Σ over the extent, [N, C].
    auto overExtent = [&](Value values) -> Value {
      if (extent.empty())
        return g.convertTo(perSampleChannel, values);
      return g.sum(values, extent, perSampleChannel);
    };
    Value sumGradInput =
        overExtent(g.pointwise(computeType, {grad, input}, multiply));
    Value sumGrad = overExtent(grad);
    auto loadAs = [&](OpBuilder &b, Location loc, Value tensor,
                      ValueRange indices) {
      return convertScalar(
          b, loc, loop::LoadOp::create(b, loc, tensor, indices),
          cast<RankedTensorType>(tensor.getType()).getElementType(), dtype);
    };
    Value weight = op.getWeight();
    auto groupOf = [&](OpBuilder &b, Location loc, Value channel) -> Value {
      return arith::DivUIOp::create(
          b, loc, channel,
          arith::ConstantIndexOp::create(b, loc, groupChannels));
    };
    // A [N, G] statistic of the op, read at sample n, channel c's group.
    auto atGroup = [&](OpBuilder &b, Location loc, Value stats, Value n,
                       Value c) {
      return loadAs(b, loc, stats, {n, groupOf(b, loc, c)});
    };
    // Σ over each group's channels of a [N, C] tensor times the weight.
    auto groupSum = [&](Value perChannel) -> Value {
      auto grouped =
          RankedTensorType::get({batch, groups, groupChannels}, dtype);
      Value view = buildGeneratorNode(
          rewriter, loc, grouped, batchSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value channel = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(
                    b, loc, ivs[1],
                    arith::ConstantIndexOp::create(b, loc, groupChannels)),
                ivs[2]);
            Value value = loop::LoadOp::create(b, loc, perChannel,
                                               ValueRange{ivs[0], channel});
            if (weight)
              value = arith::MulFOp::create(b, loc, value,
                                            loadAs(b, loc, weight, channel));
            return value;
          });
      return g.sum(view, {2}, perGroup);
    };
    Value count = arith::MulFOp::create(
        rewriter, loc, getElementCount(rewriter, loc, input, extent, dtype),
        makeFloat(rewriter, loc, dtype, static_cast<double>(groupChannels)));
    Value mean = op.getMean(), rstd = op.getRstd();
    ArrayRef<bool> mask = op.getOutputMask();
    Value gradInput;
    if (mask[0]) {
      Value dsGroup = groupSum(sumGradInput), dbGroup = groupSum(sumGrad);
      // c2 and c3 per [N, G].
      Value c2 = g.pointwise(
          perGroup, {dbGroup, dsGroup, mean, rstd},
          [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
            Value r = e[3];
            Value cube = arith::MulFOp::create(
                b, loc, arith::MulFOp::create(b, loc, r, r), r);
            return arith::DivFOp::create(
                b, loc,
                arith::MulFOp::create(
                    b, loc,
                    arith::SubFOp::create(
                        b, loc, arith::MulFOp::create(b, loc, e[0], e[2]),
                        e[1]),
                    cube),
                count);
          });
      Value c3 = g.pointwise(
          perGroup, {c2, mean, dbGroup, rstd},
          [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
            Value fromMean = arith::MulFOp::create(b, loc, e[0], e[1]);
            Value fromBias = arith::DivFOp::create(
                b, loc, arith::MulFOp::create(b, loc, e[2], e[3]), count);
            return arith::NegFOp::create(
                b, loc, arith::AddFOp::create(b, loc, fromMean, fromBias));
          });
      auto type = cast<RankedTensorType>(op.getGradInput().getType());
      gradInput = buildGeneratorNode(
          rewriter, loc, type,
          collectDynamicSizes(type,
                              [&](int64_t dim) {
                                return getDimSize(rewriter, loc, input, dim);
                              }),
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value n = ivs[0], c = ivs[1];
            Value scale = atGroup(b, loc, rstd, n, c);
            if (weight)
              scale = arith::MulFOp::create(b, loc, scale,
                                            loadAs(b, loc, weight, c));
            Value value = arith::AddFOp::create(
                b, loc,
                arith::AddFOp::create(
                    b, loc,
                    arith::MulFOp::create(b, loc, scale,
                                          loadAs(b, loc, grad, ivs)),
                    arith::MulFOp::create(b, loc, atGroup(b, loc, c2, n, c),
                                          loadAs(b, loc, input, ivs))),
                atGroup(b, loc, c3, n, c));
            return convertScalar(b, loc, value, dtype, type.getElementType());
          });
    } else {
      gradInput = g.maskedOff(op.getGradInput(), input);
    }
    // Σ over the samples of a [N, C] tensor, into a [C] result.
    auto overSamples = [&](Value result, Value perChannel) {
      return g.sumInto(result, perChannel, {0});
    };
    Value gradWeight;
    if (mask[1]) {
      Value terms = buildGeneratorNode(
          rewriter, loc, perSampleChannel, batchSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value n = ivs[0], c = ivs[1];
            Value centred = arith::SubFOp::create(
                b, loc, loop::LoadOp::create(b, loc, sumGradInput, ivs),
                arith::MulFOp::create(
                    b, loc, loop::LoadOp::create(b, loc, sumGrad, ivs),
                    atGroup(b, loc, mean, n, c)));
            return arith::MulFOp::create(b, loc, centred,
                                         atGroup(b, loc, rstd, n, c));
          });
      gradWeight = overSamples(op.getGradWeight(), terms);
    } else {
      gradWeight = g.maskedOff(op.getGradWeight(), op.getGradWeight());
    }
    Value gradBias = mask[2] ? overSamples(op.getGradBias(), sumGrad)
                             : g.maskedOff(op.getGradBias(), op.getGradBias());
    rewriter.replaceOp(op, {gradInput, gradWeight, gradBias});
    return success();
  }
};

struct LayerNormLowering : OpRewritePatternWithOptions<fx::NativeLayerNormOp> {
  using OpRewritePatternWithOptions::OpRewritePatternWithOptions;

  LogicalResult matchAndRewrite(fx::NativeLayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t normalized = op.getNormalizedShape().size();
    if (normalized == 0)
      return rewriter.notifyMatchFailure(op, "nothing to normalize over");
    SmallVector<int64_t> dims =
        llvm::to_vector(llvm::seq<int64_t>(rank - normalized, rank));
    Type dtype = getNormalizationDtype(rewriter, inputType.getElementType());
    RankedTensorType statsType = getStatisticsType(inputType, dims, dtype);
    Moments moments = buildMoments(rewriter, loc, input, dims, dtype, options);
    Value eps = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(dtype, op.getEps().convertToDouble()));
    Value rstd = buildBroadcastPointwise(
        rewriter, loc, statsType, ValueRange{moments.squaredDeviations},
        TypeRange{dtype}, dtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value variance =
              arith::DivFOp::create(b, loc, elements[0], moments.count);
          return math::RsqrtOp::create(
              b, loc, arith::AddFOp::create(b, loc, variance, eps));
        });

    SmallVector<Value> operands = {input, moments.mean, rstd};
    if (op.getWeight())
      operands.push_back(op.getWeight());
    if (op.getBias())
      operands.push_back(op.getBias());
    bool hasWeight = static_cast<bool>(op.getWeight());
    bool hasBias = static_cast<bool>(op.getBias());
    Value output = buildBroadcastPointwise(
        rewriter, loc, cast<RankedTensorType>(op.getOutput().getType()),
        operands, SmallVector<Type>(operands.size(), dtype), dtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value value = arith::MulFOp::create(
              b, loc, arith::SubFOp::create(b, loc, elements[0], elements[1]),
              elements[2]);
          if (hasWeight)
            value = arith::MulFOp::create(b, loc, value, elements[3]);
          if (hasBias)
            value = arith::AddFOp::create(b, loc, value,
                                          elements[hasWeight ? 4 : 3]);
          return value;
        });
    // The statistics in the dtype the op returns them in.
    auto asResult = [&](Value stats, Value result) -> Value {
      auto type = cast<RankedTensorType>(result.getType());
      if (type == stats.getType())
        return stats;
      return buildBroadcastPointwise(
          rewriter, loc, type, ValueRange{stats}, TypeRange{dtype}, dtype,
          [](OpBuilder &, Location, ValueRange elements) {
            return elements[0];
          });
    };
    rewriter.replaceOp(op, {output, asResult(moments.mean, op.getMean()),
                            asResult(rstd, op.getRstd())});
    return success();
  }
};
} // namespace

void fxtoloop::populateNormalizationLoweringPatterns(
    RewritePatternSet &patterns, const FXToLoopOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<VarianceLowering<fx::VarOp>, VarianceLowering<fx::VarMeanOp>,
               BatchNormLowering<fx::NativeBatchNormLegitNoTrainingOp>,
               BatchNormLowering<fx::NativeBatchNormLegitFunctionalOp>,
               BatchNormLowering<fx::NativeBatchNormLegitNoStatsOp>,
               LayerNormLowering, GroupNormLowering>(ctx, options);
  patterns
      .add<SoftmaxLowering<fx::SoftmaxOp>, SoftmaxLowering<fx::LogSoftmaxOp>,
           SoftmaxBackwardLowering<fx::SoftmaxBackwardDataOp>,
           BatchNormBackwardLowering, LayerNormBackwardLowering,
           GroupNormBackwardLowering,
           SoftmaxBackwardLowering<fx::LogSoftmaxBackwardDataOp>,
           LogSumExpLowering>(ctx);
}
