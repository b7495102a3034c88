//===- Passes.h - Kiln's artifact-building passes ---------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_PASSES_H
#define KILN_TARGET_PASSES_H

#include "kiln/Target/EntryPoints.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "kiln/Target/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_TARGET_PASSES_H
