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

// The options of kiln-fx-to-loop, kiln-loop-to-scf and kiln-loop-to-gpu are
// their libraries' (FXToLoop.h, LoopToSCF.h, LoopToGPU.h).
#define GEN_PASS_DECL_CONVERTAMXTOLLVMPASS
#define GEN_PASS_DECL_GPUMERGEKERNELSPASS
#define GEN_PASS_DECL_NVVMAPPROXIMATIONSPASS
#define GEN_PASS_DECL_ROWKERNELOCCUPANCYPASS
#define GEN_PASS_DECL_TENSORMAPPARAMETERSPASS
#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_CONVERSION_PASSES_H
