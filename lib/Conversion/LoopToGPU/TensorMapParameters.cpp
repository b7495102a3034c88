//===- TensorMapParameters.cpp - TMA tensor maps as kernel parameters -----===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "GPUKernels.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_TENSORMAPPARAMETERSPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// Makes the kernel argument that `alloca` holds a copy of a byval,
/// grid-constant pointer, read where the alloca was.
static LogicalResult passByValue(LLVM::LLVMFuncOp kernel,
                                 LLVM::AllocaOp alloca) {
  // One store writes the map; the copies only read its address.
  LLVM::StoreOp store;
  for (Operation *user : alloca->getUsers()) {
    auto candidate = dyn_cast<LLVM::StoreOp>(user);
    if (!candidate)
      continue;
    if (store || candidate.getAddr() != alloca.getResult()) {
      store = nullptr;
      break;
    }
    store = candidate;
  }
  auto argument =
      store ? dyn_cast<BlockArgument>(store.getValue()) : BlockArgument();
  if (!argument || argument.getOwner() != &kernel.getBody().front() ||
      argument.getType() != alloca.getElemType() || !argument.hasOneUse())
    return alloca.emitOpError("holds a tensor map that is not a copy of a "
                              "kernel argument");
  MLIRContext *context = kernel.getContext();
  unsigned index = argument.getArgNumber();
  Type mapType = argument.getType();
  auto pointer = LLVM::LLVMPointerType::get(context);
  store.erase();
  argument.setType(pointer);
  alloca.getResult().replaceAllUsesWith(argument);
  alloca.erase();
  SmallVector<Type> inputs(kernel.getFunctionType().getParams());
  inputs[index] = pointer;
  kernel.setFunctionType(LLVM::LLVMFunctionType::get(
      kernel.getFunctionType().getReturnType(), inputs));
  kernel.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(mapType));
  kernel.setArgAttr(
      index, LLVM::LLVMDialect::getAlignAttrName(),
      IntegerAttr::get(IntegerType::get(context, 64), kTensorMapAlignment));
  kernel.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                    UnitAttr::get(context));
  return success();
}

namespace {
struct TensorMapParametersPass
    : kiln::impl::TensorMapParametersPassBase<TensorMapParametersPass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp kernel) {
      SmallVector<LLVM::AllocaOp> maps;
      kernel.walk([&](LLVM::AllocaOp alloca) {
        if (alloca->hasAttr(kTensorMapAttr))
          maps.push_back(alloca);
      });
      if (!maps.empty() &&
          !kernel->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName())) {
        maps.front().emitOpError("holds a tensor map outside a kernel");
        return WalkResult::interrupt();
      }
      for (LLVM::AllocaOp alloca : maps)
        if (failed(passByValue(kernel, alloca)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
