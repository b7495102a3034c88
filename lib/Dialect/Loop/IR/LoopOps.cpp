//===- LoopOps.cpp - loop dialect operations ------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/IR/LoopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kiln::loop;

//===----------------------------------------------------------------------===//
// PointwiseOp
//===----------------------------------------------------------------------===//

YieldOp PointwiseOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

void PointwiseOp::getAsmBlockArgumentNames(Region &region,
                                           OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : region.getArguments())
    setNameFn(arg, "i" + std::to_string(arg.getArgNumber()));
}

LogicalResult PointwiseOp::verify() {
  int64_t numDynamic = getResultType().getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << getResultType() << " has " << numDynamic << " dynamic dimensions";
  return success();
}

LogicalResult PointwiseOp::verifyRegions() {
  Block &body = getBody().front();
  int64_t rank = getResultType().getRank();
  if (static_cast<int64_t>(body.getNumArguments()) != rank)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, but the index space of "
           << getResultType() << " has " << rank << " dimensions";
  for (BlockArgument arg : body.getArguments()) {
    if (!arg.getType().isIndex())
      return emitOpError("body argument #")
             << arg.getArgNumber() << " must be an index, but is "
             << arg.getType();
  }
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError("body must end with loop.yield");
  Type expected = getScalarType(getResultType().getElementType());
  Type yielded = getYield().getValue().getType();
  if (yielded != expected)
    return getYield().emitOpError("yields ")
           << yielded << ", but the elements of " << getResultType()
           << " are computed as " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

YieldOp ReduceOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

void ReduceOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  int64_t rank = getResultType().getRank();
  for (BlockArgument arg : region.getArguments()) {
    int64_t number = arg.getArgNumber();
    setNameFn(arg, number < rank ? "i" + std::to_string(number)
                                 : "r" + std::to_string(number - rank));
  }
}

LogicalResult ReduceOp::verify() {
  if (!llvm::is_contained({"sum", "prod", "max", "min"}, getCombiner()))
    return emitOpError("combiner must be \"sum\", \"prod\", \"max\" or "
                       "\"min\", not \"")
           << getCombiner() << "\"";
  int64_t numDynamic = getResultType().getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << getResultType() << " has " << numDynamic << " dynamic dimensions";
  if (getReductionShape().empty())
    return emitOpError("needs at least one reduction dimension");
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  Block &body = getBody().front();
  int64_t rank = getResultType().getRank() + getReductionShape().size();
  if (static_cast<int64_t>(body.getNumArguments()) != rank)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, but the result "
           << getResultType() << " and the reduction space have " << rank
           << " dimensions";
  for (BlockArgument arg : body.getArguments()) {
    if (!arg.getType().isIndex())
      return emitOpError("body argument #")
             << arg.getArgNumber() << " must be an index, but is "
             << arg.getType();
  }
  Type element = getScalarType(getResultType().getElementType());
  Type yielded = getYield().getValue().getType();
  bool widened = (element.isF16() || element.isBF16()) && yielded.isF32();
  if (yielded != element && !widened)
    return getYield().emitOpError("yields ")
           << yielded << ", but the elements of " << getResultType()
           << " accumulate as " << element
           << (element.isF16() || element.isBF16() ? " or f32" : "");
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  if (operands.empty())
    return failure();
  auto source = dyn_cast<RankedTensorType>(operands.front().getType());
  if (!source)
    return failure();
  inferredReturnTypes.push_back(getScalarType(source.getElementType()));
  return success();
}

LogicalResult LoadOp::verify() {
  int64_t rank = getSource().getType().getRank();
  if (static_cast<int64_t>(getIndices().size()) != rank)
    return emitOpError("has ")
           << getIndices().size() << " indices, but its source "
           << getSource().getType() << " has rank " << rank;
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Loop/IR/LoopOps.cpp.inc"
