//===- MatmulToGPU.cpp - Matrix products through the GEMM library ---------===//
//
// Part of Kiln. On the GPU a loop.matmul is a call of the runtime's
// kiln_cuda_gemm (cuBLASLt), made from host code on the graph's stream: the
// library's kernels beat anything generated per shape, and the call is
// ordered after the kernels launched before it like any other stream work.
//
//===----------------------------------------------------------------------===//

#include "MatmulToGPU.h"
#include "GPUKernels.h"
#include "LibraryCalls.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/EpilogueFusion.h"
#include "kiln/Dialect/Loop/Transforms/FusionReport.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

namespace {
/// A product's sizes as the runtime takes them (i64): its batches, flattened,
/// and M, N and K.
struct ProductSizes {
  Value batch, m, n, k;
};
} // namespace

static ProductSizes getProductSizes(OpBuilder &b, loop::MatmulOp node,
                                    const IRMapping &mapping) {
  Location loc = node.getLoc();
  auto toI64 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  };
  int64_t batchDims = node.getNumBatchDims();
  SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
  Value batch = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value size : ArrayRef(sizes).take_front(batchDims))
    batch = arith::MulIOp::create(b, loc, batch, size);
  Value k = memref::DimOp::create(b, loc, mapping.lookup(node.getLhs()),
                                  batchDims + (node.getTransposeLhs() ? 0 : 1));
  return {toI64(batch), toI64(sizes[batchDims]), toI64(sizes[batchDims + 1]),
          toI64(k)};
}

/// An i32 constant, as the runtime's calls take their flags and codes.
static Value i32Constant(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 32);
}

/// kiln_cuda_gemm's dtype code for f32 operands multiplied in TF32.
static constexpr int32_t kTF32DtypeCode = 3;

/// Emits a call of kiln_cuda_gemm for `node`'s product into `dest`, with
/// the given dtype codes, bias and activation.
static void emitGemmCall(OpBuilder &b, loop::MatmulOp node, Value dest,
                         const IRMapping &mapping, Value stream, int32_t dtype,
                         int32_t resultDtype, Value bias, int32_t activation) {
  Location loc = node.getLoc();
  func::FuncOp gemm =
      getGemmDeclaration(b, b.getInsertionBlock()->getParentOp());
  ProductSizes sizes = getProductSizes(b, node, mapping);
  SmallVector<Value> operands = {
      i32Constant(b, loc, dtype),
      i32Constant(b, loc, resultDtype),
      sizes.batch,
      sizes.m,
      sizes.n,
      sizes.k,
      getBufferPointer(b, loc, mapping.lookup(node.getLhs())),
      i32Constant(b, loc, node.getTransposeLhs()),
      getBufferPointer(b, loc, mapping.lookup(node.getRhs())),
      i32Constant(b, loc, node.getTransposeRhs()),
      bias ? bias
           : LLVM::ZeroOp::create(b, loc,
                                  LLVM::LLVMPointerType::get(b.getContext())),
      i32Constant(b, loc, activation),
      getBufferPointer(b, loc, dest),
      stream};
  func::CallOp::create(b, loc, gemm, operands);
}

void mlir::kiln::emitLibraryMatmul(OpBuilder &b, loop::MatmulOp node,
                                   Value dest, const IRMapping &mapping,
                                   Value stream, bool tf32) {
  Location loc = node.getLoc();
  // checkGPUMatmul has made sure the epilogue matches.
  loop::LibraryEpilogue epilogue = *loop::matchLibraryEpilogue(node);
  Value bias = epilogue.bias
                   ? getBufferPointer(b, loc, mapping.lookup(epilogue.bias))
                   : Value();
  int32_t activation =
      epilogue.activation == loop::LibraryEpilogue::Activation::Relu ? 1 : 0;
  Type element = getOperandElementType(node);
  int32_t dtype =
      tf32 && element.isF32() ? kTF32DtypeCode : getLibraryDtypeCode(element);
  emitGemmCall(b, node, dest, mapping, stream, dtype,
               getLibraryDtypeCode(node.getResultType().getElementType()), bias,
               activation);
}

void mlir::kiln::emitLibraryMatmulAndEpilogue(
    OpBuilder &b, loop::MatmulOp node, Value dest, const IRMapping &mapping,
    const LoopToGPUOptions &options, StreamOrder &order, ValueRange extraArgs) {
  Location loc = node.getLoc();
  Value stream = extraArgs.front();
  SmallVector<Value> sizes = getBufferSizes(b, loc, dest);
  // The sums rounded to the operands' type (as eager's product is: half the
  // bytes of f32 sums to write and read again), in a temporary on the
  // stream.
  Type operandType = getOperandElementType(node);
  Value sums =
      allocateLikeOnStream(b, loc, dest, sizes, operandType, order, extraArgs);
  int32_t dtype = getLibraryDtypeCode(operandType);
  emitGemmCall(b, node, sums, mapping, stream, dtype, dtype, /*bias=*/Value(),
               /*activation=*/0);

  // A thread per element applies the epilogue to its sum.
  Value total = getProduct(b, loc, sizes);
  {
    OpBuilder::InsertionGuard guard(b);
    auto [launch, element] = createElementLaunch(
        b, loc, "epilogue", total, /*perThread=*/1, options, order, extraArgs);
    b.setInsertionPointAfterValue(element);
    AlignedViews align(b, loc);
    IRMapping kernelMapping(mapping);
    align.alignSources(node, mapping, kernelMapping);
    auto inside = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, element,
                              total),
        /*withElse=*/false);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    SmallVector<Value> ivs = delinearize(b, loc, element, sizes);
    Value sum = memref::LoadOp::create(b, loc, sums, ivs);
    if (sum.getType() != node.getAccumulatorType())
      sum = arith::ExtFOp::create(b, loc, node.getAccumulatorType(), sum);
    Value result = emitMatmulElement(b, node, kernelMapping, ivs, sum);
    memref::StoreOp::create(b, loc, result, dest, ivs);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }
  deallocateOnStream(b, loc, sums, order, extraArgs);
}

/// Runs of each candidate that a product's first call of a shape times.
static constexpr int64_t kProductTimingRuns = 3;
/// The candidates: 0 the library's product, 1 Kiln's kernel
/// (kiln_cuda_product_candidates).
static constexpr int32_t kProductCandidates = 2;

/// A new internal byte in `module`, whose address names a product site to
/// the runtime.
static LLVM::GlobalOp createProductSite(OpBuilder &b, Location loc,
                                        ModuleOp module) {
  std::string name;
  for (int64_t index = 0;; ++index) {
    name = "kiln_product_site_" + std::to_string(index);
    if (!module.lookupSymbol(name))
      break;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::GlobalOp::create(b, loc, b.getI8Type(), /*isConstant=*/false,
                                LLVM::Linkage::Internal, name,
                                b.getI8IntegerAttr(0));
}

void mlir::kiln::emitProductChoice(OpBuilder &b, loop::MatmulOp node,
                                   const IRMapping &mapping, Value stream,
                                   function_ref<void()> emitLibrary,
                                   function_ref<void()> emitKernel) {
  Location loc = node.getLoc();
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  func::FuncOp choose = getRuntimeDeclaration(
      b, module, "kiln_cuda_product_choice",
      b.getFunctionType({ptr, i64, i64, i64, i64, ptr}, {i32}));
  func::FuncOp mark =
      getRuntimeDeclaration(b, module, "kiln_cuda_product_mark",
                            b.getFunctionType({ptr, i32, i32, ptr}, {}));
  func::FuncOp decide = getRuntimeDeclaration(
      b, module, "kiln_cuda_product_decide",
      b.getFunctionType({ptr, i64, i64, i64, i64, ptr}, {}));

  Value site =
      LLVM::AddressOfOp::create(b, loc, createProductSite(b, loc, module));
  ProductSizes sizes = getProductSizes(b, node, mapping);
  SmallVector<Value> key = {site,    sizes.batch, sizes.m,
                            sizes.n, sizes.k,     stream};
  Value choice = func::CallOp::create(b, loc, choose, key).getResult(0);
  // Candidate 0 is the library's, 1 Kiln's kernel.
  auto emitCandidate = [&](int32_t candidate) {
    if (candidate == 0)
      emitLibrary();
    else
      emitKernel();
  };
  auto undecided = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         choice, i32Constant(b, loc, 0));
  auto ifUndecided = scf::IfOp::create(b, loc, undecided, /*withElse=*/true);
  {
    // Time a few runs of each; the last one's result stays.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifUndecided.getThenRegion().front());
    auto runs = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, kProductTimingRuns),
        arith::ConstantIndexOp::create(b, loc, 1));
    b.setInsertionPointToStart(runs.getBody());
    for (int32_t candidate = 0; candidate < kProductCandidates; ++candidate) {
      func::CallOp::create(b, loc, mark,
                           ValueRange{site, i32Constant(b, loc, candidate),
                                      i32Constant(b, loc, 0), stream});
      emitCandidate(candidate);
      func::CallOp::create(b, loc, mark,
                           ValueRange{site, i32Constant(b, loc, candidate),
                                      i32Constant(b, loc, 1), stream});
    }
    b.setInsertionPointAfter(runs);
    func::CallOp::create(b, loc, decide, key);

    // The choice made before.
    b.setInsertionPointToStart(&ifUndecided.getElseRegion().front());
    auto ifKernel = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, choice,
                              i32Constant(b, loc, 1)),
        /*withElse=*/true);
    b.setInsertionPointToStart(&ifKernel.getThenRegion().front());
    emitCandidate(1);
    b.setInsertionPointToStart(&ifKernel.getElseRegion().front());
    emitCandidate(0);
  }
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
