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

// kiln-fx-to-loop's options are FXToLoop.h's.
#define GEN_PASS_DECL_APPROXIMATEMATHPASS
#define GEN_PASS_DECL_CONTRACTFLOATOPSPASS
#define GEN_PASS_DECL_CONVERTLOOPTOGPUPASS
#define GEN_PASS_DECL_CONVERTLOOPTOSCFPASS
#define GEN_PASS_DECL_EXPANDCONVOLUTIONSPASS
#define GEN_PASS_DECL_NVVMAPPROXIMATIONSPASS
#define GEN_PASS_DECL_ROWKERNELOCCUPANCYPASS
#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_CONVERSION_PASSES_H
