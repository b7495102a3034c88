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
using loop::CombiningKind;

static bool isUnsignedDtype(Type dtype) {
  return isa<IntegerType>(dtype) &&
         (dtype.isUnsignedInteger() || dtype.isInteger(1));
}

Value mlir::kiln::getCombinerIdentity(OpBuilder &b, Location loc,
                                      CombiningKind kind, Type type,
                                      Type dtype) {
  Type scalarType = getElementTypeOrSelf(type);
  TypedAttr scalar;
  if (auto floatType = dyn_cast<FloatType>(scalarType)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    llvm::APFloat value(semantics);
    switch (kind) {
    case CombiningKind::sum:
    case CombiningKind::welford:
    case CombiningKind::assign:
      value = llvm::APFloat::getZero(semantics);
      break;
    case CombiningKind::prod:
      value = llvm::APFloat(semantics, 1);
      break;
    case CombiningKind::max:
    case CombiningKind::min:
      value = llvm::APFloat::getInf(semantics,
                                    /*Negative=*/kind == CombiningKind::max);
      break;
    }
    scalar = b.getFloatAttr(scalarType, value);
  } else {
    bool isUnsigned = isUnsignedDtype(dtype);
    unsigned width = scalarType.getIntOrFloatBitWidth();
    llvm::APInt value(width, 0);
    switch (kind) {
    case CombiningKind::sum:
    case CombiningKind::welford:
    case CombiningKind::assign:
      break;
    case CombiningKind::prod:
      value = llvm::APInt(width, 1);
      break;
    case CombiningKind::max:
      value = isUnsigned ? llvm::APInt::getMinValue(width)
                         : llvm::APInt::getSignedMinValue(width);
      break;
    case CombiningKind::min:
      value = isUnsigned ? llvm::APInt::getMaxValue(width)
                         : llvm::APInt::getSignedMaxValue(width);
      break;
    }
    scalar = b.getIntegerAttr(scalarType, value);
  }
  if (auto vectorType = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorType, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

std::optional<arith::AtomicRMWKind>
mlir::kiln::getAtomicCombineKind(CombiningKind kind, Type dtype) {
  bool isFloat = isa<FloatType>(dtype);
  bool isUnsigned = dtype.isUnsignedInteger();
  switch (kind) {
  case CombiningKind::sum:
    return isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
  case CombiningKind::max:
    return isFloat      ? arith::AtomicRMWKind::maximumf
           : isUnsigned ? arith::AtomicRMWKind::maxu
                        : arith::AtomicRMWKind::maxs;
  case CombiningKind::min:
    return isFloat      ? arith::AtomicRMWKind::minimumf
           : isUnsigned ? arith::AtomicRMWKind::minu
                        : arith::AtomicRMWKind::mins;
  case CombiningKind::prod:
  case CombiningKind::welford:
  case CombiningKind::assign:
    return std::nullopt;
  }
  llvm_unreachable("unknown combining kind");
}

bool mlir::kiln::hasReductionState(CombiningKind kind) {
  return kind == CombiningKind::welford;
}

Type mlir::kiln::getReductionStateType(CombiningKind kind, Type accumulator) {
  if (hasReductionState(kind))
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

Value mlir::kiln::emitMerge(OpBuilder &b, Location loc, CombiningKind kind,
                            Value lhs, Value rhs, Type dtype) {
  if (!hasReductionState(kind))
    return emitCombine(b, loc, kind, lhs, rhs, dtype);
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
                                      CombiningKind kind, Value state) {
  if (!hasReductionState(kind))
    return state;
  return vector::ExtractOp::create(b, loc, state, int64_t(2));
}

Value mlir::kiln::emitCombine(OpBuilder &b, Location loc, CombiningKind kind,
                              Value accumulator, Value value, Type dtype) {
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(value.getType()));
  bool isUnsigned = isUnsignedDtype(dtype);
  switch (kind) {
  case CombiningKind::welford:
    return emitWelfordUpdate(b, loc, accumulator, value);
  case CombiningKind::sum:
    return isFloat
               ? arith::AddFOp::create(b, loc, accumulator, value)
               : arith::AddIOp::create(b, loc, accumulator, value).getResult();
  case CombiningKind::prod:
    return isFloat
               ? arith::MulFOp::create(b, loc, accumulator, value)
               : arith::MulIOp::create(b, loc, accumulator, value).getResult();
  case CombiningKind::max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, accumulator, value);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, accumulator, value);
    return arith::MaxSIOp::create(b, loc, accumulator, value);
  case CombiningKind::min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, accumulator, value);
    if (isUnsigned)
      return arith::MinUIOp::create(b, loc, accumulator, value);
    return arith::MinSIOp::create(b, loc, accumulator, value);
  case CombiningKind::assign:
    break;
  }
  llvm_unreachable("a scatter's \"assign\" stores without combining");
}
