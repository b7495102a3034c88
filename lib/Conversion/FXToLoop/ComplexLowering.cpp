//===- ComplexLowering.cpp - Complex numbers: views and arithmetic --------===//
//
// Part of Kiln. fx.view_as_complex and fx.view_as_real become nodes that
// pair up or split a last dimension of size 2, and add, sub, mul, div, neg,
// conj, the exponentials and logarithms, sqrt, rsqrt, reciprocal, pow, the
// trigonometric and hyperbolic functions and their inverses, sigmoid, the
// gradients of tanh and sigmoid, eq, ne,
// where, complex, polar, abs and angle become pointwise nodes on the numbers'
// parts, cumsum a real cumsum of them, and prod and cumprod trees of pairwise
// products (no loop combiner multiplies complex numbers): what rotary
// embeddings written with complex numbers (x viewed as complex, times e^{iθ},
// viewed as real) need. Inlining then fuses the views and the product into one
// kernel that never stores a complex number. Complex mm and bmm (a Fourier
// neural operator's einsum over modes) become four real products of the
// operands' parts.
//
// The arithmetic is PyTorch's (c10::complex): products from the four real
// products, quotients by Smith's method (the larger of the divisor's parts
// scales the smaller, so that squaring does not overflow).
//
//===----------------------------------------------------------------------===//

#include "ComplexLowering.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

Parts fxtoloop::getParts(OpBuilder &b, Location loc, Value element, Type dtype,
                         FloatType part) {
  if (auto complexType = dyn_cast<ComplexType>(dtype)) {
    Type from = complexType.getElementType();
    return {convertScalar(b, loc, complex::ReOp::create(b, loc, element), from,
                          part),
            convertScalar(b, loc, complex::ImOp::create(b, loc, element), from,
                          part)};
  }
  return {convertScalar(b, loc, element, dtype, part),
          makeFloat(b, loc, part, 0.0)};
}

Parts fxtoloop::emitComplex(OpBuilder &b, Location loc, ComplexKind kind,
                            Parts lhs, Parts rhs) {
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  };
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubFOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto div = [&](Value x, Value y) -> Value {
    return arith::DivFOp::create(b, loc, x, y);
  };
  auto select = [&](Value condition, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, condition, x, y);
  };
  switch (kind) {
  case ComplexKind::Add:
    return {add(lhs.re, rhs.re), add(lhs.im, rhs.im)};
  case ComplexKind::Sub:
    return {sub(lhs.re, rhs.re), sub(lhs.im, rhs.im)};
  case ComplexKind::Neg:
    return {arith::NegFOp::create(b, loc, lhs.re),
            arith::NegFOp::create(b, loc, lhs.im)};
  case ComplexKind::Mul:
    return {sub(mul(lhs.re, rhs.re), mul(lhs.im, rhs.im)),
            add(mul(lhs.re, rhs.im), mul(lhs.im, rhs.re))};
  case ComplexKind::Div: {
    // (a + bi) / (c + di). With |c| >= |d|, r = d / c and s = 1 / (c + d r)
    // give ((a + b r) s, (b - a r) s); else r = c / d, s = 1 / (d + c r) give
    // ((a r + b) s, (b r - a) s). A zero divisor divides each part by zero
    // (an infinity or NaN, as in PyTorch).
    Value a = lhs.re, bPart = lhs.im, c = rhs.re, d = rhs.im;
    Value absC = math::AbsFOp::create(b, loc, c);
    Value absD = math::AbsFOp::create(b, loc, d);
    Value byReal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, absC, absD);
    Value one = makeFloat(b, loc, a.getType(), 1.0);
    Value zero = makeFloat(b, loc, a.getType(), 0.0);
    Value ratioC = div(d, c), scaleC = div(one, add(c, mul(d, ratioC)));
    Value ratioD = div(c, d), scaleD = div(one, add(d, mul(c, ratioD)));
    Parts fromC = {mul(add(a, mul(bPart, ratioC)), scaleC),
                   mul(sub(bPart, mul(a, ratioC)), scaleC)};
    Parts fromD = {mul(add(mul(a, ratioD), bPart), scaleD),
                   mul(sub(mul(bPart, ratioD), a), scaleD)};
    Value zeroDivisor = arith::AndIOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, absC, zero),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, absD, zero));
    Parts byZero = {div(a, absC), div(bPart, absD)};
    return {select(zeroDivisor, byZero.re, select(byReal, fromC.re, fromD.re)),
            select(zeroDivisor, byZero.im, select(byReal, fromC.im, fromD.im))};
  }
  }
  llvm_unreachable("unknown complex arithmetic");
}

Parts fxtoloop::scaleByAlpha(OpBuilder &b, Location loc, Parts parts,
                             std::optional<Attribute> alpha) {
  if (!alpha)
    return parts;
  Type part = parts.re.getType();
  Value factor = makeScalar(b, loc, *alpha, part);
  return {arith::MulFOp::create(b, loc, parts.re, factor),
          arith::MulFOp::create(b, loc, parts.im, factor)};
}

FloatType fxtoloop::getPartType(Type dtype) {
  auto complexType = dyn_cast<ComplexType>(dtype);
  auto part =
      complexType ? dyn_cast<FloatType>(complexType.getElementType()) : nullptr;
  return part && (part.isF32() || part.isF64()) ? part : nullptr;
}

Type fxtoloop::getDtype(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

Value fxtoloop::createComplex(OpBuilder &b, Location loc, Parts parts) {
  return complex::CreateOp::create(b, loc, ComplexType::get(parts.re.getType()),
                                   parts.re, parts.im);
}

namespace {

/// Lowers add, sub, mul, div and neg (and their scalar forms) whose result
/// is complex; an operand may be real or complex.
template <typename OpTy, ComplexKind Kind>
struct ComplexArithmeticLowering
    : PartsLowering<OpTy, ComplexArithmeticLowering<OpTy, Kind>> {
  using PartsLowering<OpTy, ComplexArithmeticLowering>::PartsLowering;

  static constexpr bool kHasScalarOther =
      std::is_same_v<OpTy, fx::AddScalarOp> ||
      std::is_same_v<OpTy, fx::SubScalarOp> ||
      std::is_same_v<OpTy, fx::MulScalarOp> ||
      std::is_same_v<OpTy, fx::DivScalarOp>;
  static constexpr bool kHasAlpha = std::is_same_v<OpTy, fx::AddOp> ||
                                    std::is_same_v<OpTy, fx::SubOp> ||
                                    std::is_same_v<OpTy, fx::AddScalarOp> ||
                                    std::is_same_v<OpTy, fx::SubScalarOp>;

  Value compute(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts lhs = getParts(b, loc, elements[0], dtypes[0], part);
    Parts rhs;
    if constexpr (Kind != ComplexKind::Neg)
      rhs = getOtherParts<kHasScalarOther>(op, b, loc, elements, dtypes, part);
    if constexpr (kHasAlpha)
      rhs = scaleByAlpha(b, loc, rhs, op.getAlpha());
    return createComplex(b, loc, emitComplex(b, loc, Kind, lhs, rhs));
  }
};

/// Lowers fx.conj: the imaginary part negated.
struct ConjLowering : PartsLowering<fx::ConjOp, ConjLowering> {
  using PartsLowering::PartsLowering;

  Value compute(fx::ConjOp, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    return createComplex(b, loc,
                         {parts.re, arith::NegFOp::create(b, loc, parts.im)});
  }
};

/// Lowers fx.complex (real and imaginary parts) and fx.polar (absolute
/// value and angle: abs cos(angle) + i abs sin(angle), as PyTorch computes
/// it), both from broadcast real operands read as the parts' type.
template <typename OpTy>
struct ComplexFromRealsLowering
    : PartsLowering<OpTy, ComplexFromRealsLowering<OpTy>> {
  using PartsLowering<OpTy, ComplexFromRealsLowering>::PartsLowering;

  SmallVector<Type> getInputDtypes(OpTy, FloatType part) const {
    return {part, part};
  }
  Value compute(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type>, FloatType) const {
    Parts parts = {elements[0], elements[1]};
    if constexpr (std::is_same_v<OpTy, fx::PolarOp>)
      parts = {arith::MulFOp::create(b, loc, elements[0],
                                     math::CosOp::create(b, loc, elements[1])),
               arith::MulFOp::create(b, loc, elements[0],
                                     math::SinOp::create(b, loc, elements[1]))};
    return createComplex(b, loc, parts);
  }
};

/// Lowers fx.where with a complex result: each part chosen by the
/// condition (real operands have imaginary part 0).
struct ComplexWhereLowering : PartsLowering<fx::WhereOp, ComplexWhereLowering> {
  using PartsLowering::PartsLowering;

  Value compute(fx::WhereOp, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts whenTrue = getParts(b, loc, elements[1], dtypes[1], part);
    Parts whenFalse = getParts(b, loc, elements[2], dtypes[2], part);
    return createComplex(b, loc,
                         {arith::SelectOp::create(b, loc, elements[0],
                                                  whenTrue.re, whenFalse.re),
                          arith::SelectOp::create(b, loc, elements[0],
                                                  whenTrue.im, whenFalse.im)});
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Elementary functions
//===----------------------------------------------------------------------===//

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

namespace {

/// The real (`imaginary` false) or imaginary parts of `tensor`, a tensor
/// of complex numbers, as a node.
Value buildPartTensor(OpBuilder &b, Location loc, Value tensor,
                      bool imaginary) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto partType =
      type.clone(cast<ComplexType>(type.getElementType()).getElementType());
  return buildGeneratorNode(
      b, loc, partType, getSizesLike(b, loc, partType, tensor),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value number = loop::LoadOp::create(b, loc, tensor, ivs);
        return imaginary ? complex::ImOp::create(b, loc, number).getResult()
                         : complex::ReOp::create(b, loc, number).getResult();
      });
}

/// `op` on the real or imaginary parts (`imaginary`) of its complex
/// operands, with its results of complex type `complexType` of the parts'
/// type instead: a clone, which lowers as any real op of its kind. (`op`
/// has no dtype attribute, which the clone would keep.)
Operation *cloneOnParts(PatternRewriter &rewriter, Operation *op,
                        ComplexType complexType, bool imaginary) {
  assert(!op->hasAttr("dtype") && "a dtype attribute would stay complex");
  IRMapping mapping;
  for (Value operand : op->getOperands())
    if (getDtype(operand) == complexType && !mapping.contains(operand))
      mapping.map(operand,
                  buildPartTensor(rewriter, op->getLoc(), operand, imaginary));
  Operation *clone = rewriter.clone(*op, mapping);
  for (OpResult result : clone->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    if (type.getElementType() == complexType)
      result.setType(type.clone(complexType.getElementType()));
  }
  return clone;
}

/// Whether the adding scatter `op` (scatter_add, or index_put with
/// accumulate through integer indices) lowers on real parts.
bool addsWithIntegerIndices(fx::ScatterAddOp) { return true; }
bool addsWithIntegerIndices(fx::IndexPutOp op) {
  return op.getAccumulate() && llvm::none_of(op.getIndices(), [](Value index) {
           return getDtype(index).isInteger(1);
         });
}

/// Lowers the scatters that add complex numbers (scatter_add, index_put
/// with accumulate) part by part: the op on the real parts and on the
/// imaginary parts of its complex operands (clones that lower as real
/// ones), and a node that pairs the two results. (Scatters that replace
/// numbers move them whole, so that duplicate indices pick one update for
/// both parts.)
template <typename OpTy>
struct ComplexByPartsLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = dyn_cast<ComplexType>(type.getElementType());
    if (!complexType || !getPartType(complexType))
      return rewriter.notifyMatchFailure(op, "not complex of f32 or f64");
    if (!addsWithIntegerIndices(op))
      return rewriter.notifyMatchFailure(op, "not an addition by indices");
    for (Value operand : op->getOperands())
      if (isa<ComplexType>(getDtype(operand)) &&
          getDtype(operand) != complexType)
        return rewriter.notifyMatchFailure(op, "operands of other dtypes");
    Location loc = op.getLoc();
    SmallVector<Value> halves;
    for (bool imaginary : {false, true})
      halves.push_back(
          cloneOnParts(rewriter, op, complexType, imaginary)->getResult(0));
    FloatType part = getPartType(complexType);
    rewriter.replaceOp(
        op, buildBroadcastPointwise(
                rewriter, loc, type, halves, {part, part}, complexType,
                [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
                  return createComplex(b, loc, {e[0], e[1]});
                }));
    return success();
  }
};

/// Lowers fx.var and fx.var_mean of complex numbers as PyTorch defines
/// them: the variance is the sum of the parts' variances, the mean the
/// number of the parts' means (the op on each part, then a node each).
template <typename OpTy>
struct ComplexVarianceLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto complexType = dyn_cast<ComplexType>(getDtype(op.getSelf()));
    if (!complexType || !getPartType(complexType))
      return rewriter.notifyMatchFailure(op, "not complex of f32 or f64");
    Location loc = op.getLoc();
    Operation *re = cloneOnParts(rewriter, op, complexType, false);
    Operation *im = cloneOnParts(rewriter, op, complexType, true);
    FloatType part = getPartType(complexType);
    SmallVector<Value> results;
    for (auto [index, result] : llvm::enumerate(op->getResults())) {
      auto type = cast<RankedTensorType>(result.getType());
      bool isMean = isa<ComplexType>(type.getElementType());
      results.push_back(buildBroadcastPointwise(
          rewriter, loc, type, {re->getResult(index), im->getResult(index)},
          {part, part}, type.getElementType(),
          [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
            if (isMean)
              return createComplex(b, loc, {e[0], e[1]});
            return convertScalar(b, loc,
                                 arith::AddFOp::create(b, loc, e[0], e[1]),
                                 part, type.getElementType());
          }));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Lowers fx.to_copy to, from or between complex dtypes: the parts
/// converted (a real number has imaginary part 0); a complex number cast to
/// a real dtype keeps its real part, as PyTorch's cast does, and to bool
/// says whether it is nonzero.
struct ComplexToCopyLowering
    : PartsLowering<fx::ToCopyOp, ComplexToCopyLowering> {
  using PartsLowering::PartsLowering;

  bool isExplicitConversion() const { return true; }
  FloatType getPart(fx::ToCopyOp op) const {
    if (FloatType part = getPartType(getDtype(op.getResult())))
      return part;
    return getPartType(getDtype(op.getSelf()));
  }
  Value compute(fx::ToCopyOp op, OpBuilder &b, Location loc,
                ValueRange elements, ArrayRef<Type> dtypes,
                FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    Type dtype = getDtype(op.getResult());
    if (isa<ComplexType>(dtype))
      return createComplex(b, loc, parts);
    if (dtype.isInteger(1)) {
      Value zero = makeFloat(b, loc, part, 0.0);
      return arith::OrIOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, parts.re,
                                zero),
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, parts.im,
                                zero));
    }
    return convertScalar(b, loc, parts.re, part, dtype);
  }
};

/// Lowers fx.isnan and fx.isinf of complex numbers: whether either part is
/// NaN, or infinite.
template <typename OpTy, bool IsNaN>
struct ComplexClassifyLowering
    : PartsLowering<OpTy, ComplexClassifyLowering<OpTy, IsNaN>> {
  using PartsLowering<OpTy, ComplexClassifyLowering>::PartsLowering;

  FloatType getPart(OpTy op) const {
    return getPartType(getDtype(op.getSelf()));
  }
  Value compute(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    auto classify = [&](Value x) -> Value {
      if (IsNaN)
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
      return arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, x),
          makeFloat(b, loc, part, std::numeric_limits<double>::infinity()));
    };
    return arith::OrIOp::create(b, loc, classify(parts.re), classify(parts.im));
  }
};

/// Lowers fx.sum of complex numbers into another complex dtype: a cast
/// (fx.to_copy), then the sum in that dtype.
struct ComplexSumInDtypeLowering : OpRewritePattern<fx::SumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SumOp op,
                                PatternRewriter &rewriter) const override {
    Type dtype = getDtype(op.getResult());
    if (!isa<ComplexType>(getDtype(op.getSelf())) || !op.getDtypeAttr() ||
        dtype == getDtype(op.getSelf()))
      return rewriter.notifyMatchFailure(op, "not a complex sum to convert");
    auto selfType = cast<RankedTensorType>(op.getSelf().getType());
    Value converted =
        fx::ToCopyOp::create(rewriter, op.getLoc(), selfType.clone(dtype),
                             op.getSelf(), op.getDtypeAttr());
    rewriter.modifyOpInPlace(op, [&] {
      op.getSelfMutable().assign(converted);
      op.removeDtypeAttr();
    });
    return success();
  }
};

/// The parts' type of `op`'s complex result where every operand has its
/// dtype (complex of f32 or f64), else null.
FloatType getUniformPartType(Operation *op) {
  Type dtype = getDtype(op->getResult(0));
  FloatType part = getPartType(dtype);
  if (!part || llvm::any_of(op->getOperands(), [&](Value operand) {
        return getDtype(operand) != dtype;
      }))
    return nullptr;
  return part;
}

/// Lowers fx.addmm and fx.baddbmm of complex numbers: the complex product
/// (fx.mm or fx.bmm, four real ones), then beta self + alpha product on the
/// parts (self ignored for a zero beta, as PyTorch does).
template <typename OpTy, typename ProductOp>
struct ComplexAddMatmulLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    FloatType part = getUniformPartType(op);
    if (!part)
      return rewriter.notifyMatchFailure(op, "not complex of one dtype");
    Location loc = op.getLoc();
    Value product = ProductOp::create(rewriter, loc, type, op->getOperand(1),
                                      op->getOperand(2));
    std::optional<Attribute> beta = op.getBeta(), alpha = op.getAlpha();
    bool zeroBeta = isZeroScalar(beta);
    SmallVector<Value> inputs = {product};
    if (!zeroBeta)
      inputs.push_back(op.getSelf());
    Type dtype = type.getElementType();
    rewriter.replaceOp(
        op, buildBroadcastPointwise(
                rewriter, loc, type, inputs,
                SmallVector<Type>(inputs.size(), dtype), dtype,
                [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
                  Parts scaled = scaleByAlpha(
                      b, loc, getParts(b, loc, e[0], dtype, part), alpha);
                  if (zeroBeta)
                    return createComplex(b, loc, scaled);
                  Parts self = scaleByAlpha(
                      b, loc, getParts(b, loc, e[1], dtype, part), beta);
                  return createComplex(
                      b, loc,
                      emitComplex(b, loc, ComplexKind::Add, self, scaled));
                }));
    return success();
  }
};

/// Lowers fx.mm and fx.bmm of complex matrices as four real products,
/// (A_r B_r - A_i B_i) + i (A_r B_i + A_i B_r) as a complex BLAS computes
/// them: nodes that take the operands' parts, fx products of those (which
/// lower as any real product), and a node that combines them.
template <typename OpTy> struct ComplexMatmulLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    FloatType part = getUniformPartType(op);
    if (!part)
      return rewriter.notifyMatchFailure(op, "not complex of one dtype");
    Location loc = op.getLoc();
    auto getPart = [&](Value matrix, bool imaginary) {
      return buildPartTensor(rewriter, loc, matrix, imaginary);
    };
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    Value lhsRe = getPart(lhs, false), lhsIm = getPart(lhs, true);
    Value rhsRe = getPart(rhs, false), rhsIm = getPart(rhs, true);
    auto productType = type.clone(part);
    auto product = [&](Value a, Value b) -> Value {
      return OpTy::create(rewriter, loc, productType, a, b);
    };
    SmallVector<Value> products = {product(lhsRe, rhsRe), product(lhsIm, rhsIm),
                                   product(lhsRe, rhsIm),
                                   product(lhsIm, rhsRe)};
    Value result = buildBroadcastPointwise(
        rewriter, loc, type, products, SmallVector<Type>(4, part),
        type.getElementType(),
        [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
          return createComplex(b, loc,
                               {arith::SubFOp::create(b, loc, e[0], e[1]),
                                arith::AddFOp::create(b, loc, e[2], e[3])});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.view_as_complex: element i is (x[i, 0], x[i, 1]).
struct ViewAsComplexLowering : OpRewritePattern<fx::ViewAsComplexOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ViewAsComplexOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = cast<ComplexType>(type.getElementType());
    Value self = op.getSelf();
    Location loc = op.getLoc();
    Value result = buildGeneratorNode(
        rewriter, loc, type, getSizesLike(rewriter, loc, type, self),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          auto partAt = [&](int64_t index) -> Value {
            SmallVector<Value> indices(ivs);
            indices.push_back(arith::ConstantIndexOp::create(b, loc, index));
            return loop::LoadOp::create(b, loc, self, indices);
          };
          return complex::CreateOp::create(b, loc, complexType, partAt(0),
                                           partAt(1));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.view_as_real: element (i, k) is the real part of self[i] for
/// k = 0, its imaginary part for k = 1.
struct ViewAsRealLowering : OpRewritePattern<fx::ViewAsRealOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ViewAsRealOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value self = op.getSelf();
    Location loc = op.getLoc();
    Value result = buildGeneratorNode(
        rewriter, loc, type, getSizesLike(rewriter, loc, type, self),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value number = loop::LoadOp::create(b, loc, self, ivs.drop_back());
          Value isReal = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, ivs.back(),
              arith::ConstantIndexOp::create(b, loc, 0));
          return arith::SelectOp::create(b, loc, isReal,
                                         complex::ReOp::create(b, loc, number),
                                         complex::ImOp::create(b, loc, number));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A complex cumsum is the cumsum of both parts along the same dimension:
/// fx.view_as_real, a real cumsum, fx.view_as_complex, which lower (and
/// fuse) as any others.
struct ComplexCumsumLowering : OpRewritePattern<fx::CumsumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CumsumOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = dyn_cast<ComplexType>(type.getElementType());
    if (!complexType || op.getSelf().getType() != type)
      return rewriter.notifyMatchFailure(op, "not a complex cumsum");
    // A number scans as itself; its parts must not be summed together.
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    SmallVector<int64_t> shape(type.getShape());
    shape.push_back(2);
    auto partsType = RankedTensorType::get(shape, complexType.getElementType());
    int64_t dim = op.getDim();
    if (dim < 0)
      dim += type.getRank();
    Value parts = fx::ViewAsRealOp::create(rewriter, op.getLoc(), partsType,
                                           op.getSelf());
    Value sums = fx::CumsumOp::create(rewriter, op.getLoc(), partsType, parts,
                                      dim, /*dtype=*/nullptr);
    rewriter.replaceOpWithNewOp<fx::ViewAsComplexOp>(op, type, sums);
    return success();
  }
};

/// The product of complex numbers `lhs` and `rhs` (of one complex type), as
/// c10::complex computes it.
Value multiplyComplex(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type dtype = lhs.getType();
  auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
  return createComplex(b, loc,
                       emitComplex(b, loc, ComplexKind::Mul,
                                   getParts(b, loc, lhs, dtype, part),
                                   getParts(b, loc, rhs, dtype, part)));
}

/// `condition ? onTrue : onFalse` of complex numbers, part by part.
Value selectComplex(OpBuilder &b, Location loc, Value condition, Value onTrue,
                    Value onFalse) {
  Type dtype = onTrue.getType();
  auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
  Parts x = getParts(b, loc, onTrue, dtype, part);
  Parts y = getParts(b, loc, onFalse, dtype, part);
  return createComplex(
      b, loc,
      {arith::SelectOp::create(b, loc, condition, x.re, y.re),
       arith::SelectOp::create(b, loc, condition, x.im, y.im)});
}

/// Whether `op` (a prod or cumprod) reads and makes complex numbers, of
/// rank one or more.
bool isComplexProduct(Operation *op) {
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  return getPartType(type.getElementType()) && type.getRank() > 0 &&
         getPartType(cast<RankedTensorType>(op->getResult(0).getType())
                         .getElementType());
}

/// `value`, complex numbers, as numbers of complex type `dtype` (a `dtype`
/// argument's conversion, complex64 to complex128 say).
Value convertComplexElements(OpBuilder &b, Location loc, Value value,
                             Type dtype) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == dtype)
    return value;
  auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
  return buildGeneratorNode(
      b, loc, type.clone(dtype), getSizesLike(b, loc, type.clone(dtype), value),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value number = loop::LoadOp::create(b, loc, value, ivs);
        return createComplex(
            b, loc, getParts(b, loc, number, type.getElementType(), part));
      });
}

/// A dynamic dimension's product runs in chunks of this many numbers, each
/// multiplied in turn by one element of a node; kDynamicProductStages such
/// nodes take any length up to 32^8 = 2^40 numbers (8 TB of complex64,
/// more than any device holds).
constexpr int64_t kDynamicProductChunk = 32;
constexpr int kDynamicProductStages = 8;

/// Lowers a complex fx.prod or fx.prod_dim_int along each reduced dimension
/// in turn: a static one as a tree of pairwise products, ⌈log2 n⌉ nodes,
/// each halving the dimension (an odd last element passes through; an
/// empty dimension's product is 1); a dynamic one in kDynamicProductStages
/// nodes, each multiplying chunks of kDynamicProductChunk numbers (the
/// last one's size 1 is static). Then a view without the reduced
/// dimensions unless `keepdim`. The products associate otherwise than
/// PyTorch's loop, within rounding.
template <typename OpTy> struct ComplexProdLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!isComplexProduct(op))
      return rewriter.notifyMatchFailure(op, "not a complex product");
    Location loc = op.getLoc();
    Type dtype = cast<RankedTensorType>(op.getType()).getElementType();
    Value current = convertComplexElements(rewriter, loc, op.getSelf(), dtype);
    auto type = cast<RankedTensorType>(current.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> dims;
    if (auto dim = op->template getAttrOfType<IntegerAttr>("dim"))
      dims.push_back(normalizeDim(dim.getInt(), rank));
    else
      dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    SmallVector<int64_t> shape(type.getShape());
    auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
    for (int64_t dim : dims) {
      if (ShapedType::isDynamic(shape[dim])) {
        for (int stage = 0; stage < kDynamicProductStages; ++stage) {
          Value source = current;
          Value size = getDimSize(rewriter, loc, source, dim);
          Value chunk = arith::ConstantIndexOp::create(rewriter, loc,
                                                       kDynamicProductChunk);
          bool last = stage + 1 == kDynamicProductStages;
          shape[dim] = last ? 1 : ShapedType::kDynamic;
          auto chunksType = RankedTensorType::get(shape, dtype);
          // ⌈n / 32⌉ chunks. Dynamic sizes are at least 2 (their guards'
          // least value), so there is one at least, and each reads an
          // element.
          Value chunks = arith::CeilDivUIOp::create(rewriter, loc, size, chunk);
          SmallVector<Value> sizes =
              collectDynamicSizes(chunksType, [&](int64_t d) -> Value {
                return d == dim ? chunks : getDimSize(rewriter, loc, source, d);
              });
          current = buildGeneratorNode(
              rewriter, loc, chunksType, sizes,
              [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
                auto index = [&](int64_t value) -> Value {
                  return arith::ConstantIndexOp::create(b, loc, value);
                };
                Value lastIndex = arith::SubIOp::create(b, loc, size, index(1));
                Value first = arith::MulIOp::create(
                    b, loc, ivs[dim], index(kDynamicProductChunk));
                Value product = createComplex(b, loc,
                                              {makeFloat(b, loc, part, 1.0),
                                               makeFloat(b, loc, part, 0.0)});
                for (int64_t k = 0; k < kDynamicProductChunk; ++k) {
                  Value at = arith::AddIOp::create(b, loc, first, index(k));
                  SmallVector<Value> indices(ivs);
                  indices[dim] = arith::MinUIOp::create(b, loc, at, lastIndex);
                  Value factor = loop::LoadOp::create(b, loc, source, indices);
                  Value inside = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::ult, at, size);
                  // The first number as it is (1 · z would turn an
                  // infinite part's 0 · inf into NaN).
                  product = selectComplex(
                      b, loc, inside,
                      k == 0 ? factor
                             : multiplyComplex(b, loc, product, factor),
                      product);
                }
                return product;
              });
        }
        continue;
      }
      while (shape[dim] != 1) {
        int64_t size = shape[dim];
        shape[dim] = size == 0 ? 1 : (size + 1) / 2;
        auto halfType = RankedTensorType::get(shape, dtype);
        Value source = current;
        current = buildGeneratorNode(
            rewriter, loc, halfType,
            getSizesLike(rewriter, loc, halfType, source),
            [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
              if (size == 0)
                return createComplex(b, loc,
                                     {makeFloat(b, loc, part, 1.0),
                                      makeFloat(b, loc, part, 0.0)});
              auto index = [&](int64_t value) -> Value {
                return arith::ConstantIndexOp::create(b, loc, value);
              };
              SmallVector<Value> first(ivs), second(ivs);
              first[dim] = arith::MulIOp::create(b, loc, ivs[dim], index(2));
              Value next = arith::AddIOp::create(b, loc, first[dim], index(1));
              second[dim] =
                  arith::MinUIOp::create(b, loc, next, index(size - 1));
              Value lhs = loop::LoadOp::create(b, loc, source, first);
              Value product = multiplyComplex(
                  b, loc, lhs, loop::LoadOp::create(b, loc, source, second));
              if (size % 2 == 0)
                return product;
              Value paired = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, next, index(size));
              return selectComplex(b, loc, paired, product, lhs);
            });
      }
    }
    auto resultType = cast<RankedTensorType>(op.getType());
    if (resultType == current.getType()) { // keepdim
      rewriter.replaceOp(op, current);
      return success();
    }
    SmallVector<int64_t> keptDims;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d))
        keptDims.push_back(d);
    SmallVector<Value> resultSizes =
        collectDynamicSizes(resultType, [&](int64_t d) {
          return getDimSize(rewriter, loc, current, keptDims[d]);
        });
    rewriter.replaceOp(
        op, buildIndexMapNode(rewriter, loc, current, resultType, resultSizes,
                              [&](OpBuilder &b, Location loc, ValueRange ivs) {
                                SmallVector<Value> indices;
                                Value zero =
                                    arith::ConstantIndexOp::create(b, loc, 0);
                                for (int64_t d = 0, kept = 0; d < rank; ++d)
                                  indices.push_back(llvm::is_contained(dims, d)
                                                        ? zero
                                                        : ivs[kept++]);
                                return indices;
                              }));
    return success();
  }
};

/// The cumulative product of complex `source` along its dynamic dimension
/// `dim`, in chunks of kDynamicProductChunk: a node of each element's
/// product from its chunk's start, the chunks' products (each chunk's
/// last), their cumulative product (the same way, one level deeper; at
/// the deepest level, kDynamicProductStages, one chunk is all there is),
/// and a node that multiplies each element's by the product of the chunks
/// before.
Value emitChunkedCumprod(OpBuilder &b, Location loc, Value source, int64_t dim,
                         int level) {
  auto type = cast<RankedTensorType>(source.getType());
  Value size = getDimSize(b, loc, source, dim);
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value chunk = index(b, kDynamicProductChunk);
  auto chunkOf = [&](OpBuilder &b, Value i) -> Value {
    return arith::DivUIOp::create(b, loc, i, chunk);
  };
  SmallVector<Value> sizes = getSizesLike(b, loc, type, source);
  Value within = buildGeneratorNode(
      b, loc, type, sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value i = ivs[dim];
        Value start = arith::MulIOp::create(b, loc, chunkOf(b, i), chunk);
        SmallVector<Value> indices(ivs);
        indices[dim] = start;
        Value product = loop::LoadOp::create(b, loc, source, indices);
        for (int64_t k = 1; k < kDynamicProductChunk; ++k) {
          Value at = arith::AddIOp::create(b, loc, start, index(b, k));
          indices[dim] = arith::MinUIOp::create(b, loc, at, i);
          Value factor = loop::LoadOp::create(b, loc, source, indices);
          Value takes =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, at, i);
          product = selectComplex(
              b, loc, takes, multiplyComplex(b, loc, product, factor), product);
        }
        return product;
      });
  if (level + 1 == kDynamicProductStages)
    return within;
  Value chunks = arith::CeilDivUIOp::create(b, loc, size, chunk);
  SmallVector<Value> chunkSizes =
      collectDynamicSizes(type, [&](int64_t d) -> Value {
        return d == dim ? chunks : getDimSize(b, loc, source, d);
      });
  Value lastIndex = arith::SubIOp::create(b, loc, size, index(b, 1));
  Value totals = buildGeneratorNode(
      b, loc, type, chunkSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        SmallVector<Value> indices(ivs);
        Value end = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, ivs[dim], chunk),
            index(b, kDynamicProductChunk - 1));
        indices[dim] = arith::MinUIOp::create(b, loc, end, lastIndex);
        return loop::LoadOp::create(b, loc, within, indices);
      });
  Value scanned = emitChunkedCumprod(b, loc, totals, dim, level + 1);
  return buildGeneratorNode(
      b, loc, type, sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value own = loop::LoadOp::create(b, loc, within, ivs);
        Value c = chunkOf(b, ivs[dim]);
        SmallVector<Value> before(ivs);
        before[dim] = arith::SubIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, c, index(b, 1)),
            index(b, 1));
        Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c,
                                            index(b, 0));
        return selectComplex(
            b, loc, first, own,
            multiplyComplex(
                b, loc, loop::LoadOp::create(b, loc, scanned, before), own));
      });
}

/// Lowers a complex fx.cumprod: along a static dimension as a scan of
/// ⌈log2 n⌉ nodes (Hillis and Steele's): after the node of step k, element
/// i holds the product of the up to 2k elements ending at i; along a
/// dynamic one in chunks (emitChunkedCumprod).
struct ComplexCumprodLowering : OpRewritePattern<fx::CumprodOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CumprodOp op,
                                PatternRewriter &rewriter) const override {
    // A number scans as itself.
    if (op.getSelf().getType() == op.getType() &&
        getPartType(getDtype(op.getSelf())) &&
        cast<RankedTensorType>(op.getType()).getRank() == 0) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    if (!isComplexProduct(op))
      return rewriter.notifyMatchFailure(op, "not a complex cumprod");
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value current = convertComplexElements(rewriter, loc, op.getSelf(),
                                           type.getElementType());
    int64_t dim = normalizeDim(op.getDim(), type.getRank());
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size)) {
      rewriter.replaceOp(op, emitChunkedCumprod(rewriter, loc, current, dim,
                                                /*level=*/0));
      return success();
    }
    for (int64_t step = 1; step < size; step *= 2) {
      Value source = current;
      current = buildGeneratorNode(
          rewriter, loc, type, getSizesLike(rewriter, loc, type, source),
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value stepValue = arith::ConstantIndexOp::create(b, loc, step);
            SmallVector<Value> earlier(ivs);
            // max(i, step) - step: in range where i < step, which keeps a[i].
            earlier[dim] = arith::SubIOp::create(
                b, loc, arith::MaxUIOp::create(b, loc, ivs[dim], stepValue),
                stepValue);
            Value element = loop::LoadOp::create(b, loc, source, ivs);
            Value product = multiplyComplex(
                b, loc, element, loop::LoadOp::create(b, loc, source, earlier));
            Value reaches = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::uge, ivs[dim], stepValue);
            return selectComplex(b, loc, reaches, product, element);
          });
    }
    rewriter.replaceOp(op, current);
    return success();
  }
};

} // namespace

void fxtoloop::populateComplexLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<
      ComplexArithmeticLowering<fx::AddOp, ComplexKind::Add>,
      ComplexArithmeticLowering<fx::SubOp, ComplexKind::Sub>,
      ComplexArithmeticLowering<fx::MulOp, ComplexKind::Mul>,
      ComplexArithmeticLowering<fx::DivOp, ComplexKind::Div>,
      ComplexArithmeticLowering<fx::NegOp, ComplexKind::Neg>,
      ComplexArithmeticLowering<fx::AddScalarOp, ComplexKind::Add>,
      ComplexArithmeticLowering<fx::SubScalarOp, ComplexKind::Sub>,
      ComplexArithmeticLowering<fx::MulScalarOp, ComplexKind::Mul>,
      ComplexArithmeticLowering<fx::DivScalarOp, ComplexKind::Div>,
      ViewAsComplexLowering, ViewAsRealLowering, ConjLowering,
      ComplexFromRealsLowering<fx::ComplexOp>,
      ComplexFromRealsLowering<fx::PolarOp>, ComplexMatmulLowering<fx::MmOp>,
      ComplexMatmulLowering<fx::BmmOp>, ComplexByPartsLowering<fx::IndexPutOp>,
      ComplexByPartsLowering<fx::ScatterAddOp>,
      ComplexVarianceLowering<fx::VarOp>,
      ComplexVarianceLowering<fx::VarMeanOp>, ComplexToCopyLowering,
      ComplexClassifyLowering<fx::IsnanOp, true>,
      ComplexClassifyLowering<fx::IsinfOp, false>, ComplexSumInDtypeLowering,
      ComplexAddMatmulLowering<fx::AddmmOp, fx::MmOp>,
      ComplexAddMatmulLowering<fx::BaddbmmOp, fx::BmmOp>, ComplexWhereLowering,
      ComplexCumsumLowering, ComplexProdLowering<fx::ProdOp>,
      ComplexProdLowering<fx::ProdDimIntOp>, ComplexCumprodLowering>(
      patterns.getContext());
}
