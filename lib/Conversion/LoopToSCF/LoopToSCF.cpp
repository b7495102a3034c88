//===- LoopToSCF.cpp - Bufferizing graphs into SCF loops ------------------===//
//
// Part of Kiln. The CPU's way to bufferize a graph: each loop node becomes an
// scf.parallel (or scf.for) nest, temporaries are memref.alloc'd.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"
#include "kiln/Conversion/Passes.h"

#include "MatmulToSCF.h"

#include "kiln/Codegen/ElementKernels.h"
#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Codegen/VectorizeNodeBody.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include <algorithm>

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOSCFPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// Elements of `node` per vector: `vectorBytes` worth of its result's
/// elements, or 1 where its body cannot be vectorized.
static int64_t getVectorWidth(loop::PointwiseOp node, int64_t vectorBytes) {
  if (vectorBytes <= 0 || !canVectorizeNodeBody(node))
    return 1;
  int64_t elementBytes =
      loop::getElementBitWidth(node.getResultType().getElementType()) / 8;
  return std::max<int64_t>(vectorBytes / elementBytes, 1);
}

/// Emits elements [from, to) of the row at `outer` one at a time.
static void emitScalarColumns(OpBuilder &b, Location loc,
                              loop::PointwiseOp node, Value dest,
                              const IRMapping &mapping, ValueRange outer,
                              Value from, Value to) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(
      b, loc, from, to, one, ValueRange{},
      [&](OpBuilder &nested, Location, Value column, ValueRange) {
        SmallVector<Value> ivs(outer);
        ivs.push_back(column);
        emitNodeBody(nested, node, dest, mapping, ivs);
        scf::YieldOp::create(nested, loc);
      });
}

/// Emits `width` elements of the row at `outer` from `column` on, as vectors.
static void emitVectorColumns(OpBuilder &b, Location loc,
                              loop::PointwiseOp node, Value dest,
                              const IRMapping &mapping, ValueRange outer,
                              Value column, int64_t width) {
  SmallVector<Value> ivs(outer);
  ivs.push_back(column);
  FailureOr<Value> elements =
      emitVectorNodeElements(b, node, mapping, ivs, width, kCPUBufferAlignment);
  assert(succeeded(elements) && "checked by canVectorizeNodeBody");
  emitVectorStore(b, loc, *elements, dest, ivs, kCPUBufferAlignment);
}

/// Where the whole vectors of `width` elements of a row of `columns` end.
static Value getVectorEnd(OpBuilder &b, Location loc, Value columns,
                          int64_t width) {
  Value widthValue = arith::ConstantIndexOp::create(b, loc, width);
  return arith::SubIOp::create(
      b, loc, columns, arith::RemUIOp::create(b, loc, columns, widthValue));
}

/// Emits the steps over a row of `columns`: `width` elements at a time up to
/// `vectorEnd` (with a width above 1), then one at a time; `step` emits the
/// `count` elements from `column` on.
static void emitColumnSteps(
    OpBuilder &b, Location loc, Value columns, Value vectorEnd, int64_t width,
    function_ref<void(OpBuilder &, Value column, int64_t count)> step) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto loop = [&](Value from, Value to, int64_t count) {
    scf::ForOp::create(
        b, loc, from, to, arith::ConstantIndexOp::create(b, loc, count),
        ValueRange{},
        [&](OpBuilder &inner, Location, Value column, ValueRange) {
          step(inner, column, count);
          scf::YieldOp::create(inner, loc);
        });
  };
  if (width > 1)
    loop(zero, vectorEnd, width);
  loop(width > 1 ? vectorEnd : zero, columns, 1);
}

/// Emits the innermost dimension of `node` at `outer` (its other indices):
/// `width` elements at a time up to `vectorEnd`, then one at a time.
static void emitRowColumns(OpBuilder &b, Location loc, loop::PointwiseOp node,
                           Value dest, const IRMapping &mapping,
                           ValueRange outer, Value columns, Value vectorEnd,
                           int64_t width) {
  emitColumnSteps(b, loc, columns, vectorEnd, width,
                  [&](OpBuilder &inner, Value column, int64_t count) {
                    if (count > 1) {
                      emitVectorColumns(inner, loc, node, dest, mapping, outer,
                                        column, count);
                      return;
                    }
                    SmallVector<Value> ivs(outer);
                    ivs.push_back(column);
                    emitNodeBody(inner, node, dest, mapping, ivs);
                  });
}

/// Emits the loop nest of `node` storing into `dest`. With vectors, the
/// innermost dimension runs `width` elements at a time while whole vectors
/// fit, then one at a time; the outer dimensions (or, for one dimension, the
/// vector steps) are the parallel ones.
static void emitSCFLoops(OpBuilder &b, loop::PointwiseOp node, Value dest,
                         IRMapping &mapping, const LoopToSCFOptions &options) {
  Location loc = node.getLoc();
  SmallVector<Value> upperBounds = getNodeSizes(b, loc, node, mapping);
  if (upperBounds.empty()) {
    emitNodeBody(b, node, dest, mapping, {});
    return;
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t width = getVectorWidth(node, options.vectorBytes);
  if (width == 1) {
    SmallVector<Value> lowerBounds(upperBounds.size(), zero);
    SmallVector<Value> steps(upperBounds.size(), one);
    auto body = [&](OpBuilder &nested, Location, ValueRange ivs) {
      emitNodeBody(nested, node, dest, mapping, ivs);
    };
    if (options.parallel)
      scf::ParallelOp::create(b, loc, lowerBounds, upperBounds, steps, body);
    else
      scf::buildLoopNest(b, loc, lowerBounds, upperBounds, steps, body);
    return;
  }

  Value columns = upperBounds.back();
  Value widthValue = arith::ConstantIndexOp::create(b, loc, width);
  Value vectorEnd = getVectorEnd(b, loc, columns, width);
  ArrayRef<Value> outerBounds = ArrayRef<Value>(upperBounds).drop_back();
  if (outerBounds.empty()) {
    // One dimension: vector steps in parallel, then the tail.
    auto vectorStep = [&](OpBuilder &nested, Location, ValueRange ivs) {
      emitVectorColumns(nested, loc, node, dest, mapping, {}, ivs.front(),
                        width);
    };
    if (options.parallel)
      scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{vectorEnd},
                              ValueRange{widthValue}, vectorStep);
    else
      scf::buildLoopNest(b, loc, ValueRange{zero}, ValueRange{vectorEnd},
                         ValueRange{widthValue}, vectorStep);
    emitScalarColumns(b, loc, node, dest, mapping, {}, vectorEnd, columns);
    return;
  }
  auto row = [&](OpBuilder &nested, Location, ValueRange outer) {
    emitRowColumns(nested, loc, node, dest, mapping, outer, columns, vectorEnd,
                   width);
  };
  SmallVector<Value> lowerBounds(outerBounds.size(), zero);
  SmallVector<Value> steps(outerBounds.size(), one);
  if (options.parallel)
    scf::ParallelOp::create(b, loc, lowerBounds, outerBounds, steps, row);
  else
    scf::buildLoopNest(b, loc, lowerBounds, outerBounds, steps, row);
}

/// Float sums accumulate the innermost reduction dimension in blocks of
/// this many elements, each from zero, then add the block's sum: rounding
/// errors grow with the block and the number of blocks, not with the whole
/// reduction (a two-level cascade). A multiple of every vector width.
constexpr int64_t kSumBlock = 2048;

/// Vector accumulators that a reduction's vector loop interleaves: each
/// combine waits for the one kAccumulators before it, not the last.
constexpr int64_t kAccumulators = 4;

/// emitCombine as x86 runs it best: a float max or min is a compare and a
/// select (one vmaxps or vminps) that keeps the accumulator unless the
/// value is past it, then the value where that is NaN; so NaN propagates
/// from either operand, as in PyTorch's CPU kernels (which of two equal
/// zeros results may differ from IEEE maximum's, as PyTorch's may). IEEE
/// maximum and minimum take a dozen instructions each on x86.
static Value emitCPUCombine(OpBuilder &b, Location loc,
                            loop::CombiningKind kind, Value accumulator,
                            Value value, Type dtype) {
  bool max = kind == loop::CombiningKind::max;
  if ((!max && kind != loop::CombiningKind::min) ||
      !isa<FloatType>(getElementTypeOrSelf(value.getType())))
    return emitCombine(b, loc, kind, accumulator, value, dtype);
  Value past = arith::CmpFOp::create(
      b, loc, max ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
      value, accumulator);
  Value nan =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  Value kept = arith::SelectOp::create(b, loc, past, value, accumulator);
  return arith::SelectOp::create(b, loc, nan, value, kept);
}

/// Emits the partial state of reduction `node` at `outer` over the part
/// [`lo`, `hi`) of its outermost reduction dimension (all of it when null):
/// a serial loop nest over that part of the reduction space. With
/// `vectorBytes`, the innermost reduction dimension accumulates in vectors
/// of that many bytes of the accumulator while they fit, then one element
/// at a time; the lanes combine at the end. Float sums go in blocks
/// (kSumBlock). With `cache` (a 1-d buffer of the innermost reduction
/// dimension's size), each element's value is also stored there at its
/// column, before it combines.
static Value emitReducePartial(OpBuilder &b, loop::ReduceOp node,
                               const IRMapping &mapping, ValueRange outer,
                               int64_t vectorBytes, Value lo = nullptr,
                               Value hi = nullptr, Value cache = nullptr) {
  Location loc = node.getLoc();
  Block &body = node.getBody().front();
  SmallVector<Value> reductionSizes = getReductionSizes(b, loc, node, mapping);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> starts(reductionSizes.size(), zero);
  if (lo) {
    starts.front() = lo;
    reductionSizes.front() = hi;
  }
  Type dtype = node.getResultType().getElementType();
  loop::CombiningKind combiner = node.getKind();
  Type accumulatorType = node.getYield().getValue().getType();
  // A reduction state other than the result ("welford") accumulates one
  // element at a time.
  Type stateType = getReductionStateType(combiner, accumulatorType);
  int64_t width = 1;
  if (vectorBytes > 0 && canVectorizeBody(body) && stateType == accumulatorType)
    width = std::max<int64_t>(
        vectorBytes * 8 / accumulatorType.getIntOrFloatBitWidth(), 1);
  bool blocked =
      combiner == loop::CombiningKind::sum && isa<FloatType>(accumulatorType);

  // The outer reduction dimensions serially; the innermost one in vectors
  // then a scalar tail, each with its own accumulator.
  ArrayRef<Value> outerSizes = ArrayRef<Value>(reductionSizes).drop_back();
  ArrayRef<Value> outerStarts = ArrayRef<Value>(starts).drop_back();
  Value columnStart = starts.back();
  Value columns = reductionSizes.back();
  auto vectorType = VectorType::get({width}, accumulatorType);
  auto identities = [&](OpBuilder &b) {
    SmallVector<Value> inits = {
        getCombinerIdentity(b, loc, combiner, stateType, dtype)};
    if (width > 1)
      inits.push_back(getCombinerIdentity(b, loc, combiner, vectorType, dtype));
    return inits;
  };
  // Accumulates columns [from, to) at `ivs` (the outer indices) into
  // `accumulators` (scalar, then vector).
  auto emitColumns = [&](OpBuilder &b, ValueRange ivs, ValueRange accumulators,
                         Value from, Value to) -> scf::ValueVector {
    auto indicesAt = [&](Value column) {
      SmallVector<Value> indices(outer);
      llvm::append_range(indices, ivs);
      indices.push_back(column);
      return indices;
    };
    scf::ValueVector results = {accumulators.front()};
    Value vectorEnd = from;
    if (width > 1) {
      Value count = arith::SubIOp::create(b, loc, to, from);
      vectorEnd = arith::AddIOp::create(b, loc, from,
                                        getVectorEnd(b, loc, count, width));
      auto combineVectorAt = [&](OpBuilder &inner, Value column,
                                 Value accumulator) {
        FailureOr<Value> values =
            emitVectorBodyElements(inner, body, mapping, indicesAt(column),
                                   width, kCPUBufferAlignment);
        assert(succeeded(values) && "checked by canVectorizeBody");
        if (cache)
          emitVectorStore(inner, loc, *values, cache, column,
                          kCPUBufferAlignment);
        return emitCPUCombine(inner, loc, combiner, accumulator, *values,
                              dtype);
      };
      // kAccumulators vectors at a time, each into its own accumulator, so
      // that consecutive combines do not wait for each other; they combine
      // after, and the last vectors go one at a time.
      Value interleavedEnd = arith::AddIOp::create(
          b, loc, from, getVectorEnd(b, loc, count, kAccumulators * width));
      SmallVector<Value> inits = {accumulators.back()};
      for (int64_t i = 1; i < kAccumulators; ++i)
        inits.push_back(getCombinerIdentity(
            b, loc, combiner, accumulators.back().getType(), dtype));
      auto interleaved = scf::ForOp::create(
          b, loc, from, interleavedEnd,
          arith::ConstantIndexOp::create(b, loc, kAccumulators * width), inits,
          [&](OpBuilder &inner, Location, Value column, ValueRange acc) {
            SmallVector<Value> updated;
            for (auto [i, accumulator] : llvm::enumerate(acc))
              updated.push_back(combineVectorAt(
                  inner,
                  arith::AddIOp::create(
                      inner, loc, column,
                      arith::ConstantIndexOp::create(inner, loc, i * width)),
                  accumulator));
            scf::YieldOp::create(inner, loc, updated);
          });
      Value combined = interleaved.getResult(0);
      for (Value partial : interleaved.getResults().drop_front())
        combined = emitCPUCombine(b, loc, combiner, combined, partial, dtype);
      auto vectorLoop = scf::ForOp::create(
          b, loc, interleavedEnd, vectorEnd,
          arith::ConstantIndexOp::create(b, loc, width), ValueRange{combined},
          [&](OpBuilder &inner, Location, Value column, ValueRange acc) {
            scf::YieldOp::create(inner, loc,
                                 combineVectorAt(inner, column, acc.front()));
          });
      results.push_back(vectorLoop.getResult(0));
    }
    auto scalarLoop = scf::ForOp::create(
        b, loc, vectorEnd, to, one, ValueRange{accumulators.front()},
        [&](OpBuilder &inner, Location, Value column, ValueRange acc) {
          Value value = emitBodyValue(inner, body, mapping, indicesAt(column));
          if (cache)
            memref::StoreOp::create(inner, loc, value, cache, column);
          scf::YieldOp::create(
              inner, loc,
              emitCPUCombine(inner, loc, combiner, acc.front(), value, dtype));
        });
    results.front() = scalarLoop.getResult(0);
    return results;
  };
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, outerStarts, outerSizes,
      SmallVector<Value>(outerSizes.size(), one), identities(b),
      [&](OpBuilder &nested, Location, ValueRange outerReduction,
          ValueRange accumulators) -> scf::ValueVector {
        if (!blocked)
          return emitColumns(nested, outerReduction, accumulators, columnStart,
                             columns);
        Value block = arith::ConstantIndexOp::create(nested, loc, kSumBlock);
        auto blocks = scf::ForOp::create(
            nested, loc, columnStart, columns, block, accumulators,
            [&](OpBuilder &inner, Location, Value from, ValueRange acc) {
              Value to = arith::MinUIOp::create(
                  inner, loc, arith::AddIOp::create(inner, loc, from, block),
                  columns);
              scf::ValueVector sums = emitColumns(inner, outerReduction,
                                                  identities(inner), from, to);
              SmallVector<Value> updated;
              for (auto [running, sum] : llvm::zip_equal(acc, sums))
                updated.push_back(
                    emitCPUCombine(inner, loc, combiner, running, sum, dtype));
              scf::YieldOp::create(inner, loc, updated);
            });
        return llvm::to_vector_of<Value>(blocks.getResults());
      });
  Value total = nest.results.front();
  if (width > 1) {
    // The lanes combine as a tree, halves into halves: log2(width) vector
    // combines, not a chain of width scalar ones that each waits for the
    // last (a row of 256 f32 spent a third of its softmax there). What is
    // left past the last even split combines lane by lane.
    Value lanes = nest.results.back();
    int64_t count = width;
    for (; count % 2 == 0; count /= 2) {
      int64_t half = count / 2;
      Value low = vector::ExtractStridedSliceOp::create(
          b, loc, lanes, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{half},
          ArrayRef<int64_t>{1});
      Value high = vector::ExtractStridedSliceOp::create(
          b, loc, lanes, ArrayRef<int64_t>{half}, ArrayRef<int64_t>{half},
          ArrayRef<int64_t>{1});
      lanes = emitCPUCombine(b, loc, combiner, low, high, dtype);
    }
    for (int64_t lane = 0; lane < count; ++lane)
      total =
          emitCPUCombine(b, loc, combiner, total,
                         vector::ExtractOp::create(b, loc, lanes, lane), dtype);
  }
  return total;
}

/// A reduction's element from its final state: the combiner's result,
/// rounded once to the result's dtype.
static Value emitReduceResult(OpBuilder &b, loop::ReduceOp node, Value state) {
  Location loc = node.getLoc();
  Value total = emitReductionResult(b, loc, node.getKind(), state);
  Type scalarType = loop::getScalarType(node.getResultType().getElementType());
  if (total.getType() != scalarType)
    total = arith::TruncFOp::create(b, loc, scalarType, total);
  return total;
}

/// Emits a loop nest over `sizes` (from 0, step 1), parallel with
/// `options.parallel`, whose body `bodyFn` builds.
static void
emitLoopNest(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
             const LoopToSCFOptions &options,
             function_ref<void(OpBuilder &, Location, ValueRange)> bodyFn) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lowerBounds(sizes.size(), zero);
  SmallVector<Value> steps(sizes.size(), one);
  if (options.parallel)
    scf::ParallelOp::create(b, loc, lowerBounds, sizes, steps, bodyFn);
  else
    scf::buildLoopNest(b, loc, lowerBounds, sizes, steps, bodyFn);
}

/// Reductions split their outermost reduction dimension across threads
/// when they have fewer result elements than kSplitBelowResults and at
/// least kMinSplitElements per element: each (element, chunk) accumulates a
/// partial state, and the chunks' states merge in a second loop.
constexpr int64_t kSplitBelowResults = 16;
constexpr int64_t kMinSplitElements = 1 << 16;
constexpr int64_t kMaxChunks = 64;
/// A chunk of a sole (innermost) reduction dimension: a multiple of any
/// vector width, so that every chunk's vectors stay aligned.
constexpr int64_t kMinColumnChunk = 4096;

/// How a reduction's outermost reduction dimension splits across threads.
struct ReductionSplit {
  int64_t chunks, chunk;
};

/// How `node` splits, or nullopt where it does not.
static std::optional<ReductionSplit>
getReductionSplit(loop::ReduceOp node, const LoopToSCFOptions &options) {
  RankedTensorType type = node.getResultType();
  ArrayRef<int64_t> reduction = node.getReductionShape();
  if (!options.parallel || !type.hasStaticShape() ||
      type.getNumElements() >= kSplitBelowResults ||
      llvm::any_of(reduction, ShapedType::isDynamic))
    return std::nullopt;
  int64_t elements = 1;
  for (int64_t size : reduction)
    elements *= size;
  int64_t outermost = reduction.front();
  if (elements < kMinSplitElements || outermost < 2)
    return std::nullopt;
  int64_t chunk = llvm::divideCeil(outermost, kMaxChunks);
  if (reduction.size() == 1)
    chunk = static_cast<int64_t>(llvm::alignTo(chunk, kMinColumnChunk));
  int64_t chunks = llvm::divideCeil(outermost, chunk);
  if (chunks < 2)
    return std::nullopt;
  return ReductionSplit{chunks, chunk};
}

/// Emits the chunks of every element of a split reduction `node` in
/// parallel; returns the buffer of their partial states, [elements,
/// chunks], for emitMergedChunks (and a dealloc).
static Value emitReduceChunks(OpBuilder &b, loop::ReduceOp node,
                              const IRMapping &mapping,
                              const LoopToSCFOptions &options,
                              const ReductionSplit &split) {
  Location loc = node.getLoc();
  RankedTensorType type = node.getResultType();
  Type stateType = getReductionStateType(node.getKind(),
                                         node.getYield().getValue().getType());
  int64_t results = type.getNumElements();
  Value partials = memref::AllocOp::create(
      b, loc, MemRefType::get({results, split.chunks}, stateType));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value chunkSize = arith::ConstantIndexOp::create(b, loc, split.chunk);
  Value outermost =
      arith::ConstantIndexOp::create(b, loc, node.getReductionShape().front());
  SmallVector<Value> resultSizes = getNodeSizes(b, loc, node, mapping);
  scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero},
      ValueRange{arith::ConstantIndexOp::create(b, loc, results),
                 arith::ConstantIndexOp::create(b, loc, split.chunks)},
      ValueRange{one, one}, [&](OpBuilder &nested, Location, ValueRange ivs) {
        Value lo = arith::MulIOp::create(nested, loc, ivs[1], chunkSize);
        Value hi = arith::MinUIOp::create(
            nested, loc, arith::AddIOp::create(nested, loc, lo, chunkSize),
            outermost);
        Value state =
            emitReducePartial(nested, node, mapping,
                              delinearize(nested, loc, ivs[0], resultSizes),
                              options.vectorBytes, lo, hi);
        memref::StoreOp::create(nested, loc, state, partials, ivs);
      });
  return partials;
}

/// The value of element `result` of a split reduction `node`: its chunks'
/// states merged in order.
static Value emitMergedChunks(OpBuilder &b, loop::ReduceOp node, Value partials,
                              Value result, const ReductionSplit &split) {
  Location loc = node.getLoc();
  loop::CombiningKind combiner = node.getKind();
  Type dtype = node.getResultType().getElementType();
  Type stateType = cast<MemRefType>(partials.getType()).getElementType();
  auto merge = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, split.chunks),
      arith::ConstantIndexOp::create(b, loc, 1),
      ValueRange{getCombinerIdentity(b, loc, combiner, stateType, dtype)},
      [&](OpBuilder &inner, Location, Value chunk, ValueRange acc) {
        Value partial = memref::LoadOp::create(inner, loc, partials,
                                               ValueRange{result, chunk});
        scf::YieldOp::create(
            inner, loc,
            emitMerge(inner, loc, combiner, acc.front(), partial, dtype));
      });
  return emitReduceResult(b, node, merge.getResult(0));
}

/// Emits the loops of `nodes` over their `rowSizes` (all but the innermost
/// in parallel): when they compute element by element in vectors
/// (getElementKernelWidth), whole vectors of the innermost row dimension
/// that store into `stores`, then the rest one element at a time by
/// `scalarRow`; else only `scalarRow`.
static void emitElementLoops(
    OpBuilder &b, Location loc, ArrayRef<Operation *> nodes,
    ArrayRef<Value> rowSizes,
    const DenseMap<Value, SmallVector<Value, 1>> &stores, IRMapping &mapping,
    const LoopToSCFOptions &options,
    function_ref<void(OpBuilder &, Location, ValueRange)> scalarRow) {
  auto rows = static_cast<int64_t>(rowSizes.size());
  int64_t width = getElementKernelWidth(nodes, rows, options.vectorBytes);
  if (width == 1) {
    emitLoopNest(b, loc, rowSizes, options, scalarRow);
    return;
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value columns = rowSizes.back();
  Value vectorEnd = getVectorEnd(b, loc, columns, width);
  SmallVector<Value> lowerBounds(rows, zero), upperBounds(rowSizes),
      steps(rows, one);
  auto vectorStep = [&](OpBuilder &nested, Location, ValueRange ivs) {
    emitElementKernelStep(nested, nodes, rows, mapping, ivs, width,
                          kCPUBufferAlignment,
                          [&](Value result, Value elements) {
                            for (Value dest : stores.lookup(result))
                              emitVectorStore(nested, loc, elements, dest, ivs,
                                              kCPUBufferAlignment);
                          });
  };
  auto nest = [&](function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    if (options.parallel)
      scf::ParallelOp::create(b, loc, lowerBounds, upperBounds, steps, body);
    else
      scf::buildLoopNest(b, loc, lowerBounds, upperBounds, steps, body);
  };
  upperBounds.back() = vectorEnd;
  steps.back() = arith::ConstantIndexOp::create(b, loc, width);
  nest(vectorStep);
  lowerBounds.back() = vectorEnd;
  upperBounds.back() = columns;
  steps.back() = one;
  nest(scalarRow);
}

/// Emits a reduction node: its result dimensions in parallel (or serially),
/// and for each element a serial accumulation; or, for few long ones
/// (getReductionSplit), the chunks of every element in parallel, then their
/// merge.
static void emitReduceLoops(OpBuilder &b, loop::ReduceOp node, Value dest,
                            IRMapping &mapping,
                            const LoopToSCFOptions &options) {
  Location loc = node.getLoc();
  SmallVector<Value> resultSizes = getNodeSizes(b, loc, node, mapping);
  if (std::optional<ReductionSplit> split = getReductionSplit(node, options)) {
    Value partials = emitReduceChunks(b, node, mapping, options, *split);
    RankedTensorType type = node.getResultType();
    scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, type.getNumElements()),
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{},
        [&](OpBuilder &nested, Location, Value result, ValueRange) {
          memref::StoreOp::create(
              nested, loc,
              emitMergedChunks(nested, node, partials, result, *split), dest,
              delinearize(nested, loc, result, resultSizes));
          scf::YieldOp::create(nested, loc);
        });
    memref::DeallocOp::create(b, loc, partials);
    return;
  }
  auto element = [&](OpBuilder &nested, Location, ValueRange outer) {
    Value total = emitReduceResult(
        nested, node,
        emitReducePartial(nested, node, mapping, outer, options.vectorBytes));
    memref::StoreOp::create(nested, loc, total, dest, outer);
  };
  if (resultSizes.empty()) {
    element(b, loc, {});
    return;
  }
  // A short reduction per element (a pooling window) runs a vector of
  // elements at a time.
  DenseMap<Value, SmallVector<Value, 1>> stores;
  stores[node.getResult()].push_back(dest);
  emitElementLoops(b, loc, {node.getOperation()}, resultSizes, stores, mapping,
                   options, element);
}

/// Emits a scatter: its updates in parallel (or serially), each an atomic
/// addition into `dest`, which holds the scatter's `init`.
static void emitScatterLoops(OpBuilder &b, loop::ScatterOp node, Value dest,
                             IRMapping &mapping,
                             const LoopToSCFOptions &options) {
  Location loc = node.getLoc();
  SmallVector<Value> sizes = getUpdateSizes(b, loc, node, mapping);
  emitLoopNest(b, loc, sizes, options,
               [&](OpBuilder &nested, Location, ValueRange ivs) {
                 emitScatterUpdate(nested, node, dest, mapping, ivs);
               });
}

/// The most elements of a row whose reduction's elements a later node of
/// its kernel reads back from a cache on the stack (64 KiB of f32).
static constexpr int64_t kMaxCachedRowElements = 16384;

namespace {
/// A reduction of a row kernel whose elements, before they combine, a later
/// node of the kernel computes again (a softmax's exponentials): the
/// reduction also stores them into a cache of the row, and the node runs as
/// `reader`, its detached copy in which `cached`, a load whose value the
/// emitter supplies, stands for the computation.
struct SharedRowElements {
  loop::ReduceOp reduce;
  loop::PointwiseOp node;
  loop::PointwiseOp reader;
  Value cached;
  int64_t columns;
};
} // namespace

/// Whether `value`, of a reduction's body `body`, and `other`, of a node's
/// body, are the same element's value: the same ops, without regions, on
/// the same values from outside the bodies and on arguments that
/// `arguments` pairs (the reduction's to the node's).
static bool isSameElement(Value value, Value other, Block *body,
                          const DenseMap<Value, Value> &arguments) {
  if (isa<BlockArgument>(value) && value.getParentBlock() == body)
    return arguments.lookup(value) == other;
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != body)
    return value == other;
  Operation *otherOp = other.getDefiningOp();
  if (!otherOp || op->getName() != otherOp->getName() ||
      op->getNumRegions() != 0 || otherOp->getNumRegions() != 0 ||
      op->getAttrDictionary() != otherOp->getAttrDictionary() ||
      op->getResultTypes() != otherOp->getResultTypes() ||
      op->getNumOperands() != otherOp->getNumOperands() ||
      cast<OpResult>(value).getResultNumber() !=
          cast<OpResult>(other).getResultNumber())
    return false;
  return llvm::all_of(
      llvm::zip(op->getOperands(), otherOp->getOperands()), [&](auto pair) {
        return isSameElement(std::get<0>(pair), std::get<1>(pair), body,
                             arguments);
      });
}

/// Whether `value`, of block `body`, is computed by a math function there
/// (worth a store and a load to compute once).
static bool usesMathFunction(Value value, Block *body) {
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != body)
    return false;
  if (isa<math::MathDialect>(op->getDialect()))
    return true;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return usesMathFunction(operand, body);
  });
}

/// The reductions of `kernel` (of `rows` row dimensions) whose elements a
/// later node with one column dimension computes again, the node's copy
/// that reads them instead, at most one for each reduction and node.
static SmallVector<SharedRowElements>
findSharedRowElements(loop::KernelOp kernel, int64_t rows) {
  SmallVector<SharedRowElements> shared;
  if (rows == 0)
    return shared;
  DenseSet<Operation *> readers;
  for (Operation &op : kernel.getNodes()) {
    auto reduce = dyn_cast<loop::ReduceOp>(op);
    if (!reduce)
      continue;
    Block *body = &reduce.getBody().front();
    Value element = reduce.getYield().getValue();
    auto resultType = reduce.getResultType();
    ArrayRef<int64_t> over = reduce.getReductionShape();
    // (The node's copy reads the element from the reduction's result, so
    // both have the element's type.)
    if (over.size() != 1 || ShapedType::isDynamic(over.front()) ||
        over.front() <= 1 || over.front() > kMaxCachedRowElements ||
        resultType.getElementType() != element.getType() ||
        !usesMathFunction(element, body) ||
        getReductionStateType(reduce.getKind(), element.getType()) !=
            element.getType())
      continue;
    for (Operation *next = op.getNextNode(); next; next = next->getNextNode()) {
      auto node = dyn_cast<loop::PointwiseOp>(next);
      if (!node || readers.contains(node) ||
          node.getResultType().getRank() != rows + 1 ||
          node.getResultType().getShape().back() != over.front())
        continue;
      // Row indices pair with row indices, the reduction's index with the
      // node's column; the reduction's trailing size-1 indices with none.
      Block *nodeBody = &node.getBody().front();
      DenseMap<Value, Value> arguments;
      for (int64_t i = 0; i < rows; ++i)
        arguments[body->getArgument(i)] = nodeBody->getArgument(i);
      arguments[body->getArguments().back()] = nodeBody->getArgument(rows);
      Operation *same = nullptr;
      for (Operation &candidate : nodeBody->without_terminator())
        if (candidate.getNumResults() == 1 &&
            candidate.getResult(0).getType() == element.getType() &&
            isSameElement(element, candidate.getResult(0), body, arguments)) {
          same = &candidate;
          break;
        }
      if (!same)
        continue;
      // The copy loads the element from the reduction's result instead (a
      // load that the emitter maps to the cache's value, never made).
      auto reader = cast<loop::PointwiseOp>(node->clone());
      Block *readerBody = &reader.getBody().front();
      Operation *copy =
          &*std::next(readerBody->begin(),
                      std::distance(nodeBody->begin(), same->getIterator()));
      OpBuilder b(copy);
      SmallVector<Value> indices(readerBody->getArguments().take_front(rows));
      Value zero = arith::ConstantIndexOp::create(b, copy->getLoc(), 0);
      indices.append(resultType.getRank() - rows, zero);
      auto cached =
          loop::LoadOp::create(b, copy->getLoc(), reduce.getResult(), indices);
      copy->getResult(0).replaceAllUsesWith(cached.getResult());
      copy->erase();
      readers.insert(node);
      shared.push_back(
          {reduce, node, reader, cached.getResult(), over.front()});
      break;
    }
  }
  return shared;
}

/// Emits `shared.reader`'s row at `outer` into `dest`, `width` elements at
/// a time while whole vectors fit, then one at a time, each reading its
/// cached elements from `cache`.
static void emitCachedRowColumns(OpBuilder &b, Location loc,
                                 const SharedRowElements &shared, Value dest,
                                 const IRMapping &mapping, ValueRange outer,
                                 Value cache, int64_t width) {
  Value columns = arith::ConstantIndexOp::create(b, loc, shared.columns);
  Value vectorEnd = getVectorEnd(b, loc, columns, width);
  Type cachedType = shared.cached.getType();
  auto step = [&](OpBuilder &inner, Value column, int64_t count) {
    IRMapping local = mapping;
    SmallVector<Value> ivs(outer);
    ivs.push_back(column);
    if (count == 1) {
      local.map(shared.cached,
                memref::LoadOp::create(inner, loc, cache, column).getResult());
      emitNodeBody(inner, shared.reader, dest, local, ivs);
      return;
    }
    local.map(shared.cached,
              vector::LoadOp::create(inner, loc,
                                     VectorType::get({count}, cachedType),
                                     cache, column)
                  .getResult());
    FailureOr<Value> elements = emitVectorNodeElements(
        inner, shared.reader, local, ivs, count, kCPUBufferAlignment);
    assert(succeeded(elements) && "checked by canVectorizeNodeBody");
    emitVectorStore(inner, loc, *elements, dest, ivs, kCPUBufferAlignment);
  };
  emitColumnSteps(b, loc, columns, vectorEnd, width, step);
}

/// Emits a fused kernel: its rows in parallel (or serially); in each row the
/// nodes in order, row values (reductions) kept in registers for the nodes
/// after them, so that a row's inputs are read while they are in cache; a
/// reduction's elements that a later node computes again go through a
/// cache of the row on the stack (findSharedRowElements). A
/// kernel that computes element by element runs its innermost row
/// dimension in vectors where its bodies allow.
static void emitKernelLoops(OpBuilder &b, loop::KernelOp kernel,
                            ValueRange dests, IRMapping &mapping,
                            const LoopToSCFOptions &options) {
  Location loc = kernel.getLoc();
  int64_t rows = kernel.getRows();
  SmallVector<Value> rowSizes =
      getNodeSizes(b, loc, &*kernel.getNodes().begin(), mapping);
  rowSizes.resize(rows);
  // The buffers each node stores into (a node the kernel yields twice
  // stores twice).
  DenseMap<Value, SmallVector<Value, 1>> stores;
  for (auto [value, dest] : llvm::zip(kernel.getYield().getValues(), dests))
    stores[value].push_back(dest);
  SmallVector<SharedRowElements> shared = findSharedRowElements(kernel, rows);
  // The reductions and nodes that share elements, to their entry in `shared`.
  DenseMap<Operation *, unsigned> sharing;
  for (auto [i, share] : llvm::enumerate(shared)) {
    sharing[share.reduce] = i;
    sharing[share.node] = i;
  }

  auto emitRow = [&](OpBuilder &nested, ValueRange rowIvs) {
    Value zero = arith::ConstantIndexOp::create(nested, loc, 0);
    Value one = arith::ConstantIndexOp::create(nested, loc, 1);
    // Each shared reduction's cache of the row.
    SmallVector<Value> caches;
    for (const SharedRowElements &share : shared)
      caches.push_back(memref::AllocaOp::create(
          nested, loc, MemRefType::get({share.columns}, share.cached.getType()),
          nested.getI64IntegerAttr(kCPUBufferAlignment)));
    for (Operation &op : kernel.getNodes()) {
      auto shareIndex = sharing.find(&op);
      const SharedRowElements *share =
          shareIndex == sharing.end() ? nullptr : &shared[shareIndex->second];
      Value cache = share ? caches[shareIndex->second] : Value();
      Value result = op.getResult(0);
      auto type = cast<RankedTensorType>(result.getType());
      if (loop::isRowValue(result, rows)) {
        SmallVector<Value> ivs(rowIvs);
        ivs.append(type.getRank() - rows, zero);
        Value value;
        auto reduce = dyn_cast<loop::ReduceOp>(op);
        std::optional<ReductionSplit> split;
        if (reduce && rows == 0)
          split = getReductionSplit(reduce, options);
        if (split) {
          // The kernel's one row: its reductions may still split.
          Value partials =
              emitReduceChunks(nested, reduce, mapping, options, *split);
          value = emitMergedChunks(nested, reduce, partials, zero, *split);
          memref::DeallocOp::create(nested, loc, partials);
        } else if (reduce) {
          value = emitReduceResult(nested, reduce,
                                   emitReducePartial(nested, reduce, mapping,
                                                     ivs, options.vectorBytes,
                                                     nullptr, nullptr, cache));
        } else {
          value = emitBodyValue(nested, op.getRegion(0).front(), mapping, ivs);
        }
        for (Value dest : stores.lookup(result))
          memref::StoreOp::create(nested, loc, value, dest, ivs);
        mapping.map(result, value);
        continue;
      }
      // A node with columns: its other dimensions serially, the innermost
      // one in vectors.
      auto node = cast<loop::PointwiseOp>(op);
      if (share) {
        int64_t width = getVectorWidth(share->reader, options.vectorBytes);
        for (Value dest : stores.lookup(result))
          emitCachedRowColumns(nested, loc, *share, dest, mapping, rowIvs,
                               cache, width);
        continue;
      }
      SmallVector<Value> sizes = getNodeSizes(nested, loc, node, mapping);
      ArrayRef<Value> middle =
          ArrayRef<Value>(sizes).drop_front(rows).drop_back();
      int64_t width = getVectorWidth(node, options.vectorBytes);
      Value vectorEnd = getVectorEnd(nested, loc, sizes.back(), width);
      for (Value dest : stores.lookup(result)) {
        scf::buildLoopNest(
            nested, loc, SmallVector<Value>(middle.size(), zero), middle,
            SmallVector<Value>(middle.size(), one),
            [&](OpBuilder &inner, Location, ValueRange middleIvs) {
              SmallVector<Value> outer(rowIvs);
              llvm::append_range(outer, middleIvs);
              emitRowColumns(inner, loc, node, dest, mapping, outer,
                             sizes.back(), vectorEnd, width);
            });
      }
    }
  };
  // The caches live for one row: a scope frees them at its end.
  auto row = [&](OpBuilder &nested, Location, ValueRange rowIvs) {
    if (shared.empty()) {
      emitRow(nested, rowIvs);
      return;
    }
    auto scope = memref::AllocaScopeOp::create(nested, loc, TypeRange());
    OpBuilder inner =
        OpBuilder::atBlockBegin(&scope.getBodyRegion().emplaceBlock());
    emitRow(inner, rowIvs);
    memref::AllocaScopeReturnOp::create(inner, loc);
  };
  if (rows == 0) {
    row(b, loc, {});
  } else {
    SmallVector<Operation *> nodes = llvm::map_to_vector(
        kernel.getNodes(), [](Operation &op) { return &op; });
    emitElementLoops(b, loc, nodes, rowSizes, stores, mapping, options, row);
  }
  for (SharedRowElements &share : shared)
    share.reader->erase();
}

GraphBufferizationTarget
mlir::kiln::getSCFBufferizationTarget(const LoopToSCFOptions &options) {
  GraphBufferizationTarget target;
  target.emitNode = [options](OpBuilder &b, loop::PointwiseOp node, Value dest,
                              IRMapping &mapping, ValueRange) {
    emitSCFLoops(b, node, dest, mapping, options);
  };
  target.emitReduce = [options](OpBuilder &b, loop::ReduceOp node, Value dest,
                                IRMapping &mapping, ValueRange) {
    emitReduceLoops(b, node, dest, mapping, options);
  };
  target.emitScatter = [options](OpBuilder &b, loop::ScatterOp node, Value dest,
                                 IRMapping &mapping, ValueRange) {
    emitScatterLoops(b, node, dest, mapping, options);
  };
  target.emitMatmul = [options](OpBuilder &b, loop::MatmulOp node, Value dest,
                                IRMapping &mapping, ValueRange) {
    emitMatmulLoops(b, node, dest, mapping, options);
  };
  target.emitKernel = [options](OpBuilder &b, loop::KernelOp kernel,
                                ValueRange dests, IRMapping &mapping,
                                ValueRange) {
    emitKernelLoops(b, kernel, dests, mapping, options);
  };
  // A frozen constant is a read-only global of the artifact.
  target.emitConstant = [](OpBuilder &b, Location loc, ElementsAttr value,
                           ValueRange) -> Value {
    return emitConstantGlobal(b, loc, value);
  };
  target.allocate = [](OpBuilder &b, Location loc, MemRefType type,
                       ValueRange dynamicSizes, ValueRange) -> Value {
    return memref::AllocOp::create(b, loc, type, dynamicSizes);
  };
  target.deallocate = [](OpBuilder &b, Location loc, Value buffer, ValueRange) {
    memref::DeallocOp::create(b, loc, buffer);
  };
  target.copy = [](OpBuilder &b, Location loc, Value source, Value dest,
                   ValueRange) {
    memref::CopyOp::create(b, loc, source, dest);
  };
  return target;
}

namespace {
struct ConvertLoopToSCFPass
    : kiln::impl::ConvertLoopToSCFPassBase<ConvertLoopToSCFPass> {
  using Base::Base;

  void runOnOperation() override {
    LoopToSCFOptions options;
    options.parallel = parallel;
    options.vectorBytes = vectorBytes;
    options.amx = amx;
    GraphBufferizationTarget target = getSCFBufferizationTarget(options);
    if (failed(bufferizeGraphs(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
