//===- CreationLowering.cpp - Tensor creation -----------------------------===//
//
// Part of Kiln. full, full_like, fill, empty, empty_strided, scalar_tensor
// and arange as generator nodes, and frozen parameters (fx.constant) as
// builtin tensor constants.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {
/// Lowers fx.full, fx.full_like, fx.fill_scalar, fx.scalar_tensor and
/// fx.empty: every element is the fill value (zero for empty), converted to
/// the result's dtype.
template <typename OpTy> struct FillLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Type dtype = type.getElementType();
    SmallVector<Value> dynamicSizes;
    if constexpr (std::is_same_v<OpTy, fx::FullLikeOp> ||
                  std::is_same_v<OpTy, fx::FillScalarOp>) {
      for (int64_t dim = 0; dim < type.getRank(); ++dim)
        if (type.isDynamicDim(dim))
          dynamicSizes.push_back(
              getDimSize(rewriter, op.getLoc(), op.getSelf(), dim));
    } else if constexpr (std::is_same_v<OpTy, fx::FullOp> ||
                         std::is_same_v<OpTy, fx::EmptyOp>) {
      FailureOr<SmallVector<Value>> named =
          getNamedDynamicSizes(rewriter, op.getLoc(), op, type);
      if (failed(named))
        return rewriter.notifyMatchFailure(op, "unnamed dynamic sizes");
      dynamicSizes = std::move(*named);
    } else if (!type.hasStaticShape()) {
      return rewriter.notifyMatchFailure(op, "dynamic sizes");
    }
    Attribute fill;
    if constexpr (std::is_same_v<OpTy, fx::ScalarTensorOp>) {
      if (Value symbolic = op.getDynamicS()) {
        rewriter.replaceOp(
            op, buildGeneratorNode(rewriter, op.getLoc(), type, {},
                                   [&](OpBuilder &b, Location loc, ValueRange) {
                                     return convertScalar(b, loc, symbolic,
                                                          b.getI64Type(),
                                                          dtype);
                                   }));
        return success();
      }
      fill = *op.getS();
    } else if constexpr (std::is_same_v<OpTy, fx::FillScalarOp>)
      fill = op.getValue();
    else if constexpr (std::is_same_v<OpTy, fx::EmptyOp> ||
                       std::is_same_v<OpTy, fx::EmptyStridedOp>)
      fill = rewriter.getI64IntegerAttr(0); // Any value will do: zero.
    else
      fill = op.getFillValue();
    rewriter.replaceOp(
        op, buildGeneratorNode(rewriter, op.getLoc(), type, dynamicSizes,
                               [&](OpBuilder &b, Location loc, ValueRange) {
                                 return makeScalar(b, loc, fill, dtype);
                               }));
    return success();
  }
};

/// Lowers fx.arange: element i is start + i * step, computed in f64 (i64
/// for integers) as PyTorch accumulates, then converted. With a symbolic
/// end (integral bounds), the length is max(0, ceil((end - start) / step)).
struct ArangeLowering : OpRewritePattern<fx::ArangeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ArangeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Type dtype = type.getElementType();
    if ((!type.hasStaticShape() && !op.getDynamicEnd()) ||
        isa<ComplexType>(dtype) || dtype.isInteger(1))
      return rewriter.notifyMatchFailure(op, "dynamic, complex or bool");
    Attribute one = rewriter.getI64IntegerAttr(1);
    Attribute step = op.getStep() ? *op.getStep() : one;
    SmallVector<Value> dynamicSizes;
    if (!type.hasStaticShape()) {
      auto startAttr = dyn_cast<IntegerAttr>(op.getStart());
      auto stepAttr = dyn_cast<IntegerAttr>(step);
      if (!startAttr || !stepAttr || stepAttr.getInt() == 0)
        return rewriter.notifyMatchFailure(op, "symbolic end, float bounds");
      Location loc = op.getLoc();
      auto constant = [&](int64_t value) -> Value {
        return arith::ConstantIntOp::create(rewriter, loc, value, 64);
      };
      Value span = arith::SubIOp::create(rewriter, loc, op.getDynamicEnd(),
                                         constant(startAttr.getInt()));
      Value length = arith::MaxSIOp::create(
          rewriter, loc,
          arith::CeilDivSIOp::create(rewriter, loc, span,
                                     constant(stepAttr.getInt())),
          constant(0));
      dynamicSizes.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(), length));
    }
    bool isFloat = isa<FloatType>(dtype);
    Type accumulator = isFloat ? Type(rewriter.getF64Type())
                               : Type(rewriter.getIntegerType(64));
    Type accumulatorDtype =
        isFloat ? accumulator
                : Type(IntegerType::get(rewriter.getContext(), 64,
                                        IntegerType::Signed));
    rewriter.replaceOp(
        op, buildGeneratorNode(
                rewriter, op.getLoc(), type, dynamicSizes,
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  Value index = arith::IndexCastOp::create(
                      b, loc, b.getI64Type(), ivs.front());
                  Value start =
                      makeScalar(b, loc, op.getStart(), accumulatorDtype);
                  Value stride = makeScalar(b, loc, step, accumulatorDtype);
                  Value value;
                  if (isFloat) {
                    Value position =
                        arith::SIToFPOp::create(b, loc, accumulator, index);
                    value = arith::AddFOp::create(
                        b, loc, start,
                        arith::MulFOp::create(b, loc, position, stride));
                  } else {
                    value = arith::AddIOp::create(
                        b, loc, start,
                        arith::MulIOp::create(b, loc, index, stride));
                  }
                  return convertScalar(b, loc, value, accumulatorDtype, dtype);
                }));
    return success();
  }
};

/// Lowers fx.constant, a frozen parameter, to a builtin tensor constant,
/// which bufferization places in the artifact's read-only data.
struct ConstantLowering : OpRewritePattern<fx::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValueAttr()));
    return success();
  }
};

} // namespace

void fxtoloop::populateCreationLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<FillLowering<fx::FullOp>, FillLowering<fx::FullLikeOp>,
           FillLowering<fx::FillScalarOp>, FillLowering<fx::EmptyOp>,
           FillLowering<fx::EmptyStridedOp>, FillLowering<fx::ScalarTensorOp>,
           ArangeLowering, ConstantLowering>(ctx);
}
