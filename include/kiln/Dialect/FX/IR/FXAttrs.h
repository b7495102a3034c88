//===- FXAttrs.h - fx dialect attributes ------------------------*- C++ -*-===//
//
// Part of Kiln. The shape-guard attributes: #fx.symbol, #fx.tensor_guard.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXATTRS_H
#define KILN_DIALECT_FX_IR_FXATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/FX/IR/FXAttrs.h.inc"

#endif // KILN_DIALECT_FX_IR_FXATTRS_H
