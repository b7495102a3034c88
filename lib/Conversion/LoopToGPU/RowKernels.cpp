//===- RowKernels.cpp - Reductions and the nodes fused with them ----------===//
//
// Part of Kiln. A row kernel computes a fused kernel's nodes (or one
// reduction) row by row, a thread, part of a warp or a block per row:
// each node strides over the row with the row's threads, and reductions
// combine across them by warp shuffles and workgroup memory.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "kiln/Codegen/VectorizeNodeBody.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include <algorithm>

using namespace mlir;
using namespace mlir::kiln;

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
static Value emitWarpReduce(OpBuilder &b, Location loc,
                            loop::CombiningKind combiner, Value value,
                            Type dtype, int64_t lanes = kWarpSize) {
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
static Value emitBlockReduce(OpBuilder &b, Location loc,
                             loop::CombiningKind combiner, Value partial,
                             Type dtype, Value thread, int64_t threads,
                             Value scratch) {
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

namespace {
/// Emits one row kernel (emitRowKernel): the launch, the thread's place in
/// its row, and the state that the kernel's nodes share as they are emitted
/// one after another into the launch's body.
class RowKernelEmitter {
public:
  RowKernelEmitter(OpBuilder &b, Location loc, int64_t rows,
                   const DenseMap<Value, SmallVector<Value, 1>> &stores,
                   const IRMapping &mapping, const LoopToGPUOptions &options)
      : b(b), loc(loc), rows(rows), stores(stores), mapping(mapping),
        options(options), align(b, loc), kernelMapping(mapping) {}

  /// Emits the launch of `nodes` on the stream and their computation in it.
  void emit(ArrayRef<Operation *> nodes, StreamOrder &order,
            ValueRange extraArgs);

private:
  /// Emits a reduction: the thread's partial over its columns, combined
  /// across the row's threads; the total is a row value.
  void emitReduction(loop::ReduceOp reduce);

  /// Emits a node whose result has no columns: a row value, computed by
  /// every thread of the row.
  void emitRowValue(Operation *node);

  /// Emits a node with columns: the row's threads stride over them and store
  /// them to the node's buffers.
  void emitColumns(Operation *node);

  /// Has thread 0 store a row value (all threads hold it) to `result`'s
  /// buffers, if it has any.
  void storeRowValue(Value value, Value result, ValueRange ivs);

  /// The thread's steps over a row of `columns` (`staticColumns` if known),
  /// `width` columns each; `body` takes the step's first column and the
  /// values carried from the step before (`inits` first) and returns the
  /// values for the next. Few static steps are unrolled, so that their loads
  /// are in flight at once; their columns are computed once for the whole
  /// kernel, so that nodes reading the same elements share their loads
  /// (`loadCache`): the row stays in registers from one node to the next
  /// (with `options.rowCache`).
  /// `prefetch` emits a step's loads into the cache: all steps' loads come
  /// first, in flight together.
  SmallVector<Value>
  forColumns(Value columns, std::optional<int64_t> staticColumns, int64_t width,
             ValueRange inits,
             function_ref<SmallVector<Value>(Value, ValueRange)> body,
             function_ref<void(Value)> prefetch = nullptr);

  /// A vectorized body's loads at the step of `column` (forColumns's
  /// prefetch), after the indices `outerIvs` of the row. Only the row's own
  /// elements: what every row reads (LayerNorm's weight) comes from the
  /// cache, and held for all steps at once it would only take registers.
  void emitStepLoads(Block &body, ArrayRef<Value> outerIvs,
                     ArrayRef<Value> columnSizes, int64_t width, Value column);

  OpBuilder &b;
  Location loc;
  int64_t rows;
  const DenseMap<Value, SmallVector<Value, 1>> &stores;
  const IRMapping &mapping;
  const LoopToGPUOptions &options;

  /// The kernel reads and writes through aligned views of the buffers.
  AlignedViews align;
  IRMapping kernelMapping;
  /// The threads that share a row.
  int64_t threads = 0;
  /// One warp total per warp for each reduction.
  DenseMap<Operation *, Value> scratch;
  /// The thread's place in its row, whether it is the first, and the row's
  /// indices.
  Value thread;
  Value isFirstThread;
  Value zero;
  SmallVector<Value> rowIvs;
  /// forColumns's unrolled steps' first columns, by width and step.
  DenseMap<std::pair<int64_t, int64_t>, Value> stepColumns;
  VectorLoadCache loadCache;
  /// Whether forColumns is emitting unrolled steps.
  bool unrolled = false;
};
} // namespace

void RowKernelEmitter::emit(ArrayRef<Operation *> nodes, StreamOrder &order,
                            ValueRange extraArgs) {
  SmallVector<Value> rowSizes = getNodeSizes(b, loc, nodes.front(), mapping);
  rowSizes.resize(rows);
  Value numRows = getProduct(b, loc, rowSizes);
  RowMapping rowMapping = getRowMapping(nodes, rows, options);
  threads = rowMapping.threadsPerRow;
  Value rowsPerBlock =
      arith::ConstantIndexOp::create(b, loc, rowMapping.rowsPerBlock);
  Value blocks = arith::CeilDivUIOp::create(b, loc, numRows, rowsPerBlock);
  Value threadsValue =
      arith::ConstantIndexOp::create(b, loc, threads * rowMapping.rowsPerBlock);
  gpu::LaunchOp launch =
      createLaunch(b, loc, "rows", blocks, threadsValue, order, extraArgs);
  if (threads > kWarpSize) {
    for (Operation *node : nodes) {
      if (auto reduce = dyn_cast<loop::ReduceOp>(node))
        scratch[node] = addWorkgroupBuffer(
            launch, {threads / kWarpSize},
            getReductionStateType(reduce.getKind(),
                                  reduce.getYield().getValue().getType()),
            loc);
    }
  }

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  for (Operation *node : nodes)
    align.alignSources(node, mapping, kernelMapping);

  // The thread's place in its row, and the row.
  thread = launch.getThreadIds().x;
  Value row = launch.getBlockIds().x;
  zero = arith::ConstantIndexOp::create(b, loc, 0);
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
  isFirstThread =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  rowIvs = delinearize(b, loc, row, rowSizes);

  for (Operation *node : nodes) {
    // Without the row cache each node issues its own loads.
    if (!options.rowCache)
      loadCache = VectorLoadCache();
    if (auto reduce = dyn_cast<loop::ReduceOp>(node))
      emitReduction(reduce);
    else if (loop::isRowValue(node->getResult(0), rows))
      emitRowValue(node);
    else
      emitColumns(node);
  }
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

void RowKernelEmitter::storeRowValue(Value value, Value result,
                                     ValueRange ivs) {
  auto it = stores.find(result);
  if (it == stores.end())
    return;
  auto ifOp = scf::IfOp::create(b, loc, isFirstThread, false);
  OpBuilder::InsertionGuard thenGuard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  for (Value dest : it->second)
    memref::StoreOp::create(b, loc, value, align(dest), ivs);
}

SmallVector<Value> RowKernelEmitter::forColumns(
    Value columns, std::optional<int64_t> staticColumns, int64_t width,
    ValueRange inits, function_ref<SmallVector<Value>(Value, ValueRange)> body,
    function_ref<void(Value)> prefetch) {
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
}

void RowKernelEmitter::emitStepLoads(Block &body, ArrayRef<Value> outerIvs,
                                     ArrayRef<Value> columnSizes, int64_t width,
                                     Value column) {
  if (width == 1)
    return;
  SmallVector<Value> ivs(outerIvs);
  llvm::append_range(ivs, delinearize(b, loc, column, columnSizes));
  emitVectorBodyLoads(
      b, body, kernelMapping, ivs, width, kBufferAlignment, loadCache,
      [&](loop::LoadOp load) { return readsPerRow(load, rows); });
}

void RowKernelEmitter::emitReduction(loop::ReduceOp reduce) {
  Value result = reduce.getResult();
  auto type = cast<RankedTensorType>(result.getType());
  Block &body = reduce->getRegion(0).front();
  SmallVector<Value> rowValueIvs(rowIvs);
  rowValueIvs.append(type.getRank() - rows, zero);
  SmallVector<Value> columnSizes = getReductionSizes(b, loc, reduce, mapping);
  loop::CombiningKind combiner = reduce.getKind();
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
  Type partialType =
      width > 1 ? Type(VectorType::get({width}, accumulatorType)) : stateType;
  Value init = getCombinerIdentity(b, loc, combiner, partialType, dtype);
  SmallVector<Value> partials = forColumns(
      getProduct(b, loc, columnSizes),
      getStaticColumns(reduce.getOperation(), rows), width, ValueRange{init},
      [&](Value column, ValueRange partials) -> SmallVector<Value> {
        SmallVector<Value> ivs(rowValueIvs);
        llvm::append_range(ivs, delinearize(b, loc, column, columnSizes));
        Value value =
            width > 1 ? *emitVectorBodyElements(b, body, kernelMapping, ivs,
                                                width, kBufferAlignment,
                                                unrolled ? &loadCache : nullptr)
                      : emitBodyValue(b, body, kernelMapping, ivs);
        return {emitCombine(b, loc, combiner, partials.front(), value, dtype)};
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
                      scratch.lookup(reduce.getOperation())));
  Type scalarType = loop::getScalarType(dtype);
  if (total.getType() != scalarType)
    total = arith::TruncFOp::create(b, loc, scalarType, total);
  storeRowValue(total, result, rowValueIvs);
  kernelMapping.map(result, total);
}

void RowKernelEmitter::emitRowValue(Operation *node) {
  Value result = node->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  Block &body = node->getRegion(0).front();
  SmallVector<Value> rowValueIvs(rowIvs);
  rowValueIvs.append(type.getRank() - rows, zero);
  Value value = emitBodyValue(b, body, kernelMapping, rowValueIvs);
  storeRowValue(value, result, rowValueIvs);
  kernelMapping.map(result, value);
}

void RowKernelEmitter::emitColumns(Operation *node) {
  Value result = node->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  Block &body = node->getRegion(0).front();
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
            memref::StoreOp::create(b, loc,
                                    emitBodyValue(b, body, kernelMapping, ivs),
                                    alignedDest, ivs);
          }
          return {};
        },
        [&](Value column) {
          emitStepLoads(body, rowIvs, columnSizes, width, column);
        });
  }
}

void mlir::kiln::emitRowKernel(
    OpBuilder &b, Location loc, ArrayRef<Operation *> nodes, int64_t rows,
    const DenseMap<Value, SmallVector<Value, 1>> &stores, IRMapping &mapping,
    const LoopToGPUOptions &options, StreamOrder &order, ValueRange extraArgs) {
  RowKernelEmitter(b, loc, rows, stores, mapping, options)
      .emit(nodes, order, extraArgs);
}
