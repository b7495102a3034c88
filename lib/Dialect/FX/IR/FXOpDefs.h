//===- FXOpDefs.h - what the fx op definition shards include ----*- C++ -*-===//
//
// Part of Kiln. The ODS definitions of the fx ops are split into
// KILN_FX_OP_SHARDS shards (mlir-tblgen -op-shard-count; see
// include/kiln/Dialect/FX/IR/CMakeLists.txt), one per FXOpDefs<i>.cpp, so
// that each translation unit compiles quickly. Each shard includes this
// header, defines GET_OP_DEFS_<i> and includes FXOps.cpp.inc.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DIALECT_FX_IR_FXOPDEFS_H
#define KILN_LIB_DIALECT_FX_IR_FXOPDEFS_H

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#endif // KILN_LIB_DIALECT_FX_IR_FXOPDEFS_H
