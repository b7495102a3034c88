//===- FXOps.cpp - fx dialect operations ----------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXOps.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace mlir::kiln::fx;

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

void GraphOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  Region *body = state.addRegion();
  Block *entry = new Block();
  SmallVector<Location> locs(type.getNumInputs(), state.location);
  entry->addArguments(type.getInputs(), locs);
  body->push_back(entry);
}

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void GraphOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult GraphOp::verify() {
  if (getBody().empty())
    return emitOpError("must have a body: a graph is never external");
  for (auto [index, type] : llvm::enumerate(getArgumentTypes())) {
    if (!isa<RankedTensorType>(type))
      return emitOpError("argument #")
             << index << " must be a ranked tensor, but is " << type;
  }
  for (auto [index, type] : llvm::enumerate(getResultTypes())) {
    if (!isa<RankedTensorType>(type))
      return emitOpError("result #")
             << index << " must be a ranked tensor, but is " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// OutputOp
//===----------------------------------------------------------------------===//

LogicalResult OutputOp::verify() {
  auto graph = cast<GraphOp>((*this)->getParentOp());
  ArrayRef<Type> expected = graph.getResultTypes();
  if (getResults().size() != expected.size())
    return emitOpError("has ")
           << getResults().size() << " operands, but the enclosing graph @"
           << graph.getSymName() << " returns " << expected.size();
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getResults().getTypes(), expected))) {
    auto [actual, wanted] = pair;
    if (actual != wanted)
      return emitOpError("operand #") << index << " has type " << actual
                                      << ", but the graph returns " << wanted;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Binary elementwise ops
//===----------------------------------------------------------------------===//

/// Checks a binary elementwise op's result against PyTorch's shape and dtype
/// rules: broadcast of the operand shapes, promotion of the operand dtypes.
static LogicalResult verifyBinaryElementwise(Operation *op) {
  auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhs = cast<RankedTensorType>(op->getOperand(1).getType());
  auto result = cast<RankedTensorType>(op->getResult(0).getType());

  std::string reason;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape(), reason);
  if (failed(shape))
    return op->emitOpError("operands ")
           << lhs << " and " << rhs << " are not broadcastable: " << reason;

  Type dtype = getResultDtype({lhs, rhs});
  auto expected = RankedTensorType::get(*shape, dtype);
  if (result != expected)
    return op->emitOpError("result type ")
           << result << " does not match operands " << lhs << " and " << rhs
           << ": expected " << expected;
  return success();
}

/// PyTorch's `alpha` must be representable in the result's dtype category:
/// an integral result takes only an integer alpha.
static LogicalResult verifyAlpha(Operation *op,
                                 std::optional<Attribute> alpha) {
  if (!alpha)
    return success();
  Type dtype =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  if (isa<FloatAttr>(*alpha) &&
      getDtypeCategory(dtype) < DtypeCategory::Floating)
    return op->emitOpError("floating alpha ")
           << *alpha << " cannot be applied to an integral result of dtype "
           << dtype;
  return success();
}

LogicalResult AddOp::verify() {
  if (failed(verifyBinaryElementwise(*this)))
    return failure();
  return verifyAlpha(*this, getAlpha());
}

LogicalResult SubOp::verify() {
  if (failed(verifyBinaryElementwise(*this)))
    return failure();
  if (getSelf().getType().getElementType().isInteger(1) ||
      getOther().getType().getElementType().isInteger(1))
    return emitOpError("cannot subtract with a bool tensor, as PyTorch "
                       "cannot; use logical_not or logical_xor instead");
  return verifyAlpha(*this, getAlpha());
}

LogicalResult MulOp::verify() { return verifyBinaryElementwise(*this); }

#define GET_OP_CLASSES
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
