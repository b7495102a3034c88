//===- LoopToGPU.cpp - Bufferizing graphs into GPU kernels ----------------===//
//
// Part of Kiln. The GPU's way to bufferize a graph: each loop node becomes a
// kernel with one thread per element, launched on the caller's stream.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Conversion/Bufferization/VectorizeNodeBody.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
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

namespace {
/// Orders a graph's GPU work on the stream the graph function receives: the
/// stream is viewed as an async token, and each asynchronous op depends on
/// the token of the op before it. gpu-to-llvm turns the tokens back into the
/// stream.
class StreamOrder {
public:
  /// The token the next op on `extraArgs`' stream depends on, created from
  /// the stream on first use.
  Value current(OpBuilder &b, Location loc, ValueRange extraArgs) {
    Value stream = extraArgs.front();
    auto it = tokens.find(stream);
    if (it != tokens.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(stream);
    auto tokenType = gpu::AsyncTokenType::get(b.getContext());
    Value token = UnrealizedConversionCastOp::create(b, loc, tokenType, stream)
                      .getResult(0);
    tokens[stream] = token;
    return token;
  }

  /// Records `token` as the one the next op on `extraArgs`' stream depends on.
  void advance(ValueRange extraArgs, Value token) {
    tokens[extraArgs.front()] = token;
  }

private:
  /// The latest token of each graph function, by its stream argument.
  DenseMap<Value, Value> tokens;
};
} // namespace

/// How many consecutive elements of `node` one thread computes: enough for
/// 16-byte accesses to the result (`requested` if positive), when the
/// innermost dimension is a static multiple of it; else 1.
static int64_t getElementsPerThread(loop::PointwiseOp node, int64_t requested) {
  RankedTensorType type = node.getResultType();
  // Bools are bytes in tensors but bits in LLVM's vectors: one at a time.
  if (type.getRank() == 0 || type.getElementTypeBitWidth() % 8 != 0)
    return 1;
  int64_t perThread = requested;
  if (perThread <= 0) {
    unsigned bits = std::max(type.getElementTypeBitWidth(), 8u);
    perThread = std::min<int64_t>(128 / bits, 8);
  }
  int64_t innermost = type.getShape().back();
  if (ShapedType::isDynamic(innermost) || innermost % perThread != 0)
    return 1;
  return perThread;
}

/// Buffers are 16-byte aligned (Kiln's ABI requires it of callers; the
/// allocator gives more): saying so lets LLVM merge a thread's neighbouring
/// accesses into vector loads and stores.
static constexpr int64_t kBufferAlignment = 16;

/// Emits `node` as a kernel over its flattened index space: each thread
/// computes `perThread` consecutive elements of one row.
static void emitKernel(OpBuilder &b, loop::PointwiseOp node, Value dest,
                       IRMapping &mapping, const LoopToGPUOptions &options,
                       StreamOrder &order, ValueRange extraArgs) {
  Location loc = node.getLoc();
  int64_t perThread = getElementsPerThread(node, options.elementsPerThread);
  SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value total = one;
  for (auto [index, size] : llvm::enumerate(sizes))
    total = index == 0 ? size : arith::MulIOp::create(b, loc, total, size);
  Value threads = arith::ConstantIndexOp::create(b, loc, options.blockSize);
  Value step = arith::ConstantIndexOp::create(b, loc, perThread);
  Value perBlock =
      arith::ConstantIndexOp::create(b, loc, options.blockSize * perThread);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, perBlock);

  Value token = order.current(b, loc, extraArgs);
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, threads, one, one,
      /*dynamicSharedMemorySize=*/nullptr,
      gpu::AsyncTokenType::get(b.getContext()), ValueRange{token});
  order.advance(extraArgs, launch.getAsyncToken());

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  // The kernel reads and writes through aligned views of the buffers.
  IRMapping kernelMapping = mapping;
  DenseMap<Value, Value> alignedBuffers;
  auto align = [&](Value buffer) -> Value {
    Value &aligned = alignedBuffers[buffer];
    if (!aligned)
      aligned =
          memref::AssumeAlignmentOp::create(b, loc, buffer, kBufferAlignment);
    return aligned;
  };
  node.getBody().walk([&](loop::LoadOp load) {
    kernelMapping.map(load.getSource(),
                      align(mapping.lookup(load.getSource())));
  });
  Value alignedDest = align(dest);

  Value thread = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value first = arith::MulIOp::create(b, loc, thread, step);
  // With several elements per thread the innermost size is a multiple of
  // their count, so a thread's elements are all in bounds or all out.
  Value inBounds =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, first, total);
  auto guardIf = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guardIf.getThenRegion().front());
  // Row-major: the innermost dimension varies fastest across threads, so
  // neighbouring threads touch neighbouring elements.
  SmallVector<Value> ivs(sizes.size());
  Value rest = first;
  for (int64_t dim = sizes.size() - 1; dim >= 0; --dim) {
    if (dim == 0) {
      ivs[dim] = rest;
      break;
    }
    ivs[dim] = arith::RemUIOp::create(b, loc, rest, sizes[dim]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[dim]);
  }
  if (perThread > 1) {
    // One vector of elements, then one (vector) store.
    FailureOr<Value> elements = emitVectorNodeElements(
        b, node, kernelMapping, ivs, perThread, kBufferAlignment);
    if (succeeded(elements)) {
      auto store = vector::StoreOp::create(b, loc, *elements, alignedDest, ivs);
      if (int64_t alignment = getVectorAccessAlignment(alignedDest, perThread,
                                                       kBufferAlignment))
        store.setAlignment(alignment);
      b.setInsertionPointToEnd(&launch.getBody().front());
      gpu::TerminatorOp::create(b, loc);
      return;
    }
  }
  // Element by element; all elements first, then all stores, so that no
  // store separates a thread's neighbouring loads.
  SmallVector<std::pair<Value, SmallVector<Value>>> elements;
  for (int64_t k = 0; k < perThread; ++k) {
    SmallVector<Value> elementIvs = ivs;
    if (k > 0)
      elementIvs.back() = arith::AddIOp::create(
          b, loc, ivs.back(), arith::ConstantIndexOp::create(b, loc, k));
    Value element = emitNodeElement(b, node, kernelMapping, elementIvs);
    elements.emplace_back(element, std::move(elementIvs));
  }
  for (auto &[element, elementIvs] : elements)
    memref::StoreOp::create(b, loc, element, alignedDest, elementIvs);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

GraphBufferizationTarget
mlir::kiln::getGPUBufferizationTarget(MLIRContext *context,
                                      const LoopToGPUOptions &options) {
  auto order = std::make_shared<StreamOrder>();
  GraphBufferizationTarget target;
  // The stream, a CUDA CUstream.
  target.extraArgumentTypes.push_back(LLVM::LLVMPointerType::get(context));
  target.emitNode = [=](OpBuilder &b, loop::PointwiseOp node, Value dest,
                        IRMapping &mapping, ValueRange extraArgs) {
    emitKernel(b, node, dest, mapping, options, *order, extraArgs);
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
    LoopToGPUOptions options;
    options.blockSize = blockSize;
    options.elementsPerThread = elementsPerThread;
    GraphBufferizationTarget target =
        getGPUBufferizationTarget(&getContext(), options);
    if (failed(bufferizeGraphs(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
