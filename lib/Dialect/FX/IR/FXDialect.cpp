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
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/FX/IR/FXOps.cpp.inc"
      >();
}
