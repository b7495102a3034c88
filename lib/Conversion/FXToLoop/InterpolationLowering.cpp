//===- InterpolationLowering.cpp - Bilinear upsampling --------------------===//
//
// Part of Kiln. fx.upsample_bilinear2d as one node that gathers the four
// neighbours of each output position and blends them with PyTorch's weights
// and arithmetic (f32 for f32, f16 and bf16; f64 for f64).
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

/// Where output position `o` of one spatial dimension reads: the lower
/// neighbour, the upper one (clamped to the input) and the upper one's weight.
struct Neighbours {
  Value lower, upper, upperWeight;
};

/// PyTorch's area_pixel_compute_source_index for linear modes: `scale * o`
/// with aligned corners, else `scale * (o + 0.5) - 0.5` clamped at 0.
static Neighbours getNeighbours(OpBuilder &b, Location loc, Value position,
                                double scale, bool alignCorners,
                                int64_t inputSize, Type type) {
  Value at = arith::UIToFPOp::create(
      b, loc, type,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), position));
  Value scaleValue = makeFloat(b, loc, type, scale);
  Value source;
  if (alignCorners) {
    source = arith::MulFOp::create(b, loc, scaleValue, at);
  } else {
    Value half = makeFloat(b, loc, type, 0.5);
    source = arith::SubFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, scaleValue,
                              arith::AddFOp::create(b, loc, at, half)),
        half);
    source =
        arith::MaximumFOp::create(b, loc, source, makeFloat(b, loc, type, 0.0));
  }
  Value lowerInt = arith::FPToUIOp::create(b, loc, b.getI64Type(), source);
  Value lower =
      arith::IndexCastUIOp::create(b, loc, b.getIndexType(), lowerInt);
  Value upper = arith::MinUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, lower,
                            arith::ConstantIndexOp::create(b, loc, 1)),
      arith::ConstantIndexOp::create(b, loc, inputSize - 1));
  Value weight = arith::SubFOp::create(
      b, loc, source, arith::UIToFPOp::create(b, loc, type, lowerInt));
  return {lower, upper, weight};
}

struct UpsampleBilinearLowering : OpRewritePattern<fx::UpsampleBilinear2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::UpsampleBilinear2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    for (int64_t dim = rank - 2; dim < rank; ++dim)
      if (inputType.isDynamicDim(dim) || type.isDynamicDim(dim))
        return rewriter.notifyMatchFailure(op, "dynamic spatial sizes");
    Type dtype = type.getElementType();
    Type computeType = dtype.isF64() ? Type(rewriter.getF64Type())
                                     : Type(rewriter.getF32Type());
    bool alignCorners = op.getAlignCorners();
    std::optional<ArrayRef<double>> factors;
    if (auto attr = op.getScaleFactorsAttr())
      factors = attr.asArrayRef();
    // PyTorch's area_pixel_compute_scale, in the compute type.
    SmallVector<double> scales;
    for (int64_t dim = 0; dim < 2; ++dim) {
      int64_t in = inputType.getDimSize(rank - 2 + dim);
      int64_t out = type.getDimSize(rank - 2 + dim);
      double scale;
      if (alignCorners)
        scale = out > 1 ? static_cast<double>(in - 1) / (out - 1) : 0.0;
      else if (factors && (*factors)[dim] > 0)
        scale = 1.0 / (*factors)[dim];
      else
        scale = static_cast<double>(in) / out;
      if (computeType.isF32())
        scale = static_cast<float>(scale);
      scales.push_back(scale);
    }
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(type, [&](int64_t dim) {
          return getDimSize(rewriter, loc, input, dim);
        });
    Value result = buildGeneratorNode(
        rewriter, loc, type, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Neighbours rows =
              getNeighbours(b, loc, ivs[rank - 2], scales[0], alignCorners,
                            inputType.getDimSize(rank - 2), computeType);
          Neighbours columns =
              getNeighbours(b, loc, ivs[rank - 1], scales[1], alignCorners,
                            inputType.getDimSize(rank - 1), computeType);
          auto load = [&](Value row, Value column) {
            SmallVector<Value> indices(ivs.drop_back(2));
            indices.append({row, column});
            return convertScalar(b, loc,
                                 loop::LoadOp::create(b, loc, input, indices),
                                 dtype, computeType);
          };
          Value one = makeFloat(b, loc, computeType, 1.0);
          auto blend = [&](Value lowerValue, Value upperValue,
                           Value upperWeight) {
            Value lowerWeight = arith::SubFOp::create(b, loc, one, upperWeight);
            return arith::AddFOp::create(
                b, loc, arith::MulFOp::create(b, loc, lowerWeight, lowerValue),
                arith::MulFOp::create(b, loc, upperWeight, upperValue));
          };
          Value top =
              blend(load(rows.lower, columns.lower),
                    load(rows.lower, columns.upper), columns.upperWeight);
          Value bottom =
              blend(load(rows.upper, columns.lower),
                    load(rows.upper, columns.upper), columns.upperWeight);
          return convertScalar(b, loc, blend(top, bottom, rows.upperWeight),
                               computeType, dtype);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void fxtoloop::populateInterpolationPatterns(RewritePatternSet &patterns) {
  patterns.add<UpsampleBilinearLowering>(patterns.getContext());
}
