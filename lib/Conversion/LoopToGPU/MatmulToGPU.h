//===- MatmulToGPU.h - Matrix products through the GEMM library -*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_LOOPTOGPU_MATMULTOGPU_H
#define KILN_LIB_CONVERSION_LOOPTOGPU_MATMULTOGPU_H

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class IRMapping;
class OpBuilder;
namespace kiln {
namespace loop {
class MatmulOp;
} // namespace loop
class StreamOrder;

/// Checks that `node`'s dtype has a GPU GEMM (f32, f16, bf16), and that
/// the GEMM library applies its epilogue unless `matmulKernels` and Kiln's
/// tensor-core kernels compute it (loop::isTensorCoreProduct).
LogicalResult checkGPUMatmul(loop::MatmulOp node, bool matmulKernels);

/// Emits a host call of the runtime's GEMM (cuBLASLt) that computes `node`
/// into `dest` on `stream`, after the work already ordered on it; f32
/// operands are multiplied in TF32 if `tf32`.
void emitLibraryMatmul(OpBuilder &b, loop::MatmulOp node, Value dest,
                       const IRMapping &mapping, Value stream,
                       bool tf32 = false);

/// Emits `node`, whose epilogue the GEMM library cannot apply, as a GEMM
/// call into a temporary of the sums rounded to the operands' type (as
/// eager's product is), then a kernel that applies the epilogue to them
/// into `dest`: the product as the library computes it, to weigh against
/// Kiln's kernel, which fuses the epilogue.
void emitLibraryMatmulAndEpilogue(OpBuilder &b, loop::MatmulOp node, Value dest,
                                  const IRMapping &mapping,
                                  const LoopToGPUOptions &options,
                                  StreamOrder &order, ValueRange extraArgs);

/// Emits `node` as the faster for its shape of two ways to compute it, at
/// the builder's insertion point: `emitLibrary` (with the GEMM library) and
/// `emitKernel` (Kiln's kernel). The runtime times both at the shape's first
/// call (host calls of kiln_cuda_product_choice, _mark and _decide around a
/// few runs of each) and keeps the choice. Both are called more than once.
void emitProductChoice(OpBuilder &b, loop::MatmulOp node,
                       const IRMapping &mapping, Value stream,
                       function_ref<void()> emitLibrary,
                       function_ref<void()> emitKernel);

/// Emits a read-only host global that holds the frozen constant `value`
/// and a host call of the runtime that returns its device copy (uploaded
/// on `stream` at its first use); returns that copy as a buffer.
Value emitDeviceConstant(OpBuilder &b, Location loc, ElementsAttr value,
                         Value stream);

} // namespace kiln
} // namespace mlir

#endif // KILN_LIB_CONVERSION_LOOPTOGPU_MATMULTOGPU_H
