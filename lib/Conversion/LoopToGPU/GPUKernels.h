//===- GPUKernels.h - What Kiln's GPU kernel emitters share -----*- C++ -*-===//
//
// Part of Kiln. Internal to the LoopToGPU library: ordering on the caller's
// stream and launches (Launches.cpp), aligned buffer views, and the kernel
// emitters by file: pointwise, scatter and element kernels
// (PointwiseKernels.cpp), row kernels (RowKernels.cpp), column kernels
// (ColumnKernels.cpp), transposed reads in
// tiles (TransposeTiles.cpp), products on tensor cores (MatmulKernels.cpp,
// WarpgroupMatmulKernels.cpp);
// and libdevice's remainders
// (LibdeviceRemainders.cpp). LoopToGPU.cpp's bufferization target calls the
// emitters; they call Launches.cpp, not one another nor LoopToGPU.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_LOOPTOGPU_GPUKERNELS_H
#define KILN_LIB_CONVERSION_LOOPTOGPU_GPUKERNELS_H

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include <optional>

namespace mlir::kiln {

/// Orders a graph's GPU work on the stream the graph function receives: the
/// stream is viewed as an async token, and each asynchronous op depends on
/// the token of the op before it. gpu-to-llvm turns the tokens back into the
/// stream.
class StreamOrder {
public:
  /// The token the next op on `extraArgs`' stream depends on, created from
  /// the stream on first use.
  Value current(OpBuilder &b, Location loc, ValueRange extraArgs);

  /// Records `token` as the one the next op on `extraArgs`' stream depends on.
  void advance(ValueRange extraArgs, Value token) {
    tokens[extraArgs.front()] = token;
  }

private:
  /// The latest token of each graph function, by its stream argument.
  DenseMap<Value, Value> tokens;
};

/// A buffer of `type` allocated on `extraArgs`' stream after its work
/// (gpu.alloc async), and its release there.
Value allocateOnStream(OpBuilder &b, Location loc, MemRefType type,
                       ValueRange dynamicSizes, StreamOrder &order,
                       ValueRange extraArgs);
void deallocateOnStream(OpBuilder &b, Location loc, Value buffer,
                        StreamOrder &order, ValueRange extraArgs);

/// The sizes of `buffer` (a memref), one per dimension.
SmallVector<Value> getBufferSizes(OpBuilder &b, Location loc, Value buffer);

/// allocateOnStream of a buffer of `like`'s shape (its sizes `sizes`, as
/// getBufferSizes gives them) with `elementType` elements.
Value allocateLikeOnStream(OpBuilder &b, Location loc, Value like,
                           ArrayRef<Value> sizes, Type elementType,
                           StreamOrder &order, ValueRange extraArgs);

/// A TMA tensor map as a kernel receives it: 128 bytes, 64-byte aligned.
/// The warpgroup kernels store it into an alloca marked kTensorMapAttr, which
/// kiln-tensor-map-parameters makes the parameter itself.
inline constexpr int64_t kTensorMapWords = 16, kTensorMapAlignment = 64;
inline constexpr llvm::StringLiteral kTensorMapAttr = "kiln.tensor_map";

/// Buffers are 16-byte aligned (Kiln's ABI requires it of callers; the
/// allocator gives more): saying so lets LLVM merge a thread's neighbouring
/// accesses into vector loads and stores.
inline constexpr int64_t kBufferAlignment = 16;

/// Threads per warp on NVIDIA GPUs.
inline constexpr int64_t kWarpSize = 32;

/// The most steps of a thread that are unrolled (along a row kernel's
/// columns, down a column kernel's reduction), so that their loads are in
/// flight together.
inline constexpr int64_t kMaxUnrolledSteps = 16;

/// A kernel's aligned views of the buffers it uses, one per buffer, made at
/// the builder's insertion point on first use.
class AlignedViews {
public:
  AlignedViews(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value operator()(Value buffer) {
    Value &view = views[buffer];
    if (!view)
      view =
          memref::AssumeAlignmentOp::create(b, loc, buffer, kBufferAlignment);
    return view;
  }

  /// Maps, in `kernelMapping`, each tensor that `node` loads from and that
  /// `mapping` maps to a buffer to that buffer's aligned view.
  void alignSources(Operation *node, const IRMapping &mapping,
                    IRMapping &kernelMapping) {
    node->walk([&](loop::LoadOp load) {
      if (Value buffer = mapping.lookupOrNull(load.getSource()))
        if (isa<MemRefType>(buffer.getType()))
          kernelMapping.map(load.getSource(), (*this)(buffer));
    });
  }

private:
  OpBuilder &b;
  Location loc;
  DenseMap<Value, Value> views;
};

/// A 1-D launch of `blocks` blocks of `threads` threads after the stream's
/// work, whose kernel outlining names `kiln_<kind>`; with `sharedBytes` (an
/// i32) bytes of dynamic workgroup memory per block.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, StringRef kind,
                           Value blocks, Value threads, StreamOrder &order,
                           ValueRange extraArgs, Value sharedBytes = nullptr);

/// The product of `sizes` (1 for none).
Value getProduct(OpBuilder &b, Location loc, ArrayRef<Value> sizes);

/// A 1-D launch of `blocks` blocks of `threads` threads after the stream's
/// work; returns it with the global index of the thread that runs its body.
std::pair<gpu::LaunchOp, Value>
createFlatLaunch(OpBuilder &b, Location loc, StringRef kind, Value blocks,
                 Value threads, StreamOrder &order, ValueRange extraArgs);

/// A 1-D launch over `total` elements, `perThread` consecutive ones per
/// thread, after the stream's work; returns it with the first element of
/// the thread that runs its body.
std::pair<gpu::LaunchOp, Value>
createElementLaunch(OpBuilder &b, Location loc, StringRef kind, Value total,
                    int64_t perThread, const LoopToGPUOptions &options,
                    StreamOrder &order, ValueRange extraArgs);

/// A buffer of `shape` x `element` in `launch`'s workgroup (shared) memory.
inline Value addWorkgroupBuffer(gpu::LaunchOp launch, ArrayRef<int64_t> shape,
                                Type element, Location loc) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      launch.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  return launch.addWorkgroupAttribution(
      MemRefType::get(shape, element, MemRefLayoutAttrInterface(), workgroup),
      loc);
}

/// Emits `node` as a kernel over its flattened index space: each thread
/// computes `perThread` consecutive elements of one row.
void emitPointwiseKernel(OpBuilder &b, loop::PointwiseOp node, Value dest,
                         IRMapping &mapping, const LoopToGPUOptions &options,
                         StreamOrder &order, ValueRange extraArgs);

/// Emits a scatter as a kernel with a thread per update, each an atomic
/// addition into `dest` (which holds the scatter's `init` by then).
void emitScatterKernel(OpBuilder &b, loop::ScatterOp node, Value dest,
                       IRMapping &mapping, const LoopToGPUOptions &options,
                       StreamOrder &order, ValueRange extraArgs);

/// Emits a kernel that computes element by element (getElementKernelWidth
/// gave `width`, which divides the static innermost row size) with
/// `width` consecutive elements per thread, as vectors: the reads of a
/// window step load whole vectors where they stay inside the row.
void emitElementKernel(OpBuilder &b, Location loc, ArrayRef<Operation *> nodes,
                       int64_t rows, int64_t width,
                       const DenseMap<Value, SmallVector<Value, 1>> &stores,
                       IRMapping &mapping, const LoopToGPUOptions &options,
                       StreamOrder &order, ValueRange extraArgs);

/// The elements per thread of `nodes` (a kernel over `rows` row
/// dimensions) as an element kernel (emitElementKernel): as many as the
/// option asks for, or the largest power of two below that which divides
/// the static innermost row size; 1 where they do not compute element by
/// element, the option is off, or the innermost row size is dynamic.
int64_t getGPUElementKernelWidth(ArrayRef<Operation *> nodes, int64_t rows,
                                 const LoopToGPUOptions &options);

/// Emits `nodes` as one kernel over rows (the first `rows` dimensions of
/// every node's result), a warp or a block per row (getRowMapping): each node
/// in turn strides over the row's columns with the row's threads;
/// reductions combine across them and stay in registers as row values for
/// later nodes. Nodes in `stores` are written to their buffers.
void emitRowKernel(OpBuilder &b, Location loc, ArrayRef<Operation *> nodes,
                   int64_t rows,
                   const DenseMap<Value, SmallVector<Value, 1>> &stores,
                   IRMapping &mapping, const LoopToGPUOptions &options,
                   StreamOrder &order, ValueRange extraArgs);

/// Whether `nodes` (a kernel over `rows` dimensions that all of them have:
/// every node a row value) run as a column kernel: the option is on, and
/// they are pointwise nodes and at least one reduction, all reductions
/// down columns (loop::isColumnReduction) of at least 64 elements or of a
/// dynamic number.
bool isColumnKernel(ArrayRef<Operation *> nodes, int64_t rows,
                    const LoopToGPUOptions &options);

/// Emits `nodes` (isColumnKernel) as one kernel of 32 x 8 threads per block:
/// the 32 lanes of a warp take consecutive results (rows flattened), the 8
/// warps a share each of every reduction, combined through workgroup
/// memory; the first warp stores what `stores` asks for.
void emitColumnKernel(OpBuilder &b, Location loc, ArrayRef<Operation *> nodes,
                      int64_t rows,
                      const DenseMap<Value, SmallVector<Value, 1>> &stores,
                      IRMapping &mapping, StreamOrder &order,
                      ValueRange extraArgs);

/// Emits `node` (loop::isTensorCoreProduct) as Kiln's tensor-core kernel
/// (MatmulKernels.cpp): 128x128 tiles of the result per block, the operand
/// tiles copied into dynamic workgroup memory four stages deep, mma.sync on
/// 16x8x16 fragments, the epilogue applied to the f32 sums before they are
/// stored.
void emitTensorCoreMatmul(OpBuilder &b, loop::MatmulOp node, Value dest,
                          IRMapping &mapping, StreamOrder &order,
                          ValueRange extraArgs);

/// Emits `node` (loop::isTensorCoreProduct) as Kiln's sm_90a kernel
/// (WarpgroupMatmulKernels.cpp): a warpgroup per 128x128 tile of the
/// result, or two per 128x256 tile (`tileN`, 0 to choose by the result's
/// sizes), the operand tiles copied into swizzled workgroup memory several
/// stages deep (with `tma`, by TMA from a producer warpgroup, for two that
/// multiply), wgmma m64nNk16 on them, the epilogue applied to the f32 sums
/// before they are stored.
void emitWarpgroupMatmul(OpBuilder &b, loop::MatmulOp node, Value dest,
                         IRMapping &mapping, StreamOrder &order,
                         ValueRange extraArgs, int64_t tileN, bool tma);

/// Emits `node` (loop::hasAttentionKernel) as Kiln's flash-attention kernel
/// (AttentionKernels.cpp): a block of 4 warps per 128 queries of a batch
/// walks the keys in blocks copied into workgroup memory, mma.sync computes
/// the scores and their probabilities' product with the values, an online
/// softmax keeps the scores in registers. With `warpgroupMma` (sm_90a),
/// heads of a multiple of 64 multiply with wgmma instead, two warpgroups
/// per 128 queries. `dests` are the result's buffer and, where the node has
/// one, the logsumexp's.
void emitAttentionKernel(OpBuilder &b, loop::AttentionOp node, ValueRange dests,
                         IRMapping &mapping, StreamOrder &order,
                         ValueRange extraArgs, bool warpgroupMma);

/// Emits `node` (loop::hasAttentionBackwardKernel) as Kiln's kernels of
/// attention's gradients (AttentionBackwardKernels.cpp), storing dQ, dK and
/// dV into `dests`: with mma.sync (sm_80 and later), one per block of 64
/// keys walks the queries for dK and dV, one per block of 64 queries walks
/// the keys for dQ; with `warpgroupMma` (sm_90a, warpgroup-mma and
/// warpgroup-attention-gradients), heads of 64 and 128 take
/// one warpgroup-MMA kernel per 128 keys that also adds dQ into f32 sums
/// (zeroed before, rounded after).
void emitAttentionBackwardKernels(OpBuilder &b, loop::AttentionBackwardOp node,
                                  ValueRange dests, IRMapping &mapping,
                                  StreamOrder &order, ValueRange extraArgs,
                                  bool warpgroupMma);

/// Replaces the kernels' float remainders by calls of libdevice's fmod:
/// upstream's NVVM pipeline turns `arith.remf` into `llvm.frem` (which
/// NVPTX has no exact instruction for) before its libdevice patterns could
/// see it. Outlining copies the declarations into the kernels' module.
void callLibdeviceForRemainders(ModuleOp module);

/// How a pointwise node that reads a source transposed runs in tiles: its
/// `stagedLoads` read their sources' innermost dimension along result
/// dimension `tileDim` instead of the innermost one, so a warp that walks the
/// result's rows would read them a row apart.
struct TransposeTiling {
  int64_t tileDim;
  SmallVector<loop::LoadOp> stagedLoads;
};

/// The tiling of `node`, or none when every load it makes is coalesced in the
/// result's order (or too short a run to gain from tiles).
std::optional<TransposeTiling> getTransposeTiling(loop::PointwiseOp node);

/// Emits `node` as a kernel of 32x32 tiles of result dimensions
/// (`tiling.tileDim`, innermost): a block first reads its tile of each staged
/// load along `tileDim` (coalesced in the source) into workgroup memory, then
/// computes and stores the tile along the innermost dimension (coalesced in
/// the result), taking the staged values from workgroup memory.
void emitTransposeTiledKernel(OpBuilder &b, loop::PointwiseOp node,
                              const TransposeTiling &tiling, Value dest,
                              IRMapping &mapping, StreamOrder &order,
                              ValueRange extraArgs);

} // namespace mlir::kiln

#endif // KILN_LIB_CONVERSION_LOOPTOGPU_GPUKERNELS_H
