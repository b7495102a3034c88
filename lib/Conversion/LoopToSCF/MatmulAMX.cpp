//===- MatmulAMX.cpp - bf16 products on AMX tiles -------------------------===//
//
// Part of Kiln. On CPUs with AMX (Sapphire Rapids and later Xeons) a bf16
// product runs on the tile unit: one tdpbf16ps multiplies a 16 x 32 tile of
// the left-hand side by a 32 x 16 tile of the right-hand side, stored as 16
// rows of column pairs ("VNNI": row p holds, for each column c, the
// elements of steps 2p and 2p + 1), into a 16 x 16 tile of f32 sums, 8192
// multiply-adds in one instruction: several times what AVX-512 FMAs reach.
//
// Both operands are packed first, zero-padded to whole tiles: the left-hand
// side into rows of whole steps of 32, the right-hand side into panels of 32
// columns in pairs. Each task then computes a 32 x 32 block of the result
// in four tiles of sums (the eight tile registers: two of each operand and
// four of sums), stores them to a buffer on its stack, and writes the rows
// through the epilogue as the register-tiled product does.
//
//===----------------------------------------------------------------------===//

#include "MatmulLoops.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::kiln;

/// Rows of every tile.
static constexpr int64_t kAMXTileRows = 16;
/// Steps along K per tile of the left-hand side: a 64-byte row of bf16.
static constexpr int64_t kAMXStep = 32;
/// Rows and columns of the result per block: two tiles each way.
static constexpr int64_t kAMXBlock = 32;
static_assert(kAMXStep == kAMXBlock, "transposed operands pack square blocks");
/// Blocks of rows that a task computes against one panel, in turn (256
/// rows): the panel stays in L2 meanwhile.
static constexpr int64_t kAMXGroup = 8;
/// The runtime function that asks the OS for leave to use the tiles.
static constexpr llvm::StringLiteral kRequestAMX = "kiln_cpu_request_amx";

bool MatmulLoops::usesAMX() const {
  auto elementOf = [](Value operand) {
    return cast<MemRefType>(operand.getType()).getElementType();
  };
  return options.amx && elementOf(lhs).isBF16() && elementOf(rhs).isBF16() &&
         accumulatorType.isF32() && panelWidth == kAMXBlock;
}

/// Calls the runtime's kiln_cpu_request_amx, declared once in `module`.
static void emitAMXRequest(OpBuilder &b, Location loc, ModuleOp module) {
  auto request = module.lookupSymbol<func::FuncOp>(kRequestAMX);
  if (!request) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    request =
        func::FuncOp::create(b, loc, kRequestAMX, b.getFunctionType({}, {}));
    request.setPrivate();
  }
  func::CallOp::create(b, loc, request, ValueRange{});
}

Value MatmulLoops::emitPrepackedAMXConstant(OpBuilder &b) {
  std::optional<FrozenRhs> rhsValue = getFrozenRhs();
  if (!rhsValue)
    return nullptr;
  // Packed [batch..., panels, pairs, 64], as emitAMXProduct packs at run
  // time.
  const FrozenRhs &frozen = *rhsValue;
  int64_t panelCount = llvm::divideCeil(frozen.nSize, kAMXBlock);
  int64_t pairCount = llvm::divideCeil(frozen.kSize, kAMXStep) * (kAMXStep / 2);
  int64_t rowLength = 2 * kAMXBlock;
  std::vector<uint16_t> packedBits(
      frozen.batch * panelCount * pairCount * rowLength, 0);
  for (int64_t bi = 0; bi < frozen.batch; ++bi)
    for (int64_t step = 0; step < frozen.kSize; ++step)
      for (int64_t column = 0; column < frozen.nSize; ++column) {
        int64_t panel = column / kAMXBlock, lane = column % kAMXBlock;
        int64_t to =
            ((bi * panelCount + panel) * pairCount + step / 2) * rowLength +
            2 * lane + step % 2;
        // The elements are bf16 values: their bits are a float's top half.
        packedBits[to] = static_cast<uint16_t>(
            llvm::bit_cast<uint32_t>(frozen.at(bi, step, column)) >> 16);
      }
  SmallVector<int64_t> shape(frozen.batchShape);
  llvm::append_range(shape,
                     ArrayRef<int64_t>{panelCount, pairCount, rowLength});
  auto value = DenseResourceElementsAttr::get(
      RankedTensorType::get(shape, b.getBF16Type()), "kiln_packed",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(
          ArrayRef<uint16_t>(packedBits)));
  return emitConstantGlobal(b, loc, value);
}

/// The transpose of a square matrix whose rows are `rows` (n vectors of n
/// elements, n a power of two): log2(n) rounds that interleave row i with
/// row i + n/2, each a pair of shuffles.
static SmallVector<Value> transposeInRegisters(OpBuilder &b, Location loc,
                                               ArrayRef<Value> rows) {
  int64_t n = rows.size();
  assert(llvm::isPowerOf2_64(n) &&
         cast<VectorType>(rows.front().getType()).getNumElements() == n &&
         "a square matrix of a power of two");
  SmallVector<int64_t> low, high;
  for (int64_t lane = 0; lane < n / 2; ++lane) {
    llvm::append_values(low, lane, lane + n);
    llvm::append_values(high, lane + n / 2, lane + n + n / 2);
  }
  SmallVector<Value> vectors(rows);
  for (int64_t round = 1; round < n; round *= 2) {
    SmallVector<Value> next;
    for (int64_t i = 0; i < n / 2; ++i) {
      Value top = vectors[i], bottom = vectors[i + n / 2];
      next.push_back(vector::ShuffleOp::create(b, loc, top, bottom, low));
      next.push_back(vector::ShuffleOp::create(b, loc, top, bottom, high));
    }
    vectors = std::move(next);
  }
  return vectors;
}

void MatmulLoops::emitAMXProduct(OpBuilder &b, Value prepackedRhs) {
  Type bf16 = b.getBF16Type();
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  // (Builders may run before the op they fill is in the module.)
  emitAMXRequest(b, loc, node->getParentOfType<ModuleOp>());
  Value steps = arith::CeilDivUIOp::create(b, loc, k, index(b, kAMXStep));
  Value paddedK = arith::MulIOp::create(b, loc, steps, index(b, kAMXStep));
  Value rowBlocks = arith::CeilDivUIOp::create(b, loc, m, index(b, kAMXBlock));
  Value paddedM = arith::MulIOp::create(b, loc, rowBlocks, index(b, kAMXBlock));
  Value pairs = arith::MulIOp::create(b, loc, steps, index(b, kAMXStep / 2));
  auto allocate = [&](ArrayRef<Value> inner, ArrayRef<int64_t> staticInner) {
    SmallVector<int64_t> shape(batchSizes.size() + inner.size(),
                               ShapedType::kDynamic);
    llvm::append_range(shape, staticInner);
    SmallVector<Value> sizes(batchSizes);
    llvm::append_range(sizes, inner);
    return memref::AllocOp::create(b, loc, MemRefType::get(shape, bf16), sizes,
                                   b.getI64IntegerAttr(kPanelAlignment))
        .getResult();
  };
  // [batch..., M padded, K padded] and [batch..., panels, K / 2 padded, 64].
  Value packedLhs = allocate({paddedM, paddedK}, {});
  Value packedRhs =
      prepackedRhs ? prepackedRhs : allocate({panels, pairs}, {2 * kAMXBlock});
  auto zeroOf = [&](OpBuilder &b) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(bf16, 0.0))
        .getResult();
  };
  // An element of `operand` at (row, col) of its [rows, cols] matrix, or
  // zero outside it; the read itself stays in bounds.
  auto elementOrZero = [&](OpBuilder &b, Value operand, ValueRange batch,
                           Value row, Value col, Value rows, Value cols,
                           bool transposed) {
    Value one = index(b, 1);
    Value inside = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, cols));
    Value readRow = arith::MinUIOp::create(
        b, loc, row, arith::SubIOp::create(b, loc, rows, one));
    Value readCol = arith::MinUIOp::create(
        b, loc, col, arith::SubIOp::create(b, loc, cols, one));
    Value element = memref::LoadOp::create(
        b, loc, operand, operandIndices(batch, readRow, readCol, transposed));
    return arith::SelectOp::create(b, loc, inside, element, zeroOf(b))
        .getResult();
  };
  auto at = [](ValueRange batch, ArrayRef<Value> inner) {
    SmallVector<Value> indices = llvm::to_vector(batch);
    llvm::append_range(indices, inner);
    return indices;
  };
  auto forLoop = [&](OpBuilder &b, Value upper,
                     function_ref<void(OpBuilder &, Value)> body) {
    scf::ForOp::create(b, loc, index(b, 0), upper, index(b, 1), ValueRange{},
                       [&](OpBuilder &b, Location, Value iv, ValueRange) {
                         body(b, iv);
                         scf::YieldOp::create(b, loc);
                       });
  };
  auto ifElse = [&](OpBuilder &b, Value condition,
                    function_ref<void(OpBuilder &)> then,
                    function_ref<void(OpBuilder &)> otherwise) {
    scf::IfOp::create(
        b, loc, condition,
        [&](OpBuilder &b, Location) {
          then(b);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location) {
          otherwise(b);
          scf::YieldOp::create(b, loc);
        });
  };
  auto lessOrEqual = [&](OpBuilder &b, Value lhsValue, Value rhsValue) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, lhsValue,
                                 rhsValue)
        .getResult();
  };
  auto chunkType = VectorType::get({kAMXStep}, bf16);
  // Whether row `row` (of `rows`) holds a whole chunk of 32 steps from
  // `first`: one vector to copy.
  auto isWholeChunk = [&](OpBuilder &b, Value row, Value rows, Value first) {
    return arith::AndIOp::create(
               b, loc,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                     rows),
               lessOrEqual(
                   b, arith::AddIOp::create(b, loc, first, index(b, kAMXStep)),
                   k))
        .getResult();
  };

  // The left-hand side: each row in steps of 32, whole vectors where the
  // row is stored along K and the step is whole.
  bool lhsTransposed = node.getTransposeLhs();
  auto packByElement = [&](OpBuilder &b, ValueRange batch, Value row,
                           Value first) {
    SmallVector<Value> elements;
    for (int64_t lane = 0; lane < kAMXStep; ++lane)
      elements.push_back(
          elementOrZero(b, lhs, batch, row,
                        arith::AddIOp::create(b, loc, first, index(b, lane)), m,
                        k, lhsTransposed));
    vector::StoreOp::create(
        b, loc, vector::FromElementsOp::create(b, loc, chunkType, elements),
        packedLhs, at(batch, {row, first}));
  };
  // Stored [K, M] (a weight gradient's left-hand side): whole blocks of 32
  // steps by 32 rows load along M, transpose in registers, store along K;
  // others go by element.
  auto packTransposedBlock = [&](OpBuilder &b, ValueRange batch, Value firstRow,
                                 Value first) {
    SmallVector<Value> vectors;
    for (int64_t i = 0; i < kAMXStep; ++i)
      vectors.push_back(vector::LoadOp::create(
          b, loc, chunkType, lhs,
          at(batch,
             {arith::AddIOp::create(b, loc, first, index(b, i)), firstRow})));
    for (auto [r, vector] :
         llvm::enumerate(transposeInRegisters(b, loc, vectors)))
      vector::StoreOp::create(
          b, loc, vector, packedLhs,
          at(batch,
             {arith::AddIOp::create(b, loc, firstRow, index(b, r)), first}));
  };
  emitNest(b, {rowBlocks}, [&](OpBuilder &b, ValueRange batch, ValueRange ivs) {
    Value firstRow = arith::MulIOp::create(b, loc, ivs[0], index(b, kAMXBlock));
    if (lhsTransposed) {
      Value wholeRows = lessOrEqual(
          b, arith::AddIOp::create(b, loc, firstRow, index(b, kAMXBlock)), m);
      forLoop(b, steps, [&](OpBuilder &b, Value step) {
        Value first = arith::MulIOp::create(b, loc, step, index(b, kAMXStep));
        Value whole = arith::AndIOp::create(
            b, loc, wholeRows,
            lessOrEqual(
                b, arith::AddIOp::create(b, loc, first, index(b, kAMXStep)),
                k));
        ifElse(
            b, whole,
            [&](OpBuilder &b) {
              packTransposedBlock(b, batch, firstRow, first);
            },
            [&](OpBuilder &b) {
              forLoop(b, index(b, kAMXBlock), [&](OpBuilder &b, Value r) {
                packByElement(b, batch,
                              arith::AddIOp::create(b, loc, firstRow, r),
                              first);
              });
            });
      });
      return;
    }
    forLoop(b, index(b, kAMXBlock), [&](OpBuilder &b, Value r) {
      Value row = arith::AddIOp::create(b, loc, firstRow, r);
      forLoop(b, steps, [&](OpBuilder &b, Value step) {
        Value first = arith::MulIOp::create(b, loc, step, index(b, kAMXStep));
        Value whole = isWholeChunk(b, row, m, first);
        ifElse(
            b, whole,
            [&](OpBuilder &b) {
              Value chunk = vector::LoadOp::create(b, loc, chunkType, lhs,
                                                   at(batch, {row, first}));
              vector::StoreOp::create(b, loc, chunk, packedLhs,
                                      at(batch, {row, first}));
            },
            [&](OpBuilder &b) { packByElement(b, batch, row, first); });
      });
    });
  });

  // The right-hand side, in panels of 32 columns, 64 elements per pair of
  // steps: element 2c + j of pair p is rhs(2p + j, column c).
  bool rhsTransposed = node.getTransposeRhs();
  auto pairType = VectorType::get({2}, bf16);
  auto packRhs = [&](OpBuilder &b, ValueRange batch, ValueRange ivs) {
    Value panel = ivs[0];
    Value firstColumn =
        arith::MulIOp::create(b, loc, panel, index(b, kAMXBlock));
    Value wholePanel = lessOrEqual(
        b, arith::AddIOp::create(b, loc, firstColumn, index(b, kAMXBlock)), n);
    if (!rhsTransposed) {
      // Stored [K, N]: two rows of the panel interleave into a pair.
      forLoop(b, pairs, [&](OpBuilder &b, Value pair) {
        Value firstStep = arith::MulIOp::create(b, loc, pair, index(b, 2));
        Value whole = arith::AndIOp::create(
            b, loc, wholePanel,
            arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult,
                arith::AddIOp::create(b, loc, firstStep, index(b, 1)), k));
        ifElse(
            b, whole,
            [&](OpBuilder &b) {
              Value even = vector::LoadOp::create(
                  b, loc, chunkType, rhs, at(batch, {firstStep, firstColumn}));
              Value odd = vector::LoadOp::create(
                  b, loc, chunkType, rhs,
                  at(batch,
                     {arith::AddIOp::create(b, loc, firstStep, index(b, 1)),
                      firstColumn}));
              Value interleaved =
                  vector::InterleaveOp::create(b, loc, even, odd);
              vector::StoreOp::create(b, loc, interleaved, packedRhs,
                                      at(batch, {panel, pair, index(b, 0)}));
            },
            [&](OpBuilder &b) {
              SmallVector<Value> elements;
              for (int64_t c = 0; c < kAMXBlock; ++c)
                for (int64_t j = 0; j < 2; ++j)
                  elements.push_back(elementOrZero(
                      b, rhs, batch,
                      arith::AddIOp::create(b, loc, firstStep, index(b, j)),
                      arith::AddIOp::create(b, loc, firstColumn, index(b, c)),
                      k, n, /*transposed=*/false));
              vector::StoreOp::create(
                  b, loc,
                  vector::FromElementsOp::create(
                      b, loc, VectorType::get({2 * kAMXBlock}, bf16), elements),
                  packedRhs, at(batch, {panel, pair, index(b, 0)}));
            });
      });
      return;
    }
    // Stored [N, K] (a linear layer's weight): a column's pairs are
    // adjacent, 16 of them per step of 32. A whole panel's step loads each
    // column's 16 pairs as a vector, and two 16 x 16 transposes of pairs
    // give each pair's 32 columns; other steps go column by column.
    auto packColumnStep = [&](OpBuilder &b, Value c, Value step) {
      Value column = arith::AddIOp::create(b, loc, firstColumn, c);
      Value lane = arith::MulIOp::create(b, loc, c, index(b, 2));
      Value first = arith::MulIOp::create(b, loc, step, index(b, kAMXStep));
      Value firstPair =
          arith::MulIOp::create(b, loc, step, index(b, kAMXStep / 2));
      auto storePair = [&](OpBuilder &b, int64_t p, Value pairValue) {
        vector::StoreOp::create(
            b, loc, pairValue, packedRhs,
            at(batch,
               {panel, arith::AddIOp::create(b, loc, firstPair, index(b, p)),
                lane}));
      };
      Value whole = isWholeChunk(b, column, n, first);
      ifElse(
          b, whole,
          [&](OpBuilder &b) {
            Value chunk = vector::LoadOp::create(b, loc, chunkType, rhs,
                                                 at(batch, {column, first}));
            for (int64_t p = 0; p < kAMXStep / 2; ++p)
              storePair(b, p,
                        vector::ExtractStridedSliceOp::create(
                            b, loc, chunk, ArrayRef<int64_t>{2 * p},
                            ArrayRef<int64_t>{2}, ArrayRef<int64_t>{1}));
          },
          [&](OpBuilder &b) {
            for (int64_t p = 0; p < kAMXStep / 2; ++p) {
              SmallVector<Value> elements;
              for (int64_t j = 0; j < 2; ++j)
                elements.push_back(elementOrZero(
                    b, rhs, batch,
                    arith::AddIOp::create(b, loc, first, index(b, 2 * p + j)),
                    column, k, n, /*transposed=*/true));
              storePair(
                  b, p,
                  vector::FromElementsOp::create(b, loc, pairType, elements));
            }
          });
    };
    auto packPanelStep = [&](OpBuilder &b, Value step, Value first) {
      Value firstPair =
          arith::MulIOp::create(b, loc, step, index(b, kAMXStep / 2));
      auto pairsType = VectorType::get({kAMXStep / 2}, b.getI32Type());
      SmallVector<Value> columns;
      for (int64_t c = 0; c < kAMXBlock; ++c)
        columns.push_back(vector::BitCastOp::create(
            b, loc, pairsType,
            vector::LoadOp::create(
                b, loc, chunkType, rhs,
                at(batch,
                   {arith::AddIOp::create(b, loc, firstColumn, index(b, c)),
                    first}))));
      SmallVector<Value> left = transposeInRegisters(
          b, loc, ArrayRef(columns).take_front(kAMXBlock / 2));
      SmallVector<Value> right = transposeInRegisters(
          b, loc, ArrayRef(columns).drop_front(kAMXBlock / 2));
      SmallVector<int64_t> both =
          llvm::to_vector(llvm::seq<int64_t>(0, kAMXBlock));
      for (int64_t p = 0; p < kAMXStep / 2; ++p) {
        Value row = vector::ShuffleOp::create(b, loc, left[p], right[p], both);
        vector::StoreOp::create(
            b, loc,
            vector::BitCastOp::create(
                b, loc, VectorType::get({2 * kAMXBlock}, bf16), row),
            packedRhs,
            at(batch,
               {panel, arith::AddIOp::create(b, loc, firstPair, index(b, p)),
                index(b, 0)}));
      }
    };
    forLoop(b, steps, [&](OpBuilder &b, Value step) {
      Value first = arith::MulIOp::create(b, loc, step, index(b, kAMXStep));
      Value whole = arith::AndIOp::create(
          b, loc, wholePanel,
          lessOrEqual(
              b, arith::AddIOp::create(b, loc, first, index(b, kAMXStep)), k));
      ifElse(
          b, whole, [&](OpBuilder &b) { packPanelStep(b, step, first); },
          [&](OpBuilder &b) {
            forLoop(b, index(b, kAMXBlock),
                    [&](OpBuilder &b, Value c) { packColumnStep(b, c, step); });
          });
    });
  };
  if (!prepackedRhs)
    emitNest(b, {panels}, packRhs);

  // The product: a task takes a panel and a group of blocks of rows, which
  // read the panel from cache in turn; each block of 32 x 32 sums in tiles.
  auto operandTile = amx::TileType::get({kAMXTileRows, kAMXStep}, bf16);
  auto sumTile =
      amx::TileType::get({kAMXTileRows, kAMXTileRows}, accumulatorType);
  Value groups =
      arith::CeilDivUIOp::create(b, loc, rowBlocks, index(b, kAMXGroup));
  emitNest(
      b, {groups, panels}, [&](OpBuilder &b, ValueRange batch, ValueRange ivs) {
        Value firstBlock =
            arith::MulIOp::create(b, loc, ivs[0], index(b, kAMXGroup));
        Value endBlock = arith::MinUIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, firstBlock, index(b, kAMXGroup)),
            rowBlocks);
        auto blockLoop =
            scf::ForOp::create(b, loc, firstBlock, endBlock, index(b, 1));
        OpBuilder::InsertionGuard blockGuard(b);
        b.setInsertionPointToStart(blockLoop.getBody());
        Value firstRow = arith::MulIOp::create(
            b, loc, blockLoop.getInductionVar(), index(b, kAMXBlock));
        Value panel = ivs[1];
        Value firstColumn =
            arith::MulIOp::create(b, loc, panel, index(b, kAMXBlock));
        Value zeroTile = amx::TileZeroOp::create(b, loc, sumTile);
        Value secondRow =
            arith::AddIOp::create(b, loc, firstRow, index(b, kAMXTileRows));
        auto sums = scf::ForOp::create(
            b, loc, index(b, 0), steps, index(b, 1),
            SmallVector<Value>(4, zeroTile),
            [&](OpBuilder &b, Location, Value step, ValueRange tiles) {
              Value first =
                  arith::MulIOp::create(b, loc, step, index(b, kAMXStep));
              Value pair =
                  arith::MulIOp::create(b, loc, step, index(b, kAMXStep / 2));
              Value lhsTiles[2], rhsTiles[2];
              for (auto [half, row] :
                   llvm::enumerate(std::array<Value, 2>{firstRow, secondRow}))
                lhsTiles[half] = amx::TileLoadOp::create(
                    b, loc, operandTile, packedLhs, at(batch, {row, first}));
              for (int64_t half = 0; half < 2; ++half)
                rhsTiles[half] = amx::TileLoadOp::create(
                    b, loc, operandTile, packedRhs,
                    at(batch,
                       {panel, pair, index(b, half * 2 * kAMXTileRows)}));
              SmallVector<Value> updated;
              for (int64_t i = 0; i < 2; ++i)
                for (int64_t j = 0; j < 2; ++j)
                  updated.push_back(
                      amx::TileMulFOp::create(b, loc, sumTile, lhsTiles[i],
                                              rhsTiles[j], tiles[2 * i + j]));
              scf::YieldOp::create(b, loc, updated);
            });
        Value block = memref::AllocaOp::create(
            b, loc, MemRefType::get({kAMXBlock, kAMXBlock}, accumulatorType),
            b.getI64IntegerAttr(kPanelAlignment));
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            amx::TileStoreOp::create(b, loc, block,
                                     ValueRange{index(b, i * kAMXTileRows),
                                                index(b, j * kAMXTileRows)},
                                     sums.getResult(2 * i + j));
        auto rowType = VectorType::get({kAMXBlock}, accumulatorType);
        forLoop(b, index(b, kAMXBlock), [&](OpBuilder &b, Value r) {
          Value rowSums = vector::LoadOp::create(b, loc, rowType, block,
                                                 ValueRange{r, index(b, 0)});
          emitRowStore(b, batch, arith::AddIOp::create(b, loc, firstRow, r),
                       firstColumn, rowSums);
        });
      });
  memref::DeallocOp::create(b, loc, packedLhs);
  if (!prepackedRhs)
    memref::DeallocOp::create(b, loc, packedRhs);
}
