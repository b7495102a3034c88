//===- LoopDialect.h - loop dialect declaration -----------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPDIALECT_H
#define KILN_DIALECT_LOOP_IR_LOOPDIALECT_H

#include "mlir/IR/Dialect.h"

#include "kiln/Dialect/Loop/IR/LoopOpsDialect.h.inc"

namespace mlir::kiln::loop {

/// The scalar type a body computes with for elements of `elementType`:
/// integers become signless, everything else is unchanged.
Type getScalarType(Type elementType);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_IR_LOOPDIALECT_H
