//===- AttentionBackwardKernels.cpp - Attention's gradients on tensor cores
//===//
//
// Part of Kiln. A loop.attention_backward node
// (loop::hasAttentionBackwardKernel) runs as two kernels that recompute the
// probabilities from the forward's logsumexp and never write them (flash
// attention's backward pass). One takes a block of keys and walks the
// queries, summing the keys' and values' gradients, dK = scale · Σ dSᵀ·q
// and dV = Σ pᵀ·dO; the other takes a block of queries and walks the keys,
// summing dQ = scale · Σ dS·k. Both recompute the scores and dP = dO·vᵀ, so
// that neither adds into another block's sums (no atomics, at the price of
// two products more than one kernel would take).
//
// The two are one loop with the roles swapped. A block of 4 warps keeps 64
// rows of two operands in workgroup memory (keys and values; queries and
// dO) and walks blocks of 64 columns of the other two (queries and dO with
// their logsumexp and delta; keys and values), double-buffered with
// cp.async. Each warp owns 16 rows. mma.sync m16n8k16 computes X = rows₁ ·
// columns₁ᵀ and Y = rows₂ · columns₂ᵀ in f32 (ldmatrix reads the columns as
// stored); p = exp2(X · scale · log2 e - logsumexp · log2 e), 0 where a key
// is hidden, and dS = p · (Y - delta). The gradients' products take p and
// dS rounded to the operands' type straight from their registers (an
// accumulator fragment's layout is the next product's operand's) and the
// columns read transposed. In the keys' kernel X is the scores transposed
// and the statistics belong to its columns; causal blocks of keys start at
// their first query's block, causal blocks of queries stop at their last
// query's key.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"
#include "MatmulKernelSupport.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/AttentionBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The rows a block keeps (16 per warp) and the columns of each step.
constexpr int64_t kBlockRows = 64;
constexpr int64_t kBlockColumns = 64;
constexpr int64_t kWarps = kBlockRows / 16;
/// Elements that pad each workgroup row, so that the 8 rows an ldmatrix
/// reads fall in distinct banks.
constexpr int64_t kPad = 8;
/// The n8 fragments of a warp's 16 x kBlockColumns scores.
constexpr int64_t kScoreFragments = kBlockColumns / 8;

/// Emits one of a loop.attention_backward node's two kernels.
class AttentionBackwardEmitter : MatmulKernelBuilder {
public:
  /// The keys' and values' kernel with `keysAndValues`, else the queries'.
  AttentionBackwardEmitter(OpBuilder &b, loop::AttentionBackwardOp node,
                           const IRMapping &mapping, bool keysAndValues)
      : MatmulKernelBuilder(b, node.getLoc()), node(node), mapping(mapping),
        align(b, loc), kernelMapping(mapping), keysAndValues(keysAndValues) {
    auto queryType = cast<RankedTensorType>(node.getQuery().getType());
    elementType = queryType.getElementType();
    head = queryType.getShape().back();
  }

  /// Emits the kernel, storing the key's and value's gradients into
  /// `dests[1]` and `dests[2]`, or the query's into `dests[0]`.
  void emit(ValueRange dests, StreamOrder &order, ValueRange extraArgs);

private:
  int64_t getRowStride() const { return head + kPad; }
  /// 16-bit elements of a tile of 64 rows.
  int64_t getTileElements() const { return kBlockRows * getRowStride(); }
  /// 16-bit elements of a stage: two tiles of columns and, in the keys'
  /// kernel, the columns' logsumexp and delta (f32).
  int64_t getStageElements() const {
    return 2 * getTileElements() + (keysAndValues ? 4 * kBlockColumns : 0);
  }
  int64_t getNumSums() const { return head / 2; }

  /// Copies rows [`firstRow`, `firstRow` + 64) of the matrix at `global`
  /// (!llvm.ptr<1>) of `rows` x head elements into workgroup memory at
  /// `shared`, zeros past its last row.
  void copyTile(Value global, Value rows, Value firstRow, Value shared);

  /// Copies elements [`first`, `first` + 64) of the f32 vector at `global`
  /// of `count` elements to `shared`, zeros past its end (a thread each).
  void copyStatistics(Value global, Value count, Value first, Value shared);

  /// Copies column block `columnBlock`, if there is one, into its stage and
  /// closes a group of copies.
  void copyColumnBlock(Value columnBlock);

  /// The warp's 16 rows of the tile at `rowsShared` times the columns of
  /// the tile at `columnsShared` (read as stored): 16 x 64 f32 sums in
  /// kScoreFragments n8 fragments.
  SmallVector<Value> multiplyColumns(Value rowsShared, Value columnsShared);

  /// Adds `p` (16 x 64, as multiplyColumns returns them) times the tile at
  /// `columnsShared` (read transposed) to `sums` (16 x head).
  void addProducts(ArrayRef<Value> p, Value columnsShared,
                   MutableArrayRef<Value> sums);

  /// The row and column of accumulator `e` of n8 fragment `n`.
  Value getRow(int64_t e) {
    return add(warpFirstRow, add(fragmentRow, index((e / 2) * 8)));
  }
  Value getColumn(Value firstColumn, int64_t n, int64_t e) {
    return add(firstColumn, add(fragmentColumn, index(n * 8 + e % 2)));
  }

  /// p and dS of one column block from X and Y, in place.
  void computeGradients(SmallVectorImpl<Value> &x, SmallVectorImpl<Value> &y,
                        Value columnBlock, Value stage);

  /// Stores the warp's `sums` (16 x head), times `factor`, into `target`.
  void storeSums(ArrayRef<Value> sums, Value factor, Value target);

  /// The pair of f32 statistics at element `column` of the vector at
  /// `shared` (!llvm.ptr<3>).
  std::pair<Value, Value> loadStatisticPair(Value shared, Value column);

  Value getStageTile(Value stage, int64_t tile) {
    return offset(columnsShared, add(mul(stage, index(getStageElements())),
                                     index(tile * getTileElements())));
  }

  loop::AttentionBackwardOp node;
  const IRMapping &mapping;
  AlignedViews align;
  /// The scores region's loads, mapped to aligned views inside the kernel.
  IRMapping kernelMapping;
  bool keysAndValues;
  Type elementType;
  int64_t head;
  Value thread, warp, fragmentRow, fragmentColumn;
  /// Each lane's ldmatrix address within a 16x16 fragment, in elements: of
  /// an operand read as stored or transposed, and of columns read as the
  /// product's rhs.
  Value laneOffset, columnLaneOffset;
  /// The two row tiles, then the stages.
  Value rowsShared, columnsShared;
  /// The queries and keys (their counts), this kernel's rows and columns.
  Value queries, keys, rows, columns, columnBlocks;
  /// The columns' matrices and statistics in global memory.
  Value columnGlobal[2], logsumexpGlobal, deltaGlobal;
  SmallVector<Value> batchIvs;
  Value warpFirstRow;
  /// The queries' kernel: each of the lane's two rows' logsumexp in base 2
  /// and delta.
  Value rowLogsumexp[2], rowDelta[2];
  /// The last query and key, where reads past the sequences are clamped.
  Value lastQuery, lastKey;
  Value zero, log2e;
};
} // namespace

void AttentionBackwardEmitter::copyTile(Value global, Value rowCount,
                                        Value firstRow, Value shared) {
  copyTileRows(global, rowCount, head, firstRow, kBlockRows, thread,
               kWarps * kWarpSize, [&](Value row, Value piece) {
                 return offset(shared, add(mul(row, index(getRowStride())),
                                           mul(piece, index(kCopyElements))));
               });
}

void AttentionBackwardEmitter::copyStatistics(Value global, Value count,
                                              Value first, Value shared) {
  auto inside =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              thread, index(kBlockColumns)),
                        /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&inside.getThenRegion().front());
  Value element = add(first, thread);
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, element, count);
  // Past the end: a copy of no bytes (zeros) from the vector's start. The
  // pointers count 16-bit elements.
  Value source = offset(
      global,
      mul(arith::SelectOp::create(b, loc, valid, element, index(0)), index(2)));
  Value bytes = arith::SelectOp::create(
      b, loc, valid, arith::ConstantIntOp::create(b, loc, 4, 32),
      arith::ConstantIntOp::create(b, loc, 0, 32));
  NVVM::CpAsyncOp::create(b, loc, offset(shared, mul(thread, index(2))), source,
                          4, NVVM::LoadCacheModifierKind::CA, bytes);
}

void AttentionBackwardEmitter::copyColumnBlock(Value columnBlock) {
  auto ifBlock =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              columnBlock, columnBlocks),
                        /*withElse=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&ifBlock.getThenRegion().front());
    Value stage = rem(columnBlock, 2);
    Value firstColumn = mul(columnBlock, index(kBlockColumns));
    for (int64_t tile = 0; tile < 2; ++tile)
      copyTile(columnGlobal[tile], columns, firstColumn,
               getStageTile(stage, tile));
    if (keysAndValues) {
      Value statistics = getStageTile(stage, 2);
      copyStatistics(logsumexpGlobal, queries, firstColumn, statistics);
      copyStatistics(deltaGlobal, queries, firstColumn,
                     offset(statistics, index(2 * kBlockColumns)));
    }
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

SmallVector<Value>
AttentionBackwardEmitter::multiplyColumns(Value rowsTile, Value columnsTile) {
  SmallVector<Value> sums(kScoreFragments * 4, zero);
  Value rowStart =
      add(mul(mul(warp, index(16)), index(getRowStride())), laneOffset);
  for (int64_t k = 0; k < head; k += 16) {
    SmallVector<Value, 4> a =
        loadMatrices(offset(rowsTile, add(rowStart, index(k))),
                     /*transposed=*/false);
    // One ldmatrix reads the columns of two n8 fragments.
    for (int64_t n = 0; n < kScoreFragments; n += 2) {
      SmallVector<Value, 4> columnFragments = loadMatrices(
          offset(columnsTile,
                 add(columnLaneOffset, index(n * 8 * getRowStride() + k))),
          /*transposed=*/false);
      for (int64_t half = 0; half < 2; ++half)
        multiplyFragment(elementType, a,
                         ArrayRef<Value>(columnFragments).slice(half * 2, 2),
                         MutableArrayRef<Value>(&sums[(n + half) * 4], 4));
    }
  }
  return sums;
}

void AttentionBackwardEmitter::addProducts(ArrayRef<Value> p, Value columnsTile,
                                           MutableArrayRef<Value> sums) {
  int64_t fragmentsHead = head / 8;
  for (int64_t k = 0; k < kBlockColumns; k += 16) {
    // The fragments of columns k..k+7 and k+8..k+15 are the lhs fragment.
    const Value *low = &p[(k / 8) * 4];
    const Value *high = low + 4;
    SmallVector<Value, 4> a{packPair(elementType, low[0], low[1]),
                            packPair(elementType, low[2], low[3]),
                            packPair(elementType, high[0], high[1]),
                            packPair(elementType, high[2], high[3])};
    for (int64_t n = 0; n < fragmentsHead; n += 2) {
      SmallVector<Value, 4> columnFragments = loadMatrices(
          offset(columnsTile,
                 add(laneOffset, index(k * getRowStride() + n * 8))),
          /*transposed=*/true);
      for (int64_t half = 0; half < 2; ++half)
        multiplyFragment(elementType, a,
                         ArrayRef<Value>(columnFragments).slice(half * 2, 2),
                         sums.slice((n + half) * 4, 4));
    }
  }
}

std::pair<Value, Value>
AttentionBackwardEmitter::loadStatisticPair(Value shared, Value column) {
  auto pairType = VectorType::get({2}, b.getF32Type());
  Value pair = LLVM::LoadOp::create(b, loc, pairType,
                                    offset(shared, mul(column, index(2))),
                                    /*alignment=*/8);
  auto extract = [&](int64_t i) -> Value {
    return LLVM::ExtractElementOp::create(
        b, loc, pair, arith::ConstantIntOp::create(b, loc, i, 32));
  };
  return {extract(0), extract(1)};
}

void AttentionBackwardEmitter::computeGradients(SmallVectorImpl<Value> &x,
                                                SmallVectorImpl<Value> &y,
                                                Value columnBlock,
                                                Value stage) {
  Value firstColumn = mul(columnBlock, index(kBlockColumns));
  double nodeScale = node.getScale().convertToDouble();
  Value scaleLog2 = arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(static_cast<float>(nodeScale * llvm::numbers::log2e)));
  Value scale = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(nodeScale)));
  Value statistics = keysAndValues ? getStageTile(stage, 2) : Value();
  for (int64_t n = 0; n < kScoreFragments; ++n) {
    Value columnLogsumexp[2], columnDelta[2];
    if (keysAndValues) {
      Value column = add(fragmentColumn, index(n * 8));
      std::tie(columnLogsumexp[0], columnLogsumexp[1]) =
          loadStatisticPair(statistics, column);
      std::tie(columnDelta[0], columnDelta[1]) = loadStatisticPair(
          offset(statistics, index(2 * kBlockColumns)), column);
      for (Value &value : columnLogsumexp)
        value = arith::MulFOp::create(b, loc, value, log2e);
    }
    for (int64_t e = 0; e < 4; ++e) {
      Value row = getRow(e), column = getColumn(firstColumn, n, e);
      Value query = keysAndValues ? column : row;
      Value key = keysAndValues ? row : column;
      Value logsumexp =
          keysAndValues ? columnLogsumexp[e % 2] : rowLogsumexp[e / 2];
      Value delta = keysAndValues ? columnDelta[e % 2] : rowDelta[e / 2];
      Value &score = x[n * 4 + e];
      Value exponent;
      if (node.hasScoreModifier()) {
        // The region at the score's indices, clamped to the sequences: the
        // scores past their ends are hidden below.
        SmallVector<Value> arguments(batchIvs);
        arguments.push_back(arith::MinUIOp::create(b, loc, query, lastQuery));
        arguments.push_back(arith::MinUIOp::create(b, loc, key, lastKey));
        arguments.push_back(arith::MulFOp::create(b, loc, score, scale));
        Value modified = emitBodyValue(b, node.getScores().front(),
                                       kernelMapping, arguments);
        exponent = arith::SubFOp::create(
            b, loc, arith::MulFOp::create(b, loc, modified, log2e), logsumexp);
      } else {
        exponent = math::FmaOp::create(
            b, loc, score, scaleLog2, arith::NegFOp::create(b, loc, logsumexp));
      }
      Value hide = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         column, columns);
      if (node.getCausal())
        hide = arith::OrIOp::create(
            b, loc, hide,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, key,
                                  query));
      Value p = arith::SelectOp::create(b, loc, hide, zero,
                                        math::Exp2Op::create(b, loc, exponent));
      score = p;
      Value &gradScore = y[n * 4 + e];
      gradScore = arith::MulFOp::create(
          b, loc, p, arith::SubFOp::create(b, loc, gradScore, delta));
    }
  }
}

void AttentionBackwardEmitter::storeSums(ArrayRef<Value> sums, Value factor,
                                         Value target) {
  int64_t fragmentsHead = head / 8;
  for (int64_t half = 0; half < 2; ++half) {
    Value row = getRow(half * 2);
    auto inside = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    for (int64_t n = 0; n < fragmentsHead; ++n) {
      int64_t first = n * 4 + half * 2;
      auto scaled = [&](Value sum) -> Value {
        return factor ? arith::MulFOp::create(b, loc, sum, factor).getResult()
                      : sum;
      };
      SmallVector<Value> indices(batchIvs);
      indices.push_back(row);
      indices.push_back(add(fragmentColumn, index(n * 8)));
      vector::StoreOp::create(
          b, loc,
          roundPair(elementType, scaled(sums[first]), scaled(sums[first + 1])),
          target, indices);
    }
  }
}

void AttentionBackwardEmitter::emit(ValueRange dests, StreamOrder &order,
                                    ValueRange extraArgs) {
  Value queryBuffer = mapping.lookup(node.getQuery());
  Value keyBuffer = mapping.lookup(node.getKey());
  Value valueBuffer = mapping.lookup(node.getValue());
  Value gradBuffer = mapping.lookup(node.getGrad());
  int64_t batchDims = node.getNumBatchDims();
  SmallVector<Value> batchSizes;
  for (int64_t dim = 0; dim < batchDims; ++dim)
    batchSizes.push_back(memref::DimOp::create(b, loc, queryBuffer, dim));
  queries = memref::DimOp::create(b, loc, queryBuffer, batchDims);
  keys = memref::DimOp::create(b, loc, keyBuffer, batchDims);
  lastQuery = arith::SubIOp::create(b, loc, queries, index(1));
  lastKey = arith::SubIOp::create(b, loc, keys, index(1));
  rows = keysAndValues ? keys : queries;
  columns = keysAndValues ? queries : keys;
  Value rowBlocks = arith::CeilDivUIOp::create(b, loc, rows, index(kBlockRows));
  Value blocks = mul(getProduct(b, loc, batchSizes), rowBlocks);
  int64_t sharedBytes = (2 * getTileElements() + 2 * getStageElements()) * 2;

  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = createLaunch(
      b, loc,
      keysAndValues ? "attention_key_gradients" : "attention_query_gradients",
      blocks, index(kWarps * kWarpSize), order, extraArgs,
      arith::ConstantIntOp::create(b, loc, sharedBytes, 32));
  b.setInsertionPointToStart(&launch.getBody().front());
  align.alignSources(node, mapping, kernelMapping);
  thread = launch.getThreadIds().x;
  FragmentLanes lanes = getFragmentLanes(thread, getRowStride());
  warp = lanes.warp;
  fragmentRow = lanes.row;
  fragmentColumn = lanes.column;
  laneOffset = lanes.operandOffset;
  columnLaneOffset = lanes.columnsOffset;
  zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  log2e = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(llvm::numbers::log2e)));

  // Causal blocks of queries take the longest rows first (the last ones);
  // blocks of keys do already (the first ones).
  Value batch, rowBlock;
  std::tie(batch, rowBlock) = splitBlock(launch.getBlockIds().x, rowBlocks,
                                         node.getCausal() && !keysAndValues);
  batchIvs = delinearize(b, loc, batch, batchSizes);
  Value firstRow = mul(rowBlock, index(kBlockRows));
  warpFirstRow = add(firstRow, mul(warp, index(16)));
  columnBlocks =
      arith::CeilDivUIOp::create(b, loc, columns, index(kBlockColumns));
  Value firstColumnBlock = index(0);
  if (node.getCausal()) {
    if (keysAndValues) {
      // Queries before the block's first key see none of its keys.
      firstColumnBlock =
          arith::DivUIOp::create(b, loc, firstRow, index(kBlockColumns));
    } else {
      // Keys after the block's last query are hidden from all its queries.
      columnBlocks = getCausalKeyBlocks(columnBlocks, firstRow, kBlockRows,
                                        queries, kBlockColumns);
    }
  }

  auto globalMatrix = [&](Value buffer, Value count) {
    return getBatchMatrix(align(buffer), batch, count, head);
  };
  Value queryGlobal = globalMatrix(queryBuffer, queries);
  Value keyGlobal = globalMatrix(keyBuffer, keys);
  Value valueGlobal = globalMatrix(valueBuffer, keys);
  Value gradGlobal = globalMatrix(gradBuffer, queries);
  Value rowGlobal[2] = {keysAndValues ? keyGlobal : queryGlobal,
                        keysAndValues ? valueGlobal : gradGlobal};
  columnGlobal[0] = keysAndValues ? queryGlobal : keyGlobal;
  columnGlobal[1] = keysAndValues ? gradGlobal : valueGlobal;
  Value logsumexpBuffer = align(mapping.lookup(node.getLogsumexp()));
  Value deltaBuffer = align(mapping.lookup(node.getDelta()));
  if (keysAndValues) {
    // The statistics' pointers count 16-bit elements, two per f32.
    auto globalVector = [&](Value buffer) {
      return offset(getPointer(buffer, NVVM::NVVMMemorySpace::Global),
                    mul(mul(batch, queries), index(2)));
    };
    logsumexpGlobal = globalVector(logsumexpBuffer);
    deltaGlobal = globalVector(deltaBuffer);
  } else {
    // The lane's two rows' statistics, once (a clamped row past the end is
    // computed and dropped).
    for (int64_t half = 0; half < 2; ++half) {
      SmallVector<Value> indices(batchIvs);
      indices.push_back(
          arith::MinUIOp::create(b, loc, getRow(half * 2), lastQuery));
      rowLogsumexp[half] = arith::MulFOp::create(
          b, loc, memref::LoadOp::create(b, loc, logsumexpBuffer, indices),
          log2e);
      rowDelta[half] = memref::LoadOp::create(b, loc, deltaBuffer, indices);
    }
  }
  rowsShared = getDynamicSharedPointer();
  columnsShared = offset(rowsShared, index(2 * getTileElements()));
  for (int64_t tile = 0; tile < 2; ++tile)
    copyTile(rowGlobal[tile], rows, firstRow,
             offset(rowsShared, index(tile * getTileElements())));
  copyColumnBlock(firstColumnBlock);

  // The keys' kernel sums dK, then dV; the queries' kernel dQ.
  int64_t numSums = getNumSums() * (keysAndValues ? 2 : 1);
  SmallVector<Value> initial(numSums, zero);
  auto loop = scf::ForOp::create(
      b, loc, firstColumnBlock, columnBlocks, index(1), initial,
      [&](OpBuilder &nested, Location, Value columnBlock, ValueRange carried) {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        // This block's copies are done; after the barrier every warp has
        // also finished the previous block, whose stage the next copies
        // reuse.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
        gpu::BarrierOp::create(b, loc);
        copyColumnBlock(add(columnBlock, index(1)));
        Value stage = rem(columnBlock, 2);
        SmallVector<Value> x =
            multiplyColumns(rowsShared, getStageTile(stage, 0));
        SmallVector<Value> y =
            multiplyColumns(offset(rowsShared, index(getTileElements())),
                            getStageTile(stage, 1));
        computeGradients(x, y, columnBlock, stage);
        SmallVector<Value> sums(carried);
        MutableArrayRef<Value> all(sums);
        if (keysAndValues) {
          // dV += p·dO, dK += dS·q.
          addProducts(x, getStageTile(stage, 1), all.take_back(getNumSums()));
          addProducts(y, getStageTile(stage, 0), all.take_front(getNumSums()));
        } else {
          // dQ += dS·k.
          addProducts(y, getStageTile(stage, 0), all);
        }
        scf::YieldOp::create(b, loc, sums);
      });
  // The copies that the last iteration issued are of no block, but must
  // be done before the kernel ends.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  SmallVector<Value> results(loop.getResults());
  ArrayRef<Value> sums(results);
  Value scale = arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(static_cast<float>(node.getScale().convertToDouble())));
  if (keysAndValues) {
    storeSums(sums.take_front(getNumSums()), scale, align(dests[1]));
    storeSums(sums.take_back(getNumSums()), Value(), align(dests[2]));
  } else {
    storeSums(sums, scale, align(dests[0]));
  }
  gpu::TerminatorOp::create(b, loc);
}

void mlir::kiln::emitAttentionBackwardKernels(
    OpBuilder &b, loop::AttentionBackwardOp node, ValueRange dests,
    IRMapping &mapping, StreamOrder &order, ValueRange extraArgs) {
  assert(loop::hasAttentionBackwardKernel(node) &&
         "no kernel for these gradients");
  AttentionBackwardEmitter(b, node, mapping, /*keysAndValues=*/true)
      .emit(dests, order, extraArgs);
  AttentionBackwardEmitter(b, node, mapping, /*keysAndValues=*/false)
      .emit(dests, order, extraArgs);
}
