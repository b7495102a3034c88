//===- ApproximateMath.cpp - Polynomials for math that CPUs lack ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

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
#include "kiln/Transforms/Passes.h.inc"
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
Value emitLog1p(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value one = createFloatConstant(b, loc, type, 1.0);
  Value u = arith::AddFOp::create(b, loc, one, x);
  Value ratio = arith::MulFOp::create(
      b, loc, math::LogOp::create(b, loc, u),
      arith::DivFOp::create(b, loc, x, arith::SubFOp::create(b, loc, u, one)));
  return selectWhereEqual(
      b, loc, u, 1.0, x,
      selectWhereEqual(b, loc, u, std::numeric_limits<double>::infinity(), u,
                       ratio));
}

/// f64 expm1(x) as (u - 1) · x / log u for u = e^x, whose rounding error
/// cancels in the ratio (Kahan); x where u rounds to 1, -1 where u - 1 does
/// and inf where u overflows. math-to-llvm's e^x - 1 loses every digit of
/// a tiny x.
Value emitExpm1(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value u = math::ExpOp::create(b, loc, x);
  Value uMinusOne =
      arith::SubFOp::create(b, loc, u, createFloatConstant(b, loc, type, 1.0));
  Value ratio = arith::MulFOp::create(
      b, loc, uMinusOne,
      arith::DivFOp::create(b, loc, x, math::LogOp::create(b, loc, u)));
  return selectWhereEqual(
      b, loc, u, 1.0, x,
      selectWhereEqual(b, loc, uMinusOne, -1.0, uMinusOne,
                       selectWhereEqual(b, loc, u,
                                        std::numeric_limits<double>::infinity(),
                                        u, ratio)));
}

/// f64 tanh(x) as copysign(-t / (t + 2), x) for t = expm1(-2|x|): no
/// cancellation near 0, where math-expand-ops' (1 - e^-2x) / (1 + e^-2x)
/// loses every digit of a tiny x, and exactly ±1 far out.
Value emitTanh(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value t = math::ExpM1Op::create(
      b, loc,
      arith::MulFOp::create(b, loc, createFloatConstant(b, loc, type, -2.0),
                            math::AbsFOp::create(b, loc, x)));
  Value magnitude = arith::DivFOp::create(
      b, loc, arith::NegFOp::create(b, loc, t),
      arith::AddFOp::create(b, loc, t, createFloatConstant(b, loc, type, 2.0)));
  return math::CopySignOp::create(b, loc, magnitude, x);
}

/// Replaces f64 (scalar or vector) `OpTy` with `Emit` of its operand.
template <typename OpTy, Value (*Emit)(OpBuilder &, Location, Value)>
struct F64Expansion : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF64())
      return rewriter.notifyMatchFailure(op, "only f64");
    rewriter.replaceOp(op, Emit(rewriter, op.getLoc(), op.getOperand()));
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

/// The integer constant `value` of `type`, an integer or a vector of them.
Value createIntConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  TypedAttr attr = b.getIntegerAttr(getElementTypeOrSelf(type), value);
  if (auto vectorType = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vectorType, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

/// f32 pow(x, y) as e^(y ln|x|) in f64, whose error stays far below an f32
/// ulp: math-expand-ops' form in f32 errs by |y ln x| ulp (4e-6 at tiny
/// bases). ln|x| is the exponent's and a series in s = (m - 1) / (m + 1)
/// for the mantissa m in [√½, √2] (|s| < 0.172); e^t is 2^n e^r for
/// t = n ln 2 + r, with Taylor's polynomial for e^r (|r| < 0.35). Both
/// vectorize, as libm's pow would not. C99's special values: x^0 and 1^y
/// are 1, (-1)^±inf too; a negative x gives a negative power for an odd
/// integer y and NaN for a y that is not an integer (a finite x only).
struct PowOfF32 : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32");
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    auto likeType = [&](Type element) -> Type {
      if (auto vectorType = dyn_cast<VectorType>(type))
        return vectorType.clone(element);
      return element;
    };
    Type wideType = likeType(b.getF64Type());
    Type bitsType = likeType(b.getI64Type());
    auto constant = [&](double value) {
      return createFloatConstant(b, loc, wideType, value);
    };
    auto bitsConstant = [&](int64_t value) {
      return createIntConstant(b, loc, bitsType, value);
    };
    auto add = [&](Value u, Value v) -> Value {
      return arith::AddFOp::create(b, loc, u, v);
    };
    auto sub = [&](Value u, Value v) -> Value {
      return arith::SubFOp::create(b, loc, u, v);
    };
    auto mul = [&](Value u, Value v) -> Value {
      return arith::MulFOp::create(b, loc, u, v);
    };
    auto compare = [&](arith::CmpFPredicate predicate, Value u, Value v) {
      return arith::CmpFOp::create(b, loc, predicate, u, v);
    };
    auto select = [&](Value condition, Value u, Value v) -> Value {
      return arith::SelectOp::create(b, loc, condition, u, v);
    };
    auto both = [&](Value u, Value v) -> Value {
      return arith::AndIOp::create(b, loc, u, v);
    };
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    constexpr double kLn2 = llvm::numbers::ln2;

    Value x = arith::ExtFOp::create(b, loc, wideType, op.getLhs());
    Value y = arith::ExtFOp::create(b, loc, wideType, op.getRhs());
    Value magnitude = math::AbsFOp::create(b, loc, x);

    // ln|x|, for a finite nonzero |x|: normal in f64, an f32 subnormal too.
    Value bits = arith::BitcastOp::create(b, loc, bitsType, magnitude);
    Value exponent = arith::SIToFPOp::create(
        b, loc, wideType,
        arith::SubIOp::create(
            b, loc, arith::ShRUIOp::create(b, loc, bits, bitsConstant(52)),
            bitsConstant(1023)));
    Value mantissa = arith::BitcastOp::create(
        b, loc, wideType,
        arith::OrIOp::create(
            b, loc,
            arith::AndIOp::create(b, loc, bits,
                                  bitsConstant((int64_t(1) << 52) - 1)),
            bitsConstant(int64_t(1023) << 52)));
    Value isHigh = compare(arith::CmpFPredicate::OGT, mantissa,
                           constant(llvm::numbers::sqrt2));
    mantissa = select(isHigh, mul(mantissa, constant(0.5)), mantissa);
    exponent = add(exponent, select(isHigh, constant(1.0), constant(0.0)));
    Value s = arith::DivFOp::create(b, loc, sub(mantissa, constant(1.0)),
                                    add(mantissa, constant(1.0)));
    Value s2 = mul(s, s);
    // 2 atanh s = ln m; the first term left out is below 2e-14.
    Value series = constant(1.0 / 15);
    for (int k = 13; k >= 1; k -= 2)
      series = add(mul(series, s2), constant(1.0 / k));
    Value ln =
        add(mul(exponent, constant(kLn2)), mul(mul(constant(2.0), s), series));
    // ln 0 = -inf; ln inf and ln NaN are themselves.
    Value isRegular = both(
        compare(arith::CmpFPredicate::OGT, magnitude, constant(0.0)),
        compare(arith::CmpFPredicate::OLT, magnitude, constant(kInfinity)));
    ln = select(
        isRegular, ln,
        select(compare(arith::CmpFPredicate::OEQ, magnitude, constant(0.0)),
               constant(-kInfinity), magnitude));

    // t = y ln|x|; 0 for x^0 and (±1)^y, whose product may be NaN (a NaN x,
    // an infinite y).
    Value isOne = arith::OrIOp::create(
        b, loc, compare(arith::CmpFPredicate::OEQ, y, constant(0.0)),
        compare(arith::CmpFPredicate::OEQ, magnitude, constant(1.0)));
    Value t = select(isOne, constant(0.0), mul(y, ln));
    // Outside [-110, 100] an f32 power is 0 or inf; NaN stays NaN.
    t = arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, t, constant(-110.0)),
        constant(100.0));

    // e^t = 2^n e^r, ln 2 in two parts so that n ln 2 is exact (fdlibm's).
    Value n = math::RoundEvenOp::create(b, loc, mul(t, constant(1.0 / kLn2)));
    Value r = sub(sub(t, mul(n, constant(6.93147180369123816490e-01))),
                  mul(n, constant(1.90821492927058770002e-10)));
    Value polynomial = constant(1.0 / 39916800); // 1/11!
    double factorial = 39916800;
    for (int k = 10; k >= 0; --k) {
      factorial /= k + 1;
      polynomial = add(mul(polynomial, r), constant(1.0 / factorial));
    }
    // A NaN n would make the conversion poison; the polynomial is NaN.
    Value safeN =
        select(compare(arith::CmpFPredicate::UNO, n, n), constant(0.0), n);
    Value twoToN = arith::BitcastOp::create(
        b, loc, wideType,
        arith::ShLIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc, arith::FPToSIOp::create(b, loc, bitsType, safeN),
                bitsConstant(1023)),
            bitsConstant(52)));
    Value result = mul(polynomial, twoToN);

    // Signs: -x^y for a negative x (-0 and -inf too) and an odd integer y;
    // NaN for a finite negative x and a y that is not an integer.
    Value isInteger =
        compare(arith::CmpFPredicate::OEQ, math::FloorOp::create(b, loc, y), y);
    Value half = mul(y, constant(0.5));
    Value isOdd =
        both(isInteger, compare(arith::CmpFPredicate::ONE,
                                math::FloorOp::create(b, loc, half), half));
    Value isSignNegative = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt,
        arith::BitcastOp::create(b, loc, bitsType, x), bitsConstant(0));
    result = select(both(isSignNegative, isOdd),
                    arith::NegFOp::create(b, loc, result), result);
    Value isNotReal =
        both(both(compare(arith::CmpFPredicate::OLT, x, constant(0.0)),
                  compare(arith::CmpFPredicate::OLT, magnitude,
                          constant(kInfinity))),
             arith::XOrIOp::create(
                 b, loc, isInteger,
                 createIntConstant(b, loc, likeType(b.getI1Type()), 1)));
    result = select(isNotReal, constant(std::nan("")), result);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, type, result);
    return success();
  }
};

/// Gives f32 log and log2 normal arguments: a subnormal x (below 2^-126,
/// where the polynomials' exponent extraction reads 0) is scaled by 2^24,
/// and 24 log 2 (24) taken off the result.
void scaleSubnormalLogArguments(Operation *root) {
  SmallVector<Operation *> logs;
  root->walk([&](Operation *op) {
    if (isa<math::LogOp, math::Log2Op>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32())
      logs.push_back(op);
  });
  for (Operation *op : logs) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type type = op->getResult(0).getType();
    Value x = op->getOperand(0);
    Value isSubnormal = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT, x,
        createFloatConstant(b, loc, type, std::ldexp(1.0, -126)));
    Value scaled = arith::SelectOp::create(
        b, loc, isSubnormal,
        arith::MulFOp::create(b, loc, x,
                              createFloatConstant(b, loc, type, 0x1p24)),
        x);
    op->setOperand(0, scaled);
    b.setInsertionPointAfter(op);
    double shift = isa<math::LogOp>(op) ? 24 * std::log(2.0) : 24.0;
    Value result = op->getResult(0);
    auto shifted = arith::SubFOp::create(
        b, loc, result, createFloatConstant(b, loc, type, shift));
    auto corrected =
        arith::SelectOp::create(b, loc, isSubnormal, shifted, result);
    result.replaceUsesWithIf(corrected, [&](OpOperand &use) {
      return use.getOwner() != shifted && use.getOwner() != corrected;
    });
  }
}

/// f32 tanh: upstream's polynomial where |x| < 0.625 (where it is
/// accurate; math-expand-ops' (1 - e^-2x) / (1 + e^-2x) loses every digit
/// of a tiny x), and copysign((1 - e) / (1 + e), x) for e = e^-2|x|
/// beyond, which saturates at exactly ±1 (the polynomial stops at 1 - 2^-22,
/// so a GELU's 1 + tanh of a large negative x would not be 0).
void splitF32Tanh(Operation *root) {
  SmallVector<math::TanhOp> tanhs;
  root->walk([&](math::TanhOp op) {
    if (getElementTypeOrSelf(op.getType()).isF32())
      tanhs.push_back(op);
  });
  for (math::TanhOp op : tanhs) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    Value x = op.getOperand();
    Value magnitude = math::AbsFOp::create(b, loc, x);
    Value e = math::ExpOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, createFloatConstant(b, loc, type, -2.0),
                              magnitude));
    Value one = createFloatConstant(b, loc, type, 1.0);
    Value far = math::CopySignOp::create(
        b, loc,
        arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, one, e),
                              arith::AddFOp::create(b, loc, one, e)),
        x);
    Value isNear =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, magnitude,
                              createFloatConstant(b, loc, type, 0.625));
    auto result = arith::SelectOp::create(b, loc, isNear, op.getResult(), far);
    op.getResult().replaceAllUsesExcept(result, result);
  }
}

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
      scaleSubnormalLogArguments(getOperation());
      splitF32Tanh(getOperation());
      populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
        return llvm::is_contained(
            {math::ErfOp::getOperationName(), math::ErfcOp::getOperationName(),
             math::ExpOp::getOperationName(), math::ExpM1Op::getOperationName(),
             math::LogOp::getOperationName(), math::Log1pOp::getOperationName(),
             math::Log2Op::getOperationName(),
             math::TanhOp::getOperationName()},
            name);
      });
      patterns.add<F64Expansion<math::Log1pOp, emitLog1p>,
                   F64Expansion<math::ExpM1Op, emitExpm1>,
                   F64Expansion<math::TanhOp, emitTanh>,
                   SinCosOfF32<math::SinOp, false>,
                   SinCosOfF32<math::CosOp, true>, PowOfF32>(&getContext());
    }
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (libmErf && failed(callLibmForF64Erf()))
      signalPassFailure();
  }

  /// f64 erf and erfc as calls to libm's (vectors lane by lane): upstream's
  /// math-to-libm patterns, applied to nothing else.
  LogicalResult callLibmForF64Erf() {
    ConversionTarget target(getContext());
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<math::ErfOp, math::ErfcOp>([](Operation *op) {
      return !getElementTypeOrSelf(op->getResult(0).getType()).isF64();
    });
    RewritePatternSet patterns(&getContext());
    populateMathToLibmConversionPatterns(patterns);
    return applyPartialConversion(getOperation(), target, std::move(patterns));
  }
};
} // namespace
