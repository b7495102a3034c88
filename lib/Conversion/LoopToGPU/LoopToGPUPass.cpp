//===- LoopToGPUPass.cpp - The kiln-loop-to-gpu pass ----------------------===//
//
// Part of Kiln. kiln-loop-to-gpu checks its options (verifyLoopToGPUOptions,
// when the pass manager starts), bufferizes the module's
// graphs with the GPU target (getGPUBufferizationTarget) and has libdevice
// compute the kernels' float remainders.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"
#include "LibraryCalls.h"
#include "MatmulToGPU.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/AttentionBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOGPUPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

LogicalResult mlir::kiln::verifyLoopToGPUOptions(
    const LoopToGPUOptions &options,
    function_ref<InFlightDiagnostic()> emitError) {
  if (options.blockSize <= 0 || options.blockSize > 1024)
    return emitError()
           << "kiln-loop-to-gpu: block-size must be in [1, 1024], got "
           << options.blockSize;
  if (options.elementsPerThread < 0 || options.elementsPerThread > 16)
    return emitError()
           << "kiln-loop-to-gpu: elements-per-thread must be in [0, 16], got "
           << options.elementsPerThread;
  // Block reductions combine whole warps.
  if (options.rowThreads < kWarpSize || options.rowThreads > 1024 ||
      !llvm::isPowerOf2_64(options.rowThreads))
    return emitError() << "kiln-loop-to-gpu: row-threads must be a power of "
                          "two in [32, 1024], got "
                       << options.rowThreads;
  if (options.rowLaneVectors < 1 || options.rowLaneVectors > kMaxUnrolledSteps)
    return emitError() << "kiln-loop-to-gpu: row-lane-vectors must be in [1, "
                       << kMaxUnrolledSteps << "], got "
                       << options.rowLaneVectors;
  if (options.shortRowBlockSize < kWarpSize || options.shortRowBlockSize > 1024)
    return emitError() << "kiln-loop-to-gpu: short-row-block-size must be in "
                          "[32, 1024], got "
                       << options.shortRowBlockSize;
  if (options.elementKernelVectorBytes != 0 &&
      (options.elementKernelVectorBytes < 4 ||
       options.elementKernelVectorBytes > 64 ||
       !llvm::isPowerOf2_64(options.elementKernelVectorBytes)))
    return emitError() << "kiln-loop-to-gpu: element-kernel-vector-bytes must "
                          "be 0 or a power of two in [4, 64], got "
                       << options.elementKernelVectorBytes;
  if (options.warpgroupTileN != 0 && options.warpgroupTileN != 128 &&
      options.warpgroupTileN != 256)
    return emitError() << "kiln-loop-to-gpu: warpgroup-tile-n must be 0, 128 "
                          "or 256, got "
                       << options.warpgroupTileN;
  return success();
}

namespace {
struct ConvertLoopToGPUPass
    : kiln::impl::ConvertLoopToGPUPassBase<ConvertLoopToGPUPass> {
  using Base::Base;

  /// The options as the library takes them.
  LoopToGPUOptions getLoopToGPUOptions() const {
    LoopToGPUOptions options;
    options.blockSize = blockSize;
    options.elementsPerThread = elementsPerThread;
    options.transposeTiles = transposeTiles;
    options.rowThreads = rowThreads;
    options.rowCache = rowCache;
    options.rowLaneVectors = rowLaneVectors;
    options.shortRowBlockSize = shortRowBlockSize;
    options.elementKernelVectorBytes = elementKernelVectorBytes;
    options.columnKernels = columnKernels;
    options.matmulKernels = matmulKernels;
    options.warpgroupMma = warpgroupMma;
    options.warpgroupAttentionGradients = warpgroupAttentionGradients;
    options.warpgroupTileN = warpgroupTileN;
    options.warpgroupTma = warpgroupTma;
    options.tf32Products = tf32Products;
    options.chooseProducts = chooseProducts;
    return options;
  }

  /// Options out of range fail the pass manager before any pass runs.
  LogicalResult initialize(MLIRContext *context) override {
    return verifyLoopToGPUOptions(getLoopToGPUOptions(), [context] {
      return emitError(UnknownLoc::get(context));
    });
  }

  void runOnOperation() override {
    WalkResult unsupported = getOperation().walk([&](Operation *op) {
      if (auto matmul = dyn_cast<loop::MatmulOp>(op))
        return failed(checkGPUMatmul(matmul, matmulKernels))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      if (auto attention = dyn_cast<loop::AttentionOp>(op)) {
        if (loop::hasAttentionKernel(attention))
          return WalkResult::advance();
        attention.emitError(
            "kiln-loop-to-gpu: no kernel computes this attention (f16 or "
            "bf16 operands with equal head sizes, a multiple of 16 up to ")
            << loop::kMaxKernelHeadSize
            << "): kiln-loop-expand-attention writes it out";
        return WalkResult::interrupt();
      }
      if (auto gradients = dyn_cast<loop::AttentionBackwardOp>(op)) {
        if (loop::hasAttentionBackwardKernel(gradients))
          return WalkResult::advance();
        gradients.emitError(
            "kiln-loop-to-gpu: no kernel computes these attention gradients "
            "(f16 or bf16 operands with equal head sizes, a multiple of 16 up "
            "to ")
            << loop::kMaxKernelHeadSize
            << "): kiln-loop-expand-attention writes them out";
        return WalkResult::interrupt();
      }
      if (auto convolution = dyn_cast<loop::ConvolutionOp>(op))
        return failed(checkGPUConvolution(convolution))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    GraphBufferizationTarget target =
        getGPUBufferizationTarget(&getContext(), getLoopToGPUOptions());
    if (failed(bufferizeGraphs(getOperation(), target)))
      return signalPassFailure();
    callLibdeviceForRemainders(getOperation());
  }
};
} // namespace
