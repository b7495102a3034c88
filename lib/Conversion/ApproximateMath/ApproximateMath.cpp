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
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

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

/// The constant `value` of `type`, a float or a vector of floats.
Value createFloatConstant(OpBuilder &b, Location loc, Type type, double value) {
  auto element = cast<FloatType>(getElementTypeOrSelf(type));
  TypedAttr attr = b.getFloatAttr(element, value);
  if (auto vectorType = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vectorType, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

/// `x` where `value` equals `constant`, else `otherwise`.
Value selectWhereEqual(OpBuilder &b, Location loc, Value value, double constant,
                       Value x, Value otherwise) {
  Value equal = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, value,
      createFloatConstant(b, loc, value.getType(), constant));
  return arith::SelectOp::create(b, loc, equal, x, otherwise);
}

/// f64 log1p(x) as log(u) · x / (u - 1) for u = 1 + x, whose rounding error
/// cancels in the ratio (Kahan); x where u rounds to 1 and inf where it
/// overflows. math-to-llvm's log(1 + x) loses every digit of a tiny x.
struct Log1pOfF64 : OpRewritePattern<math::Log1pOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Log1pOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF64())
      return rewriter.notifyMatchFailure(op, "only f64");
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value u = arith::AddFOp::create(
        rewriter, loc, createFloatConstant(rewriter, loc, type, 1.0), x);
    Value logU = math::LogOp::create(rewriter, loc, u);
    Value ratio = arith::MulFOp::create(
        rewriter, loc, logU,
        arith::DivFOp::create(
            rewriter, loc, x,
            arith::SubFOp::create(
                rewriter, loc, u,
                createFloatConstant(rewriter, loc, type, 1.0))));
    Value result = selectWhereEqual(
        rewriter, loc, u, 1.0, x,
        selectWhereEqual(rewriter, loc, u,
                         std::numeric_limits<double>::infinity(), u, ratio));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// f64 expm1(x) as (u - 1) · x / log u for u = e^x, whose rounding error
/// cancels in the ratio (Kahan); x where u rounds to 1, -1 where u - 1 does
/// and inf where u overflows. math-to-llvm's e^x - 1 loses every digit of
/// a tiny x.
struct Expm1OfF64 : OpRewritePattern<math::ExpM1Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpM1Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF64())
      return rewriter.notifyMatchFailure(op, "only f64");
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value u = math::ExpOp::create(rewriter, loc, x);
    Value uMinusOne = arith::SubFOp::create(
        rewriter, loc, u, createFloatConstant(rewriter, loc, type, 1.0));
    Value ratio = arith::MulFOp::create(
        rewriter, loc, uMinusOne,
        arith::DivFOp::create(rewriter, loc, x,
                              math::LogOp::create(rewriter, loc, u)));
    Value result = selectWhereEqual(
        rewriter, loc, u, 1.0, x,
        selectWhereEqual(
            rewriter, loc, uMinusOne, -1.0, uMinusOne,
            selectWhereEqual(rewriter, loc, u,
                             std::numeric_limits<double>::infinity(), u,
                             ratio)));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// f32 sin and cos: x - jπ/2 for j = round(2x/π) in f64, π/2 in three
/// parts of f32 precision whose products with j are exact while |j| < 2^29
/// (Cody and Waite), then Cephes' minimax polynomials on [-π/4, π/4] in
/// f32, chosen by j mod 4. Accurate to an ulp or two while |x| < 2^29 π/2
/// (8e8), near every multiple of π too, where upstream's reduction by floor
/// leaves an error of an ulp of 1 (sin(-1e-10) = 6e-8); bounded by ±1
/// beyond. The quadrant is computed in floats, so infinities and NaN give
/// NaN without a poisoned conversion.
template <typename OpTy, bool IsCos>
struct SinCosOfF32 : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32");
    Location loc = op.getLoc();
    Type wideType = rewriter.getF64Type();
    if (auto vectorType = dyn_cast<VectorType>(type))
      wideType = vectorType.clone(wideType);
    auto constantOf = [&](Type of, double value) {
      return createFloatConstant(rewriter, loc, of, value);
    };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddFOp::create(rewriter, loc, x, y);
    };
    auto mul = [&](Value x, Value y) -> Value {
      return arith::MulFOp::create(rewriter, loc, x, y);
    };
    // x·c + d, Horner's step in f32.
    auto step = [&](Value x, Value c, double d) {
      return add(mul(x, c), constantOf(type, d));
    };

    Value wide =
        arith::ExtFOp::create(rewriter, loc, wideType, op.getOperand());
    constexpr double kHalfPi = llvm::numbers::pi / 2;
    Value j = math::RoundEvenOp::create(
        rewriter, loc, mul(wide, constantOf(wideType, 1.0 / kHalfPi)));
    // kHalfPi falls short of π/2 by this much; the last part takes it in.
    constexpr double kHalfPiTail = 6.123233995736766e-17;
    double remainder = kHalfPi;
    Value reduced = wide;
    for (int i = 0; i < 3; ++i) {
      double part =
          i < 2 ? static_cast<float>(remainder) : remainder + kHalfPiTail;
      remainder -= part;
      reduced = arith::SubFOp::create(rewriter, loc, reduced,
                                      mul(j, constantOf(wideType, part)));
    }
    Value y = arith::TruncFOp::create(rewriter, loc, type, reduced);
    Value z = mul(y, y);
    Value sinY =
        add(y, mul(mul(y, z), step(z,
                                   step(z, constantOf(type, -1.9515295891e-4),
                                        8.3321608736e-3),
                                   -1.6666654611e-1)));
    Value cosY =
        add(step(z, constantOf(type, -0.5), 1.0),
            mul(mul(z, z), step(z,
                                step(z, constantOf(type, 2.443315711809948e-5),
                                     -1.388731625493765e-3),
                                4.166664568298827e-2)));
    // The quadrant j mod 4, in [0, 4); cos x = sin(x + π/2) is one further.
    if (IsCos)
      j = add(j, constantOf(wideType, 1.0));
    Value quadrant = arith::SubFOp::create(
        rewriter, loc, j,
        mul(constantOf(wideType, 4.0),
            math::FloorOp::create(rewriter, loc,
                                  mul(j, constantOf(wideType, 0.25)))));
    auto isQuadrant = [&](double q) {
      return arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ,
                                   quadrant, constantOf(wideType, q));
    };
    Value result = arith::SelectOp::create(
        rewriter, loc, isQuadrant(1.0), cosY,
        arith::SelectOp::create(
            rewriter, loc, isQuadrant(2.0),
            arith::NegFOp::create(rewriter, loc, sinY),
            arith::SelectOp::create(rewriter, loc, isQuadrant(3.0),
                                    arith::NegFOp::create(rewriter, loc, cosY),
                                    sinY)));
    // sin(±0) is ±0 (the reduction would give +0).
    if (!IsCos)
      result = arith::SelectOp::create(
          rewriter, loc,
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ,
                                op.getOperand(), constantOf(type, 0.0)),
          op.getOperand(), result);
    // Past 2^29 π/2 the reduction loses digits; the result stays in [-1, 1]
    // (NaN stays NaN).
    result = arith::MinimumFOp::create(
        rewriter, loc,
        arith::MaximumFOp::create(rewriter, loc, result,
                                  constantOf(type, -1.0)),
        constantOf(type, 1.0));
    rewriter.replaceOp(op, result);
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
             math::Log2Op::getOperationName()},
            name);
      });
      patterns.add<Log1pOfF64, Expm1OfF64, SinCosOfF32<math::SinOp, false>,
                   SinCosOfF32<math::CosOp, true>>(&getContext());
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
