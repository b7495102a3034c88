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
#include "kiln/Target/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  registerKilnTargetPasses();
  registerKilnPipelines();
  // The upstream passes Kiln's pipelines run, so that a dumped pipeline can
  // be replayed pass by pass.
  registerCanonicalizerPass();
  registerCSEPass();
  registerPass([] { return createConvertSCFToOpenMPPass(); });
  registerPass([] { return createSCFToControlFlowPass(); });
  registerPass([] { return memref::createExpandStridedMetadataPass(); });
  registerPass([] { return createFinalizeMemRefToLLVMConversionPass(); });
  registerPass([] { return createArithToLLVMConversionPass(); });
  registerPass([] { return createConvertMathToLLVMPass(); });
  registerPass([] { return createConvertOpenMPToLLVMPass(); });
  registerPass([] { return createConvertControlFlowToLLVMPass(); });
  registerPass([] { return createConvertFuncToLLVMPass(); });
  registerPass([] { return createReconcileUnrealizedCastsPass(); });
}
