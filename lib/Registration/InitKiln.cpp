//===- InitKiln.cpp - Registering Kiln with a tool ------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/InitKiln.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/FX/IR/FXDialect.h"
#include "kiln/Dialect/Loop/IR/LoopDialect.h"
#include "kiln/Dialect/Loop/Transforms/Passes.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::kiln::registerAllKilnDialects(DialectRegistry &registry) {
  registry.insert<fx::FXDialect, loop::LoopDialect>();
  // Loop bodies are arith/math; sizes come from tensor.dim.
  registry
      .insert<arith::ArithDialect, math::MathDialect, tensor::TensorDialect>();
}

void mlir::kiln::registerAllKilnPasses() {
  registerKilnConversionPasses();
  loop::registerKilnLoopPasses();
  registerKilnPipelines();
  // The upstream passes Kiln's pipelines run.
  registerCanonicalizerPass();
  registerCSEPass();
}
