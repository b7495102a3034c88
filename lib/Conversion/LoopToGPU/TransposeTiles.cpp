//===- TransposeTiles.cpp - Pointwise kernels that read transposed --------===//
//
// Part of Kiln. A pointwise node whose load walks its source's innermost
// dimension along a result dimension other than the innermost (a permute
// that moves the innermost dimension, say NCHW to NHWC) cannot be coalesced
// on both sides by a flat launch: neighbouring threads write neighbours but
// read a source row apart. Such a node runs in square tiles instead: a block
// reads its tile of the source along the source's rows into workgroup memory
// and writes the result along the result's rows.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Codegen/VectorizeNodeBody.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::kiln;

/// The rows of a tile, in elements: a warp's width, so that a warp reads
/// one tile column from the source at once.
static constexpr int64_t kTile = 32;

/// Threads per block of a tiled kernel.
static constexpr int64_t kThreads = 256;

/// The most consecutive elements a thread computes at once.
static constexpr int64_t kMaxVectorWidth = 8;

/// Result dimensions shorter than this gain too little from tiles.
static constexpr int64_t kMinTiledExtent = 8;

/// Results whose rows are shorter than this are written faster element by
/// element: a 3-channel image padded to 64x224x224x8 (bf16) took 103 us in
/// tiles, 39 us read transposed element by element, on an H100.
static constexpr int64_t kMinTiledRow = 16;

/// Sources whose rows are shorter than this are read in runs too short to
/// gain from tiles.
static constexpr int64_t kMinSourceRow = 8;

/// The most workgroup memory a tiled kernel stages, so that several blocks
/// fit on a multiprocessor.
static constexpr int64_t kMaxStagedBytes = 24 * 1024;

/// In a dependence mask, the bit that says a value depends on a loaded value
/// (an indirect index). The others are the node's dimensions.
static constexpr uint64_t kDependsOnLoad = uint64_t(1) << 63;

/// The elements of the result's rows one thread computes at once: 16 bytes
/// worth when the body vectorizes and the rows are a multiple of that (so
/// that a thread's elements are in one row, and aligned), else 1.
static int64_t getVectorWidth(loop::PointwiseOp node) {
  RankedTensorType type = node.getResultType();
  Type element = type.getElementType();
  int64_t innermost = type.getShape().back();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
      ShapedType::isDynamic(innermost) || !canVectorizeNodeBody(node))
    return 1;
  int64_t width =
      std::min<int64_t>(128 / element.getIntOrFloatBitWidth(), kMaxVectorWidth);
  return innermost % width == 0 ? width : 1;
}

/// The columns of the result a tile covers: a warp's width, or for nodes
/// that compute vectors, the vectors of a row of kThreads / kTile threads.
static int64_t getTileColumns(loop::PointwiseOp node) {
  int64_t width = getVectorWidth(node);
  return width > 1 ? kThreads / kTile * width : kTile;
}

std::optional<TransposeTiling>
mlir::kiln::getTransposeTiling(loop::PointwiseOp node) {
  RankedTensorType type = node.getResultType();
  int64_t rank = type.getRank();
  if (rank < 2 || rank >= 63)
    return std::nullopt;
  Block &body = node.getBody().front();
  // Which of the node's dimensions each body value depends on.
  DenseMap<Value, uint64_t> dependences;
  for (BlockArgument arg : body.getArguments())
    dependences[arg] = uint64_t(1) << arg.getArgNumber();
  uint64_t innermost = uint64_t(1) << (rank - 1);
  // The loads that read transposed, each with the dimension it follows.
  SmallVector<std::pair<loop::LoadOp, int64_t>> transposed;
  for (Operation &op : body.without_terminator()) {
    uint64_t mask = 0;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        mask |= dependences.lookup(operand);
    });
    if (auto load = dyn_cast<loop::LoadOp>(op)) {
      auto sourceType = cast<RankedTensorType>(load.getSource().getType());
      int64_t row = sourceType.getRank() > 0 ? sourceType.getShape().back() : 0;
      uint64_t contiguous = sourceType.getRank() > 0
                                ? dependences.lookup(load.getIndices().back())
                                : 0;
      // Transposed: the source's innermost index follows one dimension other
      // than the result's innermost, which some other index follows.
      bool isTransposed = !(mask & kDependsOnLoad) && (mask & innermost) &&
                          !(contiguous & innermost) &&
                          llvm::has_single_bit(contiguous) &&
                          (ShapedType::isDynamic(row) || row >= kMinSourceRow);
      // Bools are bits in LLVM's memory types: too narrow to stage; complex
      // numbers are not staged either.
      if (isTransposed && load.getType().isIntOrFloat() &&
          load.getType().getIntOrFloatBitWidth() >= 8)
        transposed.emplace_back(load, llvm::countr_zero(contiguous));
      mask |= kDependsOnLoad;
    }
    for (Value result : op.getResults())
      dependences[result] = mask;
  }
  if (transposed.empty())
    return std::nullopt;

  // Tile the dimension most transposed loads follow.
  DenseMap<int64_t, int64_t> votes;
  for (auto [load, dim] : transposed)
    ++votes[dim];
  int64_t tileDim = transposed.front().second;
  for (auto [dim, count] : votes)
    if (count > votes.lookup(tileDim) ||
        (count == votes.lookup(tileDim) && dim > tileDim))
      tileDim = dim;
  for (auto [dim, least] : {std::pair(tileDim, kMinTiledExtent),
                            std::pair(rank - 1, kMinTiledRow)}) {
    int64_t extent = type.getShape()[dim];
    if (!ShapedType::isDynamic(extent) && extent < least)
      return std::nullopt;
  }
  TransposeTiling tiling{tileDim, {}};
  int64_t tileElements = getTileColumns(node) * (kTile + 1);
  int64_t stagedBytes = 0;
  for (auto [load, dim] : transposed) {
    int64_t bytes = tileElements *
                    llvm::divideCeil(load.getType().getIntOrFloatBitWidth(), 8);
    if (dim != tileDim || stagedBytes + bytes > kMaxStagedBytes)
      continue;
    stagedBytes += bytes;
    tiling.stagedLoads.push_back(load);
  }
  return tiling;
}

/// Emits just `load` of a node body at `ivs`: the body's ops its indices
/// depend on (which load nothing), then the read.
static Value emitLoadAt(OpBuilder &b, loop::LoadOp load,
                        const IRMapping &mapping, ValueRange ivs) {
  Block *body = load->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist(load.getIndices());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !slice.insert(def))
      continue;
    def->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }
  IRMapping local;
  local.map(body->getArguments(), ivs);
  for (Operation &op : *body) {
    if (!slice.contains(&op))
      continue;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (!local.contains(operand))
          if (Value outer = mapping.lookupOrNull(operand))
            local.map(operand, outer);
    });
    b.clone(op, local);
  }
  // An index from outside the node (a constant, a size) is the mapping's.
  SmallVector<Value> indices =
      llvm::map_to_vector(load.getIndices(), [&](Value index) {
        if (Value emitted = local.lookupOrNull(index))
          return emitted;
        return mapping.lookupOrDefault(index);
      });
  return memref::LoadOp::create(b, load.getLoc(),
                                mapping.lookup(load.getSource()), indices);
}

void mlir::kiln::emitTransposeTiledKernel(OpBuilder &b, loop::PointwiseOp node,
                                          const TransposeTiling &tiling,
                                          Value dest, IRMapping &mapping,
                                          StreamOrder &order,
                                          ValueRange extraArgs) {
  Location loc = node.getLoc();
  SmallVector<Value> sizes = getNodeSizes(b, loc, node, mapping);
  int64_t rank = sizes.size();
  int64_t tileDim = tiling.tileDim;
  // A tile is kTile result rows (along `tileDim`) by `tileColumns` columns.
  // Staging, a warp reads kTile consecutive source elements of one column;
  // computing, `threadsPerRow` threads each compute `width` consecutive
  // elements of a row.
  int64_t width = getVectorWidth(node);
  int64_t tileColumns = getTileColumns(node);
  int64_t threadsPerRow = tileColumns / width;
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value tile = constant(kTile);
  Value tilesAcross = arith::CeilDivUIOp::create(b, loc, sizes[tileDim], tile);
  Value tilesAlong =
      arith::CeilDivUIOp::create(b, loc, sizes.back(), constant(tileColumns));
  // The other dimensions: a block per index of them and per tile.
  SmallVector<Value> outerSizes;
  Value blocks = arith::MulIOp::create(b, loc, tilesAcross, tilesAlong);
  for (int64_t dim = 0; dim < rank - 1; ++dim) {
    if (dim == tileDim)
      continue;
    outerSizes.push_back(sizes[dim]);
    blocks = arith::MulIOp::create(b, loc, blocks, sizes[dim]);
  }
  gpu::LaunchOp launch = createLaunch(b, loc, "transpose", blocks,
                                      constant(kThreads), order, extraArgs);
  // A padded tile per staged load: a row of the tile (a column of the
  // result) is then spread over all banks.
  SmallVector<Value> staging =
      llvm::map_to_vector(tiling.stagedLoads, [&](loop::LoadOp load) -> Value {
        return addWorkgroupBuffer(launch, {tileColumns, kTile + 1},
                                  load.getType(), loc);
      });

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  AlignedViews align(b, loc);
  IRMapping kernelMapping = mapping;
  align.alignSources(node, mapping, kernelMapping);
  Value alignedDest = align(dest);

  // The block's tile and outer index.
  Value block = launch.getBlockIds().x;
  Value tileAlong = arith::RemUIOp::create(b, loc, block, tilesAlong);
  Value rest = arith::DivUIOp::create(b, loc, block, tilesAlong);
  Value tileAcross = arith::RemUIOp::create(b, loc, rest, tilesAcross);
  Value outer = arith::DivUIOp::create(b, loc, rest, tilesAcross);
  SmallVector<Value> outerIvs = delinearize(b, loc, outer, outerSizes);
  Value firstAcross = arith::MulIOp::create(b, loc, tileAcross, tile);
  Value firstAlong =
      arith::MulIOp::create(b, loc, tileAlong, constant(tileColumns));
  Value thread = launch.getThreadIds().x;

  // Runs `body` at the tile positions (`across`, `along`) that are inside
  // the result, one per pass, with the node's indices there.
  auto forPositions =
      [&](int64_t passes,
          function_ref<std::pair<Value, Value>(int64_t pass)> position,
          function_ref<void(int64_t pass, ArrayRef<Value> ivs)> body) {
        for (int64_t pass = 0; pass < passes; ++pass) {
          auto [across, along] = position(pass);
          Value inside = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, across,
                                    sizes[tileDim]),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, along,
                                    sizes.back()));
          auto ifInside =
              scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
          OpBuilder::InsertionGuard passGuard(b);
          b.setInsertionPointToStart(&ifInside.getThenRegion().front());
          SmallVector<Value> ivs;
          for (int64_t dim = 0, next = 0; dim < rank; ++dim)
            ivs.push_back(dim == tileDim    ? across
                          : dim == rank - 1 ? along
                                            : outerIvs[next++]);
          body(pass, ivs);
        }
      };
  auto addConstant = [&](Value base, int64_t offset) -> Value {
    if (offset == 0)
      return base;
    return arith::AddIOp::create(b, loc, base, constant(offset));
  };
  auto plus = [&](Value base, Value offset, int64_t constantOffset) -> Value {
    return addConstant(arith::AddIOp::create(b, loc, base, offset),
                       constantOffset);
  };

  // Stage: the lanes of a warp read consecutive source elements (along
  // `tileDim`); tile[c][a] holds the element at column c, row a of the tile.
  int64_t stagingRows = kThreads / kTile;
  Value lane = arith::RemUIOp::create(b, loc, thread, tile);
  Value stagingRow = arith::DivUIOp::create(b, loc, thread, tile);
  forPositions(
      tileColumns / stagingRows,
      [&](int64_t pass) -> std::pair<Value, Value> {
        return {arith::AddIOp::create(b, loc, firstAcross, lane),
                plus(firstAlong, stagingRow, pass * stagingRows)};
      },
      [&](int64_t pass, ArrayRef<Value> ivs) {
        Value column = addConstant(stagingRow, pass * stagingRows);
        for (auto [load, tileMemory] : llvm::zip(tiling.stagedLoads, staging))
          memref::StoreOp::create(b, loc,
                                  emitLoadAt(b, load, kernelMapping, ivs),
                                  tileMemory, ValueRange{column, lane});
      });
  gpu::BarrierOp::create(b, loc);

  // Compute: the threads of a row write its consecutive elements (along the
  // innermost dimension), reading the staged loads across the tile.
  int64_t computeRows = kThreads / threadsPerRow;
  Value group = arith::RemUIOp::create(b, loc, thread, constant(threadsPerRow));
  Value firstColumn = arith::MulIOp::create(b, loc, group, constant(width));
  Value computeRow =
      arith::DivUIOp::create(b, loc, thread, constant(threadsPerRow));
  forPositions(
      kTile / computeRows,
      [&](int64_t pass) -> std::pair<Value, Value> {
        return {plus(firstAcross, computeRow, pass * computeRows),
                arith::AddIOp::create(b, loc, firstAlong, firstColumn)};
      },
      [&](int64_t pass, ArrayRef<Value> ivs) {
        Value row = addConstant(computeRow, pass * computeRows);
        for (auto [stagedLoad, tileMemory] :
             llvm::zip(tiling.stagedLoads, staging)) {
          loop::LoadOp load = stagedLoad;
          SmallVector<Value> elements;
          for (int64_t k = 0; k < width; ++k)
            elements.push_back(memref::LoadOp::create(
                b, loc, tileMemory,
                ValueRange{addConstant(firstColumn, k), row}));
          Value staged =
              width == 1 ? elements.front()
                         : vector::FromElementsOp::create(
                               b, loc, VectorType::get({width}, load.getType()),
                               elements)
                               .getResult();
          kernelMapping.map(load.getResult(), staged);
        }
        if (width == 1) {
          memref::StoreOp::create(b, loc,
                                  emitNodeElement(b, node, kernelMapping, ivs),
                                  alignedDest, ivs);
          return;
        }
        Value elements = *emitVectorNodeElements(b, node, kernelMapping, ivs,
                                                 width, kBufferAlignment);
        emitVectorStore(b, loc, elements, alignedDest, ivs, kBufferAlignment);
      });
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}
