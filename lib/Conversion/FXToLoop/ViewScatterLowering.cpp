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

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
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

static int64_t normalizeDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

/// Lowers fx.slice_scatter over a dimension of static size: index i is in
/// the view when i = start + k * step for 0 <= k < the source's size.
struct SliceScatterLowering : OpRewritePattern<fx::SliceScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SliceScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSelf().getType());
    int64_t dim =
        normalizeDim(static_cast<int64_t>(op.getDim()), type.getRank());
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      return rewriter.notifyMatchFailure(op, "slice of a dynamic dimension");
    auto clamp = [&](int64_t index) {
      return std::clamp<int64_t>(index < 0 ? index + size : index, 0, size);
    };
    int64_t start = clamp(op.getStart().value_or(0));
    int64_t step = static_cast<int64_t>(op.getStep());
    // An empty slice replaces nothing (and has no element to read).
    if (cast<RankedTensorType>(op.getSrc().getType()).getDimSize(dim) == 0) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    Location loc = op.getLoc();
    Value srcSize = getDimSize(rewriter, loc, op.getSrc(), dim);
    Value result = buildViewScatter(
        rewriter, loc, op.getSelf(), op.getSrc(), dim, /*keepsDim=*/true,
        [&](OpBuilder &b, Location loc,
            Value index) -> std::pair<Value, Value> {
          auto constant = [&](int64_t value) -> Value {
            return arith::ConstantIndexOp::create(b, loc, value);
          };
          Value zero = constant(0);
          Value offset = arith::SubIOp::create(b, loc, index, constant(start));
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
/// selected index.
struct SelectScatterLowering : OpRewritePattern<fx::SelectScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SelectScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSelf().getType());
    int64_t dim =
        normalizeDim(static_cast<int64_t>(op.getDim()), type.getRank());
    int64_t selected = static_cast<int64_t>(op.getIndex());
    if (selected < 0) {
      if (type.isDynamicDim(dim))
        return rewriter.notifyMatchFailure(op, "negative index, dynamic size");
      selected += type.getDimSize(dim);
    }
    Value result = buildViewScatter(
        rewriter, op.getLoc(), op.getSelf(), op.getSrc(), dim,
        /*keepsDim=*/false,
        [&](OpBuilder &b, Location loc,
            Value index) -> std::pair<Value, Value> {
          Value chosen = arith::ConstantIndexOp::create(b, loc, selected);
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

void fxtoloop::populateViewScatterPatterns(RewritePatternSet &patterns) {
  patterns.add<SliceScatterLowering, SelectScatterLowering, CopyLowering>(
      patterns.getContext());
}
