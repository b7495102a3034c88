//===- MatmulKernelSupport.h - What the product kernels share ---*- C++ -*-===//
//
// Part of Kiln. Internal to the LoopToGPU library: the pieces that Kiln's
// tensor-core kernels share, Ampere's mma.sync product (MatmulKernels.cpp),
// Hopper's warpgroup one (WarpgroupMatmulKernels.cpp) and attention
// (AttentionKernels.cpp): index arithmetic, raw pointers into global and
// workgroup memory, 16-byte cp.async copies that fill with zeros past a
// matrix's edge, ldmatrix and mma.sync on fragments, Hopper's swizzled
// tiles and their wgmma descriptors, and the order in which blocks take
// their tiles.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_LOOPTOGPU_MATMULKERNELSUPPORT_H
#define KILN_LIB_CONVERSION_LOOPTOGPU_MATMULKERNELSUPPORT_H

#include "GPUKernels.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// 16-bit elements per 16-byte copy.
inline constexpr int64_t kCopyElements = 8;

/// Hopper's operand tiles in workgroup memory are 128-byte swizzled, as
/// wgmma reads them: rows of 128 bytes whose 16-byte pieces are stored in
/// the order of their index XOR the row's index modulo 8. A pattern spans
/// 8 rows, 1024 bytes, where tiles must start: wgmma computes it from the
/// address.
inline constexpr int64_t kSwizzleRowBytes = 128;
inline constexpr int64_t kSwizzleRows = 8;
inline constexpr int64_t kSwizzleBytes = kSwizzleRows * kSwizzleRowBytes;
/// The 16-bit elements of a swizzled row.
inline constexpr int64_t kSwizzleElements = kSwizzleRowBytes / 2;

/// Rows of tiles that consecutive blocks take before moving along N, so
/// that blocks running together share their operands' tiles in L2.
inline constexpr int64_t kTileGroupRows = 8;

/// A product kernel's sizes: a block per tile of each batch's result.
struct ProductGrid {
  /// The operands' element type.
  Type elementType;
  SmallVector<Value> batchSizes;
  Value m, n, k;
  Value tilesM, tilesN, tiles;
  /// Blocks of the launch: batches x tiles.
  Value blocks;
};

/// Where a block's tile lies: its batch, and the first row and column of
/// its tile of the result.
struct BlockTile {
  Value batch, firstRow, firstColumn;
};

/// Where a thread of a kernel of mma.sync m16n8k16 products stands.
struct FragmentLanes {
  /// Its lane and warp.
  Value lane, warp;
  /// The row (g) and the first of the pair of columns (2c) of an
  /// accumulator fragment that the lane holds.
  Value row, column;
  /// The lane's ldmatrix x4 address within a 16x16 fragment, in elements:
  /// of an operand read as stored or transposed, and of an rhs whose rows
  /// are the product's columns (read as stored).
  Value operandOffset, columnsOffset;
};

/// Builds the index and pointer arithmetic of a product kernel at `b`'s
/// insertion point.
class MatmulKernelBuilder {
public:
  MatmulKernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value toI64(Value value) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
  }
  Value add(Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value mul(Value lhs, Value rhs) {
    return arith::MulIOp::create(b, loc, lhs, rhs);
  }
  Value div(Value lhs, int64_t rhs) {
    return arith::DivUIOp::create(b, loc, lhs, index(rhs));
  }
  Value rem(Value lhs, int64_t rhs) {
    return arith::RemUIOp::create(b, loc, lhs, index(rhs));
  }

  /// The lanes of `thread` in a kernel whose operands' rows in workgroup
  /// memory lie `rowStride` elements apart.
  FragmentLanes getFragmentLanes(Value thread, int64_t rowStride) {
    FragmentLanes lanes;
    lanes.lane = rem(thread, kWarpSize);
    lanes.warp = div(thread, kWarpSize);
    lanes.row = div(lanes.lane, 4);
    lanes.column = mul(rem(lanes.lane, 4), index(2));
    // ldmatrix x4: lanes 8q..8q+7 address the rows of matrix q. For an
    // operand read as stored, matrices 0-3 are (rows 0-7, cols 0-7), (rows
    // 8-15, cols 0-7), (rows 0-7, cols 8-15), (rows 8-15, cols 8-15); for
    // an rhs whose rows are the product's columns, matrices 1 and 2 swap.
    Value quarter = div(lanes.lane, 8), rowInMatrix = rem(lanes.lane, 8);
    Value lowBlock = mul(rem(quarter, 2), index(8));
    Value highBlock = mul(div(quarter, 2), index(8));
    lanes.operandOffset =
        add(mul(add(lowBlock, rowInMatrix), index(rowStride)), highBlock);
    lanes.columnsOffset =
        add(mul(add(highBlock, rowInMatrix), index(rowStride)), lowBlock);
    return lanes;
  }

  /// The batch and the block of rows that launch block `block` computes,
  /// of `rowBlocks` per batch; with `lastFirst` each batch's blocks run in
  /// reverse (causal attention's longest rows first).
  std::pair<Value, Value> splitBlock(Value block, Value rowBlocks,
                                     bool lastFirst) {
    Value batch = arith::DivUIOp::create(b, loc, block, rowBlocks);
    Value rowBlock = arith::RemUIOp::create(b, loc, block, rowBlocks);
    if (lastFirst)
      rowBlock = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, rowBlocks, index(1)), rowBlock);
    return {batch, rowBlock};
  }

  /// `keyBlocks` blocks of `blockKeys` keys cut to those a causal block of
  /// queries [`firstQuery`, `firstQuery` + `blockQueries`) sees: up to its
  /// last query's (of `queries`).
  Value getCausalKeyBlocks(Value keyBlocks, Value firstQuery,
                           int64_t blockQueries, Value queries,
                           int64_t blockKeys) {
    Value queriesEnd = arith::MinUIOp::create(
        b, loc, add(firstQuery, index(blockQueries)), queries);
    return arith::MinUIOp::create(
        b, loc, keyBlocks,
        arith::CeilDivUIOp::create(b, loc, queriesEnd, index(blockKeys)));
  }

  /// The global pointer to batch `batch`'s matrix of `rows` x `cols`
  /// elements in `buffer` (an aligned view, contiguous).
  Value getBatchMatrix(Value buffer, Value batch, Value rows, int64_t cols) {
    Value global = getPointer(buffer, NVVM::NVVMMemorySpace::Global);
    return offset(global, mul(batch, mul(rows, index(cols))));
  }

  /// Whether (`row`, `col`) lies in a matrix of `rows` x `cols`.
  Value isInside(Value row, Value rows, Value col, Value cols) {
    return arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, cols));
  }

  /// `base` advanced by `elements` 16-bit elements.
  Value offset(Value base, Value elements) {
    return LLVM::GEPOp::create(b, loc, base.getType(), b.getI16Type(), base,
                               ValueRange{toI64(elements)});
  }

  /// A pointer in `addressSpace` to `buffer`'s first element.
  Value getPointer(Value buffer, NVVM::NVVMMemorySpace addressSpace) {
    Value address =
        toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
    auto pointerType = LLVM::LLVMPointerType::get(
        b.getContext(), static_cast<unsigned>(addressSpace));
    if (addressSpace == NVVM::NVVMMemorySpace::Shared)
      return LLVM::IntToPtrOp::create(b, loc, pointerType, address);
    Value generic = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
    return LLVM::AddrSpaceCastOp::create(b, loc, pointerType, generic);
  }

  /// !llvm.ptr<3>, a pointer into workgroup memory.
  LLVM::LLVMPointerType getSharedPointerType() {
    return LLVM::LLVMPointerType::get(
        b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
  }

  /// A pointer to the kernel's dynamic workgroup memory (!llvm.ptr<3>).
  Value getDynamicSharedPointer() {
    auto workgroup = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
    Value memory = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
    return getPointer(memory, NVVM::NVVMMemorySpace::Shared);
  }

  /// Copies the 16 bytes of a matrix of `rows` x `cols` 16-bit elements (at
  /// `global`, !llvm.ptr<1>) that start at (`row`, `col`) to `target`
  /// (!llvm.ptr<3>) with cp.async; zeros where they lie past the matrix's
  /// edge (a copy of no bytes, from an address inside it). Rows hold whole
  /// pieces.
  void copyPiece(Value global, Value rows, Value cols, Value row, Value col,
                 Value target) {
    Value valid = isInside(row, rows, col, cols);
    Value element = arith::SelectOp::create(b, loc, valid,
                                            add(mul(row, cols), col), index(0));
    Value bytes = arith::SelectOp::create(
        b, loc, valid, arith::ConstantIntOp::create(b, loc, 16, 32),
        arith::ConstantIntOp::create(b, loc, 0, 32));
    NVVM::CpAsyncOp::create(b, loc, target, offset(global, element), 16,
                            NVVM::LoadCacheModifierKind::CG, bytes);
  }

  /// Copies rows [`firstRow`, `firstRow` + `tileRows`) of a matrix of `rows`
  /// x `cols` 16-bit elements (at `global`) in 16-byte pieces, spread over
  /// `threads` threads of which this is `thread`; each piece goes to the
  /// workgroup address `target` gives for its row in the tile and its index
  /// in the row. Zeros past the matrix's last row.
  void copyTileRows(Value global, Value rows, int64_t cols, Value firstRow,
                    int64_t tileRows, Value thread, int64_t threads,
                    function_ref<Value(Value row, Value piece)> target) {
    int64_t piecesPerRow = cols / kCopyElements;
    int64_t pieces = tileRows * piecesPerRow;
    for (int64_t first = 0; first < pieces; first += threads) {
      Value piece = add(thread, index(first));
      auto copy = [&] {
        Value row = div(piece, piecesPerRow);
        Value column = rem(piece, piecesPerRow);
        copyPiece(global, rows, index(cols), add(firstRow, row),
                  mul(column, index(kCopyElements)), target(row, column));
      };
      if (first + threads <= pieces) {
        copy();
        continue;
      }
      auto inside = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, piece,
                                index(pieces)),
          /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&inside.getThenRegion().front());
      copy();
    }
  }

  /// The f32 values `low` and `high` rounded to `elementType` (f16 or
  /// bf16): a vector of two, as a pair of an accumulator fragment is stored.
  Value roundPair(Type elementType, Value low, Value high) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{low, high});
    return arith::TruncFOp::create(b, loc, VectorType::get({2}, elementType),
                                   pair);
  }

  /// roundPair's pair in one i32 register, an mma.sync operand's pair: how
  /// an accumulator fragment becomes the next product's lhs.
  Value packPair(Type elementType, Value low, Value high) {
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(),
                                   roundPair(elementType, low, high));
  }

  /// Where 16-byte piece `piece` of row `row` of a matrix lies in its
  /// swizzled tile at `tile` (!llvm.ptr<3>): blocks of `tileRows` rows of
  /// 64 elements, each row's pieces swizzled.
  Value getSwizzledPiece(Value tile, int64_t tileRows, Value row, Value piece) {
    constexpr int64_t piecesPerBlockRow = kSwizzleElements / kCopyElements;
    Value block = div(piece, piecesPerBlockRow);
    Value swizzled = arith::XOrIOp::create(
        b, loc, rem(piece, piecesPerBlockRow), rem(row, kSwizzleRows));
    return offset(tile, add(add(mul(block, index(tileRows * kSwizzleElements)),
                                mul(row, index(kSwizzleElements))),
                            mul(swizzled, index(kCopyElements))));
  }

  /// The fields of `aggregate`, an LLVM struct (a wgmma's sums, say).
  SmallVector<Value> getFields(Value aggregate) {
    auto type = cast<LLVM::LLVMStructType>(aggregate.getType());
    SmallVector<Value> fields;
    for (int64_t i = 0, e = type.getBody().size(); i < e; ++i)
      fields.push_back(LLVM::ExtractValueOp::create(b, loc, aggregate, i));
    return fields;
  }

  /// Where 16-byte piece `piece` of row `row` lies in a tile at `tile` of
  /// `tileRows` rows: getSwizzledPiece's place with `swizzled`, else in
  /// rows `rowStride` elements apart.
  Value getTilePiece(Value tile, int64_t tileRows, bool swizzled,
                     int64_t rowStride, Value row, Value piece) {
    if (swizzled)
      return getSwizzledPiece(tile, tileRows, row, piece);
    return offset(tile, add(mul(row, index(rowStride)),
                            mul(piece, index(kCopyElements))));
  }

  /// The address (i64) of the kernel's dynamic workgroup memory rounded up
  /// to a multiple of kSwizzleBytes, where swizzled tiles may start (the
  /// kernel asks for kSwizzleBytes more).
  Value getSwizzledSharedAddress() {
    Type i64 = b.getI64Type();
    Value sharedStart =
        LLVM::PtrToIntOp::create(b, loc, i64, getDynamicSharedPointer());
    return arith::AndIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, sharedStart,
            arith::ConstantIntOp::create(b, loc, kSwizzleBytes - 1, 64)),
        arith::ConstantIntOp::create(b, loc, -kSwizzleBytes, 64));
  }

  /// The wgmma descriptor (i64) of the swizzled tile that starts at byte
  /// `address` (i64) of workgroup memory, whose blocks of 64 elements along
  /// M or N lie `leadingBytes` apart (for operands read transposed; 16,
  /// unused, for K-major ones).
  Value getSwizzledDescriptor(Value address, int64_t leadingBytes) {
    // Bits 0-13: the address / 16; 16-29: the leading byte offset / 16;
    // 32-45: the stride byte offset / 16 (from 8 rows to the next 8);
    // 62-63: the swizzle (1: 128 bytes).
    uint64_t fixed = (uint64_t{1} << 62) |
                     (uint64_t(kSwizzleBytes / 16) << 32) |
                     (uint64_t(leadingBytes / 16) << 16);
    Value start = arith::ShRUIOp::create(
        b, loc, address, arith::ConstantIntOp::create(b, loc, 4, 64));
    return arith::OrIOp::create(
        b, loc, start,
        arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(fixed), 64));
  }

  /// Four 8x8 matrices of 16-bit elements (ldmatrix x4) from workgroup
  /// memory: lanes 8q..8q+7 give `address`, the rows of matrix q. Each
  /// lane receives a register per matrix, the pair of elements it holds in
  /// an mma.sync fragment: along a row, or along a column with
  /// `transposed`.
  SmallVector<Value, 4> loadMatrices(Value address, bool transposed) {
    Type i32 = b.getI32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, i32));
    Value loaded = NVVM::LdMatrixOp::create(
        b, loc, resultType, address, /*num=*/4,
        transposed ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    SmallVector<Value, 4> registers;
    for (int64_t i = 0; i < 4; ++i)
      registers.push_back(LLVM::ExtractValueOp::create(b, loc, loaded, i));
    return registers;
  }

  /// wgmma's name for `elementType` (f16 or bf16) operands.
  static NVVM::WGMMATypes getWarpgroupType(Type elementType) {
    return elementType.isBF16() ? NVVM::WGMMATypes::bf16
                                : NVVM::WGMMATypes::f16;
  }

  /// The LLVM struct of `count` f32 that holds a wgmma's sums.
  LLVM::LLVMStructType getWarpgroupSumsType(int64_t count) {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(count, b.getF32Type()));
  }

  /// wgmma m64n`n`k16 steps with their lhs in registers, which NVVM's op
  /// does not take: the instruction itself, inline, its sums tied to
  /// theirs. Step i multiplies `a[i]` (4 registers, an mma.sync lhs
  /// fragment per warp) by the rhs tile that `getRhs(i)` describes, adding
  /// to `sums` (n / 2 f32); the steps follow a fence and commit as one
  /// group. Returns the sums, an LLVM struct, once they are waited for.
  Value multiplyRegisterLhs(Type elementType, int64_t n, ArrayRef<Value> sums,
                            ArrayRef<SmallVector<Value, 4>> a,
                            function_ref<Value(int64_t step)> getRhs) {
    int64_t count = n / 2;
    StringRef ptxType = elementType.isBF16() ? "bf16" : "f16";
    std::string text;
    llvm::raw_string_ostream asmText(text);
    asmText << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * count + 5
            << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << n << "k16.f32."
            << ptxType << "." << ptxType << " {";
    for (int64_t i = 0; i < count; ++i)
      asmText << (i ? ", " : "") << "$" << i;
    asmText << "}, {$" << 2 * count << ", $" << 2 * count + 1 << ", $"
            << 2 * count + 2 << ", $" << 2 * count + 3 << "}, $"
            << 2 * count + 4 << ", p, 1, 1, 1;\n}\n";
    std::string constraints;
    llvm::raw_string_ostream constraintText(constraints);
    for (int64_t i = 0; i < count; ++i)
      constraintText << "=f,";
    for (int64_t i = 0; i < count; ++i)
      constraintText << i << ",";
    constraintText << "r,r,r,r,l,r";
    auto sumsType = getWarpgroupSumsType(count);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    Value result;
    for (auto [step, lhs] : llvm::enumerate(a)) {
      SmallVector<Value> operands;
      if (result) {
        for (int64_t i = 0; i < count; ++i)
          operands.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
      } else {
        operands.assign(sums.begin(), sums.end());
      }
      llvm::append_range(operands, lhs);
      operands.push_back(getRhs(step));
      operands.push_back(one);
      result = LLVM::InlineAsmOp::create(
                   b, loc, sumsType, operands, text, constraints,
                   /*has_side_effects=*/true, /*is_align_stack=*/false,
                   LLVM::tailcallkind::TailCallKind::None,
                   LLVM::AsmDialectAttr::get(b.getContext(),
                                             LLVM::AsmDialect::AD_ATT),
                   /*operand_attrs=*/ArrayAttr())
                   .getResult(0);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    return result;
  }

  /// mma.sync m16n8k16 of `elementType` (f16 or bf16) operands: `a` (4
  /// registers of pairs, row-major) times `bOperand` (2, column-major) plus
  /// `sums` (4 f32), which it updates.
  void multiplyFragment(Type elementType, ArrayRef<Value> a,
                        ArrayRef<Value> bOperand, MutableArrayRef<Value> sums) {
    Type f32 = b.getF32Type();
    auto sumsType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    bool isBF16 = elementType.isBF16();
    auto ptxType = isBF16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    // f16 operands are pairs of halves; bf16 ones, pairs packed in i32.
    Type pairType = VectorType::get({2}, b.getF16Type());
    auto asOperand = [&](Value packed) -> Value {
      return isBF16 ? packed
                    : LLVM::BitcastOp::create(b, loc, pairType, packed);
    };
    Value product = NVVM::MmaOp::create(
        b, loc, sumsType, llvm::map_to_vector(a, asOperand),
        llvm::map_to_vector(bOperand, asOperand), SmallVector<Value>(sums),
        /*shape=*/{16, 8, 16}, /*b1Op=*/std::nullopt,
        /*intOverflow=*/std::nullopt,
        std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t e = 0; e < 4; ++e)
      sums[e] = LLVM::ExtractValueOp::create(b, loc, product, e);
  }

  /// The first row and column of the block's tile (`tile`, linear) of the
  /// result, of `tilesM` x `tilesN` tiles of `tileM` x `tileN` per batch,
  /// taken in groups of kTileGroupRows rows of tiles.
  std::pair<Value, Value> getTileStart(Value tile, Value tilesM, Value tilesN,
                                       int64_t tileM, int64_t tileN) {
    Value perGroup = mul(tilesN, index(kTileGroupRows));
    Value group = arith::DivUIOp::create(b, loc, tile, perGroup);
    Value inGroup = arith::RemUIOp::create(b, loc, tile, perGroup);
    Value groupFirst = mul(group, index(kTileGroupRows));
    Value groupRows = arith::MinUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, tilesM, groupFirst),
        index(kTileGroupRows));
    Value rowTile =
        add(groupFirst, arith::RemUIOp::create(b, loc, inGroup, groupRows));
    Value columnTile = arith::DivUIOp::create(b, loc, inGroup, groupRows);
    return {mul(rowTile, index(tileM)), mul(columnTile, index(tileN))};
  }

  /// The sizes of `node` (whose operands `mapping` maps to buffers) and its
  /// grid of `tileM` x `tileN` tiles, computed before its launch.
  ProductGrid getProductGrid(loop::MatmulOp node, const IRMapping &mapping,
                             int64_t tileM, int64_t tileN) {
    ProductGrid grid;
    Value lhs = mapping.lookup(node.getLhs());
    grid.elementType = cast<MemRefType>(lhs.getType()).getElementType();
    int64_t batchDims = node.getNumBatchDims();
    SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
    grid.batchSizes.assign(sizes.begin(), sizes.begin() + batchDims);
    grid.m = sizes[batchDims];
    grid.n = sizes[batchDims + 1];
    grid.k = memref::DimOp::create(
        b, loc, lhs, batchDims + (node.getTransposeLhs() ? 0 : 1));
    grid.tilesM = arith::CeilDivUIOp::create(b, loc, grid.m, index(tileM));
    grid.tilesN = arith::CeilDivUIOp::create(b, loc, grid.n, index(tileN));
    grid.tiles = mul(grid.tilesM, grid.tilesN);
    grid.blocks = mul(getProduct(b, loc, grid.batchSizes), grid.tiles);
    return grid;
  }

  /// The tile of `grid` that block `block` computes.
  BlockTile getBlockTile(const ProductGrid &grid, Value block, int64_t tileM,
                         int64_t tileN) {
    BlockTile tile;
    tile.batch = arith::DivUIOp::create(b, loc, block, grid.tiles);
    std::tie(tile.firstRow, tile.firstColumn) =
        getTileStart(arith::RemUIOp::create(b, loc, block, grid.tiles),
                     grid.tilesM, grid.tilesN, tileM, tileN);
    return tile;
  }

protected:
  OpBuilder &b;
  Location loc;
};

/// What a product kernel's emitter keeps of `node` while it emits: the
/// buffers `mapping` gives its operands, its epilogue's views of them, and
/// its sizes once getProductGrid has computed them (setSizes).
class MatmulKernelEmitter : protected MatmulKernelBuilder {
protected:
  MatmulKernelEmitter(OpBuilder &b, loop::MatmulOp node,
                      const IRMapping &mapping)
      : MatmulKernelBuilder(b, node.getLoc()), node(node), mapping(mapping),
        align(b, loc), kernelMapping(mapping) {}

  void setSizes(const ProductGrid &grid) {
    elementType = grid.elementType;
    m = grid.m;
    n = grid.n;
    k = grid.k;
  }

  /// Launches a block of `threads` threads per `tileM` x `tileN` tile of
  /// `grid`, with `sharedBytes` of dynamic workgroup memory, and moves `b`
  /// into the launch's body (the caller's insertion guard restores it),
  /// where it aligns the epilogue's views and sets `thread`. Returns the
  /// tile that the block computes.
  BlockTile beginLaunch(const ProductGrid &grid, int64_t tileM, int64_t tileN,
                        int64_t threads, int64_t sharedBytes,
                        StreamOrder &order, ValueRange extraArgs) {
    gpu::LaunchOp launch = createLaunch(
        b, loc, "matmul", grid.blocks, index(threads), order, extraArgs,
        arith::ConstantIntOp::create(b, loc, sharedBytes, 32));
    b.setInsertionPointToStart(&launch.getBody().front());
    align.alignSources(node, mapping, kernelMapping);
    thread = launch.getThreadIds().x;
    return getBlockTile(grid, launch.getBlockIds().x, tileM, tileN);
  }

  /// Launches `blocks` blocks of `threads` threads that each walk tiles of
  /// the product (a persistent kernel), with `sharedBytes` of dynamic
  /// workgroup memory, and moves `b` into the launch's body as beginLaunch
  /// does. The caller computes the tiles.
  gpu::LaunchOp beginPersistentLaunch(Value blocks, int64_t threads,
                                      int64_t sharedBytes, StreamOrder &order,
                                      ValueRange extraArgs) {
    gpu::LaunchOp launch =
        createLaunch(b, loc, "matmul", blocks, index(threads), order, extraArgs,
                     arith::ConstantIntOp::create(b, loc, sharedBytes, 32));
    b.setInsertionPointToStart(&launch.getBody().front());
    align.alignSources(node, mapping, kernelMapping);
    thread = launch.getThreadIds().x;
    return launch;
  }

  /// Issues `copies`, the copies of step `step`'s tiles, if `step` is below
  /// `steps`, then closes a group of copies (an empty one past the last
  /// step, so that every step closes one).
  void copyStepIfAny(Value step, Value steps, function_ref<void()> copies) {
    auto ifStep = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, step, steps),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(&ifStep.getThenRegion().front());
      copies();
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }

  loop::MatmulOp node;
  const IRMapping &mapping;
  AlignedViews align;
  /// The epilogue's loads, mapped to aligned views inside the kernel.
  IRMapping kernelMapping;
  Type elementType;
  /// The thread's index in the block.
  Value thread;
  Value m, n, k;
};

} // namespace mlir::kiln

#endif // KILN_LIB_CONVERSION_LOOPTOGPU_MATMULKERNELSUPPORT_H
