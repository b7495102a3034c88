//===- LoopToGPU.h - Bufferizing graphs into GPU kernels --------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_LOOPTOGPU_LOOPTOGPU_H
#define KILN_CONVERSION_LOOPTOGPU_LOOPTOGPU_H

#include "kiln/Codegen/GraphBufferization.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace kiln {

#define GEN_PASS_DECL_CONVERTLOOPTOGPUPASS
#include "kiln/Conversion/Passes.h.inc"

/// The options of the GPU's bufferization: kiln-loop-to-gpu's, declared with
/// their defaults in Passes.td.
/// - `blockSize`: threads per block of each kernel.
/// - `elementsPerThread`: consecutive elements each thread computes; 0 picks
///   enough for 16-byte accesses. Used where the innermost dimension is a
///   multiple of it.
/// - `transposeTiles`: whether pointwise nodes that read a source transposed
///   run in tiles staged through workgroup memory (else flat, reading
///   uncoalesced).
/// - `rowThreads`: the most threads that share one long row of a row kernel
///   (a power of two, at most the block size).
/// - `rowCache`: whether a row kernel's nodes share the row's loaded elements
///   in registers; else each node loads them again (from L2, mostly): fewer
///   registers per row, so more rows in flight per SM.
/// - `rowLaneVectors`: the most 16-byte vectors each lane handles per node in
///   rows that a warp, or a power-of-two part of one, shares; longer rows get
///   a block.
/// - `shortRowBlockSize`: threads per block of row kernels whose rows take a
///   warp or less.
/// - `elementKernelVectorBytes`: bytes of the widest type per thread of
///   kernels that compute element by element (a window's sums and their
///   readers): each thread computes consecutive elements as vectors. 0: a
///   thread per element.
/// - `columnKernels`: whether long reductions down columns run in column
///   kernels, a warp's lanes on consecutive results (else in row kernels,
///   a block per result reading its elements a row apart).
/// - `matmulKernels`: whether 16-bit products whose rows hold a multiple of 8
///   elements run as Kiln's tensor-core kernels (else GEMM library calls).
/// - `warpgroupMma`: whether those kernels use sm_90a's warpgroup MMA (else
///   Ampere's mma.sync).
/// - `warpgroupAttentionGradients`: whether, with `warpgroupMma`, attention's
///   gradients of heads of 64 and 128 run as one warpgroup-MMA kernel that
///   sums dQ by bulk reductions (else two mma.sync kernels).
/// - `warpgroupTileN`: the warpgroup kernels' columns per block (128 or 256;
///   0: chosen per product).
/// - `tf32Products`: whether f32 products (GEMM library calls) multiply in
///   TF32, as PyTorch's with allow_tf32.
/// - `warpgroupTma`: whether a producer warpgroup copies those kernels'
///   operand tiles with TMA for the others (else all copy with cp.async).
/// - `chooseProducts`: whether products run as the faster, timed per shape,
///   of Kiln's kernel and the GEMM library (followed by a kernel for an
///   epilogue the library cannot apply).
using LoopToGPUOptions = ConvertLoopToGPUPassOptions;

/// Checks that `options` are in range (block and row sizes a GPU runs,
/// vectors the kernels emit), reporting the first that is not with
/// `emitError`. kiln-loop-to-gpu checks its options so when the pass manager
/// starts, before any pass of its pipeline runs.
LogicalResult
verifyLoopToGPUOptions(const LoopToGPUOptions &options,
                       function_ref<InFlightDiagnostic()> emitError);

/// The GPU's bufferization: one gpu.launch per node on the stream the graph
/// function takes as its last argument, gpu.alloc'd temporaries, gpu.memcpy.
/// Use with bufferizeGraph.
GraphBufferizationTarget
getGPUBufferizationTarget(MLIRContext *context,
                          const LoopToGPUOptions &options);

} // namespace kiln
} // namespace mlir

#endif // KILN_CONVERSION_LOOPTOGPU_LOOPTOGPU_H
