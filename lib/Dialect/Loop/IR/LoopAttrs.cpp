//===- LoopAttrs.cpp - loop dialect attributes ----------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/IR/LoopAttrs.h"
#include "kiln/Dialect/Loop/IR/LoopDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln::loop;

#include "kiln/Dialect/Loop/IR/LoopEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Loop/IR/LoopAttrs.cpp.inc"

void LoopDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/Loop/IR/LoopAttrs.cpp.inc"
      >();
}
