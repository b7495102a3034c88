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

/// Marks an arith.truncf that the program asked for (a cast to a narrower
/// float), which inlining keeps: other roundings of f32 intermediates are
/// Kiln's own and may be skipped.
inline constexpr llvm::StringLiteral kExplicitRoundingAttrName =
    "loop.explicit_rounding";

/// The attribute of an fx.graph that lists, as strings, the messages of its
/// run-time checks, whose flags are its last results (loop.check).
inline constexpr llvm::StringLiteral kChecksAttrName = "kiln.checks";

/// The scalar type a body computes with for elements of `elementType`:
/// integers become signless, everything else is unchanged.
Type getScalarType(Type elementType);

/// The bits an element of `elementType` occupies in a buffer: a complex
/// number both of its parts (bools are bytes in memory, but 1 here).
int64_t getElementBitWidth(Type elementType);

/// Whether `op` is a loop node with a scalar body (loop.pointwise or
/// loop.reduce): the nodes that inlining and fusion rewrite. Every tensor
/// node (these, loop.matmul and loop.scatter) is a LoopNodeOpInterface.
bool isNode(Operation *op);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_IR_LOOPDIALECT_H
