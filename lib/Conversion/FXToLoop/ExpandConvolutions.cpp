//===- ExpandConvolutions.cpp - loop.convolution as sums or a product -----===//
//
// Part of Kiln. kiln-loop-expand-convolutions: each loop.convolution into
// window sums when its filters read few inputs, else into its input's
// patches (im2col), its grouped weights, a loop.matmul of the two and an
// index map that reads the product back.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionGeometry.h"
#include "Lowerings.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EXPANDCONVOLUTIONSPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

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
  ExpandConvolution(MLIRContext *ctx, int64_t directDepth)
      : OpRewritePattern<loop::ConvolutionOp>(ctx), directDepth(directDepth) {}

  LogicalResult matchAndRewrite(loop::ConvolutionOp op,
                                PatternRewriter &rewriter) const override {
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
    Value product = buildMatmul(rewriter, loc, weights, patches, productType);

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
};

} // namespace

void fxtoloop::populateExpandConvolutionPatterns(RewritePatternSet &patterns,
                                                 int64_t directDepth) {
  patterns.add<ExpandConvolution>(patterns.getContext(), directDepth);
}

namespace {

struct ExpandConvolutionsPass
    : kiln::impl::ExpandConvolutionsPassBase<ExpandConvolutionsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandConvolutionPatterns(patterns, directDepth);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult result = getOperation().walk([](loop::ConvolutionOp op) {
      op.emitError("kiln-loop-expand-convolutions: cannot expand this "
                   "convolution");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
