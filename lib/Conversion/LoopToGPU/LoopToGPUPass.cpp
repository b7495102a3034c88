//===- LoopToGPUPass.cpp - The kiln-loop-to-gpu pass ----------------------===//
//
// Part of Kiln. kiln-loop-to-gpu checks its options, bufferizes the module's
// graphs with the GPU target (getGPUBufferizationTarget) and has libdevice
// compute the kernels' float remainders.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"
#include "MatmulToGPU.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOGPUPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct ConvertLoopToGPUPass
    : kiln::impl::ConvertLoopToGPUPassBase<ConvertLoopToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: block-size must be in [1, 1024], got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    if (elementsPerThread < 0 || elementsPerThread > 16) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: elements-per-thread must be in [0, 16], got "
          << static_cast<int64_t>(elementsPerThread);
      return signalPassFailure();
    }
    // Block reductions combine whole warps.
    if (rowThreads < kWarpSize || rowThreads > 1024 ||
        !llvm::isPowerOf2_64(rowThreads)) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: row-threads must be a power of two in [32, "
             "1024], got "
          << static_cast<int64_t>(rowThreads);
      return signalPassFailure();
    }
    if (rowLaneVectors < 1 || rowLaneVectors > kMaxUnrolledSteps) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: row-lane-vectors must be in [1, "
          << kMaxUnrolledSteps << "], got "
          << static_cast<int64_t>(rowLaneVectors);
      return signalPassFailure();
    }
    if (shortRowBlockSize < kWarpSize || shortRowBlockSize > 1024) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: short-row-block-size must be in [32, 1024], "
             "got "
          << static_cast<int64_t>(shortRowBlockSize);
      return signalPassFailure();
    }
    if (elementKernelVectorBytes != 0 &&
        (elementKernelVectorBytes < 4 || elementKernelVectorBytes > 64 ||
         !llvm::isPowerOf2_64(elementKernelVectorBytes))) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: element-kernel-vector-bytes must be 0 or a "
             "power of two in [4, 64], got "
          << static_cast<int64_t>(elementKernelVectorBytes);
      return signalPassFailure();
    }
    WalkResult unsupported = getOperation().walk([](loop::MatmulOp node) {
      return failed(checkGPUMatmul(node)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    LoopToGPUOptions options;
    options.blockSize = blockSize;
    options.elementsPerThread = elementsPerThread;
    options.transposeTiles = transposeTiles;
    options.rowThreads = rowThreads;
    options.rowCache = rowCache;
    options.rowLaneVectors = rowLaneVectors;
    options.shortRowBlockSize = shortRowBlockSize;
    options.elementKernelVectorBytes = elementKernelVectorBytes;
    GraphBufferizationTarget target =
        getGPUBufferizationTarget(&getContext(), options);
    if (failed(bufferizeGraphs(getOperation(), target)))
      return signalPassFailure();
    callLibdeviceForRemainders(getOperation());
  }
};
} // namespace
