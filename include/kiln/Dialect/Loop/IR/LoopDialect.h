//===- LoopDialect.h - loop dialect declaration -----------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPDIALECT_H
#define KILN_DIALECT_LOOP_IR_LOOPDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/ValueRange.h"

#include "kiln/Dialect/Loop/IR/LoopOpsDialect.h.inc"

namespace mlir::kiln::loop {

/// The scalar type a body computes with for elements of `elementType`:
/// integers become signless, everything else is unchanged.
Type getScalarType(Type elementType);

/// Whether `op` is a loop node (loop.pointwise or loop.reduce).
bool isNode(Operation *op);

/// The dynamic sizes of a node's result, in order.
ValueRange getNodeDynamicSizes(Operation *node);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_IR_LOOPDIALECT_H
