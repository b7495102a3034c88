//===- MergeKernels.cpp - One kernel for alike outlined kernels -----------===//
//
// Part of Kiln. kiln-gpu-merge-kernels: launches of outlined kernels that are
// alike but for their names launch one of them, and the others' modules go,
// so that code generation compiles each distinct kernel once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "kiln/Target/FunctionEquivalence.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_GPUMERGEKERNELSPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// The kernel of `module` when it holds nothing else, or null.
static gpu::GPUFuncOp getOnlyKernel(gpu::GPUModuleOp module) {
  Block &body = module.getBodyRegion().front();
  if (!llvm::hasSingleElement(body))
    return nullptr;
  auto kernel = dyn_cast<gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : nullptr;
}

/// The symbol that launches `kernel`.
static SymbolRefAttr getLaunchSymbol(gpu::GPUModuleOp module,
                                     gpu::GPUFuncOp kernel) {
  return SymbolRefAttr::get(module.getNameAttr(),
                            {FlatSymbolRefAttr::get(kernel.getNameAttr())});
}

namespace {
struct GPUMergeKernelsPass
    : kiln::impl::GPUMergeKernelsPassBase<GPUMergeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    DenseMap<llvm::hash_code, SmallVector<gpu::GPUModuleOp, 1>> kept;
    DenseMap<Attribute, SymbolRefAttr> replacements;
    SmallVector<gpu::GPUModuleOp> merged;
    for (auto kernelModule : module.getOps<gpu::GPUModuleOp>()) {
      gpu::GPUFuncOp kernel = getOnlyKernel(kernelModule);
      if (!kernel)
        continue;
      // Modules may differ in their targets and data layouts too.
      DictionaryAttr moduleAttrs = getAttributesButName(kernelModule);
      llvm::hash_code hash =
          llvm::hash_combine(moduleAttrs, hashFunctionBody(kernel));
      SmallVector<gpu::GPUModuleOp, 1> &candidates = kept[hash];
      auto alike = llvm::find_if(candidates, [&](gpu::GPUModuleOp other) {
        return getAttributesButName(other) == moduleAttrs &&
               areFunctionsAlike(kernel, getOnlyKernel(other));
      });
      if (alike == candidates.end()) {
        candidates.push_back(kernelModule);
        continue;
      }
      replacements[getLaunchSymbol(kernelModule, kernel)] =
          getLaunchSymbol(*alike, getOnlyKernel(*alike));
      merged.push_back(kernelModule);
    }
    if (merged.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr kernel = replacements.lookup(launch.getKernel()))
        launch.setKernelAttr(kernel);
    });
    for (gpu::GPUModuleOp kernelModule : merged)
      kernelModule->erase();
  }
};
} // namespace
