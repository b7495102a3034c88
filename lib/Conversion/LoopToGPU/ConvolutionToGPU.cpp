//===- ConvolutionToGPU.cpp - Convolutions through cuDNN ------------------===//
//
// Part of Kiln. On the GPU a channels-last loop.convolution is a call of the
// runtime's kiln_cuda_convolution (cuDNN), made from host code on the
// graph's stream, like a matrix product's GEMM: one call of the artifact
// runs a whole convolution network, with no return to PyTorch between its
// layers.
//
//===----------------------------------------------------------------------===//

#include "LibraryCalls.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::kiln;

/// The runtime function, declared in kiln/Runtime/CUDARuntime.h.
static constexpr llvm::StringLiteral kConvolutionFunction =
    "kiln_cuda_convolution";

LogicalResult mlir::kiln::checkGPUConvolution(loop::ConvolutionOp node) {
  if (!node.getChannelsLast())
    return node.emitOpError("is not channels-last; the GPU computes those "
                            "with its convolution library "
                            "(kiln-loop-expand-convolutions with `library` "
                            "makes them)");
  if (node.getNumSpatialDims() > 2)
    return node.emitOpError("has ")
           << node.getNumSpatialDims()
           << " spatial dimensions; the GPU's convolution library takes 1 or 2";
  Type element =
      cast<RankedTensorType>(node.getInput().getType()).getElementType();
  if (getLibraryDtypeCode(element) < 0)
    return node.emitOpError("convolves ")
           << element
           << " tensors, which the GPU's convolution library does not (f32, "
              "f16 and bf16 it does)";
  if (node.getResultType().getElementType() != element)
    return node.emitOpError("sums into ")
           << node.getResultType().getElementType()
           << "; the GPU's convolution library rounds to its operands' "
           << element;
  return success();
}

void mlir::kiln::emitLibraryConvolution(OpBuilder &b, loop::ConvolutionOp node,
                                        Value dest, const IRMapping &mapping,
                                        Value stream) {
  Location loc = node.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  // dtype, 16 sizes (batch, height, width, channels, filters, kernelH,
  // kernelW, outHeight, outWidth, strides, paddings, dilations, groups),
  // input, weight, result, stream.
  SmallVector<Type> types = {i32};
  types.append(16, i64);
  types.append(4, ptr);
  func::FuncOp convolution = getRuntimeDeclaration(
      b, b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>(),
      kConvolutionFunction, b.getFunctionType(types, {}));

  Value input = mapping.lookup(node.getInput());
  Value weight = mapping.lookup(node.getWeight());
  auto dim = [&](Value buffer, int64_t index) -> Value {
    return arith::IndexCastOp::create(
        b, loc, i64, memref::DimOp::create(b, loc, buffer, index));
  };
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 64);
  };
  // A 1-d convolution is a 2-d one of height 1.
  bool oneDim = node.getNumSpatialDims() == 1;
  auto spatial = [&](ArrayRef<int64_t> values, int64_t unit) {
    return oneDim ? std::pair(constant(unit), constant(values[0]))
                  : std::pair(constant(values[0]), constant(values[1]));
  };
  auto spatialDims = [&](Value buffer) {
    return oneDim ? std::pair(constant(1), dim(buffer, 1))
                  : std::pair(dim(buffer, 1), dim(buffer, 2));
  };
  int64_t channelDim = node.getChannelDim();
  auto [height, width] = spatialDims(input);
  auto [kernelH, kernelW] = spatialDims(weight);
  auto [outHeight, outWidth] = spatialDims(dest);
  auto [strideH, strideW] = spatial(node.getStride(), 1);
  auto [padH, padW] = spatial(node.getPadding(), 0);
  auto [dilationH, dilationW] = spatial(node.getDilation(), 1);
  Type element =
      cast<RankedTensorType>(node.getInput().getType()).getElementType();
  SmallVector<Value> operands = {
      arith::ConstantIntOp::create(b, loc, getLibraryDtypeCode(element), 32),
      dim(input, 0),
      height,
      width,
      dim(input, channelDim),
      dim(weight, 0),
      kernelH,
      kernelW,
      outHeight,
      outWidth,
      strideH,
      strideW,
      padH,
      padW,
      dilationH,
      dilationW,
      constant(static_cast<int64_t>(node.getGroups())),
      getBufferPointer(b, loc, input),
      getBufferPointer(b, loc, weight),
      getBufferPointer(b, loc, dest),
      stream};
  func::CallOp::create(b, loc, convolution, operands);
}
