//===- FunctionEquivalence.cpp - Functions alike but for names ------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/FunctionEquivalence.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

DictionaryAttr mlir::kiln::getAttributesButName(Operation *op) {
  NamedAttrList attrs(op->getAttrs());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(op->getContext());
}

llvm::hash_code mlir::kiln::hashFunctionBody(Operation *func) {
  llvm::hash_code hash = hash_value(getAttributesButName(func));
  func->getRegion(0).walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

bool mlir::kiln::areFunctionsAlike(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         getAttributesButName(a) == getAttributesButName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a->getRegion(0), &b->getRegion(0),
             OperationEquivalence::IgnoreLocations);
}
