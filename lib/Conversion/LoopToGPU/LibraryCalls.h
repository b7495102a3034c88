//===- LibraryCalls.h - Host calls of the runtime's libraries ---*- C++ -*-===//
//
// Part of Kiln. What the GEMM (MatmulToGPU.cpp) and convolution
// (ConvolutionToGPU.cpp) calls share, and the convolution's entry points.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_LOOPTOGPU_LIBRARYCALLS_H
#define KILN_LIB_CONVERSION_LOOPTOGPU_LIBRARYCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"

namespace mlir {
class IRMapping;
class OpBuilder;
namespace kiln {
namespace loop {
class ConvolutionOp;
} // namespace loop

/// The runtime's code for an element type (0 = f32, 1 = f16, 2 = bf16), or
/// -1 where its libraries have none.
int32_t getLibraryDtypeCode(Type element);

/// The private declaration of the runtime's function `name` of `type` in
/// `module`, added at its first use.
func::FuncOp getRuntimeDeclaration(OpBuilder &b, ModuleOp module,
                                   StringRef name, FunctionType type);

/// The address of `buffer`'s first element as an LLVM pointer.
Value getBufferPointer(OpBuilder &b, Location loc, Value buffer);

/// Checks that the runtime's convolution computes `node`: a channels-last
/// 1-d or 2-d convolution of f32, f16 or bf16 into its operands' dtype.
LogicalResult checkGPUConvolution(loop::ConvolutionOp node);

/// Emits a host call of the runtime's convolution (cuDNN) that computes
/// `node` into `dest` on `stream`, after the work already ordered on it.
void emitLibraryConvolution(OpBuilder &b, loop::ConvolutionOp node, Value dest,
                            const IRMapping &mapping, Value stream);

} // namespace kiln
} // namespace mlir

#endif // KILN_LIB_CONVERSION_LOOPTOGPU_LIBRARYCALLS_H
