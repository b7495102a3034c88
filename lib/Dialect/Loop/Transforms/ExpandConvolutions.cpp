//===- ExpandConvolutions.cpp - loop.convolution as sums or a product -----===//
//
// Part of Kiln. kiln-loop-expand-convolutions: each loop.convolution into
// window sums when its filters read few inputs, else into its input's
// patches (im2col), its grouped weights, a loop.matmul of the two and an
// index map that reads the product back, or, for targets with a
// convolution library, into the channels-last convolution the library
// computes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/ConvolutionGeometry.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_EXPANDCONVOLUTIONSPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

namespace {

/// The channel counts of 16-bit operands that a library's tensor-core
/// convolutions take are multiples of this.
constexpr int64_t kLibraryChannelMultiple = 8;

/// Whether a convolution library computes `op`: 1-d or 2-d, of f32, f16 or
/// bf16.
static bool isLibraryConvolution(loop::ConvolutionOp op) {
  Type element =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();
  return op.getNumSpatialDims() <= 2 &&
         (element.isF32() || element.isF16() || element.isBF16());
}

/// `order` applied to `type`'s shape: dimension i of the result is
/// dimension order[i] of `type`.
static RankedTensorType permuteType(RankedTensorType type,
                                    ArrayRef<int64_t> order, Type element) {
  SmallVector<int64_t> shape = llvm::map_to_vector(
      order, [&](int64_t dim) { return type.getDimSize(dim); });
  return RankedTensorType::get(shape, element);
}

/// The channels a library convolution of `op` reads: for 16-bit operands
/// of one group, the channels rounded up to a multiple of 8, which the
/// library's tensor-core kernels need (a 3-channel stem otherwise runs in a
/// generic kernel: ResNet-50's 7x7 stem took twice as long on an H100).
static int64_t getLibraryChannels(loop::ConvolutionOp op) {
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  int64_t channels = inputType.getDimSize(1);
  if (op.getGroups() != 1 || inputType.getElementType().isF32())
    return channels;
  return llvm::alignTo(channels, kLibraryChannelMultiple);
}

/// Rewrites `op` into the channels-last convolution a library computes:
///
///   input'[n, x..., c]  = input[n, c, x...]   (0 for c >= C)
///   weight'[f, k..., c] = weight[f, c, k...]  (0 for c >= C)
///   sums[n, o..., f]    = loop.convolution {channels_last} input', weight'
///   result[n, f, o...]  = sums[n, o..., f], converted to the result's dtype
///
/// where c < C' (getLibraryChannels) and the C channels past C are zeros
/// that add nothing to the sums. The sums are in the operands' dtype: a
/// library rounds each sum once. The channels are static, so the dynamic
/// sizes keep their order.
static Value buildLibraryConvolution(PatternRewriter &rewriter,
                                     loop::ConvolutionOp op) {
  Location loc = op.getLoc();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto weightType = cast<RankedTensorType>(op.getWeight().getType());
  RankedTensorType resultType = op.getResultType();
  Type element = inputType.getElementType();
  int64_t rank = resultType.getRank();
  int64_t channels = inputType.getDimSize(1);
  int64_t libraryChannels = getLibraryChannels(op);
  // Dimension i of a channels-last tensor is dimension toLast[i] of the
  // original; dimension i of the original is dimension toFirst[i] of it.
  SmallVector<int64_t> toLast = {0}, toFirst = {0, rank - 1};
  for (int64_t dim = 2; dim < rank; ++dim) {
    toLast.push_back(dim);
    toFirst.push_back(dim - 1);
  }
  toLast.push_back(1);
  auto permute = [](ValueRange values, ArrayRef<int64_t> order) {
    return llvm::map_to_vector(order, [&](int64_t dim) { return values[dim]; });
  };

  SmallVector<Value> inputSizes;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (inputType.isDynamicDim(toLast[dim]))
      inputSizes.push_back(
          getDimSize(rewriter, loc, op.getInput(), toLast[dim]));
  auto readPermuted = [&](ArrayRef<int64_t> order) {
    return [&, order](OpBuilder &, Location, ValueRange ivs) {
      return permute(ivs, order);
    };
  };
  // Channels-last copies of the operands, padded with zero channels.
  auto channelsLast = [&](Value source, RankedTensorType type,
                          ValueRange sizes) -> Value {
    RankedTensorType lastType = permuteType(type, toLast, element);
    if (libraryChannels == channels)
      return buildIndexMapNode(rewriter, loc, source, lastType, sizes,
                               readPermuted(toFirst));
    SmallVector<int64_t> shape(lastType.getShape());
    shape.back() = libraryChannels;
    return buildGeneratorNode(
        rewriter, loc, RankedTensorType::get(shape, element), sizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          // Past the channels, a read of the last one, not used.
          SmallVector<Value> indices = permute(ivs, toFirst);
          Value inRange = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, indices[1],
              arith::ConstantIndexOp::create(b, loc, channels));
          indices[1] = arith::MinUIOp::create(
              b, loc, indices[1],
              arith::ConstantIndexOp::create(b, loc, channels - 1));
          Value read = loop::LoadOp::create(b, loc, source, indices);
          return arith::SelectOp::create(b, loc, inRange, read,
                                         makeFloat(b, loc, element, 0.0));
        });
  };
  Value input = channelsLast(op.getInput(), inputType, inputSizes);
  Value weight = channelsLast(op.getWeight(), weightType, {});
  auto sums = loop::ConvolutionOp::create(
      rewriter, loc, permuteType(resultType, toLast, element), input, weight,
      op.getDynamicSizes(), op.getStrideAttr(), op.getPaddingAttr(),
      op.getDilationAttr(), op.getGroupsAttr());
  sums.setChannelsLast(true);
  Type resultElement = resultType.getElementType();
  return buildGeneratorNode(
      rewriter, loc, resultType, op.getDynamicSizes(),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value sum = loop::LoadOp::create(b, loc, sums, permute(ivs, toLast));
        return convertScalar(b, loc, sum, element, resultElement);
      });
}

/// Expands a loop.convolution into a matrix product of its filters and the
/// input's patches (im2col), per group:
///
///   patches[g, (c, k...), (n, o...)] = input[n, g*Cg + c, o*s + k*d - p]
///                                      (0 outside the input)
///   weights[g, f, (c, k...)]         = weight[g*Fg + f, c, k...]
///   product[g, f, (n, o...)]         = weights x patches
///   result[n, g*Fg + f, o...]        = product[g, f, (n, o...)]
///
/// Patches and weights are nodes the product reads; the result is an
/// index-map node that its readers inline (the bias, batch norm, relu).
/// Filters that read few inputs, and no fewer than there are filters per
/// group, sum their windows directly instead (buildDirectConvolution).
struct ExpandConvolution : OpRewritePattern<loop::ConvolutionOp> {
  ExpandConvolution(MLIRContext *ctx, int64_t directDepth, bool library)
      : OpRewritePattern<loop::ConvolutionOp>(ctx), directDepth(directDepth),
        library(library) {}

  LogicalResult matchAndRewrite(loop::ConvolutionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getChannelsLast())
      return rewriter.notifyMatchFailure(op, "the library's convolution");
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    RankedTensorType resultType = op.getResultType();
    FailureOr<ConvolutionGeometry> geometry = ConvolutionGeometry::get(
        inputType, cast<RankedTensorType>(op.getWeight().getType()), resultType,
        op.getStride(), op.getPadding(), op.getDilation(),
        static_cast<int64_t>(op.getGroups()));
    if (failed(geometry))
      return rewriter.notifyMatchFailure(op, "unsupported geometry");
    ConvolutionGeometry &g = *geometry;
    Location loc = op.getLoc();

    // The run-time sizes: the input's, and the result's from the op.
    g.bindSizes(rewriter, loc, op.getInput(), /*outputSide=*/false);
    // A library's convolutions, depthwise ones too, beat Kiln's window sums
    // (EfficientNet's took 1.4 times as long on an H100).
    if (library && isLibraryConvolution(op)) {
      rewriter.replaceOp(op, buildLibraryConvolution(rewriter, op));
      return success();
    }
    if (g.isDirect(directDepth)) {
      rewriter.replaceOp(op, buildDirectConvolution(
                                 rewriter, loc, op.getInput(), op.getWeight(),
                                 resultType, op.getDynamicSizes(), g));
      return success();
    }
    ValueRange resultSizes = op.getDynamicSizes();
    Value batch = resultType.isDynamicDim(0) ? resultSizes.front() : Value();
    for (int64_t dim = 0, next = batch ? 1 : 0; dim < g.spatial; ++dim)
      if (resultType.isDynamicDim(dim + 2))
        g.outExtentSizes[dim] = resultSizes[next++];

    // The patch columns: every batch's output positions, one after another.
    SmallVector<Value> columnSizes;
    int64_t columns = g.getColumns(rewriter, loc, inputType.getDimSize(0),
                                   batch, columnSizes);
    Value patches = buildConvolutionPatches(rewriter, loc, op.getInput(), g,
                                            columns, columnSizes);
    Value weights = buildGroupedWeights(rewriter, loc, op.getWeight(), g);
    auto productType = RankedTensorType::get(
        {g.groups, g.groupFilters, columns}, resultType.getElementType());
    Value product =
        buildMatmulNode(rewriter, loc, weights, patches, productType);

    // The result: the product, regrouped by batch and position.
    rewriter.replaceOp(
        op, buildIndexMapNode(rewriter, loc, product, resultType,
                              op.getDynamicSizes(),
                              [&](OpBuilder &b, Location loc, ValueRange ivs) {
                                return getProductIndices(b, loc, ivs, g);
                              }));
    return success();
  }

  /// The most inputs a filter reads for the convolution to be computed
  /// directly.
  int64_t directDepth;
  /// Whether the target's library computes the others it can.
  bool library;
};

} // namespace

void loop::populateExpandConvolutionPatterns(RewritePatternSet &patterns,
                                             int64_t directDepth,
                                             bool library) {
  patterns.add<ExpandConvolution>(patterns.getContext(), directDepth, library);
}

namespace {

struct ExpandConvolutionsPass
    : kiln::loop::impl::ExpandConvolutionsPassBase<ExpandConvolutionsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandConvolutionPatterns(patterns, directDepth, library);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult result = getOperation()->walk([&](loop::ConvolutionOp op) {
      if (library && op.getChannelsLast())
        return WalkResult::advance();
      if (op.getChannelsLast())
        op.emitError("kiln-loop-expand-convolutions: a channels-last "
                     "convolution is a convolution library's, and this "
                     "target has none (only `library` leaves it)");
      else
        op.emitError("kiln-loop-expand-convolutions: cannot expand this "
                     "convolution");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
