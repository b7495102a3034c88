//===- Pipelines.cpp - Kiln's named pass pipelines ------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

void mlir::kiln::buildLowerToLoopPipeline(
    OpPassManager &pm, const LowerToLoopPipelineOptions &options) {
  OpPassManager &graphPm = pm.nest<fx::GraphOp>();
  ConvertFXToLoopPassOptions toLoop;
  toLoop.computeInF32 = options.computeInF32;
  graphPm.addPass(createConvertFXToLoopPass(toLoop));
  graphPm.addPass(createCanonicalizerPass());
  graphPm.addPass(createCSEPass());
  if (options.inlinePointwise) {
    graphPm.addPass(loop::createInlinePointwisePass());
    graphPm.addPass(createCanonicalizerPass());
    graphPm.addPass(createCSEPass());
  }
}

void mlir::kiln::registerKilnPipelines() {
  PassPipelineRegistration<LowerToLoopPipelineOptions>(
      "kiln-lower-to-loop",
      "Lower fx graphs to loop nodes and inline pointwise producers",
      buildLowerToLoopPipeline);
}
