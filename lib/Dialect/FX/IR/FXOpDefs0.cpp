//===- FXOpDefs0.cpp - fx op definitions, shard 0 -------------------------===//
//
// Part of Kiln. See FXOpDefs.h.
//
//===----------------------------------------------------------------------===//

#include "FXOpDefs.h"

#define GET_OP_DEFS_0
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
