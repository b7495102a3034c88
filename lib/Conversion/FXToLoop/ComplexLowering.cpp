//===- ComplexLowering.cpp - Complex numbers: views and arithmetic --------===//
//
// Part of Kiln. fx.view_as_complex and fx.view_as_real become nodes that
// pair up or split a last dimension of size 2, and add, sub, mul, div, neg,
// conj, complex, polar, abs and angle become pointwise nodes on the
// numbers' parts:
// what rotary embeddings written with complex numbers (x viewed as complex,
// times e^{iθ}, viewed as real) need. Inlining then fuses the views and the
// product into one kernel that never stores a complex number.
//
// The arithmetic is PyTorch's (c10::complex): products from the four real
// products, quotients by Smith's method (the larger of the divisor's parts
// scales the smaller, so that squaring does not overflow).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The real and imaginary parts of a complex number.
struct Parts {
  Value re, im;
};

/// `element`, of PyTorch dtype `dtype` (complex or real), as parts of type
/// `part`: a real number has imaginary part 0.
Parts getParts(OpBuilder &b, Location loc, Value element, Type dtype,
               FloatType part) {
  if (auto complexType = dyn_cast<ComplexType>(dtype)) {
    Type from = complexType.getElementType();
    return {convertScalar(b, loc, complex::ReOp::create(b, loc, element), from,
                          part),
            convertScalar(b, loc, complex::ImOp::create(b, loc, element), from,
                          part)};
  }
  return {convertScalar(b, loc, element, dtype, part),
          makeFloat(b, loc, part, 0.0)};
}

/// The arithmetic that has a complex form here.
enum class ComplexKind { Add, Sub, Mul, Div, Neg };

/// `lhs <kind> rhs` on complex parts, as c10::complex computes it.
Parts emitComplex(OpBuilder &b, Location loc, ComplexKind kind, Parts lhs,
                  Parts rhs) {
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  };
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubFOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto div = [&](Value x, Value y) -> Value {
    return arith::DivFOp::create(b, loc, x, y);
  };
  auto select = [&](Value condition, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, condition, x, y);
  };
  switch (kind) {
  case ComplexKind::Add:
    return {add(lhs.re, rhs.re), add(lhs.im, rhs.im)};
  case ComplexKind::Sub:
    return {sub(lhs.re, rhs.re), sub(lhs.im, rhs.im)};
  case ComplexKind::Neg:
    return {arith::NegFOp::create(b, loc, lhs.re),
            arith::NegFOp::create(b, loc, lhs.im)};
  case ComplexKind::Mul:
    return {sub(mul(lhs.re, rhs.re), mul(lhs.im, rhs.im)),
            add(mul(lhs.re, rhs.im), mul(lhs.im, rhs.re))};
  case ComplexKind::Div: {
    // (a + bi) / (c + di). With |c| >= |d|, r = d / c and s = 1 / (c + d r)
    // give ((a + b r) s, (b - a r) s); else r = c / d, s = 1 / (d + c r) give
    // ((a r + b) s, (b r - a) s). A zero divisor divides each part by zero
    // (an infinity or NaN, as in PyTorch).
    Value a = lhs.re, bPart = lhs.im, c = rhs.re, d = rhs.im;
    Value absC = math::AbsFOp::create(b, loc, c);
    Value absD = math::AbsFOp::create(b, loc, d);
    Value byReal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, absC, absD);
    Value one = makeFloat(b, loc, a.getType(), 1.0);
    Value zero = makeFloat(b, loc, a.getType(), 0.0);
    Value ratioC = div(d, c), scaleC = div(one, add(c, mul(d, ratioC)));
    Value ratioD = div(c, d), scaleD = div(one, add(d, mul(c, ratioD)));
    Parts fromC = {mul(add(a, mul(bPart, ratioC)), scaleC),
                   mul(sub(bPart, mul(a, ratioC)), scaleC)};
    Parts fromD = {mul(add(mul(a, ratioD), bPart), scaleD),
                   mul(sub(mul(bPart, ratioD), a), scaleD)};
    Value zeroDivisor = arith::AndIOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, absC, zero),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, absD, zero));
    Parts byZero = {div(a, absC), div(bPart, absD)};
    return {select(zeroDivisor, byZero.re,
                   select(byReal, fromC.re, fromD.re)),
            select(zeroDivisor, byZero.im,
                   select(byReal, fromC.im, fromD.im))};
  }
  }
  llvm_unreachable("unknown complex arithmetic");
}

/// The scalar `alpha` times `parts`, unless it is absent or 1.
Parts scaleByAlpha(OpBuilder &b, Location loc, Parts parts,
                   std::optional<Attribute> alpha) {
  if (!alpha)
    return parts;
  Type part = parts.re.getType();
  Value factor = makeScalar(b, loc, *alpha, part);
  return {arith::MulFOp::create(b, loc, parts.re, factor),
          arith::MulFOp::create(b, loc, parts.im, factor)};
}

/// Lowers add, sub, mul, div and neg (and their scalar forms) whose result
/// is complex; an operand may be real or complex.
template <typename OpTy, ComplexKind Kind>
struct ComplexArithmeticLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  static constexpr bool kHasScalarOther =
      std::is_same_v<OpTy, fx::AddScalarOp> ||
      std::is_same_v<OpTy, fx::SubScalarOp> ||
      std::is_same_v<OpTy, fx::MulScalarOp> ||
      std::is_same_v<OpTy, fx::DivScalarOp>;
  static constexpr bool kHasAlpha =
      std::is_same_v<OpTy, fx::AddOp> || std::is_same_v<OpTy, fx::SubOp> ||
      std::is_same_v<OpTy, fx::AddScalarOp> ||
      std::is_same_v<OpTy, fx::SubScalarOp>;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    auto complexType = dyn_cast<ComplexType>(resultType.getElementType());
    if (!complexType)
      return rewriter.notifyMatchFailure(op, "real result");
    auto part = dyn_cast<FloatType>(complexType.getElementType());
    if (!part || !(part.isF32() || part.isF64()))
      return rewriter.notifyMatchFailure(op, "parts other than f32 and f64");
    SmallVector<Type> inputDtypes;
    for (Value operand : op->getOperands())
      inputDtypes.push_back(
          cast<RankedTensorType>(operand.getType()).getElementType());
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), resultType, op->getOperands(), inputDtypes,
        complexType,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Parts lhs = getParts(b, loc, elements[0], inputDtypes[0], part);
          Parts rhs;
          if constexpr (kHasScalarOther)
            rhs = {makeScalar(b, loc, op.getOther(), part),
                   makeFloat(b, loc, part, 0.0)};
          else if constexpr (Kind != ComplexKind::Neg)
            rhs = getParts(b, loc, elements[1], inputDtypes[1], part);
          if constexpr (kHasAlpha)
            rhs = scaleByAlpha(b, loc, rhs, op.getAlpha());
          Parts value = emitComplex(b, loc, Kind, lhs, rhs);
          return complex::CreateOp::create(b, loc, complexType, value.re,
                                           value.im);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The f32 or f64 parts of complex dtype `dtype`, or null.
FloatType getPartType(Type dtype) {
  auto complexType = dyn_cast<ComplexType>(dtype);
  auto part =
      complexType ? dyn_cast<FloatType>(complexType.getElementType()) : nullptr;
  return part && (part.isF32() || part.isF64()) ? part : nullptr;
}

/// The dtypes of `op`'s operands' elements.
SmallVector<Type> getOperandDtypes(Operation *op) {
  return llvm::map_to_vector(op->getOperandTypes(), [](Type type) {
    return cast<RankedTensorType>(type).getElementType();
  });
}

/// Lowers fx.conj: the imaginary part negated.
struct ConjLowering : OpRewritePattern<fx::ConjOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ConjOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = cast<ComplexType>(type.getElementType());
    FloatType part = getPartType(complexType);
    if (!part)
      return rewriter.notifyMatchFailure(op, "parts other than f32 and f64");
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), type, op.getSelf(), complexType, complexType,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Parts parts = getParts(b, loc, elements[0], complexType, part);
          return complex::CreateOp::create(
              b, loc, complexType, parts.re,
              arith::NegFOp::create(b, loc, parts.im));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.complex (real and imaginary parts) and fx.polar (absolute
/// value and angle: abs cos(angle) + i abs sin(angle), as PyTorch computes
/// it), both from broadcast real operands.
template <typename OpTy>
struct ComplexFromRealsLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = cast<ComplexType>(type.getElementType());
    FloatType part = getPartType(complexType);
    if (!part)
      return rewriter.notifyMatchFailure(op, "parts other than f32 and f64");
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), type, op->getOperands(), {part, part},
        complexType,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Value first = elements[0], second = elements[1];
          if constexpr (std::is_same_v<OpTy, fx::PolarOp>) {
            Value cos = math::CosOp::create(b, loc, second);
            Value sin = math::SinOp::create(b, loc, second);
            second = arith::MulFOp::create(b, loc, first, sin);
            first = arith::MulFOp::create(b, loc, first, cos);
          }
          return complex::CreateOp::create(b, loc, complexType, first, second);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.abs of complex numbers: hypot(re, im), scaled so that squaring
/// neither overflows nor underflows; an infinite part gives +inf (even with
/// a NaN beside it), as C's hypot.
struct ComplexAbsLowering : OpRewritePattern<fx::AbsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::AbsOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type dtype = getOperandDtypes(op).front();
    FloatType part = getPartType(dtype);
    if (!part)
      return rewriter.notifyMatchFailure(op, "not complex of f32 or f64");
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), type, op.getSelf(), dtype, part,
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          Parts parts = getParts(b, loc, elements[0], dtype, part);
          Value x = math::AbsFOp::create(b, loc, parts.re);
          Value y = math::AbsFOp::create(b, loc, parts.im);
          Value high = arith::MaximumFOp::create(b, loc, x, y);
          Value low = arith::MinimumFOp::create(b, loc, x, y);
          Value zero = makeFloat(b, loc, part, 0.0);
          Value infinity =
              makeFloat(b, loc, part, std::numeric_limits<double>::infinity());
          // high = 0 would divide 0 by 0; the answer is 0.
          Value isZero = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, high, zero);
          Value ratio = arith::DivFOp::create(
              b, loc, low,
              arith::SelectOp::create(b, loc, isZero,
                                      makeFloat(b, loc, part, 1.0), high));
          Value scaled = arith::MulFOp::create(
              b, loc, high,
              math::SqrtOp::create(
                  b, loc,
                  arith::AddFOp::create(b, loc, makeFloat(b, loc, part, 1.0),
                                        arith::MulFOp::create(b, loc, ratio,
                                                              ratio))));
          Value isInfinite = arith::OrIOp::create(
              b, loc,
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                    infinity),
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, y,
                                    infinity));
          return arith::SelectOp::create(b, loc, isInfinite, infinity, scaled);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.angle: atan2(im, re) of complex numbers; of reals, NaN for
/// NaN, pi for negative numbers and 0 for the rest (as PyTorch's angle).
struct AngleLowering : OpRewritePattern<fx::AngleOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::AngleOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type dtype = getOperandDtypes(op).front();
    FloatType part = getPartType(dtype);
    bool isComplex = isa<ComplexType>(dtype);
    if (isComplex && !part)
      return rewriter.notifyMatchFailure(op, "parts other than f32 and f64");
    // Reals compute in f32 when narrower.
    Type compute = isComplex ? Type(part)
                   : dtype.getIntOrFloatBitWidth() < 32
                       ? Type(rewriter.getF32Type())
                       : dtype;
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), type, op.getSelf(), isComplex ? dtype : compute,
        compute, [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          if (isComplex) {
            Parts parts = getParts(b, loc, elements[0], dtype, part);
            return math::Atan2Op::create(b, loc, parts.im, parts.re);
          }
          Value x = elements[0];
          Value negative = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OLT, x,
              makeFloat(b, loc, compute, 0.0));
          Value isNaN =
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
          Value angle = arith::SelectOp::create(
              b, loc, negative, makeFloat(b, loc, compute, M_PI),
              makeFloat(b, loc, compute, 0.0));
          return arith::SelectOp::create(b, loc, isNaN, x, angle);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The dynamic sizes of `type` read from `source`'s dimensions (its
/// dimension d is the result's dimension d; the pair dimension, which only
/// one of them has, is static).
SmallVector<Value> getLeadingSizes(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value source) {
  return collectDynamicSizes(type, [&](int64_t dim) -> Value {
    return getDimSize(b, loc, source, dim);
  });
}

/// Lowers fx.view_as_complex: element i is (x[i, 0], x[i, 1]).
struct ViewAsComplexLowering : OpRewritePattern<fx::ViewAsComplexOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ViewAsComplexOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = cast<ComplexType>(type.getElementType());
    Value self = op.getSelf();
    Location loc = op.getLoc();
    Value result = buildGeneratorNode(
        rewriter, loc, type, getLeadingSizes(rewriter, loc, type, self),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          auto partAt = [&](int64_t index) -> Value {
            SmallVector<Value> indices(ivs);
            indices.push_back(arith::ConstantIndexOp::create(b, loc, index));
            return loop::LoadOp::create(b, loc, self, indices);
          };
          return complex::CreateOp::create(b, loc, complexType, partAt(0),
                                           partAt(1));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers fx.view_as_real: element (i, k) is the real part of self[i] for
/// k = 0, its imaginary part for k = 1.
struct ViewAsRealLowering : OpRewritePattern<fx::ViewAsRealOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ViewAsRealOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value self = op.getSelf();
    Location loc = op.getLoc();
    Value result = buildGeneratorNode(
        rewriter, loc, type, getLeadingSizes(rewriter, loc, type, self),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value number = loop::LoadOp::create(b, loc, self, ivs.drop_back());
          Value isReal = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, ivs.back(),
              arith::ConstantIndexOp::create(b, loc, 0));
          return arith::SelectOp::create(
              b, loc, isReal, complex::ReOp::create(b, loc, number),
              complex::ImOp::create(b, loc, number));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void fxtoloop::populateComplexPatterns(RewritePatternSet &patterns) {
  patterns.add<
      ComplexArithmeticLowering<fx::AddOp, ComplexKind::Add>,
      ComplexArithmeticLowering<fx::SubOp, ComplexKind::Sub>,
      ComplexArithmeticLowering<fx::MulOp, ComplexKind::Mul>,
      ComplexArithmeticLowering<fx::DivOp, ComplexKind::Div>,
      ComplexArithmeticLowering<fx::NegOp, ComplexKind::Neg>,
      ComplexArithmeticLowering<fx::AddScalarOp, ComplexKind::Add>,
      ComplexArithmeticLowering<fx::SubScalarOp, ComplexKind::Sub>,
      ComplexArithmeticLowering<fx::MulScalarOp, ComplexKind::Mul>,
      ComplexArithmeticLowering<fx::DivScalarOp, ComplexKind::Div>,
      ViewAsComplexLowering, ViewAsRealLowering, ConjLowering,
      ComplexFromRealsLowering<fx::ComplexOp>,
      ComplexFromRealsLowering<fx::PolarOp>, ComplexAbsLowering,
      AngleLowering>(patterns.getContext());
}
