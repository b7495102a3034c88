//===- AttentionKernels.cpp - Flash attention on tensor cores -------------===//
//
// Part of Kiln. A loop.attention node (loop::hasAttentionKernel) runs as one
// kernel that never writes its scores (flash attention's forward pass).
//
// A block of 4 warps takes 128 queries of one batch and walks the keys in
// blocks of 64 (32 for head sizes above 64). The queries are copied into
// workgroup memory once; each block of keys and values with cp.async,
// double-buffered, so that the next block loads while this one multiplies.
// Each warp owns 32 queries. mma.sync m16n8k16 computes their scores
// against the block's keys in f32 (ldmatrix reads the keys as they are
// stored, [keys, head], which is the column-major operand the product
// needs). An online softmax keeps each row's running maximum and total:
// when the maximum grows, the sums so far are scaled down by the change.
// The probabilities, rounded to the operands' type, multiply the values
// straight from the score registers (an accumulator fragment's layout is
// the next product's operand's), the values read transposed by ldmatrix.
// The sums are divided by the rows' totals once, at the end.
//
// On sm_90a (`warpgroup-mma`), heads of a multiple of 64 multiply with
// Hopper's warpgroup MMA instead: two warpgroups of 64 queries each walk
// blocks of B keys, 64 for heads of 64 (two blocks fit an SM) and 128
// above. The tiles are stored as wgmma reads them, 128-byte swizzled (as
// in WarpgroupMatmulKernels.cpp). The scores are wgmma m64nBk16 of the
// queries' and keys' tiles; the probabilities' product is wgmma
// m64n<head>k16 with its lhs in registers (the probabilities' fragments,
// as with mma.sync), which NVVM's op lacks: it is the instruction itself,
// inline. The values are read transposed.
//
// Scores are in base 2: the scale is multiplied by log2(e) once, so that
// each probability is one FMA and one exp2. A scores region runs on each
// scaled score in registers (its loads at indices clamped to the
// sequences, their ends hidden after it, its functions approximate:
// tanh.approx for a soft cap) before the change of base. Only
// key blocks past the keys' end or crossing a causal diagonal mask their
// scores, and causal blocks stop at their last query's key; blocks take the
// longest causal rows first.
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
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The queries of a block.
constexpr int64_t kBlockQueries = 128;
/// Elements that pad each workgroup row of the mma.sync kernel, so that the
/// 8 rows an ldmatrix reads fall in distinct banks.
constexpr int64_t kPad = 8;

/// Emits one attention kernel (emitAttentionKernel).
class AttentionKernelEmitter : MatmulKernelBuilder {
public:
  AttentionKernelEmitter(OpBuilder &b, loop::AttentionOp node,
                         const IRMapping &mapping, bool warpgroupMma)
      : MatmulKernelBuilder(b, node.getLoc()), node(node), mapping(mapping),
        align(b, loc), kernelMapping(mapping) {
    auto queryType = cast<RankedTensorType>(node.getQuery().getType());
    elementType = queryType.getElementType();
    head = queryType.getShape().back();
    // Warpgroup MMA reads swizzled rows of 64 elements.
    warpgroup = warpgroupMma && head % kSwizzleElements == 0;
    warps = warpgroup ? 8 : 4;
    fragmentsM = kBlockQueries / (warps * 16);
    // Key blocks: with warpgroup MMA, 64 for heads of 64, which leaves
    // registers for two blocks on an SM (the one's softmax runs while the
    // other multiplies), 128 above, where workgroup memory holds one;
    // with mma.sync, 64, or 32 above a head of 64.
    if (warpgroup)
      blockKeys = head <= 64 ? 64 : 128;
    else
      blockKeys = head <= 64 ? 64 : 32;
    // Above 64, the queries' fragments would take 64 registers more: they
    // are read from workgroup memory for each block of keys instead.
    queriesInRegisters = !warpgroup && head <= 64;
  }

  /// Emits the kernel, storing the result into `dests[0]` and the
  /// logsumexp, if the node has one, into `dests[1]`.
  void emit(ValueRange dests, StreamOrder &order, ValueRange extraArgs);

private:
  int64_t getThreads() const { return warps * kWarpSize; }
  int64_t getWarpQueries() const { return 16 * fragmentsM; }
  int64_t getRowStride() const { return warpgroup ? head : head + kPad; }
  int64_t getKeyStageElements() const { return blockKeys * getRowStride(); }

  /// Copies rows [`firstRow`, `firstRow` + `tileRows`) of the matrix at
  /// `global` (!llvm.ptr<1>) of `rows` x head elements into workgroup
  /// memory at `shared` (!llvm.ptr<3>), zeros past its last row.
  void copyRows(Value global, Value rows, Value firstRow, int64_t tileRows,
                Value shared);

  /// The fragments that the warp's m16 fragment `m` of queries multiplies
  /// at head offset `k`, from workgroup memory.
  SmallVector<Value, 4> loadQueries(int64_t m, int64_t k);

  /// Adds the scores of the warp's queries against the key block in stage
  /// `stage` to `scores` (fragmentsM x blockKeys / 8 x 4 accumulators).
  void multiplyKeys(Value stage, ArrayRef<SmallVector<Value, 4>> queries,
                    SmallVectorImpl<Value> &scores);

  /// Adds the probabilities `p` (as `scores`) times the value block in
  /// stage `stage` to `sums` (fragmentsM x head / 8 x 4 accumulators).
  void multiplyValues(Value stage, ArrayRef<Value> p,
                      SmallVectorImpl<Value> &sums);

  /// The lhs fragments of the probabilities' product for keys `k` to `k` +
  /// 15 from the scores' registers `p` of m16 fragment `m`.
  SmallVector<Value, 4> packProbabilities(ArrayRef<Value> p, int64_t m,
                                          int64_t k);

  /// Issues the warpgroup kernel's wgmmas of the scores against the key
  /// block in stage `stage` and closes their group; returns their struct
  /// of blockKeys / 2 f32, to read once the group is done.
  Value issueScores(Value stage);

  /// Issues the warpgroup kernel's wgmmas that add the probabilities'
  /// lhs fragments `a` (one per 16 keys) times the value block in stage
  /// `stage` to `sums` and closes their group; returns their struct of
  /// head / 2 f32, to read once the group is done.
  Value issueValues(Value stage, ArrayRef<SmallVector<Value, 4>> a,
                    ArrayRef<Value> sums);

  /// The scores of key block `keyBlock` as the softmax takes them: scaled
  /// first where the scale is not positive or a region modifies them
  /// (modifyScores), -inf where hidden (keys past the end; with `causal`,
  /// keys after a row's query), tested only in blocks that hold any.
  SmallVector<Value> prepareScores(ArrayRef<Value> scores, Value keyBlock);

  /// Scales `scores` of the key block at `firstKey`, runs the scores
  /// region on each, and brings them to base 2.
  void modifyScores(SmallVectorImpl<Value> &scores, Value firstKey);

  /// Marks `afn` the soft cap's functions among `ops`, the scores region's
  /// copy: f32 tanh and divisions by a constant. Its scores only steer
  /// probabilities rounded to 16 bits, so kiln-nvvm-approximations may
  /// compute them with tanh.approx and the constant's reciprocal; other
  /// functions (logarithms of positions, powers) stay exact.
  static void approximate(llvm::iterator_range<Block::iterator> ops);

  /// The index of the query of score `e` of m16 fragment `m`, and of the
  /// key of score `e` of n8 fragment `n` in the block at `firstKey`.
  Value getScoreQuery(int64_t m, int64_t e) {
    return add(warpFirstQuery, add(fragmentRow, index(m * 16 + (e / 2) * 8)));
  }
  Value getScoreKey(Value firstKey, int64_t n, int64_t e) {
    return add(firstKey, add(fragmentColumn, index(n * 8 + e % 2)));
  }

  /// The online softmax of one block of `scores`, made probabilities in
  /// place: each row's new maximum and total in `maxima` and `totals` (rows
  /// g and g + 8 of each m16 fragment). Returns each row's factor for the
  /// sums so far (the change of its maximum).
  SmallVector<Value> applySoftmax(SmallVectorImpl<Value> &scores,
                                  SmallVectorImpl<Value> &maxima,
                                  SmallVectorImpl<Value> &totals);

  /// Multiplies each row's `sums` by its factor.
  void rescaleSums(SmallVectorImpl<Value> &sums, ArrayRef<Value> factors);

  /// Copies key block `keyBlock` and its values into its stage, if there
  /// is such a block, and closes a group of copies.
  void copyKeyBlock(Value keyBlock);

  /// The loop over key blocks, carrying the sums, each row's maximum and
  /// total (`initial`); returns them after the last block.
  SmallVector<Value> emitLoop(ArrayRef<SmallVector<Value, 4>> queryFragments,
                              ArrayRef<Value> initial);

  /// Key and value blocks in workgroup memory: the one multiplied and the
  /// next one, loading.
  int64_t getStages() const { return 2; }
  int64_t getNumSums() const { return fragmentsM * head / 2; }
  int64_t getNumRows() const { return fragmentsM * 2; }

  /// The workgroup byte address (i64) of `pointer` (!llvm.ptr<3>).
  Value getAddress(Value pointer) {
    return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointer);
  }

  /// Stores the logsumexp of `query`'s row, of running maximum `maximum`
  /// and total `total` (combined across its quad), into `target`.
  void storeLogsumexp(Value target, Value query, Value maximum, Value total);

  /// Combines `value` across the 4 lanes that hold a row's scores.
  Value combineQuad(Value value, bool isMax);

  loop::AttentionOp node;
  const IRMapping &mapping;
  AlignedViews align;
  /// The scores region's loads, mapped to aligned views inside the kernel.
  IRMapping kernelMapping;
  Type elementType;
  int64_t head, blockKeys;
  /// Whether the products are warpgroup MMAs (sm_90a): two warpgroups of 64
  /// queries each, else 4 warps of 32 queries with mma.sync.
  bool warpgroup;
  int64_t warps, fragmentsM;
  bool queriesInRegisters;
  /// The thread's index in the block, its lane and warp; the row (g) and column
  /// pair (2c) of an accumulator fragment the lane holds.
  Value thread, lane, warp, fragmentRow, fragmentColumn;
  /// Each lane's ldmatrix address within a 16x16 fragment, in elements: of
  /// an operand read as stored (queries, values), and of keys.
  Value laneOffset, keyLaneOffset;
  Value queriesShared, keysShared, valuesShared;
  /// The queries and keys (their counts), the key blocks the block walks,
  /// and their matrices in global memory (!llvm.ptr<1>).
  Value queries, keys, keyBlocks, keyGlobal, valueGlobal;
  /// The block's batch indices.
  SmallVector<Value> batchIvs;
  /// The warp's first query.
  Value warpFirstQuery;
  /// The factor of the scores in base 2 (applied in the exponent, or first
  /// where not positive or a region modifies them: scaleFirst), and
  /// constants.
  double scaleLog2;
  bool scaleFirst;
  Value scale, zero, minusInfinity;
};
} // namespace

void AttentionKernelEmitter::copyRows(Value global, Value rows, Value firstRow,
                                      int64_t tileRows, Value shared) {
  copyTileRows(global, rows, head, firstRow, tileRows, thread, getThreads(),
               [&](Value row, Value piece) {
                 return getTilePiece(shared, tileRows, warpgroup,
                                     getRowStride(), row, piece);
               });
}

SmallVector<Value, 4> AttentionKernelEmitter::loadQueries(int64_t m,
                                                          int64_t k) {
  Value row = add(mul(warp, index(getWarpQueries())), index(m * 16));
  Value element =
      add(add(mul(row, index(getRowStride())), index(k)), laneOffset);
  return loadMatrices(offset(queriesShared, element), /*transposed=*/false);
}

void AttentionKernelEmitter::multiplyKeys(
    Value stage, ArrayRef<SmallVector<Value, 4>> queries,
    SmallVectorImpl<Value> &scores) {
  if (warpgroup) {
    Value issued = issueScores(stage);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    for (int64_t i = 0; i < blockKeys / 2; ++i)
      scores[i] = LLVM::ExtractValueOp::create(b, loc, issued, i);
    return;
  }
  int64_t fragmentsN = blockKeys / 8;
  Value stageStart =
      add(mul(stage, index(getKeyStageElements())), keyLaneOffset);
  for (int64_t k = 0; k < head; k += 16) {
    SmallVector<SmallVector<Value, 4>> a;
    for (int64_t m = 0; m < fragmentsM; ++m)
      a.push_back(queriesInRegisters ? queries[m * (head / 16) + k / 16]
                                     : loadQueries(m, k));
    // One ldmatrix reads the keys of two n8 fragments: their rows are the
    // product's columns.
    for (int64_t n = 0; n < fragmentsN; n += 2) {
      SmallVector<Value, 4> keys = loadMatrices(
          offset(keysShared,
                 add(stageStart, index(n * 8 * getRowStride() + k))),
          /*transposed=*/false);
      for (int64_t m = 0; m < fragmentsM; ++m)
        for (int64_t half = 0; half < 2; ++half)
          multiplyFragment(elementType, a[m],
                           ArrayRef<Value>(keys).slice(half * 2, 2),
                           MutableArrayRef<Value>(
                               &scores[(m * fragmentsN + n + half) * 4], 4));
    }
  }
}

SmallVector<Value, 4>
AttentionKernelEmitter::packProbabilities(ArrayRef<Value> p, int64_t m,
                                          int64_t k) {
  // The score fragments of keys k..k+7 and k+8..k+15 are the lhs fragment
  // of the probabilities' product: rows g and g + 8 of each.
  const Value *low = &p[(m * (blockKeys / 8) + k / 8) * 4];
  const Value *high = low + 4;
  return {packPair(elementType, low[0], low[1]),
          packPair(elementType, low[2], low[3]),
          packPair(elementType, high[0], high[1]),
          packPair(elementType, high[2], high[3])};
}

void AttentionKernelEmitter::multiplyValues(Value stage, ArrayRef<Value> p,
                                            SmallVectorImpl<Value> &sums) {
  if (warpgroup) {
    // Every lhs fragment is packed before the wgmmas' fence, so that none
    // reads registers written after it.
    SmallVector<SmallVector<Value, 4>> a;
    for (int64_t k = 0; k < blockKeys; k += 16)
      a.push_back(packProbabilities(p, 0, k));
    Value issued = issueValues(stage, a, sums);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    for (int64_t i = 0, e = sums.size(); i < e; ++i)
      sums[i] = LLVM::ExtractValueOp::create(b, loc, issued, i);
    return;
  }
  int64_t fragmentsHead = head / 8;
  Value stageStart = add(mul(stage, index(getKeyStageElements())), laneOffset);
  for (int64_t k = 0; k < blockKeys; k += 16) {
    SmallVector<SmallVector<Value, 4>> a;
    for (int64_t m = 0; m < fragmentsM; ++m)
      a.push_back(packProbabilities(p, m, k));
    for (int64_t n = 0; n < fragmentsHead; n += 2) {
      SmallVector<Value, 4> values = loadMatrices(
          offset(valuesShared,
                 add(stageStart, index(k * getRowStride() + n * 8))),
          /*transposed=*/true);
      for (int64_t m = 0; m < fragmentsM; ++m)
        for (int64_t half = 0; half < 2; ++half)
          multiplyFragment(elementType, a[m],
                           ArrayRef<Value>(values).slice(half * 2, 2),
                           MutableArrayRef<Value>(
                               &sums[(m * fragmentsHead + n + half) * 4], 4));
    }
  }
}

Value AttentionKernelEmitter::issueScores(Value stage) {
  MLIRContext *context = b.getContext();
  NVVM::WGMMATypes type = getWarpgroupType(elementType);
  auto sumsType = getWarpgroupSumsType(blockKeys / 2);
  Value sums = LLVM::ZeroOp::create(b, loc, sumsType);
  // The warpgroup's 64 queries, and the stage's keys; both K-major, the
  // head in blocks of 64 elements.
  Value queries = add(getAddress(queriesShared),
                      toI64(mul(div(warp, 4), index(64 * kSwizzleRowBytes))));
  Value keys = add(getAddress(keysShared),
                   toI64(mul(stage, index(getKeyStageElements() * 2))));
  auto plus = [&](Value address, int64_t bytes) {
    return add(address, arith::ConstantIntOp::create(b, loc, bytes, 64));
  };
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t k = 0; k < head; k += 16) {
    int64_t block = k / kSwizzleElements, inRow = (k % kSwizzleElements) * 2;
    Value lhs = getSwizzledDescriptor(
        plus(queries, block * kBlockQueries * kSwizzleRowBytes + inRow), 16);
    Value rhs = getSwizzledDescriptor(
        plus(keys, block * blockKeys * kSwizzleRowBytes + inRow), 16);
    sums = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, sumsType, sums, lhs, rhs,
        NVVM::MMAShapeAttr::get(context, 64, blockKeys, 16), type, type,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return sums;
}

Value AttentionKernelEmitter::issueValues(Value stage,
                                          ArrayRef<SmallVector<Value, 4>> a,
                                          ArrayRef<Value> sums) {
  // The values are read transposed (N-major): their blocks of 64 elements
  // along the head lie a block of keys apart.
  Value values = add(getAddress(valuesShared),
                     toI64(mul(stage, index(getKeyStageElements() * 2))));
  return multiplyRegisterLhs(elementType, head, sums, a, [&](int64_t step) {
    return getSwizzledDescriptor(
        add(values, arith::ConstantIntOp::create(
                        b, loc, step * 16 * kSwizzleRowBytes, 64)),
        blockKeys * kSwizzleRowBytes);
  });
}

Value AttentionKernelEmitter::combineQuad(Value value, bool isMax) {
  Value width = arith::ConstantIntOp::create(b, loc, kWarpSize, 32);
  for (int64_t distance : {1, 2}) {
    Value other =
        gpu::ShuffleOp::create(
            b, loc, value, arith::ConstantIntOp::create(b, loc, distance, 32),
            width, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    value = isMax ? arith::MaximumFOp::create(b, loc, value, other).getResult()
                  : arith::AddFOp::create(b, loc, value, other).getResult();
  }
  return value;
}

void AttentionKernelEmitter::copyKeyBlock(Value keyBlock) {
  auto ifBlock =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              keyBlock, keyBlocks),
                        /*withElse=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(&ifBlock.getThenRegion().front());
    Value stageStart =
        mul(rem(keyBlock, getStages()), index(getKeyStageElements()));
    Value firstKey = mul(keyBlock, index(blockKeys));
    copyRows(keyGlobal, keys, firstKey, blockKeys,
             offset(keysShared, stageStart));
    copyRows(valueGlobal, keys, firstKey, blockKeys,
             offset(valuesShared, stageStart));
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

SmallVector<Value> AttentionKernelEmitter::prepareScores(ArrayRef<Value> raw,
                                                         Value keyBlock) {
  SmallVector<Value> scores(raw);
  int64_t fragmentsN = blockKeys / 8;
  Value firstKey = mul(keyBlock, index(blockKeys));
  if (node.hasScoreModifier()) {
    modifyScores(scores, firstKey);
  } else if (scaleFirst) {
    Value factor = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(scaleLog2)));
    for (Value &score : scores)
      score = arith::MulFOp::create(b, loc, score, factor);
  }
  Value blockEnd = add(firstKey, index(blockKeys));
  Value masks =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, blockEnd, keys);
  if (node.getCausal())
    masks = arith::OrIOp::create(
        b, loc, masks,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, blockEnd,
                              add(warpFirstQuery, index(1))));
  auto masked = scf::IfOp::create(
      b, loc, TypeRange(SmallVector<Type>(scores.size(), b.getF32Type())),
      masks, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard ifGuard(b);
  b.setInsertionPointToStart(&masked.getThenRegion().front());
  SmallVector<Value> hidden(scores);
  for (int64_t m = 0; m < fragmentsM; ++m) {
    for (int64_t n = 0; n < fragmentsN; ++n) {
      for (int64_t e = 0; e < 4; ++e) {
        Value key = getScoreKey(firstKey, n, e);
        Value hide =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, key, keys);
        if (node.getCausal())
          hide = arith::OrIOp::create(
              b, loc, hide,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, key,
                                    getScoreQuery(m, e)));
        Value &score = hidden[(m * fragmentsN + n) * 4 + e];
        score = arith::SelectOp::create(b, loc, hide, minusInfinity, score);
      }
    }
  }
  scf::YieldOp::create(b, loc, hidden);
  b.setInsertionPointToStart(&masked.getElseRegion().front());
  scf::YieldOp::create(b, loc, scores);
  return SmallVector<Value>(masked.getResults());
}

void AttentionKernelEmitter::approximate(
    llvm::iterator_range<Block::iterator> ops) {
  auto addApproximate = [](Operation *op, arith::FastMathFlags flags) {
    op->setAttr(cast<arith::ArithFastMathInterface>(op).getFastMathAttrName(),
                arith::FastMathFlagsAttr::get(
                    op->getContext(), flags | arith::FastMathFlags::afn));
  };
  for (Operation &op : ops)
    op.walk([&](Operation *nested) {
      if (auto tanh = dyn_cast<math::TanhOp>(nested))
        addApproximate(tanh, tanh.getFastmath());
      else if (auto divide = dyn_cast<arith::DivFOp>(nested);
               divide && matchPattern(divide.getRhs(), m_Constant()))
        addApproximate(divide, divide.getFastmath());
    });
}

void AttentionKernelEmitter::modifyScores(SmallVectorImpl<Value> &scores,
                                          Value firstKey) {
  int64_t fragmentsN = blockKeys / 8;
  Value factor = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(llvm::numbers::log2ef));
  Value nodeScale = arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(static_cast<float>(node.getScale().convertToDouble())));
  Block &body = node.getScores().front();
  // Rows past the queries' end and keys past the keys' end are computed
  // too, and dropped: their loads read the last row's and key's elements.
  Value one = index(1);
  Value lastQuery = arith::SubIOp::create(b, loc, queries, one);
  Value lastKey = arith::SubIOp::create(b, loc, keys, one);
  for (int64_t m = 0; m < fragmentsM; ++m) {
    Value rows[2];
    for (int64_t half = 0; half < 2; ++half)
      rows[half] =
          arith::MinUIOp::create(b, loc, getScoreQuery(m, half * 2), lastQuery);
    for (int64_t n = 0; n < fragmentsN; ++n) {
      for (int64_t e = 0; e < 4; ++e) {
        SmallVector<Value> arguments(batchIvs);
        arguments.push_back(rows[e / 2]);
        arguments.push_back(arith::MinUIOp::create(
            b, loc, getScoreKey(firstKey, n, e), lastKey));
        Value &score = scores[(m * fragmentsN + n) * 4 + e];
        arguments.push_back(arith::MulFOp::create(b, loc, score, nodeScale));
        // The region's copy: the ops after the block's last one so far.
        Block *block = b.getInsertionBlock();
        Operation *last = b.getInsertionPoint() == block->begin()
                              ? nullptr
                              : &*std::prev(b.getInsertionPoint());
        Value modified = emitBodyValue(b, body, kernelMapping, arguments);
        approximate(llvm::make_range(last ? std::next(last->getIterator())
                                          : block->begin(),
                                     b.getInsertionPoint()));
        score = arith::MulFOp::create(b, loc, modified, factor);
      }
    }
  }
}

SmallVector<Value>
AttentionKernelEmitter::applySoftmax(SmallVectorImpl<Value> &scores,
                                     SmallVectorImpl<Value> &maxima,
                                     SmallVectorImpl<Value> &totals) {
  int64_t fragmentsN = blockKeys / 8;
  SmallVector<Value> factors;
  for (int64_t m = 0; m < fragmentsM; ++m) {
    for (int64_t half = 0; half < 2; ++half) {
      auto scoreAt = [&](int64_t n, int64_t e) -> Value & {
        return scores[(m * fragmentsN + n) * 4 + half * 2 + e];
      };
      Value rowMax = scoreAt(0, 0);
      for (int64_t n = 0; n < fragmentsN; ++n)
        for (int64_t e = 0; e < 2; ++e)
          if (n || e)
            rowMax = arith::MaximumFOp::create(b, loc, rowMax, scoreAt(n, e));
      rowMax = combineQuad(rowMax, /*isMax=*/true);
      Value &maximum = maxima[m * 2 + half];
      Value newMax = arith::MaximumFOp::create(b, loc, maximum, rowMax);
      // A row with every key so far hidden subtracts 0, not -inf.
      Value base = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                                minusInfinity),
          zero, arith::MulFOp::create(b, loc, newMax, scale));
      Value negativeBase = arith::NegFOp::create(b, loc, base);
      Value factor = math::Exp2Op::create(
          b, loc, math::FmaOp::create(b, loc, maximum, scale, negativeBase));
      maximum = newMax;
      Value total = arith::MulFOp::create(b, loc, totals[m * 2 + half], factor);
      for (int64_t n = 0; n < fragmentsN; ++n) {
        for (int64_t e = 0; e < 2; ++e) {
          Value &score = scoreAt(n, e);
          score = math::Exp2Op::create(
              b, loc, math::FmaOp::create(b, loc, score, scale, negativeBase));
          total = arith::AddFOp::create(b, loc, total, score);
        }
      }
      totals[m * 2 + half] = total;
      factors.push_back(factor);
    }
  }
  return factors;
}

void AttentionKernelEmitter::rescaleSums(SmallVectorImpl<Value> &sums,
                                         ArrayRef<Value> factors) {
  int64_t fragmentsHead = head / 8;
  for (int64_t m = 0; m < fragmentsM; ++m)
    for (int64_t n = 0; n < fragmentsHead; ++n)
      for (int64_t e = 0; e < 4; ++e) {
        Value &sum = sums[(m * fragmentsHead + n) * 4 + e];
        sum = arith::MulFOp::create(b, loc, sum, factors[m * 2 + e / 2]);
      }
}

SmallVector<Value>
AttentionKernelEmitter::emitLoop(ArrayRef<SmallVector<Value, 4>> queryFragments,
                                 ArrayRef<Value> initial) {
  int64_t numSums = getNumSums(), numRows = getNumRows();
  auto loop = scf::ForOp::create(
      b, loc, index(0), keyBlocks, index(1), initial,
      [&](OpBuilder &nested, Location, Value keyBlock, ValueRange carried) {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        // This block's copies are done; after the barrier every thread's
        // are, and every warp has multiplied the previous block, whose
        // stage the next block's copies reuse. wgmma reads through the
        // async proxy, which must see what cp.async wrote.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
        if (warpgroup)
          NVVM::FenceProxyOp::create(
              b, loc, NVVM::ProxyKind::async_shared,
              NVVM::SharedSpaceAttr::get(b.getContext(),
                                         NVVM::SharedSpace::shared_cta));
        gpu::BarrierOp::create(b, loc);
        copyKeyBlock(add(keyBlock, index(1)));
        Value stage = rem(keyBlock, getStages());
        SmallVector<Value> scores(fragmentsM * blockKeys / 2, zero);
        multiplyKeys(stage, queryFragments, scores);
        scores = prepareScores(scores, keyBlock);
        SmallVector<Value> sums(carried.take_front(numSums));
        SmallVector<Value> maxima(carried.slice(numSums, numRows));
        SmallVector<Value> totals(carried.take_back(numRows));
        rescaleSums(sums, applySoftmax(scores, maxima, totals));
        multiplyValues(stage, scores, sums);
        SmallVector<Value> results(sums);
        results.append(maxima);
        results.append(totals);
        scf::YieldOp::create(b, loc, results);
      });
  return SmallVector<Value>(loop.getResults());
}

void AttentionKernelEmitter::emit(ValueRange dests, StreamOrder &order,
                                  ValueRange extraArgs) {
  Value queryBuffer = mapping.lookup(node.getQuery());
  Value keyBuffer = mapping.lookup(node.getKey());
  Value valueBuffer = mapping.lookup(node.getValue());
  int64_t batchDims = node.getNumBatchDims();
  SmallVector<Value> batchSizes;
  for (int64_t dim = 0; dim < batchDims; ++dim)
    batchSizes.push_back(memref::DimOp::create(b, loc, queryBuffer, dim));
  queries = memref::DimOp::create(b, loc, queryBuffer, batchDims);
  keys = memref::DimOp::create(b, loc, keyBuffer, batchDims);
  Value queryBlocks =
      arith::CeilDivUIOp::create(b, loc, queries, index(kBlockQueries));
  Value blocks = mul(getProduct(b, loc, batchSizes), queryBlocks);
  int64_t queryElements = kBlockQueries * getRowStride();
  int64_t keyElements = getStages() * getKeyStageElements();
  // (Swizzled tiles start at a multiple of 1024 bytes: room to align.)
  int64_t sharedBytes = (queryElements + 2 * keyElements) *
                            elementType.getIntOrFloatBitWidth() / 8 +
                        (warpgroup ? kSwizzleBytes : 0);

  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = createLaunch(
      b, loc, "attention", blocks, index(getThreads()), order, extraArgs,
      arith::ConstantIntOp::create(b, loc, sharedBytes, 32));
  b.setInsertionPointToStart(&launch.getBody().front());
  align.alignSources(node, mapping, kernelMapping);
  thread = launch.getThreadIds().x;
  FragmentLanes lanes = getFragmentLanes(thread, getRowStride());
  lane = lanes.lane;
  warp = lanes.warp;
  fragmentRow = lanes.row;
  fragmentColumn = lanes.column;
  // Keys' rows are the product's columns.
  laneOffset = lanes.operandOffset;
  keyLaneOffset = lanes.columnsOffset;

  // The longest causal rows first: they take the most key blocks.
  Value batch, queryBlock;
  std::tie(batch, queryBlock) =
      splitBlock(launch.getBlockIds().x, queryBlocks, node.getCausal());
  batchIvs = delinearize(b, loc, batch, batchSizes);
  Value firstQuery = mul(queryBlock, index(kBlockQueries));
  warpFirstQuery = add(firstQuery, mul(warp, index(getWarpQueries())));
  keyBlocks = arith::CeilDivUIOp::create(b, loc, keys, index(blockKeys));
  if (node.getCausal())
    keyBlocks = getCausalKeyBlocks(keyBlocks, firstQuery, kBlockQueries,
                                   queries, blockKeys);

  auto globalMatrix = [&](Value buffer, Value rows) {
    return getBatchMatrix(align(buffer), batch, rows, head);
  };
  Value queryGlobal = globalMatrix(queryBuffer, queries);
  keyGlobal = globalMatrix(keyBuffer, keys);
  valueGlobal = globalMatrix(valueBuffer, keys);
  queriesShared = warpgroup
                      ? LLVM::IntToPtrOp::create(b, loc, getSharedPointerType(),
                                                 getSwizzledSharedAddress())
                      : getDynamicSharedPointer();
  keysShared = offset(queriesShared, index(queryElements));
  valuesShared = offset(keysShared, index(keyElements));

  zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  minusInfinity = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  // Scores in base 2. A positive scale keeps the maxima of raw scores and
  // scales in the exponent, one FMA per score; another scales them first.
  scaleLog2 = node.getScale().convertToDouble() / std::log(2.0);
  scaleFirst = !(scaleLog2 > 0) || node.hasScoreModifier();
  scale = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(scaleFirst ? 1.0f : float(scaleLog2)));

  copyRows(queryGlobal, queries, firstQuery, kBlockQueries, queriesShared);
  copyKeyBlock(index(0));
  SmallVector<SmallVector<Value, 4>> queryFragments;
  if (queriesInRegisters) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    gpu::BarrierOp::create(b, loc);
    for (int64_t m = 0; m < fragmentsM; ++m)
      for (int64_t k = 0; k < head; k += 16)
        queryFragments.push_back(loadQueries(m, k));
  }
  // The sums, then each row's running maximum and total (thread partial).
  int64_t numSums = getNumSums(), numRows = getNumRows();
  SmallVector<Value> initial(numSums, zero);
  initial.append(numRows, minusInfinity);
  initial.append(numRows, zero);
  SmallVector<Value> results = emitLoop(queryFragments, initial);

  // Each row's sums over its total (0 for a row without keys), rounded and
  // stored a pair of columns at a time; its logsumexp, where asked for, by
  // the first lane of its quad.
  Value target = align(dests[0]);
  Value logsumexpTarget = dests.size() > 1 ? align(dests[1]) : Value();
  int64_t fragmentsHead = head / 8;
  for (int64_t m = 0; m < fragmentsM; ++m) {
    for (int64_t half = 0; half < 2; ++half) {
      Value total = combineQuad(results[numSums + numRows + m * 2 + half],
                                /*isMax=*/false);
      Value inverse = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, total, zero),
          arith::DivFOp::create(
              b, loc,
              arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f)),
              total),
          zero);
      Value query = getScoreQuery(m, half * 2);
      auto inside = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, query,
                                queries),
          /*withElse=*/false);
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&inside.getThenRegion().front());
      for (int64_t n = 0; n < fragmentsHead; ++n) {
        int64_t first = (m * fragmentsHead + n) * 4 + half * 2;
        Value pair = roundPair(
            elementType, arith::MulFOp::create(b, loc, results[first], inverse),
            arith::MulFOp::create(b, loc, results[first + 1], inverse));
        SmallVector<Value> indices(batchIvs);
        indices.push_back(query);
        indices.push_back(add(fragmentColumn, index(n * 8)));
        vector::StoreOp::create(b, loc, pair, target, indices);
      }
      if (logsumexpTarget) {
        Value maximum = results[numSums + m * 2 + half];
        storeLogsumexp(logsumexpTarget, query, maximum, total);
      }
    }
  }
  gpu::TerminatorOp::create(b, loc);
}

void AttentionKernelEmitter::storeLogsumexp(Value target, Value query,
                                            Value maximum, Value total) {
  // In base 2 the row's maximum is maximum * scale; a row without keys
  // (a total of 0) is +inf, so that the gradients' probabilities are 0.
  Value log2Sum = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, maximum, scale),
      math::Log2Op::create(b, loc, total));
  Value logsumexp = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, total, zero),
      arith::MulFOp::create(
          b, loc, log2Sum,
          arith::ConstantOp::create(b, loc,
                                    b.getF32FloatAttr(llvm::numbers::ln2f))),
      arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(std::numeric_limits<float>::infinity())));
  auto first =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              fragmentColumn, index(0)),
                        /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&first.getThenRegion().front());
  SmallVector<Value> indices(batchIvs);
  indices.push_back(query);
  memref::StoreOp::create(b, loc, logsumexp, target, indices);
}

void mlir::kiln::emitAttentionKernel(OpBuilder &b, loop::AttentionOp node,
                                     ValueRange dests, IRMapping &mapping,
                                     StreamOrder &order, ValueRange extraArgs,
                                     bool warpgroupMma) {
  assert(loop::hasAttentionKernel(node) && "no kernel for this attention");
  AttentionKernelEmitter(b, node, mapping, warpgroupMma)
      .emit(dests, order, extraArgs);
}
