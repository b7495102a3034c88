//===- GraphBufferization.cpp - Graphs of loop nodes to buffers -----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/GraphBufferization.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "kiln/Dialect/Loop/Utils/NodeBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln;

MemRefType mlir::kiln::getBufferType(Type tensorType) {
  auto tensor = cast<RankedTensorType>(tensorType);
  return MemRefType::get(tensor.getShape(),
                         loop::getScalarType(tensor.getElementType()));
}

/// The largest buffer Kiln plans (2^48 bytes, more than any machine has):
/// sums of thousands of such sizes, aligned, still fit in int64_t.
constexpr int64_t kMaxBufferBytes = int64_t(1) << 48;

/// The bytes a static buffer of `type` takes, or nullopt for dynamic ones.
/// Sizes past kMaxBufferBytes saturate to it (bufferizeGraph refuses them
/// first): a size that wrapped around would plan too small a workspace.
static std::optional<int64_t> getStaticByteSize(MemRefType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  int64_t bytes = (loop::getElementBitWidth(type.getElementType()) + 7) / 8;
  for (int64_t size : type.getShape())
    if (llvm::MulOverflow(bytes, size, bytes) || bytes > kMaxBufferBytes)
      return kMaxBufferBytes;
  return bytes;
}

Value mlir::kiln::emitConstantGlobal(OpBuilder &b, Location loc,
                                     ElementsAttr value) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  MemRefType type = getBufferType(value.getType());
  // The LLVM lowering reads a 0-d global's value as a splat, which a
  // resource blob cannot give: its bytes become a dense value.
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value);
      resource && type.getRank() == 0)
    value = DenseElementsAttr::getFromRawBuffer(
        cast<ShapedType>(resource.getType()),
        resource.getRawHandle().getBlob()->getData());
  // Built detached; the symbol table names it uniquely as it inserts it.
  OpBuilder detached(b.getContext());
  auto global = memref::GlobalOp::create(
      detached, loc, "kiln_constant", b.getStringAttr("private"), type, value,
      /*constant=*/true, b.getI64IntegerAttr(64));
  SymbolTable(module).insert(global, module.getBody()->begin());
  return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
}

/// `op` if it is a frozen tensor (a builtin tensor constant); null otherwise.
static arith::ConstantOp getFrozenTensor(Operation *op) {
  auto constant = dyn_cast_or_null<arith::ConstantOp>(op);
  return constant && isa<RankedTensorType>(constant.getType()) ? constant
                                                               : nullptr;
}

/// `value` with the signless element type of buffers (si64 -> i64), the
/// same bytes.
static ElementsAttr getSignlessElements(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  Type elementType = getBufferType(type).getElementType();
  if (elementType == type.getElementType())
    return value;
  auto signless = type.clone(elementType);
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.bitcast(signless.getElementType());
  auto resource = cast<DenseResourceElementsAttr>(value);
  return DenseResourceElementsAttr::get(signless, resource.getRawHandle());
}

/// Whether `op` is a scalar or size computation that the buffer form keeps as
/// it is (constants, index arithmetic outside nodes).
static bool isScalarOp(Operation *op) {
  if (op->getNumRegions() != 0 || !isPure(op))
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type type) { return type.isIntOrIndexOrFloat(); });
}

SmallVector<Value> mlir::kiln::getNodeSizes(OpBuilder &b, Location loc,
                                            Operation *node,
                                            const IRMapping &mapping) {
  SmallVector<Value> sizes;
  auto tensorNode = cast<loop::LoopNodeOpInterface>(node);
  RankedTensorType type = tensorNode.getResultType();
  ValueRange dynamicSizes = tensorNode.getDynamicSizes();
  unsigned nextDynamic = 0;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      sizes.push_back(mapping.lookup(dynamicSizes[nextDynamic++]));
    else
      sizes.push_back(arith::ConstantIndexOp::create(b, loc, size));
  }
  return sizes;
}

SmallVector<Value> mlir::kiln::getReductionSizes(OpBuilder &b, Location loc,
                                                 loop::ReduceOp node,
                                                 const IRMapping &mapping) {
  SmallVector<Value> sizes;
  unsigned nextDynamic = 0;
  for (int64_t size : node.getReductionShape()) {
    if (ShapedType::isDynamic(size))
      sizes.push_back(
          mapping.lookup(node.getReductionDynamicSizes()[nextDynamic++]));
    else
      sizes.push_back(arith::ConstantIndexOp::create(b, loc, size));
  }
  return sizes;
}

ValueRange mlir::kiln::getDynamicSizesOfResult(Value tensor) {
  if (auto kernel = tensor.getDefiningOp<loop::KernelOp>())
    tensor =
        kernel.getYield().getValues()[cast<OpResult>(tensor).getResultNumber()];
  auto result = cast<OpResult>(tensor);
  return cast<loop::LoopNodeOpInterface>(result.getOwner())
      .getResultDynamicSizes(result.getResultNumber());
}

/// Whether `op` defines tensors that bufferization stores: a node or a
/// kernel.
static bool isComputation(Operation *op) {
  return isa_and_nonnull<loop::LoopNodeOpInterface, loop::KernelOp>(op);
}

Value mlir::kiln::emitNodeElement(OpBuilder &b, loop::PointwiseOp node,
                                  const IRMapping &mapping, ValueRange ivs) {
  return emitBodyValue(b, node.getBody().front(), mapping, ivs);
}

/// Emits the ops of a node body (not its terminator) at `ivs`; returns the
/// mapping of the body's values.
static IRMapping emitBodyOps(OpBuilder &b, Block &body,
                             const IRMapping &mapping, ValueRange ivs);

/// The value that body value `value` became: emitted by the body, or from
/// outside the node.
static Value lookupEmitted(const IRMapping &bodyMapping,
                           const IRMapping &mapping, Value value) {
  if (Value mapped = bodyMapping.lookupOrNull(value))
    return mapped;
  return mapping.lookupOrDefault(value);
}

Value mlir::kiln::emitBodyValue(OpBuilder &b, Block &body,
                                const IRMapping &mapping, ValueRange ivs) {
  IRMapping bodyMapping = emitBodyOps(b, body, mapping, ivs);
  return lookupEmitted(bodyMapping, mapping,
                       cast<loop::YieldOp>(body.getTerminator()).getValue());
}

Value mlir::kiln::emitMatmulElement(OpBuilder &b, loop::MatmulOp node,
                                    const IRMapping &mapping,
                                    ValueRange indices, Value sum) {
  if (node.hasEpilogue()) {
    SmallVector<Value> arguments(indices);
    arguments.push_back(sum);
    return emitBodyValue(b, node.getEpilogue().front(), mapping, arguments);
  }
  return loop::convertScalar(b, node.getLoc(), sum, sum.getType(),
                             node.getResultType().getElementType());
}

/// dest[indices] = combine(dest[indices]) by compare-and-swap on the
/// element's bits until no other thread wrote in between: an scf.while
/// around llvm.cmpxchg at the element's address. LLVM compares and swaps
/// integers only, and memref.generic_atomic_rmw lowers to a cmpxchg of the
/// element type, so not of floats (and the CPU pipeline without OpenMP left
/// it unconverted). Comparing bits also ends the loop where the element is
/// NaN.
static void emitCompareAndSwapUpdate(
    OpBuilder &b, Location loc, Value dest, ValueRange indices,
    function_ref<Value(OpBuilder &, Location, Value)> combine) {
  Type element = cast<MemRefType>(dest.getType()).getElementType();
  Type bitsType = b.getIntegerType(element.getIntOrFloatBitWidth());
  Type i64 = b.getI64Type();
  // The element's address: the aligned pointer, plus the offset and each
  // index times its stride, in elements.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, dest);
  Value offset = metadata.getOffset();
  for (auto [index, stride] : llvm::zip(indices, metadata.getStrides()))
    offset = arith::AddIOp::create(
        b, loc, offset, arith::MulIOp::create(b, loc, index, stride));
  auto pointerType = LLVM::LLVMPointerType::get(b.getContext());
  Value base = LLVM::IntToPtrOp::create(
      b, loc, pointerType,
      arith::IndexCastOp::create(
          b, loc, i64,
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dest)),
      /*dereferenceable=*/nullptr);
  Value address = LLVM::GEPOp::create(
      b, loc, pointerType, bitsType, base,
      ValueRange{arith::IndexCastOp::create(b, loc, i64, offset)});
  auto toBits = [&](OpBuilder &b, Value value) -> Value {
    return value.getType() == bitsType
               ? value
               : arith::BitcastOp::create(b, loc, bitsType, value);
  };
  auto fromBits = [&](OpBuilder &b, Value bits) -> Value {
    return element == bitsType
               ? bits
               : arith::BitcastOp::create(b, loc, element, bits);
  };
  // The first guess, read atomically: other threads may be swapping.
  unsigned bytes = element.getIntOrFloatBitWidth() / 8;
  Value initial = LLVM::LoadOp::create(b, loc, bitsType, address, bytes,
                                       /*isVolatile=*/false,
                                       /*isNonTemporal=*/false,
                                       /*isInvariant=*/false,
                                       /*isInvariantGroup=*/false,
                                       LLVM::AtomicOrdering::monotonic);
  scf::WhileOp::create(
      b, loc, TypeRange{bitsType}, ValueRange{initial},
      [&](OpBuilder &b, Location loc, ValueRange expected) {
        Value desired = toBits(b, combine(b, loc, fromBits(b, expected[0])));
        auto exchange = LLVM::AtomicCmpXchgOp::create(
            b, loc, address, expected[0], desired,
            LLVM::AtomicOrdering::acq_rel, LLVM::AtomicOrdering::monotonic);
        Value observed = LLVM::ExtractValueOp::create(b, loc, exchange,
                                                      ArrayRef<int64_t>{0});
        Value swapped = LLVM::ExtractValueOp::create(b, loc, exchange,
                                                     ArrayRef<int64_t>{1});
        Value retry = arith::XOrIOp::create(
            b, loc, swapped,
            arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
        scf::ConditionOp::create(b, loc, retry, ValueRange{observed});
      },
      [&](OpBuilder &b, Location loc, ValueRange observed) {
        scf::YieldOp::create(b, loc, observed);
      });
}

void mlir::kiln::emitScatterUpdate(OpBuilder &b, loop::ScatterOp node,
                                   Value dest, const IRMapping &mapping,
                                   ValueRange ivs) {
  Block &body = node.getBody().front();
  IRMapping bodyMapping = emitBodyOps(b, body, mapping, ivs);
  loop::ScatterYieldOp yield = node.getYield();
  Value value = lookupEmitted(bodyMapping, mapping, yield.getValue());
  SmallVector<Value> indices =
      llvm::map_to_vector(yield.getIndices(), [&](Value index) {
        return lookupEmitted(bodyMapping, mapping, index);
      });
  loop::CombiningKind combiner = node.getKind();
  if (combiner == loop::CombiningKind::assign) {
    memref::StoreOp::create(b, yield.getLoc(), value, dest, indices);
    return;
  }
  Type element = node.getResultType().getElementType();
  if (std::optional<arith::AtomicRMWKind> kind =
          getAtomicCombineKind(combiner, element)) {
    memref::AtomicRMWOp::create(b, yield.getLoc(), *kind, value, dest, indices);
    return;
  }
  // No target has an atomic product.
  emitCompareAndSwapUpdate(b, yield.getLoc(), dest, indices,
                           [&](OpBuilder &b, Location loc, Value current) {
                             return emitCombine(b, loc, combiner, current,
                                                value, element);
                           });
}

SmallVector<Value> mlir::kiln::delinearize(OpBuilder &b, Location loc,
                                           Value linear,
                                           ArrayRef<Value> sizes) {
  SmallVector<Value> ivs(sizes.size());
  Value rest = linear;
  for (int64_t dim = sizes.size() - 1; dim > 0; --dim) {
    ivs[dim] = arith::RemUIOp::create(b, loc, rest, sizes[dim]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[dim]);
  }
  if (!sizes.empty())
    ivs.front() = rest;
  return ivs;
}

SmallVector<Value> mlir::kiln::getUpdateSizes(OpBuilder &b, Location loc,
                                              loop::ScatterOp node,
                                              const IRMapping &mapping) {
  SmallVector<Value> sizes;
  unsigned nextDynamic = 0;
  for (int64_t size : node.getUpdateShape()) {
    if (ShapedType::isDynamic(size))
      sizes.push_back(
          mapping.lookup(node.getUpdateDynamicSizes()[nextDynamic++]));
    else
      sizes.push_back(arith::ConstantIndexOp::create(b, loc, size));
  }
  return sizes;
}

static IRMapping emitBodyOps(OpBuilder &b, Block &body,
                             const IRMapping &mapping, ValueRange ivs) {
  // A mapping of the body's own values, plus the few outer values (buffers,
  // constants, sizes) it uses: copying all of `mapping` per element would make
  // emitting a graph quadratic in its size.
  IRMapping bodyMapping;
  bodyMapping.map(body.getArguments(), ivs);
  auto importOuterValues = [&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (bodyMapping.contains(operand))
        continue;
      if (Value mapped = mapping.lookupOrNull(operand))
        bodyMapping.map(operand, mapped);
    }
  };
  for (Operation &op : body.without_terminator()) {
    op.walk(importOuterValues);
    if (auto load = dyn_cast<loop::LoadOp>(op)) {
      // A value the caller staged for this load (through workgroup memory,
      // say) replaces the read.
      if (Value staged = mapping.lookupOrNull(load.getResult())) {
        bodyMapping.map(load.getResult(), staged);
        continue;
      }
      Value source = bodyMapping.lookup(load.getSource());
      // A tensor held as a scalar is a reduction fused into this kernel: the
      // kernel's fusion guarantees the load reads the current row's value.
      if (!isa<MemRefType>(source.getType())) {
        bodyMapping.map(load.getResult(), source);
        continue;
      }
      SmallVector<Value> indices = llvm::map_to_vector(
          load.getIndices(), [&](Value v) { return bodyMapping.lookup(v); });
      Value value = memref::LoadOp::create(b, load.getLoc(), source, indices);
      bodyMapping.map(load.getResult(), value);
    } else {
      b.clone(op, bodyMapping);
    }
  }
  return bodyMapping;
}

void mlir::kiln::emitNodeBody(OpBuilder &b, loop::PointwiseOp node, Value dest,
                              const IRMapping &mapping, ValueRange ivs) {
  Value element = emitNodeElement(b, node, mapping, ivs);
  memref::StoreOp::create(b, node.getYield().getLoc(), element, dest, ivs);
}

/// Clones the graph's size computations into a function that returns the
/// dynamic sizes of every result, in order.
static LogicalResult buildResultSizesFunc(OpBuilder &b, fx::GraphOp graph) {
  Location loc = graph.getLoc();
  auto outputOp = cast<fx::OutputOp>(graph.getBody().front().getTerminator());
  SmallVector<Type> inputTypes =
      llvm::map_to_vector(graph.getArgumentTypes(),
                          [](Type t) -> Type { return getBufferType(t); });
  unsigned numDynamic = 0;
  for (Type type : graph.getResultTypes())
    numDynamic += cast<RankedTensorType>(type).getNumDynamicDims();
  SmallVector<Type> resultTypes(numDynamic, b.getIndexType());

  auto func = func::FuncOp::create(
      b, loc, (graph.getSymName() + kResultSizesSuffix).str(),
      b.getFunctionType(inputTypes, resultTypes));
  Block *entry = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);

  IRMapping mapping;
  mapping.map(graph.getArguments(), entry->getArguments());
  // The size of dimension `index` of `tensor`: static, a node's own size
  // operand, read from an input's buffer, an expand's size operand, or the
  // product of the sizes that a collapse merges (views of inputs or nodes).
  std::function<Value(Value, int64_t)> getSize = [&](Value tensor,
                                                     int64_t index) -> Value {
    Location loc = tensor.getLoc();
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(index))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(index));
    Operation *node = tensor.getDefiningOp();
    if (isComputation(node))
      return mapping.lookupOrNull(
          getDynamicSizesOfResult(tensor)[type.getDynamicDimIndex(index)]);
    if (isa<BlockArgument>(tensor))
      return memref::DimOp::create(b, loc, mapping.lookup(tensor), index);
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(node))
      if (auto size = dyn_cast<Value>(expand.getMixedOutputShape()[index]))
        return mapping.lookupOrNull(size);
    auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(node);
    if (!collapse)
      return {};
    Value size = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t merged : groups[index]) {
      Value part = getSize(collapse.getSrc(), merged);
      if (!part)
        return {};
      size = arith::MulIOp::create(b, loc, size, part);
    }
    return size;
  };
  // Every size a node uses is computed outside nodes from the inputs, so
  // cloning the scalar ops (and reading input sizes) reproduces them.
  for (Operation &op : graph.getBody().front().without_terminator()) {
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      auto type = cast<RankedTensorType>(dim.getSource().getType());
      Value size;
      if (index && *index >= 0 && *index < type.getRank())
        size = getSize(dim.getSource(), *index);
      else if (isa<BlockArgument>(dim.getSource()))
        size = memref::DimOp::create(b, dim.getLoc(),
                                     mapping.lookup(dim.getSource()),
                                     mapping.lookup(dim.getIndex()));
      if (!size)
        return dim.emitError("cannot compute this size from the graph's "
                             "inputs");
      mapping.map(dim.getResult(), size);
    } else if (isScalarOp(&op)) {
      b.clone(op, mapping);
    }
  }
  SmallVector<Value> sizes;
  for (Value result : outputOp.getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      if (!type.isDynamicDim(dim))
        continue;
      if (isComputation(result.getDefiningOp())) {
        sizes.push_back(mapping.lookup(
            getDynamicSizesOfResult(result)[type.getDynamicDimIndex(dim)]));
      } else {
        Value index = arith::ConstantIndexOp::create(b, loc, dim);
        sizes.push_back(
            memref::DimOp::create(b, loc, mapping.lookup(result), index));
      }
    }
  }
  func::ReturnOp::create(b, loc, sizes);
  return success();
}

/// The source of `op` if it is a view that only merges or splits
/// dimensions (free on a contiguous buffer); null otherwise.
static Value getReshapeSource(Operation *op) {
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(op))
    return collapse.getSrc();
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op))
    return expand.getSrc();
  return {};
}

/// For each tensor of the graph's body, the last op of the body that reads
/// it, or a view of it (a collapse_shape or expand_shape), itself or inside
/// its nodes: the point after which its buffer can go. The output op counts
/// as a reader.
static DenseMap<Value, Operation *> getLastReaders(Block &body) {
  DenseMap<Value, Value> viewed; // A reshape's result -> its source.
  DenseMap<Value, Operation *> lastReaders;
  for (Operation &op : body) {
    if (Value source = getReshapeSource(&op))
      viewed[op.getResult(0)] = viewed.lookup_or(source, source);
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        lastReaders[viewed.lookup_or(operand, operand)] = &op;
    });
  }
  return lastReaders;
}

/// A buffer that bufferization allocates for the graph: one or more tensors
/// of the body (a scatter that adds in place shares its `init`'s) live in
/// it from the op that first writes it to the last that reads it.
struct Temporary {
  MemRefType type;
  unsigned first, last; // Positions of ops in the body.
  int64_t offset = -1;  // In the workspace, when its size is static.
};

int64_t mlir::kiln::planWorkspace(MutableArrayRef<WorkspaceInterval> buffers,
                                  int64_t alignment) {
  // Largest first; each at the lowest aligned offset that no buffer placed
  // before it and alive at the same time occupies.
  SmallVector<unsigned> order = llvm::to_vector(
      llvm::seq<unsigned>(0, static_cast<unsigned>(buffers.size())));
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return std::make_pair(-buffers[a].bytes, a) <
           std::make_pair(-buffers[b].bytes, b);
  });
  auto alignUp = [&](int64_t value) {
    return (value + alignment - 1) / alignment * alignment;
  };
  int64_t total = 0;
  SmallVector<unsigned> placed;
  for (unsigned index : order) {
    WorkspaceInterval &buffer = buffers[index];
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (unsigned other : placed) {
      const WorkspaceInterval &o = buffers[other];
      if (o.first <= buffer.last && buffer.first <= o.last)
        taken.push_back({o.offset, o.offset + o.bytes});
    }
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + buffer.bytes <= begin)
        break;
      offset = std::max(offset, alignUp(end));
    }
    buffer.offset = offset;
    total = std::max(total, alignUp(offset + buffer.bytes));
    placed.push_back(index);
  }
  return total;
}

FailureOr<func::FuncOp>
mlir::kiln::bufferizeGraph(RewriterBase &rewriter, fx::GraphOp graph,
                           const GraphBufferizationTarget &target) {
  Block &body = graph.getBody().front();
  // A target (Kiln's, or an embedding compiler's) may leave out emitters for
  // what its graphs never hold.
  for (Operation &op : body.without_terminator()) {
    if (isa<loop::ReduceOp>(op) && !target.emitReduce)
      return op.emitError("the bufferization target emits no reductions");
    if (isa<loop::ScatterOp>(op) && !target.emitScatter)
      return op.emitError("the bufferization target emits no scatters");
    if (isa<loop::MatmulOp>(op) && !target.emitMatmul)
      return op.emitError("the bufferization target emits no matrix products");
    if (isa<loop::ConvolutionOp>(op) && !target.emitConvolution)
      return op.emitError("convolutions are not lowered for this target: "
                          "kiln-loop-expand-convolutions expands them");
    if (isa<loop::AttentionOp>(op) && !target.emitAttention)
      return op.emitError("attention is not lowered for this target: "
                          "kiln-loop-expand-attention expands it");
    if (isa<loop::AttentionBackwardOp>(op) && !target.emitAttentionBackward)
      return op.emitError("attention's gradients are not lowered for this "
                          "target: kiln-loop-expand-attention expands them");
    if (isa<loop::KernelOp>(op) && !target.emitKernel)
      return op.emitError("the bufferization target emits no fused kernels");
    if (getFrozenTensor(&op)) {
      if (!target.emitConstant)
        return op.emitError("the bufferization target emits no frozen "
                            "constants");
      Attribute value = cast<arith::ConstantOp>(op).getValue();
      if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value))
        return op.emitError("a frozen constant must be dense or "
                            "dense_resource");
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
        AsmResourceBlob *blob = resource.getRawHandle().getBlob();
        int64_t bytes = *getStaticByteSize(getBufferType(resource.getType()));
        if (!blob || static_cast<int64_t>(blob->getData().size()) != bytes)
          return op.emitError("the frozen constant's resource '")
                 << resource.getRawHandle().getKey() << "' "
                 << (blob ? "does not hold " + std::to_string(bytes) + " bytes"
                          : std::string("is missing"));
      }
      continue;
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
        expand && !expand.getResultType().hasStaticShape())
      return op.emitError("kiln-loop-to-scf: a tensor.expand_shape with "
                          "dynamic sizes has no buffer form");
    if (isComputation(&op)) {
      for (Type type : op.getResultTypes())
        if (getStaticByteSize(getBufferType(type)) >= kMaxBufferBytes)
          return op.emitError("a result of ")
                 << type << " takes 2^48 bytes or more, more than Kiln plans";
      continue;
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      // Out of range, the size would read past the buffer's descriptor.
      std::optional<int64_t> index = dim.getConstantIndex();
      int64_t rank =
          cast<RankedTensorType>(dim.getSource().getType()).getRank();
      if (index && (*index < 0 || *index >= rank))
        return dim.emitError("dimension ") << *index << " of a tensor of rank "
                                           << rank << " does not exist";
      continue;
    }
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) ||
        isScalarOp(&op))
      continue;
    return op.emitError("kiln-loop-to-scf: '")
           << op.getName()
           << "' has no buffer form; lower the graph to loop nodes first";
  }
  Location loc = graph.getLoc();
  auto outputOp = cast<fx::OutputOp>(body.getTerminator());
  SmallVector<Type> argTypes;
  for (Type type : graph.getArgumentTypes())
    argTypes.push_back(getBufferType(type));
  for (Type type : graph.getResultTypes())
    argTypes.push_back(getBufferType(type));
  llvm::append_range(argTypes, target.extraArgumentTypes);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(graph);
  auto func = func::FuncOp::create(rewriter, loc, graph.getSymName(),
                                   rewriter.getFunctionType(argTypes, {}));
  func->setAttr(kGraphFuncAttrName, rewriter.getUnitAttr());
  func->setAttr(kGraphSignatureAttrName,
                TypeAttr::get(graph.getFunctionType()));
  if (Attribute checks = graph->getAttr(loop::kChecksAttrName))
    func->setAttr(loop::kChecksAttrName, checks);
  Block *entry = func.addEntryBlock();
  unsigned numInputs = graph.getNumArguments();
  ValueRange resultBuffers =
      entry->getArguments().slice(numInputs, graph.getNumResults());
  ValueRange extraArgs =
      entry->getArguments().drop_front(numInputs + graph.getNumResults());

  // A tensor the graph returns is stored straight into the caller's buffer;
  // the first result it provides wins, later ones are copies.
  DenseMap<Value, Value> destinations;
  for (auto [result, buffer] :
       llvm::zip(outputOp.getResults(), resultBuffers)) {
    if (isComputation(result.getDefiningOp()))
      destinations.try_emplace(result, buffer);
  }
  // A tensor the graph returns only reshaped (a product's [B*S, V] returned
  // as [B, S, V]) is stored straight into the caller's buffer too, seen
  // through the inverse reshape, which is free on contiguous buffers.
  DenseSet<unsigned> storedThroughReshape;
  rewriter.setInsertionPointToStart(entry);
  for (auto [index, result, buffer] :
       llvm::enumerate(outputOp.getResults(), resultBuffers)) {
    Value source = getReshapeSource(result.getDefiningOp());
    auto sourceType =
        source ? cast<RankedTensorType>(source.getType()) : nullptr;
    if (!source || !isComputation(source.getDefiningOp()) ||
        destinations.contains(source) || !sourceType.hasStaticShape())
      continue;
    Operation *reshape = result.getDefiningOp();
    Value view;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
      view =
          memref::CollapseShapeOp::create(rewriter, reshape->getLoc(), buffer,
                                          expand.getReassociationIndices());
    else
      view = memref::ExpandShapeOp::create(
          rewriter, reshape->getLoc(), sourceType.getShape(), buffer,
          cast<tensor::CollapseShapeOp>(reshape).getReassociationIndices());
    destinations[source] = view;
    storedThroughReshape.insert(index);
  }

  DenseMap<Value, Operation *> lastReaders = getLastReaders(body);
  // A scatter adds into its `init` in place when nothing reads `init`
  // afterwards; where the caller takes the scatter's result, `init` is
  // computed into the caller's buffer to begin with.
  for (auto scatter : body.getOps<loop::ScatterOp>()) {
    Value init = scatter.getInit();
    Value dest = destinations.lookup(scatter.getResult());
    if (dest && isComputation(init.getDefiningOp()) &&
        !destinations.contains(init) && lastReaders.lookup(init) == scatter)
      destinations[init] = dest;
  }
  // The buffers the graph allocates itself, and where each lives: static
  // ones at planned offsets in one workspace, reusing memory after its last
  // reader; dynamic ones allocated and freed around their lifetimes.
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    position.try_emplace(&op, position.size());
  unsigned end = position.lookup(outputOp);
  SmallVector<Temporary> temporaries;
  DenseMap<Value, unsigned> temporaryOf;
  for (Operation &op : body.without_terminator()) {
    if (!isComputation(&op))
      continue;
    // A scatter whose `init` is a temporary that nothing reads afterwards
    // adds into that buffer in place: it becomes the result's.
    std::optional<unsigned> shared;
    if (auto scatter = dyn_cast<loop::ScatterOp>(op);
        scatter && !destinations.contains(scatter.getResult()) &&
        lastReaders.lookup(scatter.getInit()) == &op) {
      if (auto it = temporaryOf.find(scatter.getInit());
          it != temporaryOf.end())
        shared = it->second;
    }
    for (Value result : op.getResults()) {
      Operation *reader = lastReaders.lookup(result);
      unsigned last = position.lookup(reader ? reader : &op);
      if (shared) {
        temporaries[*shared].last = std::max(temporaries[*shared].last, last);
        temporaryOf[result] = *shared;
      } else if (!destinations.contains(result)) {
        temporaryOf[result] = temporaries.size();
        temporaries.push_back(
            {getBufferType(result.getType()), position.lookup(&op), last});
      }
    }
  }
  SmallVector<WorkspaceInterval> intervals;
  SmallVector<unsigned> planned;
  for (auto [index, temporary] : llvm::enumerate(temporaries)) {
    if (std::optional<int64_t> bytes = getStaticByteSize(temporary.type)) {
      intervals.push_back({temporary.first, temporary.last, *bytes});
      planned.push_back(index);
    }
  }
  int64_t workspaceBytes = planWorkspace(intervals, kWorkspaceAlignment);
  for (auto [interval, index] : llvm::zip(intervals, planned))
    temporaries[index].offset = interval.offset;
  // Dynamic temporaries to free after the op at each position.
  DenseMap<unsigned, SmallVector<unsigned>> freedAfter;
  for (auto [index, temporary] : llvm::enumerate(temporaries)) {
    if (temporary.offset < 0)
      freedAfter[temporary.last].push_back(index);
  }

  IRMapping mapping;
  mapping.map(graph.getArguments(),
              entry->getArguments().take_front(numInputs));
  rewriter.setInsertionPointToEnd(entry);
  // Temporaries of zero bytes (a batch of 0) are views too, of a workspace
  // that then holds one aligned block.
  if (!planned.empty())
    workspaceBytes = std::max(workspaceBytes, kWorkspaceAlignment);
  Value workspace;
  if (workspaceBytes > 0)
    workspace = target.allocate(
        rewriter, loc, MemRefType::get({workspaceBytes}, rewriter.getI8Type()),
        /*dynamicSizes=*/{}, extraArgs);
  SmallVector<Value> buffers(temporaries.size());
  auto getBuffer = [&](Value result) -> Value {
    unsigned index = temporaryOf.lookup(result);
    Temporary &temporary = temporaries[index];
    if (buffers[index])
      return buffers[index];
    Location bufferLoc = result.getLoc();
    if (temporary.offset >= 0) {
      Value offset =
          arith::ConstantIndexOp::create(rewriter, bufferLoc, temporary.offset);
      buffers[index] =
          memref::ViewOp::create(rewriter, bufferLoc, temporary.type, workspace,
                                 offset, /*sizes=*/ValueRange{});
    } else {
      SmallVector<Value> dynamicSizes =
          llvm::map_to_vector(getDynamicSizesOfResult(result),
                              [&](Value v) { return mapping.lookup(v); });
      buffers[index] = target.allocate(rewriter, bufferLoc, temporary.type,
                                       dynamicSizes, extraArgs);
    }
    return buffers[index];
  };
  auto freeTemporariesReadLastBy = [&](Operation *op) {
    for (unsigned index : freedAfter.lookup(position.lookup(op)))
      target.deallocate(rewriter, loc, buffers[index], extraArgs);
  };
  for (Operation &op : body.without_terminator()) {
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      mapping.map(dim.getResult(),
                  memref::DimOp::create(rewriter, dim.getLoc(),
                                        mapping.lookup(dim.getSource()),
                                        mapping.lookup(dim.getIndex())));
      freeTemporariesReadLastBy(&op);
      continue;
    }
    if (arith::ConstantOp frozen = getFrozenTensor(&op)) {
      mapping.map(frozen.getResult(),
                  target.emitConstant(rewriter, frozen.getLoc(),
                                      getSignlessElements(cast<ElementsAttr>(
                                          frozen.getValue())),
                                      extraArgs));
      continue;
    }
    // Every buffer is contiguous: merging or splitting dimensions is a free
    // view.
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      mapping.map(
          collapse.getResult(),
          memref::CollapseShapeOp::create(rewriter, collapse.getLoc(),
                                          mapping.lookup(collapse.getSrc()),
                                          collapse.getReassociationIndices()));
      freeTemporariesReadLastBy(&op);
      continue;
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      mapping.map(expand.getResult(), memref::ExpandShapeOp::create(
                                          rewriter, expand.getLoc(),
                                          expand.getResultType().getShape(),
                                          mapping.lookup(expand.getSrc()),
                                          expand.getReassociationIndices()));
      freeTemporariesReadLastBy(&op);
      continue;
    }
    if (!isComputation(&op)) {
      rewriter.clone(op, mapping);
      freeTemporariesReadLastBy(&op);
      continue;
    }
    SmallVector<Value> dests =
        llvm::map_to_vector(op.getResults(), [&](Value result) -> Value {
          return temporaryOf.contains(result) ? getBuffer(result)
                                              : destinations.lookup(result);
        });
    if (auto kernel = dyn_cast<loop::KernelOp>(op))
      target.emitKernel(rewriter, kernel, dests, mapping, extraArgs);
    else if (auto matmul = dyn_cast<loop::MatmulOp>(op))
      target.emitMatmul(rewriter, matmul, dests.front(), mapping, extraArgs);
    else if (auto attention = dyn_cast<loop::AttentionOp>(op))
      target.emitAttention(rewriter, attention, dests, mapping, extraArgs);
    else if (auto backward = dyn_cast<loop::AttentionBackwardOp>(op))
      target.emitAttentionBackward(rewriter, backward, dests, mapping,
                                   extraArgs);
    else if (auto convolution = dyn_cast<loop::ConvolutionOp>(op))
      target.emitConvolution(rewriter, convolution, dests.front(), mapping,
                             extraArgs);
    else if (auto reduce = dyn_cast<loop::ReduceOp>(op))
      target.emitReduce(rewriter, reduce, dests.front(), mapping, extraArgs);
    else if (auto scatter = dyn_cast<loop::ScatterOp>(op)) {
      // The updates add into `init`, or into a copy of it.
      if (mapping.lookup(scatter.getInit()) != dests.front())
        target.copy(rewriter, scatter.getLoc(),
                    mapping.lookup(scatter.getInit()), dests.front(),
                    extraArgs);
      target.emitScatter(rewriter, scatter, dests.front(), mapping, extraArgs);
    } else
      target.emitNode(rewriter, cast<loop::PointwiseOp>(op), dests.front(),
                      mapping, extraArgs);
    mapping.map(op.getResults(), dests);
    freeTemporariesReadLastBy(&op);
  }

  // Results that no node stored directly: graph inputs returned as they are,
  // and values returned more than once.
  for (auto [index, result, buffer] :
       llvm::enumerate(outputOp.getResults(), resultBuffers)) {
    Value source = mapping.lookup(result);
    if (source != buffer && !storedThroughReshape.contains(index))
      target.copy(rewriter, loc, source, buffer, extraArgs);
  }
  for (unsigned index : freedAfter.lookup(end))
    target.deallocate(rewriter, loc, buffers[index], extraArgs);
  if (workspace)
    target.deallocate(rewriter, loc, workspace, extraArgs);
  func::ReturnOp::create(rewriter, loc);

  rewriter.setInsertionPoint(graph);
  if (failed(buildResultSizesFunc(rewriter, graph)))
    return failure();
  rewriter.eraseOp(graph);
  return func;
}

LogicalResult
mlir::kiln::bufferizeGraphs(ModuleOp module,
                            const GraphBufferizationTarget &target) {
  IRRewriter rewriter(module.getContext());
  SmallVector<fx::GraphOp> graphs(module.getOps<fx::GraphOp>());
  for (fx::GraphOp graph : graphs) {
    if (failed(bufferizeGraph(rewriter, graph, target)))
      return failure();
  }
  return success();
}
