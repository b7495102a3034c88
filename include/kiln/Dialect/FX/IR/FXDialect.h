//===- FXDialect.h - fx dialect declaration ---------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXDIALECT_H
#define KILN_DIALECT_FX_IR_FXDIALECT_H

#include "mlir/IR/Dialect.h"

#include "kiln/Dialect/FX/IR/FXOpsDialect.h.inc"

#endif // KILN_DIALECT_FX_IR_FXDIALECT_H
