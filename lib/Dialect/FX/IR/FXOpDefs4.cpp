//===- FXOpDefs4.cpp - fx op definitions, shard 4 -------------------------===//
//
// Part of Kiln. See FXOpDefs.h.
//
//===----------------------------------------------------------------------===//

#include "FXOpDefs.h"

#define GET_OP_DEFS_4
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
