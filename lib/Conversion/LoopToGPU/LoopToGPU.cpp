//===- LoopToGPU.cpp - Bufferizing graphs into GPU kernels ----------------===//
//
// Part of Kiln. The GPU's way to bufferize a graph: each loop node or fused
// kernel becomes a kernel launched on the caller's stream (the emitters are in
// PointwiseKernels.cpp, TransposeTiles.cpp, RowKernels.cpp and
// ColumnKernels.cpp), products call the GEMM library (MatmulToGPU.cpp) or,
// with `matmul-kernels`, run as Kiln's tensor-core kernels
// (MatmulKernels.cpp), attention runs as Kiln's flash-attention kernel
// (AttentionKernels.cpp), convolutions call the convolution library
// (ConvolutionToGPU.cpp), and temporaries and copies go on the stream too. The
// pass that uses it is in LoopToGPUPass.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"

#include "GPUKernels.h"
#include "LibraryCalls.h"
#include "MatmulToGPU.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/EpilogueFusion.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

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
    emitPointwiseKernel(b, node, dest, mapping, options, *order, extraArgs);
  };
  target.emitReduce = [=](OpBuilder &b, loop::ReduceOp node, Value dest,
                          IRMapping &mapping, ValueRange extraArgs) {
    DenseMap<Value, SmallVector<Value, 1>> stores;
    stores[node.getResult()].push_back(dest);
    int64_t rank = node.getResultType().getRank();
    if (isColumnKernel({node.getOperation()}, rank, options))
      return emitColumnKernel(b, node.getLoc(), {node.getOperation()}, rank,
                              stores, mapping, *order, extraArgs);
    if (int64_t width =
            getGPUElementKernelWidth({node.getOperation()}, rank, options);
        width > 1)
      return emitElementKernel(b, node.getLoc(), {node.getOperation()}, rank,
                               width, stores, mapping, options, *order,
                               extraArgs);
    emitRowKernel(b, node.getLoc(), {node.getOperation()}, rank, stores,
                  mapping, options, *order, extraArgs);
  };
  target.emitMatmul = [=](OpBuilder &b, loop::MatmulOp node, Value dest,
                          IRMapping &mapping, ValueRange extraArgs) {
    if (!options.matmulKernels || !loop::isTensorCoreProduct(node))
      return emitLibraryMatmul(b, node, dest, mapping, extraArgs.front(),
                               options.tf32Products);
    auto emitKernel = [&] {
      if (options.warpgroupMma)
        emitWarpgroupMatmul(b, node, dest, mapping, *order, extraArgs,
                            options.warpgroupTileN, options.warpgroupTma);
      else
        emitTensorCoreMatmul(b, node, dest, mapping, *order, extraArgs);
    };
    if (!options.chooseProducts)
      return emitKernel();
    // The candidates launch inside the choice's regions: the work after it
    // depends on the stream as it was before (it is one stream: all that
    // the choice queued runs first). The library's candidate applies the
    // epilogue itself where it can, else in a kernel after the product.
    Value before = order->current(b, node.getLoc(), extraArgs);
    bool libraryEpilogue = loop::matchLibraryEpilogue(node).has_value();
    emitProductChoice(
        b, node, mapping, extraArgs.front(),
        [&] {
          if (libraryEpilogue)
            emitLibraryMatmul(b, node, dest, mapping, extraArgs.front());
          else
            emitLibraryMatmulAndEpilogue(b, node, dest, mapping, options,
                                         *order, extraArgs);
          order->advance(extraArgs, before);
        },
        [&] {
          emitKernel();
          order->advance(extraArgs, before);
        });
  };
  // (kiln-loop-to-gpu checks that the kernel computes each node.)
  target.emitAttention = [=](OpBuilder &b, loop::AttentionOp node,
                             ValueRange dests, IRMapping &mapping,
                             ValueRange extraArgs) {
    emitAttentionKernel(b, node, dests, mapping, *order, extraArgs,
                        options.warpgroupMma);
  };
  target.emitAttentionBackward =
      [=](OpBuilder &b, loop::AttentionBackwardOp node, ValueRange dests,
          IRMapping &mapping, ValueRange extraArgs) {
        emitAttentionBackwardKernels(b, node, dests, mapping, *order, extraArgs,
                                     options.warpgroupMma &&
                                         options.warpgroupAttentionGradients);
      };
  target.emitConvolution = [](OpBuilder &b, loop::ConvolutionOp node,
                              Value dest, IRMapping &mapping,
                              ValueRange extraArgs) {
    emitLibraryConvolution(b, node, dest, mapping, extraArgs.front());
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
    if (isColumnKernel(nodes, rows, options))
      return emitColumnKernel(b, kernel.getLoc(), nodes, rows, stores, mapping,
                              *order, extraArgs);
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
    return allocateOnStream(b, loc, type, dynamicSizes, *order, extraArgs);
  };
  target.deallocate = [=](OpBuilder &b, Location loc, Value buffer,
                          ValueRange extraArgs) {
    deallocateOnStream(b, loc, buffer, *order, extraArgs);
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
