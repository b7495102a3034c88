//===- MathLowering.cpp - Elementwise math of Core ATen -------------------===//
//
// Part of Kiln. The elementwise ops beyond the common activations: inverse
// and hyperbolic trigonometry, rounding, sign and classification, powers
// with tensor exponents or a scalar base, tensor clamps, lerp, addcmul,
// addcdiv, erfinv and elu's gradient. Each is one loop.pointwise whose body
// computes as PyTorch's CPU kernels do. asinh, acosh and atanh are written
// out here: math-expand-ops' forms lose all digits near 0 (and acosh's
// near 1) and overflow to inf past the square root of the largest float.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// A unary op computing in a floating dtype (integral inputs become the
/// default float) with one math-dialect op.
template <typename OpTy, typename MathOp>
struct FloatMathLowering
    : ElementwiseLowering<OpTy, FloatMathLowering<OpTy, MathOp>> {
  using ElementwiseLowering<OpTy, FloatMathLowering>::ElementwiseLowering;
  Value computeElement(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                       Type) const {
    return MathOp::create(b, loc, elements[0]);
  }
};

/// A unary op computing in a floating dtype (integral inputs become the
/// default float) with a function that Kiln writes out (`Emit`).
template <typename OpTy, Value (*Emit)(OpBuilder &, Location, Value)>
struct FloatFunctionLowering
    : ElementwiseLowering<OpTy, FloatFunctionLowering<OpTy, Emit>> {
  using ElementwiseLowering<OpTy, FloatFunctionLowering>::ElementwiseLowering;
  Value computeElement(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                       Type) const {
    return Emit(b, loc, elements[0]);
  }
};

/// floor, ceil, round (half to even) and trunc: the identity on integers.
template <typename OpTy, typename MathOp>
struct RoundingLowering
    : ElementwiseLowering<OpTy, RoundingLowering<OpTy, MathOp>> {
  using ElementwiseLowering<OpTy, RoundingLowering>::ElementwiseLowering;
  Value computeElement(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    if (!isa<FloatType>(dtype))
      return elements[0];
    return MathOp::create(b, loc, elements[0]);
  }
};

/// fx.frac: `x - trunc(x)` (NaN for infinities, as in PyTorch).
struct FracLowering : ElementwiseLowering<fx::FracOp, FracLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::FracOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type) const {
    Value x = elements[0];
    return arith::SubFOp::create(b, loc, x, math::TruncOp::create(b, loc, x));
  }
};

/// fx.sign: `(0 < x) - (x < 0)`, PyTorch's formula, so NaN and -0 give +0.
struct SignLowering : ElementwiseLowering<fx::SignOp, SignLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::SignOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value x = elements[0];
    Type type = loop::getScalarType(dtype);
    if (dtype.isInteger(1))
      return x;
    Value positive, negative;
    if (isa<FloatType>(dtype)) {
      Value zero = makeFloat(b, loc, type, 0.0);
      positive =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
      negative =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
      return arith::SubFOp::create(
          b, loc, arith::UIToFPOp::create(b, loc, type, positive),
          arith::UIToFPOp::create(b, loc, type, negative));
    }
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
    if (isUnsignedOrBool(dtype))
      return arith::ExtUIOp::create(
          b, loc, type,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero));
    positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
    return arith::SubIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, type, positive),
        arith::ExtUIOp::create(b, loc, type, negative));
  }
};

/// fx.isnan and fx.isinf: a test of the operand in its own dtype, a bool
/// result (always false for integers).
template <typename OpTy, bool IsNaN>
struct ClassifyLowering
    : ElementwiseLowering<OpTy, ClassifyLowering<OpTy, IsNaN>> {
  using ElementwiseLowering<OpTy, ClassifyLowering>::ElementwiseLowering;
  Type getComputeDtype(OpTy op) const {
    return op.getSelf().getType().getElementType();
  }
  Type getBodyDtype(OpTy op, Type) const {
    return op.getType().getElementType();
  }
  Value computeElement(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Value x = elements[0];
    if (!isa<FloatType>(dtype))
      return arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    if constexpr (IsNaN)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value infinity = makeFloat(b, loc, loop::getScalarType(dtype),
                               std::numeric_limits<double>::infinity());
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                 math::AbsFOp::create(b, loc, x), infinity);
  }
};

/// The result is a float or an integer (complex powers lower elsewhere).
template <typename OpTy> static LogicalResult checkRealResult(OpTy op) {
  return success(!isa<ComplexType>(op.getType().getElementType()));
}

/// `base ** exponent` of integers of PyTorch dtype `dtype`, as c10's powi:
/// exponentiation by squaring over the exponent's bits (unrolled, so no
/// loop per element; products wrap), and for a negative exponent 1 for a
/// base of 1, ±1 for -1 and 0 for the rest. Floats use powf.
static Value emitPower(OpBuilder &b, Location loc, Value base, Value exponent,
                       Type dtype) {
  if (isa<FloatType>(dtype))
    return math::PowFOp::create(b, loc, base, exponent);
  Type type = base.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
  };
  Value result = constant(1);
  Value square = base;
  bool isSigned = !isUnsignedOrBool(dtype);
  for (unsigned bit = 0; bit + (isSigned ? 1 : 0) < width; ++bit) {
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, exponent, constant(int64_t(1) << bit)),
        constant(0));
    result = arith::SelectOp::create(
        b, loc, set, arith::MulIOp::create(b, loc, result, square), result);
    square = arith::MulIOp::create(b, loc, square, square);
  }
  if (!isSigned)
    return result;
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         exponent, constant(0));
  Value one = constant(1);
  Value isOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, base, one);
  Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           base, constant(-1));
  Value odd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, exponent, one), constant(0));
  Value ofMinusOne = arith::SelectOp::create(b, loc, odd, constant(-1), one);
  Value reciprocal = arith::SelectOp::create(
      b, loc, isOne, one,
      arith::SelectOp::create(b, loc, isMinusOne, ofMinusOne, constant(0)));
  return arith::SelectOp::create(b, loc, negative, reciprocal, result);
}

/// fx.pow: `self ** exponent`.
struct PowLowering : ElementwiseLowering<fx::PowOp, PowLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::PowOp op) const {
    return checkRealResult(op);
  }
  Value computeElement(fx::PowOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    return emitPower(b, loc, elements[0], elements[1], dtype);
  }
};

/// fx.pow_scalar: `self ** exponent` with a scalar base.
struct PowScalarBaseLowering
    : ElementwiseLowering<fx::PowScalarOp, PowScalarBaseLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::PowScalarOp op) const {
    return checkRealResult(op);
  }
  Value computeElement(fx::PowScalarOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value base = makeScalar(b, loc, op.getSelf(), dtype);
    return emitPower(b, loc, base, elements[0], dtype);
  }
};

/// fx.clamp_tensor: `min(max(self, min), max)` with broadcast bounds, either
/// absent.
struct ClampTensorLowering
    : ElementwiseLowering<fx::ClampTensorOp, ClampTensorLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::ClampTensorOp op) const {
    return success(!op.getType().getElementType().isInteger(1));
  }
  Value computeElement(fx::ClampTensorOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    unsigned next = 1;
    Value lower = op.getMin() ? elements[next++] : Value();
    Value upper = op.getMax() ? elements[next++] : Value();
    return emitClamp(b, loc, elements[0], lower, upper, dtype);
  }
};

/// PyTorch's lerp: `self + weight * (end - self)` for |weight| < 0.5, else
/// `end - (end - self) * (1 - weight)`, exact at both ends.
static Value emitLerp(OpBuilder &b, Location loc, Value self, Value end,
                      Value weight, Type type) {
  Value difference = arith::SubFOp::create(b, loc, end, self);
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                      math::AbsFOp::create(b, loc, weight),
                                      makeFloat(b, loc, type, 0.5));
  Value fromSelf = arith::AddFOp::create(
      b, loc, self, arith::MulFOp::create(b, loc, weight, difference));
  Value fromEnd = arith::SubFOp::create(
      b, loc, end,
      arith::MulFOp::create(
          b, loc, difference,
          arith::SubFOp::create(b, loc, makeFloat(b, loc, type, 1.0), weight)));
  return arith::SelectOp::create(b, loc, small, fromSelf, fromEnd);
}

struct LerpLowering : ElementwiseLowering<fx::LerpOp, LerpLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::LerpOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    return emitLerp(b, loc, elements[0], elements[1], elements[2],
                    loop::getScalarType(dtype));
  }
};

struct LerpScalarLowering
    : ElementwiseLowering<fx::LerpScalarOp, LerpScalarLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::LerpScalarOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    return emitLerp(b, loc, elements[0], elements[1],
                    makeScalar(b, loc, op.getWeight(), dtype),
                    loop::getScalarType(dtype));
  }
};

/// fx.addcmul (`self + value * tensor1 * tensor2`) and fx.addcdiv (`self +
/// value * (tensor1 / tensor2)`, floats only), in PyTorch's order.
template <typename OpTy, bool Divide>
struct AddcLowering : ElementwiseLowering<OpTy, AddcLowering<OpTy, Divide>> {
  using ElementwiseLowering<OpTy, AddcLowering>::ElementwiseLowering;
  LogicalResult checkSupported(OpTy op) const {
    Type dtype = op.getType().getElementType();
    return success(!dtype.isInteger(1) && (!Divide || isa<FloatType>(dtype)));
  }
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Value self = elements[0], first = elements[1], second = elements[2];
    Value value = op.getValue()
                      ? makeScalar(b, loc, *op.getValue(), dtype)
                      : makeScalar(b, loc, b.getI64IntegerAttr(1), dtype);
    if (!isa<FloatType>(dtype)) {
      Value product = arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, value, first), second);
      return arith::AddIOp::create(b, loc, self, product);
    }
    Value scaled =
        Divide
            ? arith::MulFOp::create(
                  b, loc, value, arith::DivFOp::create(b, loc, first, second))
            : arith::MulFOp::create(
                  b, loc, arith::MulFOp::create(b, loc, value, first), second);
    return arith::AddFOp::create(b, loc, self, scaled);
  }
};

/// fx.erfinv: Giles' single-precision approximation ("Approximating the
/// erfinv function", GPU Computing Gems, 2011), a polynomial in
/// w = -log(1 - x²) on each of two ranges, with ±1 mapped to ±inf. In f64,
/// two Newton steps on erf(r) = x refine it (as PyTorch's erfinv refines its
/// own first guess): each squares the relative error, about 1e-7 at first.
struct ErfinvLowering : ElementwiseLowering<fx::ErfinvOp, ErfinvLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::ErfinvOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Type type = loop::getScalarType(dtype);
    Value x = elements[0];
    auto constant = [&](double value) {
      return makeFloat(b, loc, type, value);
    };
    auto horner = [&](Value w, ArrayRef<double> coefficients) {
      Value p = constant(coefficients.front());
      for (double c : coefficients.drop_front())
        p = arith::AddFOp::create(b, loc, constant(c),
                                  arith::MulFOp::create(b, loc, p, w));
      return p;
    };
    Value one = constant(1.0);
    Value w = arith::NegFOp::create(
        b, loc,
        math::LogOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, one, x),
                                  arith::AddFOp::create(b, loc, one, x))));
    Value central = horner(arith::SubFOp::create(b, loc, w, constant(2.5)),
                           {2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                            -4.39150654e-06, 0.00021858087, -0.00125372503,
                            -0.00417768164, 0.246640727, 1.50140941});
    Value tail = horner(
        arith::SubFOp::create(b, loc, math::SqrtOp::create(b, loc, w),
                              constant(3.0)),
        {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
    Value inCentre = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, w,
                                           constant(5.0));
    Value p = arith::SelectOp::create(b, loc, inCentre, central, tail);
    Value result = arith::MulFOp::create(b, loc, p, x);
    if (type.isF64()) {
      // r -= (erf(r) - x) / erf'(r), erf'(r) = 2/sqrt(pi) e^{-r²}.
      Value slope = constant(2.0 / std::sqrt(M_PI));
      for (int step = 0; step < 2; ++step) {
        Value residual = arith::SubFOp::create(
            b, loc, math::ErfOp::create(b, loc, result), x);
        Value derivative = arith::MulFOp::create(
            b, loc, slope,
            math::ExpOp::create(
                b, loc,
                arith::NegFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, result, result))));
        result = arith::SubFOp::create(
            b, loc, result,
            arith::DivFOp::create(b, loc, residual, derivative));
      }
    }
    // At ±1 the polynomial meets inf * inf of the wrong sign.
    Value atEnd = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        math::AbsFOp::create(b, loc, x), one);
    Value infinite = arith::MulFOp::create(
        b, loc, x, constant(std::numeric_limits<double>::infinity()));
    return arith::SelectOp::create(b, loc, atEnd, infinite, result);
  }
};

/// fx.elu_backward: `grad * scale` above 0; below, `grad * input_scale *
/// (result + alpha * scale)` from elu's result or `grad * input_scale *
/// alpha * scale * exp(x * input_scale)` from its input, as PyTorch.
struct EluBackwardLowering
    : ElementwiseLowering<fx::EluBackwardOp, EluBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::EluBackwardOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Type type = loop::getScalarType(dtype);
    Value grad = elements[0], x = elements[1];
    double negativeScale =
        op.getAlpha().convertToDouble() * op.getScale().convertToDouble();
    double inputScale = op.getInputScale().convertToDouble();
    auto constant = [&](double value) {
      return makeFloat(b, loc, type, value);
    };
    Value negativeSlope;
    if (op.getIsResult())
      negativeSlope = arith::MulFOp::create(
          b, loc, constant(inputScale),
          arith::AddFOp::create(b, loc, x, constant(negativeScale)));
    else
      negativeSlope = arith::MulFOp::create(
          b, loc, constant(inputScale * negativeScale),
          math::ExpOp::create(
              b, loc, arith::MulFOp::create(b, loc, x, constant(inputScale))));
    Value isNegative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                             x, constant(0.0));
    Value slope =
        arith::SelectOp::create(b, loc, isNegative, negativeSlope,
                                constant(op.getScale().convertToDouble()));
    return arith::MulFOp::create(b, loc, grad, slope);
  }
};

} // namespace

// Φ(x) from the upper tail q(z) = 0.5 erfc(z / sqrt 2) at z = |x|, as
//   q(z) = exp(-z^2 / 2) t P(t),  t = 1 / (1 + p z),
// the form of Abramowitz and Stegun 7.1.26: exp carries q's fall, and
// t P(t) is smooth and bounded on [0, inf). p and P's coefficients (degree
// 7) minimise q's largest relative error on [0, 14] (utils/fit-normal-cdf.py),
// 9e-8 before f32 rounding. With f32 arithmetic x Φ(x) stays within 4e-7 of
// the exact GELU over all f32 (PyTorch's f32 formula: the same), and within a
// relative 2e-6 where GELU's magnitude exceeds 1e-6 (PyTorch's loses digits
// to cancellation in 1 + erf for x < -3). On GPUs it costs one exp2, one
// reciprocal and eight FMAs; libdevice's erf alone costs two dozen
// instructions, selecting between two polynomials coefficient by coefficient.
static constexpr double kNormalTailScale = 0.304500014;
static constexpr double kNormalTailCoefficients[] = {
    0.0367430858, -0.153995574, 0.188692868, -0.0403104089,
    0.122159049,  0.102960899,  0.122312509, 0.121437617};

Value fxtoloop::emitNormalCdfF32(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  assert(type.isF32() && "the tail's coefficients are for f32");
  auto constant = [&](double value) { return makeFloat(b, loc, type, value); };
  Value one = constant(1.0);
  Value z = math::AbsFOp::create(b, loc, x);
  // The reciprocal's last bit does not matter here: GPUs may approximate it.
  Value t = arith::DivFOp::create(
      b, loc, one,
      arith::AddFOp::create(
          b, loc, one,
          arith::MulFOp::create(b, loc, constant(kNormalTailScale), z)),
      arith::FastMathFlags::afn);
  Value p = constant(kNormalTailCoefficients[0]);
  for (double c : ArrayRef(kNormalTailCoefficients).drop_front())
    p = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, p, t),
                              constant(c));
  Value density = math::ExpOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, constant(-0.5),
                            arith::MulFOp::create(b, loc, x, x)));
  Value tail = arith::MulFOp::create(b, loc, density,
                                     arith::MulFOp::create(b, loc, t, p));
  Value nonNegative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                            x, constant(0.0));
  return arith::SelectOp::create(
      b, loc, nonNegative, arith::SubFOp::create(b, loc, one, tail), tail);
}

/// 2^k, k about half the precision of `type`: past it, 1 is negligible next
/// to x² (x² + 1 rounds to x²), and x² is still finite.
static double getSquareDominatesOneBound(Type type) {
  return std::ldexp(1.0, cast<FloatType>(type).getFPMantissaWidth() / 2 + 1);
}

/// log 2 + log x, for x past getSquareDominatesOneBound.
static Value emitLogOfTwice(OpBuilder &b, Location loc, Value x) {
  return arith::AddFOp::create(b, loc, math::LogOp::create(b, loc, x),
                               makeFloat(b, loc, x.getType(), std::log(2.0)));
}

Value fxtoloop::emitAsinh(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value one = makeFloat(b, loc, type, 1.0);
  Value a = math::AbsFOp::create(b, loc, x);
  Value square = arith::MulFOp::create(b, loc, a, a);
  // log(a + √(a² + 1)) = log1p(a + a² / (1 + √(1 + a²))): no log of 1 + tiny.
  Value near = math::Log1pOp::create(
      b, loc,
      arith::AddFOp::create(
          b, loc, a,
          arith::DivFOp::create(
              b, loc, square,
              arith::AddFOp::create(
                  b, loc, one,
                  math::SqrtOp::create(
                      b, loc, arith::AddFOp::create(b, loc, one, square))))));
  Value isFar = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, a,
      makeFloat(b, loc, type, getSquareDominatesOneBound(type)));
  return math::CopySignOp::create(
      b, loc,
      arith::SelectOp::create(b, loc, isFar, emitLogOfTwice(b, loc, a), near),
      x);
}

Value fxtoloop::emitAcosh(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  // t = x - 1 is exact near 1, where log(x + √(x² - 1)) would lose it.
  Value t = arith::SubFOp::create(b, loc, x, makeFloat(b, loc, type, 1.0));
  Value near = math::Log1pOp::create(
      b, loc,
      arith::AddFOp::create(
          b, loc, t,
          math::SqrtOp::create(
              b, loc,
              arith::MulFOp::create(
                  b, loc, t,
                  arith::AddFOp::create(b, loc, t,
                                        makeFloat(b, loc, type, 2.0))))));
  Value isFar = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, x,
      makeFloat(b, loc, type, getSquareDominatesOneBound(type)));
  return arith::SelectOp::create(b, loc, isFar, emitLogOfTwice(b, loc, x),
                                 near);
}

Value fxtoloop::emitAtanh(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value a = math::AbsFOp::create(b, loc, x);
  // ½ log((1 + a) / (1 - a)) = ½ log1p(2a / (1 - a)): no log of 1 + tiny.
  Value ratio = arith::DivFOp::create(
      b, loc, arith::AddFOp::create(b, loc, a, a),
      arith::SubFOp::create(b, loc, makeFloat(b, loc, type, 1.0), a));
  return math::CopySignOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, makeFloat(b, loc, type, 0.5),
                            math::Log1pOp::create(b, loc, ratio)),
      x);
}

void fxtoloop::populateMathLoweringPatterns(RewritePatternSet &patterns,
                                            const FXToLoopOptions &options) {
  patterns.add<
      FloatMathLowering<fx::AcosOp, math::AcosOp>,
      FloatFunctionLowering<fx::AcoshOp, emitAcosh>,
      FloatMathLowering<fx::AsinOp, math::AsinOp>,
      FloatFunctionLowering<fx::AsinhOp, emitAsinh>,
      FloatMathLowering<fx::AtanOp, math::AtanOp>,
      FloatFunctionLowering<fx::AtanhOp, emitAtanh>,
      FloatMathLowering<fx::CoshOp, math::CoshOp>,
      FloatMathLowering<fx::SinhOp, math::SinhOp>,
      FloatMathLowering<fx::TanOp, math::TanOp>,
      FloatMathLowering<fx::Exp2Op, math::Exp2Op>,
      FloatMathLowering<fx::Log10Op, math::Log10Op>,
      RoundingLowering<fx::FloorOp, math::FloorOp>,
      RoundingLowering<fx::CeilOp, math::CeilOp>,
      RoundingLowering<fx::RoundOp, math::RoundEvenOp>,
      RoundingLowering<fx::TruncOp, math::TruncOp>, FracLowering, SignLowering,
      ClassifyLowering<fx::IsnanOp, true>, ClassifyLowering<fx::IsinfOp, false>,
      PowLowering, PowScalarBaseLowering, ClampTensorLowering, LerpLowering,
      LerpScalarLowering, AddcLowering<fx::AddcmulOp, false>,
      AddcLowering<fx::AddcdivOp, true>, ErfinvLowering, EluBackwardLowering>(
      patterns.getContext(), options);
}
