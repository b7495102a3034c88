//===- RowKernelOccupancy.cpp - Register caps for row kernels -------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_ROWKERNELOCCUPANCYPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct RowKernelOccupancyPass
    : kiln::impl::RowKernelOccupancyPassBase<RowKernelOccupancyPass> {
  using RowKernelOccupancyPassBase::RowKernelOccupancyPassBase;

  void runOnOperation() override {
    if (minBlocksPerSM <= 0)
      return;
    // LoopToGPU names row kernels kiln_rows; outlining may add a suffix.
    auto blocks =
        IntegerAttr::get(IntegerType::get(&getContext(), 32), minBlocksPerSM);
    getOperation().walk([&](gpu::GPUFuncOp kernel) {
      if (kernel.isKernel() && kernel.getName().starts_with("kiln_rows"))
        kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), blocks);
    });
  }
};
} // namespace
