//===- Combiners.cpp - The arithmetic of loop.reduce's combiners ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Bufferization/Combiners.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
    if (combiner == "sum")
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

Value mlir::kiln::emitCombine(OpBuilder &b, Location loc, StringRef combiner,
                              Value accumulator, Value value, Type dtype) {
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
