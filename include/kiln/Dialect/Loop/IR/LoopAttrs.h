//===- LoopAttrs.h - loop dialect attributes --------------------*- C++ -*-===//
//
// Part of Kiln. The combining kinds of loop.reduce and loop.scatter
// (`CombiningKind`, `#loop.kind<...>`).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPATTRS_H
#define KILN_DIALECT_LOOP_IR_LOOPATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

#include "kiln/Dialect/Loop/IR/LoopEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Loop/IR/LoopAttrs.h.inc"

#endif // KILN_DIALECT_LOOP_IR_LOOPATTRS_H
