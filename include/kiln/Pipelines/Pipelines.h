//===- Pipelines.h - Kiln's named pass pipelines ----------------*- C++ -*-===//
//
// Part of Kiln. Every pipeline Kiln runs is built here, so that other compilers
// can embed it and kiln-opt can replay it by name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PIPELINES_PIPELINES_H
#define KILN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace kiln {

struct LowerToLoopPipelineOptions
    : public PassPipelineOptions<LowerToLoopPipelineOptions> {
  PassOptions::Option<bool> computeInF32{
      *this, "compute-in-f32",
      llvm::cl::desc("Compute f16 and bf16 elementwise math in f32"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> inlinePointwise{
      *this, "inline",
      llvm::cl::desc("Inline pointwise producers into their readers"),
      llvm::cl::init(true)};
};

/// fx graphs -> loop nodes, with pointwise producers inlined: the graph-level
/// half of Kiln's compiler. Runs on a module of fx.graph ops.
void buildLowerToLoopPipeline(OpPassManager &pm,
                              const LowerToLoopPipelineOptions &options);

/// Registers Kiln's pipelines with the global pipeline registry.
void registerKilnPipelines();

} // namespace kiln
} // namespace mlir

#endif // KILN_PIPELINES_PIPELINES_H
