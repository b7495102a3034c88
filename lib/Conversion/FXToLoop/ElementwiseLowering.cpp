//===- ElementwiseLowering.cpp - Elementwise fx ops -----------------------===//
//
// Part of Kiln. Arithmetic, comparisons, bitwise ops, the common activations
// and their gradients, where and _to_copy: each fx op one loop.pointwise over
// its broadcast operands (the ElementwiseLowering template), whose body
// computes an element as PyTorch's kernels do.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

/// An integer divisor that cannot trap: 0 and -1 become 1. PyTorch raises on
/// an integer division by zero, which a kernel cannot; -1 would trap on the
/// most negative dividend, and `x % -1 == x % 1 == 0` (callers negate for
/// quotients).
static Value getTrapFreeDivisor(OpBuilder &b, Location loc, Value divisor) {
  Type type = divisor.getType();
  Value one = makeInteger(b, loc, type, 1);
  Value minusOne = makeInteger(b, loc, type, -1);
  Value zero = makeInteger(b, loc, type, 0);
  Value trapping = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor,
                            minusOne));
  return arith::SelectOp::create(b, loc, trapping, one, divisor);
}

/// `value <kind> 0` for a float or signed integer `value`; false for NaN.
static Value compareWithZero(OpBuilder &b, Location loc, Value value,
                             bool greater) {
  Type type = value.getType();
  if (isa<FloatType>(type))
    return arith::CmpFOp::create(
        b, loc, greater ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        value, makeFloat(b, loc, type, 0.0));
  return arith::CmpIOp::create(
      b, loc, greater ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt,
      value, makeInteger(b, loc, type, 0));
}

/// `ifDiffer` where `mod` is non-zero with the sign opposite to `divisor`'s,
/// else `otherwise`. Built from comparisons and selects only: the same test
/// written with xor/and on vectors of i1 gave wrong remainders on the GPU.
static Value selectWhereSignsDiffer(OpBuilder &b, Location loc, Value mod,
                                    Value divisor, Value ifDiffer,
                                    Value otherwise) {
  Value negativeMod = arith::SelectOp::create(
      b, loc, compareWithZero(b, loc, divisor, /*greater=*/true), ifDiffer,
      otherwise);
  Value positiveMod = arith::SelectOp::create(
      b, loc, compareWithZero(b, loc, divisor, /*greater=*/false), ifDiffer,
      otherwise);
  return arith::SelectOp::create(
      b, loc, compareWithZero(b, loc, mod, /*greater=*/false), negativeMod,
      arith::SelectOp::create(b, loc,
                              compareWithZero(b, loc, mod, /*greater=*/true),
                              positiveMod, otherwise));
}

/// C's fmod of two scalars of `dtype`.
static Value emitFmod(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      Type dtype) {
  if (isa<FloatType>(dtype))
    return arith::RemFOp::create(b, loc, lhs, rhs);
  if (isUnsignedOrBool(dtype))
    return arith::RemUIOp::create(b, loc, lhs, getTrapFreeDivisor(b, loc, rhs));
  return arith::RemSIOp::create(b, loc, lhs, getTrapFreeDivisor(b, loc, rhs));
}

/// Python's modulus, as PyTorch computes it: fmod, moved by the divisor
/// when the signs of the two differ.
static Value emitRemainder(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           Type dtype) {
  Value mod = emitFmod(b, loc, lhs, rhs, dtype);
  if (isUnsignedOrBool(dtype))
    return mod;
  Value moved = isa<FloatType>(dtype)
                    ? Value(arith::AddFOp::create(b, loc, mod, rhs))
                    : Value(arith::AddIOp::create(b, loc, mod, rhs));
  return selectWhereSignsDiffer(b, loc, mod, rhs, moved, mod);
}

/// Integer division rounded toward zero or down; a divisor of -1 negates.
static Value emitIntegerDivision(OpBuilder &b, Location loc, Value lhs,
                                 Value rhs, Type dtype, bool floor) {
  Value divisor = getTrapFreeDivisor(b, loc, rhs);
  if (isUnsignedOrBool(dtype))
    return arith::DivUIOp::create(b, loc, lhs, divisor);
  Value quotient =
      floor ? Value(arith::FloorDivSIOp::create(b, loc, lhs, divisor))
            : Value(arith::DivSIOp::create(b, loc, lhs, divisor));
  Type type = lhs.getType();
  Value negated =
      arith::SubIOp::create(b, loc, makeInteger(b, loc, type, 0), lhs);
  Value byMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           rhs, makeInteger(b, loc, type, -1));
  return arith::SelectOp::create(b, loc, byMinusOne, negated, quotient);
}

/// Floating division rounded down, as PyTorch computes it: from fmod, so
/// that `floor_divide(a, b) * b + remainder(a, b)` stays close to `a`.
static Value emitFloatFloorDivision(OpBuilder &b, Location loc, Value lhs,
                                    Value rhs) {
  Type type = lhs.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, type, value); };
  Value mod = arith::RemFOp::create(b, loc, lhs, rhs);
  Value div = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, lhs, mod), rhs);
  div = selectWhereSignsDiffer(
      b, loc, mod, rhs, arith::SubFOp::create(b, loc, div, constant(1.0)), div);
  Value floored = math::FloorOp::create(b, loc, div);
  Value roundUp = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT,
      arith::SubFOp::create(b, loc, div, floored), constant(0.5));
  floored = arith::SelectOp::create(
      b, loc, roundUp, arith::AddFOp::create(b, loc, floored, constant(1.0)),
      floored);
  // A zero quotient takes the sign of the true quotient; a zero divisor
  // gives the true quotient (inf or nan).
  Value quotient = arith::DivFOp::create(b, loc, lhs, rhs);
  Value signedZero = math::CopySignOp::create(b, loc, constant(0.0), quotient);
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, div,
                                       constant(0.0));
  Value result = arith::SelectOp::create(b, loc, isZero, signedZero, floored);
  Value byZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, rhs,
                                       constant(0.0));
  return arith::SelectOp::create(b, loc, byZero, quotient, result);
}

Value fxtoloop::emitBinary(OpBuilder &b, Location loc, BinaryKind kind,
                           Value lhs, Value rhs, Type dtype) {
  bool isFloat = isa<FloatType>(dtype);
  bool isUnsigned = isUnsignedOrBool(dtype);
  switch (kind) {
  case BinaryKind::Add:
    if (isFloat)
      return arith::AddFOp::create(b, loc, lhs, rhs);
    if (dtype.isInteger(1)) // True + True is True.
      return arith::OrIOp::create(b, loc, lhs, rhs);
    return arith::AddIOp::create(b, loc, lhs, rhs);
  case BinaryKind::Sub:
    if (isFloat)
      return arith::SubFOp::create(b, loc, lhs, rhs);
    return arith::SubIOp::create(b, loc, lhs, rhs);
  case BinaryKind::Mul:
    if (isFloat)
      return arith::MulFOp::create(b, loc, lhs, rhs);
    if (dtype.isInteger(1))
      return arith::AndIOp::create(b, loc, lhs, rhs);
    return arith::MulIOp::create(b, loc, lhs, rhs);
  case BinaryKind::Div:
    assert(isFloat && "true division computes in a floating dtype");
    return arith::DivFOp::create(b, loc, lhs, rhs);
  case BinaryKind::Max:
    // maximumf/minimumf propagate NaN, as torch.maximum/minimum do.
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, lhs, rhs);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, lhs, rhs);
    return arith::MaxSIOp::create(b, loc, lhs, rhs);
  case BinaryKind::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, lhs, rhs);
    if (isUnsigned)
      return arith::MinUIOp::create(b, loc, lhs, rhs);
    return arith::MinSIOp::create(b, loc, lhs, rhs);
  case BinaryKind::Fmod:
    return emitFmod(b, loc, lhs, rhs, dtype);
  case BinaryKind::Remainder:
    return emitRemainder(b, loc, lhs, rhs, dtype);
  case BinaryKind::TruncDiv:
    if (isFloat)
      return math::TruncOp::create(b, loc,
                                   arith::DivFOp::create(b, loc, lhs, rhs));
    return emitIntegerDivision(b, loc, lhs, rhs, dtype, /*floor=*/false);
  case BinaryKind::FloorDiv:
    if (isFloat)
      return emitFloatFloorDivision(b, loc, lhs, rhs);
    return emitIntegerDivision(b, loc, lhs, rhs, dtype, /*floor=*/true);
  }
  llvm_unreachable("unknown binary kind");
}

/// Whether `kind` divides, so that eager raises on an integer zero divisor.
static constexpr bool isDivision(BinaryKind kind) {
  return kind == BinaryKind::Fmod || kind == BinaryKind::Remainder ||
         kind == BinaryKind::TruncDiv || kind == BinaryKind::FloorDiv;
}

/// Whether `alpha` is absent or 1: bool results support nothing else.
static bool isUnitAlpha(std::optional<Attribute> alpha) {
  if (!alpha)
    return true;
  if (auto floatAlpha = dyn_cast<FloatAttr>(*alpha))
    return floatAlpha.getValueAsDouble() == 1.0;
  return cast<IntegerAttr>(*alpha).getInt() == 1;
}

Value fxtoloop::scaleByAlpha(OpBuilder &b, Location loc, Value value,
                             Type dtype, std::optional<Attribute> alpha) {
  if (isUnitAlpha(alpha))
    return value;
  Value factor = makeScalar(b, loc, *alpha, dtype);
  return emitBinary(b, loc, BinaryKind::Mul, value, factor, dtype);
}

namespace {
struct AddLowering : ElementwiseLowering<fx::AddOp, AddLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::AddOp op) const {
    bool isBool = op.getType().getElementType().isInteger(1);
    return success(!isBool || isUnitAlpha(op.getAlpha()));
  }
  Value computeElement(fx::AddOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value other = scaleByAlpha(b, loc, elements[1], dtype, op.getAlpha());
    return emitBinary(b, loc, BinaryKind::Add, elements[0], other, dtype);
  }
};

struct SubLowering : ElementwiseLowering<fx::SubOp, SubLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::SubOp op) const {
    bool isBool = op.getType().getElementType().isInteger(1);
    return success(!isBool);
  }
  Value computeElement(fx::SubOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value other = scaleByAlpha(b, loc, elements[1], dtype, op.getAlpha());
    return emitBinary(b, loc, BinaryKind::Sub, elements[0], other, dtype);
  }
};

struct NegLowering : ElementwiseLowering<fx::NegOp, NegLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::NegOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    if (isa<FloatType>(dtype))
      return arith::NegFOp::create(b, loc, elements[0]);
    Value zero = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(loop::getScalarType(dtype), 0));
    return arith::SubIOp::create(b, loc, zero, elements[0]);
  }
};

struct ReluLowering : ElementwiseLowering<fx::ReluOp, ReluLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::ReluOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Type scalarType = loop::getScalarType(dtype);
    if (isa<FloatType>(dtype)) {
      // maximumf propagates NaN, as torch.relu does.
      Value zero =
          arith::ConstantOp::create(b, loc, b.getFloatAttr(scalarType, 0.0));
      return arith::MaximumFOp::create(b, loc, elements[0], zero);
    }
    if (isUnsignedOrBool(dtype))
      return elements[0];
    Value zero =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(scalarType, 0));
    return arith::MaxSIOp::create(b, loc, elements[0], zero);
  }
};

/// A binary op with a tensor `other`: add, sub (alpha), mul, div, maximum,
/// minimum.
template <typename OpTy, BinaryKind Kind>
struct BinaryLowering : ElementwiseLowering<OpTy, BinaryLowering<OpTy, Kind>> {
  using ElementwiseLowering<OpTy, BinaryLowering>::ElementwiseLowering;
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    return emitBinary(b, loc, Kind, elements[0], elements[1], dtype);
  }
  void addRuntimeChecks(OpTy op, OpBuilder &b, Location loc, Type dtype) const {
    if (isDivision(Kind))
      checkDivisor(b, loc, op->getOperand(1), dtype);
  }
};

/// A binary op whose `other` is a Scalar attribute (a wrapped number).
template <typename OpTy, BinaryKind Kind>
struct ScalarBinaryLowering
    : ElementwiseLowering<OpTy, ScalarBinaryLowering<OpTy, Kind>> {
  using ElementwiseLowering<OpTy, ScalarBinaryLowering>::ElementwiseLowering;
  LogicalResult checkSupported(OpTy op) const {
    if constexpr (Kind == BinaryKind::Add || Kind == BinaryKind::Sub) {
      bool isBool = op.getType().getElementType().isInteger(1);
      return success(!isBool || isUnitAlpha(op.getAlpha()));
    }
    return success();
  }
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Value other = makeScalar(b, loc, op.getOther(), dtype);
    if constexpr (Kind == BinaryKind::Add || Kind == BinaryKind::Sub)
      other = scaleByAlpha(b, loc, other, dtype, op.getAlpha());
    return emitBinary(b, loc, Kind, elements[0], other, dtype);
  }
  void addRuntimeChecks(OpTy op, OpBuilder &b, Location loc, Type dtype) const {
    if (isDivision(Kind))
      checkDivisor(b, loc, op->getOperand(0), op.getOther(), dtype);
  }
};

/// Lowers fx.div_mode and fx.div_scalar_mode: division rounded toward zero
/// ("trunc") or down ("floor"), computed in the promoted dtype as PyTorch
/// does.
template <typename OpTy>
struct DivModeLowering : ElementwiseLowering<OpTy, DivModeLowering<OpTy>> {
  using ElementwiseLowering<OpTy, DivModeLowering>::ElementwiseLowering;
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    BinaryKind kind = op.getRoundingMode() == "floor" ? BinaryKind::FloorDiv
                                                      : BinaryKind::TruncDiv;
    Value divisor;
    if constexpr (std::is_same_v<OpTy, fx::DivScalarModeOp>)
      divisor = makeScalar(b, loc, op.getOther(), dtype);
    else
      divisor = elements[1];
    return emitBinary(b, loc, kind, elements[0], divisor, dtype);
  }
  void addRuntimeChecks(OpTy op, OpBuilder &b, Location loc, Type dtype) const {
    if constexpr (std::is_same_v<OpTy, fx::DivScalarModeOp>)
      checkDivisor(b, loc, op->getOperand(0), op.getOther(), dtype);
    else
      checkDivisor(b, loc, op->getOperand(1), dtype);
  }
};

/// The predicates of PyTorch's comparisons.
enum class CompareKind { Eq, Ne, Lt, Le, Gt, Ge };

/// `lhs <kind> rhs` on scalars of `dtype`; NaN compares unequal to all.
static Value emitCompare(OpBuilder &b, Location loc, CompareKind kind,
                         Value lhs, Value rhs, Type dtype) {
  if (isa<FloatType>(dtype)) {
    static constexpr arith::CmpFPredicate predicates[] = {
        arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE,
        arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE,
        arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE};
    return arith::CmpFOp::create(b, loc, predicates[static_cast<int>(kind)],
                                 lhs, rhs);
  }
  bool isUnsigned = isUnsignedOrBool(dtype);
  static constexpr arith::CmpIPredicate signedPredicates[] = {
      arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
      arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
      arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge};
  static constexpr arith::CmpIPredicate unsignedPredicates[] = {
      arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
      arith::CmpIPredicate::ult, arith::CmpIPredicate::ule,
      arith::CmpIPredicate::ugt, arith::CmpIPredicate::uge};
  auto predicate = (isUnsigned ? unsignedPredicates
                               : signedPredicates)[static_cast<int>(kind)];
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

/// A comparison of two tensors, or of a tensor and a Scalar attribute: both
/// sides in their promoted dtype, a bool result.
template <typename OpTy, CompareKind Kind, bool ScalarOther>
struct CompareLowering
    : ElementwiseLowering<OpTy, CompareLowering<OpTy, Kind, ScalarOther>> {
  using ElementwiseLowering<OpTy, CompareLowering>::ElementwiseLowering;
  Type getComputeDtype(OpTy op) const {
    SmallVector<Type> operandTypes(op->getOperandTypes());
    if constexpr (ScalarOther)
      return fx::getResultDtype(operandTypes, {op.getOther()});
    return fx::getResultDtype(operandTypes);
  }
  Type getBodyDtype(OpTy op, Type) const {
    return op.getType().getElementType();
  }
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Value other;
    if constexpr (ScalarOther)
      other = makeScalar(b, loc, op.getOther(), dtype);
    else
      other = elements[1];
    return emitCompare(b, loc, Kind, elements[0], other, dtype);
  }
};

/// A unary op computing in a floating dtype (integral inputs become the
/// default float): exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid,
/// reciprocal.
template <typename OpTy, typename MathFn>
struct FloatUnaryLowering
    : ElementwiseLowering<OpTy, FloatUnaryLowering<OpTy, MathFn>> {
  using ElementwiseLowering<OpTy, FloatUnaryLowering>::ElementwiseLowering;
  Value computeElement(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    return MathFn()(b, loc, elements[0], loop::getScalarType(dtype));
  }
};

template <typename MathOp> struct ApplyMath {
  Value operator()(OpBuilder &b, Location loc, Value x, Type) const {
    return MathOp::create(b, loc, x);
  }
};

struct ApplyReciprocal {
  Value operator()(OpBuilder &b, Location loc, Value x, Type type) const {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    return arith::DivFOp::create(b, loc, one, x);
  }
};

struct ApplySigmoid {
  // 1 / (1 + exp(-x)): saturates to 0 and 1 without overflow trouble.
  Value operator()(OpBuilder &b, Location loc, Value x, Type type) const {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    Value exp = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one,
                                 arith::AddFOp::create(b, loc, one, exp));
  }
};

struct ApplySilu {
  // x / (1 + exp(-x)), as PyTorch computes it.
  Value operator()(OpBuilder &b, Location loc, Value x, Type type) const {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    Value exp = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, x,
                                 arith::AddFOp::create(b, loc, one, exp));
  }
};

/// min(max(x + 3, 0), 6) / 6, PyTorch's hardsigmoid.
static Value emitHardSigmoid(OpBuilder &b, Location loc, Value x, Type type) {
  Value shifted = arith::AddFOp::create(b, loc, x, makeFloat(b, loc, type, 3));
  Value clamped = arith::MinimumFOp::create(
      b, loc,
      arith::MaximumFOp::create(b, loc, shifted, makeFloat(b, loc, type, 0)),
      makeFloat(b, loc, type, 6));
  return arith::DivFOp::create(b, loc, clamped, makeFloat(b, loc, type, 6));
}

struct ApplyHardSigmoid {
  Value operator()(OpBuilder &b, Location loc, Value x, Type type) const {
    return emitHardSigmoid(b, loc, x, type);
  }
};

struct ApplyHardSwish {
  Value operator()(OpBuilder &b, Location loc, Value x, Type type) const {
    return arith::MulFOp::create(b, loc, x, emitHardSigmoid(b, loc, x, type));
  }
};

struct ApplyMish {
  // x * tanh(log1p(exp(x))), as PyTorch computes it.
  Value operator()(OpBuilder &b, Location loc, Value x, Type) const {
    Value softplus =
        math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
    return arith::MulFOp::create(b, loc, x,
                                 math::TanhOp::create(b, loc, softplus));
  }
};

/// `x > 0 ? positive : negative`.
static Value selectByPositive(OpBuilder &b, Location loc, Value x,
                              Value positive, Value negative, Type type) {
  Value isPositive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                           makeFloat(b, loc, type, 0));
  return arith::SelectOp::create(b, loc, isPositive, positive, negative);
}

/// fx.elu: scale * x above 0, else scale * alpha * expm1(input_scale * x).
struct EluLowering : ElementwiseLowering<fx::EluOp, EluLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::EluOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value x = elements[0];
    double alpha = op.getAlpha().convertToDouble();
    double scale = op.getScale().convertToDouble();
    double inputScale = op.getInputScale().convertToDouble();
    Value negative = arith::MulFOp::create(
        b, loc,
        math::ExpM1Op::create(
            b, loc,
            arith::MulFOp::create(b, loc, x,
                                  makeFloat(b, loc, dtype, inputScale))),
        makeFloat(b, loc, dtype, alpha * scale));
    Value positive =
        arith::MulFOp::create(b, loc, x, makeFloat(b, loc, dtype, scale));
    return selectByPositive(b, loc, x, positive, negative, dtype);
  }
};

/// fx.leaky_relu: x above 0, else x * negative_slope.
struct LeakyReluLowering
    : ElementwiseLowering<fx::LeakyReluOp, LeakyReluLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::LeakyReluOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value x = elements[0];
    Value negative = arith::MulFOp::create(
        b, loc, x,
        makeFloat(b, loc, dtype, op.getNegativeSlope().convertToDouble()));
    return selectByPositive(b, loc, x, x, negative, dtype);
  }
};

/// fx.softplus: log1p(exp(beta x)) / beta, or x where beta x > threshold.
struct SoftplusLowering
    : ElementwiseLowering<fx::SoftplusOp, SoftplusLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::SoftplusOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value x = elements[0];
    Value beta = makeFloat(b, loc, dtype, op.getBeta().convertToDouble());
    Value scaled = arith::MulFOp::create(b, loc, x, beta);
    Value soft = arith::DivFOp::create(
        b, loc,
        math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, scaled)),
        beta);
    Value linear = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OGT, scaled,
        makeFloat(b, loc, dtype, op.getThreshold().convertToDouble()));
    return arith::SelectOp::create(b, loc, linear, x, soft);
  }
};

/// fx.hardtanh: clamp to [min_val, max_val].
struct HardtanhLowering
    : ElementwiseLowering<fx::HardtanhOp, HardtanhLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::HardtanhOp op) const {
    return success(isa<FloatType>(op.getType().getElementType()));
  }
  Value computeElement(fx::HardtanhOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    return emitClamp(b, loc, elements[0],
                     makeFloat(b, loc, dtype, op.getMinVal().convertToDouble()),
                     makeFloat(b, loc, dtype, op.getMaxVal().convertToDouble()),
                     dtype);
  }
};

/// fx.clamp with Scalar bounds (either may be absent).
struct ClampLowering : ElementwiseLowering<fx::ClampOp, ClampLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::ClampOp op) const {
    return success(!op.getType().getElementType().isInteger(1));
  }
  Value computeElement(fx::ClampOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value lower =
        op.getMin() ? makeScalar(b, loc, *op.getMin(), dtype) : Value();
    Value upper =
        op.getMax() ? makeScalar(b, loc, *op.getMax(), dtype) : Value();
    return emitClamp(b, loc, elements[0], lower, upper, dtype);
  }
};

/// `self ** exponent` with a scalar exponent: the exponents PyTorch
/// special-cases (±0.5, ±1, ±2, 3) as it computes them, others with powf;
/// integers by repeated squaring (non-negative exponents only, as in
/// PyTorch).
struct PowScalarLowering
    : ElementwiseLowering<fx::PowTensorScalarOp, PowScalarLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  LogicalResult checkSupported(fx::PowTensorScalarOp op) const {
    Type dtype = op.getType().getElementType();
    if (isa<FloatType>(dtype))
      return success();
    auto [exponent, integral] = getScalarValue(op.getExponent());
    return success(integral && exponent >= 0 && !dtype.isInteger(1));
  }
  Value computeElement(fx::PowTensorScalarOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value x = elements[0];
    Type type = loop::getScalarType(dtype);
    auto [exponent, integral] = getScalarValue(op.getExponent());
    if (!isa<FloatType>(dtype)) {
      // Square-and-multiply over the exponent's bits.
      auto bits = static_cast<uint64_t>(exponent);
      Value result =
          arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 1));
      Value power = x;
      while (bits) {
        if (bits & 1)
          result = arith::MulIOp::create(b, loc, result, power);
        bits >>= 1;
        if (bits)
          power = arith::MulIOp::create(b, loc, power, power);
      }
      return result;
    }
    auto constant = [&](double value) {
      return makeFloat(b, loc, type, value);
    };
    if (exponent == 0.5)
      return math::SqrtOp::create(b, loc, x);
    if (exponent == -0.5)
      return math::RsqrtOp::create(b, loc, x);
    if (exponent == 1.0)
      return x;
    if (exponent == 2.0 || exponent == -2.0 || exponent == 3.0) {
      Value square = arith::MulFOp::create(b, loc, x, x);
      if (exponent == 3.0)
        return arith::MulFOp::create(b, loc, square, x);
      if (exponent == -2.0)
        return arith::DivFOp::create(b, loc, constant(1.0), square);
      return square;
    }
    if (exponent == -1.0)
      return arith::DivFOp::create(b, loc, constant(1.0), x);
    return math::PowFOp::create(b, loc, x, constant(exponent));
  }
};

/// The bitwise operations of integers and bools.
enum class BitwiseKind { And, Or, Xor };

static Value emitBitwise(OpBuilder &b, Location loc, BitwiseKind kind,
                         Value lhs, Value rhs) {
  switch (kind) {
  case BitwiseKind::And:
    return arith::AndIOp::create(b, loc, lhs, rhs);
  case BitwiseKind::Or:
    return arith::OrIOp::create(b, loc, lhs, rhs);
  case BitwiseKind::Xor:
    return arith::XOrIOp::create(b, loc, lhs, rhs);
  }
  llvm_unreachable("covered switch");
}

/// fx.bitwise_{and,or,xor}, of two tensors or of a tensor and a Scalar.
template <typename OpTy, BitwiseKind Kind, bool WithScalar>
struct BitwiseLowering
    : ElementwiseLowering<OpTy, BitwiseLowering<OpTy, Kind, WithScalar>> {
  using ElementwiseLowering<OpTy, BitwiseLowering>::ElementwiseLowering;
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Value other;
    if constexpr (WithScalar)
      other = makeScalar(b, loc, op.getOther(), dtype);
    else
      other = elements[1];
    return emitBitwise(b, loc, Kind, elements[0], other);
  }
};

/// fx.bitwise_{left,right}_shift, of two tensors or of a tensor and a
/// Scalar, as PyTorch shifts: a shift outside [0, bits) (negative amounts
/// too, which compare unsigned as huge) gives 0, or to the right the sign of
/// a signed element; right shifts of signed dtypes are arithmetic. Bools do
/// not shift (nor in PyTorch).
template <typename OpTy, bool Left, bool WithScalar>
struct ShiftLowering
    : ElementwiseLowering<OpTy, ShiftLowering<OpTy, Left, WithScalar>> {
  using ElementwiseLowering<OpTy, ShiftLowering>::ElementwiseLowering;
  LogicalResult checkSupported(OpTy op) const {
    Type dtype = cast<RankedTensorType>(op.getType()).getElementType();
    return success(!dtype.isInteger(1));
  }
  Value computeElement(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Value value = elements[0];
    Value amount;
    if constexpr (WithScalar)
      amount = makeScalar(b, loc, op.getOther(), dtype);
    else
      amount = elements[1];
    Type type = value.getType();
    unsigned bits = type.getIntOrFloatBitWidth();
    bool isSigned = !cast<IntegerType>(dtype).isUnsigned();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
    };
    if (!Left && isSigned) {
      // Past bits - 1 the sign fills the element: shift by bits - 1.
      Value last = constant(bits - 1);
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            amount, last);
      return arith::ShRSIOp::create(
          b, loc, value,
          arith::SelectOp::create(b, loc, inRange, amount, last));
    }
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          amount, constant(bits));
    Value shifted = Left ? Value(arith::ShLIOp::create(b, loc, value, amount))
                         : Value(arith::ShRUIOp::create(b, loc, value, amount));
    return arith::SelectOp::create(b, loc, inRange, shifted, constant(0));
  }
};

/// fx.bitwise_not: all bits flipped (a bool's one); fx.logical_not, whose
/// elements convert to bool (`x != 0`) first.
template <typename OpTy>
struct BitwiseNotLowering
    : ElementwiseLowering<OpTy, BitwiseNotLowering<OpTy>> {
  using ElementwiseLowering<OpTy, BitwiseNotLowering>::ElementwiseLowering;
  Value computeElement(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                       Type dtype) const {
    Type type = loop::getScalarType(dtype);
    Value ones = arith::ConstantOp::create(
        b, loc,
        b.getIntegerAttr(type,
                         APInt::getAllOnes(type.getIntOrFloatBitWidth())));
    return arith::XOrIOp::create(b, loc, elements[0], ones);
  }
};

/// sqrt(2 / pi) and the cubic's coefficient in GELU's tanh approximation,
/// and 1 / sqrt(2), which scales erf's argument in the exact GELU.
static constexpr double kGeluTanhScale = 0.7978845608028654;
static constexpr double kGeluTanhCubic = 0.044715;
static constexpr double kInverseSqrt2 = 0.7071067811865476;

/// GELU: x * Φ(x), with Φ from erf, from its upper tail in f32 with
/// `normalCdfFromTail` (emitNormalCdfF32), or PyTorch's tanh approximation.
struct GeluLowering : ElementwiseLowering<fx::GeluOp, GeluLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::GeluOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Type type = loop::getScalarType(dtype);
    auto constant = [&](double value) -> Value {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
    };
    Value x = elements[0];
    Value inner;
    if (op.getApproximate() == "tanh") {
      // tanh(sqrt(2 / pi) * (x + 0.044715 x^3))
      Value cube =
          arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
      Value sum = arith::AddFOp::create(
          b, loc, x,
          arith::MulFOp::create(b, loc, constant(kGeluTanhCubic), cube));
      inner = math::TanhOp::create(
          b, loc, arith::MulFOp::create(b, loc, constant(kGeluTanhScale), sum));
    } else if (type.isF32() && options.normalCdfFromTail) {
      return arith::MulFOp::create(b, loc, x, emitNormalCdfF32(b, loc, x));
    } else {
      // erf(x / sqrt(2))
      inner = math::ErfOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, constant(kInverseSqrt2)));
    }
    Value half = arith::MulFOp::create(b, loc, constant(0.5), x);
    return arith::MulFOp::create(
        b, loc, half, arith::AddFOp::create(b, loc, constant(1.0), inner));
  }
};

//===--- Gradients of activations (backward graphs) ----------------------===//

/// `value` where `drop`, else zero of scalar type `type`.
static Value selectZeroWhere(OpBuilder &b, Location loc, Value drop,
                             Value value, Type type) {
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  return arith::SelectOp::create(b, loc, drop, zero, value);
}

/// relu's (and threshold's) gradient: 0 where self <= threshold, else the
/// incoming gradient (NaN inputs pass it, as in PyTorch).
struct ThresholdBackwardLowering
    : ElementwiseLowering<fx::ThresholdBackwardOp, ThresholdBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::ThresholdBackwardOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value threshold = makeScalar(b, loc, op.getThreshold(), dtype);
    Value drop =
        emitCompare(b, loc, CompareKind::Le, elements[1], threshold, dtype);
    return selectZeroWhere(b, loc, drop, elements[0],
                           loop::getScalarType(dtype));
  }
};

/// hardtanh's gradient: 0 where self <= min or self >= max.
struct HardtanhBackwardLowering
    : ElementwiseLowering<fx::HardtanhBackwardOp, HardtanhBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::HardtanhBackwardOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Type type = loop::getScalarType(dtype);
    auto bound = [&](double value) -> Value {
      if (isa<FloatType>(type))
        return makeFloat(b, loc, type, value);
      return makeInteger(b, loc, type, static_cast<int64_t>(value));
    };
    Value x = elements[1];
    Value drop = arith::OrIOp::create(
        b, loc,
        emitCompare(b, loc, CompareKind::Le, x,
                    bound(op.getMinVal().convertToDouble()), dtype),
        emitCompare(b, loc, CompareKind::Ge, x,
                    bound(op.getMaxVal().convertToDouble()), dtype));
    return selectZeroWhere(b, loc, drop, elements[0], type);
  }
};

/// leaky_relu's gradient: the incoming gradient where self > 0, else it
/// times the slope.
struct LeakyReluBackwardLowering
    : ElementwiseLowering<fx::LeakyReluBackwardOp, LeakyReluBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::LeakyReluBackwardOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value grad = elements[0];
    Value positive = emitCompare(b, loc, CompareKind::Gt, elements[1],
                                 makeFloat(b, loc, dtype, 0.0), dtype);
    Value scaled = arith::MulFOp::create(
        b, loc, grad,
        makeFloat(b, loc, dtype, op.getNegativeSlope().convertToDouble()));
    return arith::SelectOp::create(b, loc, positive, grad, scaled);
  }
};

/// sigmoid's gradient from its output y: grad * (1 - y) * y.
struct SigmoidBackwardLowering
    : ElementwiseLowering<fx::SigmoidBackwardOp, SigmoidBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::SigmoidBackwardOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value y = elements[1];
    Value complement =
        arith::SubFOp::create(b, loc, makeFloat(b, loc, dtype, 1.0), y);
    return arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, elements[0], complement), y);
  }
};

/// tanh's gradient from its output y: grad * (1 - y * y).
struct TanhBackwardLowering
    : ElementwiseLowering<fx::TanhBackwardOp, TanhBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::TanhBackwardOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value y = elements[1];
    Value derivative =
        arith::SubFOp::create(b, loc, makeFloat(b, loc, dtype, 1.0),
                              arith::MulFOp::create(b, loc, y, y));
    return arith::MulFOp::create(b, loc, elements[0], derivative);
  }
};

/// silu's gradient: grad * s * (1 + x * (1 - s)), s = sigmoid(x).
struct SiluBackwardLowering
    : ElementwiseLowering<fx::SiluBackwardOp, SiluBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::SiluBackwardOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    Value x = elements[1];
    Value one = makeFloat(b, loc, dtype, 1.0);
    Value sigmoid = ApplySigmoid()(b, loc, x, dtype);
    Value factor = arith::AddFOp::create(
        b, loc, one,
        arith::MulFOp::create(b, loc, x,
                              arith::SubFOp::create(b, loc, one, sigmoid)));
    return arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, elements[0], sigmoid), factor);
  }
};

/// GELU's gradient, as PyTorch computes it: Φ(x) + x φ(x) from erf, or the
/// derivative of the tanh approximation.
struct GeluBackwardLowering
    : ElementwiseLowering<fx::GeluBackwardOp, GeluBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::GeluBackwardOp op, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    auto constant = [&](double value) {
      return makeFloat(b, loc, dtype, value);
    };
    auto mul = [&](Value lhs, Value rhs) -> Value {
      return arith::MulFOp::create(b, loc, lhs, rhs);
    };
    auto add = [&](Value lhs, Value rhs) -> Value {
      return arith::AddFOp::create(b, loc, lhs, rhs);
    };
    Value grad = elements[0], x = elements[1];
    Value square = mul(x, x);
    if (op.getApproximate() == "tanh") {
      Value inner = mul(constant(kGeluTanhScale),
                        add(x, mul(constant(kGeluTanhCubic), mul(square, x))));
      Value t = math::TanhOp::create(b, loc, inner);
      Value left = mul(constant(0.5), x);
      Value leftDerivative = mul(constant(0.5), add(constant(1.0), t));
      Value tanhDerivative =
          arith::SubFOp::create(b, loc, constant(1.0), mul(t, t));
      Value innerDerivative =
          mul(constant(kGeluTanhScale),
              add(constant(1.0), mul(constant(3.0 * kGeluTanhCubic), square)));
      return mul(grad, add(leftDerivative,
                           mul(mul(left, tanhDerivative), innerDerivative)));
    }
    constexpr double kNormalDensity = 0.3989422804014327; // 1 / sqrt(2 pi)
    Value cdf = loop::getScalarType(dtype).isF32() && options.normalCdfFromTail
                    ? emitNormalCdfF32(b, loc, x)
                    : mul(constant(0.5),
                          add(constant(1.0),
                              math::ErfOp::create(
                                  b, loc, mul(x, constant(kInverseSqrt2)))));
    Value pdf = mul(math::ExpOp::create(b, loc, mul(constant(-0.5), square)),
                    constant(kNormalDensity));
    return mul(grad, add(cdf, mul(x, pdf)));
  }
};

/// dropout's gradient: grad * mask * scale, the bool mask as 0 or 1 (so a
/// NaN gradient stays NaN where dropped, as in PyTorch).
struct NativeDropoutBackwardLowering
    : ElementwiseLowering<fx::NativeDropoutBackwardOp,
                          NativeDropoutBackwardLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  SmallVector<Type> getInputDtypes(fx::NativeDropoutBackwardOp op,
                                   Type computeDtype) const {
    return {computeDtype, op.getMask().getType().getElementType()};
  }
  Value computeElement(fx::NativeDropoutBackwardOp op, OpBuilder &b,
                       Location loc, ValueRange elements, Type dtype) const {
    Value mask = arith::SelectOp::create(b, loc, elements[1],
                                         makeFloat(b, loc, dtype, 1.0),
                                         makeFloat(b, loc, dtype, 0.0));
    Value kept = arith::MulFOp::create(b, loc, elements[0], mask);
    return arith::MulFOp::create(
        b, loc, kept,
        makeFloat(b, loc, dtype, op.getScale().convertToDouble()));
  }
};

/// fx.atan2: the angle of (other, self), in the float compute dtype.
struct Atan2Lowering : ElementwiseLowering<fx::Atan2Op, Atan2Lowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::Atan2Op, OpBuilder &b, Location loc,
                       ValueRange elements, Type) const {
    return math::Atan2Op::create(b, loc, elements[0], elements[1]);
  }
};

struct AbsLowering : ElementwiseLowering<fx::AbsOp, AbsLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  Value computeElement(fx::AbsOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type dtype) const {
    if (isa<FloatType>(dtype))
      return math::AbsFOp::create(b, loc, elements[0]);
    if (isUnsignedOrBool(dtype))
      return elements[0];
    return math::AbsIOp::create(b, loc, elements[0]);
  }
};

/// `where(condition, self, other)`: the condition stays a bool.
struct WhereLowering : ElementwiseLowering<fx::WhereOp, WhereLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  SmallVector<Type> getInputDtypes(fx::WhereOp op, Type computeDtype) const {
    return {op.getCondition().getType().getElementType(), computeDtype,
            computeDtype};
  }
  Value computeElement(fx::WhereOp, OpBuilder &b, Location loc,
                       ValueRange elements, Type) const {
    return arith::SelectOp::create(b, loc, elements[0], elements[1],
                                   elements[2]);
  }
};

/// `_to_copy` with a dtype: PyTorch's cast, element by element.
struct ToCopyLowering : ElementwiseLowering<fx::ToCopyOp, ToCopyLowering> {
  using ElementwiseLowering::ElementwiseLowering;
  bool isExplicitConversion() const { return true; }
  Type getComputeDtype(fx::ToCopyOp op) const {
    return op.getSelf().getType().getElementType();
  }
  SmallVector<Type> getInputDtypes(fx::ToCopyOp op, Type) const {
    return {op.getSelf().getType().getElementType()};
  }
  Type getBodyDtype(fx::ToCopyOp op, Type) const {
    return op.getSelf().getType().getElementType();
  }
  Value computeElement(fx::ToCopyOp, OpBuilder &, Location, ValueRange elements,
                       Type) const {
    return elements[0];
  }
};

} // namespace

void fxtoloop::populateElementwiseLoweringPatterns(
    RewritePatternSet &patterns, const FXToLoopOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AddLowering, SubLowering, NegLowering, ReluLowering>(ctx,
                                                                    options);
  patterns
      .add<BinaryLowering<fx::MulOp, BinaryKind::Mul>,
           BinaryLowering<fx::DivOp, BinaryKind::Div>,
           BinaryLowering<fx::MaximumOp, BinaryKind::Max>,
           BinaryLowering<fx::MinimumOp, BinaryKind::Min>,
           BinaryLowering<fx::FmodOp, BinaryKind::Fmod>,
           BinaryLowering<fx::RemainderOp, BinaryKind::Remainder>,
           ScalarBinaryLowering<fx::FmodScalarOp, BinaryKind::Fmod>,
           ScalarBinaryLowering<fx::RemainderScalarOp, BinaryKind::Remainder>,
           DivModeLowering<fx::DivModeOp>, DivModeLowering<fx::DivScalarModeOp>,
           ScalarBinaryLowering<fx::AddScalarOp, BinaryKind::Add>,
           ScalarBinaryLowering<fx::SubScalarOp, BinaryKind::Sub>,
           ScalarBinaryLowering<fx::MulScalarOp, BinaryKind::Mul>,
           ScalarBinaryLowering<fx::DivScalarOp, BinaryKind::Div>>(ctx,
                                                                   options);
  patterns.add<CompareLowering<fx::EqOp, CompareKind::Eq, false>,
               CompareLowering<fx::NeOp, CompareKind::Ne, false>,
               CompareLowering<fx::LtOp, CompareKind::Lt, false>,
               CompareLowering<fx::LeOp, CompareKind::Le, false>,
               CompareLowering<fx::GtOp, CompareKind::Gt, false>,
               CompareLowering<fx::GeOp, CompareKind::Ge, false>,
               CompareLowering<fx::EqScalarOp, CompareKind::Eq, true>,
               CompareLowering<fx::NeScalarOp, CompareKind::Ne, true>,
               CompareLowering<fx::LtScalarOp, CompareKind::Lt, true>,
               CompareLowering<fx::LeScalarOp, CompareKind::Le, true>,
               CompareLowering<fx::GtScalarOp, CompareKind::Gt, true>,
               CompareLowering<fx::GeScalarOp, CompareKind::Ge, true>>(ctx,
                                                                       options);
  patterns.add<
      FloatUnaryLowering<fx::ExpOp, ApplyMath<math::ExpOp>>,
      FloatUnaryLowering<fx::LogOp, ApplyMath<math::LogOp>>,
      FloatUnaryLowering<fx::Log1pOp, ApplyMath<math::Log1pOp>>,
      FloatUnaryLowering<fx::Log2Op, ApplyMath<math::Log2Op>>,
      FloatUnaryLowering<fx::Expm1Op, ApplyMath<math::ExpM1Op>>,
      FloatUnaryLowering<fx::SqrtOp, ApplyMath<math::SqrtOp>>,
      FloatUnaryLowering<fx::RsqrtOp, ApplyMath<math::RsqrtOp>>,
      FloatUnaryLowering<fx::SinOp, ApplyMath<math::SinOp>>,
      FloatUnaryLowering<fx::CosOp, ApplyMath<math::CosOp>>,
      FloatUnaryLowering<fx::TanhOp, ApplyMath<math::TanhOp>>,
      FloatUnaryLowering<fx::ErfOp, ApplyMath<math::ErfOp>>,
      FloatUnaryLowering<fx::ErfcOp, ApplyMath<math::ErfcOp>>,
      FloatUnaryLowering<fx::SigmoidOp, ApplySigmoid>,
      FloatUnaryLowering<fx::SiluOp, ApplySilu>,
      FloatUnaryLowering<fx::HardsigmoidOp, ApplyHardSigmoid>,
      FloatUnaryLowering<fx::HardswishOp, ApplyHardSwish>,
      FloatUnaryLowering<fx::MishOp, ApplyMish>, EluLowering, LeakyReluLowering,
      SoftplusLowering, HardtanhLowering, ClampLowering, GeluLowering,
      PowScalarLowering, ThresholdBackwardLowering, HardtanhBackwardLowering,
      LeakyReluBackwardLowering, SigmoidBackwardLowering, TanhBackwardLowering,
      SiluBackwardLowering, GeluBackwardLowering, NativeDropoutBackwardLowering,
      BitwiseNotLowering<fx::BitwiseNotOp>,
      BitwiseNotLowering<fx::LogicalNotOp>,
      BitwiseLowering<fx::LogicalAndOp, BitwiseKind::And, false>,
      BitwiseLowering<fx::LogicalOrOp, BitwiseKind::Or, false>,
      BitwiseLowering<fx::LogicalXorOp, BitwiseKind::Xor, false>,
      BitwiseLowering<fx::BitwiseAndOp, BitwiseKind::And, false>,
      BitwiseLowering<fx::BitwiseOrOp, BitwiseKind::Or, false>,
      BitwiseLowering<fx::BitwiseXorOp, BitwiseKind::Xor, false>,
      ShiftLowering<fx::BitwiseLeftShiftOp, true, false>,
      ShiftLowering<fx::BitwiseRightShiftOp, false, false>,
      ShiftLowering<fx::BitwiseLeftShiftScalarOp, true, true>,
      ShiftLowering<fx::BitwiseRightShiftScalarOp, false, true>,
      BitwiseLowering<fx::BitwiseAndScalarOp, BitwiseKind::And, true>,
      BitwiseLowering<fx::BitwiseOrScalarOp, BitwiseKind::Or, true>,
      BitwiseLowering<fx::BitwiseXorScalarOp, BitwiseKind::Xor, true>,
      FloatUnaryLowering<fx::ReciprocalOp, ApplyReciprocal>, AbsLowering,
      Atan2Lowering, WhereLowering, ToCopyLowering>(ctx, options);
}
