//===- LoopToGPU.cpp - Bufferizing graphs into GPU kernels ----------------===//
//
// Part of Kiln. The GPU's way to bufferize a graph: each loop node becomes a
// kernel with one thread per element, launched on the caller's stream.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Conversion/Passes.h"

#include "GPUKernels.h"
#include "MatmulToGPU.h"

#include "kiln/Conversion/Bufferization/ElementKernels.h"
#include "kiln/Conversion/Bufferization/VectorizeNodeBody.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include <algorithm>

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOGPUPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

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

/// Emits `node` as a kernel over its flattened index space: each thread
/// computes `perThread` consecutive elements of one row.
static void emitKernel(OpBuilder &b, loop::PointwiseOp node, Value dest,
                       IRMapping &mapping, const LoopToGPUOptions &options,
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

/// Emits a scatter as a kernel with a thread per update, each an atomic
/// addition into `dest` (which holds the scatter's `init` by then).
static void emitScatterKernel(OpBuilder &b, loop::ScatterOp node, Value dest,
                              IRMapping &mapping,
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

//===----------------------------------------------------------------------===//
// Row kernels: reductions and the nodes fused with them
//===----------------------------------------------------------------------===//

/// Threads per warp on NVIDIA GPUs.
static constexpr int64_t kWarpSize = 32;

/// The most consecutive elements a thread reads at once in a row kernel.
static constexpr int64_t kMaxRowVectorWidth = 8;

/// `value` from the lane `offset` away (xor) in the warp. Shuffles move 32
/// bits: narrower integers are widened, 64-bit values go in two halves.
static Value emitShuffleXor(OpBuilder &b, Location loc, Value value,
                            int32_t offset) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  auto shuffle32 = [&](Value word) -> Value {
    return gpu::ShuffleOp::create(b, loc, word, offset, kWarpSize,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (bits == 32)
    return shuffle32(value);
  if (bits < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, i32, value);
    return arith::TruncIOp::create(b, loc, type, shuffle32(wide));
  }
  Type i64 = b.getI64Type();
  Value word =
      type == i64 ? value : arith::BitcastOp::create(b, loc, i64, value);
  Value shift = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, 32));
  Value low = shuffle32(arith::TruncIOp::create(b, loc, i32, word));
  Value high = shuffle32(arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, word, shift)));
  Value joined = arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, i64, low),
      arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, high),
                            shift));
  return type == i64
             ? joined
             : arith::BitcastOp::create(b, loc, type, joined).getResult();
}

/// Exchanges `value` (a scalar, or a vector of them, lane by lane) with the
/// lane `offset` away.
static Value emitShuffleXorOfState(OpBuilder &b, Location loc, Value value,
                                   int32_t offset) {
  auto vectorType = dyn_cast<VectorType>(value.getType());
  if (!vectorType)
    return emitShuffleXor(b, loc, value, offset);
  SmallVector<Value> elements;
  for (int64_t i = 0; i < vectorType.getNumElements(); ++i)
    elements.push_back(emitShuffleXor(
        b, loc, vector::ExtractOp::create(b, loc, value, i), offset));
  return vector::FromElementsOp::create(b, loc, vectorType, elements);
}

/// Combines partial state `value` across each aligned group of `lanes` lanes
/// (a power of two, at most a warp); every lane gets its group's total.
static Value emitWarpReduce(OpBuilder &b, Location loc, StringRef combiner,
                            Value value, Type dtype,
                            int64_t lanes = kWarpSize) {
  for (int32_t offset = lanes / 2; offset > 0; offset /= 2)
    value = emitMerge(b, loc, combiner, value,
                      emitShuffleXorOfState(b, loc, value, offset), dtype);
  return value;
}

/// Combines every thread's `partial` across the `threads` threads of a row
/// (a power of two up to a warp, or a block of whole warps); every thread
/// gets the total.
/// `scratch` (workgroup memory, one element per warp) passes the warps'
/// totals.
static Value emitBlockReduce(OpBuilder &b, Location loc, StringRef combiner,
                             Value partial, Type dtype, Value thread,
                             int64_t threads, Value scratch) {
  if (threads == 1)
    return partial;
  if (threads <= kWarpSize)
    return emitWarpReduce(b, loc, combiner, partial, dtype, threads);
  Value warpTotal = emitWarpReduce(b, loc, combiner, partial, dtype);
  Value warpSize = arith::ConstantIndexOp::create(b, loc, kWarpSize);
  Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value isFirstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
  auto store = scf::IfOp::create(b, loc, isFirstLane, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    memref::StoreOp::create(b, loc, warpTotal, scratch, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, loc);
  // The first lanes of every warp read the warps' totals: all warps finish
  // with the same total, so none waits for another to broadcast it.
  Value numWarps = arith::ConstantIndexOp::create(b, loc, threads / kWarpSize);
  Value hasTotal =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane, numWarps);
  Type type = partial.getType();
  auto read = scf::IfOp::create(b, loc, TypeRange{type}, hasTotal,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&read.getThenRegion().front());
    scf::YieldOp::create(
        b, loc, ValueRange{memref::LoadOp::create(b, loc, scratch, lane)});
    b.setInsertionPointToStart(&read.getElseRegion().front());
    scf::YieldOp::create(b, loc,
                         getCombinerIdentity(b, loc, combiner, type, dtype));
  }
  return emitWarpReduce(b, loc, combiner, read.getResult(0), dtype);
}

/// The product of `sizes`, if all are static.
static std::optional<int64_t> getStaticProduct(ArrayRef<int64_t> sizes) {
  int64_t product = 1;
  for (int64_t size : sizes) {
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    product *= size;
  }
  return product;
}

/// The static number of columns of `node` in a kernel with `rows` row
/// dimensions (the elements of a row it reads or writes), if known.
static std::optional<int64_t> getStaticColumns(Operation *node, int64_t rows) {
  if (auto reduce = dyn_cast<loop::ReduceOp>(node))
    return getStaticProduct(reduce.getReductionShape());
  return getStaticProduct(cast<RankedTensorType>(node->getResult(0).getType())
                              .getShape()
                              .drop_front(rows));
}

/// The most column steps of a thread that are unrolled, so that their loads
/// are in flight together.
static constexpr int64_t kMaxUnrolledSteps = 16;

/// Rows of at most this many columns (a pooling window, say) get a thread
/// each: a warp per row would leave most of its lanes idle.
static constexpr int64_t kMaxThreadRowColumns = 16;

/// The fewest lanes that share a row of more columns: together they read at
/// least 64 contiguous bytes of it per step.
static constexpr int64_t kMinRowLanes = 4;

namespace {
/// How a row kernel maps rows to threads: `threadsPerRow` threads (a power
/// of two up to a warp, or a whole block) share a row, and a block holds
/// `rowsPerBlock` rows.
struct RowMapping {
  int64_t threadsPerRow;
  int64_t rowsPerBlock;
};
} // namespace

/// Tiny rows get a thread each. Short rows (at most `rowLaneVectors`
/// 16-byte vectors per lane of a warp) get the fewest lanes of a warp that
/// keep within that (a power of two), so that their reductions are
/// shuffles, no lane idles and a block of `shortRowBlockSize` threads works
/// on several rows. Longer rows get a block of enough threads for one
/// vector each (a power of two up to the block size and `rowThreads`).
/// Fewer threads with more vectors each have beaten whole blocks:
/// LayerNorm + GELU over 16384 x 4096 bf16 on an H200 took 0.17 ms with 128
/// (or 64) threads per row against 0.21 ms with 256 and 0.27 ms with 512
/// (bench/sweep.py), so the option's default is 128.
static RowMapping getRowMapping(ArrayRef<Operation *> nodes, int64_t rows,
                                const LoopToGPUOptions &options) {
  auto wholeWarps = [](int64_t threads) {
    return std::max(kWarpSize, threads / kWarpSize * kWarpSize);
  };
  int64_t limit = wholeWarps(options.blockSize);
  int64_t columns = 0;
  for (Operation *node : nodes) {
    std::optional<int64_t> nodeColumns = getStaticColumns(node, rows);
    if (!nodeColumns)
      return {limit, 1};
    columns = std::max(columns, *nodeColumns);
  }
  if (columns <= kMaxThreadRowColumns)
    return {1, limit};
  int64_t vectors = llvm::divideCeil(columns, kMaxRowVectorWidth);
  if (vectors <= kWarpSize * options.rowLaneVectors) {
    int64_t lanes = std::max<int64_t>(
        kMinRowLanes,
        llvm::PowerOf2Ceil(llvm::divideCeil(vectors, options.rowLaneVectors)));
    // A warp's shuffles need all its lanes: the rows that share a warp must
    // all be in bounds.
    std::optional<int64_t> staticRows = getStaticProduct(
        cast<RankedTensorType>(nodes.front()->getResult(0).getType())
            .getShape()
            .take_front(rows));
    if (!staticRows || *staticRows % (kWarpSize / lanes) != 0)
      lanes = kWarpSize;
    return {lanes, wholeWarps(options.shortRowBlockSize) / lanes};
  }
  int64_t threads = kWarpSize;
  int64_t rowLimit = std::max(kWarpSize, std::min(limit, options.rowThreads));
  while (threads < vectors && threads < rowLimit)
    threads *= 2;
  return {std::min(threads, rowLimit), 1};
}

/// Consecutive columns a thread handles at once for `body`: 16 bytes of the
/// widest element it reads from memory (or stores, for a pointwise node),
/// when the body vectorizes and `innermost` (the innermost column size) is a
/// multiple; else 1.
static int64_t getRowVectorWidth(Block &body, int64_t innermost,
                                 const IRMapping &mapping) {
  if (ShapedType::isDynamic(innermost) || !canVectorizeBody(body))
    return 1;
  // A reduction's yield is its accumulator, which stays in registers.
  unsigned bits = 8;
  if (isa<loop::PointwiseOp>(body.getParentOp()))
    bits = cast<loop::YieldOp>(body.getTerminator())
               .getValue()
               .getType()
               .getIntOrFloatBitWidth();
  for (auto load : body.getOps<loop::LoadOp>()) {
    if (isa<MemRefType>(mapping.lookup(load.getSource()).getType()))
      bits = std::max(bits, load.getType().getIntOrFloatBitWidth());
  }
  int64_t width =
      std::min<int64_t>(128 / std::max(bits, 8u), kMaxRowVectorWidth);
  return innermost % width == 0 ? width : 1;
}

/// Whether `load`, in a node body whose first `rows` arguments index the
/// row, reads elements that differ from row to row: an index computed from
/// one of those arguments.
static bool readsPerRow(loop::LoadOp load, int64_t rows) {
  Block *body = load->getBlock();
  SmallVector<Value> worklist(load.getIndices());
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() == body && argument.getArgNumber() < rows)
        return true;
      continue;
    }
    if (value.getDefiningOp()->getBlock() == body)
      llvm::append_range(worklist, value.getDefiningOp()->getOperands());
  }
  return false;
}

/// Emits `nodes` as one kernel over rows (the first `rows` dimensions of
/// every node's result), a warp or a block per row (getRowMapping): each node
/// in turn strides over the row's columns with the row's threads;
/// reductions combine across them and stay in registers as row values for
/// later nodes. Nodes in `stores` are written to their buffers.
static void emitRowKernel(OpBuilder &b, Location loc,
                          ArrayRef<Operation *> nodes, int64_t rows,
                          const DenseMap<Value, SmallVector<Value, 1>> &stores,
                          IRMapping &mapping, const LoopToGPUOptions &options,
                          StreamOrder &order, ValueRange extraArgs) {
  SmallVector<Value> rowSizes = getNodeSizes(b, loc, nodes.front(), mapping);
  rowSizes.resize(rows);
  Value numRows = getProduct(b, loc, rowSizes);
  RowMapping rowMapping = getRowMapping(nodes, rows, options);
  int64_t threads = rowMapping.threadsPerRow;
  Value rowsPerBlock =
      arith::ConstantIndexOp::create(b, loc, rowMapping.rowsPerBlock);
  Value blocks = arith::CeilDivUIOp::create(b, loc, numRows, rowsPerBlock);
  Value threadsValue =
      arith::ConstantIndexOp::create(b, loc, threads * rowMapping.rowsPerBlock);
  gpu::LaunchOp launch =
      createLaunch(b, loc, "rows", blocks, threadsValue, order, extraArgs);
  // One warp total per warp for each reduction.
  DenseMap<Operation *, Value> scratch;
  if (threads > kWarpSize) {
    for (Operation *node : nodes) {
      if (auto reduce = dyn_cast<loop::ReduceOp>(node))
        scratch[node] = addWorkgroupBuffer(
            launch, {threads / kWarpSize},
            getReductionStateType(reduce.getCombiner(),
                                  reduce.getYield().getValue().getType()),
            loc);
    }
  }

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  // The kernel reads and writes through aligned views of the buffers.
  AlignedViews align(b, loc);
  IRMapping kernelMapping = mapping;
  for (Operation *node : nodes)
    align.alignSources(node, mapping, kernelMapping);

  // The thread's place in its row, and the row.
  Value thread = launch.getThreadIds().x;
  Value row = launch.getBlockIds().x;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  if (rowMapping.rowsPerBlock > 1) {
    Value rowThreads = arith::ConstantIndexOp::create(b, loc, threads);
    row = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, rowsPerBlock),
        arith::DivUIOp::create(b, loc, thread, rowThreads));
    thread = arith::RemUIOp::create(b, loc, thread, rowThreads);
    // The last block may have rows past the last row; their threads have
    // no barrier or shuffle to reach (getRowMapping), so they just skip the
    // work.
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, numRows);
    auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  }
  Value isFirstThread =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  SmallVector<Value> rowIvs = delinearize(b, loc, row, rowSizes);
  // Thread 0 stores a row value (all threads hold it).
  auto storeRowValue = [&](Value value, Value result, ValueRange ivs) {
    auto it = stores.find(result);
    if (it == stores.end())
      return;
    auto ifOp = scf::IfOp::create(b, loc, isFirstThread, false);
    OpBuilder::InsertionGuard thenGuard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (Value dest : it->second)
      memref::StoreOp::create(b, loc, value, align(dest), ivs);
  };
  // The thread's steps over a row of `columns` (`staticColumns` if known),
  // `width` columns each; `body` takes the step's first column and the
  // values carried from the step before (`inits` first) and returns the
  // values for the next. Few static steps are unrolled, so that their loads
  // are in flight at once; their columns are computed once for the whole
  // kernel, so that nodes reading the same elements share their loads
  // (`loadCache`): the row stays in registers from one node to the next
  // (with `options.rowCache`).
  // `prefetch` emits a step's loads into the cache: all steps' loads come
  // first, in flight together.
  DenseMap<std::pair<int64_t, int64_t>, Value> stepColumns;
  VectorLoadCache loadCache;
  bool unrolled = false;
  auto forColumns =
      [&](Value columns, std::optional<int64_t> staticColumns, int64_t width,
          ValueRange inits,
          function_ref<SmallVector<Value>(Value, ValueRange)> body,
          function_ref<void(Value)> prefetch = nullptr) -> SmallVector<Value> {
    int64_t stride = threads * width;
    if (staticColumns && *staticColumns % stride == 0 &&
        *staticColumns / stride <= kMaxUnrolledSteps) {
      SmallVector<Value> steps;
      for (int64_t step = 0; step < *staticColumns / stride; ++step) {
        Value &column = stepColumns[{width, step}];
        if (!column) {
          column = arith::MulIOp::create(
              b, loc, thread, arith::ConstantIndexOp::create(b, loc, width));
          if (step > 0)
            column = arith::AddIOp::create(
                b, loc, column,
                arith::ConstantIndexOp::create(b, loc, step * stride));
        }
        steps.push_back(column);
      }
      if (prefetch)
        llvm::for_each(steps, prefetch);
      SmallVector<Value> values(inits);
      unrolled = true;
      for (Value column : steps)
        values = body(column, values);
      unrolled = false;
      return values;
    }
    Value first = arith::MulIOp::create(
        b, loc, thread, arith::ConstantIndexOp::create(b, loc, width));
    Value stepValue = arith::ConstantIndexOp::create(b, loc, stride);
    auto loop = scf::ForOp::create(
        b, loc, first, columns, stepValue, inits,
        [&](OpBuilder &nested, Location, Value column, ValueRange iterArgs) {
          OpBuilder::InsertionGuard loopGuard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(column, iterArgs));
        });
    return SmallVector<Value>(loop.getResults());
  };

  // A vectorized body's loads at the step of `column` (forColumns's
  // prefetch), after the indices `outerIvs` of the row. Only the row's own
  // elements: what every row reads (LayerNorm's weight) comes from the
  // cache, and held for all steps at once it would only take registers.
  auto emitStepLoads = [&](Block &body, ArrayRef<Value> outerIvs,
                           ArrayRef<Value> columnSizes, int64_t width,
                           Value column) {
    if (width == 1)
      return;
    SmallVector<Value> ivs(outerIvs);
    llvm::append_range(ivs, delinearize(b, loc, column, columnSizes));
    emitVectorBodyLoads(
        b, body, kernelMapping, ivs, width, kBufferAlignment, loadCache,
        [&](loop::LoadOp load) { return readsPerRow(load, rows); });
  };

  for (Operation *node : nodes) {
    // Without the row cache each node issues its own loads.
    if (!options.rowCache)
      loadCache = VectorLoadCache();
    Value result = node->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());
    Block &body = node->getRegion(0).front();
    SmallVector<Value> rowValueIvs(rowIvs);
    rowValueIvs.append(type.getRank() - rows, zero);

    if (auto reduce = dyn_cast<loop::ReduceOp>(node)) {
      SmallVector<Value> columnSizes =
          getReductionSizes(b, loc, reduce, mapping);
      StringRef combiner = reduce.getCombiner();
      Type dtype = type.getElementType();
      Type accumulatorType = reduce.getYield().getValue().getType();
      // A state other than the result ("welford") takes one column at a
      // time.
      Type stateType = getReductionStateType(combiner, accumulatorType);
      int64_t width =
          stateType == accumulatorType
              ? getRowVectorWidth(body, reduce.getReductionShape().back(),
                                  kernelMapping)
              : 1;
      Type partialType = width > 1
                             ? Type(VectorType::get({width}, accumulatorType))
                             : stateType;
      Value init = getCombinerIdentity(b, loc, combiner, partialType, dtype);
      SmallVector<Value> partials = forColumns(
          getProduct(b, loc, columnSizes), getStaticColumns(node, rows), width,
          ValueRange{init},
          [&](Value column, ValueRange partials) -> SmallVector<Value> {
            SmallVector<Value> ivs(rowValueIvs);
            llvm::append_range(ivs, delinearize(b, loc, column, columnSizes));
            Value value =
                width > 1
                    ? *emitVectorBodyElements(b, body, kernelMapping, ivs,
                                              width, kBufferAlignment,
                                              unrolled ? &loadCache : nullptr)
                    : emitBodyValue(b, body, kernelMapping, ivs);
            return {
                emitCombine(b, loc, combiner, partials.front(), value, dtype)};
          },
          [&](Value column) {
            emitStepLoads(body, rowValueIvs, columnSizes, width, column);
          });
      Value partial = partials.front();
      if (width > 1) {
        Value vector = partial;
        partial = vector::ExtractOp::create(b, loc, vector, int64_t(0));
        for (int64_t k = 1; k < width; ++k)
          partial =
              emitCombine(b, loc, combiner, partial,
                          vector::ExtractOp::create(b, loc, vector, k), dtype);
      }
      Value total = emitReductionResult(
          b, loc, combiner,
          emitBlockReduce(b, loc, combiner, partial, dtype, thread, threads,
                          scratch.lookup(node)));
      Type scalarType = loop::getScalarType(dtype);
      if (total.getType() != scalarType)
        total = arith::TruncFOp::create(b, loc, scalarType, total);
      storeRowValue(total, result, rowValueIvs);
      kernelMapping.map(result, total);
      continue;
    }

    if (loop::isRowValue(result, rows)) {
      Value value = emitBodyValue(b, body, kernelMapping, rowValueIvs);
      storeRowValue(value, result, rowValueIvs);
      kernelMapping.map(result, value);
      continue;
    }

    // A node with columns: the block's threads stride over them.
    SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
    ArrayRef<Value> columnSizes = ArrayRef<Value>(sizes).drop_front(rows);
    int64_t width =
        getRowVectorWidth(body, type.getShape().back(), kernelMapping);
    auto it = stores.find(result);
    assert(it != stores.end() && "a kernel yields every node with columns");
    for (Value dest : it->second) {
      Value alignedDest = align(dest);
      forColumns(
          getProduct(b, loc, columnSizes), getStaticColumns(node, rows), width,
          ValueRange{},
          [&](Value column, ValueRange) -> SmallVector<Value> {
            SmallVector<Value> ivs(rowIvs);
            llvm::append_range(ivs, delinearize(b, loc, column, columnSizes));
            if (width > 1) {
              Value elements = *emitVectorBodyElements(
                  b, body, kernelMapping, ivs, width, kBufferAlignment,
                  unrolled ? &loadCache : nullptr);
              emitVectorStore(b, loc, elements, alignedDest, ivs,
                              kBufferAlignment);
            } else {
              memref::StoreOp::create(
                  b, loc, emitBodyValue(b, body, kernelMapping, ivs),
                  alignedDest, ivs);
            }
            return {};
          },
          [&](Value column) {
            emitStepLoads(body, rowIvs, columnSizes, width, column);
          });
    }
  }
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

/// Emits a kernel that computes element by element (getElementKernelWidth
/// gave `width`, which divides the static innermost row size) with
/// `width` consecutive elements per thread, as vectors: the reads of a
/// window step load whole vectors where they stay inside the row.
static void
emitElementKernel(OpBuilder &b, Location loc, ArrayRef<Operation *> nodes,
                  int64_t rows, int64_t width,
                  const DenseMap<Value, SmallVector<Value, 1>> &stores,
                  IRMapping &mapping, const LoopToGPUOptions &options,
                  StreamOrder &order, ValueRange extraArgs) {
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

/// The elements per thread of `nodes` (a kernel over `rows` row
/// dimensions) as an element kernel (emitElementKernel): as many as the
/// option asks for, or the largest power of two below that which divides
/// the static innermost row size; 1 where they do not compute element by
/// element, the option is off, or the innermost row size is dynamic.
static int64_t getGPUElementKernelWidth(ArrayRef<Operation *> nodes,
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

GraphBufferizationTarget
mlir::kiln::getGPUBufferizationTarget(MLIRContext *context,
                                      const LoopToGPUOptions &options) {
  auto order = std::make_shared<StreamOrder>();
  GraphBufferizationTarget target;
  // The stream, a CUDA CUstream.
  target.extraArgumentTypes.push_back(LLVM::LLVMPointerType::get(context));
  target.emitNode = [=](OpBuilder &b, loop::PointwiseOp node, Value dest,
                        IRMapping &mapping, ValueRange extraArgs) {
    if (options.transposeTiles) {
      if (std::optional<TransposeTiling> tiling = getTransposeTiling(node))
        return emitTransposeTiledKernel(b, node, *tiling, dest, mapping, *order,
                                        extraArgs);
    }
    emitKernel(b, node, dest, mapping, options, *order, extraArgs);
  };
  target.emitReduce = [=](OpBuilder &b, loop::ReduceOp node, Value dest,
                          IRMapping &mapping, ValueRange extraArgs) {
    DenseMap<Value, SmallVector<Value, 1>> stores;
    stores[node.getResult()].push_back(dest);
    int64_t rank = node.getResultType().getRank();
    if (int64_t width =
            getGPUElementKernelWidth({node.getOperation()}, rank, options);
        width > 1)
      return emitElementKernel(b, node.getLoc(), {node.getOperation()}, rank,
                               width, stores, mapping, options, *order,
                               extraArgs);
    emitRowKernel(b, node.getLoc(), {node.getOperation()}, rank, stores,
                  mapping, options, *order, extraArgs);
  };
  target.emitMatmul = [](OpBuilder &b, loop::MatmulOp node, Value dest,
                         IRMapping &mapping, ValueRange extraArgs) {
    emitLibraryMatmul(b, node, dest, mapping, extraArgs.front());
  };
  target.emitScatter = [=](OpBuilder &b, loop::ScatterOp node, Value dest,
                           IRMapping &mapping, ValueRange extraArgs) {
    emitScatterKernel(b, node, dest, mapping, options, *order, extraArgs);
  };
  target.emitKernel = [=](OpBuilder &b, loop::KernelOp kernel, ValueRange dests,
                          IRMapping &mapping, ValueRange extraArgs) {
    DenseMap<Value, SmallVector<Value, 1>> stores;
    for (auto [value, dest] : llvm::zip(kernel.getYield().getValues(), dests))
      stores[value].push_back(dest);
    SmallVector<Operation *> nodes = llvm::map_to_vector(
        kernel.getNodes(), [](Operation &op) { return &op; });
    int64_t rows = kernel.getRows();
    if (int64_t width = getGPUElementKernelWidth(nodes, rows, options);
        width > 1)
      return emitElementKernel(b, kernel.getLoc(), nodes, rows, width, stores,
                               mapping, options, *order, extraArgs);
    emitRowKernel(b, kernel.getLoc(), nodes, rows, stores, mapping, options,
                  *order, extraArgs);
  };
  target.emitConstant = [](OpBuilder &b, Location loc, ElementsAttr value,
                           ValueRange extraArgs) -> Value {
    return emitDeviceConstant(b, loc, value, extraArgs.front());
  };
  target.allocate = [=](OpBuilder &b, Location loc, MemRefType type,
                        ValueRange dynamicSizes,
                        ValueRange extraArgs) -> Value {
    Value token = order->current(b, loc, extraArgs);
    auto alloc = gpu::AllocOp::create(
        b, loc, type, gpu::AsyncTokenType::get(b.getContext()),
        ValueRange{token}, dynamicSizes, /*symbolOperands=*/ValueRange{});
    order->advance(extraArgs, alloc.getAsyncToken());
    return alloc.getMemref();
  };
  target.deallocate = [=](OpBuilder &b, Location loc, Value buffer,
                          ValueRange extraArgs) {
    Value token = order->current(b, loc, extraArgs);
    auto dealloc =
        gpu::DeallocOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                               ValueRange{token}, buffer);
    order->advance(extraArgs, dealloc.getAsyncToken());
  };
  target.copy = [=](OpBuilder &b, Location loc, Value source, Value dest,
                    ValueRange extraArgs) {
    Value token = order->current(b, loc, extraArgs);
    auto copy =
        gpu::MemcpyOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                              ValueRange{token}, dest, source);
    order->advance(extraArgs, copy.getAsyncToken());
  };
  return target;
}

/// Replaces the kernels' float remainders by calls of libdevice's fmod:
/// upstream's NVVM pipeline turns `arith.remf` into `llvm.frem` (which
/// NVPTX has no exact instruction for) before its libdevice patterns could
/// see it. Outlining copies the declarations into the kernels' module.
static void callLibdeviceForRemainders(ModuleOp module) {
  SmallVector<arith::RemFOp> remainders;
  module.walk([&](gpu::LaunchOp launch) {
    launch.walk([&](arith::RemFOp op) { remainders.push_back(op); });
  });
  for (arith::RemFOp op : remainders) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    Type callType = type.isF64() ? type : b.getF32Type();
    StringRef name = type.isF64() ? "__nv_fmod" : "__nv_fmodf";
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function) {
      OpBuilder atEnd = OpBuilder::atBlockEnd(module.getBody());
      function = func::FuncOp::create(
          atEnd, loc, name,
          atEnd.getFunctionType({callType, callType}, {callType}));
      function.setPrivate();
    }
    auto widen = [&](Value value) -> Value {
      return value.getType() == callType
                 ? value
                 : arith::ExtFOp::create(b, loc, callType, value);
    };
    Value result =
        func::CallOp::create(b, loc, function,
                             ValueRange{widen(op.getLhs()), widen(op.getRhs())})
            .getResult(0);
    if (type != callType)
      result = arith::TruncFOp::create(b, loc, type, result);
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

namespace {
struct ConvertLoopToGPUPass
    : kiln::impl::ConvertLoopToGPUPassBase<ConvertLoopToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: block-size must be in [1, 1024], got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    if (elementsPerThread < 0 || elementsPerThread > 16) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: elements-per-thread must be in [0, 16], got "
          << static_cast<int64_t>(elementsPerThread);
      return signalPassFailure();
    }
    // Block reductions combine whole warps.
    if (rowThreads < kWarpSize || rowThreads > 1024 ||
        !llvm::isPowerOf2_64(rowThreads)) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: row-threads must be a power of two in [32, "
             "1024], got "
          << static_cast<int64_t>(rowThreads);
      return signalPassFailure();
    }
    if (rowLaneVectors < 1 || rowLaneVectors > kMaxUnrolledSteps) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: row-lane-vectors must be in [1, "
          << kMaxUnrolledSteps << "], got "
          << static_cast<int64_t>(rowLaneVectors);
      return signalPassFailure();
    }
    if (shortRowBlockSize < kWarpSize || shortRowBlockSize > 1024) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: short-row-block-size must be in [32, 1024], "
             "got "
          << static_cast<int64_t>(shortRowBlockSize);
      return signalPassFailure();
    }
    if (elementKernelVectorBytes != 0 &&
        (elementKernelVectorBytes < 4 || elementKernelVectorBytes > 64 ||
         !llvm::isPowerOf2_64(elementKernelVectorBytes))) {
      emitError(getOperation().getLoc())
          << "kiln-loop-to-gpu: element-kernel-vector-bytes must be 0 or a "
             "power of two in [4, 64], got "
          << static_cast<int64_t>(elementKernelVectorBytes);
      return signalPassFailure();
    }
    WalkResult unsupported = getOperation().walk([](loop::MatmulOp node) {
      return failed(checkGPUMatmul(node)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    LoopToGPUOptions options;
    options.blockSize = blockSize;
    options.elementsPerThread = elementsPerThread;
    options.transposeTiles = transposeTiles;
    options.rowThreads = rowThreads;
    options.rowCache = rowCache;
    options.rowLaneVectors = rowLaneVectors;
    options.shortRowBlockSize = shortRowBlockSize;
    options.elementKernelVectorBytes = elementKernelVectorBytes;
    GraphBufferizationTarget target =
        getGPUBufferizationTarget(&getContext(), options);
    if (failed(bufferizeGraphs(getOperation(), target)))
      return signalPassFailure();
    callLibdeviceForRemainders(getOperation());
  }
};
} // namespace
