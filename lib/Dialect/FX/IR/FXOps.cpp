//===- FXOps.cpp - hand-written fx operations -----------------------------===//
//
// Part of Kiln. The custom C++ of fx.graph and fx.output. The generated
// definitions of all fx ops are compiled in the FXOpDefs<i>.cpp shards; the
// table ops' verifiers are in the *Verifiers.cpp files.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXOps.h"

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
