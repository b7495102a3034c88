//===- ColumnKernels.cpp - Reductions down columns -----------------------===//
//
// Part of Kiln. A column kernel computes reductions whose consecutive
// results read consecutive elements (a sum over a matrix's rows: a bias
// gradient, a normalization's weight gradient; the partials that
// kiln-loop-split-reductions makes of them): a warp's lanes take 32
// consecutive results, so that each step of theirs reads one coalesced
// segment of a row, and the block's warps split the reduction between them;
// their partials combine in workgroup memory. A row kernel, a block per
// result, would read such a reduction's elements a row apart.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/SplitReductions.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

/// Warps per block of a column kernel: each takes a share of the reduction.
static constexpr int64_t kColumnWarps = 8;

/// Reductions shorter than this run in row kernels: a warp per result reads
/// them at once, where a column kernel's warps would each take a few steps.
static constexpr int64_t kMinColumnReduction = 64;

bool mlir::kiln::isColumnKernel(ArrayRef<Operation *> nodes, int64_t rows,
                                const LoopToGPUOptions &options) {
  if (!options.columnKernels || rows == 0)
    return false;
  bool reduces = false;
  for (Operation *node : nodes) {
    if (cast<RankedTensorType>(node->getResult(0).getType()).getRank() != rows)
      return false;
    if (isa<loop::PointwiseOp>(node))
      continue;
    auto reduce = dyn_cast<loop::ReduceOp>(node);
    if (!reduce || !loop::isColumnReduction(reduce))
      return false;
    ArrayRef<int64_t> shape = reduce.getReductionShape();
    if (!ShapedType::isDynamicShape(shape) &&
        ShapedType::getNumElements(shape) < kMinColumnReduction)
      return false;
    reduces = true;
  }
  return reduces;
}

namespace {
/// Emits one column kernel (emitColumnKernel): the launch, the thread's
/// result and share of the reduction, and the nodes one after another.
class ColumnKernelEmitter {
public:
  ColumnKernelEmitter(OpBuilder &b, Location loc,
                      const DenseMap<Value, SmallVector<Value, 1>> &stores,
                      const IRMapping &mapping)
      : b(b), loc(loc), stores(stores), mapping(mapping), align(b, loc),
        kernelMapping(mapping) {}

  void emit(ArrayRef<Operation *> nodes, int64_t rows, StreamOrder &order,
            ValueRange extraArgs);

private:
  /// The warp's share of `reduce` for the lane's result, combined across
  /// the block's warps through `scratch`: every thread gets the total.
  Value emitReduction(loop::ReduceOp reduce, Value scratch);

  /// Has the first warp store `value`, the result's element at the
  /// thread's result, to `result`'s buffers, if it has any and the result
  /// is in range.
  void store(Value value, Value result);

  OpBuilder &b;
  Location loc;
  const DenseMap<Value, SmallVector<Value, 1>> &stores;
  const IRMapping &mapping;
  AlignedViews align;
  IRMapping kernelMapping;
  /// The thread's lane and warp, its result's indices (clamped into range),
  /// and whether it stores.
  Value lane, warp;
  SmallVector<Value> resultIvs;
  Value isStoringThread;
};
} // namespace

void ColumnKernelEmitter::emit(ArrayRef<Operation *> nodes, int64_t rows,
                               StreamOrder &order, ValueRange extraArgs) {
  SmallVector<Value> sizes = getNodeSizes(b, loc, nodes.front(), mapping);
  sizes.resize(rows);
  Value results = getProduct(b, loc, sizes);
  Value lanes = arith::ConstantIndexOp::create(b, loc, kWarpSize);
  Value blocks = arith::CeilDivUIOp::create(b, loc, results, lanes);
  Value threads =
      arith::ConstantIndexOp::create(b, loc, kWarpSize * kColumnWarps);
  gpu::LaunchOp launch =
      createLaunch(b, loc, "columns", blocks, threads, order, extraArgs);
  DenseMap<Operation *, Value> scratch;
  for (Operation *node : nodes)
    if (auto reduce = dyn_cast<loop::ReduceOp>(node))
      scratch[node] =
          addWorkgroupBuffer(launch, {kColumnWarps, kWarpSize},
                             reduce.getYield().getValue().getType(), loc);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  for (Operation *node : nodes)
    align.alignSources(node, mapping, kernelMapping);
  Value thread = launch.getThreadIds().x;
  lane = arith::RemUIOp::create(b, loc, thread, lanes);
  warp = arith::DivUIOp::create(b, loc, thread, lanes);
  Value result = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, lanes),
      lane);
  // Lanes past the last result compute the last one again, so that every
  // thread reaches the barriers, and store nothing.
  Value last = arith::SubIOp::create(b, loc, results,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, result, results);
  Value firstWarp =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp,
                            arith::ConstantIndexOp::create(b, loc, 0));
  isStoringThread = arith::AndIOp::create(b, loc, inRange, firstWarp);
  resultIvs =
      delinearize(b, loc, arith::MinUIOp::create(b, loc, result, last), sizes);

  for (Operation *node : nodes) {
    Value value;
    if (auto reduce = dyn_cast<loop::ReduceOp>(node))
      value = emitReduction(reduce, scratch.lookup(node));
    else
      value = emitBodyValue(b, node->getRegion(0).front(), kernelMapping,
                            resultIvs);
    store(value, node->getResult(0));
    kernelMapping.map(node->getResult(0), value);
  }
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

Value ColumnKernelEmitter::emitReduction(loop::ReduceOp reduce, Value scratch) {
  Block &body = reduce.getBody().front();
  loop::CombiningKind combiner = reduce.getKind();
  Type dtype = reduce.getResultType().getElementType();
  Type accumulator = reduce.getYield().getValue().getType();
  SmallVector<Value> reductionSizes =
      getReductionSizes(b, loc, reduce, mapping);
  Value extent = getProduct(b, loc, reductionSizes);
  Value step = arith::ConstantIndexOp::create(b, loc, kColumnWarps);
  // The warp's positions in the flattened reduction: warp, warp + 8, ...
  auto combineAt = [&](Value position, Value partial) {
    SmallVector<Value> ivs(resultIvs);
    llvm::append_range(ivs, delinearize(b, loc, position, reductionSizes));
    return emitCombine(b, loc, combiner, partial,
                       emitBodyValue(b, body, kernelMapping, ivs), dtype);
  };
  Value partial = getCombinerIdentity(b, loc, combiner, accumulator, dtype);
  ArrayRef<int64_t> shape = reduce.getReductionShape();
  int64_t staticExtent = ShapedType::isDynamicShape(shape)
                             ? ShapedType::kDynamic
                             : ShapedType::getNumElements(shape);
  if (!ShapedType::isDynamic(staticExtent) &&
      staticExtent % kColumnWarps == 0 &&
      staticExtent / kColumnWarps <= kMaxUnrolledSteps) {
    // Few static steps, unrolled: their loads are in flight at once.
    for (int64_t k = 0; k < staticExtent / kColumnWarps; ++k) {
      Value position = arith::AddIOp::create(
          b, loc, warp,
          arith::ConstantIndexOp::create(b, loc, k * kColumnWarps));
      partial = combineAt(position, partial);
    }
  } else {
    auto loop = scf::ForOp::create(
        b, loc, warp, extent, step, ValueRange{partial},
        [&](OpBuilder &nested, Location, Value position, ValueRange carried) {
          OpBuilder::InsertionGuard loopGuard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, combineAt(position, carried.front()));
        });
    partial = loop.getResult(0);
  }
  // Every warp's partial for the lane's result, then every thread combines
  // the column of them in order: all threads hold the total.
  memref::StoreOp::create(b, loc, partial, scratch, ValueRange{warp, lane});
  gpu::BarrierOp::create(b, loc);
  Value total;
  for (int64_t k = 0; k < kColumnWarps; ++k) {
    Value other = memref::LoadOp::create(
        b, loc, scratch,
        ValueRange{arith::ConstantIndexOp::create(b, loc, k), lane});
    total = total ? emitMerge(b, loc, combiner, total, other, dtype) : other;
  }
  total = emitReductionResult(b, loc, combiner, total);
  Type scalarType = loop::getScalarType(dtype);
  if (total.getType() != scalarType)
    total = arith::TruncFOp::create(b, loc, scalarType, total);
  return total;
}

void ColumnKernelEmitter::store(Value value, Value result) {
  auto it = stores.find(result);
  if (it == stores.end())
    return;
  auto ifOp =
      scf::IfOp::create(b, loc, isStoringThread, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  for (Value dest : it->second)
    memref::StoreOp::create(b, loc, value, align(dest), resultIvs);
}

void mlir::kiln::emitColumnKernel(
    OpBuilder &b, Location loc, ArrayRef<Operation *> nodes, int64_t rows,
    const DenseMap<Value, SmallVector<Value, 1>> &stores, IRMapping &mapping,
    StreamOrder &order, ValueRange extraArgs) {
  ColumnKernelEmitter(b, loc, stores, mapping)
      .emit(nodes, rows, order, extraArgs);
}
