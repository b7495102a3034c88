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
#include "kiln/Transforms/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mlir::kiln::registerAllKilnDialects(DialectRegistry &registry) {
  registry.insert<fx::FXDialect, loop::LoopDialect>();
  // Loop bodies are arith/math (complex for Fourier transforms); sizes come
  // from tensor.dim.
  registry.insert<arith::ArithDialect, complex::ComplexDialect,
                  math::MathDialect, tensor::TensorDialect>();
  // What the pipelines produce on the way to LLVM, so that each stage's
  // output can be read back (a pipeline run in parts, a lit test of a
  // pass after bufferization).
  registry
      .insert<affine::AffineDialect, amx::AMXDialect, cf::ControlFlowDialect,
              func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect,
              memref::MemRefDialect, NVVM::NVVMDialect, omp::OpenMPDialect,
              scf::SCFDialect, ub::UBDialect, vector::VectorDialect>();
}

void mlir::kiln::registerKilnCPUTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

void mlir::kiln::registerAllKilnTranslations(DialectRegistry &registry) {
  registerKilnCPUTranslations(registry);
  registerGPUDialectTranslation(registry);
  // How gpu.binary objects are embedded and loaded (#gpu.select_object).
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm finds the patterns of the kernels' dialects through
  // their ConvertToLLVM interfaces.
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
}

void mlir::kiln::registerAllKilnPasses() {
  registerKilnConversionPasses();
  registerKilnTransformsPasses();
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
  registerPass([] { return createConvertVectorToLLVMPass(); });
  registerPass([] { return math::createMathExpandOpsPass(); });
  gpu::registerGPUToNVVMPipeline();
}
