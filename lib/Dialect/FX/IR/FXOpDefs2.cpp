//===- FXOpDefs2.cpp - fx op definitions, shard 2 -------------------------===//
//
// Part of Kiln. See FXOpDefs.h.
//
//===----------------------------------------------------------------------===//

#include "FXOpDefs.h"

#define GET_OP_DEFS_2
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
