//===- Combiners.cpp - The arithmetic of loop.reduce's combiners ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Utils/Combiners.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::kiln;

static bool isUnsignedDtype(Type dtype) {
  return isa<IntegerType>(dtype) &&
         (dtype.isUnsignedInteger() || dtype.isInteger(1));
}

Value mlir::kiln::getCombinerIdentity(OpBuilder &b, Location loc,
                                      StringRef combiner, Type type,
                                      Type dtype) {
  Type scalarType = getElementTypeOrSelf(type);
  TypedAttr scalar;
  if (auto floatType = dyn_cast<FloatType>(scalarType)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    llvm::APFloat value(semantics);
    if (combiner == "sum" || combiner == "welford")
      value = llvm::APFloat::getZero(semantics);
    else if (combiner == "prod")
      value = llvm::APFloat(semantics, 1);
    else
      value = llvm::APFloat::getInf(semantics, /*Negative=*/combiner == "max");
    scalar = b.getFloatAttr(scalarType, value);
  } else {
    bool isUnsigned = isUnsignedDtype(dtype);
    unsigned width = scalarType.getIntOrFloatBitWidth();
    llvm::APInt value(width, 0);
    if (combiner == "prod")
      value = llvm::APInt(width, 1);
    else if (combiner == "max")
      value = isUnsigned ? llvm::APInt::getMinValue(width)
                         : llvm::APInt::getSignedMinValue(width);
    else if (combiner == "min")
      value = isUnsigned ? llvm::APInt::getMaxValue(width)
                         : llvm::APInt::getSignedMaxValue(width);
    scalar = b.getIntegerAttr(scalarType, value);
  }
  if (auto vectorType = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorType, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

bool mlir::kiln::hasReductionState(StringRef combiner) {
  return combiner == "welford";
}

Type mlir::kiln::getReductionStateType(StringRef combiner, Type accumulator) {
  if (hasReductionState(combiner))
    return VectorType::get({3}, accumulator);
  return accumulator;
}

namespace {
/// A Welford state's (count, mean, M2), taken apart and put together.
struct WelfordState {
  Value count, mean, m2;

  static WelfordState unpack(OpBuilder &b, Location loc, Value state) {
    return {vector::ExtractOp::create(b, loc, state, int64_t(0)),
            vector::ExtractOp::create(b, loc, state, int64_t(1)),
            vector::ExtractOp::create(b, loc, state, int64_t(2))};
  }
  Value pack(OpBuilder &b, Location loc) const {
    return vector::FromElementsOp::create(b, loc,
                                          VectorType::get({3}, count.getType()),
                                          ValueRange{count, mean, m2});
  }
};
} // namespace

/// Welford's update of `state` with value `x`: the mean moves by its
/// deviation over the new count, M2 by the product of the deviations from
/// the old and the new mean.
static Value emitWelfordUpdate(OpBuilder &b, Location loc, Value state,
                               Value x) {
  WelfordState s = WelfordState::unpack(b, loc, state);
  Type type = x.getType();
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
  Value count = arith::AddFOp::create(b, loc, s.count, one);
  Value delta = arith::SubFOp::create(b, loc, x, s.mean);
  Value mean = arith::AddFOp::create(
      b, loc, s.mean, arith::DivFOp::create(b, loc, delta, count));
  Value m2 = arith::AddFOp::create(
      b, loc, s.m2,
      arith::MulFOp::create(b, loc, delta,
                            arith::SubFOp::create(b, loc, x, mean)));
  return WelfordState{count, mean, m2}.pack(b, loc);
}

Value mlir::kiln::emitMerge(OpBuilder &b, Location loc, StringRef combiner,
                            Value lhs, Value rhs, Type dtype) {
  if (!hasReductionState(combiner))
    return emitCombine(b, loc, combiner, lhs, rhs, dtype);
  // Chan et al.: the counts add, the mean moves toward rhs's by its share
  // of the count, and M2 gains the squared distance of the means.
  WelfordState x = WelfordState::unpack(b, loc, lhs);
  WelfordState y = WelfordState::unpack(b, loc, rhs);
  Type type = x.count.getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  Value count = arith::AddFOp::create(b, loc, x.count, y.count);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, count, zero);
  // rhs's share of the count (0 for two empty states, not NaN).
  Value share = arith::SelectOp::create(
      b, loc, empty, zero, arith::DivFOp::create(b, loc, y.count, count));
  Value delta = arith::SubFOp::create(b, loc, y.mean, x.mean);
  Value mean = arith::AddFOp::create(
      b, loc, x.mean, arith::MulFOp::create(b, loc, delta, share));
  Value m2 = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, x.m2, y.m2),
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, delta, delta),
                            arith::MulFOp::create(b, loc, x.count, share)));
  return WelfordState{count, mean, m2}.pack(b, loc);
}

Value mlir::kiln::emitReductionResult(OpBuilder &b, Location loc,
                                      StringRef combiner, Value state) {
  if (!hasReductionState(combiner))
    return state;
  return vector::ExtractOp::create(b, loc, state, int64_t(2));
}

Value mlir::kiln::emitCombine(OpBuilder &b, Location loc, StringRef combiner,
                              Value accumulator, Value value, Type dtype) {
  if (hasReductionState(combiner))
    return emitWelfordUpdate(b, loc, accumulator, value);
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(value.getType()));
  bool isUnsigned = isUnsignedDtype(dtype);
  if (combiner == "sum")
    return isFloat
               ? arith::AddFOp::create(b, loc, accumulator, value)
               : arith::AddIOp::create(b, loc, accumulator, value).getResult();
  if (combiner == "prod")
    return isFloat
               ? arith::MulFOp::create(b, loc, accumulator, value)
               : arith::MulIOp::create(b, loc, accumulator, value).getResult();
  if (combiner == "max") {
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, accumulator, value);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, accumulator, value);
    return arith::MaxSIOp::create(b, loc, accumulator, value);
  }
  if (isFloat)
    return arith::MinimumFOp::create(b, loc, accumulator, value);
  if (isUnsigned)
    return arith::MinUIOp::create(b, loc, accumulator, value);
  return arith::MinSIOp::create(b, loc, accumulator, value);
}
