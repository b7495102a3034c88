//===- MatmulToGPU.cpp - Matrix products through the GEMM library ---------===//
//
// Part of Kiln. On the GPU a loop.matmul is a call of the runtime's
// kiln_cuda_gemm (cuBLASLt), made from host code on the graph's stream: the
// library's kernels beat anything generated per shape, and the call is
// ordered after the kernels launched before it like any other stream work.
//
//===----------------------------------------------------------------------===//

#include "MatmulToGPU.h"
#include "LibraryCalls.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/EpilogueFusion.h"
#include "kiln/Dialect/Loop/Transforms/FusionReport.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::kiln;

/// The runtime function, declared in kiln/Runtime/CUDARuntime.h.
static constexpr llvm::StringLiteral kGemmFunction = "kiln_cuda_gemm";

int32_t mlir::kiln::getLibraryDtypeCode(Type element) {
  if (element.isF32())
    return 0;
  if (element.isF16())
    return 1;
  if (element.isBF16())
    return 2;
  return -1;
}

/// The element type of `node`'s operands.
static Type getOperandElementType(loop::MatmulOp node) {
  return cast<RankedTensorType>(node.getLhs().getType()).getElementType();
}

LogicalResult mlir::kiln::checkGPUMatmul(loop::MatmulOp node,
                                         bool matmulKernels) {
  Type element = getOperandElementType(node);
  if (getLibraryDtypeCode(element) < 0)
    return node.emitOpError("multiplies ")
           << element << " matrices, which have no GPU GEMM (f32, f16 and "
           << "bf16 do)";
  if (matmulKernels && loop::isTensorCoreProduct(node))
    return success();
  if (!loop::matchLibraryEpilogue(node))
    return node.emitOpError("has an epilogue that the GPU GEMM cannot apply "
                            "(it adds a bias along the columns, then relu, "
                            "and rounds)");
  return success();
}

func::FuncOp mlir::kiln::getRuntimeDeclaration(OpBuilder &b, ModuleOp module,
                                               StringRef name,
                                               FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto declaration = func::FuncOp::create(b, module.getLoc(), name, type);
  declaration.setPrivate();
  return declaration;
}

/// Declares the runtime's GEMM in the module that holds `anchor`, once.
static func::FuncOp getGemmDeclaration(OpBuilder &b, Operation *anchor) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  // dtype, resultDtype, batch, m, n, k, a, transposeA, b, transposeB, bias,
  // activation, c, stream.
  auto type = b.getFunctionType(
      {i32, i32, i64, i64, i64, i64, ptr, i32, ptr, i32, ptr, i32, ptr, ptr},
      {});
  return getRuntimeDeclaration(b, anchor->getParentOfType<ModuleOp>(),
                               kGemmFunction, type);
}

Value mlir::kiln::getBufferPointer(OpBuilder &b, Location loc, Value buffer) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value asInteger = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInteger);
}

void mlir::kiln::emitLibraryMatmul(OpBuilder &b, loop::MatmulOp node,
                                   Value dest, const IRMapping &mapping,
                                   Value stream) {
  Location loc = node.getLoc();
  func::FuncOp gemm =
      getGemmDeclaration(b, b.getInsertionBlock()->getParentOp());
  Value lhs = mapping.lookup(node.getLhs());
  Value rhs = mapping.lookup(node.getRhs());
  int64_t batchDims = node.getNumBatchDims();

  auto toI64 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  };
  auto i32Constant = [&](int32_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
  Value batch = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value size : ArrayRef(sizes).take_front(batchDims))
    batch = arith::MulIOp::create(b, loc, batch, size);
  Value k = memref::DimOp::create(b, loc, lhs,
                                  batchDims + (node.getTransposeLhs() ? 0 : 1));
  // checkGPUMatmul has made sure the epilogue matches.
  loop::LibraryEpilogue epilogue = *loop::matchLibraryEpilogue(node);
  Value bias = epilogue.bias
                   ? getBufferPointer(b, loc, mapping.lookup(epilogue.bias))
                   : LLVM::ZeroOp::create(
                         b, loc, LLVM::LLVMPointerType::get(b.getContext()));
  int32_t activation =
      epilogue.activation == loop::LibraryEpilogue::Activation::Relu ? 1 : 0;

  SmallVector<Value> operands = {
      i32Constant(getLibraryDtypeCode(getOperandElementType(node))),
      i32Constant(getLibraryDtypeCode(node.getResultType().getElementType())),
      toI64(batch),
      toI64(sizes[batchDims]),
      toI64(sizes[batchDims + 1]),
      toI64(k),
      getBufferPointer(b, loc, lhs),
      i32Constant(node.getTransposeLhs()),
      getBufferPointer(b, loc, rhs),
      i32Constant(node.getTransposeRhs()),
      bias,
      i32Constant(activation),
      getBufferPointer(b, loc, dest),
      stream};
  func::CallOp::create(b, loc, gemm, operands);
}

static constexpr llvm::StringLiteral kConstantFunction = "kiln_cuda_constant";

/// The runtime's kiln_cuda_constant(host, bytes, stream) -> device.
static func::FuncOp getConstantDeclaration(OpBuilder &b, ModuleOp module) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  return getRuntimeDeclaration(
      b, module, kConstantFunction,
      b.getFunctionType({ptr, b.getI64Type(), ptr}, {ptr}));
}

Value mlir::kiln::emitDeviceConstant(OpBuilder &b, Location loc,
                                     ElementsAttr value, Value stream) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  func::FuncOp upload = getConstantDeclaration(b, module);
  Value host = emitConstantGlobal(b, loc, value);
  auto type = cast<MemRefType>(host.getType());
  int64_t bytes = *loop::getTensorBytes(value.getType());
  Value device =
      func::CallOp::create(
          b, loc, upload,
          ValueRange{getBufferPointer(b, loc, host),
                     arith::ConstantIntOp::create(b, loc, bytes, 64), stream})
          .getResult(0);
  // The copy's memref descriptor (allocated and aligned pointers, offset,
  // sizes, strides), which the LLVM lowering reads as the memref.
  MLIRContext *context = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  SmallVector<Type> fields = {ptr, ptr, i64};
  int64_t rank = type.getRank();
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto descriptorType = LLVM::LLVMStructType::getLiteral(context, fields);
  Value descriptor = LLVM::PoisonOp::create(b, loc, descriptorType);
  auto insert = [&](Value field, ArrayRef<int64_t> position) {
    descriptor =
        LLVM::InsertValueOp::create(b, loc, descriptor, field, position);
  };
  auto i64Constant = [&](int64_t constant) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, constant);
  };
  insert(device, {0});
  insert(device, {1});
  insert(i64Constant(0), {2});
  int64_t stride = 1;
  for (int64_t dim = rank - 1; dim >= 0; --dim) {
    insert(i64Constant(type.getDimSize(dim)), {3, dim});
    insert(i64Constant(stride), {4, dim});
    stride *= type.getDimSize(dim);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}
