//===- ComplexLowering.cpp - Complex numbers: views and arithmetic --------===//
//
// Part of Kiln. fx.view_as_complex and fx.view_as_real become nodes that
// pair up or split a last dimension of size 2, and add, sub, mul, div, neg,
// conj, where, complex and polar become pointwise nodes on the numbers'
// parts (the elementary functions are in ComplexMathLowering.cpp), cumsum a
// real cumsum of them, and prod and cumprod trees of pairwise products (no
// loop combiner multiplies complex numbers): what rotary embeddings written
// with complex numbers (x viewed as complex, times e^{iθ}, viewed as real)
// need. Inlining then fuses the views and the product into one kernel that
// never stores a complex number. Complex mm and bmm (a Fourier neural
// operator's einsum over modes) become four real products of the operands'
// parts.
//
// The arithmetic is PyTorch's (c10::complex): products from the four real
// products, quotients by Smith's method (the larger of the divisor's parts
// scales the smaller, so that squaring does not overflow).
//
//===----------------------------------------------------------------------===//

#include "ComplexLowering.h"
#include "Lowerings.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

Parts fxtoloop::getParts(OpBuilder &b, Location loc, Value element, Type dtype,
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

Parts fxtoloop::emitComplex(OpBuilder &b, Location loc, ComplexKind kind,
                            Parts lhs, Parts rhs) {
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
    return {select(zeroDivisor, byZero.re, select(byReal, fromC.re, fromD.re)),
            select(zeroDivisor, byZero.im, select(byReal, fromC.im, fromD.im))};
  }
  }
  llvm_unreachable("unknown complex arithmetic");
}

Parts fxtoloop::scaleByAlpha(OpBuilder &b, Location loc, Parts parts,
                             std::optional<Attribute> alpha) {
  if (!alpha)
    return parts;
  Type part = parts.re.getType();
  Value factor = makeScalar(b, loc, *alpha, part);
  return {arith::MulFOp::create(b, loc, parts.re, factor),
          arith::MulFOp::create(b, loc, parts.im, factor)};
}

FloatType fxtoloop::getPartType(Type dtype) {
  auto complexType = dyn_cast<ComplexType>(dtype);
  auto part =
      complexType ? dyn_cast<FloatType>(complexType.getElementType()) : nullptr;
  return part && (part.isF32() || part.isF64()) ? part : nullptr;
}

Type fxtoloop::getDtype(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

Value fxtoloop::createComplex(OpBuilder &b, Location loc, Parts parts) {
  return complex::CreateOp::create(b, loc, ComplexType::get(parts.re.getType()),
                                   parts.re, parts.im);
}

namespace {

/// Lowers add, sub, mul, div and neg (and their scalar forms) whose result
/// is complex; an operand may be real or complex.
template <typename OpTy, ComplexKind Kind>
struct ComplexArithmeticLowering
    : PartsLowering<OpTy, ComplexArithmeticLowering<OpTy, Kind>> {
  using PartsLowering<OpTy, ComplexArithmeticLowering>::PartsLowering;

  static constexpr bool kHasScalarOther =
      std::is_same_v<OpTy, fx::AddScalarOp> ||
      std::is_same_v<OpTy, fx::SubScalarOp> ||
      std::is_same_v<OpTy, fx::MulScalarOp> ||
      std::is_same_v<OpTy, fx::DivScalarOp>;
  static constexpr bool kHasAlpha = std::is_same_v<OpTy, fx::AddOp> ||
                                    std::is_same_v<OpTy, fx::SubOp> ||
                                    std::is_same_v<OpTy, fx::AddScalarOp> ||
                                    std::is_same_v<OpTy, fx::SubScalarOp>;

  Value compute(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts lhs = getParts(b, loc, elements[0], dtypes[0], part);
    Parts rhs;
    if constexpr (Kind != ComplexKind::Neg)
      rhs = getOtherParts<kHasScalarOther>(op, b, loc, elements, dtypes, part);
    if constexpr (kHasAlpha)
      rhs = scaleByAlpha(b, loc, rhs, op.getAlpha());
    return createComplex(b, loc, emitComplex(b, loc, Kind, lhs, rhs));
  }
};

/// Lowers fx.conj: the imaginary part negated.
struct ConjLowering : PartsLowering<fx::ConjOp, ConjLowering> {
  using PartsLowering::PartsLowering;

  Value compute(fx::ConjOp, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    return createComplex(b, loc,
                         {parts.re, arith::NegFOp::create(b, loc, parts.im)});
  }
};

/// Lowers fx.complex (real and imaginary parts) and fx.polar (absolute
/// value and angle: abs cos(angle) + i abs sin(angle), as PyTorch computes
/// it), both from broadcast real operands read as the parts' type.
template <typename OpTy>
struct ComplexFromRealsLowering
    : PartsLowering<OpTy, ComplexFromRealsLowering<OpTy>> {
  using PartsLowering<OpTy, ComplexFromRealsLowering>::PartsLowering;

  SmallVector<Type> getInputDtypes(OpTy, FloatType part) const {
    return {part, part};
  }
  Value compute(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type>, FloatType) const {
    Parts parts = {elements[0], elements[1]};
    if constexpr (std::is_same_v<OpTy, fx::PolarOp>)
      parts = {arith::MulFOp::create(b, loc, elements[0],
                                     math::CosOp::create(b, loc, elements[1])),
               arith::MulFOp::create(b, loc, elements[0],
                                     math::SinOp::create(b, loc, elements[1]))};
    return createComplex(b, loc, parts);
  }
};

/// Lowers fx.where with a complex result: each part chosen by the
/// condition (real operands have imaginary part 0).
struct ComplexWhereLowering : PartsLowering<fx::WhereOp, ComplexWhereLowering> {
  using PartsLowering::PartsLowering;

  Value compute(fx::WhereOp, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts whenTrue = getParts(b, loc, elements[1], dtypes[1], part);
    Parts whenFalse = getParts(b, loc, elements[2], dtypes[2], part);
    return createComplex(b, loc,
                         {arith::SelectOp::create(b, loc, elements[0],
                                                  whenTrue.re, whenFalse.re),
                          arith::SelectOp::create(b, loc, elements[0],
                                                  whenTrue.im, whenFalse.im)});
  }
};

/// The real (`imaginary` false) or imaginary parts of `tensor`, a tensor
/// of complex numbers, as a node.
Value buildPartTensor(OpBuilder &b, Location loc, Value tensor,
                      bool imaginary) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto partType =
      type.clone(cast<ComplexType>(type.getElementType()).getElementType());
  return buildGeneratorNode(
      b, loc, partType, getSizesLike(b, loc, partType, tensor),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value number = loop::LoadOp::create(b, loc, tensor, ivs);
        return imaginary ? complex::ImOp::create(b, loc, number).getResult()
                         : complex::ReOp::create(b, loc, number).getResult();
      });
}

/// `op` on the real or imaginary parts (`imaginary`) of its complex
/// operands, with its results of complex type `complexType` of the parts'
/// type instead: a clone, which lowers as any real op of its kind. (`op`
/// has no dtype attribute, which the clone would keep.)
Operation *cloneOnParts(PatternRewriter &rewriter, Operation *op,
                        ComplexType complexType, bool imaginary) {
  assert(!op->hasAttr("dtype") && "a dtype attribute would stay complex");
  IRMapping mapping;
  for (Value operand : op->getOperands())
    if (getDtype(operand) == complexType && !mapping.contains(operand))
      mapping.map(operand,
                  buildPartTensor(rewriter, op->getLoc(), operand, imaginary));
  Operation *clone = rewriter.clone(*op, mapping);
  for (OpResult result : clone->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    if (type.getElementType() == complexType)
      result.setType(type.clone(complexType.getElementType()));
  }
  return clone;
}

/// Whether the adding scatter `op` (scatter_add, or index_put with
/// accumulate through integer indices) lowers on real parts.
bool addsWithIntegerIndices(fx::ScatterAddOp) { return true; }
bool addsWithIntegerIndices(fx::IndexPutOp op) {
  return op.getAccumulate() && llvm::none_of(op.getIndices(), [](Value index) {
           return getDtype(index).isInteger(1);
         });
}

/// Lowers the scatters that add complex numbers (scatter_add, index_put
/// with accumulate) part by part: the op on the real parts and on the
/// imaginary parts of its complex operands (clones that lower as real
/// ones), and a node that pairs the two results. (Scatters that replace
/// numbers move them whole, so that duplicate indices pick one update for
/// both parts.)
template <typename OpTy>
struct ComplexByPartsLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = dyn_cast<ComplexType>(type.getElementType());
    if (!complexType || !getPartType(complexType))
      return rewriter.notifyMatchFailure(op, "not complex of f32 or f64");
    if (!addsWithIntegerIndices(op))
      return rewriter.notifyMatchFailure(op, "not an addition by indices");
    for (Value operand : op->getOperands())
      if (isa<ComplexType>(getDtype(operand)) &&
          getDtype(operand) != complexType)
        return rewriter.notifyMatchFailure(op, "operands of other dtypes");
    Location loc = op.getLoc();
    SmallVector<Value> halves;
    for (bool imaginary : {false, true})
      halves.push_back(
          cloneOnParts(rewriter, op, complexType, imaginary)->getResult(0));
    FloatType part = getPartType(complexType);
    rewriter.replaceOp(
        op, buildBroadcastPointwise(
                rewriter, loc, type, halves, {part, part}, complexType,
                [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
                  return createComplex(b, loc, {e[0], e[1]});
                }));
    return success();
  }
};

/// Lowers fx.var and fx.var_mean of complex numbers as PyTorch defines
/// them: the variance is the sum of the parts' variances, the mean the
/// number of the parts' means (the op on each part, then a node each).
template <typename OpTy>
struct ComplexVarianceLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto complexType = dyn_cast<ComplexType>(getDtype(op.getSelf()));
    if (!complexType || !getPartType(complexType))
      return rewriter.notifyMatchFailure(op, "not complex of f32 or f64");
    Location loc = op.getLoc();
    Operation *re = cloneOnParts(rewriter, op, complexType, false);
    Operation *im = cloneOnParts(rewriter, op, complexType, true);
    FloatType part = getPartType(complexType);
    SmallVector<Value> results;
    for (auto [index, result] : llvm::enumerate(op->getResults())) {
      auto type = cast<RankedTensorType>(result.getType());
      bool isMean = isa<ComplexType>(type.getElementType());
      results.push_back(buildBroadcastPointwise(
          rewriter, loc, type, {re->getResult(index), im->getResult(index)},
          {part, part}, type.getElementType(),
          [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
            if (isMean)
              return createComplex(b, loc, {e[0], e[1]});
            return convertScalar(b, loc,
                                 arith::AddFOp::create(b, loc, e[0], e[1]),
                                 part, type.getElementType());
          }));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Lowers fx.to_copy to, from or between complex dtypes: the parts
/// converted (a real number has imaginary part 0); a complex number cast to
/// a real dtype keeps its real part, as PyTorch's cast does, and to bool
/// says whether it is nonzero.
struct ComplexToCopyLowering
    : PartsLowering<fx::ToCopyOp, ComplexToCopyLowering> {
  using PartsLowering::PartsLowering;

  bool isExplicitConversion() const { return true; }
  FloatType getPart(fx::ToCopyOp op) const {
    if (FloatType part = getPartType(getDtype(op.getResult())))
      return part;
    return getPartType(getDtype(op.getSelf()));
  }
  Value compute(fx::ToCopyOp op, OpBuilder &b, Location loc,
                ValueRange elements, ArrayRef<Type> dtypes,
                FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    Type dtype = getDtype(op.getResult());
    if (isa<ComplexType>(dtype))
      return createComplex(b, loc, parts);
    if (dtype.isInteger(1)) {
      Value zero = makeFloat(b, loc, part, 0.0);
      return arith::OrIOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, parts.re,
                                zero),
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, parts.im,
                                zero));
    }
    return convertScalar(b, loc, parts.re, part, dtype);
  }
};

/// Lowers fx.isnan and fx.isinf of complex numbers: whether either part is
/// NaN, or infinite.
template <typename OpTy, bool IsNaN>
struct ComplexClassifyLowering
    : PartsLowering<OpTy, ComplexClassifyLowering<OpTy, IsNaN>> {
  using PartsLowering<OpTy, ComplexClassifyLowering>::PartsLowering;

  FloatType getPart(OpTy op) const {
    return getPartType(getDtype(op.getSelf()));
  }
  Value compute(OpTy, OpBuilder &b, Location loc, ValueRange elements,
                ArrayRef<Type> dtypes, FloatType part) const {
    Parts parts = getParts(b, loc, elements[0], dtypes[0], part);
    auto classify = [&](Value x) -> Value {
      if (IsNaN)
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
      return arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, x),
          makeFloat(b, loc, part, std::numeric_limits<double>::infinity()));
    };
    return arith::OrIOp::create(b, loc, classify(parts.re), classify(parts.im));
  }
};

/// Lowers fx.sum of complex numbers into another complex dtype: a cast
/// (fx.to_copy), then the sum in that dtype.
struct ComplexSumInDtypeLowering : OpRewritePattern<fx::SumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::SumOp op,
                                PatternRewriter &rewriter) const override {
    Type dtype = getDtype(op.getResult());
    if (!isa<ComplexType>(getDtype(op.getSelf())) || !op.getDtypeAttr() ||
        dtype == getDtype(op.getSelf()))
      return rewriter.notifyMatchFailure(op, "not a complex sum to convert");
    auto selfType = cast<RankedTensorType>(op.getSelf().getType());
    Value converted =
        fx::ToCopyOp::create(rewriter, op.getLoc(), selfType.clone(dtype),
                             op.getSelf(), op.getDtypeAttr());
    rewriter.modifyOpInPlace(op, [&] {
      op.getSelfMutable().assign(converted);
      op.removeDtypeAttr();
    });
    return success();
  }
};

/// The parts' type of `op`'s complex result where every operand has its
/// dtype (complex of f32 or f64), else null.
FloatType getUniformPartType(Operation *op) {
  Type dtype = getDtype(op->getResult(0));
  FloatType part = getPartType(dtype);
  if (!part || llvm::any_of(op->getOperands(), [&](Value operand) {
        return getDtype(operand) != dtype;
      }))
    return nullptr;
  return part;
}

/// Lowers fx.addmm and fx.baddbmm of complex numbers: the complex product
/// (fx.mm or fx.bmm, four real ones), then beta self + alpha product on the
/// parts (self ignored for a zero beta, as PyTorch does).
template <typename OpTy, typename ProductOp>
struct ComplexAddMatmulLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    FloatType part = getUniformPartType(op);
    if (!part)
      return rewriter.notifyMatchFailure(op, "not complex of one dtype");
    Location loc = op.getLoc();
    Value product = ProductOp::create(rewriter, loc, type, op->getOperand(1),
                                      op->getOperand(2));
    std::optional<Attribute> beta = op.getBeta(), alpha = op.getAlpha();
    bool zeroBeta = isZeroScalar(beta);
    SmallVector<Value> inputs = {product};
    if (!zeroBeta)
      inputs.push_back(op.getSelf());
    Type dtype = type.getElementType();
    rewriter.replaceOp(
        op, buildBroadcastPointwise(
                rewriter, loc, type, inputs,
                SmallVector<Type>(inputs.size(), dtype), dtype,
                [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
                  Parts scaled = scaleByAlpha(
                      b, loc, getParts(b, loc, e[0], dtype, part), alpha);
                  if (zeroBeta)
                    return createComplex(b, loc, scaled);
                  Parts self = scaleByAlpha(
                      b, loc, getParts(b, loc, e[1], dtype, part), beta);
                  return createComplex(
                      b, loc,
                      emitComplex(b, loc, ComplexKind::Add, self, scaled));
                }));
    return success();
  }
};

/// Lowers fx.mm and fx.bmm of complex matrices as four real products,
/// (A_r B_r - A_i B_i) + i (A_r B_i + A_i B_r) as a complex BLAS computes
/// them: nodes that take the operands' parts, fx products of those (which
/// lower as any real product), and a node that combines them.
template <typename OpTy> struct ComplexMatmulLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    FloatType part = getUniformPartType(op);
    if (!part)
      return rewriter.notifyMatchFailure(op, "not complex of one dtype");
    Location loc = op.getLoc();
    auto getPart = [&](Value matrix, bool imaginary) {
      return buildPartTensor(rewriter, loc, matrix, imaginary);
    };
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    Value lhsRe = getPart(lhs, false), lhsIm = getPart(lhs, true);
    Value rhsRe = getPart(rhs, false), rhsIm = getPart(rhs, true);
    auto productType = type.clone(part);
    auto product = [&](Value a, Value b) -> Value {
      return OpTy::create(rewriter, loc, productType, a, b);
    };
    SmallVector<Value> products = {product(lhsRe, rhsRe), product(lhsIm, rhsIm),
                                   product(lhsRe, rhsIm),
                                   product(lhsIm, rhsRe)};
    Value result = buildBroadcastPointwise(
        rewriter, loc, type, products, SmallVector<Type>(4, part),
        type.getElementType(),
        [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
          return createComplex(b, loc,
                               {arith::SubFOp::create(b, loc, e[0], e[1]),
                                arith::AddFOp::create(b, loc, e[2], e[3])});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

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
        rewriter, loc, type, getSizesLike(rewriter, loc, type, self),
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
        rewriter, loc, type, getSizesLike(rewriter, loc, type, self),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value number = loop::LoadOp::create(b, loc, self, ivs.drop_back());
          Value isReal = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, ivs.back(),
              arith::ConstantIndexOp::create(b, loc, 0));
          return arith::SelectOp::create(b, loc, isReal,
                                         complex::ReOp::create(b, loc, number),
                                         complex::ImOp::create(b, loc, number));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A complex cumsum is the cumsum of both parts along the same dimension:
/// fx.view_as_real, a real cumsum, fx.view_as_complex, which lower (and
/// fuse) as any others.
struct ComplexCumsumLowering : OpRewritePattern<fx::CumsumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CumsumOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto complexType = dyn_cast<ComplexType>(type.getElementType());
    if (!complexType || op.getSelf().getType() != type)
      return rewriter.notifyMatchFailure(op, "not a complex cumsum");
    // A number scans as itself; its parts must not be summed together.
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    SmallVector<int64_t> shape(type.getShape());
    shape.push_back(2);
    auto partsType = RankedTensorType::get(shape, complexType.getElementType());
    int64_t dim = op.getDim();
    if (dim < 0)
      dim += type.getRank();
    Value parts = fx::ViewAsRealOp::create(rewriter, op.getLoc(), partsType,
                                           op.getSelf());
    Value sums = fx::CumsumOp::create(rewriter, op.getLoc(), partsType, parts,
                                      dim, /*dtype=*/nullptr);
    rewriter.replaceOpWithNewOp<fx::ViewAsComplexOp>(op, type, sums);
    return success();
  }
};

/// The product of complex numbers `lhs` and `rhs` (of one complex type), as
/// c10::complex computes it.
Value multiplyComplex(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type dtype = lhs.getType();
  auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
  return createComplex(b, loc,
                       emitComplex(b, loc, ComplexKind::Mul,
                                   getParts(b, loc, lhs, dtype, part),
                                   getParts(b, loc, rhs, dtype, part)));
}

/// `condition ? onTrue : onFalse` of complex numbers, part by part.
Value selectComplex(OpBuilder &b, Location loc, Value condition, Value onTrue,
                    Value onFalse) {
  Type dtype = onTrue.getType();
  auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
  Parts x = getParts(b, loc, onTrue, dtype, part);
  Parts y = getParts(b, loc, onFalse, dtype, part);
  return createComplex(
      b, loc,
      {arith::SelectOp::create(b, loc, condition, x.re, y.re),
       arith::SelectOp::create(b, loc, condition, x.im, y.im)});
}

/// Whether `op` (a prod or cumprod) reads and makes complex numbers, of
/// rank one or more.
bool isComplexProduct(Operation *op) {
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  return getPartType(type.getElementType()) && type.getRank() > 0 &&
         getPartType(cast<RankedTensorType>(op->getResult(0).getType())
                         .getElementType());
}

/// `value`, complex numbers, as numbers of complex type `dtype` (a `dtype`
/// argument's conversion, complex64 to complex128 say).
Value convertComplexElements(OpBuilder &b, Location loc, Value value,
                             Type dtype) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == dtype)
    return value;
  auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
  return buildGeneratorNode(
      b, loc, type.clone(dtype), getSizesLike(b, loc, type.clone(dtype), value),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value number = loop::LoadOp::create(b, loc, value, ivs);
        return createComplex(
            b, loc, getParts(b, loc, number, type.getElementType(), part));
      });
}

/// A dynamic dimension's product runs in chunks of this many numbers, each
/// multiplied in turn by one element of a node; kDynamicProductStages such
/// nodes take any length up to 32^8 = 2^40 numbers (8 TB of complex64,
/// more than any device holds).
constexpr int64_t kDynamicProductChunk = 32;
constexpr int kDynamicProductStages = 8;

/// Lowers a complex fx.prod or fx.prod_dim_int along each reduced dimension
/// in turn: a static one as a tree of pairwise products, ⌈log2 n⌉ nodes,
/// each halving the dimension (an odd last element passes through; an
/// empty dimension's product is 1); a dynamic one in kDynamicProductStages
/// nodes, each multiplying chunks of kDynamicProductChunk numbers (the
/// last one's size 1 is static). Then a view without the reduced
/// dimensions unless `keepdim`. The products associate otherwise than
/// PyTorch's loop, within rounding.
template <typename OpTy> struct ComplexProdLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!isComplexProduct(op))
      return rewriter.notifyMatchFailure(op, "not a complex product");
    Location loc = op.getLoc();
    Type dtype = cast<RankedTensorType>(op.getType()).getElementType();
    Value current = convertComplexElements(rewriter, loc, op.getSelf(), dtype);
    auto type = cast<RankedTensorType>(current.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> dims;
    if (auto dim = op->template getAttrOfType<IntegerAttr>("dim"))
      dims.push_back(normalizeDim(dim.getInt(), rank));
    else
      dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    SmallVector<int64_t> shape(type.getShape());
    auto part = cast<FloatType>(cast<ComplexType>(dtype).getElementType());
    for (int64_t dim : dims) {
      if (ShapedType::isDynamic(shape[dim])) {
        for (int stage = 0; stage < kDynamicProductStages; ++stage) {
          Value source = current;
          Value size = getDimSize(rewriter, loc, source, dim);
          Value chunk = arith::ConstantIndexOp::create(rewriter, loc,
                                                       kDynamicProductChunk);
          bool last = stage + 1 == kDynamicProductStages;
          shape[dim] = last ? 1 : ShapedType::kDynamic;
          auto chunksType = RankedTensorType::get(shape, dtype);
          // ⌈n / 32⌉ chunks. Dynamic sizes are at least 2 (their guards'
          // least value), so there is one at least, and each reads an
          // element.
          Value chunks = arith::CeilDivUIOp::create(rewriter, loc, size, chunk);
          SmallVector<Value> sizes =
              collectDynamicSizes(chunksType, [&](int64_t d) -> Value {
                return d == dim ? chunks : getDimSize(rewriter, loc, source, d);
              });
          current = buildGeneratorNode(
              rewriter, loc, chunksType, sizes,
              [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
                auto index = [&](int64_t value) -> Value {
                  return arith::ConstantIndexOp::create(b, loc, value);
                };
                Value lastIndex = arith::SubIOp::create(b, loc, size, index(1));
                Value first = arith::MulIOp::create(
                    b, loc, ivs[dim], index(kDynamicProductChunk));
                Value product = createComplex(b, loc,
                                              {makeFloat(b, loc, part, 1.0),
                                               makeFloat(b, loc, part, 0.0)});
                for (int64_t k = 0; k < kDynamicProductChunk; ++k) {
                  Value at = arith::AddIOp::create(b, loc, first, index(k));
                  SmallVector<Value> indices(ivs);
                  indices[dim] = arith::MinUIOp::create(b, loc, at, lastIndex);
                  Value factor = loop::LoadOp::create(b, loc, source, indices);
                  Value inside = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::ult, at, size);
                  // The first number as it is (1 · z would turn an
                  // infinite part's 0 · inf into NaN).
                  product = selectComplex(
                      b, loc, inside,
                      k == 0 ? factor
                             : multiplyComplex(b, loc, product, factor),
                      product);
                }
                return product;
              });
        }
        continue;
      }
      while (shape[dim] != 1) {
        int64_t size = shape[dim];
        shape[dim] = size == 0 ? 1 : (size + 1) / 2;
        auto halfType = RankedTensorType::get(shape, dtype);
        Value source = current;
        current = buildGeneratorNode(
            rewriter, loc, halfType,
            getSizesLike(rewriter, loc, halfType, source),
            [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
              if (size == 0)
                return createComplex(b, loc,
                                     {makeFloat(b, loc, part, 1.0),
                                      makeFloat(b, loc, part, 0.0)});
              auto index = [&](int64_t value) -> Value {
                return arith::ConstantIndexOp::create(b, loc, value);
              };
              SmallVector<Value> first(ivs), second(ivs);
              first[dim] = arith::MulIOp::create(b, loc, ivs[dim], index(2));
              Value next = arith::AddIOp::create(b, loc, first[dim], index(1));
              second[dim] =
                  arith::MinUIOp::create(b, loc, next, index(size - 1));
              Value lhs = loop::LoadOp::create(b, loc, source, first);
              Value product = multiplyComplex(
                  b, loc, lhs, loop::LoadOp::create(b, loc, source, second));
              if (size % 2 == 0)
                return product;
              Value paired = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, next, index(size));
              return selectComplex(b, loc, paired, product, lhs);
            });
      }
    }
    auto resultType = cast<RankedTensorType>(op.getType());
    if (resultType == current.getType()) { // keepdim
      rewriter.replaceOp(op, current);
      return success();
    }
    SmallVector<int64_t> keptDims;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d))
        keptDims.push_back(d);
    SmallVector<Value> resultSizes =
        collectDynamicSizes(resultType, [&](int64_t d) {
          return getDimSize(rewriter, loc, current, keptDims[d]);
        });
    rewriter.replaceOp(
        op, buildIndexMapNode(rewriter, loc, current, resultType, resultSizes,
                              [&](OpBuilder &b, Location loc, ValueRange ivs) {
                                SmallVector<Value> indices;
                                Value zero =
                                    arith::ConstantIndexOp::create(b, loc, 0);
                                for (int64_t d = 0, kept = 0; d < rank; ++d)
                                  indices.push_back(llvm::is_contained(dims, d)
                                                        ? zero
                                                        : ivs[kept++]);
                                return indices;
                              }));
    return success();
  }
};

/// The cumulative product of complex `source` along its dynamic dimension
/// `dim`, in chunks of kDynamicProductChunk: a node of each element's
/// product from its chunk's start, the chunks' products (each chunk's
/// last), their cumulative product (the same way, one level deeper; at
/// the deepest level, kDynamicProductStages, one chunk is all there is),
/// and a node that multiplies each element's by the product of the chunks
/// before.
Value emitChunkedCumprod(OpBuilder &b, Location loc, Value source, int64_t dim,
                         int level) {
  auto type = cast<RankedTensorType>(source.getType());
  Value size = getDimSize(b, loc, source, dim);
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value chunk = index(b, kDynamicProductChunk);
  auto chunkOf = [&](OpBuilder &b, Value i) -> Value {
    return arith::DivUIOp::create(b, loc, i, chunk);
  };
  SmallVector<Value> sizes = getSizesLike(b, loc, type, source);
  Value within = buildGeneratorNode(
      b, loc, type, sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value i = ivs[dim];
        Value start = arith::MulIOp::create(b, loc, chunkOf(b, i), chunk);
        SmallVector<Value> indices(ivs);
        indices[dim] = start;
        Value product = loop::LoadOp::create(b, loc, source, indices);
        for (int64_t k = 1; k < kDynamicProductChunk; ++k) {
          Value at = arith::AddIOp::create(b, loc, start, index(b, k));
          indices[dim] = arith::MinUIOp::create(b, loc, at, i);
          Value factor = loop::LoadOp::create(b, loc, source, indices);
          Value takes =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, at, i);
          product = selectComplex(
              b, loc, takes, multiplyComplex(b, loc, product, factor), product);
        }
        return product;
      });
  if (level + 1 == kDynamicProductStages)
    return within;
  Value chunks = arith::CeilDivUIOp::create(b, loc, size, chunk);
  SmallVector<Value> chunkSizes =
      collectDynamicSizes(type, [&](int64_t d) -> Value {
        return d == dim ? chunks : getDimSize(b, loc, source, d);
      });
  Value lastIndex = arith::SubIOp::create(b, loc, size, index(b, 1));
  Value totals = buildGeneratorNode(
      b, loc, type, chunkSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        SmallVector<Value> indices(ivs);
        Value end = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, ivs[dim], chunk),
            index(b, kDynamicProductChunk - 1));
        indices[dim] = arith::MinUIOp::create(b, loc, end, lastIndex);
        return loop::LoadOp::create(b, loc, within, indices);
      });
  Value scanned = emitChunkedCumprod(b, loc, totals, dim, level + 1);
  return buildGeneratorNode(
      b, loc, type, sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value own = loop::LoadOp::create(b, loc, within, ivs);
        Value c = chunkOf(b, ivs[dim]);
        SmallVector<Value> before(ivs);
        before[dim] = arith::SubIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, c, index(b, 1)),
            index(b, 1));
        Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c,
                                            index(b, 0));
        return selectComplex(
            b, loc, first, own,
            multiplyComplex(
                b, loc, loop::LoadOp::create(b, loc, scanned, before), own));
      });
}

/// Lowers a complex fx.cumprod: along a static dimension as a scan of
/// ⌈log2 n⌉ nodes (Hillis and Steele's): after the node of step k, element
/// i holds the product of the up to 2k elements ending at i; along a
/// dynamic one in chunks (emitChunkedCumprod).
struct ComplexCumprodLowering : OpRewritePattern<fx::CumprodOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CumprodOp op,
                                PatternRewriter &rewriter) const override {
    // A number scans as itself.
    if (op.getSelf().getType() == op.getType() &&
        getPartType(getDtype(op.getSelf())) &&
        cast<RankedTensorType>(op.getType()).getRank() == 0) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    if (!isComplexProduct(op))
      return rewriter.notifyMatchFailure(op, "not a complex cumprod");
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value current = convertComplexElements(rewriter, loc, op.getSelf(),
                                           type.getElementType());
    int64_t dim = normalizeDim(op.getDim(), type.getRank());
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size)) {
      rewriter.replaceOp(op, emitChunkedCumprod(rewriter, loc, current, dim,
                                                /*level=*/0));
      return success();
    }
    for (int64_t step = 1; step < size; step *= 2) {
      Value source = current;
      current = buildGeneratorNode(
          rewriter, loc, type, getSizesLike(rewriter, loc, type, source),
          [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
            Value stepValue = arith::ConstantIndexOp::create(b, loc, step);
            SmallVector<Value> earlier(ivs);
            // max(i, step) - step: in range where i < step, which keeps a[i].
            earlier[dim] = arith::SubIOp::create(
                b, loc, arith::MaxUIOp::create(b, loc, ivs[dim], stepValue),
                stepValue);
            Value element = loop::LoadOp::create(b, loc, source, ivs);
            Value product = multiplyComplex(
                b, loc, element, loop::LoadOp::create(b, loc, source, earlier));
            Value reaches = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::uge, ivs[dim], stepValue);
            return selectComplex(b, loc, reaches, product, element);
          });
    }
    rewriter.replaceOp(op, current);
    return success();
  }
};

} // namespace

void fxtoloop::populateComplexLoweringPatterns(RewritePatternSet &patterns) {
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
      ComplexFromRealsLowering<fx::PolarOp>, ComplexMatmulLowering<fx::MmOp>,
      ComplexMatmulLowering<fx::BmmOp>, ComplexByPartsLowering<fx::IndexPutOp>,
      ComplexByPartsLowering<fx::ScatterAddOp>,
      ComplexVarianceLowering<fx::VarOp>,
      ComplexVarianceLowering<fx::VarMeanOp>, ComplexToCopyLowering,
      ComplexClassifyLowering<fx::IsnanOp, true>,
      ComplexClassifyLowering<fx::IsinfOp, false>, ComplexSumInDtypeLowering,
      ComplexAddMatmulLowering<fx::AddmmOp, fx::MmOp>,
      ComplexAddMatmulLowering<fx::BaddbmmOp, fx::BmmOp>, ComplexWhereLowering,
      ComplexCumsumLowering, ComplexProdLowering<fx::ProdOp>,
      ComplexProdLowering<fx::ProdDimIntOp>, ComplexCumprodLowering>(
      patterns.getContext());
}
