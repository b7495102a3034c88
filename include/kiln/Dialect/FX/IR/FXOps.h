//===- FXOps.h - fx dialect operations --------------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXOPS_H
#define KILN_DIALECT_FX_IR_FXOPS_H

#include "kiln/Dialect/FX/IR/FXAttrs.h"
#include "kiln/Dialect/FX/IR/FXDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "kiln/Dialect/FX/IR/FXOps.h.inc"

#endif // KILN_DIALECT_FX_IR_FXOPS_H
