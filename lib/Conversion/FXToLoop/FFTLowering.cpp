//===- FFTLowering.cpp - Discrete Fourier transforms ----------------------===//
//
// Part of Kiln. fx.fft_r2c, fx.fft_c2r and fx.fft_c2c lower to the
// transforms' definitions: each frequency (or sample) is a loop.reduce over
// the transformed dimensions of the input times the twiddle factor at that
// position (complex-to-complex transforms: one dimension at a time). Complex
// values appear only where they are read and written (complex.re, complex.im,
// complex.create); the sums are real. That costs n operations per element where
// an FFT needs log n: Kiln sums transforms of at most kMaxTransformElements
// elements (the short signals of a spectral layer), and the sums fuse like any
// reduction. Larger transforms run one dimension at a time on the signal as
// complex numbers: radix-2 butterflies along powers of two (the long
// convolutions of Hyena-style layers, the grids of Fourier neural operators; a
// node that reads the signal in bit-reversed order, then log2(n) butterfly
// nodes), direct sums along other lengths up to kMaxTransformElements, and
// Bluestein's chirp transform along longer ones (a convolution through
// power-of-two FFTs). Other transforms are not lowered.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The most elements one transform sums over (the product of the transformed
/// sizes): each result element reads that many.
constexpr int64_t kMaxTransformElements = 4096;

/// The longest signal a radix-2 FFT transforms (log2(n) + 1 nodes).
constexpr int64_t kMaxRadix2Length = int64_t(1) << 24;

/// One dimension's share of a twiddle factor's phase: frequency `frequency`
/// at position `position` of a signal of `length`.
struct PhaseTerm {
  Value frequency, position;
  int64_t length;
};

/// The transformed dimensions of a rank-`rank` tensor, non-negative, in the
/// op's order (its last is the one a one-sided transform halves); none if
/// one repeats or is out of range.
std::optional<SmallVector<int64_t>> getTransformDims(ArrayRef<int64_t> dims,
                                                     int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t dim : dims) {
    if (dim < 0)
      dim += rank;
    if (dim < 0 || dim >= rank || llvm::is_contained(result, dim))
      return std::nullopt;
    result.push_back(dim);
  }
  if (result.empty())
    return std::nullopt;
  return result;
}

/// The phase 2π Σ (k·n mod N) / N of `terms`, in [0, 2π), in `dtype`: the
/// products are reduced exactly in integers, so the angle stays accurate
/// for any position.
Value buildPhase(OpBuilder &b, Location loc, ArrayRef<PhaseTerm> terms,
                 Type dtype) {
  Value turns;
  for (const PhaseTerm &term : terms) {
    Value product = arith::RemUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, term.frequency, term.position),
        arith::ConstantIndexOp::create(b, loc, term.length));
    Value fraction = arith::DivFOp::create(
        b, loc, sizeToFloat(b, loc, product, dtype),
        makeFloat(b, loc, dtype, static_cast<double>(term.length)));
    turns = turns ? arith::AddFOp::create(b, loc, turns, fraction).getResult()
                  : fraction;
  }
  if (terms.size() > 1)
    turns = arith::SubFOp::create(b, loc, turns,
                                  math::FloorOp::create(b, loc, turns));
  return arith::MulFOp::create(b, loc, turns,
                               makeFloat(b, loc, dtype, 2 * llvm::numbers::pi));
}

/// The factor `normalization` (ATen's: 0 none, 1 by the square root of the
/// signal's size, 2 by its size) scales a transform of `size` elements by;
/// a match failure of `op` for other values.
FailureOr<double> getNormalizationScale(PatternRewriter &rewriter,
                                        Operation *op, int64_t normalization,
                                        int64_t size) {
  switch (normalization) {
  case 0:
    return 1.0;
  case 1:
    return 1.0 / std::sqrt(static_cast<double>(size));
  case 2:
    return 1.0 / static_cast<double>(size);
  default:
    return rewriter.notifyMatchFailure(op, "unknown normalization");
  }
}

/// The dynamic sizes of a transform's result: those of its input `self`
/// (the transformed dimensions are static).
SmallVector<Value> getTransformDynamicSizes(OpBuilder &b, Location loc,
                                            RankedTensorType resultType,
                                            Value self) {
  return collectDynamicSizes(
      resultType, [&](int64_t dim) { return getDimSize(b, loc, self, dim); });
}

/// The shortest dimension transformed by radix-2 butterflies (log2(n)
/// passes) rather than a direct sum (one pass of n terms per element).
constexpr int64_t kMinRadix2Length = 64;

/// The longest signal of a length other than a power of two that
/// Bluestein's transform handles: its power-of-two FFTs, of at least
/// 2n - 1 elements, stay within kMaxRadix2Length.
constexpr int64_t kMaxBluesteinLength = kMaxRadix2Length / 2;

/// Whether one dimension of `length` can be transformed on its own: by
/// radix-2 butterflies (a power of two), a direct sum (short enough) or
/// Bluestein's transform.
bool isTransformableAlone(int64_t length) {
  return length > 0 &&
         ((llvm::isPowerOf2_64(length) && length <= kMaxRadix2Length) ||
          length <= kMaxBluesteinLength);
}

/// Whether a transform over the transformed lengths `lengths` runs one
/// dimension at a time: too many elements to sum at once, each dimension
/// transformable alone.
bool isSeparableTransform(ArrayRef<int64_t> lengths) {
  int64_t elements = 1;
  for (int64_t length : lengths) {
    if (!isTransformableAlone(length))
      return false;
    elements = std::min(elements * length, kMaxRadix2Length + 1);
  }
  return elements > kMaxTransformElements;
}

/// `index` with its low `bits` bits in reverse order.
Value reverseBits(OpBuilder &b, Location loc, Value index, int64_t bits) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value reversed = constant(0);
  for (int64_t bit = 0; bit < bits; ++bit) {
    Value set = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, index, constant(bit)),
        constant(1));
    reversed = arith::OrIOp::create(
        b, loc, reversed,
        arith::ShLIOp::create(b, loc, set, constant(bits - 1 - bit)));
  }
  return reversed;
}

/// The unnormalised DFT, X[k] = Σ_n x[n] e^{∓2πi kn/N} (+ with `inverse`),
/// along dimension `dim` of `type` (complex; N static, a power of two) of
/// the signal whose element at `indices` `signal` computes: a radix-2
/// decimation in time. The first node reads the signal in bit-reversed
/// order; the node of each butterfly span h = 1, 2, 4, ... < N combines
/// elements j and j + h of each group of 2h as a ± w·b with w =
/// e^{∓2πi j / 2h}.
Value buildRadix2Transform(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes,
    int64_t dim, bool inverse,
    function_ref<Value(OpBuilder &, Location, ValueRange)> signal) {
  int64_t length = type.getDimSize(dim);
  auto complexType = cast<ComplexType>(type.getElementType());
  Type dtype = complexType.getElementType();
  Value stage = buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        SmallVector<Value> indices(ivs);
        indices[dim] = reverseBits(b, loc, ivs[dim], llvm::Log2_64(length));
        return signal(b, loc, indices);
      });
  for (int64_t span = 1; span < length; span *= 2) {
    Value previous = stage;
    stage = buildGeneratorNode(
        b, loc, type, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          auto constant = [&](int64_t value) -> Value {
            return arith::ConstantIndexOp::create(b, loc, value);
          };
          Value index = ivs[dim];
          Value offset =
              arith::AndIOp::create(b, loc, index, constant(span - 1));
          Value upper = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ne,
              arith::AndIOp::create(b, loc, index, constant(span)),
              constant(0));
          Value first = arith::SubIOp::create(
              b, loc, index,
              arith::AndIOp::create(b, loc, index, constant(2 * span - 1)));
          first = arith::AddIOp::create(b, loc, first, offset);
          auto load = [&](Value position) -> Value {
            SmallVector<Value> indices(ivs);
            indices[dim] = position;
            return loop::LoadOp::create(b, loc, previous, indices);
          };
          Value a = load(first);
          Value other =
              load(arith::AddIOp::create(b, loc, first, constant(span)));
          // w = e^{∓2πi j / 2h}: cos θ ∓ i sin θ with θ = 2π j / 2h.
          Value angle = arith::MulFOp::create(
              b, loc, sizeToFloat(b, loc, offset, dtype),
              makeFloat(b, loc, dtype, llvm::numbers::pi / span));
          Value cos = math::CosOp::create(b, loc, angle);
          Value sin = math::SinOp::create(b, loc, angle);
          if (!inverse)
            sin = arith::NegFOp::create(b, loc, sin);
          Value re = complex::ReOp::create(b, loc, other);
          Value im = complex::ImOp::create(b, loc, other);
          Value turnedRe = arith::SubFOp::create(
              b, loc, arith::MulFOp::create(b, loc, re, cos),
              arith::MulFOp::create(b, loc, im, sin));
          Value turnedIm = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, re, sin),
              arith::MulFOp::create(b, loc, im, cos));
          Value aRe = complex::ReOp::create(b, loc, a);
          Value aIm = complex::ImOp::create(b, loc, a);
          auto combine = [&](Value x, Value y) -> Value {
            return arith::SelectOp::create(b, loc, upper,
                                           arith::SubFOp::create(b, loc, x, y),
                                           arith::AddFOp::create(b, loc, x, y));
          };
          return complex::CreateOp::create(b, loc, complexType,
                                           combine(aRe, turnedRe),
                                           combine(aIm, turnedIm));
        });
  }
  return stage;
}

/// The complex product of `x` and `y` (complex<dtype>), scaled by `scale`.
Value multiplyComplex(OpBuilder &b, Location loc, Value x, Value y,
                      double scale = 1.0) {
  auto type = cast<ComplexType>(x.getType());
  Value xRe = complex::ReOp::create(b, loc, x);
  Value xIm = complex::ImOp::create(b, loc, x);
  Value yRe = complex::ReOp::create(b, loc, y);
  Value yIm = complex::ImOp::create(b, loc, y);
  Value re =
      arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, xRe, yRe),
                            arith::MulFOp::create(b, loc, xIm, yIm));
  Value im =
      arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, xRe, yIm),
                            arith::MulFOp::create(b, loc, xIm, yRe));
  if (scale != 1.0) {
    Value factor = makeFloat(b, loc, type.getElementType(), scale);
    re = arith::MulFOp::create(b, loc, re, factor);
    im = arith::MulFOp::create(b, loc, im, factor);
  }
  return complex::CreateOp::create(b, loc, type, re, im);
}

/// Bluestein's chirp e^{∓iπ k²/n} (+ with `conjugate`) at index `k` of a
/// signal of `length` n, as complex<dtype>: k² is reduced modulo 2n in
/// integers, so the phase stays accurate for long signals.
Value buildChirp(OpBuilder &b, Location loc, Value k, int64_t length,
                 bool conjugate, Type dtype) {
  // π (k² mod 2n) / n is buildPhase's 2π (k·k mod 2n) / 2n.
  Value phase = buildPhase(b, loc, {{k, k, 2 * length}}, dtype);
  Value sin = math::SinOp::create(b, loc, phase);
  return complex::CreateOp::create(
      b, loc, ComplexType::get(dtype), math::CosOp::create(b, loc, phase),
      conjugate ? sin : arith::NegFOp::create(b, loc, sin).getResult());
}

/// The unnormalised DFT along dimension `dim` of `signal` (a complex
/// tensor; `dynamicSizes` for its `?`s) of any length n by Bluestein's
/// transform: with w_k = e^{∓iπ k²/n}, jk = (j² + k² - (k - j)²) / 2
/// makes X_k = w_k Σ_j (x_j w_j) conj(w_{k-j}), a convolution, run as the
/// product of power-of-two FFTs of m >= 2n - 1 elements (zero-padded
/// x_j w_j; conj(w) at -n < l < n, wrapped modulo m), inverse-transformed.
Value buildBluesteinTransform(OpBuilder &b, Location loc, Value signal,
                              int64_t dim, bool inverse,
                              ValueRange dynamicSizes) {
  auto type = cast<RankedTensorType>(signal.getType());
  auto complexType = cast<ComplexType>(type.getElementType());
  Type dtype = complexType.getElementType();
  int64_t length = type.getDimSize(dim);
  int64_t padded = llvm::PowerOf2Ceil(2 * length - 1);
  SmallVector<int64_t> paddedShape(type.getShape());
  paddedShape[dim] = padded;
  auto paddedType = type.clone(paddedShape);
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto zero = [&](OpBuilder &b) -> Value {
    Value part = makeFloat(b, loc, dtype, 0.0);
    return complex::CreateOp::create(b, loc, complexType, part, part);
  };
  // The transform of x_j w_j, zero past the signal.
  Value weighted = buildRadix2Transform(
      b, loc, paddedType, dynamicSizes, dim, /*inverse=*/false,
      [&](OpBuilder &b, Location loc, ValueRange indices) -> Value {
        Value j = indices[dim];
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             j, constant(b, length));
        SmallVector<Value> at(indices);
        at[dim] = arith::MinUIOp::create(b, loc, j, constant(b, length - 1));
        Value x = loop::LoadOp::create(b, loc, signal, at);
        Value term = multiplyComplex(
            b, loc, x, buildChirp(b, loc, at[dim], length, inverse, dtype));
        return arith::SelectOp::create(b, loc, inside, term, zero(b));
      });
  // The transform of the kernel conj(w_l) at l and m - l for l < n.
  auto kernelType = RankedTensorType::get({padded}, complexType);
  Value kernel = buildRadix2Transform(
      b, loc, kernelType, {}, 0, /*inverse=*/false,
      [&](OpBuilder &b, Location loc, ValueRange indices) -> Value {
        Value l = indices.front();
        Value mirrored = arith::SubIOp::create(b, loc, constant(b, padded), l);
        Value distance = arith::MinUIOp::create(b, loc, l, mirrored);
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             distance, constant(b, length));
        Value chirp = buildChirp(b, loc, distance, length, !inverse, dtype);
        return arith::SelectOp::create(b, loc, inside, chirp, zero(b));
      });
  // Their product's inverse transform (unnormalised: m times the
  // convolution).
  Value convolution = buildRadix2Transform(
      b, loc, paddedType, dynamicSizes, dim, /*inverse=*/true,
      [&](OpBuilder &b, Location loc, ValueRange indices) -> Value {
        return multiplyComplex(
            b, loc, loop::LoadOp::create(b, loc, weighted, indices),
            loop::LoadOp::create(b, loc, kernel, indices[dim]));
      });
  return buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return multiplyComplex(
            b, loc, loop::LoadOp::create(b, loc, convolution, ivs),
            buildChirp(b, loc, ivs[dim], length, inverse, dtype),
            1.0 / static_cast<double>(padded));
      });
}

/// The unnormalised DFT along dimension `dim` of `signal` (a complex
/// tensor, static along `dim`; `dynamicSizes` for its `?`s), with + in
/// the exponent for `inverse`: radix-2 butterflies for a power of two of
/// at least kMinRadix2Length, else two direct sums (the real and imaginary
/// parts of Σ_n x[n] w^{kn}) and a node that pairs them.
Value buildTransformAlong(OpBuilder &b, Location loc, Value signal, int64_t dim,
                          bool inverse, ValueRange dynamicSizes) {
  auto type = cast<RankedTensorType>(signal.getType());
  auto complexType = cast<ComplexType>(type.getElementType());
  Type dtype = complexType.getElementType();
  int64_t length = type.getDimSize(dim);
  if (llvm::isPowerOf2_64(length) && length >= kMinRadix2Length)
    return buildRadix2Transform(
        b, loc, type, dynamicSizes, dim, inverse,
        [&](OpBuilder &b, Location loc, ValueRange indices) -> Value {
          return loop::LoadOp::create(b, loc, signal, indices);
        });
  if (length > kMaxTransformElements)
    return buildBluesteinTransform(b, loc, signal, dim, inverse, dynamicSizes);
  auto sumPart = [&](bool imaginary) {
    return buildSum(
        b, loc, type.clone(dtype), dynamicSizes, {length}, {},
        [&](OpBuilder &b, Location loc, ValueRange out,
            ValueRange reduction) -> Value {
          SmallVector<Value> at(out);
          at[dim] = reduction.front();
          Value x = loop::LoadOp::create(b, loc, signal, at);
          Value re = complex::ReOp::create(b, loc, x);
          Value im = complex::ImOp::create(b, loc, x);
          Value phase = buildPhase(
              b, loc, {{out[dim], reduction.front(), length}}, dtype);
          Value cos = math::CosOp::create(b, loc, phase);
          Value sin = math::SinOp::create(b, loc, phase);
          if (!inverse)
            sin = arith::NegFOp::create(b, loc, sin);
          // (re + i im)(cos + i sin).
          if (imaginary)
            return arith::AddFOp::create(
                b, loc, arith::MulFOp::create(b, loc, re, sin),
                arith::MulFOp::create(b, loc, im, cos));
          return arith::SubFOp::create(b, loc,
                                       arith::MulFOp::create(b, loc, re, cos),
                                       arith::MulFOp::create(b, loc, im, sin));
        });
  };
  Value real = sumPart(/*imaginary=*/false);
  Value imaginary = sumPart(/*imaginary=*/true);
  return buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return complex::CreateOp::create(
            b, loc, complexType, loop::LoadOp::create(b, loc, real, ivs),
            loop::LoadOp::create(b, loc, imaginary, ivs));
      });
}

/// `number` (complex, parts of `dtype`) times `scale`, unless that is 1.
Value scaleComplex(OpBuilder &b, Location loc, Value number, Type dtype,
                   double scale) {
  if (scale == 1.0)
    return number;
  Value factor = makeFloat(b, loc, dtype, scale);
  return complex::CreateOp::create(
      b, loc, number.getType(),
      arith::MulFOp::create(b, loc, complex::ReOp::create(b, loc, number),
                            factor),
      arith::MulFOp::create(b, loc, complex::ImOp::create(b, loc, number),
                            factor));
}

/// A node with the elements of `spectrum` (complex, parts of `dtype`) at
/// the indices of `type` (the first frequencies along each dimension),
/// times `scale`.
Value buildScaledSpectrum(OpBuilder &b, Location loc, Value spectrum,
                          RankedTensorType type, ValueRange dynamicSizes,
                          Type dtype, double scale) {
  return buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        return scaleComplex(b, loc, loop::LoadOp::create(b, loc, spectrum, ivs),
                            dtype, scale);
      });
}

/// What both transforms check: a float type the sums can run in (f32,
/// f64), static non-empty transformed sizes, and either few enough
/// `summed` elements (what a direct sum reads per element) or a transform
/// of the signal `lengths` that is separable (isSeparableTransform). Sets
/// `separable` to which.
LogicalResult checkTransform(PatternRewriter &rewriter, Operation *op,
                             Type realType, ArrayRef<int64_t> summed,
                             ArrayRef<int64_t> lengths, bool &separable) {
  if (!realType.isF32() && !realType.isF64())
    return rewriter.notifyMatchFailure(op, "only f32 and f64 transforms");
  int64_t elements = 1;
  for (int64_t size : summed) {
    if (ShapedType::isDynamic(size) || size <= 0)
      return rewriter.notifyMatchFailure(op, "dynamic or empty transform");
    elements = std::min(elements * size, kMaxTransformElements + 1);
  }
  separable = elements > kMaxTransformElements;
  if (separable && !isSeparableTransform(lengths))
    return rewriter.notifyMatchFailure(op, "transform too large");
  return success();
}

/// Lowers fx.fft_r2c: X[k] = s Σ_n x[n] e^{-2πi Σ_d k_d n_d / N_d} over the
/// transformed dimensions, as two real sums (the cosine and the negated sine
/// terms) and a node that pairs them.
struct FftR2cLowering : OpRewritePattern<fx::FftR2cOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::FftR2cOp op,
                                PatternRewriter &rewriter) const override {
    Value self = op.getSelf();
    auto inputType = cast<RankedTensorType>(self.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    auto complexType = cast<ComplexType>(resultType.getElementType());
    Type dtype = complexType.getElementType();
    std::optional<SmallVector<int64_t>> dims =
        getTransformDims(op.getDim(), inputType.getRank());
    if (!dims || inputType.getElementType() != dtype)
      return rewriter.notifyMatchFailure(op, "bad dims or dtypes");
    int64_t size = 1;
    SmallVector<int64_t> reductionShape;
    for (int64_t dim : *dims) {
      reductionShape.push_back(inputType.getDimSize(dim));
      size *= inputType.getDimSize(dim);
    }
    bool separable;
    if (failed(checkTransform(rewriter, op, dtype, reductionShape,
                              reductionShape, separable)))
      return failure();
    FailureOr<double> scale =
        getNormalizationScale(rewriter, op, op.getNormalization(), size);
    if (failed(scale))
      return failure();

    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes =
        getTransformDynamicSizes(rewriter, loc, resultType, self);
    if (separable) {
      // The signal as complex numbers, transformed along each dimension in
      // turn; the result's frequencies of that (the first N/2 + 1 along the
      // last when one-sided).
      auto fullType = RankedTensorType::get(inputType.getShape(), complexType);
      SmallVector<Value> fullSizes =
          getTransformDynamicSizes(rewriter, loc, fullType, self);
      Value spectrum = buildGeneratorNode(
          rewriter, loc, fullType, fullSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            return complex::CreateOp::create(
                b, loc, complexType, loop::LoadOp::create(b, loc, self, ivs),
                makeFloat(b, loc, dtype, 0.0));
          });
      for (int64_t dim : *dims)
        spectrum = buildTransformAlong(rewriter, loc, spectrum, dim,
                                       /*inverse=*/false, fullSizes);
      rewriter.replaceOp(op, buildScaledSpectrum(rewriter, loc, spectrum,
                                                 resultType, dynamicSizes,
                                                 dtype, *scale));
      return success();
    }
    RankedTensorType partType = resultType.clone(dtype);
    auto buildPart = [&](bool imaginary) {
      return buildSum(
          rewriter, loc, partType, dynamicSizes, reductionShape, {},
          [&](OpBuilder &b, Location loc, ValueRange out,
              ValueRange reduction) -> Value {
            SmallVector<Value> indices(out);
            SmallVector<PhaseTerm> terms;
            for (auto [position, dim] : llvm::zip(reduction, *dims)) {
              indices[dim] = position;
              terms.push_back({out[dim], position, inputType.getDimSize(dim)});
            }
            Value x = loop::LoadOp::create(b, loc, self, indices);
            Value phase = buildPhase(b, loc, terms, dtype);
            if (!imaginary)
              return arith::MulFOp::create(b, loc, x,
                                           math::CosOp::create(b, loc, phase));
            return arith::NegFOp::create(
                b, loc,
                arith::MulFOp::create(b, loc, x,
                                      math::SinOp::create(b, loc, phase)));
          });
    };
    Value real = buildPart(/*imaginary=*/false);
    Value imaginary = buildPart(/*imaginary=*/true);
    rewriter.replaceOp(
        op, buildGeneratorNode(
                rewriter, loc, resultType, dynamicSizes,
                [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
                  auto part = [&](Value sums) -> Value {
                    Value sum = loop::LoadOp::create(b, loc, sums, ivs);
                    if (*scale == 1.0)
                      return sum;
                    return arith::MulFOp::create(
                        b, loc, sum, makeFloat(b, loc, dtype, *scale));
                  };
                  return complex::CreateOp::create(b, loc, complexType,
                                                   part(real), part(imaginary));
                }));
    return success();
  }
};

/// Lowers fx.fft_c2r, the inverse of a one-sided transform: x[n] = s Σ_k
/// w_k Re(X[k] e^{2πi Σ_d k_d n_d / N_d}) over the transformed dimensions,
/// where the last runs over its first M/2 + 1 frequencies (M =
/// `last_dim_size`) and w_k counts each of them with its conjugate mirror
/// (2, but 1 for frequency 0 and, for even M, M/2). As PyTorch's libraries
/// do, the imaginary parts those two frequencies would need are ignored.
struct FftC2rLowering : OpRewritePattern<fx::FftC2rOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::FftC2rOp op,
                                PatternRewriter &rewriter) const override {
    Value self = op.getSelf();
    auto inputType = cast<RankedTensorType>(self.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type dtype = resultType.getElementType();
    auto complexType = dyn_cast<ComplexType>(inputType.getElementType());
    std::optional<SmallVector<int64_t>> dims =
        getTransformDims(op.getDim(), inputType.getRank());
    if (!dims || !complexType || complexType.getElementType() != dtype)
      return rewriter.notifyMatchFailure(op, "bad dims or dtypes");
    int64_t last = dims->back();
    int64_t length = static_cast<int64_t>(op.getLastDimSize());
    int64_t frequencies = length / 2 + 1;
    if (length <= 0 || resultType.getDimSize(last) != length ||
        inputType.getDimSize(last) < frequencies)
      return rewriter.notifyMatchFailure(op, "too few frequencies");
    int64_t size = 1;
    SmallVector<int64_t> reductionShape, lengths;
    for (int64_t dim : *dims) {
      int64_t extent = dim == last ? frequencies : inputType.getDimSize(dim);
      reductionShape.push_back(extent);
      lengths.push_back(dim == last ? length : extent);
      size *= lengths.back();
    }
    bool separable;
    if (failed(checkTransform(rewriter, op, dtype, reductionShape, lengths,
                              separable)))
      return failure();
    FailureOr<double> scale =
        getNormalizationScale(rewriter, op, op.getNormalization(), size);
    if (failed(scale))
      return failure();

    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes =
        getTransformDynamicSizes(rewriter, loc, resultType, self);
    if (separable) {
      // The whole spectrum of the real signal: frequency k with k_last >
      // M/2 is the conjugate of its mirror (N_d - k_d) mod N_d (M - k_last
      // along the last). Its inverse transform along each dimension in turn
      // has the signal as its real parts.
      auto fullType = RankedTensorType::get(resultType.getShape(), complexType);
      Value signal = buildGeneratorNode(
          rewriter, loc, fullType, dynamicSizes,
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            auto constant = [&](int64_t value) -> Value {
              return arith::ConstantIndexOp::create(b, loc, value);
            };
            Value mirrored =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      ivs[last], constant(length / 2));
            SmallVector<Value> at(ivs);
            for (auto [dim, extent] : llvm::zip(*dims, lengths)) {
              // (N - k) mod N, for k in [0, N).
              Value back =
                  arith::SubIOp::create(b, loc, constant(extent), ivs[dim]);
              Value mirror = arith::SelectOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        ivs[dim], constant(0)),
                  constant(0), back);
              at[dim] =
                  arith::SelectOp::create(b, loc, mirrored, mirror, ivs[dim]);
            }
            Value element = loop::LoadOp::create(b, loc, self, at);
            Value im = complex::ImOp::create(b, loc, element);
            return complex::CreateOp::create(
                b, loc, complexType, complex::ReOp::create(b, loc, element),
                arith::SelectOp::create(b, loc, mirrored,
                                        arith::NegFOp::create(b, loc, im), im));
          });
      for (int64_t dim : *dims)
        signal = buildTransformAlong(rewriter, loc, signal, dim,
                                     /*inverse=*/true, dynamicSizes);
      rewriter.replaceOp(
          op, buildGeneratorNode(
                  rewriter, loc, resultType, dynamicSizes,
                  [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
                    return arith::MulFOp::create(
                        b, loc,
                        complex::ReOp::create(
                            b, loc, loop::LoadOp::create(b, loc, signal, ivs)),
                        makeFloat(b, loc, dtype, *scale));
                  }));
      return success();
    }
    Value sums = buildSum(
        rewriter, loc, resultType, dynamicSizes, reductionShape, {},
        [&](OpBuilder &b, Location loc, ValueRange out,
            ValueRange reduction) -> Value {
          SmallVector<Value> indices(out);
          SmallVector<PhaseTerm> terms;
          for (auto [frequency, dim] : llvm::zip(reduction, *dims)) {
            indices[dim] = frequency;
            terms.push_back({frequency, out[dim],
                             dim == last ? length : inputType.getDimSize(dim)});
          }
          Value element = loop::LoadOp::create(b, loc, self, indices);
          Value phase = buildPhase(b, loc, terms, dtype);
          Value real = arith::SubFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc,
                                    complex::ReOp::create(b, loc, element),
                                    math::CosOp::create(b, loc, phase)),
              arith::MulFOp::create(b, loc,
                                    complex::ImOp::create(b, loc, element),
                                    math::SinOp::create(b, loc, phase)));
          // Frequency 0 and an even length's M/2 have no mirror.
          Value frequency = reduction.back();
          auto isFrequency = [&](int64_t value) -> Value {
            return arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, frequency,
                arith::ConstantIndexOp::create(b, loc, value));
          };
          Value unpaired = isFrequency(0);
          if (length % 2 == 0)
            unpaired =
                arith::OrIOp::create(b, loc, unpaired, isFrequency(length / 2));
          Value weight = arith::SelectOp::create(
              b, loc, unpaired, makeFloat(b, loc, dtype, *scale),
              makeFloat(b, loc, dtype, 2 * *scale));
          return arith::MulFOp::create(b, loc, real, weight);
        });
    rewriter.replaceOp(op, sums);
    return success();
  }
};

/// Lowers fx.fft_c2c: X[k] = s Σ_n x[n] e^{∓2πi Σ_d k_d n_d / N_d} (- when
/// `forward`), one transformed dimension at a time (buildTransformAlong:
/// radix-2 butterflies, direct sums or Bluestein's transform), then scaled.
struct FftC2cLowering : OpRewritePattern<fx::FftC2cOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::FftC2cOp op,
                                PatternRewriter &rewriter) const override {
    Value self = op.getSelf();
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = cast<ComplexType>(type.getElementType());
    Type dtype = complexType.getElementType();
    std::optional<SmallVector<int64_t>> dims =
        getTransformDims(op.getDim(), type.getRank());
    if (!dims || (!dtype.isF32() && !dtype.isF64()))
      return rewriter.notifyMatchFailure(op, "bad dims or dtypes");
    int64_t size = 1;
    for (int64_t dim : *dims) {
      int64_t length = type.getDimSize(dim);
      if (ShapedType::isDynamic(length) || !isTransformableAlone(length))
        return rewriter.notifyMatchFailure(op, "dimension not transformable");
      size *= length;
    }
    FailureOr<double> scale =
        getNormalizationScale(rewriter, op, op.getNormalization(), size);
    if (failed(scale))
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes =
        getTransformDynamicSizes(rewriter, loc, type, self);
    Value spectrum = self;
    for (int64_t dim : *dims)
      spectrum =
          buildTransformAlong(rewriter, loc, spectrum, dim,
                              /*inverse=*/!op.getForward(), dynamicSizes);
    if (*scale != 1.0)
      spectrum = buildScaledSpectrum(rewriter, loc, spectrum, type,
                                     dynamicSizes, dtype, *scale);
    rewriter.replaceOp(op, spectrum);
    return success();
  }
};

} // namespace

void mlir::kiln::fxtoloop::populateFFTLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FftR2cLowering, FftC2rLowering, FftC2cLowering>(
      patterns.getContext());
}
