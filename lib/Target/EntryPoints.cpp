//===- EntryPoints.cpp - The C entry points of Kiln artifacts -------------===//
//
// Part of Kiln. Wraps a bufferized graph function in functions that take the
// raw pointers and sizes a C caller has, building memref descriptors from them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/EntryPoints.h"
#include "kiln/Target/Passes.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EMITENTRYPOINTSPASS
#include "kiln/Target/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// Loads element `index` of the array of `elementType` at `base`.
static Value loadElement(OpBuilder &b, Location loc, Value base,
                         Type elementType, int64_t index) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value address = LLVM::GEPOp::create(b, loc, ptrType, elementType, base,
                                      ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, elementType, address);
}

/// Stores `value` into element `index` of the array at `base`.
static void storeElement(OpBuilder &b, Location loc, Value value, Value base,
                         int64_t index) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value address = LLVM::GEPOp::create(b, loc, ptrType, value.getType(), base,
                                      ArrayRef<LLVM::GEPArg>{index});
  LLVM::StoreOp::create(b, loc, value, address);
}

/// Builds a contiguous memref of `type` over `data` whose dynamic sizes are
/// `dynamicSizes` (i64 values), as the LLVM descriptor struct that the memref
/// conversion uses, cast to the memref type.
static Value buildMemRef(OpBuilder &b, Location loc, MemRefType type,
                         Value data, ValueRange dynamicSizes) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  int64_t rank = type.getRank();
  SmallVector<Type> fields = {ptrType, ptrType, i64};
  if (rank > 0) {
    auto array = LLVM::LLVMArrayType::get(i64, rank);
    fields.append({array, array});
  }
  auto descType = LLVM::LLVMStructType::getLiteral(ctx, fields);

  Value desc = LLVM::PoisonOp::create(b, loc, descType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{1});
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  desc = LLVM::InsertValueOp::create(b, loc, desc, zero, ArrayRef<int64_t>{2});

  SmallVector<Value> sizes;
  unsigned nextDynamic = 0;
  for (int64_t size : type.getShape()) {
    sizes.push_back(ShapedType::isDynamic(size)
                        ? dynamicSizes[nextDynamic++]
                        : arith::ConstantIntOp::create(b, loc, i64, size));
  }
  // Row-major strides: the innermost dimension is contiguous.
  Value stride = arith::ConstantIntOp::create(b, loc, i64, 1);
  for (int64_t dim = rank - 1; dim >= 0; --dim) {
    desc = LLVM::InsertValueOp::create(b, loc, desc, sizes[dim],
                                       ArrayRef<int64_t>{3, dim});
    desc = LLVM::InsertValueOp::create(b, loc, desc, stride,
                                       ArrayRef<int64_t>{4, dim});
    if (dim > 0)
      stride = arith::MulIOp::create(b, loc, stride, sizes[dim]);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
}

/// Builds memrefs for `types`, taking data pointers from the array `pointers`
/// (or null when `pointers` is null) and dynamic sizes from `sizes` in order.
static SmallVector<Value> buildMemRefs(OpBuilder &b, Location loc,
                                       TypeRange types, Value pointers,
                                       ArrayRef<Value> sizes) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Value> memrefs;
  size_t nextSize = 0;
  for (auto [index, type] : llvm::enumerate(types)) {
    auto memrefType = cast<MemRefType>(type);
    Value data = pointers ? loadElement(b, loc, pointers, ptrType, index)
                          : LLVM::ZeroOp::create(b, loc, ptrType).getResult();
    int64_t numDynamic = memrefType.getNumDynamicDims();
    memrefs.push_back(buildMemRef(b, loc, memrefType, data,
                                  sizes.slice(nextSize, numDynamic)));
    nextSize += numDynamic;
  }
  return memrefs;
}

/// Loads the dynamic input sizes a C caller passes, as i64 values.
static SmallVector<Value> loadInputSizes(OpBuilder &b, Location loc,
                                         TypeRange inputTypes, Value sizes) {
  int64_t count = 0;
  for (Type type : inputTypes)
    count += cast<MemRefType>(type).getNumDynamicDims();
  SmallVector<Value> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(loadElement(b, loc, sizes, b.getI64Type(), i));
  return values;
}

/// Adds an exported constant C string `name` holding `text`.
static void addStringGlobal(OpBuilder &b, Location loc, StringRef name,
                            StringRef text) {
  std::string data = text.str();
  data.push_back('\0');
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                         LLVM::Linkage::External, name, b.getStringAttr(data));
}

/// Calls the `_result_sizes` companion and returns its results as i64.
static SmallVector<Value> callResultSizes(OpBuilder &b, Location loc,
                                          func::FuncOp sizesFunc,
                                          ValueRange inputs) {
  auto call = func::CallOp::create(b, loc, sizesFunc, inputs);
  return llvm::map_to_vector(call.getResults(), [&](Value size) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
  });
}

LogicalResult mlir::kiln::emitEntryPoints(RewriterBase &rewriter,
                                          func::FuncOp graphFunc) {
  auto module = graphFunc->getParentOfType<ModuleOp>();
  std::string sizesName = (graphFunc.getSymName() + kResultSizesSuffix).str();
  auto sizesFunc = module.lookupSymbol<func::FuncOp>(sizesName);
  if (!sizesFunc)
    return graphFunc.emitError("kiln-emit-entry-points: missing @")
           << sizesName << ", which kiln-loop-to-scf creates";

  auto signature = graphFunc->getAttrOfType<TypeAttr>(kGraphSignatureAttrName);
  if (!signature || !isa<FunctionType>(signature.getValue()))
    return graphFunc.emitError("kiln-emit-entry-points: missing the '")
           << kGraphSignatureAttrName << "' attribute of a bufferized graph";
  auto graphType = cast<FunctionType>(signature.getValue());

  Location loc = graphFunc.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Type i32 = rewriter.getI32Type();
  TypeRange inputTypes = sizesFunc.getArgumentTypes();
  TypeRange resultTypes = graphFunc.getArgumentTypes().slice(
      inputTypes.size(), graphType.getNumResults());
  // GPU graphs take the stream to run on after their buffers.
  bool takesStream = graphFunc.getNumArguments() >
                     inputTypes.size() + graphType.getNumResults();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(module.getBody());

  // kiln_<graph>_run(inputs, outputs, input_sizes, stream) -> i32
  auto run = func::FuncOp::create(
      rewriter, loc, ("kiln_" + graphFunc.getSymName() + "_run").str(),
      rewriter.getFunctionType({ptrType, ptrType, ptrType, ptrType}, {i32}));
  Block *runEntry = run.addEntryBlock();
  rewriter.setInsertionPointToStart(runEntry);
  SmallVector<Value> inputSizes =
      loadInputSizes(rewriter, loc, inputTypes, runEntry->getArgument(2));
  SmallVector<Value> operands = buildMemRefs(
      rewriter, loc, inputTypes, runEntry->getArgument(0), inputSizes);
  SmallVector<Value> resultSizes =
      callResultSizes(rewriter, loc, sizesFunc, operands);
  llvm::append_range(operands,
                     buildMemRefs(rewriter, loc, resultTypes,
                                  runEntry->getArgument(1), resultSizes));
  if (takesStream)
    operands.push_back(runEntry->getArgument(3));
  func::CallOp::create(rewriter, loc, graphFunc, operands);
  Value ok = arith::ConstantIntOp::create(rewriter, loc, i32, 0);
  func::ReturnOp::create(rewriter, loc, ok);

  // kiln_<graph>_result_sizes(input_sizes, result_sizes) -> i32
  rewriter.setInsertionPointToEnd(module.getBody());
  auto sizes = func::FuncOp::create(
      rewriter, loc, ("kiln_" + graphFunc.getSymName() + "_result_sizes").str(),
      rewriter.getFunctionType({ptrType, ptrType}, {i32}));
  Block *sizesEntry = sizes.addEntryBlock();
  rewriter.setInsertionPointToStart(sizesEntry);
  inputSizes =
      loadInputSizes(rewriter, loc, inputTypes, sizesEntry->getArgument(0));
  // Only sizes are read, so the buffers need no data.
  SmallVector<Value> inputs =
      buildMemRefs(rewriter, loc, inputTypes, Value(), inputSizes);
  for (auto [index, size] :
       llvm::enumerate(callResultSizes(rewriter, loc, sizesFunc, inputs)))
    storeElement(rewriter, loc, size, sizesEntry->getArgument(1), index);
  ok = arith::ConstantIntOp::create(rewriter, loc, i32, 0);
  func::ReturnOp::create(rewriter, loc, ok);

  // The signature and the device, as text, let loaders check and allocate
  // tensors without the graph's source.
  std::string signatureText;
  llvm::raw_string_ostream os(signatureText);
  graphType.print(os);
  rewriter.setInsertionPointToEnd(module.getBody());
  addStringGlobal(rewriter, loc,
                  ("kiln_" + graphFunc.getSymName() + "_signature").str(),
                  signatureText);
  addStringGlobal(rewriter, loc,
                  ("kiln_" + graphFunc.getSymName() + "_device").str(),
                  takesStream ? "cuda" : "cpu");
  // The messages of the run-time checks whose flags are the last results,
  // one a line.
  if (auto checks =
          graphFunc->getAttrOfType<ArrayAttr>(loop::kChecksAttrName)) {
    std::string messages =
        llvm::join(checks.getAsValueRange<StringAttr>(), "\n");
    addStringGlobal(rewriter, loc,
                    ("kiln_" + graphFunc.getSymName() + "_checks").str(),
                    messages);
  }

  // Only the entry points are exported; the rest may be inlined into them.
  auto internal = LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal);
  for (func::FuncOp callee : {graphFunc, sizesFunc}) {
    callee.setPrivate();
    callee->setAttr("llvm.linkage", internal);
  }
  return success();
}

namespace {
struct EmitEntryPointsPass
    : kiln::impl::EmitEntryPointsPassBase<EmitEntryPointsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> graphs;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func->hasAttr(kGraphFuncAttrName))
        graphs.push_back(func);
    }
    for (func::FuncOp graph : graphs) {
      if (failed(emitEntryPoints(rewriter, graph)))
        return signalPassFailure();
    }
    if (graphs.empty() || module.lookupSymbol("kiln_abi_version"))
      return;
    rewriter.setInsertionPointToEnd(module.getBody());
    Type i32 = rewriter.getI32Type();
    LLVM::GlobalOp::create(rewriter, module.getLoc(), i32, /*isConstant=*/true,
                           LLVM::Linkage::External, "kiln_abi_version",
                           rewriter.getI32IntegerAttr(kAbiVersion));
  }
};
} // namespace
