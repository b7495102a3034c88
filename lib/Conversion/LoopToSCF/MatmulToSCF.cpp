//===- MatmulToSCF.cpp - Matrix products as register-tiled SCF loops ------===//
//
// Part of Kiln. A loop.matmul on the CPU runs in two parallel phases. First
// the right-hand side is packed into panels of NR columns, converted to the
// accumulator type and zero-padded, so that the inner loop reads one aligned
// vector per step whatever the operand's layout or dtype. Then every MR x NR
// tile of the result accumulates in MR vector registers over K, broadcasting
// one left-hand element per row and step (an outer product per step), and is
// stored once, through the epilogue (on whole vectors, but at N's edge) or
// rounded to the result's type. Tasks take a panel and a block of tiles,
// and the tiles take a block of steps along K in turn, so that they read
// that part of the panel from L1, not every tile the whole panel from
// memory. A product of at most 16 rows whose operands both run along
// K (a linear layer, a token at a time) is dot products instead, reading
// the weight as it is stored: packing it would cost more than the product.
//
//===----------------------------------------------------------------------===//

#include "MatmulToSCF.h"
#include "MatmulLoops.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Codegen/VectorizeNodeBody.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/bit.h"
#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;

MatmulLoops::MatmulLoops(OpBuilder &b, loop::MatmulOp node, Value dest,
                         const IRMapping &mapping,
                         const LoopToSCFOptions &options)
    : loc(node.getLoc()), node(node), mapping(mapping),
      lhs(mapping.lookup(node.getLhs())), rhs(mapping.lookup(node.getRhs())),
      dest(dest), options(options) {
  elementType = loop::getScalarType(node.getResultType().getElementType());
  accumulatorType = node.getAccumulatorType();
  int64_t accumulatorBytes = accumulatorType.getWidth() / 8;
  panelWidth = kVectorsPerTileRow *
               std::max<int64_t>(options.vectorBytes / accumulatorBytes, 1);

  SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
  int64_t batchDims = node.getNumBatchDims();
  batchSizes.assign(sizes.begin(), sizes.begin() + batchDims);
  m = sizes[batchDims];
  n = sizes[batchDims + 1];
  k = memref::DimOp::create(b, loc, lhs,
                            batchDims + (node.getTransposeLhs() ? 0 : 1));
  Value panelWidthValue = arith::ConstantIndexOp::create(b, loc, panelWidth);
  Value tileRows = arith::ConstantIndexOp::create(b, loc, kTileRows);
  panels = arith::CeilDivUIOp::create(b, loc, n, panelWidthValue);
  tiles = arith::CeilDivUIOp::create(b, loc, m, tileRows);
}

void MatmulLoops::emitNest(
    OpBuilder &b, ArrayRef<Value> inner,
    function_ref<void(OpBuilder &, ValueRange, ValueRange)> body) {
  SmallVector<Value> upper(batchSizes);
  llvm::append_range(upper, inner);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lower(upper.size(), zero), steps(upper.size(), one);
  size_t batchDims = batchSizes.size();
  auto build = [&](OpBuilder &nested, Location, ValueRange ivs) {
    body(nested, ivs.take_front(batchDims), ivs.drop_front(batchDims));
  };
  if (options.parallel)
    scf::ParallelOp::create(b, loc, lower, upper, steps, build);
  else
    scf::buildLoopNest(b, loc, lower, upper, steps, build);
}

SmallVector<Value> MatmulLoops::operandIndices(ValueRange batch, Value row,
                                               Value col,
                                               bool transposed) const {
  SmallVector<Value> indices = llvm::to_vector(batch);
  indices.push_back(transposed ? col : row);
  indices.push_back(transposed ? row : col);
  return indices;
}

Value mlir::kiln::convertFloat(OpBuilder &b, Location loc, Value value,
                               Type elementType) {
  Type from = getElementTypeOrSelf(value.getType());
  if (from == elementType)
    return value;
  Type to = elementType;
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    to = vector.clone(elementType);
  if (from.getIntOrFloatBitWidth() < elementType.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

void MatmulLoops::emitPacking(OpBuilder &b) {
  // [batch..., panels, K, NR], every size but NR dynamic.
  SmallVector<int64_t> shape(batchSizes.size() + 2, ShapedType::kDynamic);
  shape.push_back(panelWidth);
  SmallVector<Value> dynamicSizes(batchSizes);
  dynamicSizes.push_back(panels);
  dynamicSizes.push_back(k);
  packed = memref::AllocOp::create(
      b, loc, MemRefType::get(shape, accumulatorType), dynamicSizes,
      b.getI64IntegerAttr(kPanelAlignment));
  bool transposed = node.getTransposeRhs();
  emitNest(b, {panels}, [&](OpBuilder &b, ValueRange batch, ValueRange ivs) {
    Value panel = ivs.front();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value width = arith::ConstantIndexOp::create(b, loc, panelWidth);
    Value firstColumn = arith::MulIOp::create(b, loc, panel, width);
    Value lastColumn = arith::SubIOp::create(b, loc, n, one);
    Value padding =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(accumulatorType, 0.0));
    auto vectorType = VectorType::get({panelWidth}, accumulatorType);
    auto storeRow = [&](OpBuilder &b, Value step, Value vector) {
      SmallVector<Value> indices = llvm::to_vector(batch);
      llvm::append_range(indices, ValueRange{panel, step, zero});
      vector::StoreOp::create(b, loc, vector, packed, indices);
    };
    // Any panel, any layout: element by element. Columns past N read the
    // last one (always there: a panel exists only when N > 0) and store
    // zero, without branches.
    auto packByElement = [&](OpBuilder &b) {
      scf::ForOp::create(
          b, loc, zero, k, one, ValueRange{},
          [&](OpBuilder &b, Location, Value step, ValueRange) {
            SmallVector<Value> elements;
            for (int64_t lane = 0; lane < panelWidth; ++lane) {
              Value column = arith::AddIOp::create(
                  b, loc, firstColumn,
                  arith::ConstantIndexOp::create(b, loc, lane));
              Value inBounds = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, column, n);
              Value clamped =
                  arith::MinUIOp::create(b, loc, column, lastColumn);
              Value element = memref::LoadOp::create(
                  b, loc, rhs,
                  operandIndices(batch, step, clamped, transposed));
              element = convertFloat(b, loc, element, accumulatorType);
              elements.push_back(
                  arith::SelectOp::create(b, loc, inBounds, element, padding));
            }
            storeRow(
                b, step,
                vector::FromElementsOp::create(b, loc, vectorType, elements));
            scf::YieldOp::create(b, loc);
          });
    };
    if (transposed) {
      packByElement(b);
      return;
    }
    // A whole panel of a row-major rhs is one contiguous vector per step.
    Value full = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule,
        arith::AddIOp::create(b, loc, firstColumn, width), n);
    scf::IfOp::create(
        b, loc, full,
        [&](OpBuilder &b, Location) {
          scf::ForOp::create(
              b, loc, zero, k, one, ValueRange{},
              [&](OpBuilder &b, Location, Value step, ValueRange) {
                auto rowType = VectorType::get(
                    {panelWidth},
                    cast<MemRefType>(rhs.getType()).getElementType());
                Value row = vector::LoadOp::create(
                    b, loc, rowType, rhs,
                    operandIndices(batch, step, firstColumn, false));
                storeRow(b, step, convertFloat(b, loc, row, accumulatorType));
                scf::YieldOp::create(b, loc);
              });
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location) {
          packByElement(b);
          scf::YieldOp::create(b, loc);
        });
  });
}

void MatmulLoops::emitTiles(OpBuilder &b) {
  auto vectorType = VectorType::get({panelWidth}, accumulatorType);
  bool transposed = node.getTransposeLhs();
  Value blocks = arith::CeilDivUIOp::create(
      b, loc, tiles, arith::ConstantIndexOp::create(b, loc, kTilesPerBlock));
  emitNest(
      b, {blocks, panels}, [&](OpBuilder &b, ValueRange batch, ValueRange ivs) {
        Value block = ivs[0], panel = ivs[1];
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value blockTiles =
            arith::ConstantIndexOp::create(b, loc, kTilesPerBlock);
        Value firstTile = arith::MulIOp::create(b, loc, block, blockTiles);
        Value lastTile = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, firstTile, blockTiles),
            tiles);
        // The tiles' sums between blocks of steps.
        auto sumsType = MemRefType::get({kTilesPerBlock, kTileRows, panelWidth},
                                        accumulatorType);
        Value savedSums = memref::AllocaOp::create(
            b, loc, sumsType, b.getI64IntegerAttr(kPanelAlignment));
        Value blockSteps = arith::ConstantIndexOp::create(b, loc, kBlockSteps);
        // One block of steps at least, so that K = 0 stores its zeros.
        Value stepBlocks = arith::MaxUIOp::create(
            b, loc, arith::CeilDivUIOp::create(b, loc, k, blockSteps), one);
        Value lastStepBlock = arith::SubIOp::create(b, loc, stepBlocks, one);
        auto stepBlockLoop = scf::ForOp::create(b, loc, zero, stepBlocks, one);
        OpBuilder::InsertionGuard stepBlockGuard(b);
        b.setInsertionPointToStart(stepBlockLoop.getBody());
        Value stepBlock = stepBlockLoop.getInductionVar();
        Value firstStep = arith::MulIOp::create(b, loc, stepBlock, blockSteps);
        Value endStep = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, firstStep, blockSteps), k);
        Value isFirstBlock = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, stepBlock, zero);
        Value isLastBlock = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, stepBlock, lastStepBlock);
        auto tileLoop = scf::ForOp::create(b, loc, firstTile, lastTile, one);
        OpBuilder::InsertionGuard tileGuard(b);
        b.setInsertionPointToStart(tileLoop.getBody());
        Value tile = tileLoop.getInductionVar();
        Value slot = arith::SubIOp::create(b, loc, tile, firstTile);
        Value firstRow = arith::MulIOp::create(
            b, loc, tile, arith::ConstantIndexOp::create(b, loc, kTileRows));
        Value firstColumn = arith::MulIOp::create(
            b, loc, panel, arith::ConstantIndexOp::create(b, loc, panelWidth));
        // Rows past M compute a copy of the last row and are not stored.
        Value lastRow = arith::SubIOp::create(b, loc, m, one);
        SmallVector<Value> rows;
        for (int64_t r = 0; r < kTileRows; ++r)
          rows.push_back(arith::AddIOp::create(
              b, loc, firstRow, arith::ConstantIndexOp::create(b, loc, r)));
        SmallVector<Value> readRows = llvm::map_to_vector(rows, [&](Value row) {
          return arith::MinUIOp::create(b, loc, row, lastRow).getResult();
        });

        Value zeroVector = arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(vectorType,
                                   b.getFloatAttr(accumulatorType, 0.0)));
        // The first block of steps starts from zero, the others from the
        // sums the previous one saved.
        auto inits = scf::IfOp::create(
            b, loc, isFirstBlock,
            [&](OpBuilder &b, Location) {
              scf::YieldOp::create(b, loc,
                                   SmallVector<Value>(kTileRows, zeroVector));
            },
            [&](OpBuilder &b, Location) {
              SmallVector<Value> saved;
              for (int64_t r = 0; r < kTileRows; ++r)
                saved.push_back(vector::LoadOp::create(
                    b, loc, vectorType, savedSums,
                    ValueRange{slot, arith::ConstantIndexOp::create(b, loc, r),
                               zero}));
              scf::YieldOp::create(b, loc, saved);
            });
        auto reduction = scf::ForOp::create(
            b, loc, firstStep, endStep, one, inits.getResults(),
            [&](OpBuilder &b, Location, Value step, ValueRange accumulators) {
              SmallVector<Value> panelIndices = llvm::to_vector(batch);
              llvm::append_range(panelIndices, ValueRange{panel, step, zero});
              Value columns = vector::LoadOp::create(b, loc, vectorType, packed,
                                                     panelIndices);
              SmallVector<Value> updated;
              for (auto [row, accumulator] :
                   llvm::zip(readRows, accumulators)) {
                Value element = memref::LoadOp::create(
                    b, loc, lhs, operandIndices(batch, row, step, transposed));
                element = convertFloat(b, loc, element, accumulatorType);
                Value broadcast =
                    vector::BroadcastOp::create(b, loc, vectorType, element);
                updated.push_back(vector::FMAOp::create(b, loc, broadcast,
                                                        columns, accumulator));
              }
              scf::YieldOp::create(b, loc, updated);
            });

        // Blocks of steps before the last save their sums.
        auto isLast = scf::IfOp::create(b, loc, isLastBlock,
                                        /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard saveGuard(b);
          b.setInsertionPointToStart(&isLast.getElseRegion().front());
          for (auto [r, sums] : llvm::enumerate(reduction.getResults()))
            vector::StoreOp::create(
                b, loc, sums, savedSums,
                ValueRange{slot, arith::ConstantIndexOp::create(b, loc, r),
                           zero});
        }
        b.setInsertionPointToStart(&isLast.getThenRegion().front());
        for (auto [row, sums] : llvm::zip(rows, reduction.getResults()))
          emitRowStore(b, batch, row, firstColumn, sums);
      });
}

void MatmulLoops::emitRowStore(OpBuilder &b, ValueRange batch, Value row,
                               Value firstColumn, Value sums) {
  Value inRows =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, m);
  scf::IfOp::create(b, loc, inRows, [&](OpBuilder &b, Location) {
    SmallVector<Value> indices = llvm::to_vector(batch);
    indices.push_back(row);
    indices.push_back(firstColumn);
    Value valid = arith::SubIOp::create(b, loc, n, firstColumn);
    Value full = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, valid,
        arith::ConstantIndexOp::create(b, loc, panelWidth));
    scf::IfOp::create(
        b, loc, full,
        [&](OpBuilder &b, Location) {
          Value result = emitWholeRowElements(b, batch, row, firstColumn, sums);
          vector::StoreOp::create(b, loc, result, dest, indices);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location) {
          Value result = emitRowElements(b, batch, row, firstColumn, sums);
          Value mask = vector::CreateMaskOp::create(
              b, loc, VectorType::get({panelWidth}, b.getI1Type()),
              ValueRange{valid});
          vector::MaskedStoreOp::create(b, loc, dest, indices, mask, result);
          scf::YieldOp::create(b, loc);
        });
    scf::YieldOp::create(b, loc);
  });
}

Value MatmulLoops::emitWholeRowElements(OpBuilder &b, ValueRange batch,
                                        Value row, Value firstColumn,
                                        Value sums) {
  if (!node.hasEpilogue() || !canVectorizeBody(node.getEpilogue().front()))
    return emitRowElements(b, batch, row, firstColumn, sums);
  // The epilogue's arguments: the batch indices, the row, the column (which
  // varies by lane) and the sums (one per lane).
  SmallVector<Value> arguments = llvm::to_vector(batch);
  llvm::append_range(arguments, ValueRange{row, firstColumn, sums});
  FailureOr<Value> elements =
      emitVectorBodyElements(b, node.getEpilogue().front(), mapping, arguments,
                             panelWidth, kCPUBufferAlignment, /*cache=*/nullptr,
                             /*columnIndex=*/batch.size() + 1);
  assert(succeeded(elements) && "checked by canVectorizeBody");
  return *elements;
}

Value MatmulLoops::emitRowElements(OpBuilder &b, ValueRange batch, Value row,
                                   Value firstColumn, Value sums) {
  if (!node.hasEpilogue())
    return convertFloat(b, loc, sums, elementType);
  Block &epilogue = node.getEpilogue().front();
  Value lastColumn = arith::SubIOp::create(
      b, loc, n, arith::ConstantIndexOp::create(b, loc, 1));
  SmallVector<Value> elements;
  for (int64_t lane = 0; lane < panelWidth; ++lane) {
    Value column = arith::AddIOp::create(
        b, loc, firstColumn, arith::ConstantIndexOp::create(b, loc, lane));
    column = arith::MinUIOp::create(b, loc, column, lastColumn);
    SmallVector<Value> arguments = llvm::to_vector(batch);
    arguments.push_back(row);
    arguments.push_back(column);
    arguments.push_back(vector::ExtractOp::create(b, loc, sums, lane));
    elements.push_back(emitBodyValue(b, epilogue, mapping, arguments));
  }
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({panelWidth}, elementType), elements);
}

std::optional<std::vector<float>>
mlir::kiln::getFloatElements(Attribute value) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements)
    return std::nullopt;
  Type type = elements.getElementType();
  if (!type.isF32() && !type.isBF16() && !type.isF16())
    return std::nullopt;
  int64_t count = elements.getNumElements();
  unsigned bytes = type.getIntOrFloatBitWidth() / 8;
  ArrayRef<char> data;
  bool splat = false;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    data = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      data = blob->getData();
  }
  if (static_cast<int64_t>(data.size()) != (splat ? 1 : count) * bytes)
    return std::nullopt;
  std::vector<float> result(count);
  for (int64_t i = 0; i < count; ++i) {
    const char *element = data.data() + (splat ? 0 : i) * bytes;
    if (type.isF32()) {
      std::memcpy(&result[i], element, 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, element, 2);
    result[i] =
        type.isBF16()
            ? llvm::bit_cast<float>(static_cast<uint32_t>(bits) << 16)
            : APFloat(APFloat::IEEEhalf(), APInt(16, bits)).convertToFloat();
  }
  return result;
}

std::optional<FrozenRhs> MatmulLoops::getFrozenRhs() {
  auto constant = node.getRhs().getDefiningOp<arith::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(node.getRhs().getType());
  if (!constant || !type || !type.hasStaticShape() ||
      type.getNumElements() == 0)
    return std::nullopt;
  std::optional<std::vector<float>> elements =
      getFloatElements(constant.getValue());
  if (!elements)
    return std::nullopt;
  // rhs is [batch..., K, N], or [batch..., N, K] when transposed.
  bool transposed = node.getTransposeRhs();
  int64_t rank = type.getRank();
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  return FrozenRhs{std::move(*elements),
                   SmallVector<int64_t>(type.getShape().drop_back(2)),
                   type.getNumElements() / (rows * cols),
                   transposed ? cols : rows,
                   transposed ? rows : cols,
                   transposed};
}

bool MatmulLoops::emitPrepackedConstant(OpBuilder &b) {
  std::optional<FrozenRhs> rhsValue = getFrozenRhs();
  if (!rhsValue || !accumulatorType.isF32())
    return false;
  const FrozenRhs &frozen = *rhsValue;
  int64_t kSize = frozen.kSize, nSize = frozen.nSize;
  int64_t panelCount = llvm::divideCeil(nSize, panelWidth);
  std::vector<float> packedElements(
      frozen.batch * panelCount * kSize * panelWidth, 0.0f);
  for (int64_t bi = 0; bi < frozen.batch; ++bi)
    for (int64_t kk = 0; kk < kSize; ++kk)
      for (int64_t column = 0; column < nSize; ++column) {
        int64_t panel = column / panelWidth, lane = column % panelWidth;
        packedElements[((bi * panelCount + panel) * kSize + kk) * panelWidth +
                       lane] = frozen.at(bi, kk, column);
      }
  SmallVector<int64_t> shape(frozen.batchShape);
  llvm::append_range(shape, ArrayRef<int64_t>{panelCount, kSize, panelWidth});
  auto packedType = RankedTensorType::get(shape, accumulatorType);
  auto value = DenseResourceElementsAttr::get(
      packedType, "kiln_packed",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(
          ArrayRef<float>(packedElements)));
  packed = emitConstantGlobal(b, loc, value);
  return true;
}

void MatmulLoops::emitDotProducts(OpBuilder &b) {
  int64_t lanes = std::max<int64_t>(
      options.vectorBytes / (accumulatorType.getWidth() / 8), 1);
  auto vectorType = VectorType::get({lanes}, accumulatorType);
  Value columnBlocks = arith::CeilDivUIOp::create(
      b, loc, n, arith::ConstantIndexOp::create(b, loc, kDotColumns));
  emitNest(
      b, {columnBlocks}, [&](OpBuilder &b, ValueRange batch, ValueRange ivs) {
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value lanesValue = arith::ConstantIndexOp::create(b, loc, lanes);
        Value firstColumn = arith::MulIOp::create(
            b, loc, ivs.front(),
            arith::ConstantIndexOp::create(b, loc, kDotColumns));
        // Columns past N read the last one and are not stored.
        Value lastColumn = arith::SubIOp::create(b, loc, n, one);
        SmallVector<Value> columns, readColumns;
        for (int64_t c = 0; c < kDotColumns; ++c) {
          columns.push_back(arith::AddIOp::create(
              b, loc, firstColumn, arith::ConstantIndexOp::create(b, loc, c)));
          readColumns.push_back(
              arith::MinUIOp::create(b, loc, columns.back(), lastColumn));
        }
        Value wholeSteps = arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, k, lanesValue), lanesValue);
        Value zeroVector = arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(vectorType,
                                   b.getFloatAttr(accumulatorType, 0.0)));
        auto indices = [&](Value row, Value step) {
          SmallVector<Value> result = llvm::to_vector(batch);
          result.push_back(row);
          result.push_back(step);
          return result;
        };
        auto load = [&](Value operand, Value row, Value step,
                        Value mask) -> Value {
          auto type = VectorType::get(
              {lanes}, cast<MemRefType>(operand.getType()).getElementType());
          Value loaded =
              mask ? vector::MaskedLoadOp::create(
                         b, loc, type, operand, indices(row, step), mask,
                         arith::ConstantOp::create(
                             b, loc,
                             DenseElementsAttr::get(
                                 type,
                                 b.getFloatAttr(type.getElementType(), 0.0))))
                         .getResult()
                   : vector::LoadOp::create(b, loc, type, operand,
                                            indices(row, step))
                         .getResult();
          return convertFloat(b, loc, loaded, accumulatorType);
        };
        auto rowLoop = scf::ForOp::create(b, loc, zero, m, one);
        OpBuilder::InsertionGuard rowGuard(b);
        b.setInsertionPointToStart(rowLoop.getBody());
        Value row = rowLoop.getInductionVar();
        auto accumulate = [&](Value step, Value mask, ValueRange sums) {
          Value lhsVector = load(lhs, row, step, mask);
          SmallVector<Value> updated;
          for (auto [column, sum] : llvm::zip(readColumns, sums))
            updated.push_back(vector::FMAOp::create(
                b, loc, lhsVector, load(rhs, column, step, mask), sum));
          return updated;
        };
        auto steps = scf::ForOp::create(
            b, loc, zero, wholeSteps, lanesValue,
            SmallVector<Value>(kDotColumns, zeroVector),
            [&](OpBuilder &nested, Location, Value step, ValueRange sums) {
              OpBuilder::InsertionGuard loopGuard(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              scf::YieldOp::create(b, loc, accumulate(step, Value(), sums));
            });
        // The last K mod lanes steps, through a mask.
        Value mask = vector::CreateMaskOp::create(
            b, loc, VectorType::get({lanes}, b.getI1Type()),
            ValueRange{arith::SubIOp::create(b, loc, k, wholeSteps)});
        SmallVector<Value> sums =
            accumulate(wholeSteps, mask, steps.getResults());
        for (auto [columnValue, sum] : llvm::zip(columns, sums)) {
          Value column = columnValue;
          Value total = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::ADD, sum);
          Value inColumns = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, column, n);
          scf::IfOp::create(b, loc, inColumns, [&](OpBuilder &b, Location) {
            SmallVector<Value> at = llvm::to_vector(batch);
            at.push_back(row);
            at.push_back(column);
            memref::StoreOp::create(
                b, loc, emitMatmulElement(b, node, mapping, at, total), dest,
                at);
            scf::YieldOp::create(b, loc);
          });
        }
      });
}

void mlir::kiln::emitMatmulLoops(OpBuilder &b, loop::MatmulOp node, Value dest,
                                 const IRMapping &mapping,
                                 const LoopToSCFOptions &options) {
  MatmulLoops loops(b, node, dest, mapping, options);
  bool amx = loops.usesAMX();
  Value prepackedAMX = amx ? loops.emitPrepackedAMXConstant(b) : nullptr;
  bool prepacked =
      amx ? prepackedAMX != nullptr : loops.emitPrepackedConstant(b);
  auto emitTiled = [&](OpBuilder &b) {
    if (amx) {
      loops.emitAMXProduct(b, prepackedAMX);
      return;
    }
    if (!prepacked)
      loops.emitPacking(b);
    loops.emitTiles(b);
    if (!prepacked)
      memref::DeallocOp::create(b, node.getLoc(), loops.packed);
  };
  if (prepacked || !loops.readsAlongK()) {
    emitTiled(b);
    return;
  }
  // A few rows (a token at a time through a linear layer) multiply the
  // weight as it is stored.
  Location loc = node.getLoc();
  Value fewRows =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, loops.m,
                            arith::ConstantIndexOp::create(b, loc, kFewRows));
  scf::IfOp::create(
      b, loc, fewRows,
      [&](OpBuilder &b, Location) {
        loops.emitDotProducts(b);
        scf::YieldOp::create(b, loc);
      },
      [&](OpBuilder &b, Location) {
        emitTiled(b);
        scf::YieldOp::create(b, loc);
      });
}
