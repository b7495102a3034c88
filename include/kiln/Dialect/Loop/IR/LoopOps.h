//===- LoopOps.h - loop dialect operations ----------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPOPS_H
#define KILN_DIALECT_LOOP_IR_LOOPOPS_H

#include "kiln/Dialect/Loop/IR/LoopDialect.h"
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

#endif // KILN_DIALECT_LOOP_IR_LOOPOPS_H
