//===- ApproximateMath.cpp - Polynomials for math that CPUs lack ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// exp(x) = exp2(x * log2(e)) for f32 scalars and vectors; exp(a * c) for a
/// constant c becomes exp2(a * (c * log2(e))), one multiply and one rounding.
struct ExpAsExp2 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32");
    constexpr double kLog2E = 1.4426950408889634;
    Value operand = op.getOperand();
    double factor = kLog2E;
    if (auto product = operand.getDefiningOp<arith::MulFOp>()) {
      APFloat constant(0.0f);
      for (auto [scaled, scalar] :
           {std::pair(product.getLhs(), product.getRhs()),
            std::pair(product.getRhs(), product.getLhs())}) {
        if (auto broadcast = scalar.getDefiningOp<vector::BroadcastOp>())
          scalar = broadcast.getSource();
        // A product that overflows f32 would turn exp(0 * c) into NaN.
        if (matchPattern(scalar, m_ConstantFloat(&constant)) &&
            std::isfinite(
                static_cast<float>(constant.convertToFloat() * kLog2E))) {
          operand = scaled;
          factor = constant.convertToFloat() * kLog2E;
          break;
        }
      }
    }
    TypedAttr scaleAttr = rewriter.getF32FloatAttr(static_cast<float>(factor));
    Value scale;
    if (auto vectorType = dyn_cast<VectorType>(type))
      scale = arith::ConstantOp::create(
          rewriter, op.getLoc(), DenseElementsAttr::get(vectorType, scaleAttr));
    else
      scale = arith::ConstantOp::create(rewriter, op.getLoc(), scaleAttr);
    Value product = arith::MulFOp::create(rewriter, op.getLoc(), operand, scale,
                                          op.getFastmathAttr());
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
      return signalPassFailure();
    if (libmErf && failed(callLibmForF64Erf()))
      signalPassFailure();
  }

  /// f64 erf as calls to libm's erf (vectors lane by lane): upstream's
  /// math-to-libm patterns, applied to nothing else.
  LogicalResult callLibmForF64Erf() {
    ConversionTarget target(getContext());
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<math::ErfOp>([](math::ErfOp op) {
      return !getElementTypeOrSelf(op.getType()).isF64();
    });
    RewritePatternSet patterns(&getContext());
    populateMathToLibmConversionPatterns(patterns);
    return applyPartialConversion(getOperation(), target, std::move(patterns));
  }
};
} // namespace
