//===- Passes.h - Kiln conversion passes ------------------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_PASSES_H
#define KILN_CONVERSION_PASSES_H

#include "kiln/Conversion/FXToLoop/FXToLoop.h"
#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_CONVERSION_PASSES_H
