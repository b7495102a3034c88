//===- MatmulKernels.cpp - Matrix products on tensor cores ----------------===//
//
// Part of Kiln. With `matmul-kernels`, a loop.matmul of 16-bit operands
// (loop::isTensorCoreProduct) runs as a kernel of Kiln's own instead of a
// GEMM library call, its epilogue applied to the sums in registers: a bias,
// an activation, a residual and the rounding cost no pass over memory.
//
// The kernel is Ampere's (sm_80; later chips run it too). A block of 4
// warps computes a 128x128 tile of the result in steps of 32 along K. The
// operand tiles of each step are copied into dynamic workgroup memory with
// cp.async, four stages deep, so that three steps' tiles load while one
// step's multiply. Each warp takes a 64x64 quarter of the tile: ldmatrix
// reads its fragments (transposing those of operands stored along K) and
// mma.sync m16n8k16 accumulates them in f32. Workgroup rows are padded by
// 16 bytes, so that the 8 rows an ldmatrix reads fall in distinct banks.
// Blocks take their tiles in groups of 8 rows of tiles, so that blocks
// running together share their operands' tiles in L2.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"
#include "MatmulKernelSupport.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The block's tile of the result and its step along K.
constexpr int64_t kTileM = 128, kTileN = 128, kTileK = 32;
/// The block's warps, as a grid over the tile; each computes a 64x64 part.
constexpr int64_t kWarpsM = 2, kWarpsN = 2;
constexpr int64_t kWarpTileM = kTileM / kWarpsM, kWarpTileN = kTileN / kWarpsN;
constexpr int64_t kThreads = kWarpsM * kWarpsN * kWarpSize;
/// mma.sync's shape: m16n8k16.
constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;
constexpr int64_t kFragmentsM = kWarpTileM / kMmaM;
constexpr int64_t kFragmentsN = kWarpTileN / kMmaN;
/// Operand tiles in workgroup memory: the one multiplied and those loading.
constexpr int64_t kStages = 4;
/// 16-bit elements per row of an 8x8 ldmatrix matrix.
constexpr int64_t kChunk = 8;
/// Elements that pad each workgroup row.
constexpr int64_t kPad = 8;

/// One operand as its tiles are stored: in global memory, a matrix per
/// batch of `rows` rows of `cols` contiguous elements; in workgroup memory,
/// `kStages` tiles of `tileRows` x `tileCols` (padded) elements.
struct OperandTiles {
  /// The first element in global memory (!llvm.ptr<1>), and in workgroup
  /// memory (!llvm.ptr<3>).
  Value global, shared;
  Value rows, cols;
  /// Whether the stored rows run along K (a transposed lhs, an rhs stored
  /// [K, N]); else along M or N.
  bool rowsAlongK;
  int64_t tileRows, tileCols;
  /// The lane's row and column within a 16x16 fragment (its ldmatrix
  /// address), along M or N and along K.
  Value laneOuter, laneK;

  int64_t getRowStride() const { return tileCols + kPad; }
  int64_t getStageElements() const { return tileRows * getRowStride(); }
};

/// Emits one tensor-core product (emitTensorCoreMatmul).
class TensorCoreMatmulEmitter : MatmulKernelEmitter {
public:
  TensorCoreMatmulEmitter(OpBuilder &b, loop::MatmulOp node,
                          const IRMapping &mapping)
      : MatmulKernelEmitter(b, node, mapping) {}

  void emit(Value dest, StreamOrder &order, ValueRange extraArgs);

private:
  /// Sets up `tiles` for the operand `buffer` whose stored rows are `rows`
  /// of `cols` elements, its stages at `shared` (!llvm.ptr<3>).
  OperandTiles makeTiles(Value buffer, Value shared, Value rows, Value cols,
                         bool rowsAlongK, bool isLhs);

  /// Issues the copies of the block's tile at (`outer`, `k`) of `tiles`
  /// (the first row along M or N of the block, the first along K) for
  /// batch `batch` into workgroup stage `stage`.
  void copyTile(const OperandTiles &tiles, Value batch, Value outer, Value k,
                Value stage);

  /// The ldmatrix of the 16x16 fragment of `tiles` at (`outer`, `k`) in
  /// stage `stage`: 4 registers of packed pairs.
  SmallVector<Value, 4> loadFragment(const OperandTiles &tiles, Value stage,
                                     Value outer, int64_t k);

  /// Multiplies the tiles in stage `stage` into `sums` (kFragmentsM x
  /// kFragmentsN x 4 accumulators, in that order).
  void multiplyStage(Value stage, SmallVectorImpl<Value> &sums);

  /// Stores the warp's sums, through the epilogue, to `dest`.
  void storeSums(ArrayRef<Value> sums, Value dest, ArrayRef<Value> batchIvs,
                 Value firstRow, Value firstColumn);

  Value lane, warpM, warpN;
  OperandTiles lhs, rhs;
};
} // namespace

OperandTiles TensorCoreMatmulEmitter::makeTiles(Value buffer, Value shared,
                                                Value rows, Value cols,
                                                bool rowsAlongK, bool isLhs) {
  OperandTiles tiles;
  tiles.global = getPointer(align(buffer), NVVM::NVVMMemorySpace::Global);
  tiles.shared = shared;
  tiles.rows = rows;
  tiles.cols = cols;
  tiles.rowsAlongK = rowsAlongK;
  int64_t outerTile = isLhs ? kTileM : kTileN;
  tiles.tileRows = rowsAlongK ? kTileK : outerTile;
  tiles.tileCols = rowsAlongK ? outerTile : kTileK;
  // ldmatrix x4 reads four 8x8 matrices, lanes 8q..8q+7 giving the rows of
  // matrix q. The lhs fragment's registers are (rows 0-7, k 0-7), (rows
  // 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15); the rhs pair's,
  // (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
  Value quarter = arith::DivUIOp::create(b, loc, lane, index(kChunk));
  Value row = arith::RemUIOp::create(b, loc, lane, index(kChunk));
  Value low = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, quarter, index(2)), index(kChunk));
  Value high = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, quarter, index(2)), index(kChunk));
  Value outerBlock = isLhs ? low : high;
  Value kBlock = isLhs ? high : low;
  // The lane addresses a row of the stored matrix: along K when the rows
  // run along K (read transposed), else along M or N.
  if (rowsAlongK) {
    tiles.laneOuter = outerBlock;
    tiles.laneK = arith::AddIOp::create(b, loc, kBlock, row);
  } else {
    tiles.laneOuter = arith::AddIOp::create(b, loc, outerBlock, row);
    tiles.laneK = kBlock;
  }
  return tiles;
}

void TensorCoreMatmulEmitter::copyTile(const OperandTiles &tiles, Value batch,
                                       Value outer, Value kStart, Value stage) {
  int64_t piecesPerRow = tiles.tileCols / kCopyElements;
  int64_t pieces = tiles.tileRows * piecesPerRow;
  Value firstRow = tiles.rowsAlongK ? kStart : outer;
  Value firstCol = tiles.rowsAlongK ? outer : kStart;
  Value matrix = offset(tiles.global, mul(batch, mul(tiles.rows, tiles.cols)));
  Value stageStart = mul(stage, index(tiles.getStageElements()));
  for (int64_t first = 0; first < pieces; first += kThreads) {
    Value piece = add(thread, index(first));
    Value row = div(piece, piecesPerRow);
    Value col = mul(rem(piece, piecesPerRow), index(kCopyElements));
    Value target = offset(
        tiles.shared,
        add(stageStart, add(mul(row, index(tiles.getRowStride())), col)));
    copyPiece(matrix, tiles.rows, tiles.cols, add(firstRow, row),
              add(firstCol, col), target);
  }
}

SmallVector<Value, 4>
TensorCoreMatmulEmitter::loadFragment(const OperandTiles &tiles, Value stage,
                                      Value outer, int64_t kOffset) {
  Value laneOuter = arith::AddIOp::create(b, loc, outer, tiles.laneOuter);
  Value laneK = arith::AddIOp::create(b, loc, tiles.laneK, index(kOffset));
  Value row = tiles.rowsAlongK ? laneK : laneOuter;
  Value col = tiles.rowsAlongK ? laneOuter : laneK;
  Value element = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, stage, index(tiles.getStageElements())),
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, row, index(tiles.getRowStride())),
          col));
  // Rows along K are read transposed: each lane gets its pairs along K.
  return loadMatrices(offset(tiles.shared, element), tiles.rowsAlongK);
}

void TensorCoreMatmulEmitter::multiplyStage(Value stage,
                                            SmallVectorImpl<Value> &sums) {
  Value warpRow = arith::MulIOp::create(b, loc, warpM, index(kWarpTileM));
  Value warpCol = arith::MulIOp::create(b, loc, warpN, index(kWarpTileN));
  for (int64_t kOffset = 0; kOffset < kTileK; kOffset += kMmaK) {
    SmallVector<SmallVector<Value, 4>> lhsFragments, rhsFragments;
    for (int64_t i = 0; i < kFragmentsM; ++i)
      lhsFragments.push_back(loadFragment(
          lhs, stage, arith::AddIOp::create(b, loc, warpRow, index(i * kMmaM)),
          kOffset));
    // One ldmatrix reads the rhs of two n8 fragments.
    for (int64_t j = 0; j < kFragmentsN; j += 2)
      rhsFragments.push_back(loadFragment(
          rhs, stage, arith::AddIOp::create(b, loc, warpCol, index(j * kMmaN)),
          kOffset));
    for (int64_t i = 0; i < kFragmentsM; ++i) {
      for (int64_t j = 0; j < kFragmentsN; ++j) {
        ArrayRef<Value> pair = rhsFragments[j / 2];
        multiplyFragment(
            elementType, lhsFragments[i], pair.slice((j % 2) * 2, 2),
            MutableArrayRef<Value>(&sums[(i * kFragmentsN + j) * 4], 4));
      }
    }
  }
}

void TensorCoreMatmulEmitter::storeSums(ArrayRef<Value> sums, Value dest,
                                        ArrayRef<Value> batchIvs,
                                        Value firstRow, Value firstColumn) {
  // An accumulator's registers hold (row g, columns 2c and 2c + 1) and
  // (row g + 8, the same columns), for lane 4g + c.
  Value group = arith::DivUIOp::create(b, loc, lane, index(4));
  Value pair = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(4)), index(2));
  Value rowBase = arith::AddIOp::create(
      b, loc, firstRow,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, warpM, index(kWarpTileM)),
          group));
  Value colBase = arith::AddIOp::create(
      b, loc, firstColumn,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, warpN, index(kWarpTileN)),
          pair));
  Value target = align(dest);
  for (int64_t i = 0; i < kFragmentsM; ++i) {
    for (int64_t j = 0; j < kFragmentsN; ++j) {
      for (int64_t e = 0; e < 4; ++e) {
        Value row = arith::AddIOp::create(b, loc, rowBase,
                                          index(i * kMmaM + (e / 2) * 8));
        Value col =
            arith::AddIOp::create(b, loc, colBase, index(j * kMmaN + e % 2));
        Value inRange = isInside(row, m, col, n);
        auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        SmallVector<Value> ivs(batchIvs);
        ivs.push_back(row);
        ivs.push_back(col);
        Value element = emitMatmulElement(b, node, kernelMapping, ivs,
                                          sums[(i * kFragmentsN + j) * 4 + e]);
        memref::StoreOp::create(b, loc, element, target, ivs);
      }
    }
  }
}

void TensorCoreMatmulEmitter::emit(Value dest, StreamOrder &order,
                                   ValueRange extraArgs) {
  Value lhsBuffer = mapping.lookup(node.getLhs());
  Value rhsBuffer = mapping.lookup(node.getRhs());
  ProductGrid grid = getProductGrid(node, mapping, kTileM, kTileN);
  setSizes(grid);
  // Both operands' stages in one dynamic workgroup buffer: more than the
  // 48 KiB of static workgroup memory a kernel may have.
  bool lhsAlongK = node.getTransposeLhs();
  bool rhsAlongK = !node.getTransposeRhs();
  auto stageElements = [](bool rowsAlongK, int64_t outerTile) {
    int64_t rows = rowsAlongK ? kTileK : outerTile;
    int64_t cols = (rowsAlongK ? outerTile : kTileK) + kPad;
    return rows * cols;
  };
  int64_t lhsElements = kStages * stageElements(lhsAlongK, kTileM);
  int64_t rhsElements = kStages * stageElements(rhsAlongK, kTileN);
  int64_t sharedBytes =
      (lhsElements + rhsElements) * elementType.getIntOrFloatBitWidth() / 8;
  OpBuilder::InsertionGuard guard(b);
  BlockTile tile = beginLaunch(grid, kTileM, kTileN, kThreads, sharedBytes,
                               order, extraArgs);
  lane = arith::RemUIOp::create(b, loc, thread, index(kWarpSize));
  Value warp = arith::DivUIOp::create(b, loc, thread, index(kWarpSize));
  warpM = arith::DivUIOp::create(b, loc, warp, index(kWarpsN));
  warpN = arith::RemUIOp::create(b, loc, warp, index(kWarpsN));
  Value batch = tile.batch, firstRow = tile.firstRow,
        firstColumn = tile.firstColumn;
  Value lhsShared = getDynamicSharedPointer();
  Value rhsShared = offset(lhsShared, index(lhsElements));
  // The stored matrices: lhs [M, K] or [K, M], rhs [K, N] or [N, K].
  lhs = lhsAlongK ? makeTiles(lhsBuffer, lhsShared, k, m, true, true)
                  : makeTiles(lhsBuffer, lhsShared, m, k, false, true);
  rhs = rhsAlongK ? makeTiles(rhsBuffer, rhsShared, k, n, true, false)
                  : makeTiles(rhsBuffer, rhsShared, n, k, false, false);

  Value steps = arith::CeilDivUIOp::create(b, loc, k, index(kTileK));
  Value zero = index(0), one = index(1);
  // Copies the tiles of step `step` into its stage (copyStepIfAny).
  auto copyStep = [&](Value step) {
    copyStepIfAny(step, steps, [&] {
      Value kStart = arith::MulIOp::create(b, loc, step, index(kTileK));
      Value stage = arith::RemUIOp::create(b, loc, step, index(kStages));
      copyTile(lhs, batch, firstRow, kStart, stage);
      copyTile(rhs, batch, firstColumn, kStart, stage);
    });
  };
  for (int64_t step = 0; step < kStages - 1; ++step)
    copyStep(index(step));

  Value zeroSum = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  SmallVector<Value> initial(kFragmentsM * kFragmentsN * 4, zeroSum);
  auto loop = scf::ForOp::create(
      b, loc, zero, steps, one, initial,
      [&](OpBuilder &nested, Location, Value step, ValueRange carried) {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        // This step's group is done once at most the later ones are in
        // flight; after the barrier every thread has also multiplied the
        // previous step, whose stage the copies of step + kStages - 1 reuse.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, kStages - 2);
        gpu::BarrierOp::create(b, loc);
        copyStep(arith::AddIOp::create(b, loc, step, index(kStages - 1)));
        SmallVector<Value> sums(carried);
        multiplyStage(arith::RemUIOp::create(b, loc, step, index(kStages)),
                      sums);
        scf::YieldOp::create(b, loc, sums);
      });

  SmallVector<Value> batchIvs = delinearize(b, loc, batch, grid.batchSizes);
  storeSums(SmallVector<Value>(loop.getResults()), dest, batchIvs, firstRow,
            firstColumn);
  gpu::TerminatorOp::create(b, loc);
}

void mlir::kiln::emitTensorCoreMatmul(OpBuilder &b, loop::MatmulOp node,
                                      Value dest, IRMapping &mapping,
                                      StreamOrder &order,
                                      ValueRange extraArgs) {
  TensorCoreMatmulEmitter(b, node, mapping).emit(dest, order, extraArgs);
}
