//===- LoopToGPU.cpp - Bufferizing graphs into GPU kernels ----------------===//
//
// Part of Kiln. The GPU's way to bufferize a graph: each loop node becomes a
// kernel with one thread per element, launched on the caller's stream.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Conversion/Passes.h"

#include "GPUKernels.h"
#include "MatmulToGPU.h"

#include "kiln/Conversion/Bufferization/ElementKernels.h"
#include "kiln/Conversion/Bufferization/VectorizeNodeBody.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include <algorithm>

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOGPUPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

GraphBufferizationTarget
mlir::kiln::getGPUBufferizationTarget(MLIRContext *context,
                                      const LoopToGPUOptions &options) {
  auto order = std::make_shared<StreamOrder>();
  GraphBufferizationTarget target;
  // The stream, a CUDA CUstream.
  target.extraArgumentTypes.push_back(LLVM::LLVMPointerType::get(context));
  target.emitNode = [=](OpBuilder &b, loop::PointwiseOp node, Value dest,
                        IRMapping &mapping, ValueRange extraArgs) {
    if (options.transposeTiles) {
      if (std::optional<TransposeTiling> tiling = getTransposeTiling(node))
        return emitTransposeTiledKernel(b, node, *tiling, dest, mapping, *order,
                                        extraArgs);
    }
    emitKernel(b, node, dest, mapping, options, *order, extraArgs);
  };
  target.emitReduce = [=](OpBuilder &b, loop::ReduceOp node, Value dest,
                          IRMapping &mapping, ValueRange extraArgs) {
    DenseMap<Value, SmallVector<Value, 1>> stores;
    stores[node.getResult()].push_back(dest);
    int64_t rank = node.getResultType().getRank();
    if (int64_t width =
            getGPUElementKernelWidth({node.getOperation()}, rank, options);
        width > 1)
      return emitElementKernel(b, node.getLoc(), {node.getOperation()}, rank,
                               width, stores, mapping, options, *order,
                               extraArgs);
    emitRowKernel(b, node.getLoc(), {node.getOperation()}, rank, stores,
                  mapping, options, *order, extraArgs);
  };
  target.emitMatmul = [](OpBuilder &b, loop::MatmulOp node, Value dest,
                         IRMapping &mapping, ValueRange extraArgs) {
    emitLibraryMatmul(b, node, dest, mapping, extraArgs.front());
  };
  target.emitScatter = [=](OpBuilder &b, loop::ScatterOp node, Value dest,
                           IRMapping &mapping, ValueRange extraArgs) {
    emitScatterKernel(b, node, dest, mapping, options, *order, extraArgs);
  };
  target.emitKernel = [=](OpBuilder &b, loop::KernelOp kernel, ValueRange dests,
                          IRMapping &mapping, ValueRange extraArgs) {
    DenseMap<Value, SmallVector<Value, 1>> stores;
    for (auto [value, dest] : llvm::zip(kernel.getYield().getValues(), dests))
      stores[value].push_back(dest);
    SmallVector<Operation *> nodes = llvm::map_to_vector(
        kernel.getNodes(), [](Operation &op) { return &op; });
    int64_t rows = kernel.getRows();
    if (int64_t width = getGPUElementKernelWidth(nodes, rows, options);
        width > 1)
      return emitElementKernel(b, kernel.getLoc(), nodes, rows, width, stores,
                               mapping, options, *order, extraArgs);
    emitRowKernel(b, kernel.getLoc(), nodes, rows, stores, mapping, options,
                  *order, extraArgs);
  };
  target.emitConstant = [](OpBuilder &b, Location loc, ElementsAttr value,
                           ValueRange extraArgs) -> Value {
    return emitDeviceConstant(b, loc, value, extraArgs.front());
  };
  target.allocate = [=](OpBuilder &b, Location loc, MemRefType type,
                        ValueRange dynamicSizes,
                        ValueRange extraArgs) -> Value {
    Value token = order->current(b, loc, extraArgs);
    auto alloc = gpu::AllocOp::create(
        b, loc, type, gpu::AsyncTokenType::get(b.getContext()),
        ValueRange{token}, dynamicSizes, /*symbolOperands=*/ValueRange{});
    order->advance(extraArgs, alloc.getAsyncToken());
    return alloc.getMemref();
  };
  target.deallocate = [=](OpBuilder &b, Location loc, Value buffer,
                          ValueRange extraArgs) {
    Value token = order->current(b, loc, extraArgs);
    auto dealloc =
        gpu::DeallocOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                               ValueRange{token}, buffer);
    order->advance(extraArgs, dealloc.getAsyncToken());
  };
  target.copy = [=](OpBuilder &b, Location loc, Value source, Value dest,
                    ValueRange extraArgs) {
    Value token = order->current(b, loc, extraArgs);
    auto copy =
        gpu::MemcpyOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                              ValueRange{token}, dest, source);
    order->advance(extraArgs, copy.getAsyncToken());
  };
  return target;
}

/// Replaces the kernels' float remainders by calls of libdevice's fmod:
/// upstream's NVVM pipeline turns `arith.remf` into `llvm.frem` (which
/// NVPTX has no exact instruction for) before its libdevice patterns could
/// see it. Outlining copies the declarations into the kernels' module.
static void callLibdeviceForRemainders(ModuleOp module) {
  SmallVector<arith::RemFOp> remainders;
  module.walk([&](gpu::LaunchOp launch) {
    launch.walk([&](arith::RemFOp op) { remainders.push_back(op); });
  });
  for (arith::RemFOp op : remainders) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    Type callType = type.isF64() ? type : b.getF32Type();
    StringRef name = type.isF64() ? "__nv_fmod" : "__nv_fmodf";
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function) {
      OpBuilder atEnd = OpBuilder::atBlockEnd(module.getBody());
      function = func::FuncOp::create(
          atEnd, loc, name,
          atEnd.getFunctionType({callType, callType}, {callType}));
      function.setPrivate();
    }
    auto widen = [&](Value value) -> Value {
      return value.getType() == callType
                 ? value
                 : arith::ExtFOp::create(b, loc, callType, value);
    };
    Value result =
        func::CallOp::create(b, loc, function,
                             ValueRange{widen(op.getLhs()), widen(op.getRhs())})
            .getResult(0);
    if (type != callType)
      result = arith::TruncFOp::create(b, loc, type, result);
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

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
