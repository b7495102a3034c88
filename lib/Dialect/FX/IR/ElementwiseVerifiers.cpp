//===- ElementwiseVerifiers.cpp - elementwise fx op verifiers -------------===//
//
// Part of Kiln. Broadcasting and PyTorch's elementwise type promotion
// (torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND) for the unary,
// binary, scalar, comparison, ternary and pointwise-backward ops.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// Applies the promotion kind to the promoted dtype.
static Type applyPromotion(Operation *op, TypePromotion promotion,
                           Type promoted) {
  MLIRContext *ctx = op->getContext();
  switch (promotion) {
  case TypePromotion::Default:
    return promoted;
  case TypePromotion::IntToFloat:
    return isIntegralOrBool(promoted) ? getDefaultFloatDtype(ctx) : promoted;
  case TypePromotion::AlwaysBool:
    return IntegerType::get(ctx, 1);
  case TypePromotion::ComplexToFloat:
    return toRealDtype(promoted);
  case TypePromotion::FloatToComplex:
    // Other dtypes have no complex counterpart here; the result's type
    // check reports them.
    return promoted.isF32() || promoted.isF64() ? ComplexType::get(promoted)
                                                : promoted;
  case TypePromotion::BoolToLong:
    return promoted.isInteger(1) ? getIndexDtype(ctx) : promoted;
  case TypePromotion::Cast:
    if (Type dtype = getDtypeAttr(op))
      return dtype;
    return getTensorType(op->getOperand(0)).getElementType();
  }
  llvm_unreachable("unknown type promotion");
}

/// Writes "operands 'A' and 'B'" (or "operand 'A'"), then the scalars.
static void describeInputs(InFlightDiagnostic &diag, Operation *op,
                           ArrayRef<StringRef> scalarNames) {
  SmallVector<std::string> parts;
  for (Type type : op->getOperandTypes()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "'" << type << "'";
    parts.push_back(text);
  }
  for (StringRef name : scalarNames) {
    Attribute scalar = op->getAttr(name);
    if (!scalar)
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "`" << name << "` = " << scalar;
    parts.push_back(text);
  }
  diag << (op->getNumOperands() == 1 ? "operand " : "operands ");
  for (auto [index, part] : llvm::enumerate(parts)) {
    if (index > 0)
      diag << (index + 1 == parts.size() ? " and " : ", ");
    diag << part;
  }
}

LogicalResult mlir::kiln::fx::verifyElementwiseOp(
    Operation *op, TypePromotion promotion, ArrayRef<unsigned> promotedOperands,
    ArrayRef<StringRef> promotedScalars, ArrayRef<StringRef> coefficients,
    bool rejectBool) {
  // Broadcast every tensor operand to the result shape.
  SmallVector<int64_t> shape;
  for (Value operand : op->getOperands()) {
    std::string reason;
    FailureOr<SmallVector<int64_t>> broadcast =
        broadcastShapes(shape, getTensorType(operand).getShape(), reason);
    if (failed(broadcast)) {
      InFlightDiagnostic diag = op->emitOpError();
      describeInputs(diag, op, {});
      diag << " are not broadcastable: " << reason;
      return diag;
    }
    shape = std::move(*broadcast);
  }

  if (rejectBool) {
    for (Value operand : op->getOperands()) {
      if (getTensorType(operand).getElementType().isInteger(1))
        return op->emitOpError("cannot subtract with a bool tensor, as "
                               "PyTorch cannot; use logical_not or "
                               "logical_xor instead");
    }
  }

  SmallVector<Type> promotedTypes;
  if (promotedOperands.empty()) {
    llvm::append_range(promotedTypes, op->getOperandTypes());
  } else {
    for (unsigned index : promotedOperands)
      promotedTypes.push_back(op->getOperand(index).getType());
  }
  SmallVector<Attribute> scalars;
  for (StringRef name : promotedScalars) {
    if (Attribute scalar = op->getAttr(name))
      scalars.push_back(scalar);
  }
  Type dtype =
      applyPromotion(op, promotion, getResultDtype(promotedTypes, scalars));

  auto result = getTensorType(op->getResult(0));
  auto expected = RankedTensorType::get(shape, dtype);
  if (result != expected) {
    InFlightDiagnostic diag = op->emitOpError("result type ")
                              << result << " does not match ";
    describeInputs(diag, op, promotedScalars);
    diag << ": expected " << expected;
    return diag;
  }

  // PyTorch converts alpha-like coefficients to the result dtype and rejects
  // a float for an integral result.
  for (StringRef name : coefficients) {
    Attribute coefficient = op->getAttr(name);
    if (coefficient && isa<FloatAttr>(coefficient) && isIntegralOrBool(dtype))
      return op->emitOpError("floating ")
             << name << " " << coefficient
             << " cannot be applied to an integral result of dtype " << dtype;
  }
  return success();
}
