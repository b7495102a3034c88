//===- FunctionEquivalence.h - Functions alike but for names ----*- C++ -*-===//
//
// Part of Kiln. What kiln-outline-kernels and kiln-gpu-merge-kernels share:
// two functions are alike when one could be called in place of the other.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_FUNCTIONEQUIVALENCE_H
#define KILN_TARGET_FUNCTIONEQUIVALENCE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/Hashing.h"

namespace mlir {
class DictionaryAttr;
class Operation;
namespace kiln {

/// `op`'s attributes without its symbol name.
DictionaryAttr getAttributesButName(Operation *op);

/// A hash of `func`'s attributes but its name, and of its body's operations
/// without the values they use and define: alike functions hash alike.
llvm::hash_code hashFunctionBody(Operation *func);

/// Whether functions `a` and `b` have the same attributes but for their
/// names (type, argument attributes, launch bounds, ...) and equivalent
/// bodies, block arguments taken in order.
bool areFunctionsAlike(Operation *a, Operation *b);

} // namespace kiln
} // namespace mlir

#endif // KILN_TARGET_FUNCTIONEQUIVALENCE_H
