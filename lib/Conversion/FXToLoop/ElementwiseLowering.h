//===- ElementwiseLowering.h - The elementwise pattern ----------*- C++ -*-===//
//
// Part of Kiln. Elementwise fx ops lower through one pattern template, which
// ElementwiseLowering.cpp and MathLowering.cpp instantiate.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_FXTOLOOP_ELEMENTWISELOWERING_H
#define KILN_LIB_CONVERSION_FXTOLOOP_ELEMENTWISELOWERING_H

#include "LoweringUtils.h"
#include "kiln/Conversion/FXToLoop/FXToLoop.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln::fxtoloop {

/// The dtype math on `dtype` runs in: f32 for f16/bf16 with `computeInF32`
/// (widened after loads, rounded before yields), else `dtype` itself.
inline Type getComputeDtype(Type dtype, bool computeInF32) {
  if (computeInF32 && (dtype.isF16() || dtype.isBF16()))
    return Float32Type::get(dtype.getContext());
  return dtype;
}

/// Lowers an elementwise fx op whose scalar semantics `Derived` supplies in
/// `computeElement`. Complex dtypes are left to a later lowering.
template <typename OpTy, typename Derived>
struct ElementwiseLowering : OpRewritePattern<OpTy> {
  ElementwiseLowering(MLIRContext *ctx, const FXToLoopOptions &options)
      : OpRewritePattern<OpTy>(ctx), options(options) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type dtype = resultType.getElementType();
    if (isa<ComplexType>(dtype))
      return rewriter.notifyMatchFailure(op, "complex dtypes not lowered yet");
    for (Value operand : op->getOperands()) {
      if (isa<ComplexType>(
              cast<RankedTensorType>(operand.getType()).getElementType()))
        return rewriter.notifyMatchFailure(op, "complex operand");
    }
    if (failed(static_cast<const Derived *>(this)->checkSupported(op)))
      return rewriter.notifyMatchFailure(op, "unsupported attribute values");

    const Derived &derived = *static_cast<const Derived *>(this);
    Type computeDtype = fxtoloop::getComputeDtype(derived.getComputeDtype(op),
                                                  options.computeInF32);
    SmallVector<Type> inputDtypes = derived.getInputDtypes(op, computeDtype);
    Value result = buildBroadcastPointwise(
        rewriter, op.getLoc(), resultType, op->getOperands(), inputDtypes,
        derived.getBodyDtype(op, computeDtype),
        [&](OpBuilder &b, Location loc, ValueRange elements) {
          return derived.computeElement(op, b, loc, elements, computeDtype);
        });
    if (derived.isExplicitConversion()) {
      auto node = result.getDefiningOp<loop::PointwiseOp>();
      if (auto rounding =
              node.getYield().getValue().getDefiningOp<arith::TruncFOp>())
        rounding->setAttr(loop::kExplicitRoundingAttrName,
                          rewriter.getUnitAttr());
    }
    if (options.runtimeChecks)
      derived.addRuntimeChecks(op, rewriter, op.getLoc(), computeDtype);
    rewriter.replaceOp(op, result);
    return success();
  }

  LogicalResult checkSupported(OpTy) const { return success(); }

  /// Adds the run-time checks that eager makes of the operands' values
  /// (buildRuntimeCheck): none by default.
  void addRuntimeChecks(OpTy, OpBuilder &, Location, Type computeDtype) const {}

  /// Whether the op converts dtypes because the program asks for it: its
  /// rounding stays, where Kiln's own roundings of f32 values may go.
  bool isExplicitConversion() const { return false; }

  /// The dtype the body computes in (before f16/bf16 become f32): by
  /// default the result's.
  Type getComputeDtype(OpTy op) const {
    return cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  }

  /// The dtype each operand's elements are converted to.
  SmallVector<Type> getInputDtypes(OpTy op, Type computeDtype) const {
    return SmallVector<Type>(op->getNumOperands(), computeDtype);
  }

  /// The dtype of the body's value, converted to the result's afterwards.
  Type getBodyDtype(OpTy, Type computeDtype) const { return computeDtype; }

  FXToLoopOptions options;
};

} // namespace mlir::kiln::fxtoloop

#endif // KILN_LIB_CONVERSION_FXTOLOOP_ELEMENTWISELOWERING_H
