//===- FXDialect.cpp - fx dialect registration ----------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXDialect.h"
#include "kiln/Dialect/FX/IR/FXOps.h"

using namespace mlir;
using namespace mlir::kiln::fx;

#include "kiln/Dialect/FX/IR/FXOpsDialect.cpp.inc"

void FXDialect::initialize() {
  // The op definitions are sharded (see FXOpDefs.h); each shard registers
  // its ops.
  registerFXDialectOperations(this);
  registerAttributes();
}
