//===- FXOpDefs5.cpp - fx op definitions, shard 5 -------------------------===//
//
// Part of Kiln. See FXOpDefs.h.
//
//===----------------------------------------------------------------------===//

#include "FXOpDefs.h"

#define GET_OP_DEFS_5
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
