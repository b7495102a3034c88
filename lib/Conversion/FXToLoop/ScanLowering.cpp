//===- ScanLowering.cpp - Prefix sums and products of short rows ----------===//
//
// Part of Kiln. fx.cumsum and fx.cumprod along a dimension of static size up
// to kMaxScanLength become a loop.reduce: element i combines the row's
// elements at positions <= i. That costs n^2 / 2 operations per row instead
// of a scan's n, which is nothing for the short rows graphs scan (position
// ids from an attention mask, a sequence's offsets), and keeps the scan an
// ordinary reduction that fuses like one. Longer rows are not lowered.
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

/// The longest row a scan lowers for: its reduction reads n^2 / 2 elements.
constexpr int64_t kMaxScanLength = 4096;

/// Lowers fx.cumsum ("sum") and fx.cumprod ("prod").
template <typename OpTy> struct ScanLowering : OpRewritePattern<OpTy> {
  ScanLowering(MLIRContext *ctx, StringRef combiner)
      : OpRewritePattern<OpTy>(ctx), combiner(combiner.str()) {}

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
    if (ShapedType::isDynamic(length) || length > kMaxScanLength)
      return rewriter.notifyMatchFailure(op, "long or dynamic scan");
    Location loc = op.getLoc();
    Type accumulator = (dtype.isF16() || dtype.isBF16())
                           ? Type(rewriter.getF32Type())
                           : loop::getScalarType(dtype);
    Type accumulatorDtype = isa<FloatType>(accumulator) ? accumulator : dtype;
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(resultType, [&](int64_t d) {
          return getDimSize(rewriter, loc, op.getSelf(), d);
        });
    auto node = loop::ReduceOp::create(
        rewriter, loc, resultType, rewriter.getStringAttr(combiner),
        dynamicSizes, ValueRange{}, rewriter.getDenseI64ArrayAttr({length}));
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
    Value identity =
        isa<FloatType>(accumulator)
            ? makeFloat(rewriter, loc, accumulator, combiner == "sum" ? 0 : 1)
            : arith::ConstantOp::create(
                  rewriter, loc,
                  rewriter.getIntegerAttr(accumulator,
                                          combiner == "sum" ? 0 : 1))
                  .getResult();
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

  std::string combiner;
};

} // namespace

void fxtoloop::populateScanPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ScanLowering<fx::CumsumOp>>(ctx, "sum");
  patterns.add<ScanLowering<fx::CumprodOp>>(ctx, "prod");
}
