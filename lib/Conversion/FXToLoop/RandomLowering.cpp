//===- RandomLowering.cpp - Random fx ops as counter-based draws ----------===//
//
// Part of Kiln. A random op becomes a node whose element at row-major index i
// comes from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC'11) keyed by the run-time seed, with the counter (i, the
// op's offset). An element's value depends on nothing else: nodes that draw
// fuse, inline and recompute freely, in any order, on any target, and the
// CPU and CUDA artifacts of a graph draw the same numbers for the same seed.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

// Philox4x32's multipliers and key increments (the Weyl sequence).
constexpr uint64_t kPhiloxMultiplier0 = 0xD2511F53;
constexpr uint64_t kPhiloxMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9;
constexpr uint32_t kPhiloxWeyl1 = 0xBB67AE85;
constexpr int kPhiloxRounds = 10;
constexpr double kPi = 3.141592653589793;

using Words = std::array<Value, 4>;

/// Builds the scalar arithmetic of one element's draw.
class PhiloxBuilder {
public:
  PhiloxBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// The four words that Philox4x32-10 draws for the element at `ivs` of a
  /// tensor with `sizes`, keyed by the si64 `seed` tensor, in stream
  /// `offset`.
  Words draw(Value seed, int64_t offset, ArrayRef<Value> sizes,
             ValueRange ivs) {
    Value linear = ivs.empty()
                       ? Value(arith::ConstantIndexOp::create(b, loc, 0))
                       : ivs.front();
    for (auto [size, iv] : llvm::zip(sizes.drop_front(), ivs.drop_front()))
      linear = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, linear, size), iv);
    Value index = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), linear);
    Value key = loop::LoadOp::create(b, loc, seed, ValueRange{});
    Words counter = {low(index), high(index),
                     constant32(static_cast<uint64_t>(offset)),
                     constant32(static_cast<uint64_t>(offset) >> 32)};
    std::array<Value, 2> keys = {low(key), high(key)};
    for (int round = 0; round < kPhiloxRounds; ++round) {
      if (round > 0) {
        keys[0] =
            arith::AddIOp::create(b, loc, keys[0], constant32(kPhiloxWeyl0));
        keys[1] =
            arith::AddIOp::create(b, loc, keys[1], constant32(kPhiloxWeyl1));
      }
      auto [high0, low0] = multiply(counter[0], kPhiloxMultiplier0);
      auto [high1, low1] = multiply(counter[2], kPhiloxMultiplier1);
      counter = {exclusiveOr(high1, counter[1], keys[0]), low1,
                 exclusiveOr(high0, counter[3], keys[1]), low0};
    }
    return counter;
  }

  /// A uniform sample in [0, 1) of float `type` from `word` (and `next`
  /// for f64), with as many random bits as `type`'s significand has: every
  /// sample is exact in `type`, so none rounds up to 1. f16 and bf16 samples
  /// come as f32 values.
  Value uniform(FloatType type, Value word, Value next) {
    if (type.isF64()) {
      Type i64 = b.getI64Type();
      Value bits = arith::OrIOp::create(
          b, loc,
          arith::ShLIOp::create(b, loc,
                                arith::ExtUIOp::create(b, loc, i64, next),
                                constant64(32)),
          arith::ExtUIOp::create(b, loc, i64, word));
      return scaledBits(bits, 53, type);
    }
    return scaledBits(word, type.getFPMantissaWidth(), b.getF32Type());
  }

  /// A standard normal sample of float `type` (f32 for f16 and bf16) from
  /// `words`, by the Box-Muller transform.
  Value normal(FloatType type, const Words &words) {
    bool wide = type.isF64();
    FloatType computeType = wide ? type : b.getF32Type();
    FloatType bitsType = wide ? type : b.getF32Type();
    Value one = makeFloat(b, loc, computeType, 1.0);
    // 1 - u is in (0, 1]: its logarithm is finite.
    Value u1 = arith::SubFOp::create(b, loc, one,
                                     uniform(bitsType, words[0], words[1]));
    Value u2 = wide ? uniform(bitsType, words[2], words[3])
                    : uniform(bitsType, words[1], words[1]);
    Value radius = math::SqrtOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, makeFloat(b, loc, computeType, -2.0),
                              math::LogOp::create(b, loc, u1)));
    Value angle = arith::MulFOp::create(
        b, loc, makeFloat(b, loc, computeType, 2.0 * kPi), u2);
    return arith::MulFOp::create(b, loc, radius,
                                 math::CosOp::create(b, loc, angle));
  }

  /// Whether the draw `words` falls below probability `p`, by a 24-bit
  /// uniform sample, as PyTorch's CUDA kernels compare.
  Value below(const Words &words, double p) {
    Value sample = uniform(b.getF32Type(), words[0], words[0]);
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, sample,
                                 makeFloat(b, loc, b.getF32Type(), p));
  }

private:
  Value constant32(uint64_t value) {
    return arith::ConstantOp::create(
        b, loc,
        b.getIntegerAttr(b.getI32Type(), APInt(32, value, false, true)));
  }
  Value constant64(uint64_t value) {
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(b.getI64Type(), APInt(64, value)));
  }
  Value low(Value value) {
    return arith::TruncIOp::create(b, loc, b.getI32Type(), value);
  }
  Value high(Value value) {
    return low(arith::ShRUIOp::create(b, loc, value, constant64(32)));
  }
  Value exclusiveOr(Value a, Value c, Value d) {
    return arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, a, c),
                                 d);
  }
  /// The high and low words of the 64-bit product `word * multiplier`.
  std::pair<Value, Value> multiply(Value word, uint64_t multiplier) {
    Value product = arith::MulIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), word),
        constant64(multiplier));
    return {high(product), low(product)};
  }
  /// The top `digits` bits of `bits` as a fraction of 2^digits, in `type`.
  Value scaledBits(Value bits, unsigned digits, FloatType type) {
    unsigned width = bits.getType().getIntOrFloatBitWidth();
    Value shift = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(bits.getType(), width - digits));
    Value top = arith::ShRUIOp::create(b, loc, bits, shift);
    Value asFloat = arith::UIToFPOp::create(b, loc, type, top);
    return arith::MulFOp::create(
        b, loc, asFloat, makeFloat(b, loc, type, std::ldexp(1.0, -digits)));
  }

  OpBuilder &b;
  Location loc;
};

/// The sizes of `tensor`'s dimensions as index values.
static SmallVector<Value> getSizes(OpBuilder &b, Location loc, Value tensor) {
  SmallVector<Value> sizes;
  for (int64_t dim = 0, e = cast<RankedTensorType>(tensor.getType()).getRank();
       dim < e; ++dim)
    sizes.push_back(getDimSize(b, loc, tensor, dim));
  return sizes;
}

/// Lowers fx.rand and fx.randn: uniform samples in [0, 1) and standard
/// normal ones (Box-Muller) of the result's dtype.
template <typename OpTy> struct RandomLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    FailureOr<SmallVector<Value>> dynamicSizes =
        getNamedDynamicSizes(rewriter, loc, op, type);
    if (failed(dynamicSizes))
      return rewriter.notifyMatchFailure(op, "unnamed dynamic sizes");
    auto dtype = cast<FloatType>(type.getElementType());
    SmallVector<Value> sizes;
    auto dynamicSize = dynamicSizes->begin();
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      sizes.push_back(type.isDynamicDim(dim)
                          ? *dynamicSize++
                          : arith::ConstantIndexOp::create(rewriter, loc,
                                                           type.getDimSize(dim))
                                .getResult());
    int64_t offset = static_cast<int64_t>(op.getOffset());
    Value seed = op.getSeed();
    rewriter.replaceOp(
        op, buildGeneratorNode(
                rewriter, loc, type, *dynamicSizes,
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  PhiloxBuilder philox(b, loc);
                  Words words = philox.draw(seed, offset, sizes, ivs);
                  Value sample =
                      std::is_same_v<OpTy, fx::RandnOp>
                          ? philox.normal(dtype, words)
                          : philox.uniform(dtype, words[0], words[1]);
                  auto sampleType = cast<FloatType>(sample.getType());
                  return convertScalar(b, loc, sample, sampleType, dtype);
                }));
    return success();
  }
};

/// Lowers fx.bernoulli_p: 1 where the draw falls below `p`, else 0.
struct BernoulliLowering : OpRewritePattern<fx::BernoulliPOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::BernoulliPOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    SmallVector<Value> sizes = getSizes(rewriter, loc, op.getSelf());
    double p = op.getP().convertToDouble();
    int64_t offset = static_cast<int64_t>(op.getOffset());
    Value seed = op.getSeed();
    Type dtype = type.getElementType();
    rewriter.replaceOp(
        op,
        buildGeneratorNode(
            rewriter, loc, type,
            collectDynamicSizes(type, [&](int64_t dim) { return sizes[dim]; }),
            [&](OpBuilder &b, Location loc, ValueRange ivs) {
              PhiloxBuilder philox(b, loc);
              Value hit =
                  philox.below(philox.draw(seed, offset, sizes, ivs), p);
              return arith::SelectOp::create(b, loc, hit,
                                             makeFloat(b, loc, dtype, 1.0),
                                             makeFloat(b, loc, dtype, 0.0));
            }));
    return success();
  }
};

/// Lowers fx.native_dropout as ATen's kernels compute it: the mask keeps an
/// element where the draw falls below 1 - p, and the output is
/// `input * mask * (1 / (1 - p))` (so a NaN input stays NaN where dropped),
/// in f32 for f16 and bf16.
/// Without `train`, ATen's kernels train; with train = false or p = 0 the
/// output is the input and the mask all true; with p = 1 all is dropped.
struct NativeDropoutLowering : OpRewritePattern<fx::NativeDropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::NativeDropoutOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto maskType = cast<RankedTensorType>(op.getMask().getType());
    SmallVector<Value> sizes = getSizes(rewriter, loc, input);
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(inputType, [&](int64_t dim) { return sizes[dim]; });
    double p = op.getP().convertToDouble();
    bool dropping = op.getTrain().value_or(true) && p != 0.0;

    if (!dropping || p == 1.0) {
      Value mask = buildGeneratorNode(
          rewriter, loc, maskType, dynamicSizes,
          [&](OpBuilder &b, Location loc, ValueRange) -> Value {
            return arith::ConstantOp::create(b, loc, b.getBoolAttr(!dropping));
          });
      Value output = input;
      if (dropping) {
        output = buildGeneratorNode(
            rewriter, loc, inputType, dynamicSizes,
            [&](OpBuilder &b, Location loc, ValueRange) {
              return makeFloat(b, loc, inputType.getElementType(), 0.0);
            });
      }
      rewriter.replaceOp(op, {output, mask});
      return success();
    }

    // The output draws again rather than read the mask: the mask is often
    // dead (inference) or only saved for the backward graph, and a draw
    // costs less time than reading a byte per element.
    int64_t offset = static_cast<int64_t>(op.getOffset());
    Value seed = op.getSeed();
    Value mask = buildGeneratorNode(
        rewriter, loc, maskType, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          PhiloxBuilder philox(b, loc);
          return philox.below(philox.draw(seed, offset, sizes, ivs), 1.0 - p);
        });
    Type dtype = inputType.getElementType();
    Type computeDtype =
        isa<Float64Type, Float32Type>(dtype) ? dtype : rewriter.getF32Type();
    double scale = 1.0 / (1.0 - p);
    Value output = buildGeneratorNode(
        rewriter, loc, inputType, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          PhiloxBuilder philox(b, loc);
          Value keep =
              philox.below(philox.draw(seed, offset, sizes, ivs), 1.0 - p);
          Value x =
              convertScalar(b, loc, loop::LoadOp::create(b, loc, input, ivs),
                            dtype, computeDtype);
          Value kept = arith::SelectOp::create(
              b, loc, keep, makeFloat(b, loc, computeDtype, 1.0),
              makeFloat(b, loc, computeDtype, 0.0));
          Value scaled = arith::MulFOp::create(
              b, loc, arith::MulFOp::create(b, loc, x, kept),
              makeFloat(b, loc, computeDtype, scale));
          return convertScalar(b, loc, scaled, computeDtype, dtype);
        });
    rewriter.replaceOp(op, {output, mask});
    return success();
  }
};

/// Lowers fx.randperm to the order that sorts n uniform f64 draws of its
/// seed and stream (fx.rand, then fx.sort's indices, which the lowerings of
/// those ops take further): every order of distinct draws is equally
/// likely, and draws tie with probability about n² / 2⁵⁴ (a tie goes to the
/// lower index). Up to the sort lowering's kMaxSortLength elements.
struct RandpermLowering : OpRewritePattern<fx::RandpermOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::RandpermOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    if (type.getRank() != 1 || type.isDynamicDim(0) ||
        type.getDimSize(0) > kMaxSortLength)
      return rewriter.notifyMatchFailure(op, "dynamic or too long");
    Location loc = op.getLoc();
    Type f64 = rewriter.getF64Type();
    auto keysType = type.clone(f64);
    Value keys = fx::RandOp::create(
        rewriter, loc, TypeRange{keysType}, ValueRange{op.getSeed()},
        {rewriter.getNamedAttr("dtype", TypeAttr::get(f64)),
         rewriter.getNamedAttr("offset", op.getOffsetAttr())});
    auto indicesType = type.clone(
        IntegerType::get(rewriter.getContext(), 64, IntegerType::Signed));
    auto sort = fx::SortOp::create(
        rewriter, loc, TypeRange{keysType, indicesType}, ValueRange{keys},
        {rewriter.getNamedAttr("dim", rewriter.getI64IntegerAttr(0))});
    Value permutation = sort.getIndices();
    if (indicesType != type)
      permutation = fx::ToCopyOp::create(
          rewriter, loc, TypeRange{type}, ValueRange{permutation},
          {rewriter.getNamedAttr("dtype",
                                 TypeAttr::get(type.getElementType()))});
    rewriter.replaceOp(op, permutation);
    return success();
  }
};

} // namespace

void fxtoloop::populateRandomLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<RandomLowering<fx::RandOp>, RandomLowering<fx::RandnOp>,
               BernoulliLowering, NativeDropoutLowering, RandpermLowering>(ctx);
}
