//===- HostDialect.h - The host compiler's dialect --------------*- C++ -*-===//
//
// Part of Kiln's embedding example.
//
//===----------------------------------------------------------------------===//

#ifndef HOST_HOSTDIALECT_H
#define HOST_HOSTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "HostOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "HostOps.h.inc"

#endif // HOST_HOSTDIALECT_H
