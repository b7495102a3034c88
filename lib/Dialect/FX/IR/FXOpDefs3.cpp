//===- FXOpDefs3.cpp - fx op definitions, shard 3 -------------------------===//
//
// Part of Kiln. See FXOpDefs.h.
//
//===----------------------------------------------------------------------===//

#include "FXOpDefs.h"

#define GET_OP_DEFS_3
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
