//===- ApproximateMath.cpp - Polynomials for math that CPUs lack ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// exp(x) = exp2(x * log2(e)) for f32 scalars and vectors.
struct ExpAsExp2 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32");
    TypedAttr log2e = rewriter.getF32FloatAttr(1.4426950408889634f);
    Value scale;
    if (auto vectorType = dyn_cast<VectorType>(type))
      scale = arith::ConstantOp::create(
          rewriter, op.getLoc(), DenseElementsAttr::get(vectorType, log2e));
    else
      scale = arith::ConstantOp::create(rewriter, op.getLoc(), log2e);
    Value product = arith::MulFOp::create(
        rewriter, op.getLoc(), op.getOperand(), scale, op.getFastmathAttr());
    rewriter.replaceOpWithNewOp<math::Exp2Op>(op, product,
                                              op.getFastmathAttr());
    return success();
  }
};

struct ApproximateMathPass
    : kiln::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (fastExp) {
      patterns.add<ExpAsExp2>(&getContext());
    } else {
      // f32 polynomials that work on vectors: LLVM would call libm once per
      // lane for these.
      populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
        return llvm::is_contained(
            {math::ErfOp::getOperationName(), math::ExpOp::getOperationName(),
             math::ExpM1Op::getOperationName(), math::LogOp::getOperationName(),
             math::Log1pOp::getOperationName(),
             math::Log2Op::getOperationName(), math::SinOp::getOperationName(),
             math::CosOp::getOperationName()},
            name);
      });
    }
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
