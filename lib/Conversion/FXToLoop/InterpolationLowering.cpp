//===- InterpolationLowering.cpp - Upsampling and grid sampling -----------===//
//
// Part of Kiln. fx.upsample_* (nearest, linear, bilinear, trilinear and
// bicubic, over 1 to 3 spatial dimensions) and fx.grid_sampler_2d as nodes
// that gather the neighbours of each output position and blend them with
// PyTorch's weights and arithmetic (f32 for f32, f16 and bf16; f64 for
// f64). Images may have any size: what depends on the sizes is computed
// from them at run time where they are dynamic.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The weights of the four taps at -1, 0, 1 and 2 of cubic convolution at
/// fraction `t` (Keys' kernel with A = -0.75, as PyTorch's bicubic modes).
static SmallVector<Value, 4> buildCubicWeights(OpBuilder &b, Location loc,
                                               Value t) {
  constexpr double a = -0.75;
  Type type = t.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, type, value); };
  // |d| <= 1: ((A + 2)·d - (A + 3))·d² + 1.
  auto near = [&](Value d) -> Value {
    Value inner = arith::SubFOp::create(
        b, loc, arith::MulFOp::create(b, loc, constant(a + 2), d),
        constant(a + 3));
    return arith::AddFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, inner, d),
                              d),
        constant(1.0));
  };
  // 1 < |d| < 2: ((A·d - 5A)·d + 8A)·d - 4A.
  auto far = [&](Value d) -> Value {
    Value inner = arith::SubFOp::create(
        b, loc, arith::MulFOp::create(b, loc, constant(a), d), constant(5 * a));
    inner = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, inner, d), constant(8 * a));
    return arith::SubFOp::create(
        b, loc, arith::MulFOp::create(b, loc, inner, d), constant(4 * a));
  };
  Value one = constant(1.0);
  return {far(arith::AddFOp::create(b, loc, t, one)), near(t),
          near(arith::SubFOp::create(b, loc, one, t)),
          far(arith::AddFOp::create(
              b, loc, arith::SubFOp::create(b, loc, one, t), one))};
}

/// The spatial dimensions of an upsampling: all but [N, C].
static int64_t getSpatialRank(RankedTensorType type) {
  return type.getRank() - 2;
}

/// Whether each of an upsampling's dynamic result sizes has its scale
/// factor, which gives it, or a name in `size_symbols`.
static bool hasResultSizes(Operation *op, RankedTensorType type,
                           std::optional<ArrayRef<double>> factors) {
  if (op->hasAttr("size_symbols"))
    return true;
  int64_t spatialRank = getSpatialRank(type);
  for (int64_t dim = 0; dim < spatialRank; ++dim)
    if (type.isDynamicDim(2 + dim) && (!factors || (*factors)[dim] <= 0))
      return false;
  return true;
}

/// The spatial sizes of an upsampling's input and result: constants where
/// static; a dynamic result size is the one `size_symbols` names, else the
/// input's times the scale factor, floored (PyTorch's output size;
/// hasResultSizes).
struct SpatialSizes {
  SmallVector<Value, 3> input, result;
};

static SpatialSizes getSpatialSizes(OpBuilder &b, Location loc, Operation *op,
                                    Value input, RankedTensorType type,
                                    std::optional<ArrayRef<double>> factors) {
  SpatialSizes sizes;
  SmallVector<StringRef> names;
  if (auto named = op->getAttrOfType<ArrayAttr>("size_symbols"))
    names = llvm::to_vector(named.getAsValueRange<StringAttr>());
  // The names of the spatial sizes follow those of [N, C].
  unsigned name = type.isDynamicDim(0) + type.isDynamicDim(1);
  for (int64_t dim = 0, e = getSpatialRank(type); dim < e; ++dim) {
    int64_t at = 2 + dim;
    Value in = getDimSize(b, loc, input, at);
    sizes.input.push_back(in);
    if (!type.isDynamicDim(at)) {
      sizes.result.push_back(
          arith::ConstantIndexOp::create(b, loc, type.getDimSize(at)));
      continue;
    }
    if (!names.empty()) {
      sizes.result.push_back(getSizeExpressionValue(b, loc, op, names[name++]));
      continue;
    }
    Value scaled = arith::MulFOp::create(
        b, loc, sizeToFloat(b, loc, in, b.getF64Type()),
        makeFloat(b, loc, b.getF64Type(), (*factors)[dim]));
    sizes.result.push_back(arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        arith::FPToUIOp::create(b, loc, b.getI64Type(),
                                math::FloorOp::create(b, loc, scaled))));
  }
  return sizes;
}

/// The result's dynamic sizes: the input's in [N, C].
static SmallVector<Value> getResultSizes(OpBuilder &b, Location loc,
                                         Value input, RankedTensorType type,
                                         const SpatialSizes &sizes) {
  return collectDynamicSizes(type, [&](int64_t dim) {
    return dim < 2 ? getDimSize(b, loc, input, dim) : sizes.result[dim - 2];
  });
}

/// `numerator` / `denominator` as a float of `type`: a constant when both
/// are static (rounded once from the exact quotient, as PyTorch's).
static Value divideSizes(OpBuilder &b, Location loc, Value numerator,
                         Value denominator, Type type) {
  std::optional<int64_t> n = getConstantIntValue(numerator);
  std::optional<int64_t> d = getConstantIntValue(denominator);
  if (n && d) {
    double quotient = static_cast<double>(*n) / static_cast<double>(*d);
    return makeFloat(b, loc, type,
                     type.isF32() ? static_cast<float>(quotient) : quotient);
  }
  return arith::DivFOp::create(b, loc, sizeToFloat(b, loc, numerator, type),
                               sizeToFloat(b, loc, denominator, type));
}

/// PyTorch's area_pixel_compute_scale for each spatial dimension, in
/// `type`: (in - 1) / (out - 1) with aligned corners (0 for one output),
/// else 1 / scale_factor when given, else in / out.
static SmallVector<Value, 3>
getSamplingScales(OpBuilder &b, Location loc, const SpatialSizes &sizes,
                  std::optional<ArrayRef<double>> factors, bool alignCorners,
                  Type type) {
  SmallVector<Value, 3> scales;
  for (auto [dim, in, out] : llvm::enumerate(sizes.input, sizes.result)) {
    if (alignCorners) {
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value ratio =
          divideSizes(b, loc, b.createOrFold<arith::SubIOp>(loc, in, one),
                      b.createOrFold<arith::SubIOp>(loc, out, one), type);
      Value several =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, out, one);
      scales.push_back(arith::SelectOp::create(b, loc, several, ratio,
                                               makeFloat(b, loc, type, 0.0)));
    } else if (factors && (*factors)[dim] > 0) {
      double scale = 1.0 / (*factors)[dim];
      scales.push_back(makeFloat(
          b, loc, type, type.isF32() ? static_cast<float>(scale) : scale));
    } else {
      scales.push_back(divideSizes(b, loc, in, out, type));
    }
  }
  return scales;
}

/// PyTorch's area_pixel_compute_source_index: `scale * o` with aligned
/// corners, else `scale * (o + 0.5) - 0.5`, which linear modes clamp at 0.
static Value getSourceCoordinate(OpBuilder &b, Location loc, Value position,
                                 Value scale, bool alignCorners,
                                 bool clampAtZero) {
  Type type = scale.getType();
  Value at = sizeToFloat(b, loc, position, type);
  if (alignCorners)
    return arith::MulFOp::create(b, loc, scale, at);
  Value half = makeFloat(b, loc, type, 0.5);
  Value source = arith::SubFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, scale,
                            arith::AddFOp::create(b, loc, at, half)),
      half);
  if (!clampAtZero)
    return source;
  return arith::MaximumFOp::create(b, loc, source,
                                   makeFloat(b, loc, type, 0.0));
}

/// The input positions that one output position of one spatial dimension
/// reads, and their weights.
struct Taps {
  SmallVector<Value, 4> positions, weights;
};

/// Linear interpolation's taps: the lower neighbour of the source
/// coordinate and the upper one (clamped to the input), weighted by their
/// distances from it; where the output has the input's size, the position
/// itself twice, weighted 1 and 0, whatever the scale factor (PyTorch's
/// compute_source_index_and_lambda).
static Taps getLinearTaps(OpBuilder &b, Location loc, Value position,
                          Value scale, bool alignCorners, Value inputSize,
                          Value outputSize) {
  Type type = scale.getType();
  Value source = getSourceCoordinate(b, loc, position, scale, alignCorners,
                                     /*clampAtZero=*/true);
  Value lowerInt = arith::FPToUIOp::create(b, loc, b.getI64Type(), source);
  Value lower =
      arith::IndexCastUIOp::create(b, loc, b.getIndexType(), lowerInt);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value upper =
      arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, lower, one),
                             arith::SubIOp::create(b, loc, inputSize, one));
  Value upperWeight = arith::SubFOp::create(
      b, loc, source, arith::UIToFPOp::create(b, loc, type, lowerInt));
  std::optional<int64_t> in = getConstantIntValue(inputSize);
  std::optional<int64_t> out = getConstantIntValue(outputSize);
  if (in && out && *in == *out)
    return {{position, position},
            {makeFloat(b, loc, type, 1.0), makeFloat(b, loc, type, 0.0)}};
  if (!in || !out) {
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       inputSize, outputSize);
    lower = arith::SelectOp::create(b, loc, same, position, lower);
    upper = arith::SelectOp::create(b, loc, same, position, upper);
    upperWeight = arith::SelectOp::create(
        b, loc, same, makeFloat(b, loc, type, 0.0), upperWeight);
  }
  Value lowerWeight =
      arith::SubFOp::create(b, loc, makeFloat(b, loc, type, 1.0), upperWeight);
  return {{lower, upper}, {lowerWeight, upperWeight}};
}

/// Bicubic interpolation's taps: the four positions around the source
/// coordinate's floor, from one before it to two after, each clamped to
/// the input, with Keys' weights (PyTorch's bicubic upsampling).
static Taps getCubicTaps(OpBuilder &b, Location loc, Value position,
                         Value scale, bool alignCorners, Value inputSize) {
  Value source = getSourceCoordinate(b, loc, position, scale, alignCorners,
                                     /*clampAtZero=*/false);
  Value floor = math::FloorOp::create(b, loc, source);
  Value base = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::FPToSIOp::create(b, loc, b.getI64Type(), floor));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::SubIOp::create(b, loc, inputSize,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Taps taps;
  for (int64_t offset = -1; offset <= 2; ++offset) {
    Value at = arith::AddIOp::create(
        b, loc, base, arith::ConstantIndexOp::create(b, loc, offset));
    taps.positions.push_back(arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, at, zero), last));
  }
  taps.weights =
      buildCubicWeights(b, loc, arith::SubFOp::create(b, loc, source, floor));
  return taps;
}

/// Σ_i weight_i · value_i over the taps of spatial dimension `dim`, each
/// value the same sum over the next dimension's taps, or the input where
/// all are chosen: the first spatial dimension outermost, each sum from
/// its first tap, as PyTorch's kernels nest them.
static Value blendTaps(OpBuilder &b, Location loc, ArrayRef<Taps> taps,
                       size_t dim, SmallVectorImpl<Value> &indices,
                       function_ref<Value(ValueRange)> load) {
  if (dim == taps.size())
    return load(indices);
  Value sum;
  for (auto [position, weight] :
       llvm::zip_equal(taps[dim].positions, taps[dim].weights)) {
    indices[2 + dim] = position;
    Value term = arith::MulFOp::create(
        b, loc, blendTaps(b, loc, taps, dim + 1, indices, load), weight);
    sum = sum ? arith::AddFOp::create(b, loc, sum, term).getResult() : term;
  }
  return sum;
}

/// fx.upsample_linear1d, fx.upsample_bilinear2d, fx.upsample_trilinear3d
/// and fx.upsample_bicubic2d: each output position blends the taps of
/// every spatial dimension (two neighbours, or four for bicubic).
template <typename OpTy, bool isCubic>
struct UpsampleInterpolationLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType type = op.getType();
    Type dtype = type.getElementType();
    Type computeType = getComputeDtype(dtype, /*computeInF32=*/true);
    bool alignCorners = op.getAlignCorners();
    std::optional<ArrayRef<double>> factors;
    if (auto attr = op.getScaleFactorsAttr())
      factors = attr.asArrayRef();
    if (!hasResultSizes(op, type, factors))
      return rewriter.notifyMatchFailure(op, "a dynamic size and no factor");
    SpatialSizes sizes =
        getSpatialSizes(rewriter, loc, op, input, type, factors);
    SmallVector<Value, 3> scales = getSamplingScales(
        rewriter, loc, sizes, factors, alignCorners, computeType);
    Value result = buildGeneratorNode(
        rewriter, loc, type, getResultSizes(rewriter, loc, input, type, sizes),
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Taps, 3> taps;
          for (auto [dim, scale, inputSize, outputSize] :
               llvm::enumerate(scales, sizes.input, sizes.result)) {
            Value at = ivs[2 + dim];
            taps.push_back(
                isCubic
                    ? getCubicTaps(b, loc, at, scale, alignCorners, inputSize)
                    : getLinearTaps(b, loc, at, scale, alignCorners, inputSize,
                                    outputSize));
          }
          SmallVector<Value> indices(ivs);
          Value value = blendTaps(b, loc, taps, 0, indices, [&](ValueRange at) {
            return convertScalar(b, loc,
                                 loop::LoadOp::create(b, loc, input, at), dtype,
                                 computeType);
          });
          return convertScalar(b, loc, value, computeType, dtype);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// fx.upsample_nearest1d/2d/3d: output position o reads min(floor(o *
/// scale), size - 1), with PyTorch's scale (1 / scale_factor when given,
/// else input size / output size), computed in f32 as PyTorch does.
template <typename OpTy>
struct UpsampleNearestLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op.getInput();
    RankedTensorType type = op.getType();
    std::optional<ArrayRef<double>> factors;
    if (auto attr = op.getScaleFactorsAttr())
      factors = attr.asArrayRef();
    if (!hasResultSizes(op, type, factors))
      return rewriter.notifyMatchFailure(op, "a dynamic size and no factor");
    SpatialSizes sizes =
        getSpatialSizes(rewriter, loc, op, source, type, factors);
    SmallVector<Value, 3> scales =
        getSamplingScales(rewriter, loc, sizes, factors,
                          /*alignCorners=*/false, rewriter.getF32Type());
    rewriter.replaceOp(
        op,
        buildIndexMapNode(
            rewriter, loc, source, type,
            getResultSizes(rewriter, loc, source, type, sizes),
            [&](OpBuilder &b, Location loc, ValueRange ivs) {
              SmallVector<Value> indices(ivs);
              Value one = arith::ConstantIndexOp::create(b, loc, 1);
              for (auto [dim, scale, inputSize] :
                   llvm::enumerate(scales, sizes.input)) {
                Value scaled = arith::MulFOp::create(
                    b, loc, sizeToFloat(b, loc, ivs[2 + dim], scale.getType()),
                    scale);
                Value index = arith::IndexCastUIOp::create(
                    b, loc, b.getIndexType(),
                    arith::FPToUIOp::create(b, loc, b.getI64Type(), scaled));
                indices[2 + dim] = arith::MinUIOp::create(
                    b, loc, index,
                    arith::SubIOp::create(b, loc, inputSize, one));
              }
              return indices;
            }));
    return success();
  }
};

/// Reflects coordinate `at` about the bounds `low` and `low + span` until
/// it lies between them, as PyTorch's grid sampler does (0 for an empty
/// span).
static Value reflectCoordinate(OpBuilder &b, Location loc, Value at, double low,
                               Value span) {
  Type type = at.getType();
  auto constant = [&](double value) { return makeFloat(b, loc, type, value); };
  Value distance = math::AbsFOp::create(
      b, loc, arith::SubFOp::create(b, loc, at, constant(low)));
  Value extra = arith::RemFOp::create(b, loc, distance, span);
  Value flips = math::FloorOp::create(
      b, loc, arith::DivFOp::create(b, loc, distance, span));
  Value halfFlips = math::FloorOp::create(
      b, loc, arith::MulFOp::create(b, loc, flips, constant(0.5)));
  Value even = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, flips,
      arith::MulFOp::create(b, loc, halfFlips, constant(2.0)));
  Value reflected = arith::SelectOp::create(
      b, loc, even, arith::AddFOp::create(b, loc, extra, constant(low)),
      arith::AddFOp::create(b, loc, arith::SubFOp::create(b, loc, span, extra),
                            constant(low)));
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, span,
                                      constant(0.0));
  return arith::SelectOp::create(b, loc, empty, constant(0.0), reflected);
}

/// Lowers fx.grid_sampler_2d with bilinear or nearest interpolation and
/// zeros, border or reflection padding, as PyTorch's kernels compute it: a
/// grid point (x, y) in [-1, 1] maps to ((x + 1) / 2)·(W - 1) with aligned
/// corners, else ((x + 1)·W - 1) / 2; border padding clamps it into the
/// input, reflection padding reflects it about the input's edges (its
/// corner pixels' centres when aligned, else their outer edges) and then
/// clamps; bilinear blends the four neighbours, nearest takes the one at
/// the coordinates rounded half to even, bicubic convolves the 4x4
/// neighbours (each padded on its own); taps outside the input read zero.
struct GridSamplerLowering : OpRewritePattern<fx::GridSampler2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::GridSampler2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput(), grid = op.getGrid();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType gridType = op.getGrid().getType();
    RankedTensorType type = op.getType();
    int64_t interpolation = static_cast<int64_t>(op.getInterpolationMode());
    int64_t padding = static_cast<int64_t>(op.getPaddingMode());
    if (interpolation > 2 || padding > 2)
      return rewriter.notifyMatchFailure(op,
                                         "unknown interpolation or padding");
    // Any size may be dynamic: the input's height and width enter the
    // coordinate maths as floats.
    if (inputType.getRank() != 4)
      return rewriter.notifyMatchFailure(op, "not a 4-d input");
    bool alignCorners = op.getAlignCorners();
    bool border = padding == 1, reflection = padding == 2;
    Type dtype = type.getElementType();
    Type computeType = getComputeDtype(dtype, /*computeInF32=*/true);
    Value heightIndex = getDimSize(rewriter, loc, input, 2);
    Value widthIndex = getDimSize(rewriter, loc, input, 3);
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(type, [&](int64_t dim) {
          // (N, C) from the input, (H, W) from the grid's (N, H, W, 2).
          return dim < 2 ? getDimSize(rewriter, loc, input, dim)
                         : getDimSize(rewriter, loc, grid, dim - 1);
        });
    Value result = buildGeneratorNode(
        rewriter, loc, type, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value n = ivs[0], c = ivs[1];
          auto constant = [&](double value) {
            return makeFloat(b, loc, computeType, value);
          };
          // A dimension of the input: its size and last coordinate as floats.
          struct Extent {
            Value size, last;
          };
          auto extentOf = [&](Value index) -> Extent {
            Value size = sizeToFloat(b, loc, index, computeType);
            return {size, arith::SubFOp::create(b, loc, size, constant(1.0))};
          };
          Extent height = extentOf(heightIndex), width = extentOf(widthIndex);
          // The unpadded input coordinate along dimension `size` for grid
          // component `component`.
          auto unnormalized = [&](int64_t component, Extent size) -> Value {
            Value g = convertScalar(
                b, loc,
                loop::LoadOp::create(b, loc, grid,
                                     ValueRange{n, ivs[2], ivs[3],
                                                arith::ConstantIndexOp::create(
                                                    b, loc, component)}),
                gridType.getElementType(), computeType);
            Value shifted = arith::AddFOp::create(b, loc, g, constant(1.0));
            return alignCorners ? arith::MulFOp::create(
                                      b, loc, shifted,
                                      arith::MulFOp::create(b, loc, size.last,
                                                            constant(0.5)))
                                      .getResult()
                                : arith::DivFOp::create(
                                      b, loc,
                                      arith::SubFOp::create(
                                          b, loc,
                                          arith::MulFOp::create(b, loc, shifted,
                                                                size.size),
                                          constant(1.0)),
                                      constant(2.0))
                                      .getResult();
          };
          // Coordinate `at` clamped into [0, size - 1].
          auto clamp = [&](Value at, Extent size) -> Value {
            return arith::MinimumFOp::create(
                b, loc, arith::MaximumFOp::create(b, loc, at, constant(0.0)),
                size.last);
          };
          // Coordinate `at` with the padding mode applied.
          auto padded = [&](Value at, Extent size) -> Value {
            if (reflection)
              at = alignCorners
                       ? reflectCoordinate(b, loc, at, 0.0, size.last)
                       : reflectCoordinate(b, loc, at, -0.5, size.size);
            if (border || reflection)
              at = clamp(at, size);
            return at;
          };
          Value x = unnormalized(0, width), y = unnormalized(1, height);
          // The input at integral coordinates (yi, xi), or zero outside.
          auto tap = [&](Value yi, Value xi) -> Value {
            auto inside = [&](Value at, Extent size) {
              return arith::AndIOp::create(
                  b, loc,
                  arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, at,
                                        constant(0.0)),
                  arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, at,
                                        size.last));
            };
            auto toIndex = [&](Value at, Extent size) -> Value {
              return arith::IndexCastOp::create(
                  b, loc, b.getIndexType(),
                  arith::FPToSIOp::create(b, loc, b.getI64Type(),
                                          clamp(at, size)));
            };
            Value element = convertScalar(
                b, loc,
                loop::LoadOp::create(
                    b, loc, input,
                    ValueRange{n, c, toIndex(yi, height), toIndex(xi, width)}),
                inputType.getElementType(), computeType);
            Value valid = arith::AndIOp::create(b, loc, inside(yi, height),
                                                inside(xi, width));
            return arith::SelectOp::create(b, loc, valid, element,
                                           constant(0.0));
          };
          Value value;
          if (interpolation == 2) {
            // Bicubic: cubic convolution (A = -0.75) of 4x4 taps around
            // (y, x), each tap padded on its own.
            Value x0 = math::FloorOp::create(b, loc, x);
            Value y0 = math::FloorOp::create(b, loc, y);
            Value tx = arith::SubFOp::create(b, loc, x, x0);
            Value ty = arith::SubFOp::create(b, loc, y, y0);
            auto interpolate = [&](ArrayRef<Value> points, Value t) -> Value {
              SmallVector<Value, 4> weights = buildCubicWeights(b, loc, t);
              Value sum = constant(0.0);
              for (auto [point, weight] : llvm::zip_equal(points, weights))
                sum = arith::AddFOp::create(
                    b, loc, sum, arith::MulFOp::create(b, loc, point, weight));
              return sum;
            };
            SmallVector<Value, 4> rows;
            for (int64_t i = -1; i <= 2; ++i) {
              Value yi = padded(arith::AddFOp::create(b, loc, y0, constant(i)),
                                height);
              SmallVector<Value, 4> points;
              for (int64_t j = -1; j <= 2; ++j)
                points.push_back(tap(
                    yi, padded(arith::AddFOp::create(b, loc, x0, constant(j)),
                               width)));
              rows.push_back(interpolate(points, tx));
            }
            value = interpolate(rows, ty);
          } else if (interpolation == 1) {
            x = padded(x, width);
            y = padded(y, height);
            value = tap(math::RoundEvenOp::create(b, loc, y),
                        math::RoundEvenOp::create(b, loc, x));
          } else {
            x = padded(x, width);
            y = padded(y, height);
            Value x0 = math::FloorOp::create(b, loc, x);
            Value y0 = math::FloorOp::create(b, loc, y);
            Value x1 = arith::AddFOp::create(b, loc, x0, constant(1.0));
            Value y1 = arith::AddFOp::create(b, loc, y0, constant(1.0));
            Value east = arith::SubFOp::create(b, loc, x, x0);
            Value west = arith::SubFOp::create(b, loc, x1, x);
            Value south = arith::SubFOp::create(b, loc, y, y0);
            Value north = arith::SubFOp::create(b, loc, y1, y);
            auto weighted = [&](Value yi, Value xi, Value wy, Value wx) {
              return arith::MulFOp::create(
                  b, loc, tap(yi, xi), arith::MulFOp::create(b, loc, wy, wx));
            };
            value = arith::AddFOp::create(
                b, loc,
                arith::AddFOp::create(b, loc, weighted(y0, x0, north, west),
                                      weighted(y0, x1, north, east)),
                arith::AddFOp::create(b, loc, weighted(y1, x0, south, west),
                                      weighted(y1, x1, south, east)));
          }
          return convertScalar(b, loc, value, computeType, dtype);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void fxtoloop::populateInterpolationLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<UpsampleNearestLowering<fx::UpsampleNearest1dOp>,
               UpsampleNearestLowering<fx::UpsampleNearest2dOp>,
               UpsampleNearestLowering<fx::UpsampleNearest3dOp>,
               UpsampleInterpolationLowering<fx::UpsampleLinear1dOp, false>,
               UpsampleInterpolationLowering<fx::UpsampleBilinear2dOp, false>,
               UpsampleInterpolationLowering<fx::UpsampleTrilinear3dOp, false>,
               UpsampleInterpolationLowering<fx::UpsampleBicubic2dOp, true>,
               GridSamplerLowering>(patterns.getContext());
}
