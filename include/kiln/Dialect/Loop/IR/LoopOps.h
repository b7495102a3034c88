//===- LoopOps.h - loop dialect operations ----------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPOPS_H
#define KILN_DIALECT_LOOP_IR_LOOPOPS_H

#include "kiln/Dialect/Loop/IR/LoopAttrs.h"
#include "kiln/Dialect/Loop/IR/LoopDialect.h"
#include "kiln/Dialect/Loop/IR/LoopInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/Loop/IR/LoopOps.h.inc"

namespace mlir::kiln::loop {

/// Whether `tensor` holds one value per row of a kernel with `rows` row
/// dimensions: all its other dimensions have size 1.
bool isRowValue(Value tensor, int64_t rows);

/// Whether `load` reads at its own node's row: its first `rows` indices are
/// the body's first `rows` arguments (or 0 where the source has size 1) and
/// the others are always 0.
bool isRowAlignedLoad(LoadOp load, int64_t rows);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_IR_LOOPOPS_H
