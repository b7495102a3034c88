//===- ComplexMathLowering.cpp - Complex numbers: elementary functions ----===//
//
// Part of Kiln. exp, log, sqrt, rsqrt, reciprocal, powers, the trigonometric
// and hyperbolic functions and their inverses, sigmoid and the gradients of
// tanh and sigmoid, eq, ne, abs and angle of complex numbers, as pointwise
// nodes on the numbers' parts that compute as c10::complex and glibc do
// (tanh as ctanh, the inverses in Kahan's forms with C99's branch cuts).
//
//===----------------------------------------------------------------------===//

#include "ComplexLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// e^a (cos b + i sin b) for a + ib; a zero sin b keeps the imaginary part
/// that zero where e^a overflows (glibc's cexp(x + 0i) = e^x + 0i), not
/// inf * 0 = NaN.
Parts emitExp(OpBuilder &b, Location loc, Parts parts) {
  Value magnitude = math::ExpOp::create(b, loc, parts.re);
  Value sin = math::SinOp::create(b, loc, parts.im);
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sin,
                                       makeFloat(b, loc, sin.getType(), 0.0));
  return {
      arith::MulFOp::create(b, loc, magnitude,
                            math::CosOp::create(b, loc, parts.im)),
      arith::SelectOp::create(b, loc, isZero, sin,
                              arith::MulFOp::create(b, loc, magnitude, sin))};
}

/// |a + ib| as hypot(a, b), scaled so that squaring neither overflows nor
/// underflows; an infinite part gives +inf (even with a NaN beside it), as
/// C's hypot.
Value emitHypot(OpBuilder &b, Location loc, Parts parts) {
  Type part = parts.re.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, part, value); };
  Value x = math::AbsFOp::create(b, loc, parts.re);
  Value y = math::AbsFOp::create(b, loc, parts.im);
  Value high = arith::MaximumFOp::create(b, loc, x, y);
  Value low = arith::MinimumFOp::create(b, loc, x, y);
  Value infinity = constant(std::numeric_limits<double>::infinity());
  // high = 0 would divide 0 by 0; the answer is 0.
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, high,
                                       constant(0.0));
  Value ratio = arith::DivFOp::create(
      b, loc, low,
      arith::SelectOp::create(b, loc, isZero, constant(1.0), high));
  Value scaled = arith::MulFOp::create(
      b, loc, high,
      math::SqrtOp::create(
          b, loc,
          arith::AddFOp::create(b, loc, constant(1.0),
                                arith::MulFOp::create(b, loc, ratio, ratio))));
  Value isInfinite = arith::OrIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, infinity),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, y, infinity));
  return arith::SelectOp::create(b, loc, isInfinite, infinity, scaled);
}

/// The principal logarithm: log |z| + i atan2(b, a) for z = a + ib.
Parts emitLog(OpBuilder &b, Location loc, Parts parts) {
  return {math::LogOp::create(b, loc, emitHypot(b, loc, parts)),
          math::Atan2Op::create(b, loc, parts.im, parts.re)};
}

/// The principal square root of a + ib: with t = sqrt((|a| + |z|) / 2),
/// t + i b / 2t for a >= 0 and |b| / 2t + i copysign(t, b) for a < 0 (no
/// cancellation in either); 0 + ib (that is, zero) for z = 0.
Parts emitSqrt(OpBuilder &b, Location loc, Parts parts) {
  Type part = parts.re.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, part, value); };
  Value half = constant(0.5);
  Value absRe = math::AbsFOp::create(b, loc, parts.re);
  // Halved before the sum, so that it cannot overflow.
  Value t = math::SqrtOp::create(
      b, loc,
      arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, absRe, half),
          arith::MulFOp::create(b, loc, emitHypot(b, loc, parts), half)));
  Value isZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, t, constant(0));
  Value twiceT = arith::MulFOp::create(
      b, loc, constant(2.0),
      arith::SelectOp::create(b, loc, isZero, constant(1.0), t));
  Value other = arith::DivFOp::create(
      b, loc, math::AbsFOp::create(b, loc, parts.im), twiceT);
  Value nonNegative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                            parts.re, constant(0.0));
  Parts root = {
      arith::SelectOp::create(b, loc, nonNegative, t, other),
      arith::SelectOp::create(b, loc, nonNegative,
                              arith::DivFOp::create(b, loc, parts.im, twiceT),
                              math::CopySignOp::create(b, loc, t, parts.im))};
  return {arith::SelectOp::create(b, loc, isZero, constant(0.0), root.re),
          arith::SelectOp::create(b, loc, isZero, parts.im, root.im)};
}

/// base ** exponent as e^(exponent log base), and 0 for a zero base (as
/// libstdc++'s std::pow, which c10::complex calls).
Parts emitPow(OpBuilder &b, Location loc, Parts base, Parts exponent) {
  Parts power = emitExp(
      b, loc,
      emitComplex(b, loc, ComplexKind::Mul, exponent, emitLog(b, loc, base)));
  Value zero = makeFloat(b, loc, base.re.getType(), 0.0);
  Value isZero = arith::AndIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, base.re, zero),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, base.im, zero));
  return {arith::SelectOp::create(b, loc, isZero, zero, power.re),
          arith::SelectOp::create(b, loc, isZero, zero, power.im)};
}

/// sin, cos, sinh and cosh of a + ib from the real functions of a and b:
/// sin z = sin a cosh b + i cos a sinh b, cos z = cos a cosh b - i sin a
/// sinh b, sinh z = sinh a cos b + i cosh a sin b, cosh z = cosh a cos b +
/// i sinh a sin b.
enum class Circular { Sin, Cos, Sinh, Cosh };

Parts emitCircular(OpBuilder &b, Location loc, Circular function, Parts parts) {
  bool hyperbolic = function == Circular::Sinh || function == Circular::Cosh;
  // The parts whose sine and cosine appear, and whose sinh and cosh do.
  Value trigonometric = hyperbolic ? parts.im : parts.re;
  Value other = hyperbolic ? parts.re : parts.im;
  Value sin = math::SinOp::create(b, loc, trigonometric);
  Value cos = math::CosOp::create(b, loc, trigonometric);
  Value sinh = math::SinhOp::create(b, loc, other);
  Value cosh = math::CoshOp::create(b, loc, other);
  // A sine or cosine times a sinh or cosh; a zero sine or cosine gives a
  // zero of the product's sign even where the other overflows (as glibc's
  // csinh(x + 0i) = sinh x + 0i), not 0 * inf = NaN.
  Value one = makeFloat(b, loc, trigonometric.getType(), 1.0);
  Value zero = makeFloat(b, loc, trigonometric.getType(), 0.0);
  auto product = [&](Value trig, Value hyperbolicPart) -> Value {
    Value isZero =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, trig, zero);
    Value signedZero = arith::MulFOp::create(
        b, loc, trig, math::CopySignOp::create(b, loc, one, hyperbolicPart));
    return arith::SelectOp::create(
        b, loc, isZero, signedZero,
        arith::MulFOp::create(b, loc, trig, hyperbolicPart));
  };
  switch (function) {
  case Circular::Sin:
    return {product(sin, cosh), product(cos, sinh)};
  case Circular::Cos:
    return {product(cos, cosh),
            arith::NegFOp::create(b, loc, product(sin, sinh))};
  case Circular::Sinh:
    return {product(cos, sinh), product(sin, cosh)};
  case Circular::Cosh:
    return {product(cos, cosh), product(sin, sinh)};
  }
  llvm_unreachable("unknown function");
}

/// tanh(a + ib) = (sinh a cosh a + i sin b cos b) / (sinh^2 a + cos^2 b),
/// sinh z times the conjugate of cosh z over |cosh z|^2, as glibc's ctanh:
/// no cancellation, and no overflow while |a| is at most half the largest
/// exponent's logarithm (44 for f32). Past it, where sinh^2 a would
/// overflow, tanh z is copysign(1, a) + i 4 sin b cos b e^(-2|a|).
Parts emitTanh(OpBuilder &b, Location loc, Parts parts) {
  Type part = parts.re.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, part, value); };
  auto product = [&](Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y).getResult();
  };
  Value sin = math::SinOp::create(b, loc, parts.im);
  Value cos = math::CosOp::create(b, loc, parts.im);
  Value sinh = math::SinhOp::create(b, loc, parts.re);
  Value cosh = math::CoshOp::create(b, loc, parts.re);
  Value sinCos = product(sin, cos);
  Value denominator =
      arith::AddFOp::create(b, loc, product(sinh, sinh), product(cos, cos));
  Parts near = {arith::DivFOp::create(b, loc, product(sinh, cosh), denominator),
                arith::DivFOp::create(b, loc, sinCos, denominator)};
  Value magnitude = math::AbsFOp::create(b, loc, parts.re);
  Parts far = {
      math::CopySignOp::create(b, loc, constant(1.0), parts.re),
      product(product(constant(4.0), sinCos),
              math::ExpOp::create(b, loc, product(constant(-2.0), magnitude)))};
  int maxExponent = part.getIntOrFloatBitWidth() == 64 ? 1024 : 128;
  Value isFar =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, magnitude,
                            constant((maxExponent - 1) * std::log(2.0) / 2));
  return {arith::SelectOp::create(b, loc, isFar, far.re, near.re),
          arith::SelectOp::create(b, loc, isFar, far.im, near.im)};
}

/// tan z = -i tanh(iz): with tanh(-b + ia) = u + iv, tan(a + ib) = v - iu.
Parts emitTan(OpBuilder &b, Location loc, Parts parts) {
  Parts rotated =
      emitTanh(b, loc, {arith::NegFOp::create(b, loc, parts.im), parts.re});
  return {rotated.im, arith::NegFOp::create(b, loc, rotated.re)};
}

/// sigmoid z = 1 / (1 + e^-z), as c10's complex sigmoid.
Parts emitSigmoid(OpBuilder &b, Location loc, Parts parts) {
  Type part = parts.re.getType();
  Value zero = makeFloat(b, loc, part, 0.0);
  Value one = makeFloat(b, loc, part, 1.0);
  Parts exponential = emitExp(
      b, loc, emitComplex(b, loc, ComplexKind::Neg, parts, Parts{zero, zero}));
  Parts denominator =
      emitComplex(b, loc, ComplexKind::Add, Parts{one, zero}, exponential);
  return emitComplex(b, loc, ComplexKind::Div, Parts{one, zero}, denominator);
}

/// The principal square roots √(1 - z) and √(1 + z) of z = a + ib, whose
/// parts Kahan's inverse functions combine: 1 - z is (1 - a) - ib, so that
/// a zero b keeps its sign through the branch cuts.
std::pair<Parts, Parts> emitRootsAroundOne(OpBuilder &b, Location loc,
                                           Parts z) {
  Value one = makeFloat(b, loc, z.re.getType(), 1.0);
  return {emitSqrt(b, loc,
                   {arith::SubFOp::create(b, loc, one, z.re),
                    arith::NegFOp::create(b, loc, z.im)}),
          emitSqrt(b, loc, {arith::AddFOp::create(b, loc, one, z.re), z.im})};
}

/// x.re y.re + sign x.im y.im: the real part of x y (sign -1) or of
/// conj(x) y (sign 1).
Value emitRealOfProduct(OpBuilder &b, Location loc, Parts x, Parts y,
                        bool conjugateX) {
  Value reals = arith::MulFOp::create(b, loc, x.re, y.re);
  Value imaginaries = arith::MulFOp::create(b, loc, x.im, y.im);
  if (conjugateX)
    return arith::AddFOp::create(b, loc, reals, imaginaries);
  return arith::SubFOp::create(b, loc, reals, imaginaries);
}

/// The imaginary part of conj(x) y: x.re y.im - x.im y.re.
Value emitImaginaryOfConjugateProduct(OpBuilder &b, Location loc, Parts x,
                                      Parts y) {
  return arith::SubFOp::create(b, loc,
                               arith::MulFOp::create(b, loc, x.re, y.im),
                               arith::MulFOp::create(b, loc, x.im, y.re));
}

/// Whether `x`'s sign bit is set (-0 included).
Value emitSignBit(OpBuilder &b, Location loc, Value x) {
  Value one = makeFloat(b, loc, x.getType(), 1.0);
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                               math::CopySignOp::create(b, loc, one, x),
                               makeFloat(b, loc, x.getType(), 0.0));
}

/// log 2z = log 2 + log z.
Parts emitLogOfTwice(OpBuilder &b, Location loc, Parts z) {
  Parts log = emitLog(b, loc, z);
  return {
      arith::AddFOp::create(b, loc, log.re,
                            makeFloat(b, loc, log.re.getType(), std::log(2.0))),
      log.im};
}

/// `far` where |z| is past 2^(p/2 + 1) for the parts' precision p, else
/// `near`: there 1 is negligible next to z², and asin, acos and acosh take
/// their asymptotic forms, which infinite parts reach too (Kahan's products
/// would be 0 · inf).
Parts selectFar(OpBuilder &b, Location loc, Parts z, Parts far, Parts near) {
  auto part = cast<FloatType>(z.re.getType());
  Value isFar = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, emitHypot(b, loc, z),
      makeFloat(b, loc, part,
                std::ldexp(1.0, part.getFPMantissaWidth() / 2 + 1)));
  return {arith::SelectOp::create(b, loc, isFar, far.re, near.re),
          arith::SelectOp::create(b, loc, isFar, far.im, near.im)};
}

/// Kahan's forms ("Branch cuts for complex elementary functions"), which
/// do not cancel and put the branch cuts where C99 does: with
/// s = √(1 - z) and t = √(1 + z),
///   asin z = atan2(a, Re(s t)) + i asinh(Im(conj(s) t)),
///   acos z = 2 atan2(Re s, Re t) + i asinh(Im(conj(t) s)).
Parts emitAsin(OpBuilder &b, Location loc, Parts z) {
  auto [s, t] = emitRootsAroundOne(b, loc, z);
  Parts near = {
      math::Atan2Op::create(b, loc, z.re,
                            emitRealOfProduct(b, loc, s, t, false)),
      emitAsinh(b, loc, emitImaginaryOfConjugateProduct(b, loc, s, t))};
  // Far out asin z = -i asinh(iz), and asinh w = ±log(±2w), the sign that
  // makes the real part of ±w non-negative.
  Parts w = {arith::NegFOp::create(b, loc, z.im), z.re};
  Value negative = emitSignBit(b, loc, w.re);
  auto flip = [&](Value x) -> Value {
    return arith::SelectOp::create(b, loc, negative,
                                   arith::NegFOp::create(b, loc, x), x);
  };
  Parts log = emitLogOfTwice(b, loc, {flip(w.re), flip(w.im)});
  Parts asinhW = {flip(log.re), flip(log.im)};
  return selectFar(b, loc, z,
                   {asinhW.im, arith::NegFOp::create(b, loc, asinhW.re)}, near);
}

Parts emitAcos(OpBuilder &b, Location loc, Parts z) {
  auto [s, t] = emitRootsAroundOne(b, loc, z);
  Parts near = {
      arith::MulFOp::create(b, loc, makeFloat(b, loc, z.re.getType(), 2.0),
                            math::Atan2Op::create(b, loc, s.re, t.re)),
      emitAsinh(b, loc, emitImaginaryOfConjugateProduct(b, loc, t, s))};
  // Far out acos z = -i acosh z where b's sign bit is clear, i acosh z
  // where it is set, and acosh z = log 2z.
  Parts acosh = emitLogOfTwice(b, loc, z);
  Value negative = emitSignBit(b, loc, z.im);
  Parts far = {
      arith::SelectOp::create(
          b, loc, negative, arith::NegFOp::create(b, loc, acosh.im), acosh.im),
      arith::SelectOp::create(b, loc, negative, acosh.re,
                              arith::NegFOp::create(b, loc, acosh.re))};
  return selectFar(b, loc, z, far, near);
}

/// acosh z = asinh(Re(conj(√(z - 1)) √(z + 1))) + i 2 atan2(Im √(z - 1),
/// Re √(z + 1)) (Kahan).
Parts emitAcosh(OpBuilder &b, Location loc, Parts z) {
  Value one = makeFloat(b, loc, z.re.getType(), 1.0);
  Parts below =
      emitSqrt(b, loc, {arith::SubFOp::create(b, loc, z.re, one), z.im});
  Parts above =
      emitSqrt(b, loc, {arith::AddFOp::create(b, loc, z.re, one), z.im});
  Parts near = {
      emitAsinh(b, loc, emitRealOfProduct(b, loc, below, above, true)),
      arith::MulFOp::create(b, loc, makeFloat(b, loc, z.re.getType(), 2.0),
                            math::Atan2Op::create(b, loc, below.im, above.re))};
  // Far out acosh z = log 2z.
  return selectFar(b, loc, z, emitLogOfTwice(b, loc, z), near);
}

/// atanh z = ½ log((1 + z) / (1 - z)). Its real part is ½ (log |1 + z| -
/// log |1 - z|) (hypots, which neither overflow nor underflow), or, where
/// the two nearly cancel, ¼ log1p(4a / |1 - z|²) (|1 + z|² = |1 - z|² +
/// 4a). Its imaginary part is ½ atan2(2b, (1 - a)(1 + a) - b²). Where b²
/// would overflow, atanh z is 1/z ± iπ/2: (a / |z|) / |z| + i copysign(π/2,
/// b) (the imaginary part of 1/z is below π/2's last digit there).
Parts emitAtanh(OpBuilder &b, Location loc, Parts z) {
  Type part = z.re.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, part, value); };
  auto product = [&](Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y).getResult();
  };
  Value one = constant(1.0);
  Value oneMinusRe = arith::SubFOp::create(b, loc, one, z.re);
  Value onePlusRe = arith::AddFOp::create(b, loc, one, z.re);
  Value imSquared = product(z.im, z.im);
  Value fraction = arith::DivFOp::create(
      b, loc, product(constant(4.0), z.re),
      arith::AddFOp::create(b, loc, product(oneMinusRe, oneMinusRe),
                            imSquared));
  Value logDifference = arith::SubFOp::create(
      b, loc, math::LogOp::create(b, loc, emitHypot(b, loc, {onePlusRe, z.im})),
      math::LogOp::create(b, loc, emitHypot(b, loc, {oneMinusRe, z.im})));
  // An infinite fraction (4 / 0 at z = 1) takes the logarithms too.
  Value cancels = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                        math::AbsFOp::create(b, loc, fraction),
                                        constant(0.5));
  Parts near = {
      arith::SelectOp::create(
          b, loc, cancels,
          product(constant(0.25), math::Log1pOp::create(b, loc, fraction)),
          product(constant(0.5), logDifference)),
      product(constant(0.5),
              math::Atan2Op::create(
                  b, loc, product(constant(2.0), z.im),
                  arith::SubFOp::create(b, loc, product(oneMinusRe, onePlusRe),
                                        imSquared)))};
  Value magnitude = emitHypot(b, loc, z);
  // 1/z's real part; ±0 for an infinite a (inf / inf would be NaN).
  Value isInfinite = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, z.re),
      constant(std::numeric_limits<double>::infinity()));
  Parts far = {
      arith::SelectOp::create(
          b, loc, isInfinite,
          math::CopySignOp::create(b, loc, constant(0.0), z.re),
          arith::DivFOp::create(b, loc,
                                arith::DivFOp::create(b, loc, z.re, magnitude),
                                magnitude)),
      math::CopySignOp::create(b, loc, constant(llvm::numbers::pi / 2), z.im)};
  auto partType = cast<FloatType>(part);
  int maxExponent = APFloat::semanticsMaxExponent(partType.getFloatSemantics());
  Value isFar =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, magnitude,
                            constant(std::ldexp(1.0, maxExponent / 2 - 1)));
  return {arith::SelectOp::create(b, loc, isFar, far.re, near.re),
          arith::SelectOp::create(b, loc, isFar, far.im, near.im)};
}

/// f(z) = -i g(iz) for g of iz = -b + ia: with g(iz) = u + iv, f(z) = v - iu
/// (asinh from asin, atan from atanh).
Parts emitRotated(OpBuilder &b, Location loc, Parts z,
                  Parts (*function)(OpBuilder &, Location, Parts)) {
  Parts rotated = function(b, loc, {arith::NegFOp::create(b, loc, z.im), z.re});
  return {rotated.im, arith::NegFOp::create(b, loc, rotated.re)};
}

/// log z / log `base`, part by part, as PyTorch's log2 and log10.
Parts emitLogToBase(OpBuilder &b, Location loc, Parts z, double base) {
  Parts log = emitLog(b, loc, z);
  Value divisor = makeFloat(b, loc, z.re.getType(), std::log(base));
  return {arith::DivFOp::create(b, loc, log.re, divisor),
          arith::DivFOp::create(b, loc, log.im, divisor)};
}

/// 1 / z, a quotient as c10::complex computes it.
Parts emitReciprocal(OpBuilder &b, Location loc, Parts z) {
  Type part = z.re.getType();
  return emitComplex(
      b, loc, ComplexKind::Div,
      {makeFloat(b, loc, part, 1.0), makeFloat(b, loc, part, 0.0)}, z);
}

/// 2^z = e^(z log 2), as PyTorch's exp2 of complex numbers.
Parts emitExp2(OpBuilder &b, Location loc, Parts z) {
  Value log2 = makeFloat(b, loc, z.re.getType(), std::log(2.0));
  return emitExp(b, loc,
                 {arith::MulFOp::create(b, loc, z.re, log2),
                  arith::MulFOp::create(b, loc, z.im, log2)});
}

/// log(1 + z) as PyTorch's log1p of a + ib (its CUDA form): the angle atan2(b,
/// 1 + a); the magnitude's log ½ log1p(a (2 + a) + b²) for |z| < ½ (a where
/// that sum underflows to 0), else log hypot(1 + a, b).
Parts emitLog1p(OpBuilder &b, Location loc, Parts z) {
  Type part = z.re.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, part, value); };
  Value onePlusRe = arith::AddFOp::create(b, loc, constant(1.0), z.re);
  Value sum = arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, z.re,
                            arith::AddFOp::create(b, loc, constant(2.0), z.re)),
      arith::MulFOp::create(b, loc, z.im, z.im));
  Value nearZero = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                            constant(0.0)),
      z.re,
      arith::MulFOp::create(b, loc, constant(0.5),
                            math::Log1pOp::create(b, loc, sum)));
  Value isSmall = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                        emitHypot(b, loc, z), constant(0.5));
  return {
      arith::SelectOp::create(
          b, loc, isSmall, nearZero,
          math::LogOp::create(b, loc, emitHypot(b, loc, {onePlusRe, z.im}))),
      math::Atan2Op::create(b, loc, z.im, onePlusRe)};
}

/// e^z - 1 as PyTorch's expm1 of a + ib: expm1(a) cos b - 2 sin²(b/2) +
/// i e^a sin b, with no e^a - 1 that cancels.
Parts emitExpm1(OpBuilder &b, Location loc, Parts z) {
  Type part = z.re.getType();
  Value halfSine = math::SinOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, z.im, makeFloat(b, loc, part, 0.5)));
  Value re = arith::SubFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, math::ExpM1Op::create(b, loc, z.re),
                            math::CosOp::create(b, loc, z.im)),
      arith::MulFOp::create(b, loc, makeFloat(b, loc, part, 2.0),
                            arith::MulFOp::create(b, loc, halfSine, halfSine)));
  return {re, arith::MulFOp::create(b, loc, math::ExpOp::create(b, loc, z.re),
                                    math::SinOp::create(b, loc, z.im))};
}

/// The math functions of one complex operand that have a form here.
enum class ComplexFunction {
  Exp,
  Log,
  Sqrt,
  Sin,
  Cos,
  Tan,
  Sinh,
  Cosh,
  Tanh,
  Sigmoid,
  Asin,
  Acos,
  Atan,
  Asinh,
  Acosh,
  Atanh,
  Log2,
  Log10,
  Log1p,
  Exp2,
  Expm1,
  Reciprocal,
  Rsqrt
};

/// Lowers the exponentials and logarithms (exp, exp2, expm1, log, log2,
/// log10, log1p), sqrt, rsqrt, reciprocal, the trigonometric and hyperbolic
/// functions, their inverses and sigmoid of complex numbers.
template <typename OpTy, ComplexFunction Function>
struct ComplexFunctionLowering
    : PartsLowering<OpTy, ComplexFunctionLowering<OpTy, Function>> {
  using PartsLowering<OpTy, ComplexFunctionLowering>::PartsLowering;

  Value compute(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    return createComplex(b, loc, emit(b, loc, parts));
  }

  static Parts emit(OpBuilder &b, Location loc, Parts parts) {
    switch (Function) {
    case ComplexFunction::Exp:
      return emitExp(b, loc, parts);
    case ComplexFunction::Log:
      return emitLog(b, loc, parts);
    case ComplexFunction::Sqrt:
      return emitSqrt(b, loc, parts);
    case ComplexFunction::Sin:
      return emitCircular(b, loc, Circular::Sin, parts);
    case ComplexFunction::Cos:
      return emitCircular(b, loc, Circular::Cos, parts);
    case ComplexFunction::Tan:
      return emitTan(b, loc, parts);
    case ComplexFunction::Sinh:
      return emitCircular(b, loc, Circular::Sinh, parts);
    case ComplexFunction::Cosh:
      return emitCircular(b, loc, Circular::Cosh, parts);
    case ComplexFunction::Tanh:
      return emitTanh(b, loc, parts);
    case ComplexFunction::Sigmoid:
      return emitSigmoid(b, loc, parts);
    case ComplexFunction::Asin:
      return emitAsin(b, loc, parts);
    case ComplexFunction::Acos:
      return emitAcos(b, loc, parts);
    case ComplexFunction::Atan:
      return emitRotated(b, loc, parts, emitAtanh);
    case ComplexFunction::Asinh:
      return emitRotated(b, loc, parts, emitAsin);
    case ComplexFunction::Acosh:
      return emitAcosh(b, loc, parts);
    case ComplexFunction::Atanh:
      return emitAtanh(b, loc, parts);
    case ComplexFunction::Log2:
      return emitLogToBase(b, loc, parts, 2.0);
    case ComplexFunction::Log10:
      return emitLogToBase(b, loc, parts, 10.0);
    case ComplexFunction::Log1p:
      return emitLog1p(b, loc, parts);
    case ComplexFunction::Exp2:
      return emitExp2(b, loc, parts);
    case ComplexFunction::Expm1:
      return emitExpm1(b, loc, parts);
    case ComplexFunction::Reciprocal:
      return emitReciprocal(b, loc, parts);
    case ComplexFunction::Rsqrt:
      return emitReciprocal(b, loc, emitSqrt(b, loc, parts));
    }
    llvm_unreachable("unknown complex function");
  }
};

/// Lowers fx.tanh_backward and fx.sigmoid_backward of complex numbers:
/// grad conj(1 - y²) and grad conj((1 - y) y) for y the activation's
/// output, as PyTorch's kernels.
template <typename OpTy>
struct ComplexActivationBackwardLowering
    : PartsLowering<OpTy, ComplexActivationBackwardLowering<OpTy>> {
  using PartsLowering<OpTy, ComplexActivationBackwardLowering>::PartsLowering;

  Value compute(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts grad = getParts(b, loc, elements[0], dtypes[0], part);
    Parts y = getParts(b, loc, elements[1], dtypes[1], part);
    Parts one = {makeFloat(b, loc, part, 1.0), makeFloat(b, loc, part, 0.0)};
    Parts derivative =
        std::is_same_v<OpTy, fx::TanhBackwardOp>
            ? emitComplex(b, loc, ComplexKind::Sub, one,
                          emitComplex(b, loc, ComplexKind::Mul, y, y))
            : emitComplex(b, loc, ComplexKind::Mul,
                          emitComplex(b, loc, ComplexKind::Sub, one, y), y);
    derivative.im = arith::NegFOp::create(b, loc, derivative.im);
    return createComplex(
        b, loc, emitComplex(b, loc, ComplexKind::Mul, grad, derivative));
  }
};

/// Lowers fx.pow_tensor_scalar of complex numbers with PyTorch's special
/// exponents (0: ones, 1: a copy, 2, 3, -1, -2: products and quotients,
/// 0.5 and -0.5: square roots), and e^(exponent log self) for the others.
struct ComplexPowScalarLowering
    : PartsLowering<fx::PowTensorScalarOp, ComplexPowScalarLowering> {
  using PartsLowering::PartsLowering;

  Value compute(fx::PowTensorScalarOp op, OpBuilder &b, Location loc,
                ValueRange elements, ArrayRef<Type> dtypes,
                FloatType part) const {
    Parts base = getParts(b, loc, elements[0], dtypes[0], part);
    Attribute exponentAttr = op.getExponent();
    double exponent = isa<FloatAttr>(exponentAttr)
                          ? cast<FloatAttr>(exponentAttr).getValueAsDouble()
                      : isa<BoolAttr>(exponentAttr)
                          ? double(cast<BoolAttr>(exponentAttr).getValue())
                          : double(cast<IntegerAttr>(exponentAttr).getInt());
    Parts one = {makeFloat(b, loc, part, 1.0), makeFloat(b, loc, part, 0.0)};
    auto times = [&](Parts x, Parts y) {
      return emitComplex(b, loc, ComplexKind::Mul, x, y);
    };
    auto inverse = [&](Parts x) {
      return emitComplex(b, loc, ComplexKind::Div, one, x);
    };
    Parts power;
    if (exponent == 0.0)
      power = one;
    else if (exponent == 1.0)
      power = base;
    else if (exponent == 2.0)
      power = times(base, base);
    else if (exponent == 3.0)
      power = times(times(base, base), base);
    else if (exponent == -1.0)
      power = inverse(base);
    else if (exponent == -2.0)
      power = inverse(times(base, base));
    else if (exponent == 0.5)
      power = emitSqrt(b, loc, base);
    else if (exponent == -0.5)
      power = inverse(emitSqrt(b, loc, base));
    else
      power = emitPow(
          b, loc, base,
          {makeFloat(b, loc, part, exponent), makeFloat(b, loc, part, 0.0)});
    return createComplex(b, loc, power);
  }
};

/// Lowers fx.pow of tensors and fx.pow_scalar (a real scalar base) with a
/// complex result; an operand may be real.
template <typename OpTy>
struct ComplexPowLowering : PartsLowering<OpTy, ComplexPowLowering<OpTy>> {
  using PartsLowering<OpTy, ComplexPowLowering>::PartsLowering;

  Value compute(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts base, exponent;
    if constexpr (std::is_same_v<OpTy, fx::PowScalarOp>) {
      base = {makeScalar(b, loc, op.getSelf(), part),
              makeFloat(b, loc, part, 0.0)};
      exponent = getParts(b, loc, elements[0], dtypes[0], part);
    } else {
      base = getParts(b, loc, elements[0], dtypes[0], part);
      exponent = getParts(b, loc, elements[1], dtypes[1], part);
    }
    return createComplex(b, loc, emitPow(b, loc, base, exponent));
  }
};

/// Lowers fx.eq and fx.ne (and their scalar forms) with a complex operand:
/// equal when both parts are (a real operand has imaginary part 0).
template <typename OpTy, bool Equal>
struct ComplexEqualityLowering
    : PartsLowering<OpTy, ComplexEqualityLowering<OpTy, Equal>> {
  using PartsLowering<OpTy, ComplexEqualityLowering>::PartsLowering;

  static constexpr bool kHasScalarOther =
      std::is_same_v<OpTy, fx::EqScalarOp> ||
      std::is_same_v<OpTy, fx::NeScalarOp>;

  /// The widest parts of the complex operands, f64 if a real operand is.
  FloatType getPart(OpTy op) const {
    FloatType part;
    for (Value operand : op->getOperands())
      if (FloatType operandPart = getPartType(getDtype(operand)))
        if (!part || operandPart.getWidth() > part.getWidth())
          part = operandPart;
    if (!part)
      return nullptr;
    for (Value operand : op->getOperands())
      if (getDtype(operand).isF64())
        return Float64Type::get(op.getContext());
    return part;
  }
  Type getBodyDtype(OpTy op, FloatType) const {
    return getDtype(op->getResult(0));
  }
  Value compute(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts lhs = getParts(b, loc, elements[0], dtypes[0], part);
    Parts rhs =
        getOtherParts<kHasScalarOther>(op, b, loc, elements, dtypes, part);
    // ne is the negation of eq, so NaN parts are unequal (unordered).
    auto predicate =
        Equal ? arith::CmpFPredicate::OEQ : arith::CmpFPredicate::UNE;
    Value re = arith::CmpFOp::create(b, loc, predicate, lhs.re, rhs.re);
    Value im = arith::CmpFOp::create(b, loc, predicate, lhs.im, rhs.im);
    return Equal ? arith::AndIOp::create(b, loc, re, im).getResult()
                 : arith::OrIOp::create(b, loc, re, im).getResult();
  }
};

/// Lowers fx.abs of complex numbers: their hypot.
struct ComplexAbsLowering : PartsLowering<fx::AbsOp, ComplexAbsLowering> {
  using PartsLowering::PartsLowering;

  FloatType getPart(fx::AbsOp op) const {
    return getPartType(getDtype(op.getSelf()));
  }
  Type getBodyDtype(fx::AbsOp, FloatType part) const { return part; }
  Value compute(fx::AbsOp, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    return emitHypot(b, loc, getParts(b, loc, elements[0], dtypes[0], part));
  }
};

/// Lowers fx.angle: atan2(im, re) of complex numbers; of reals (read as
/// f32 when narrower), NaN for NaN, pi for negative numbers and 0 for the
/// rest, as PyTorch's angle.
struct AngleLowering : PartsLowering<fx::AngleOp, AngleLowering> {
  using PartsLowering::PartsLowering;

  FloatType getPart(fx::AngleOp op) const {
    Type dtype = getDtype(op.getSelf());
    if (isa<ComplexType>(dtype))
      return getPartType(dtype);
    auto real = cast<FloatType>(dtype);
    return real.getWidth() < 32 ? Float32Type::get(op.getContext()) : real;
  }
  SmallVector<Type> getInputDtypes(fx::AngleOp op, FloatType part) const {
    Type dtype = getDtype(op.getSelf());
    return {isa<ComplexType>(dtype) ? dtype : part};
  }
  Type getBodyDtype(fx::AngleOp, FloatType part) const { return part; }
  Value compute(fx::AngleOp, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    if (isa<ComplexType>(dtypes[0])) {
      Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
      return math::Atan2Op::create(b, loc, parts.im, parts.re);
    }
    Value x = elements[0];
    Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                           makeFloat(b, loc, part, 0.0));
    Value isNaN =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value angle =
        arith::SelectOp::create(b, loc, negative, makeFloat(b, loc, part, M_PI),
                                makeFloat(b, loc, part, 0.0));
    return arith::SelectOp::create(b, loc, isNaN, x, angle);
  }
};

} // namespace

void fxtoloop::populateComplexMathLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<
      ComplexAbsLowering,
      ComplexFunctionLowering<fx::ExpOp, ComplexFunction::Exp>,
      ComplexFunctionLowering<fx::LogOp, ComplexFunction::Log>,
      ComplexFunctionLowering<fx::SqrtOp, ComplexFunction::Sqrt>,
      ComplexFunctionLowering<fx::SinOp, ComplexFunction::Sin>,
      ComplexFunctionLowering<fx::CosOp, ComplexFunction::Cos>,
      ComplexFunctionLowering<fx::TanOp, ComplexFunction::Tan>,
      ComplexFunctionLowering<fx::SinhOp, ComplexFunction::Sinh>,
      ComplexFunctionLowering<fx::CoshOp, ComplexFunction::Cosh>,
      ComplexFunctionLowering<fx::TanhOp, ComplexFunction::Tanh>,
      ComplexFunctionLowering<fx::SigmoidOp, ComplexFunction::Sigmoid>,
      ComplexFunctionLowering<fx::AsinOp, ComplexFunction::Asin>,
      ComplexFunctionLowering<fx::AcosOp, ComplexFunction::Acos>,
      ComplexFunctionLowering<fx::AtanOp, ComplexFunction::Atan>,
      ComplexFunctionLowering<fx::AsinhOp, ComplexFunction::Asinh>,
      ComplexFunctionLowering<fx::AcoshOp, ComplexFunction::Acosh>,
      ComplexFunctionLowering<fx::AtanhOp, ComplexFunction::Atanh>,
      ComplexFunctionLowering<fx::Log2Op, ComplexFunction::Log2>,
      ComplexFunctionLowering<fx::Log10Op, ComplexFunction::Log10>,
      ComplexFunctionLowering<fx::Log1pOp, ComplexFunction::Log1p>,
      ComplexFunctionLowering<fx::Exp2Op, ComplexFunction::Exp2>,
      ComplexFunctionLowering<fx::Expm1Op, ComplexFunction::Expm1>,
      ComplexFunctionLowering<fx::ReciprocalOp, ComplexFunction::Reciprocal>,
      ComplexFunctionLowering<fx::RsqrtOp, ComplexFunction::Rsqrt>,
      ComplexActivationBackwardLowering<fx::TanhBackwardOp>,
      ComplexActivationBackwardLowering<fx::SigmoidBackwardOp>,
      ComplexPowScalarLowering, ComplexPowLowering<fx::PowOp>,
      ComplexPowLowering<fx::PowScalarOp>,
      ComplexEqualityLowering<fx::EqOp, true>,
      ComplexEqualityLowering<fx::NeOp, false>,
      ComplexEqualityLowering<fx::EqScalarOp, true>,
      ComplexEqualityLowering<fx::NeScalarOp, false>, AngleLowering>(
      patterns.getContext());
}
