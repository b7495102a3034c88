//===- LoopInterfaces.h - loop dialect interfaces ---------------*- C++ -*-===//
//
// Part of Kiln. `LoopNodeOpInterface`, what every tensor node answers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPINTERFACES_H
#define KILN_DIALECT_LOOP_IR_LOOPINTERFACES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include "kiln/Dialect/Loop/IR/LoopInterfaces.h.inc"

#endif // KILN_DIALECT_LOOP_IR_LOOPINTERFACES_H
