//===- SymbolicBoundsLowering.cpp - Bounds known only at run time ---------===//
//
// Part of Kiln. fx.symbol_value reads a size symbol bound from a guarded
// argument; slices and selects whose bounds are symbolic (operands), or
// negative on a dynamic dimension, compute them at run time as PyTorch does:
// a negative bound counts from the end and a slice's bounds clamp into the
// dimension. The result is a node that reads the source at an offset index;
// its sliced size is an operand.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// Lowers fx.symbol_value to the size of the argument dimension that binds
/// the symbol, as an i64.
struct SymbolValueLowering : OpRewritePattern<fx::SymbolValueOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SymbolValueOp op,
                                PatternRewriter &rewriter) const override {
    Value size = getSizeSymbolValue(rewriter, op.getLoc(), op, op.getSymbol());
    if (!size)
      return rewriter.notifyMatchFailure(op, "no argument binds the symbol");
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getI64Type(),
                                                    size);
    return success();
  }
};

/// A lowering of a view whose bounds are computed at run time: it goes
/// before ViewLowering, which takes static bounds only.
template <typename OpTy> struct SymbolicBoundsPattern : OpRewritePattern<OpTy> {
  SymbolicBoundsPattern(MLIRContext *context)
      : OpRewritePattern<OpTy>(context, /*benefit=*/2) {}
};

/// A bound as an index: the i64 operand if there is one, else the static
/// attribute's value, else `absent`.
static Value getBound(OpBuilder &b, Location loc, Value operand,
                      std::optional<int64_t> attribute, Value absent) {
  if (operand)
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), operand);
  if (attribute)
    return arith::ConstantIndexOp::create(b, loc, *attribute);
  return absent;
}

/// PyTorch's slice bound: negative counts from the end, then clamped into
/// [0, size].
static Value wrapAndClampBound(OpBuilder &b, Location loc, Value bound,
                               Value size) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, bound, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, bound, size), bound);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, wrapped, zero), size);
}

/// The dynamic sizes of `resultType`, whose dimension `dim` (if any, else
/// -1) has size `sliced` and whose others are `source`'s dimensions
/// `sourceDim(d)`.
static SmallVector<Value>
getDynamicSizes(OpBuilder &b, Location loc, Value source,
                RankedTensorType resultType, int64_t dim, Value sliced,
                function_ref<int64_t(int64_t)> sourceDim) {
  return collectDynamicSizes(resultType, [&](int64_t d) {
    return d == dim ? sliced : getDimSize(b, loc, source, sourceDim(d));
  });
}

/// Lowers fx.slice with a symbolic start or end, or of part of a dynamic
/// dimension (x[1:], x[:-1]): element i of `dim` reads start + i * step, and
/// the result has ceil((end - start) / step) elements there (none when end <=
/// start), both bounds wrapped and clamped at run time.
struct SymbolicSliceLowering : SymbolicBoundsPattern<fx::SliceOp> {
  using SymbolicBoundsPattern::SymbolicBoundsPattern;

  LogicalResult matchAndRewrite(fx::SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto sourceType = cast<RankedTensorType>(op.getSelf().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t dim = normalizeDim(op.getDim(), sourceType.getRank());
    // I64Attr reads as unsigned.
    std::optional<int64_t> staticStart, staticEnd;
    if (op.getStart())
      staticStart = static_cast<int64_t>(*op.getStart());
    if (op.getEnd())
      staticEnd = static_cast<int64_t>(*op.getEnd());
    bool whole = staticStart.value_or(0) == 0 &&
                 staticEnd.value_or(std::numeric_limits<int64_t>::max()) ==
                     std::numeric_limits<int64_t>::max() &&
                 op.getStep() == 1;
    bool partOfDynamic = sourceType.isDynamicDim(dim) && !whole;
    if (!op.getDynamicStart() && !op.getDynamicEnd() && !partOfDynamic)
      return rewriter.notifyMatchFailure(op, "static bounds");
    Location loc = op.getLoc();
    Value size = getDimSize(rewriter, loc, op.getSelf(), dim);
    Value start = wrapAndClampBound(
        rewriter, loc,
        getBound(rewriter, loc, op.getDynamicStart(), staticStart,
                 arith::ConstantIndexOp::create(rewriter, loc, 0)),
        size);
    Value end = wrapAndClampBound(
        rewriter, loc,
        getBound(rewriter, loc, op.getDynamicEnd(), staticEnd, size), size);
    int64_t step = op.getStep();
    Value stepValue = arith::ConstantIndexOp::create(rewriter, loc, step);
    // end >= start after clamping only when the slice is not empty.
    Value span = arith::MaxSIOp::create(
        rewriter, loc, arith::SubIOp::create(rewriter, loc, end, start),
        arith::ConstantIndexOp::create(rewriter, loc, 0));
    Value length = arith::CeilDivUIOp::create(rewriter, loc, span, stepValue);
    SmallVector<Value> dynamicSizes =
        getDynamicSizes(rewriter, loc, op.getSelf(), resultType, dim, length,
                        [](int64_t d) { return d; });
    rewriter.replaceOp(
        op, buildIndexMapNode(
                rewriter, loc, op.getSelf(), resultType, dynamicSizes,
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  SmallVector<Value> indices(ivs);
                  Value offset = ivs[dim];
                  if (step != 1)
                    offset = arith::MulIOp::create(b, loc, offset, stepValue);
                  indices[dim] = arith::AddIOp::create(b, loc, offset, start);
                  return indices;
                }));
    return success();
  }
};

/// Lowers fx.select with a symbolic index, or a negative one on a dynamic
/// dimension: the index counts from the end when negative and is clamped
/// into the dimension (out of range is an error in PyTorch; the read stays
/// inside the tensor).
struct SymbolicSelectLowering : SymbolicBoundsPattern<fx::SelectOp> {
  using SymbolicBoundsPattern::SymbolicBoundsPattern;

  LogicalResult matchAndRewrite(fx::SelectOp op,
                                PatternRewriter &rewriter) const override {
    auto sourceType = cast<RankedTensorType>(op.getSelf().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t dim = normalizeDim(op.getDim(), sourceType.getRank());
    std::optional<uint64_t> staticIndex = op.getIndex();
    bool negativeOnDynamic = staticIndex && sourceType.isDynamicDim(dim) &&
                             static_cast<int64_t>(*staticIndex) < 0;
    if (!op.getDynamicIndex() && !negativeOnDynamic)
      return rewriter.notifyMatchFailure(op, "static index");
    Location loc = op.getLoc();
    Value size = getDimSize(rewriter, loc, op.getSelf(), dim);
    Value index =
        op.getDynamicIndex()
            ? op.getDynamicIndex()
            : arith::ConstantIntOp::create(
                  rewriter, loc, static_cast<int64_t>(*staticIndex), 64)
                  .getResult();
    Value position = wrapAndClampIndex(rewriter, loc, index, size);
    SmallVector<Value> dynamicSizes = getDynamicSizes(
        rewriter, loc, op.getSelf(), resultType, /*dim=*/-1, Value(),
        [dim](int64_t d) { return d < dim ? d : d + 1; });
    rewriter.replaceOp(
        op,
        buildIndexMapNode(rewriter, loc, op.getSelf(), resultType, dynamicSizes,
                          [&](OpBuilder &, Location, ValueRange ivs) {
                            SmallVector<Value> indices(ivs);
                            indices.insert(indices.begin() + dim, position);
                            return indices;
                          }));
    return success();
  }
};

} // namespace

void fxtoloop::populateSymbolicBoundsLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<SymbolValueLowering, SymbolicSliceLowering, SymbolicSelectLowering>(
          patterns.getContext());
}
