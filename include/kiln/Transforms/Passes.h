//===- Passes.h - Kiln's transforms of arith and math ops -------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PASSES_H
#define KILN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "kiln/Transforms/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_TRANSFORMS_PASSES_H
