//===- ComplexLowering.h - Complex numbers as their parts -------*- C++ -*-===//
//
// Part of Kiln. The lowerings of complex numbers compute on the numbers'
// real and imaginary parts; these are the helpers and the pattern template
// that ComplexLowering.cpp and ComplexMathLowering.cpp share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_FXTOLOOP_COMPLEXLOWERING_H
#define KILN_LIB_CONVERSION_FXTOLOOP_COMPLEXLOWERING_H

#include "LoweringUtils.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln::fxtoloop {

/// The real and imaginary parts of a complex number.
struct Parts {
  Value re, im;
};

/// `element`, of PyTorch dtype `dtype` (complex or real), as parts of type
/// `part`: a real number has imaginary part 0.
Parts getParts(OpBuilder &b, Location loc, Value element, Type dtype,
               FloatType part);

/// The arithmetic that has a complex form here.
enum class ComplexKind { Add, Sub, Mul, Div, Neg };

/// `lhs <kind> rhs` on complex parts, as c10::complex computes it.
Parts emitComplex(OpBuilder &b, Location loc, ComplexKind kind, Parts lhs,
                  Parts rhs);

/// The scalar `alpha` times `parts`, unless it is absent or 1.
Parts scaleByAlpha(OpBuilder &b, Location loc, Parts parts,
                   std::optional<Attribute> alpha);

/// The f32 or f64 parts of complex dtype `dtype`, or null.
FloatType getPartType(Type dtype);

/// The dtype of the elements of `value`, a tensor.
Type getDtype(Value value);

/// Lowers an op to, from or on complex numbers to one pointwise node over
/// its broadcast operands. `Derived` gives the parts' type (`getPart`, null
/// if it does not apply), the dtypes the operands' elements are read as
/// (`getInputDtypes`; by default their own), the body's dtype
/// (`getBodyDtype`; by default the result's) and the body (`compute`).
template <typename OpTy, typename Derived>
struct PartsLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    const Derived &derived = *static_cast<const Derived *>(this);
    FloatType part = derived.getPart(op);
    if (!part)
      return rewriter.notifyMatchFailure(op, "no f32 or f64 parts");
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Type> inputDtypes = derived.getInputDtypes(op, part);
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), type, op->getOperands(), inputDtypes,
        derived.getBodyDtype(op, part),
        [&](OpBuilder &b, Location loc, ValueRange elements) -> Value {
          return derived.compute(op, b, loc, elements, inputDtypes, part);
        });
    // A cast that the program asks for keeps its rounding (inlining may
    // drop Kiln's own roundings of f32 values).
    if (derived.isExplicitConversion())
      if (auto rounding = result.getDefiningOp<loop::PointwiseOp>()
                              .getYield()
                              .getValue()
                              .getDefiningOp<arith::TruncFOp>())
        rounding->setAttr(loop::kExplicitRoundingAttrName,
                          rewriter.getUnitAttr());
    rewriter.replaceOp(op, result);
    return success();
  }

  bool isExplicitConversion() const { return false; }

  /// By default, the parts of the complex result.
  FloatType getPart(OpTy op) const {
    return getPartType(getDtype(op->getResult(0)));
  }
  SmallVector<Type> getInputDtypes(OpTy op, FloatType) const {
    return llvm::map_to_vector(op->getOperands(), getDtype);
  }
  Type getBodyDtype(OpTy op, FloatType) const {
    return getDtype(op->getResult(0));
  }
};

/// The complex number with parts `parts`, of type complex<part>.
Value createComplex(OpBuilder &b, Location loc, Parts parts);

/// The parts of a binary op's second operand: the scalar attribute `other`
/// of its `*_scalar` form (`Scalar`), else its element.
template <bool Scalar, typename OpTy>
Parts getOtherParts(OpTy op, OpBuilder &b, Location loc, ValueRange elements,
                    ArrayRef<Type> dtypes, FloatType part) {
  if constexpr (Scalar)
    return {makeScalar(b, loc, op.getOther(), part),
            makeFloat(b, loc, part, 0.0)};
  else
    return getParts(b, loc, elements[1], dtypes[1], part);
}

} // namespace mlir::kiln::fxtoloop

#endif // KILN_LIB_CONVERSION_FXTOLOOP_COMPLEXLOWERING_H
