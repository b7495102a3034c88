//===- ViewScatterLowering.cpp - Views of a tensor replaced by a source ---===//
//
// Part of Kiln. fx.slice_scatter, fx.select_scatter and fx.copy, which
// functionalised graphs use where eager code writes into a view or a tensor
// (`x[:, 1:] = y`, `x.copy_(y)`, and the gradients of slicing and selecting),
// become one pointwise node: an element inside the view reads the source,
// any other reads `self`.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The position of index `index` of dimension `dim` within the view, when
/// it is in it, as (in the view, the view's index): the index is clamped so
/// that reading the source there stays inside it whatever the flag says.
using ViewIndexFn =
    function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value index)>;

/// Builds `self` with the view along `dim` replaced by `src`: `viewIndex`
/// places each index of `dim`; `keepsDim` says whether `src` has `dim`
/// (slice) or not (select).
static Value buildViewScatter(OpBuilder &b, Location loc, Value self, Value src,
                              int64_t dim, bool keepsDim,
                              ViewIndexFn viewIndex) {
  auto type = cast<RankedTensorType>(self.getType());
  Type dtype = type.getElementType();
  Type srcDtype = cast<RankedTensorType>(src.getType()).getElementType();
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(getDimSize(b, loc, self, d));
  return buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        auto [inView, index] = viewIndex(b, loc, ivs[dim]);
        SmallVector<Value> srcIndices(ivs);
        if (keepsDim)
          srcIndices[dim] = index;
        else
          srcIndices.erase(srcIndices.begin() + dim);
        Value fromSrc =
            convertScalar(b, loc, loop::LoadOp::create(b, loc, src, srcIndices),
                          srcDtype, dtype);
        Value fromSelf = loop::LoadOp::create(b, loc, self, ivs);
        return arith::SelectOp::create(b, loc, inView, fromSrc, fromSelf);
      });
}

/// `index` (an attribute, negative from the end) as a position in a
/// dimension of run-time `size`, clamped into [0, size] as slicing clamps.
static Value normalizeBound(OpBuilder &b, Location loc, int64_t index,
                            Value size) {
  if (std::optional<int64_t> known = getConstantIntValue(size))
    return arith::ConstantIndexOp::create(
        b, loc,
        std::clamp<int64_t>(index < 0 ? index + *known : index, 0, *known));
  if (index >= 0)
    return arith::MinUIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, index), size);
  Value back = arith::ConstantIndexOp::create(b, loc, -index);
  Value fits =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, size, back);
  return arith::SelectOp::create(b, loc, fits,
                                 arith::SubIOp::create(b, loc, size, back),
                                 arith::ConstantIndexOp::create(b, loc, 0));
}

/// Lowers fx.slice_scatter: index i is in the view when i = start + k * step
/// for 0 <= k < the source's size (which implies the end). Over a dynamic
/// dimension the start is placed at run time. The source is read at k
/// clamped into it whatever the flag says; it is never empty there (a `?`
/// size is at least 2, and a static empty slice replaces nothing).
struct SliceScatterLowering : OpRewritePattern<fx::SliceScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SliceScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSelf().getType());
    int64_t dim =
        normalizeDim(static_cast<int64_t>(op.getDim()), type.getRank());
    int64_t step = static_cast<int64_t>(op.getStep());
    // An empty slice replaces nothing (and has no element to read).
    if (cast<RankedTensorType>(op.getSrc().getType()).getDimSize(dim) == 0) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    Location loc = op.getLoc();
    int64_t start = op.getStart().value_or(0);
    Value startValue = normalizeBound(
        rewriter, loc, start, getDimSize(rewriter, loc, op.getSelf(), dim));
    Value srcSize = getDimSize(rewriter, loc, op.getSrc(), dim);
    Value result = buildViewScatter(
        rewriter, loc, op.getSelf(), op.getSrc(), dim, /*keepsDim=*/true,
        [&](OpBuilder &b, Location loc,
            Value index) -> std::pair<Value, Value> {
          auto constant = [&](int64_t value) -> Value {
            return arith::ConstantIndexOp::create(b, loc, value);
          };
          Value zero = constant(0);
          Value offset = arith::SubIOp::create(b, loc, index, startValue);
          Value after = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              offset, zero);
          Value position = arith::SelectOp::create(b, loc, after, offset, zero);
          Value k = position;
          Value onStep = after;
          if (step != 1) {
            k = arith::DivUIOp::create(b, loc, position, constant(step));
            Value remainder =
                arith::RemUIOp::create(b, loc, position, constant(step));
            onStep = arith::AndIOp::create(
                b, loc, onStep,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      remainder, zero));
          }
          Value inView = arith::AndIOp::create(
              b, loc, onStep,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k,
                                    srcSize));
          Value last = arith::SubIOp::create(b, loc, srcSize, constant(1));
          return {inView, arith::MinUIOp::create(b, loc, k, last)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.select_scatter: index i of `dim` is in the view when it is the
/// selected index (counted from the end at run time when it is negative and
/// the dimension dynamic).
struct SelectScatterLowering : OpRewritePattern<fx::SelectScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SelectScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSelf().getType());
    int64_t dim =
        normalizeDim(static_cast<int64_t>(op.getDim()), type.getRank());
    Location loc = op.getLoc();
    Value chosen =
        normalizeBound(rewriter, loc, static_cast<int64_t>(op.getIndex()),
                       getDimSize(rewriter, loc, op.getSelf(), dim));
    Value result = buildViewScatter(
        rewriter, loc, op.getSelf(), op.getSrc(), dim,
        /*keepsDim=*/false,
        [&](OpBuilder &b, Location loc,
            Value index) -> std::pair<Value, Value> {
          return {arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                        chosen),
                  index};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.copy, the whole of `self` replaced: `src` broadcast to self's
/// shape and converted to its dtype.
struct CopyLowering : OpRewritePattern<fx::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    // A dynamic size of self must come from src (the node reads only src).
    int64_t leading = type.getRank() - srcType.getRank();
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim) &&
          (dim < leading || !srcType.isDynamicDim(dim - leading)))
        return rewriter.notifyMatchFailure(op, "size known only from self");
    Type srcDtype = srcType.getElementType();
    rewriter.replaceOp(op, buildBroadcastPointwise(
                               rewriter, op.getLoc(), type, op.getSrc(),
                               srcDtype, srcDtype,
                               [](OpBuilder &, Location, ValueRange elements) {
                                 return elements[0];
                               }));
    return success();
  }
};

} // namespace

void fxtoloop::populateViewScatterLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SliceScatterLowering, SelectScatterLowering, CopyLowering>(
      patterns.getContext());
}
