//===- WarpgroupMatmulKernels.cpp - Products on Hopper's tensor cores -----===//
//
// Part of Kiln. With `matmul-kernels` on sm_90a, a product of 16-bit
// operands runs as a kernel of warpgroup MMAs (wgmma), which read both
// operands from workgroup memory asynchronously; its epilogue is applied to
// the sums in registers, as the mma.sync kernel's (MatmulKernels.cpp) is.
//
// A block computes a 128 x N tile of the result in steps of 64 along K, in one
// of two shapes (WarpgroupTiling): one warpgroup (4 warps) per 128x128 tile,
// two blocks to an SM, or two warpgroups per 128x256 tile, each computing 64
// rows, one block to an SM; per product, the wide tile copies a quarter less
// from global memory, and its wgmmas read a sixth less workgroup memory (an rhs
// tile serves both warpgroups). Each step's operand tiles are copied into
// dynamic workgroup memory with cp.async, three or four stages deep, laid out
// as wgmma reads them with 128-byte swizzling: rows of 64 elements, 128 bytes,
// whose eight 16-byte pieces are stored in the order of their index XOR the
// row's index modulo 8, so that the 8 rows one access reads fall in distinct
// banks. A K-major operand (contiguous along K: an lhs [M, K], an rhs [N, K])
// keeps its rows; an M- or N-major one (a transposed lhs, an rhs [K, N]) is
// blocks of 64 rows along K of 64 elements, which wgmma reads transposed. A
// step is 4 wgmma m64nNk16 (four steps of 16 along K) per half of 64 rows of
// the tile, issued together and left in flight while the copies of a later step
// are issued: the copies reuse the stage that the step before read (two before,
// with two warpgroups), and wait for its wgmmas only.
//
// With `warpgroup-tma` the kernel is warp-specialized and persistent: a block
// per SM walks tiles a grid apart. Its first warpgroup gives most of its
// registers to the other two, and its first thread issues each step's copies
// with TMA, from tensor maps the host encodes (kiln_cuda_tensor_map), into a
// ring of stages (six of 32 KiB, or four of 48 KiB for 128x256 tiles), each
// with an mbarrier that its copies complete and one that its readers
// release. The other two warpgroups multiply 64 rows each and apply the
// epilogue, while the producer runs on into the next tile's copies.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"
#include "LibraryCalls.h"
#include "MatmulKernelSupport.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/EpilogueFusion.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The block's rows of the result and its step along K: a tile row along K
/// is 64 16-bit elements, 128 bytes, the width of the swizzle.
constexpr int64_t kTileM = 128, kTileK = 64;
constexpr int64_t kRowBytes = kTileK * 2;
static_assert(kRowBytes == kSwizzleRowBytes);
/// The threads of one warpgroup.
constexpr int64_t kWarpgroupThreads = 4 * kWarpSize;
/// wgmma's M and K, and the halves of the tile along M that one instruction
/// each covers; its N is the tile's.
constexpr int64_t kMmaM = 64, kMmaK = 16;
constexpr int64_t kHalves = kTileM / kMmaM;
constexpr int64_t kLhsTileBytes = kTileM * kRowBytes;
/// An M- or N-major operand tile: blocks of kTileK rows along K of
/// 64 elements along M or N.
constexpr int64_t kBlockElements = kRowBytes / 2;
constexpr int64_t kBlockBytes = kTileK * kRowBytes;

/// A block's shape: a tile of kTileM x `tileN` of the result, whose halves
/// along M `warpgroups` warpgroups share (wgmma m64n`tileN`k16), and
/// `stages` stages of operand tiles in workgroup memory.
struct WarpgroupTiling {
  int64_t tileN, warpgroups, stages;
  /// Whether a producer warpgroup copies the tiles with TMA for the
  /// `warpgroups` that multiply (else every thread copies with cp.async).
  bool tma;

  int64_t getThreads() const {
    return (warpgroups + (tma ? 1 : 0)) * kWarpgroupThreads;
  }
  int64_t getHalvesPerWarpgroup() const { return kHalves / warpgroups; }
  /// f32 sums per thread of one m64nN instruction.
  int64_t getSumsPerHalf() const { return kMmaM * tileN / kWarpgroupThreads; }
  int64_t getStageBytes() const { return kLhsTileBytes + tileN * kRowBytes; }
};
/// 128x128 tiles in three stages of 32 KiB, so that two blocks fit on an SM
/// and one's epilogue runs under the other's products.
constexpr WarpgroupTiling kNarrowTiling{128, 1, 3, false};
/// 128x256 tiles in four stages of 48 KiB: one block fills an SM.
constexpr WarpgroupTiling kWideTiling{256, 2, 4, false};
/// With TMA, two warpgroups multiply each tile, 64 rows each, and one copies:
/// 128x128 tiles in six stages of 32 KiB, or 128x256 in four of 48 KiB.
constexpr WarpgroupTiling kNarrowTmaTiling{128, 2, 6, true};
constexpr WarpgroupTiling kWideTmaTiling{256, 2, 4, true};
/// Registers per thread of the producer warpgroup and of the ones that
/// multiply, once they have moved them (setmaxnreg): with 384 threads,
/// 40 + 2 x 232 of every 512 that an SM has per 128 threads.
constexpr int64_t kProducerRegisters = 40, kConsumerRegisters = 232;
/// A wait's suspend-time hint, in nanoseconds.
constexpr int64_t kWaitTicks = 10000000;
/// The SMs of an H100 or H200: wide tiles pay where there are enough of
/// them for every SM.
constexpr int64_t kWideTilesPerWave = 132;

/// Emits one warpgroup product (emitWarpgroupMatmul).
class WarpgroupMatmulEmitter : MatmulKernelEmitter {
public:
  WarpgroupMatmulEmitter(OpBuilder &b, loop::MatmulOp node,
                         const IRMapping &mapping, WarpgroupTiling tiling)
      : MatmulKernelEmitter(b, node, mapping), tiling(tiling) {}

  void emit(Value dest, StreamOrder &order, ValueRange extraArgs);

private:
  /// The kernel whose threads all copy tiles with cp.async and multiply.
  void emitCopying(Value dest, StreamOrder &order, ValueRange extraArgs);
  /// The kernel whose producer warpgroup copies tiles with TMA for the
  /// others, which multiply (warp specialization).
  void emitWithTma(Value dest, StreamOrder &order, ValueRange extraArgs);

  /// On the host: the tensor map (!llvm.array<16 x i64>) of an operand
  /// (`buffer`, `rows` x `cols` as stored, batches of `batch`) whose copies
  /// fill boxes of `boxRows` rows of kTileK elements.
  Value createTensorMap(Value buffer, Value batch, Value rows, Value cols,
                        int64_t boxRows);

  /// In the kernel: the address of the kernel's copy of `map`
  /// (kiln-tensor-map-parameters makes it the parameter's).
  Value getTensorMapAddress(Value map);

  /// Issues the TMA copies of an operand's tile of `outerTile` (along M or
  /// N) x kTileK elements at (`outer`, `kStart`) of batch `batch` into
  /// `tile` (!llvm.ptr<3>), completing on `barrier`.
  void copyTileWithTma(Value map, bool kMajor, Value batch, Value outer,
                       Value kStart, Value tile, int64_t outerTile,
                       Value barrier);

  /// Issues the copies of the tile of `outerTile` (along M or N) x kTileK
  /// elements at (`outer`, `kStart`) of an operand (at `matrix`,
  /// !llvm.ptr<1>; `rows` x `cols` as stored, [M or N, K] if `kMajor`, else
  /// [K, M or N]) into the workgroup memory at `tile` (!llvm.ptr<3>),
  /// swizzled.
  void copyTile(Value matrix, Value rows, Value cols, bool kMajor, Value outer,
                Value kStart, Value tile, int64_t outerTile);

  /// The wgmma descriptor of the swizzled tile that starts at byte `address`
  /// of workgroup memory (i64), K-major if `kMajor`.
  Value getDescriptor(Value address, bool kMajor);

  /// Bytes from the tile of an operand to its part for K from `kOffset`.
  static int64_t getKOffsetBytes(bool kMajor, int64_t kOffset) {
    return kMajor ? kOffset * 2 : kOffset * kRowBytes;
  }

  /// Issues the wgmmas of the tiles at workgroup address `stageAddress`
  /// (i64) into `sums` (a struct of getSumsPerHalf() f32 per half of the
  /// tile that the thread's warpgroup computes).
  void multiplyStage(Value stageAddress, SmallVectorImpl<Value> &sums);

  /// Emits a loop over `steps` steps along K that carries the thread's sums
  /// (zero at first), `body` emitting each step at `b` with the step's
  /// index; returns the sums after the last step.
  SmallVector<Value> emitStepLoop(
      Value steps,
      function_ref<void(Value step, SmallVectorImpl<Value> &sums)> body);

  /// Stores the sums, through the epilogue, to `dest`.
  void storeSums(ArrayRef<Value> sums, Value dest, ArrayRef<Value> batchIvs,
                 Value firstRow, Value firstColumn);

  /// The first half of the tile along M that the thread's warpgroup
  /// computes.
  Value getFirstHalf() {
    if (tiling.warpgroups == 1 && !tiling.tma)
      return index(0);
    // With TMA, warpgroup 0 copies.
    Value warpgroup = div(thread, kWarpgroupThreads);
    if (tiling.tma)
      warpgroup = arith::SubIOp::create(b, loc, warpgroup, index(1));
    return mul(warpgroup, index(tiling.getHalvesPerWarpgroup()));
  }

  WarpgroupTiling tiling;
  bool lhsKMajor, rhsKMajor;
};
} // namespace

void WarpgroupMatmulEmitter::copyTile(Value matrix, Value rows, Value cols,
                                      bool kMajor, Value outer, Value kStart,
                                      Value tile, int64_t outerTile) {
  constexpr int64_t piecesPerRow = kRowBytes / 16;
  for (int64_t first = 0; first < outerTile * kTileK / kCopyElements;
       first += tiling.getThreads()) {
    // Consecutive threads copy consecutive pieces of a stored row.
    Value piece = add(thread, index(first));
    Value row, column, element;
    if (kMajor) {
      row = div(piece, piecesPerRow);
      column = rem(piece, piecesPerRow);
      element = mul(row, index(kBlockElements));
    } else {
      int64_t blocks = outerTile / kBlockElements;
      row = div(piece, blocks * piecesPerRow);
      Value inRow = rem(piece, blocks * piecesPerRow);
      Value block = div(inRow, piecesPerRow);
      column = rem(inRow, piecesPerRow);
      element = add(mul(block, index(kBlockBytes / 2)),
                    mul(row, index(kBlockElements)));
      column = add(mul(block, index(piecesPerRow)), column);
    }
    Value swizzled = arith::XOrIOp::create(b, loc, rem(column, piecesPerRow),
                                           rem(row, kSwizzleRows));
    Value target =
        offset(tile, add(element, mul(swizzled, index(kCopyElements))));
    Value along = mul(column, index(kCopyElements));
    if (kMajor)
      copyPiece(matrix, rows, cols, add(outer, row), add(kStart, along),
                target);
    else
      copyPiece(matrix, rows, cols, add(kStart, row), add(outer, along),
                target);
  }
}

Value WarpgroupMatmulEmitter::getDescriptor(Value address, bool kMajor) {
  // M- or N-major tiles are blocks of 64 elements along M or N.
  return getSwizzledDescriptor(address, kMajor ? 16 : kBlockBytes);
}

void WarpgroupMatmulEmitter::multiplyStage(Value stageAddress,
                                           SmallVectorImpl<Value> &sums) {
  MLIRContext *context = b.getContext();
  auto type =
      elementType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  auto addressPlus = [&](int64_t bytes) {
    return arith::AddIOp::create(
        b, loc, stageAddress, arith::ConstantIntOp::create(b, loc, bytes, 64));
  };
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  // The halves of the lhs tile along M are 64 rows or one block apart.
  static_assert(kMmaM * kRowBytes == kBlockBytes);
  Value lhsAddress = stageAddress;
  if (tiling.warpgroups > 1)
    lhsAddress = arith::AddIOp::create(
        b, loc, stageAddress, toI64(mul(getFirstHalf(), index(kBlockBytes))));
  for (int64_t kOffset = 0; kOffset < kTileK; kOffset += kMmaK) {
    Value rhs = getDescriptor(
        addressPlus(kLhsTileBytes + getKOffsetBytes(rhsKMajor, kOffset)),
        rhsKMajor);
    for (int64_t half = 0; half < tiling.getHalvesPerWarpgroup(); ++half) {
      Value lhs = getDescriptor(
          arith::AddIOp::create(
              b, loc, lhsAddress,
              arith::ConstantIntOp::create(
                  b, loc,
                  half * kBlockBytes + getKOffsetBytes(lhsKMajor, kOffset),
                  64)),
          lhsKMajor);
      sums[half] = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, sums[half].getType(), sums[half], lhs, rhs,
          NVVM::MMAShapeAttr::get(context, kMmaM, tiling.tileN, kMmaK), type,
          type, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          // M- or N-major operands are read transposed.
          lhsKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
          rhsKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          /*satfinite=*/nullptr);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
}

SmallVector<Value> WarpgroupMatmulEmitter::emitStepLoop(
    Value steps,
    function_ref<void(Value step, SmallVectorImpl<Value> &sums)> body) {
  auto sumsType = LLVM::LLVMStructType::getLiteral(
      b.getContext(),
      SmallVector<Type>(tiling.getSumsPerHalf(), b.getF32Type()));
  Value zeroSums = LLVM::ZeroOp::create(b, loc, sumsType);
  SmallVector<Value> initial(tiling.getHalvesPerWarpgroup(), zeroSums);
  auto loop = scf::ForOp::create(
      b, loc, index(0), steps, index(1), initial,
      [&](OpBuilder &nested, Location, Value step, ValueRange carried) {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        SmallVector<Value> sums(carried);
        body(step, sums);
        scf::YieldOp::create(b, loc, sums);
      });
  return SmallVector<Value>(loop.getResults());
}

void WarpgroupMatmulEmitter::storeSums(ArrayRef<Value> sums, Value dest,
                                       ArrayRef<Value> batchIvs, Value firstRow,
                                       Value firstColumn) {
  // Sum i of a thread (lane 4g + c of warp w of its warpgroup) of an m64nN
  // instruction holds row 16w + g + 8 * ((i / 2) % 2), column
  // 8 * (i / 4) + 2c + i % 2 of the warpgroup's half:
  // sums i and i + 1 (i even) are neighbours in a row, stored as a pair
  // where the row holds both and an even number of elements (so that the
  // pair is aligned).
  Value lane = rem(thread, kWarpSize);
  Value warp = rem(div(thread, kWarpSize), kWarpgroupThreads / kWarpSize);
  Value rowBase = add(add(firstRow, mul(getFirstHalf(), index(kMmaM))),
                      add(mul(warp, index(16)), div(lane, 4)));
  Value columnBase = add(firstColumn, mul(rem(lane, 4), index(2)));
  Value target = align(dest);
  auto destType = cast<MemRefType>(target.getType());
  bool contiguousRows = destType.isLastDimUnitStride();
  Value evenRows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         rem(n, 2), index(0));
  Value lastRow = arith::SubIOp::create(b, loc, m, index(1));
  Value lastColumn = arith::SubIOp::create(b, loc, n, index(1));
  auto less = [&](Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lhs, rhs);
  };
  auto indices = [&](Value row, Value column) {
    SmallVector<Value> ivs(batchIvs);
    ivs.push_back(row);
    ivs.push_back(column);
    return ivs;
  };
  for (int64_t half = 0; half < tiling.getHalvesPerWarpgroup(); ++half) {
    for (int64_t i = 0; i < tiling.getSumsPerHalf(); i += 2) {
      Value row = add(rowBase, index(half * kMmaM + 8 * ((i / 2) % 2)));
      Value column = add(columnBase, index(8 * (i / 4)));
      Value next = add(column, index(1));
      SmallVector<Value, 2> columns = {column, next};
      // At the matrix's edges the epilogue computes at clamped indices,
      // which its loads may read; what it computes there is not stored.
      Value clampedRow = arith::MinUIOp::create(b, loc, row, lastRow);
      SmallVector<Value, 2> elements;
      for (auto [j, col] : llvm::enumerate(columns)) {
        Value sum = LLVM::ExtractValueOp::create(b, loc, sums[half], i + j);
        Value clamped = arith::MinUIOp::create(b, loc, col, lastColumn);
        elements.push_back(emitMatmulElement(
            b, node, kernelMapping, indices(clampedRow, clamped), sum));
      }
      Value rowInside = less(row, m);
      Value pairInside =
          arith::AndIOp::create(b, loc, rowInside, less(next, n));
      auto storeEach = [&] {
        for (auto [j, col] : llvm::enumerate(columns)) {
          auto ifInside = scf::IfOp::create(
              b, loc, j == 0 ? isInside(row, m, col, n) : pairInside,
              /*withElse=*/false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&ifInside.getThenRegion().front());
          memref::StoreOp::create(b, loc, elements[j], target,
                                  indices(row, col));
        }
      };
      if (!contiguousRows) {
        storeEach();
        continue;
      }
      auto ifPair = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, pairInside, evenRows),
          /*withElse=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifPair.getThenRegion().front());
      Value pair = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, elements[0].getType()), elements);
      vector::StoreOp::create(b, loc, pair, target, indices(row, column));
      b.setInsertionPointToStart(&ifPair.getElseRegion().front());
      storeEach();
    }
  }
}

void WarpgroupMatmulEmitter::emit(Value dest, StreamOrder &order,
                                  ValueRange extraArgs) {
  lhsKMajor = !node.getTransposeLhs();
  rhsKMajor = node.getTransposeRhs();
  if (tiling.tma)
    emitWithTma(dest, order, extraArgs);
  else
    emitCopying(dest, order, extraArgs);
}

void WarpgroupMatmulEmitter::emitCopying(Value dest, StreamOrder &order,
                                         ValueRange extraArgs) {
  Value lhsBuffer = mapping.lookup(node.getLhs());
  Value rhsBuffer = mapping.lookup(node.getRhs());
  const int64_t tileN = tiling.tileN, stageCount = tiling.stages,
                stageBytes = tiling.getStageBytes();
  ProductGrid grid = getProductGrid(node, mapping, kTileM, tileN);
  setSizes(grid);
  // The stages, and room to start them at a multiple of 1024 bytes.
  int64_t sharedBytes = stageCount * stageBytes + kSwizzleBytes;
  OpBuilder::InsertionGuard guard(b);
  BlockTile tile = beginLaunch(grid, kTileM, tileN, tiling.getThreads(),
                               sharedBytes, order, extraArgs);
  Value batch = tile.batch, firstRow = tile.firstRow,
        firstColumn = tile.firstColumn;
  Value stagesAddress = getSwizzledSharedAddress();
  auto sharedPointer = getSharedPointerType();
  Value stages = LLVM::IntToPtrOp::create(b, loc, sharedPointer, stagesAddress);

  // The batch's matrices: lhs [M, K] or [K, M], rhs [N, K] or [K, N].
  Value lhs =
      offset(getPointer(align(lhsBuffer), NVVM::NVVMMemorySpace::Global),
             mul(batch, mul(m, k)));
  Value rhs =
      offset(getPointer(align(rhsBuffer), NVVM::NVVMMemorySpace::Global),
             mul(batch, mul(n, k)));
  Value steps = arith::CeilDivUIOp::create(b, loc, k, index(kTileK));
  auto stageOffset = [&](Value step) {
    return mul(rem(step, stageCount), index(stageBytes));
  };
  // Copies the tiles of step `step` into its stage (copyStepIfAny).
  auto copyStep = [&](Value step) {
    copyStepIfAny(step, steps, [&] {
      Value kStart = mul(step, index(kTileK));
      Value stage =
          LLVM::GEPOp::create(b, loc, sharedPointer, b.getI8Type(), stages,
                              ValueRange{toI64(stageOffset(step))});
      copyTile(lhs, lhsKMajor ? m : k, lhsKMajor ? k : m, lhsKMajor, firstRow,
               kStart, stage, kTileM);
      copyTile(rhs, rhsKMajor ? n : k, rhsKMajor ? k : n, rhsKMajor,
               firstColumn, kStart, offset(stage, index(kLhsTileBytes / 2)),
               tileN);
    });
  };
  // Steps whose copies are issued ahead of the step multiplied. Each
  // warpgroup waits for its own wgmmas only: with two, the stage of the
  // step before may still be read by the other's until the next barrier,
  // so the copies reuse the stage of the step before that.
  const int64_t lookahead =
      tiling.warpgroups == 1 ? stageCount - 1 : stageCount - 2;
  for (int64_t step = 0; step < lookahead; ++step)
    copyStep(index(step));

  SmallVector<Value> sums =
      emitStepLoop(steps, [&](Value step, SmallVectorImpl<Value> &sums) {
        // This step's copies are done once at most the later ones are in
        // flight; wgmma reads through the async proxy, which must see what
        // cp.async wrote; after the barrier every thread's copies are in.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, lookahead - 1);
        NVVM::FenceProxyOp::create(
            b, loc, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(b.getContext(),
                                       NVVM::SharedSpace::shared_cta));
        gpu::BarrierOp::create(b, loc);
        multiplyStage(add(toI64(stageOffset(step)), stagesAddress), sums);
        // The step before is done with its stage (in this warpgroup; in
        // every one two steps before), which the next copies reuse; this
        // step's wgmmas run on.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
        copyStep(add(step, index(lookahead)));
      });
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

  SmallVector<Value> batchIvs = delinearize(b, loc, batch, grid.batchSizes);
  storeSums(sums, dest, batchIvs, firstRow, firstColumn);
  gpu::TerminatorOp::create(b, loc);
}

Value WarpgroupMatmulEmitter::createTensorMap(Value buffer, Value batch,
                                              Value rows, Value cols,
                                              int64_t boxRows) {
  MLIRContext *context = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(context);
  auto mapType = LLVM::LLVMArrayType::get(i64, kTensorMapWords);
  // The map's memory is the host function's, allocated once at its entry
  // (a product may run in a loop: its candidates' timing).
  Operation *function = b.getInsertionBlock()->getParentOp();
  while (!isa<func::FuncOp>(function))
    function = function->getParentOp();
  Value memory;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&cast<func::FuncOp>(function).getBody().front());
    memory = LLVM::AllocaOp::create(b, loc, pointer, mapType,
                                    LLVM::ConstantOp::create(b, loc, i64, 1),
                                    kTensorMapAlignment);
  }
  auto module = function->getParentOfType<ModuleOp>();
  func::FuncOp encode = getRuntimeDeclaration(
      b, module, "kiln_cuda_tensor_map",
      b.getFunctionType({pointer, pointer, i32, i64, i64, i64, i32, i32}, {}));
  auto i32Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  func::CallOp::create(b, loc, encode,
                       ValueRange{memory, getBufferPointer(b, loc, buffer),
                                  i32Constant(getLibraryDtypeCode(elementType)),
                                  toI64(batch), toI64(rows), toI64(cols),
                                  i32Constant(boxRows), i32Constant(kTileK)});
  return LLVM::LoadOp::create(b, loc, mapType, memory, kTensorMapAlignment);
}

Value WarpgroupMatmulEmitter::getTensorMapAddress(Value map) {
  auto copy = LLVM::AllocaOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), map.getType(),
      LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1), kTensorMapAlignment);
  copy->setAttr(kTensorMapAttr, b.getUnitAttr());
  LLVM::StoreOp::create(b, loc, map, copy, kTensorMapAlignment);
  return copy;
}

void WarpgroupMatmulEmitter::copyTileWithTma(Value map, bool kMajor,
                                             Value batch, Value outer,
                                             Value kStart, Value tile,
                                             int64_t outerTile, Value barrier) {
  auto i32 = [&](Value value) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
  };
  // The copies write the cluster's window of workgroup memory, where the
  // block's own is.
  auto clusterPointer = LLVM::LLVMPointerType::get(
      b.getContext(),
      static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  auto copy = [&](Value column, Value row, Value target) {
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, LLVM::AddrSpaceCastOp::create(b, loc, clusterPointer, target),
        map, ValueRange{i32(column), i32(row), i32(batch)}, barrier,
        /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
        /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
  };
  // A K-major tile is one box of outerTile rows of kTileK; an M- or N-major
  // one, blocks of kTileK rows along K of 64 elements (kBlockElements).
  if (kMajor)
    return copy(kStart, outer, tile);
  for (int64_t block = 0; block < outerTile / kBlockElements; ++block)
    copy(add(outer, index(block * kBlockElements)), kStart,
         offset(tile, index(block * kBlockBytes / 2)));
}

void WarpgroupMatmulEmitter::emitWithTma(Value dest, StreamOrder &order,
                                         ValueRange extraArgs) {
  const int64_t tileN = tiling.tileN, stageCount = tiling.stages,
                stageBytes = tiling.getStageBytes();
  ProductGrid grid = getProductGrid(node, mapping, kTileM, tileN);
  setSizes(grid);
  // Host: the operands' tensor maps; lhs [M, K] or [K, M], rhs [N, K] or
  // [K, N] per batch.
  Value batches = getProduct(b, loc, grid.batchSizes);
  Value lhsMap =
      createTensorMap(mapping.lookup(node.getLhs()), batches, lhsKMajor ? m : k,
                      lhsKMajor ? k : m, lhsKMajor ? kTileM : kTileK);
  Value rhsMap =
      createTensorMap(mapping.lookup(node.getRhs()), batches, rhsKMajor ? n : k,
                      rhsKMajor ? k : n, rhsKMajor ? tileN : kTileK);
  // A block per SM, or per tile where there are fewer.
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  func::FuncOp countSMs =
      getRuntimeDeclaration(b, module, "kiln_cuda_multiprocessors",
                            b.getFunctionType({}, {b.getI32Type()}));
  Value multiprocessors = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      func::CallOp::create(b, loc, countSMs, ValueRange()).getResult(0));
  Value blocks = arith::MinUIOp::create(b, loc, grid.blocks, multiprocessors);
  // The stages and room to start them at a multiple of 1024 bytes, then a
  // barrier per stage that its copies complete ("full") and one that its
  // readers release ("empty").
  constexpr int64_t barrierBytes = 8;
  int64_t sharedBytes =
      stageCount * stageBytes + kSwizzleBytes + 2 * stageCount * barrierBytes;
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = beginPersistentLaunch(blocks, tiling.getThreads(),
                                               sharedBytes, order, extraArgs);
  Value firstTile = launch.getBlockIds().x;
  Value tileStride = launch.getGridSize().x;
  Value lhsMapAddress = getTensorMapAddress(lhsMap);
  Value rhsMapAddress = getTensorMapAddress(rhsMap);
  Value stagesAddress = getSwizzledSharedAddress();
  auto sharedPointer = getSharedPointerType();
  Value stages = LLVM::IntToPtrOp::create(b, loc, sharedPointer, stagesAddress);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto byteOffset = [&](Value base, Value bytes) -> Value {
    return LLVM::GEPOp::create(b, loc, sharedPointer, b.getI8Type(), base,
                               ValueRange{toI64(bytes)});
  };
  Value barriers = byteOffset(stages, index(stageCount * stageBytes));
  auto fullBarrier = [&](Value stage) {
    return byteOffset(barriers, mul(stage, index(barrierBytes)));
  };
  auto emptyBarrier = [&](Value stage) {
    return byteOffset(barriers,
                      mul(add(stage, index(stageCount)), index(barrierBytes)));
  };
  auto i32Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  };
  auto equal = [&](Value lhs, Value rhs) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
  };
  // The parity (i32) of a stage's `use`-th phase.
  auto parity = [&](Value use) -> Value {
    return arith::IndexCastOp::create(b, loc, i32, rem(use, 2));
  };
  auto wait = [&](Value barrier, Value phaseParity) {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, phaseParity,
                                          i32Constant(kWaitTicks));
  };
  // Each warp of the warpgroups that multiply releases a stage once.
  const int64_t readerWarps = tiling.warpgroups * kWarpgroupThreads / kWarpSize;
  {
    auto ifFirst = scf::IfOp::create(b, loc, equal(thread, index(0)),
                                     /*withElse=*/false);
    OpBuilder::InsertionGuard initGuard(b);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    for (int64_t stage = 0; stage < stageCount; ++stage) {
      NVVM::MBarrierInitOp::create(b, loc, fullBarrier(index(stage)),
                                   i32Constant(1), /*predicate=*/Value());
      NVVM::MBarrierInitOp::create(b, loc, emptyBarrier(index(stage)),
                                   i32Constant(readerWarps),
                                   /*predicate=*/Value());
    }
    // The barriers' state is visible to the copies' async proxy.
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);

  // Producer and readers walk the same tiles and count the same steps:
  // step `g` of the block (over all its tiles) uses stage g % stages for the
  // (g / stages)-th time.
  Value steps = arith::CeilDivUIOp::create(b, loc, k, index(kTileK));
  auto stageOf = [&](Value step) { return rem(step, stageCount); };
  auto useOf = [&](Value step) { return div(step, stageCount); };
  auto stageTile = [&](Value stage) {
    return byteOffset(stages, mul(stage, index(stageBytes)));
  };
  // Emits a loop over the block's tiles whose body `body(tile, firstStep)`
  // emits at `b`; the block's steps before the tile are `firstStep`.
  auto forEachTile = [&](function_ref<void(const BlockTile &, Value)> body) {
    auto tiles = scf::ForOp::create(b, loc, firstTile, grid.blocks, tileStride,
                                    ValueRange{index(0)});
    OpBuilder::InsertionGuard tilesGuard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value firstStep = tiles.getRegionIterArg(0);
    body(getBlockTile(grid, tiles.getInductionVar(), kTileM, tileN), firstStep);
    scf::YieldOp::create(b, loc, add(firstStep, steps));
  };
  auto ifProducer =
      scf::IfOp::create(b, loc, equal(div(thread, kWarpgroupThreads), index(0)),
                        /*withElse=*/true);
  {
    // The producer: its first thread issues every step's copies into the
    // step's stage once the readers of its use before have released it
    // (parity 1 before the first use: a new barrier's phase before 0). It
    // runs on into the next tile while the readers apply the epilogue.
    OpBuilder::InsertionGuard producerGuard(b);
    b.setInsertionPointToStart(&ifProducer.getThenRegion().front());
    NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters,
                                   NVVM::SetMaxRegisterAction::decrease);
    auto ifIssuer = scf::IfOp::create(b, loc, equal(thread, index(0)),
                                      /*withElse=*/false);
    b.setInsertionPointToStart(&ifIssuer.getThenRegion().front());
    forEachTile([&](const BlockTile &tile, Value firstStep) {
      auto copies = scf::ForOp::create(b, loc, index(0), steps, index(1));
      OpBuilder::InsertionGuard copiesGuard(b);
      b.setInsertionPointToStart(copies.getBody());
      Value step = copies.getInductionVar();
      Value blockStep = add(firstStep, step);
      Value stage = stageOf(blockStep);
      wait(emptyBarrier(stage),
           arith::XOrIOp::create(b, loc, parity(useOf(blockStep)),
                                 i32Constant(1)));
      Value full = fullBarrier(stage);
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, /*res=*/Type(), full, i32Constant(stageBytes),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
      Value kStart = mul(step, index(kTileK));
      Value target = stageTile(stage);
      copyTileWithTma(lhsMapAddress, lhsKMajor, tile.batch, tile.firstRow,
                      kStart, target, kTileM, full);
      copyTileWithTma(rhsMapAddress, rhsKMajor, tile.batch, tile.firstColumn,
                      kStart, offset(target, index(kLhsTileBytes / 2)), tileN,
                      full);
    });
  }

  // The readers: each step waits for its stage's copies, issues its
  // wgmmas and, once the step before's are done, releases that one's stage
  // (one arrival per warp); a tile's last stage is released before its
  // epilogue.
  b.setInsertionPointToStart(&ifProducer.getElseRegion().front());
  NVVM::SetMaxRegisterOp::create(b, loc, kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  Value firstLane = equal(rem(thread, kWarpSize), index(0));
  auto release = [&](Value condition, Value blockStep) {
    auto ifRelease = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard releaseGuard(b);
    b.setInsertionPointToStart(&ifRelease.getThenRegion().front());
    NVVM::MBarrierArriveOp::create(b, loc, /*res=*/Type(),
                                   emptyBarrier(stageOf(blockStep)),
                                   /*count=*/Value());
  };
  auto after = [&](Value lhs, Value rhs) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, lhs, rhs);
  };
  forEachTile([&](const BlockTile &tile, Value firstStep) {
    SmallVector<Value> sums =
        emitStepLoop(steps, [&](Value step, SmallVectorImpl<Value> &sums) {
          Value blockStep = add(firstStep, step);
          Value stage = stageOf(blockStep);
          wait(fullBarrier(stage), parity(useOf(blockStep)));
          multiplyStage(LLVM::PtrToIntOp::create(b, loc, i64, stageTile(stage)),
                        sums);
          NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
          release(
              arith::AndIOp::create(b, loc, firstLane, after(step, index(0))),
              arith::SubIOp::create(b, loc, blockStep, index(1)));
        });
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    release(arith::AndIOp::create(b, loc, firstLane, after(steps, index(0))),
            arith::SubIOp::create(b, loc, add(firstStep, steps), index(1)));
    SmallVector<Value> batchIvs =
        delinearize(b, loc, tile.batch, grid.batchSizes);
    storeSums(sums, dest, batchIvs, tile.firstRow, tile.firstColumn);
  });
  b.setInsertionPointAfter(ifProducer);
  gpu::TerminatorOp::create(b, loc);
}

/// The tiling of `node`: `tileN` if it is 128 or 256, else (0) wide tiles
/// where the result's sizes are known and make at least a wave of them; with
/// TMA copies if `tma`.
static WarpgroupTiling chooseTiling(loop::MatmulOp node, int64_t tileN,
                                    bool tma) {
  const WarpgroupTiling &wide = tma ? kWideTmaTiling : kWideTiling;
  const WarpgroupTiling &narrow = tma ? kNarrowTmaTiling : kNarrowTiling;
  if (tileN != 0)
    return tileN == wide.tileN ? wide : narrow;
  RankedTensorType type = node.getResultType();
  if (!type.hasStaticShape())
    return narrow;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t columns = shape.back();
  if (columns < wide.tileN)
    return narrow;
  // Batches x tiles along M and N, saturating (sizes may be huge).
  uint64_t wideTiles =
      llvm::divideCeil(uint64_t(columns), uint64_t(wide.tileN));
  for (int64_t dim = 0, rank = shape.size(); dim < rank - 1; ++dim)
    wideTiles = llvm::SaturatingMultiply(
        wideTiles, dim == rank - 2 ? llvm::divideCeil(uint64_t(shape[dim]),
                                                      uint64_t(kTileM))
                                   : uint64_t(shape[dim]));
  return wideTiles >= kWideTilesPerWave ? wide : narrow;
}

void mlir::kiln::emitWarpgroupMatmul(OpBuilder &b, loop::MatmulOp node,
                                     Value dest, IRMapping &mapping,
                                     StreamOrder &order, ValueRange extraArgs,
                                     int64_t tileN, bool tma) {
  WarpgroupMatmulEmitter(b, node, mapping, chooseTiling(node, tileN, tma))
      .emit(dest, order, extraArgs);
}
