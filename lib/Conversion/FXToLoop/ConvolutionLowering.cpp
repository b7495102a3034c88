//===- ConvolutionLowering.cpp - Convolutions -----------------------------===//
//
// Part of Kiln. Convolutions, transposed or not, and their gradients: the
// forward convolution becomes a loop.convolution, which
// kiln-loop-expand-convolutions turns into window sums or into patches
// (im2col) and a product; the gradients are direct sums when their elements
// sum few terms, else products of patches.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/ConvolutionGeometry.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;
using namespace mlir::kiln::loop;

namespace {

/// A convolution's result of `type`: its `sums` (in `computeDtype`) plus
/// the optional `bias`, rounded to the result's dtype, as the node that batch
/// norm and relu inline into.
static Value buildConvolutionResult(OpBuilder &b, Location loc, Value sums,
                                    Value bias, RankedTensorType type,
                                    ValueRange sizes, Type computeDtype) {
  return buildGeneratorNode(
      b, loc, type, sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value value = loop::LoadOp::create(b, loc, sums, ivs);
        if (bias) {
          Value element = convertScalar(
              b, loc, loop::LoadOp::create(b, loc, bias, ivs[1]),
              cast<RankedTensorType>(bias.getType()).getElementType(),
              computeDtype);
          value =
              emitBinary(b, loc, BinaryKind::Add, value, element, computeDtype);
        }
        return convertScalar(b, loc, value, computeDtype,
                             type.getElementType());
      });
}

/// Lowers a (not transposed, batched) fx.convolution to a loop.convolution
/// of its input and weight, whose sums a pointwise node reads, adding the
/// bias and rounding to the result's dtype (the node that batch norm and
/// relu inline into).
struct ConvolutionLowering : OpRewritePattern<fx::ConvolutionOp> {
  ConvolutionLowering(MLIRContext *ctx, const FXToLoopOptions &options)
      : OpRewritePattern<fx::ConvolutionOp>(ctx), options(options) {}

  LogicalResult matchAndRewrite(fx::ConvolutionOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType resultType = op.getType();
    Type dtype = resultType.getElementType();
    if (op.getTransposed())
      return rewriter.notifyMatchFailure(op, "transposed convolution");
    FailureOr<ConvolutionGeometry> geometry = ConvolutionGeometry::get(
        inputType, op.getWeight().getType(), resultType, op.getStride(),
        op.getPadding(), op.getDilation(),
        static_cast<int64_t>(op.getGroups()));
    if (failed(geometry) ||
        op.getWeight().getType().getElementType() != inputType.getElementType())
      return rewriter.notifyMatchFailure(
          op, "integer, mixed, unbatched or dynamic convolution");
    ConvolutionGeometry &g = *geometry;
    Location loc = op.getLoc();

    // The sums, kept in f32 for 16-bit results: the bias joins before the
    // rounding.
    Type computeDtype = getComputeDtype(dtype, options.computeInF32);
    g.bindSizes(rewriter, loc, op.getInput(), /*outputSide=*/false);
    g.computeOutExtent(rewriter, loc);
    SmallVector<Value> resultSizes = g.getDynamicSizes(
        resultType,
        resultType.isDynamicDim(0) ? getDimSize(rewriter, loc, op.getInput(), 0)
                                   : Value(),
        /*outputSide=*/true);
    Value sums = loop::ConvolutionOp::create(
        rewriter, loc, resultType.clone(computeDtype), op.getInput(),
        op.getWeight(), resultSizes, rewriter.getDenseI64ArrayAttr(g.stride),
        rewriter.getDenseI64ArrayAttr(g.padding),
        rewriter.getDenseI64ArrayAttr(g.dilation),
        rewriter.getI64IntegerAttr(g.groups));
    rewriter.replaceOp(op, buildConvolutionResult(rewriter, loc, sums,
                                                  op.getBias(), resultType,
                                                  resultSizes, computeDtype));
    return success();
  }

  FXToLoopOptions options;
};

/// Lowers a transposed (batched) fx.convolution. It is the input gradient of
/// the convolution that maps its result's shape to its input's with the
/// same weight, stride, padding and dilation, so it reuses that
/// convolution's geometry with the roles swapped; per group:
///
///   columns[g, c, (n, x...)]  = input[n, g*Cg + c, x...]
///   patches[g, (f, k...), :]  = weights[g, c, (f, k...)]ᵀ x columns
///   sums[n, g*Fg + f, o...]   = Σ_k patches[g, (f, k...), (n, x...)]
///                               where x = (o + p - k*d) / s divides
///
/// and the bias joins before the rounding, as for other convolutions.
/// (output_padding only lengthens the result: its last positions take what
/// windows reach them.)
struct TransposedConvolutionLowering : OpRewritePattern<fx::ConvolutionOp> {
  TransposedConvolutionLowering(MLIRContext *ctx,
                                const FXToLoopOptions &options)
      : OpRewritePattern<fx::ConvolutionOp>(ctx), options(options) {}

  LogicalResult matchAndRewrite(fx::ConvolutionOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getTransposed())
      return rewriter.notifyMatchFailure(op, "not transposed");
    Value input = op.getInput();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType resultType = op.getType();
    FailureOr<ConvolutionGeometry> geometry = ConvolutionGeometry::get(
        resultType, op.getWeight().getType(), inputType, op.getStride(),
        op.getPadding(), op.getDilation(),
        static_cast<int64_t>(op.getGroups()));
    if (failed(geometry) ||
        op.getWeight().getType().getElementType() != inputType.getElementType())
      return rewriter.notifyMatchFailure(
          op, "integer, mixed, unbatched or dynamic transposed convolution");
    ConvolutionGeometry &g = *geometry;
    Location loc = op.getLoc();
    Type computeDtype =
        getComputeDtype(resultType.getElementType(), options.computeInF32);

    // The input is the swapped convolution's output side; the result's
    // spatial sizes follow from it.
    g.bindSizes(rewriter, loc, input, /*outputSide=*/true);
    g.computeTransposedExtent(rewriter, loc, op.getOutputPadding());
    Value batch = inputType.isDynamicDim(0)
                      ? getDimSize(rewriter, loc, input, 0)
                      : Value();
    SmallVector<Value> columnSizes;
    int64_t columns = g.getColumns(rewriter, loc, inputType.getDimSize(0),
                                   batch, columnSizes);
    SmallVector<Value> resultSizes =
        g.getDynamicSizes(resultType, batch, /*outputSide=*/false);
    Value grouped =
        buildGroupedColumns(rewriter, loc, input, g, columns, columnSizes);
    Value weights = buildGroupedWeights(rewriter, loc, op.getWeight(), g);
    auto patches = loop::MatmulOp::create(
        rewriter, loc,
        RankedTensorType::get({g.groups, g.depth, columns}, computeDtype),
        weights, grouped, columnSizes);
    patches.setTransposeLhs(true);
    Value sums = buildImageFromPatches(
        rewriter, loc, patches, g, resultType.clone(computeDtype), resultSizes);
    rewriter.replaceOp(op, buildConvolutionResult(rewriter, loc, sums,
                                                  op.getBias(), resultType,
                                                  resultSizes, computeDtype));
    return success();
  }

  FXToLoopOptions options;
};

/// Lowers fx.convolution_backward of a (batched) convolution through
/// the forward's im2col matrices, with the output's gradient regrouped as
/// dOut[g, f, (n, o...)]:
///
///   grad_weight[g*Fg + f, (c, k...)] = dOut x patchesᵀ
///   grad_input: dPatches = weightsᵀ x dOut, each input position summing
///               the patch entries that read it (col2im), over k...
///   grad_bias[f] = Σ dOut over the batch and positions
///
/// A transposed convolution is the input gradient of the convolution with
/// its input and output swapped, so its gradients swap them too: the
/// geometry is that convolution's, its input is regrouped where dOut was and
/// the output's gradient is the image the patches read,
///
///   grad_weight[g*Cg + c, (f, k...)] = input x patchesᵀ
///   grad_input[n, g*Cg + c, x...]    = (weights x patches)[g, c, (n, x...)]
///
/// the latter being a convolution of the output's gradient. Results that
/// `output_mask` leaves out are zeros.
///
/// Where those products would be shallow (depthwise filters, say), direct
/// sums instead, with `direct-convolution-depth`: for filters that read few
/// inputs (ConvolutionGeometry::isDirect) the weight gradient sums over the
/// batch and output positions (buildDirectWeightGradient) and a transposed
/// convolution's input gradient over each output's window
/// (buildDirectConvolution); where each input element sums few filter
/// entries (isDirectTransposed) a convolution's input gradient sums over
/// the outputs that read it (buildDirectImageGradient).
struct ConvolutionBackwardLowering
    : OpRewritePattern<fx::ConvolutionBackwardOp> {
  ConvolutionBackwardLowering(MLIRContext *ctx, const FXToLoopOptions &options)
      : OpRewritePattern<fx::ConvolutionBackwardOp>(ctx),
        directDepth(options.directConvolutionDepth) {}

  LogicalResult matchAndRewrite(fx::ConvolutionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto gradOutType = cast<RankedTensorType>(op.getGradOutput().getType());
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    bool transposed = op.getTransposed();
    // The convolution whose im2col matrices the gradients use: its image is
    // what the patches read, its columns what the products regroup.
    Value image = transposed ? op.getGradOutput() : op.getInput();
    Value columnSide = transposed ? op.getInput() : op.getGradOutput();
    FailureOr<ConvolutionGeometry> geometry = ConvolutionGeometry::get(
        cast<RankedTensorType>(image.getType()), weightType,
        cast<RankedTensorType>(columnSide.getType()), op.getStride(),
        op.getPadding(), op.getDilation(),
        static_cast<int64_t>(op.getGroups()));
    if (failed(geometry))
      return rewriter.notifyMatchFailure(op,
                                         "integer or unbatched convolution");
    ConvolutionGeometry &g = *geometry;
    Location loc = op.getLoc();
    int64_t rank = inputType.getRank();
    // Dynamic sizes are both sides' own.
    g.bindSizes(rewriter, loc, image, /*outputSide=*/false);
    g.bindSizes(rewriter, loc, columnSide, /*outputSide=*/true);
    Value batch = inputType.isDynamicDim(0)
                      ? getDimSize(rewriter, loc, op.getInput(), 0)
                      : Value();
    SmallVector<Value> columnSizes;
    int64_t columns = g.getColumns(rewriter, loc, inputType.getDimSize(0),
                                   batch, columnSizes);
    Type computeDtype = getComputeDtype(gradOutType.getElementType(),
                                        /*computeInF32=*/true);
    auto index = [](OpBuilder &b, Location loc, int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    ArrayRef<bool> mask = op.getOutputMask();
    // A masked-off result sizes itself like the operand of its type.
    GradientBuilder gradients{rewriter, loc, computeDtype};
    auto zerosFor = [&](Value result, Value sizedLike) {
      return gradients.maskedOff(result, sizedLike);
    };

    bool directForward = g.isDirect(directDepth);
    bool directImageGradient =
        transposed ? directForward : g.isDirectTransposed(directDepth);
    Value grouped;
    if ((mask[0] && !transposed && !directImageGradient) ||
        (mask[1] && !directForward))
      grouped = buildGroupedColumns(rewriter, loc, columnSide, g, columns,
                                    columnSizes);
    auto product = [&](RankedTensorType type, Value lhs, Value rhs,
                       bool transposeLhs, bool transposeRhs) -> Value {
      auto node = loop::MatmulOp::create(
          rewriter, loc, type, lhs, rhs,
          type.isDynamicDim(2) ? ValueRange(columnSizes) : ValueRange());
      if (transposeLhs)
        node.setTransposeLhs(true);
      if (transposeRhs)
        node.setTransposeRhs(true);
      return node.getResult();
    };
    Value patches;
    if ((mask[1] && !directForward) ||
        (mask[0] && transposed && !directImageGradient))
      patches = buildConvolutionPatches(rewriter, loc, image, g, columns,
                                        columnSizes);

    Value gradInput;
    auto gradInputType = cast<RankedTensorType>(op.getGradInput().getType());
    if (mask[0] && directImageGradient) {
      // (A 16-bit result's sums are f32, rounded once by the reduce.)
      SmallVector<Value> sizes =
          g.getDynamicSizes(gradInputType, batch, /*outputSide=*/transposed);
      gradInput =
          transposed
              ? buildDirectConvolution(rewriter, loc, image, op.getWeight(),
                                       gradInputType, sizes, g)
              : buildDirectImageGradient(rewriter, loc, columnSide,
                                         op.getWeight(), gradInputType, sizes,
                                         g);
    } else if (mask[0] && transposed) {
      Value weights = buildGroupedWeights(rewriter, loc, op.getWeight(), g);
      Value sums =
          product(RankedTensorType::get({g.groups, g.groupFilters, columns},
                                        computeDtype),
                  weights, patches, false, false);
      gradInput = buildGeneratorNode(
          rewriter, loc, gradInputType,
          g.getDynamicSizes(gradInputType, batch, /*outputSide=*/true),
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value element = loop::LoadOp::create(
                b, loc, sums, getProductIndices(b, loc, ivs, g));
            return convertScalar(b, loc, element, computeDtype,
                                 gradInputType.getElementType());
          });
    } else if (mask[0]) {
      Value weights = buildGroupedWeights(rewriter, loc, op.getWeight(), g);
      Value patchGrads = product(
          RankedTensorType::get({g.groups, g.depth, columns}, computeDtype),
          weights, grouped, /*transposeLhs=*/true, false);
      gradInput = buildImageFromPatches(
          rewriter, loc, patchGrads, g, gradInputType,
          g.getDynamicSizes(gradInputType, batch, /*outputSide=*/false));
    } else {
      gradInput = zerosFor(op.getGradInput(), op.getInput());
    }

    Value gradWeight;
    if (mask[1] && directForward) {
      gradWeight = buildDirectWeightGradient(rewriter, loc, columnSide, image,
                                             weightType, g);
    } else if (mask[1]) {
      Value perGroup =
          product(RankedTensorType::get({g.groups, g.groupFilters, g.depth},
                                        computeDtype),
                  grouped, patches, false, /*transposeRhs=*/true);
      gradWeight = buildGeneratorNode(
          rewriter, loc, weightType, {},
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value filters = index(b, loc, g.groupFilters);
            Value row = ivs[1];
            for (int64_t dim = 0; dim < g.spatial; ++dim)
              row = arith::AddIOp::create(
                  b, loc,
                  arith::MulIOp::create(b, loc, row,
                                        index(b, loc, g.kernel[dim])),
                  ivs[2 + dim]);
            Value element = loop::LoadOp::create(
                b, loc, perGroup,
                ValueRange{arith::DivUIOp::create(b, loc, ivs[0], filters),
                           arith::RemUIOp::create(b, loc, ivs[0], filters),
                           row});
            return convertScalar(b, loc, element, computeDtype,
                                 weightType.getElementType());
          });
    } else {
      gradWeight = zerosFor(op.getGradWeight(), op.getWeight());
    }

    Value gradBias;
    auto gradBiasType = cast<RankedTensorType>(op.getGradBias().getType());
    if (mask[2]) {
      SmallVector<int64_t> dims = {0};
      for (int64_t dim = 2; dim < rank; ++dim)
        dims.push_back(dim);
      gradBias =
          buildReduction(rewriter, loc, op.getGradOutput(), dims,
                         /*keepdim=*/false, CombiningKind::sum, gradBiasType);
    } else {
      gradBias = zerosFor(op.getGradBias(), op.getGradBias());
    }
    rewriter.replaceOp(op, {gradInput, gradWeight, gradBias});
    return success();
  }

  /// The most inputs a filter reads for its gradients to be direct sums.
  int64_t directDepth;
};
} // namespace

void fxtoloop::populateConvolutionLoweringPatterns(
    RewritePatternSet &patterns, const FXToLoopOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConvolutionLowering, TransposedConvolutionLowering,
               ConvolutionBackwardLowering>(ctx, options);
}
