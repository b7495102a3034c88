//===- ScanLowering.cpp - Scans and sorts of short rows -------------------===//
//
// Part of Kiln. fx.cumsum and fx.cumprod along a dimension of static size up
// to kMaxDirectScanLength become a loop.reduce: element i combines the row's
// elements at positions <= i. fx.sort counts, for each element, the
// elements that go before it (a loop.reduce: its rank), then places values
// and indices at their ranks (loop.scatter "assign"); fx.topk is a sort and
// a slice. That costs n^2 operations per row where a scan needs n and a sort
// n log n: nothing for the short rows graphs scan and sort (position ids
// from an attention mask, top-k of a few logits), and the nodes fuse like
// any other. Scans of longer rows, up to kMaxBlockedScanLength, run in
// blocks of about sqrt(n) (n^1.5 operations), and longer ones by recursive
// doubling (n log n operations in log n nodes); sorts of rows longer than
// kMaxScanLength run a bitonic sorting network instead (n log^2 n
// operations in log^2 n / 2 nodes). Rows of dynamic length scan in blocks
// of kDynamicScanBlock (about n·B operations), and sort in blocks of
// kDynamicSortBlock: ranks within each block, then a binary search in every
// other sorted block (about B + log2(B)·n/B reads per element).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The longest row a sort (and masked_scatter's scan of its mask) counts
/// ranks for: its reduction reads n^2 elements. Longer sorts run a sorting
/// network.
constexpr int64_t kMaxScanLength = 4096;

/// The longest row a cumsum or cumprod lowers to one reduction, which reads
/// n^2 / 2 elements; longer rows run in blocks, which read n^1.5 (fewer from
/// about this length on, in three nodes instead of one).
constexpr int64_t kMaxDirectScanLength = 256;

/// The longest row a scan lowers in blocks (buildBlockedScan), which read
/// about n^1.5 elements; longer rows double (buildDoublingScan), in log2(n)
/// passes over the row.
constexpr int64_t kMaxBlockedScanLength = 65536;

/// The block of a scan of dynamic length: each element reads B elements of
/// its block and each block n / B totals, so B = 64 keeps the reads near
/// the fewest (2 sqrt(n) per element) from a few thousand elements to a few
/// hundred thousand, and bounded (B per element) for short rows.
constexpr int64_t kDynamicScanBlock = 64;

/// The block of a sort of dynamic length: each element counts its rank
/// among the block's B elements, then adds, for each other block (sorted),
/// how many of its elements go before it, found by a binary search of
/// log2(B) + 1 steps: B + 11 n / B reads per element, about 2000 for
/// n = 10^5 where a direct count reads n.
constexpr int64_t kDynamicSortBlock = 1024;

/// What a scan's nodes share: the input, the scanned dimension and its
/// length (ShapedType::kDynamic if dynamic), the combiner and the types it
/// accumulates in.
struct ScanSpec {
  Value input;
  int64_t dim, length;
  CombiningKind combiner;
  Type accumulator, accumulatorDtype;
  SmallVector<Value> dynamicSizes;

  /// The combiner's identity in the accumulator's type.
  Value identity(OpBuilder &b, Location loc) const {
    return getCombinerIdentity(b, loc, combiner, accumulator, accumulatorDtype);
  }

  /// The input's element at `indices` with the scanned dimension at
  /// `position`, in the accumulator's type.
  Value load(OpBuilder &b, Location loc, ValueRange indices,
             Value position) const {
    SmallVector<Value> at(indices);
    at[dim] = position;
    return convertScalar(
        b, loc, loop::LoadOp::create(b, loc, input, at),
        cast<RankedTensorType>(input.getType()).getElementType(),
        accumulatorDtype);
  }

  /// The scanned row's length, at run time if it is dynamic.
  Value getLength(OpBuilder &b, Location loc) const {
    return getDimSize(b, loc, input, dim);
  }

  /// A loop.reduce of `type` (with `sizes` for its `?`s) over `extent`
  /// positions (`dynamicExtent` if that is dynamic) whose body `value` gives
  /// the term at the result's indices and the position.
  Value
  buildReduce(OpBuilder &b, Location loc, RankedTensorType type,
              ValueRange sizes, int64_t extent, Value dynamicExtent,
              function_ref<Value(ValueRange ivs, Value position)> value) const {
    auto node = loop::ReduceOp::create(
        b, loc, type, b.getAttr<loop::CombiningKindAttr>(combiner), sizes,
        dynamicExtent ? ValueRange{dynamicExtent} : ValueRange{},
        b.getDenseI64ArrayAttr({extent}));
    OpBuilder::InsertionGuard guard(b);
    Block *body = b.createBlock(&node.getBody());
    int64_t rank = type.getRank();
    body->addArguments(SmallVector<Type>(rank + 1, b.getIndexType()),
                       SmallVector<Location>(rank + 1, loc));
    loop::YieldOp::create(
        b, loc,
        value(body->getArguments().take_front(rank), body->getArgument(rank)));
    return node.getResult();
  }
};

/// How many times a scan of dynamic length scans its blocks' totals in
/// blocks in turn (64, 4096, then 262144 elements a block), so that the
/// direct combination of the last level's totals reads (n / 262144)^2
/// rather than (n / 64)^2.
constexpr int64_t kDynamicScanLevels = 3;

/// A scan of a row of n elements in blocks of B (ceil(sqrt(n)) for a static
/// n, kDynamicScanBlock for a dynamic one): each block's total (one
/// reduction over B), the combination of the totals of the blocks before
/// each block (one over ceil(n / B); for a dynamic n, up to `levels` times
/// a blocked scan of the totals, read one block back), then each element
/// combines that with its block's elements up to itself (one over B). n·B
/// element reads instead of n^2 / 2.
Value buildBlockedScan(OpBuilder &b, Location loc, RankedTensorType resultType,
                       const ScanSpec &scan,
                       int64_t levels = kDynamicScanLevels) {
  bool dynamic = ShapedType::isDynamic(scan.length);
  int64_t block = dynamic ? kDynamicScanBlock
                          : static_cast<int64_t>(std::ceil(
                                std::sqrt(static_cast<double>(scan.length))));
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value length = scan.getLength(b, loc);
  Value last = arith::SubIOp::create(b, loc, length, index(1));
  // The blocks' tensor: the result's shape with ceil(n / B) along the row.
  int64_t blocks =
      dynamic ? ShapedType::kDynamic : llvm::divideCeil(scan.length, block);
  Value blockCount =
      dynamic ? arith::CeilDivUIOp::create(b, loc, length, index(block))
              : Value();
  SmallVector<int64_t> blockShape(resultType.getShape());
  blockShape[scan.dim] = blocks;
  auto blockType = RankedTensorType::get(blockShape, scan.accumulatorDtype);
  SmallVector<Value> blockSizes(scan.dynamicSizes);
  if (dynamic)
    blockSizes[resultType.getDynamicDimIndex(scan.dim)] = blockCount;

  Value totals = scan.buildReduce(
      b, loc, blockType, blockSizes, block, Value(),
      [&](ValueRange ivs, Value offset) -> Value {
        Value position = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, ivs[scan.dim], index(block)),
            offset);
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                             position, last);
        Value element = scan.load(
            b, loc, ivs, arith::MinUIOp::create(b, loc, position, last));
        return arith::SelectOp::create(b, loc, inside, element,
                                       scan.identity(b, loc));
      });
  Value before;
  if (dynamic && levels > 1) {
    // The totals scanned in blocks in turn; a block's "before" is the scan
    // at the block before it.
    ScanSpec totalsScan{totals,        scan.dim,         ShapedType::kDynamic,
                        scan.combiner, scan.accumulator, scan.accumulatorDtype,
                        blockSizes};
    Value scanned = buildBlockedScan(b, loc, blockType, totalsScan, levels - 1);
    before = buildGeneratorNode(
        b, loc, blockType, blockSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value current = ivs[scan.dim];
          Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              current, index(0));
          SmallVector<Value> at(ivs);
          at[scan.dim] = arith::SelectOp::create(
              b, loc, first, current,
              arith::SubIOp::create(b, loc, current, index(1)));
          return arith::SelectOp::create(
              b, loc, first, scan.identity(b, loc),
              loop::LoadOp::create(b, loc, scanned, at));
        });
  } else {
    before = scan.buildReduce(
        b, loc, blockType, blockSizes, blocks, blockCount,
        [&](ValueRange ivs, Value earlier) -> Value {
          SmallVector<Value> at(ivs);
          at[scan.dim] = earlier;
          Value total = loop::LoadOp::create(b, loc, totals, at);
          Value counts = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, earlier, ivs[scan.dim]);
          return arith::SelectOp::create(b, loc, counts, total,
                                         scan.identity(b, loc));
        });
  }
  return scan.buildReduce(
      b, loc, resultType, scan.dynamicSizes, block, Value(),
      [&](ValueRange ivs, Value offset) -> Value {
        Value current = ivs[scan.dim];
        Value blockIndex =
            arith::DivUIOp::create(b, loc, current, index(block));
        Value position = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, blockIndex, index(block)),
            offset);
        Value included = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ule, position, current);
        Value element = arith::SelectOp::create(
            b, loc, included,
            scan.load(b, loc, ivs,
                      arith::MinUIOp::create(b, loc, position, current)),
            scan.identity(b, loc));
        // The block's first term brings the blocks before it.
        SmallVector<Value> at(ivs);
        at[scan.dim] = blockIndex;
        Value withBefore = emitCombine(b, loc, scan.combiner,
                                       loop::LoadOp::create(b, loc, before, at),
                                       element, scan.accumulatorDtype);
        Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            offset, index(0));
        return arith::SelectOp::create(b, loc, first, withBefore, element);
      });
}

/// A scan of a row of n elements by recursive doubling: after the input
/// in the accumulator's type, the node of distance d = 1, 2, 4, ... < n
/// combines each element with the one d positions before it (if any), so
/// that element i holds the combination of the 2d elements up to it;
/// ceil(log2(n)) such nodes, then the result's type. 2 n log2(n) reads,
/// each node a pass over the row.
Value buildDoublingScan(OpBuilder &b, Location loc, RankedTensorType resultType,
                        const ScanSpec &scan) {
  auto partialType = resultType.clone(scan.accumulatorDtype);
  Value partial = buildGeneratorNode(
      b, loc, partialType, scan.dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return scan.load(b, loc, ivs, ivs[scan.dim]);
      });
  for (int64_t distance = 1; distance < scan.length; distance *= 2) {
    Value previous = partial;
    partial = buildGeneratorNode(
        b, loc, partialType, scan.dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value position = ivs[scan.dim];
          Value distanceValue =
              arith::ConstantIndexOp::create(b, loc, distance);
          Value hasEarlier = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::uge, position, distanceValue);
          SmallVector<Value> earlierIvs(ivs);
          earlierIvs[scan.dim] = arith::SelectOp::create(
              b, loc, hasEarlier,
              arith::SubIOp::create(b, loc, position, distanceValue), position);
          Value own = loop::LoadOp::create(b, loc, previous, ivs);
          Value combined =
              emitCombine(b, loc, scan.combiner,
                          loop::LoadOp::create(b, loc, previous, earlierIvs),
                          own, scan.accumulatorDtype);
          return arith::SelectOp::create(b, loc, hasEarlier, combined, own);
        });
  }
  Value scanned = partial;
  return buildGeneratorNode(
      b, loc, resultType, scan.dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return convertScalar(b, loc, loop::LoadOp::create(b, loc, scanned, ivs),
                             scan.accumulatorDtype,
                             resultType.getElementType());
      });
}

/// A scan of a row longer than kMaxDirectScanLength: in blocks up to
/// kMaxBlockedScanLength, doubling beyond.
Value buildLongScan(OpBuilder &b, Location loc, RankedTensorType resultType,
                    const ScanSpec &scan) {
  return scan.length > kMaxBlockedScanLength
             ? buildDoublingScan(b, loc, resultType, scan)
             : buildBlockedScan(b, loc, resultType, scan);
}

/// Lowers fx.cumsum ("sum") and fx.cumprod ("prod").
template <typename OpTy> struct ScanLowering : OpRewritePattern<OpTy> {
  ScanLowering(MLIRContext *ctx, CombiningKind combiner)
      : OpRewritePattern<OpTy>(ctx), combiner(combiner) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(op.getSelf().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type dtype = resultType.getElementType();
    if (isa<ComplexType>(dtype) || isa<ComplexType>(inputType.getElementType()))
      return rewriter.notifyMatchFailure(op, "complex scan");
    int64_t rank = inputType.getRank();
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    // A zero-dim tensor scans as itself.
    int64_t length = rank == 0 ? 1 : inputType.getDimSize(dim);
    Location loc = op.getLoc();
    Type accumulator = (dtype.isF16() || dtype.isBF16())
                           ? Type(rewriter.getF32Type())
                           : loop::getScalarType(dtype);
    Type accumulatorDtype = isa<FloatType>(accumulator) ? accumulator : dtype;
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(resultType, [&](int64_t d) {
          return getDimSize(rewriter, loc, op.getSelf(), d);
        });
    if (ShapedType::isDynamic(length) || length > kMaxDirectScanLength) {
      ScanSpec scan{op.getSelf(), dim,         length,
                    combiner,     accumulator, accumulatorDtype,
                    dynamicSizes};
      rewriter.replaceOp(op,
                         ShapedType::isDynamic(length)
                             ? buildBlockedScan(rewriter, loc, resultType, scan)
                             : buildLongScan(rewriter, loc, resultType, scan));
      return success();
    }
    auto node = loop::ReduceOp::create(
        rewriter, loc, resultType,
        rewriter.getAttr<loop::CombiningKindAttr>(combiner), dynamicSizes,
        ValueRange{}, rewriter.getDenseI64ArrayAttr({length}));
    Block *body = rewriter.createBlock(&node.getBody());
    body->addArguments(SmallVector<Type>(rank + 1, rewriter.getIndexType()),
                       SmallVector<Location>(rank + 1, loc));
    ValueRange ivs = body->getArguments().take_front(rank);
    Value position = body->getArguments().back();
    SmallVector<Value> indices(ivs);
    if (rank > 0)
      indices[dim] = position;
    Value element = convertScalar(
        rewriter, loc,
        loop::LoadOp::create(rewriter, loc, op.getSelf(), indices),
        inputType.getElementType(), accumulatorDtype);
    // Positions after the element's own add the combiner's identity.
    Value identity = getCombinerIdentity(rewriter, loc, combiner, accumulator,
                                         accumulatorDtype);
    Value current =
        rank > 0 ? ivs[dim]
                 : arith::ConstantIndexOp::create(rewriter, loc, 0).getResult();
    Value included = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ule, position, current);
    loop::YieldOp::create(
        rewriter, loc,
        arith::SelectOp::create(rewriter, loc, included, element, identity));
    rewriter.setInsertionPointAfter(node);
    rewriter.replaceOp(op, node.getResult());
    return success();
  }

  CombiningKind combiner;
};

/// Whether `a` goes before `b` in an ascending (or, with `descending`, a
/// descending) sort of tensor elements of `dtype` (signless in bodies, so
/// `dtype` says how integers compare): NaN is larger than any number, as
/// PyTorch sorts it.
static Value emitGoesBefore(OpBuilder &b, Location loc, Value a, Value bValue,
                            Type dtype, bool descending) {
  if (descending)
    std::swap(a, bValue);
  if (isa<FloatType>(dtype)) {
    Value less =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a, bValue);
    Value aIsNumber =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, a, a);
    Value bIsNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                         bValue, bValue);
    return arith::OrIOp::create(
        b, loc, less, arith::AndIOp::create(b, loc, aIsNumber, bIsNaN));
  }
  auto intType = cast<IntegerType>(dtype);
  bool isUnsigned = intType.isUnsigned() || intType.getWidth() == 1;
  return arith::CmpIOp::create(b, loc,
                               isUnsigned ? arith::CmpIPredicate::ult
                                          : arith::CmpIPredicate::slt,
                               a, bValue);
}

/// Whether `a` and `b` tie in a sort: equal, or both NaN.
static Value emitTies(OpBuilder &b, Location loc, Value a, Value bValue,
                      Type dtype) {
  if (!isa<FloatType>(dtype))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, bValue);
  return arith::OrIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a, bValue),
      arith::AndIOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a, a),
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, bValue,
                                bValue)));
}

/// Whether `candidate`, at position `candidatePosition` of a row, comes
/// before `element`, at `elementPosition`, in a stable sort: it goes before
/// it, or ties with it at an earlier position.
static Value emitComesBefore(OpBuilder &b, Location loc, Value candidate,
                             Value candidatePosition, Value element,
                             Value elementPosition, Type dtype,
                             bool descending) {
  Value earlierTie = arith::AndIOp::create(
      b, loc, emitTies(b, loc, candidate, element, dtype),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                            candidatePosition, elementPosition));
  return arith::OrIOp::create(
      b, loc, emitGoesBefore(b, loc, candidate, element, dtype, descending),
      earlierTie);
}

/// Sorts `self` along its static dimension `dim` of `length` elements
/// (stably, like PyTorch's sort, and descending with `descending`) with a
/// bitonic sorting network over the elements' positions: the row is padded
/// to a power of two P, each of the network's log2(P) (log2(P) + 1) / 2
/// stages is a node that orders each position's pair (its position xor a
/// stage distance) by the elements the two positions hold, and padding goes
/// after every element. Ties go by position, which makes the order total and
/// the sort stable. Returns the sorted values and their positions.
static std::pair<Value, Value>
buildSortingNetwork(OpBuilder &b, Location loc, Value self, int64_t dim,
                    int64_t length, bool descending,
                    RankedTensorType indicesType, ValueRange dynamicSizes) {
  auto type = cast<RankedTensorType>(self.getType());
  Type dtype = type.getElementType();
  int64_t padded = llvm::PowerOf2Ceil(length);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = padded;
  auto positionsType =
      RankedTensorType::get(shape, b.getIntegerType(64, /*isSigned=*/true));
  Value positions = buildGeneratorNode(
      b, loc, positionsType, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return arith::IndexCastOp::create(b, loc, b.getI64Type(), ivs[dim]);
      });

  // Whether the element at position `first` of the row at `ivs` goes
  // before the one at `second` (i64 positions; padding goes last).
  auto goesBefore = [&](OpBuilder &b, Location loc, ValueRange ivs, Value first,
                        Value second) -> Value {
    Value lengthValue = arith::ConstantIndexOp::create(b, loc, length);
    Value last = arith::ConstantIndexOp::create(b, loc, length - 1);
    auto element = [&](Value position) {
      Value index =
          arith::IndexCastOp::create(b, loc, b.getIndexType(), position);
      SmallVector<Value> at(ivs);
      at[dim] = arith::MinUIOp::create(b, loc, index, last);
      return std::make_pair(index,
                            loop::LoadOp::create(b, loc, self, at).getResult());
    };
    auto [firstIndex, firstElement] = element(first);
    auto [secondIndex, secondElement] = element(second);
    Value before =
        emitComesBefore(b, loc, firstElement, firstIndex, secondElement,
                        secondIndex, dtype, descending);
    Value firstIsPadding = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, firstIndex, lengthValue);
    Value secondIsPadding = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, secondIndex, lengthValue);
    Value firstIsElement = arith::XOrIOp::create(
        b, loc, firstIsPadding, arith::ConstantIntOp::create(b, loc, 1, 1));
    return arith::AndIOp::create(
        b, loc, firstIsElement,
        arith::OrIOp::create(b, loc, secondIsPadding, before));
  };

  // Blocks of `block` positions end sorted, alternately ascending and
  // descending, so that pairs of them form the next stage's bitonic
  // sequences; the last block, the whole row, ascending.
  for (int64_t block = 2; block <= padded; block *= 2) {
    for (int64_t distance = block / 2; distance >= 1; distance /= 2) {
      Value previous = positions;
      positions = buildGeneratorNode(
          b, loc, positionsType, dynamicSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value position = ivs[dim];
            auto bitIsClear = [&](int64_t bit) {
              Value masked = arith::AndIOp::create(
                  b, loc, position,
                  arith::ConstantIndexOp::create(b, loc, bit));
              return arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::eq, masked,
                  arith::ConstantIndexOp::create(b, loc, 0));
            };
            SmallVector<Value> partnerIvs(ivs);
            partnerIvs[dim] = arith::XOrIOp::create(
                b, loc, position,
                arith::ConstantIndexOp::create(b, loc, distance));
            Value mine = loop::LoadOp::create(b, loc, previous, ivs);
            Value theirs = loop::LoadOp::create(b, loc, previous, partnerIvs);
            // The lower position of a pair in an ascending block takes the
            // element that goes first, as does the upper one in a
            // descending block.
            Value takesFirst =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      bitIsClear(distance), bitIsClear(block));
            Value theirsFirst = goesBefore(b, loc, ivs, theirs, mine);
            Value takesTheirs = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, takesFirst, theirsFirst);
            return arith::SelectOp::create(b, loc, takesTheirs, theirs, mine);
          });
    }
  }

  // The first `length` positions are the elements', in order.
  Value sorted = positions;
  Value values = buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        SmallVector<Value> at(ivs);
        at[dim] = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            loop::LoadOp::create(b, loc, sorted, ivs));
        return loop::LoadOp::create(b, loc, self, at);
      });
  Value indices = buildGeneratorNode(
      b, loc, indicesType, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return loop::LoadOp::create(b, loc, sorted, ivs);
      });
  return {values, indices};
}

/// A loop.reduce "sum" of `rankType` (i64) over `extent` (static
/// `staticExtent`, or dynamic) that adds, for each element at `ivs`,
/// `counts(ivs, r)` (an i1, counted as 0 or 1, or an i64) over the
/// reduction indices `r`.
static Value buildCount(
    OpBuilder &b, Location loc, RankedTensorType rankType,
    ValueRange dynamicSizes, int64_t staticExtent, Value extent,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> counts) {
  SmallVector<Value> extents;
  if (ShapedType::isDynamic(staticExtent))
    extents.push_back(extent);
  int64_t rank = rankType.getRank();
  auto reduce = loop::ReduceOp::create(
      b, loc, rankType, b.getAttr<loop::CombiningKindAttr>(CombiningKind::sum),
      dynamicSizes, extents, b.getDenseI64ArrayAttr({staticExtent}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&reduce.getBody());
  body->addArguments(SmallVector<Type>(rank + 1, b.getIndexType()),
                     SmallVector<Location>(rank + 1, loc));
  Value counted = counts(b, loc, body->getArguments().take_front(rank),
                         body->getArguments().back());
  if (counted.getType().isInteger(1))
    counted = arith::ExtUIOp::create(b, loc, b.getI64Type(), counted);
  loop::YieldOp::create(b, loc, counted);
  return reduce.getResult();
}

/// The ranks of a stable sort of `self` along its dynamic dimension `dim`
/// (the positions its elements go to), in blocks of kDynamicSortBlock: each
/// element's rank among its block's elements; the blocks sorted (their
/// elements stored at those ranks); then, per element, the elements of
/// every other block that go before it (or tie with it, for an earlier
/// block), counted by a binary search in the sorted block. Returns the
/// within-block and the cross-block counts, whose sum is the rank.
static std::pair<Value, Value> buildBlockedSortRanks(OpBuilder &b, Location loc,
                                                     Value self, int64_t dim,
                                                     bool descending,
                                                     RankedTensorType rankType,
                                                     ValueRange dynamicSizes) {
  auto type = cast<RankedTensorType>(self.getType());
  Type dtype = type.getElementType();
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value length = getDimSize(b, loc, self, dim);
  Value blockLength =
      arith::MinUIOp::create(b, loc, length, constant(b, kDynamicSortBlock));
  Value numBlocks = arith::CeilDivUIOp::create(b, loc, length,
                                               constant(b, kDynamicSortBlock));
  // The first position of the block of position `position`.
  auto blockStart = [&](OpBuilder &b, Value position) -> Value {
    return arith::MulIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, position,
                               constant(b, kDynamicSortBlock)),
        constant(b, kDynamicSortBlock));
  };
  Value inBlock = buildCount(
      b, loc, rankType, dynamicSizes, ShapedType::kDynamic, blockLength,
      [&](OpBuilder &b, Location loc, ValueRange ivs, Value r) -> Value {
        Value other = arith::AddIOp::create(b, loc, blockStart(b, ivs[dim]), r);
        Value inRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            other, length);
        SmallVector<Value> at(ivs);
        at[dim] = arith::MinUIOp::create(
            b, loc, other,
            arith::SubIOp::create(b, loc, length, constant(b, 1)));
        Value element = loop::LoadOp::create(b, loc, self, ivs);
        Value candidate = loop::LoadOp::create(b, loc, self, at);
        return arith::AndIOp::create(b, loc, inRow,
                                     emitComesBefore(b, loc, candidate, other,
                                                     element, ivs[dim], dtype,
                                                     descending));
      });

  // Each block sorted: its elements at their ranks within it.
  Value blocks = buildScatter(
      b, loc, CombiningKind::assign, self, type.getShape(), dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> target(ivs);
        target[dim] = arith::AddIOp::create(
            b, loc, blockStart(b, ivs[dim]),
            arith::IndexCastOp::create(
                b, loc, b.getIndexType(),
                loop::LoadOp::create(b, loc, inBlock, ivs)));
        return ScatterUpdate{loop::LoadOp::create(b, loc, self, ivs), target};
      });

  Value across = buildCount(
      b, loc, rankType, dynamicSizes, ShapedType::kDynamic, numBlocks,
      [&](OpBuilder &b, Location loc, ValueRange ivs, Value block) -> Value {
        Value element = loop::LoadOp::create(b, loc, self, ivs);
        Value start = arith::MulIOp::create(b, loc, block,
                                            constant(b, kDynamicSortBlock));
        Value size = arith::MinUIOp::create(
            b, loc, constant(b, kDynamicSortBlock),
            arith::SubIOp::create(b, loc, length, start));
        Value own = arith::DivUIOp::create(b, loc, ivs[dim],
                                           constant(b, kDynamicSortBlock));
        Value earlier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              block, own);
        // The block's sorted elements that go before this one, or tie with
        // it in an earlier block, form a prefix: the largest count whose
        // last element qualifies, probed from the largest step down.
        Value count = constant(b, 0);
        for (int64_t step = kDynamicSortBlock; step >= 1; step /= 2) {
          Value probe = arith::AddIOp::create(b, loc, count, constant(b, step));
          Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                             probe, size);
          SmallVector<Value> at(ivs);
          at[dim] = arith::AddIOp::create(
              b, loc, start,
              arith::SubIOp::create(b, loc,
                                    arith::MinUIOp::create(b, loc, probe, size),
                                    constant(b, 1)));
          Value candidate = loop::LoadOp::create(b, loc, blocks, at);
          Value before =
              emitGoesBefore(b, loc, candidate, element, dtype, descending);
          Value notAfter = arith::XOrIOp::create(
              b, loc,
              emitGoesBefore(b, loc, element, candidate, dtype, descending),
              arith::ConstantIntOp::create(b, loc, 1, 1));
          Value qualifies =
              arith::SelectOp::create(b, loc, earlier, notAfter, before);
          count = arith::SelectOp::create(
              b, loc, arith::AndIOp::create(b, loc, fits, qualifies), probe,
              count);
        }
        // The element's own block is counted in `inBlock`.
        Value isOwn =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, block, own);
        return arith::IndexCastOp::create(
            b, loc, b.getI64Type(),
            arith::SelectOp::create(b, loc, isOwn, constant(b, 0), count));
      });
  return {inBlock, across};
}

/// Lowers fx.sort, stably. Up to kMaxScanLength elements an element's rank
/// is the number of elements that go before it or tie with it at an
/// earlier position; along a dynamic dimension it counts in blocks
/// (buildBlockedSortRanks); values and source positions are stored at the
/// ranks. Longer static rows run a sorting network (buildSortingNetwork).
struct SortLowering : OpRewritePattern<fx::SortOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SortOp op,
                                PatternRewriter &rewriter) const override {
    Value self = op.getSelf();
    auto type = cast<RankedTensorType>(self.getType());
    int64_t rank = type.getRank();
    if (rank == 0)
      return rewriter.notifyMatchFailure(op, "zero-dim sort");
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    int64_t length = type.getDimSize(dim);
    if (length > kMaxSortLength)
      return rewriter.notifyMatchFailure(op, "very long sort");
    Location loc = op.getLoc();
    Type dtype = type.getElementType();
    bool descending = op.getDescending();
    auto indicesType = cast<RankedTensorType>(op.getIndices().getType());
    auto rankType = type.clone(rewriter.getIntegerType(64, /*isSigned=*/true));
    SmallVector<Value> dynamicSizes = collectDynamicSizes(
        type, [&](int64_t d) { return getDimSize(rewriter, loc, self, d); });
    if (length > kMaxScanLength) {
      auto [values, indices] =
          buildSortingNetwork(rewriter, loc, self, dim, length, descending,
                              indicesType, dynamicSizes);
      rewriter.replaceOp(op, {values, indices});
      return success();
    }

    // The rank of each element: over the row, or in blocks of a dynamic one.
    SmallVector<Value> rankParts;
    if (ShapedType::isDynamic(length)) {
      auto [inBlock, across] = buildBlockedSortRanks(
          rewriter, loc, self, dim, descending, rankType, dynamicSizes);
      rankParts = {inBlock, across};
    } else {
      rankParts.push_back(buildCount(
          rewriter, loc, rankType, dynamicSizes, length, Value(),
          [&](OpBuilder &b, Location loc, ValueRange ivs,
              Value other) -> Value {
            SmallVector<Value> otherIndices(ivs);
            otherIndices[dim] = other;
            Value element = loop::LoadOp::create(b, loc, self, ivs);
            Value candidate = loop::LoadOp::create(b, loc, self, otherIndices);
            return emitComesBefore(b, loc, candidate, other, element, ivs[dim],
                                   dtype, descending);
          }));
    }

    // Every position receives exactly one element: the scatters start from
    // zeros that they overwrite.
    auto place =
        [&](RankedTensorType resultType,
            function_ref<Value(OpBuilder &, Location, ValueRange)> valueFn)
        -> Value {
      Value zeros = buildZeros(rewriter, loc, resultType, [&](int64_t d) {
        return getDimSize(rewriter, loc, self, d);
      });
      return buildScatter(
          rewriter, loc, CombiningKind::assign, zeros, type.getShape(),
          dynamicSizes, [&](OpBuilder &b, Location loc, ValueRange ivs) {
            Value rank;
            for (Value part : rankParts) {
              Value loaded = loop::LoadOp::create(b, loc, part, ivs);
              rank =
                  rank ? arith::AddIOp::create(b, loc, rank, loaded).getResult()
                       : loaded;
            }
            SmallVector<Value> target(ivs);
            target[dim] =
                arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
            return ScatterUpdate{valueFn(b, loc, ivs), target};
          });
    };
    Value values = place(type, [&](OpBuilder &b, Location loc, ValueRange ivs) {
      return loop::LoadOp::create(b, loc, self, ivs).getResult();
    });
    Value indices =
        place(indicesType, [&](OpBuilder &b, Location loc, ValueRange ivs) {
          return arith::IndexCastOp::create(
                     b, loc, loop::getScalarType(indicesType.getElementType()),
                     ivs[dim])
              .getResult();
        });
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

/// Rewrites fx.topk into the sort it is the first `k` of (largest first
/// when `largest`), sliced along `dim`.
struct TopkToSort : OpRewritePattern<fx::TopkOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::TopkOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSelf().getType());
    if (type.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "zero-dim topk");
    Location loc = op.getLoc();
    auto indicesType = RankedTensorType::get(
        type.getShape(),
        cast<RankedTensorType>(op.getIndices().getType()).getElementType());
    auto sort = fx::SortOp::create(rewriter, loc, TypeRange{type, indicesType},
                                   op.getSelf(), op.getDimAttr(),
                                   rewriter.getBoolAttr(op.getLargest()));
    auto slice = [&](Value tensor, Type resultType) -> Value {
      return fx::SliceOp::create(rewriter, loc, resultType, tensor,
                                 op.getDimAttr(), rewriter.getI64IntegerAttr(0),
                                 op.getKAttr(), rewriter.getI64IntegerAttr(1),
                                 /*dynamic_start=*/Value(),
                                 /*dynamic_end=*/Value());
    };
    rewriter.replaceOp(op,
                       {slice(sort.getValues(), op.getValues().getType()),
                        slice(sort.getIndices(), op.getIndices().getType())});
    return success();
  }
};

/// Lowers fx.masked_scatter: element i of the result (self and the mask
/// broadcast) where the mask is true takes source's element k, k counting
/// the true mask elements before i in row-major order; elsewhere self's.
/// The counts are a scan of the mask: a quadratic loop.reduce up to
/// kMaxScanLength elements, a long scan (in blocks, or doubling) of its
/// flags beyond, and in blocks over dynamic sizes. (A dynamic size is at
/// least 2, so the source is never empty then; the reads of source that the
/// mask discards stay inside it.)
struct MaskedScatterLowering : OpRewritePattern<fx::MaskedScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::MaskedScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto sourceType = cast<RankedTensorType>(op.getSource().getType());
    auto isEmpty = [](RankedTensorType type) {
      return llvm::is_contained(type.getShape(), 0);
    };
    if (isEmpty(type) || isEmpty(sourceType))
      return rewriter.notifyMatchFailure(op, "empty");
    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes = getBroadcastDynamicSizes(
        rewriter, loc, type, {op.getSelf(), op.getMask()});
    // The result's and source's sizes, their element counts.
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    SmallVector<Value> sizes, sourceSizes;
    for (auto [dim, size] : llvm::enumerate(type.getShape()))
      sizes.push_back(ShapedType::isDynamic(size)
                          ? dynamicSizes[type.getDynamicDimIndex(dim)]
                          : index(size));
    for (auto [dim, size] : llvm::enumerate(sourceType.getShape()))
      sourceSizes.push_back(ShapedType::isDynamic(size)
                                ? getDimSize(rewriter, loc, op.getSource(), dim)
                                : index(size));
    auto product = [&](ArrayRef<Value> values) {
      Value result = index(1);
      for (Value value : values)
        result = arith::MulIOp::create(rewriter, loc, result, value);
      return result;
    };
    Value count = product(sizes);
    Value sourceCount = product(sourceSizes);
    bool isStatic = type.hasStaticShape();
    int64_t staticCount =
        isStatic ? type.getNumElements() : ShapedType::kDynamic;
    SmallVector<Value> countSizes;
    if (!isStatic)
      countSizes.push_back(count);

    // `tensor` (the mask, or self) at the result's indices `ivs`,
    // broadcast from its trailing sizes.
    auto readBroadcast = [&](OpBuilder &b, Value tensor, ValueRange ivs) {
      auto tensorType = cast<RankedTensorType>(tensor.getType());
      SmallVector<Value> indices;
      for (auto [dim, iv] :
           llvm::enumerate(ivs.take_back(tensorType.getRank())))
        indices.push_back(tensorType.getDimSize(dim) == 1
                              ? arith::ConstantIndexOp::create(b, loc, 0)
                              : iv);
      return loop::LoadOp::create(b, loc, tensor, indices).getResult();
    };
    // How many true mask elements come up to each position, inclusive.
    Type i64 = rewriter.getI64Type();
    auto countsType = RankedTensorType::get(
        {staticCount},
        IntegerType::get(rewriter.getContext(), 64, IntegerType::Signed));
    Value counts;
    if (!isStatic || staticCount > kMaxScanLength) {
      // The mask's flags in row-major order, scanned.
      Value flags = buildGeneratorNode(
          rewriter, loc, countsType, countSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            return arith::ExtUIOp::create(
                b, loc, i64,
                readBroadcast(b, op.getMask(),
                              delinearizeBySizes(b, loc, ivs[0], sizes)));
          });
      ScanSpec scan{flags,       0,
                    staticCount, CombiningKind::sum,
                    i64,         countsType.getElementType(),
                    countSizes};
      counts = isStatic ? buildLongScan(rewriter, loc, countsType, scan)
                        : buildBlockedScan(rewriter, loc, countsType, scan);
    } else {
      auto reduce = loop::ReduceOp::create(
          rewriter, loc, countsType,
          rewriter.getAttr<loop::CombiningKindAttr>(CombiningKind::sum),
          ValueRange{}, ValueRange{},
          rewriter.getDenseI64ArrayAttr({staticCount}));
      counts = reduce.getResult();
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = rewriter.createBlock(&reduce.getBody());
      body->addArguments({rewriter.getIndexType(), rewriter.getIndexType()},
                         {loc, loc});
      Value position = body->getArgument(0), other = body->getArgument(1);
      Value set =
          readBroadcast(rewriter, op.getMask(),
                        delinearizeBySizes(rewriter, loc, other, sizes));
      Value before = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ule, other, position);
      loop::YieldOp::create(
          rewriter, loc,
          arith::ExtUIOp::create(
              rewriter, loc, i64,
              arith::AndIOp::create(rewriter, loc, before, set)));
    }
    Value lastSource =
        arith::SubIOp::create(rewriter, loc, sourceCount, index(1));
    Value result = buildGeneratorNode(
        rewriter, loc, type, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value taken = loop::LoadOp::create(
              b, loc, counts, linearizeBySizes(b, loc, ivs, sizes));
          // The source element: the count less one, kept inside source.
          Value k = arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              arith::MaxSIOp::create(
                  b, loc,
                  arith::SubIOp::create(b, loc, taken,
                                        arith::ConstantOp::create(
                                            b, loc, b.getIntegerAttr(i64, 1))),
                  arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, 0))));
          k = arith::MinUIOp::create(b, loc, k, lastSource);
          Value fromSource =
              loop::LoadOp::create(b, loc, op.getSource(),
                                   delinearizeBySizes(b, loc, k, sourceSizes));
          Value kept = readBroadcast(b, op.getSelf(), ivs);
          return arith::SelectOp::create(
              b, loc, readBroadcast(b, op.getMask(), ivs), fromSource, kept);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void fxtoloop::populateScanLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ScanLowering<fx::CumsumOp>>(ctx, CombiningKind::sum);
  patterns.add<ScanLowering<fx::CumprodOp>>(ctx, CombiningKind::prod);
  patterns.add<SortLowering, TopkToSort, MaskedScatterLowering>(ctx);
}
