//===- FXOpDefs1.cpp - fx op definitions, shard 1 -------------------------===//
//
// Part of Kiln. See FXOpDefs.h.
//
//===----------------------------------------------------------------------===//

#include "FXOpDefs.h"

#define GET_OP_DEFS_1
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
