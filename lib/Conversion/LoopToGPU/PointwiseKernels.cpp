//===- PointwiseKernels.cpp - A thread per element or few elements --------===//
//
// Part of Kiln. The kernels of pointwise nodes (consecutive elements of a
// row per thread, as vectors where they can be), of scatters (a thread per
// update) and of kernels that compute element by element.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "kiln/Codegen/ElementKernels.h"
#include "kiln/Codegen/VectorizeNodeBody.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include <algorithm>

using namespace mlir;
using namespace mlir::kiln;

/// How many consecutive elements of `node` one thread computes: enough for
/// 16-byte accesses to the result (`requested` if positive), or the largest
/// power of two below that which divides the static innermost dimension
/// (8-byte accesses for rows of 28 bf16 elements); else 1.
static int64_t getElementsPerThread(loop::PointwiseOp node, int64_t requested) {
  RankedTensorType type = node.getResultType();
  // Bools are bytes in tensors but bits in LLVM's vectors, complex numbers
  // structs: one at a time.
  if (type.getRank() == 0 || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return 1;
  int64_t perThread = requested;
  if (perThread <= 0) {
    unsigned bits = std::max(type.getElementTypeBitWidth(), 8u);
    perThread = std::min<int64_t>(128 / bits, 8);
  }
  int64_t innermost = type.getShape().back();
  if (ShapedType::isDynamic(innermost))
    return 1;
  while (perThread > 1 && innermost % perThread != 0)
    perThread /= 2;
  return perThread;
}

void mlir::kiln::emitPointwiseKernel(OpBuilder &b, loop::PointwiseOp node,
                                     Value dest, IRMapping &mapping,
                                     const LoopToGPUOptions &options,
                                     StreamOrder &order, ValueRange extraArgs) {
  Location loc = node.getLoc();
  int64_t perThread = getElementsPerThread(node, options.elementsPerThread);
  SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value total = one;
  for (auto [index, size] : llvm::enumerate(sizes))
    total = index == 0 ? size : arith::MulIOp::create(b, loc, total, size);
  auto [launch, first] = createElementLaunch(
      b, loc, "pointwise", total, perThread, options, order, extraArgs);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(first);
  // The kernel reads and writes through aligned views of the buffers.
  AlignedViews align(b, loc);
  IRMapping kernelMapping = mapping;
  align.alignSources(node, mapping, kernelMapping);
  Value alignedDest = align(dest);

  // With several elements per thread the innermost size is a multiple of
  // their count, so a thread's elements are all in bounds or all out.
  Value inBounds =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, first, total);
  auto guardIf = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guardIf.getThenRegion().front());
  // Row-major: the innermost dimension varies fastest across threads, so
  // neighbouring threads touch neighbouring elements.
  SmallVector<Value> ivs = delinearize(b, loc, first, sizes);
  if (perThread > 1) {
    // One vector of elements, then one (vector) store.
    FailureOr<Value> elements = emitVectorNodeElements(
        b, node, kernelMapping, ivs, perThread, kBufferAlignment);
    if (succeeded(elements)) {
      emitVectorStore(b, loc, *elements, alignedDest, ivs, kBufferAlignment);
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

void mlir::kiln::emitScatterKernel(OpBuilder &b, loop::ScatterOp node,
                                   Value dest, IRMapping &mapping,
                                   const LoopToGPUOptions &options,
                                   StreamOrder &order, ValueRange extraArgs) {
  Location loc = node.getLoc();
  SmallVector<Value> sizes = getUpdateSizes(b, loc, node, mapping);
  Value total = getProduct(b, loc, sizes);
  Value threads = arith::ConstantIndexOp::create(b, loc, options.blockSize);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
  auto [launch, update] =
      createFlatLaunch(b, loc, "scatter", blocks, threads, order, extraArgs);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(update);
  Value inBounds =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, update, total);
  auto guardIf = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guardIf.getThenRegion().front());
  emitScatterUpdate(b, node, dest, mapping, delinearize(b, loc, update, sizes));
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

void mlir::kiln::emitElementKernel(
    OpBuilder &b, Location loc, ArrayRef<Operation *> nodes, int64_t rows,
    int64_t width, const DenseMap<Value, SmallVector<Value, 1>> &stores,
    IRMapping &mapping, const LoopToGPUOptions &options, StreamOrder &order,
    ValueRange extraArgs) {
  SmallVector<Value> sizes = getNodeSizes(b, loc, nodes.front(), mapping);
  Value total = getProduct(b, loc, sizes);
  auto [launch, first] = createElementLaunch(b, loc, "elements", total, width,
                                             options, order, extraArgs);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(first);
  AlignedViews align(b, loc);
  IRMapping kernelMapping = mapping;
  for (Operation *node : nodes)
    align.alignSources(node, mapping, kernelMapping);
  // The innermost size is a multiple of `width`: a thread's elements are
  // all in bounds or all out.
  Value inBounds =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, first, total);
  auto guardIf = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guardIf.getThenRegion().front());
  SmallVector<Value> ivs = delinearize(b, loc, first, sizes);
  emitElementKernelStep(b, nodes, rows, kernelMapping, ivs, width,
                        kBufferAlignment, [&](Value result, Value elements) {
                          for (Value dest : stores.lookup(result))
                            emitVectorStore(b, loc, elements, align(dest), ivs,
                                            kBufferAlignment);
                        });
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

int64_t mlir::kiln::getGPUElementKernelWidth(ArrayRef<Operation *> nodes,
                                             int64_t rows,
                                             const LoopToGPUOptions &options) {
  int64_t width =
      getElementKernelWidth(nodes, rows, options.elementKernelVectorBytes);
  // A width above 1 means rows == rank >= 1.
  if (width == 1)
    return 1;
  int64_t innermost =
      cast<RankedTensorType>(nodes.front()->getResult(0).getType())
          .getDimSize(rows - 1);
  if (ShapedType::isDynamic(innermost))
    return 1;
  width = llvm::bit_floor(static_cast<uint64_t>(width));
  while (width > 1 && innermost % width != 0)
    width /= 2;
  return width;
}
