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
// On sm_90a (`warpgroup-mma` and `warpgroup-attention-gradients`, both on
// by default), heads of 64 and 128 take one kernel of
// Hopper's warpgroup MMA instead: two warpgroups of 64 keys each walk the
// queries over tiles 128-byte swizzled as wgmma reads them. X and Y are
// wgmma m64n64 from the tiles; dV and dK add wgmma m<head> products whose
// lhs, p and dS, are the score registers (as in the forward kernel). dS
// also goes to a swizzled tile of its own, from which dQ's products read
// it transposed with the keys (each warpgroup takes half the head over all
// 128 keys, so that each query's row is reduced once per block), and the
// products go through workgroup memory (two stages, so that a step's
// reductions overlap the next step) into f32 sums of dQ in global memory:
// a bulk reduction (TMA) per row, not an atomic per element (with those,
// measured, the kernel lost to the two mma.sync kernels at heads of 64).
// The order of the additions, and so
// dQ's last bits, vary from run to run, as in PyTorch's flash gradients. A
// kernel zeros the sums first and one rounds them to dQ after.
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
/// The rows a block keeps (16 per warp; with warpgroup MMA, 128 in two
/// warpgroups) and the columns of each step.
constexpr int64_t kBlockRows = 64;
constexpr int64_t kWarpgroupBlockRows = 128;
constexpr int64_t kBlockColumns = 64;
/// Elements that pad each workgroup row, so that the 8 rows an ldmatrix
/// reads fall in distinct banks.
constexpr int64_t kPad = 8;
/// The n8 fragments of a warp's 16 x kBlockColumns scores.
constexpr int64_t kScoreFragments = kBlockColumns / 8;
/// Workgroup memory pads each row of a warpgroup's tile of query sums (f32)
/// by 32 bytes, so that a warp's stores of pairs take two passes.
constexpr int64_t kSumRowPadBytes = 32;
/// The tiles of query sums, so that one step's bulk reductions may still
/// read theirs while the next step writes its own.
constexpr int64_t kQuerySumStages = 2;
/// Emits one of a loop.attention_backward node's two kernels.
class AttentionBackwardEmitter : MatmulKernelBuilder {
public:
  /// The keys' and values' kernel with `keysAndValues`, else the queries';
  /// with `warpgroup`, the keys' kernel of warpgroup MMA (sm_90a, heads of
  /// 64 and 128, query sums).
  AttentionBackwardEmitter(OpBuilder &b, loop::AttentionBackwardOp node,
                           const IRMapping &mapping, bool keysAndValues,
                           bool warpgroup = false)
      : MatmulKernelBuilder(b, node.getLoc()), node(node), mapping(mapping),
        align(b, loc), kernelMapping(mapping), keysAndValues(keysAndValues),
        warpgroup(warpgroup) {
    auto queryType = cast<RankedTensorType>(node.getQuery().getType());
    elementType = queryType.getElementType();
    head = queryType.getShape().back();
    blockRows = warpgroup ? kWarpgroupBlockRows : kBlockRows;
  }

  /// Emits the kernel, storing the key's and value's gradients into
  /// `dests[1]` and `dests[2]`, or the query's into `dests[0]`. With
  /// `querySums` (f32, the query's shape, zeros), the warpgroup kernel also
  /// adds dQ / scale into it.
  void emit(ValueRange dests, StreamOrder &order, ValueRange extraArgs,
            Value querySums = Value());

private:
  int64_t getThreads() const { return blockRows / 16 * kWarpSize; }
  /// Swizzled rows are not padded.
  int64_t getRowStride() const { return warpgroup ? head : head + kPad; }
  /// 16-bit elements of a tile of the block's rows, and of a column block.
  int64_t getRowTileElements() const { return blockRows * getRowStride(); }
  int64_t getColumnTileElements() const {
    return kBlockColumns * getRowStride();
  }
  /// 16-bit elements of a stage: two tiles of columns and, in the keys'
  /// kernel, the columns' logsumexp and delta (f32); swizzled stages start
  /// at a multiple of 1024 bytes.
  int64_t getStageElements() const {
    int64_t elements =
        2 * getColumnTileElements() + (keysAndValues ? 4 * kBlockColumns : 0);
    return warpgroup ? llvm::alignTo(elements, kSwizzleBytes / 2) : elements;
  }
  /// The warpgroup kernel's tile of dS, keys by queries, swizzled, and its
  /// warpgroups' tiles of query sums.
  int64_t getGradScoreTileElements() const {
    return warpgroup ? blockRows * kBlockColumns : 0;
  }
  /// Each warpgroup sums dQ for the step's 64 queries by half the head.
  int64_t getQuerySumColumns() const { return head / 2; }
  int64_t getSumRowBytes() const {
    return getQuerySumColumns() * 4 + kSumRowPadBytes;
  }
  /// 16-bit elements of one stage of both warpgroups' query sums.
  int64_t getQuerySumStageElements() const {
    return 2 * 64 * getSumRowBytes() / 2;
  }
  int64_t getQuerySumTileElements() const {
    return warpgroup ? kQuerySumStages * getQuerySumStageElements() : 0;
  }
  int64_t getNumSums() const { return head / 2; }

  /// Copies rows [`firstRow`, `firstRow` + `tileRows`) of the matrix at
  /// `global` (!llvm.ptr<1>) of `rows` x head elements into workgroup
  /// memory at `shared`, zeros past its last row: padded rows, or swizzled
  /// blocks of 64 elements of every row.
  void copyTile(Value global, Value rows, Value firstRow, int64_t tileRows,
                Value shared);

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

  /// The warpgroup kernel's X = k·qᵀ and Y = v·dOᵀ of the warpgroup's 64
  /// rows (wgmma from the swizzled tiles), each as multiplyColumns returns.
  std::pair<SmallVector<Value>, SmallVector<Value>>
  multiplyColumnsWarpgroup(Value stage);

  /// The warpgroup kernel's dS (`gradScores`) into its tile, where every
  /// warpgroup's products can read it after the barrier this emits.
  void storeGradScores(ArrayRef<Value> gradScores);

  /// The warpgroup kernel's dV += p·dO and dK += dS·q (`sums`: dK, then
  /// dV; the lhs from registers, the columns read transposed), and its
  /// dQ's products from the dS tile, its 64 queries by half the head per
  /// warpgroup, one wgmma of operands read transposed. All three are in
  /// flight together.
  void addProductsWarpgroup(ArrayRef<Value> p, ArrayRef<Value> gradScores,
                            Value columnBlock, Value stage,
                            MutableArrayRef<Value> sums);

  /// Adds the warpgroup's `sums` (an accumulator of 64 queries by half the
  /// head, from query `firstQuery` and element `firstElement` of the head)
  /// to the query sums in global memory, through its tile of workgroup
  /// memory in stage `sumStage`.
  void reduceQuerySums(ArrayRef<Value> sums, Value firstQuery,
                       Value firstElement, Value sumStage);

  /// The byte address (i64) of `pointer` into workgroup memory.
  Value getAddress(Value pointer) {
    return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointer);
  }
  /// getAddress, computed where it is used: the descriptors of the row
  /// tiles, loop-invariant, would otherwise be hoisted out of the loop, two
  /// registers each, and spill.
  Value getAddressInLoop(Value pointer) {
    return emitPtx(b.getI64Type(), getAddress(pointer), "mov.b64 $0, $1;",
                   "=l,l")
        .getResult(0);
  }
  /// The PTX instruction `text`, inline, never moved or removed.
  LLVM::InlineAsmOp emitPtx(TypeRange results, ValueRange operands,
                            StringRef text, StringRef constraints) {
    return LLVM::InlineAsmOp::create(
        b, loc, results, operands, text, constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
  }
  /// Orders this thread's writes to workgroup memory before the async
  /// proxy's reads of it (wgmma, bulk copies).
  void fenceAsyncProxy() {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  Value plus(Value address, int64_t bytes) {
    return add(address, arith::ConstantIntOp::create(b, loc, bytes, 64));
  }
  /// The warpgroup's index, 0 or 1.
  Value getWarpgroup() { return div(warp, 4); }

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
                                     index(tile * getColumnTileElements())));
  }

  loop::AttentionBackwardOp node;
  const IRMapping &mapping;
  AlignedViews align;
  /// The scores region's loads, mapped to aligned views inside the kernel.
  IRMapping kernelMapping;
  bool keysAndValues, warpgroup;
  Type elementType;
  int64_t head, blockRows;
  Value thread, warp, fragmentRow, fragmentColumn;
  /// Each lane's ldmatrix address within a 16x16 fragment, in elements: of
  /// an operand read as stored or transposed, and of columns read as the
  /// product's rhs.
  Value laneOffset, columnLaneOffset;
  /// The two row tiles, then the stages, then the warpgroup kernel's dS and
  /// query sums.
  Value rowsShared, columnsShared, gradScoresShared, querySumsShared;
  /// The queries and keys (their counts), this kernel's rows and columns.
  Value queries, keys, rows, columns, columnBlocks;
  /// The columns' matrices and statistics in global memory, and the batch's
  /// query sums (f32) where the keys' kernel adds into them.
  Value columnGlobal[2], logsumexpGlobal, deltaGlobal, querySumsGlobal;
  SmallVector<Value> batchIvs;
  Value warpFirstRow;
  /// The queries' kernel: each of the lane's two rows' logsumexp in base 2
  /// and delta. The kernel with query sums: whether each lies past the last
  /// key.
  Value rowLogsumexp[2], rowDelta[2], rowOutside[2];
  /// The last query and key, where reads past the sequences are clamped.
  Value lastQuery, lastKey;
  Value zero, log2e;
};
} // namespace

void AttentionBackwardEmitter::copyTile(Value global, Value rowCount,
                                        Value firstRow, int64_t tileRows,
                                        Value shared) {
  copyTileRows(global, rowCount, head, firstRow, tileRows, thread, getThreads(),
               [&](Value row, Value piece) {
                 return getTilePiece(shared, tileRows, warpgroup,
                                     getRowStride(), row, piece);
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
      copyTile(columnGlobal[tile], columns, firstColumn, kBlockColumns,
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
      // A key past the end (zeros) has a score, whose dS must not reach dQ.
      if (querySumsGlobal)
        hide = arith::OrIOp::create(b, loc, hide, rowOutside[e / 2]);
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

void AttentionBackwardEmitter::reduceQuerySums(ArrayRef<Value> sums,
                                               Value firstQuery,
                                               Value firstElement,
                                               Value sumStage) {
  // The warp's 16 rows, a pair of f32 per lane and fragment.
  Value tile =
      offset(querySumsShared,
             add(mul(sumStage, index(getQuerySumStageElements())),
                 mul(getWarpgroup(), index(64 * getSumRowBytes() / 2))));
  Value warpRow = mul(rem(warp, 4), index(16));
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t n = 0, e = sums.size() / 4; n < e; ++n) {
    for (int64_t half = 0; half < 2; ++half) {
      Value row = add(warpRow, add(fragmentRow, index(half * 8)));
      Value column = add(fragmentColumn, index(n * 8));
      Value pair = vector::FromElementsOp::create(
          b, loc, pairType,
          ValueRange{sums[n * 4 + half * 2], sums[n * 4 + half * 2 + 1]});
      LLVM::StoreOp::create(
          b, loc, pair,
          offset(tile, add(mul(row, index(getSumRowBytes() / 2)),
                           mul(column, index(2)))),
          /*alignment=*/8);
    }
  }
  // The bulk copies read through the async proxy.
  fenceAsyncProxy();
  gpu::BarrierOp::create(b, loc);

  // A thread per row of the first two warps of each warpgroup: the row's
  // sums added to global memory by one bulk reduction. Every thread closes
  // a group, empty or not, so that waiting for all but the last group
  // waits for the previous step's.
  Value row = rem(thread, 4 * kWarpSize);
  Value query = add(firstQuery, row);
  Value issues = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, index(64)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, query, queries));
  auto inside = scf::IfOp::create(b, loc, issues, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    Value global = LLVM::GEPOp::create(
        b, loc, querySumsGlobal.getType(), b.getF32Type(), querySumsGlobal,
        ValueRange{toI64(add(mul(query, index(head)), firstElement))});
    Value shared = offset(tile, mul(row, index(getSumRowBytes() / 2)));
    std::string text =
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], "
         "[$1], " +
         Twine(getQuerySumColumns() * 4) + ";")
            .str();
    emitPtx(TypeRange(),
            {LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), global),
             getAddress(shared)},
            text, "l,l");
  }
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
}

std::pair<SmallVector<Value>, SmallVector<Value>>
AttentionBackwardEmitter::multiplyColumnsWarpgroup(Value stage) {
  MLIRContext *context = b.getContext();
  NVVM::WGMMATypes type = getWarpgroupType(elementType);
  auto sumsType = getWarpgroupSumsType(kScoreFragments * 4);
  // The warpgroup's 64 rows and the stage's columns, both K-major, the head
  // in blocks of 64 elements.
  Value rowsAddress =
      add(getAddressInLoop(rowsShared),
          toI64(mul(getWarpgroup(), index(64 * kSwizzleRowBytes))));
  Value stageAddress = getAddress(getStageTile(stage, 0));
  // The first step ignores the sums (scale-d 0): no register is written
  // between the fence and the products, which would serialize them.
  Value products[2] = {LLVM::UndefOp::create(b, loc, sumsType),
                       LLVM::UndefOp::create(b, loc, sumsType)};
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t tile = 0; tile < 2; ++tile) {
    Value &sums = products[tile];
    Value rowTile = plus(rowsAddress, tile * getRowTileElements() * 2);
    Value columnTile = plus(stageAddress, tile * getColumnTileElements() * 2);
    for (int64_t k = 0; k < head; k += 16) {
      int64_t block = k / kSwizzleElements;
      int64_t inRow = (k % kSwizzleElements) * 2;
      Value lhs = getSwizzledDescriptor(
          plus(rowTile, block * blockRows * kSwizzleRowBytes + inRow), 16);
      Value rhs = getSwizzledDescriptor(
          plus(columnTile, block * kBlockColumns * kSwizzleRowBytes + inRow),
          16);
      sums = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, sumsType, sums, lhs, rhs,
          NVVM::MMAShapeAttr::get(context, 64, kBlockColumns, 16), type, type,
          NVVM::WGMMATypes::f32,
          k == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col, /*satfinite=*/nullptr);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return {getFields(products[0]), getFields(products[1])};
}

void AttentionBackwardEmitter::storeGradScores(ArrayRef<Value> gradScores) {
  // The warp's 16 keys by 64 queries of dS into the tile: a swizzled row of
  // 64 queries per key.
  Value warpRow = mul(warp, index(16));
  for (int64_t n = 0; n < kScoreFragments; ++n) {
    for (int64_t half = 0; half < 2; ++half) {
      Value key = add(warpRow, add(fragmentRow, index(half * 8)));
      // Queries n*8.. are the row's piece n.
      Value piece =
          getSwizzledPiece(gradScoresShared, blockRows, key, index(n));
      const Value *pair = &gradScores[n * 4 + half * 2];
      LLVM::StoreOp::create(b, loc, roundPair(elementType, pair[0], pair[1]),
                            offset(piece, fragmentColumn), /*alignment=*/4);
    }
  }
  // wgmma reads through the async proxy, which must see these stores.
  fenceAsyncProxy();
  gpu::BarrierOp::create(b, loc);
}

void AttentionBackwardEmitter::addProductsWarpgroup(
    ArrayRef<Value> p, ArrayRef<Value> gradScores, Value columnBlock,
    Value stage, MutableArrayRef<Value> sums) {
  // Every lhs fragment is packed before the wgmmas' fence.
  auto pack = [&](ArrayRef<Value> values) {
    SmallVector<SmallVector<Value, 4>> fragments;
    for (int64_t k = 0; k < kBlockColumns; k += 16) {
      const Value *low = &values[(k / 8) * 4];
      const Value *high = low + 4;
      fragments.push_back({packPair(elementType, low[0], low[1]),
                           packPair(elementType, low[2], low[3]),
                           packPair(elementType, high[0], high[1]),
                           packPair(elementType, high[2], high[3])});
    }
    return fragments;
  };
  SmallVector<SmallVector<Value, 4>> pFragments = pack(p);
  SmallVector<SmallVector<Value, 4>> gradFragments = pack(gradScores);
  Value stageAddress = getAddress(getStageTile(stage, 0));
  // The columns are read transposed (N-major): their blocks of 64 elements
  // along the head lie a column block apart.
  auto multiply = [&](ArrayRef<SmallVector<Value, 4>> a, int64_t tile,
                      ArrayRef<Value> initial) {
    Value columnTile = plus(stageAddress, tile * getColumnTileElements() * 2);
    return multiplyRegisterLhs(
        elementType, head, initial, a, [&](int64_t step) {
          return getSwizzledDescriptor(
              plus(columnTile, step * 16 * kSwizzleRowBytes),
              kBlockColumns * kSwizzleRowBytes);
        });
  };
  Value gradValues = multiply(pFragments, 1, sums.take_back(getNumSums()));
  Value gradKeys = multiply(gradFragments, 0, sums.take_front(getNumSums()));

  // dQ's 64 queries by the warpgroup's half of the head, over every key of
  // the block: one bulk reduction per query and step for the block. dS is
  // read transposed (M-major), and so are the keys (N-major): the half
  // starts a block of 64 elements further with heads of 128, and inside
  // the swizzled rows with heads of 64 (the swizzle is of the addresses).
  Value firstElement = mul(getWarpgroup(), index(getQuerySumColumns()));
  Value keysAddress =
      add(getAddressInLoop(rowsShared),
          toI64(add(mul(div(firstElement, kSwizzleElements),
                        index(blockRows * kSwizzleRowBytes)),
                    mul(rem(firstElement, kSwizzleElements), index(2)))));
  Value scoresAddress = getAddressInLoop(gradScoresShared);
  MLIRContext *context = b.getContext();
  NVVM::WGMMATypes type = getWarpgroupType(elementType);
  auto sumsType = getWarpgroupSumsType(getQuerySumColumns() / 2);
  // (The first step ignores the sums, as in multiplyColumnsWarpgroup.)
  Value gradQueries = LLVM::UndefOp::create(b, loc, sumsType);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t k = 0; k < blockRows; k += 16) {
    Value lhs = getSwizzledDescriptor(plus(scoresAddress, k * kSwizzleRowBytes),
                                      blockRows * kSwizzleRowBytes);
    Value rhs = getSwizzledDescriptor(plus(keysAddress, k * kSwizzleRowBytes),
                                      blockRows * kSwizzleRowBytes);
    gradQueries = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, sumsType, gradQueries, lhs, rhs,
        NVVM::MMAShapeAttr::get(context, 64, getQuerySumColumns(), 16), type,
        type, NVVM::WGMMATypes::f32,
        k == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::col,
        NVVM::MMALayout::row, /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // (Waits for dV's and dK's products too.)
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  reduceQuerySums(getFields(gradQueries),
                  mul(columnBlock, index(kBlockColumns)), firstElement,
                  rem(columnBlock, kQuerySumStages));
  llvm::copy(getFields(gradKeys), sums.begin());
  llvm::copy(getFields(gradValues), sums.begin() + getNumSums());
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
                                    ValueRange extraArgs, Value querySums) {
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
  Value rowBlocks = arith::CeilDivUIOp::create(b, loc, rows, index(blockRows));
  Value blocks = mul(getProduct(b, loc, batchSizes), rowBlocks);
  // (Swizzled tiles start at a multiple of 1024 bytes: room to align.)
  int64_t sharedBytes =
      (2 * getRowTileElements() + 2 * getStageElements() +
       getGradScoreTileElements() + getQuerySumTileElements()) *
          2 +
      (warpgroup ? kSwizzleBytes : 0);

  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = createLaunch(
      b, loc,
      keysAndValues ? "attention_key_gradients" : "attention_query_gradients",
      blocks, index(getThreads()), order, extraArgs,
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
  Value firstRow = mul(rowBlock, index(blockRows));
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
      columnBlocks = getCausalKeyBlocks(columnBlocks, firstRow, blockRows,
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
    if (querySums) {
      for (int64_t half = 0; half < 2; ++half)
        rowOutside[half] = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::uge, getRow(half * 2), keys);
      // Counted in f32 elements.
      Value sumsGlobal = getPointer(querySums, NVVM::NVVMMemorySpace::Global);
      querySumsGlobal = LLVM::GEPOp::create(
          b, loc, sumsGlobal.getType(), b.getF32Type(), sumsGlobal,
          ValueRange{toI64(mul(batch, mul(queries, index(head))))});
    }
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
  rowsShared = warpgroup
                   ? LLVM::IntToPtrOp::create(b, loc, getSharedPointerType(),
                                              getSwizzledSharedAddress())
                   : getDynamicSharedPointer();
  columnsShared = offset(rowsShared, index(2 * getRowTileElements()));
  gradScoresShared = offset(columnsShared, index(2 * getStageElements()));
  querySumsShared = offset(gradScoresShared, index(getGradScoreTileElements()));
  for (int64_t tile = 0; tile < 2; ++tile)
    copyTile(rowGlobal[tile], rows, firstRow, blockRows,
             offset(rowsShared, index(tile * getRowTileElements())));
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
        // reuse. wgmma reads through the async proxy, which must see what
        // cp.async wrote.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
        // The bulk reductions of the block before the previous one have
        // read their sums, whose tile this block's overwrite.
        if (warpgroup) {
          NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, kQuerySumStages - 1,
                                               b.getUnitAttr());
          fenceAsyncProxy();
        }
        gpu::BarrierOp::create(b, loc);
        copyColumnBlock(add(columnBlock, index(1)));
        Value stage = rem(columnBlock, 2);
        SmallVector<Value> sums(carried);
        MutableArrayRef<Value> all(sums);
        if (warpgroup) {
          auto [x, y] = multiplyColumnsWarpgroup(stage);
          computeGradients(x, y, columnBlock, stage);
          storeGradScores(y);
          addProductsWarpgroup(x, y, columnBlock, stage, all);
          scf::YieldOp::create(b, loc, sums);
          return;
        }
        SmallVector<Value> x =
            multiplyColumns(rowsShared, getStageTile(stage, 0));
        SmallVector<Value> y =
            multiplyColumns(offset(rowsShared, index(getRowTileElements())),
                            getStageTile(stage, 1));
        computeGradients(x, y, columnBlock, stage);
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
  // be done before the kernel ends, and so must the bulk reductions.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (warpgroup)
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, UnitAttr());
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

/// Threads per block of the kernels that zero the query sums and round them,
/// and the elements of each thread's vector.
static constexpr int64_t kElementThreads = 256;
static constexpr int64_t kElementVector = 4;

/// A launch of a thread per kElementVector elements along the last
/// dimension of a buffer of `sizes` (a multiple of kElementVector), whose
/// body `emitVector` emits at the first element's indices.
static void
emitThreadPerVector(OpBuilder &b, Location loc, StringRef kind,
                    ArrayRef<Value> sizes, StreamOrder &order,
                    ValueRange extraArgs,
                    function_ref<void(ValueRange indices)> emitVector) {
  SmallVector<Value> vectorSizes(sizes);
  vectorSizes.back() = arith::DivUIOp::create(
      b, loc, vectorSizes.back(),
      arith::ConstantIndexOp::create(b, loc, kElementVector));
  Value total = getProduct(b, loc, vectorSizes);
  Value blocks = arith::CeilDivUIOp::create(
      b, loc, total, arith::ConstantIndexOp::create(b, loc, kElementThreads));
  OpBuilder::InsertionGuard guard(b);
  auto [launch, element] =
      createFlatLaunch(b, loc, kind, blocks,
                       arith::ConstantIndexOp::create(b, loc, kElementThreads),
                       order, extraArgs);
  b.setInsertionPointAfterValue(element);
  auto inside = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, element, total),
      /*withElse=*/false);
  b.setInsertionPointToStart(&inside.getThenRegion().front());
  SmallVector<Value> indices = delinearize(b, loc, element, vectorSizes);
  indices.back() = arith::MulIOp::create(
      b, loc, indices.back(),
      arith::ConstantIndexOp::create(b, loc, kElementVector));
  emitVector(indices);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

void mlir::kiln::emitAttentionBackwardKernels(
    OpBuilder &b, loop::AttentionBackwardOp node, ValueRange dests,
    IRMapping &mapping, StreamOrder &order, ValueRange extraArgs,
    bool warpgroupMma) {
  assert(loop::hasAttentionBackwardKernel(node) &&
         "no kernel for these gradients");
  auto queryType = cast<RankedTensorType>(node.getQuery().getType());
  int64_t head = queryType.getShape().back();
  if (!warpgroupMma || head % kSwizzleElements != 0 ||
      head > 2 * kSwizzleElements) {
    AttentionBackwardEmitter(b, node, mapping, /*keysAndValues=*/true)
        .emit(dests, order, extraArgs);
    AttentionBackwardEmitter(b, node, mapping, /*keysAndValues=*/false)
        .emit(dests, order, extraArgs);
    return;
  }

  // dQ / scale summed in f32 by the warpgroup kernel, then rounded.
  Location loc = node.getLoc();
  Value queryBuffer = mapping.lookup(node.getQuery());
  SmallVector<Value> sizes = getBufferSizes(b, loc, queryBuffer);
  Value sums = allocateLikeOnStream(b, loc, queryBuffer, sizes, b.getF32Type(),
                                    order, extraArgs);
  auto sumsType = VectorType::get({kElementVector}, b.getF32Type());
  emitThreadPerVector(b, loc, "attention_zero_query_sums", sizes, order,
                      extraArgs, [&](ValueRange indices) {
                        vector::StoreOp::create(
                            b, loc,
                            arith::ConstantOp::create(
                                b, loc, DenseElementsAttr::get(sumsType, 0.0f)),
                            AlignedViews(b, loc)(sums), indices);
                      });
  AttentionBackwardEmitter(b, node, mapping, /*keysAndValues=*/true,
                           /*warpgroup=*/true)
      .emit(dests, order, extraArgs, sums);
  Value scale = arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(static_cast<float>(node.getScale().convertToDouble())));
  Value scales = vector::BroadcastOp::create(b, loc, sumsType, scale);
  emitThreadPerVector(
      b, loc, "attention_round_query_gradients", sizes, order, extraArgs,
      [&](ValueRange indices) {
        AlignedViews align(b, loc);
        Value sum =
            vector::LoadOp::create(b, loc, sumsType, align(sums), indices);
        Value gradient = arith::TruncFOp::create(
            b, loc,
            VectorType::get({kElementVector}, queryType.getElementType()),
            arith::MulFOp::create(b, loc, sum, scales));
        vector::StoreOp::create(b, loc, gradient, align(dests[0]), indices);
      });
  deallocateOnStream(b, loc, sums, order, extraArgs);
}
