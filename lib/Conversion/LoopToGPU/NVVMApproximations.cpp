//===- NVVMApproximations.cpp - One-instruction exp2 and reciprocals ------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_NVVMAPPROXIMATIONSPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Applies `scalarFn` to `value` (f32), or to each element of a vector of f32.
static Value mapElements(OpBuilder &b, Location loc, Value value,
                         function_ref<Value(Value)> scalarFn) {
  auto vectorType = dyn_cast<VectorType>(value.getType());
  if (!vectorType)
    return scalarFn(value);
  SmallVector<Value> elements;
  for (int64_t k = 0, e = vectorType.getNumElements(); k < e; ++k)
    elements.push_back(
        scalarFn(vector::ExtractOp::create(b, loc, value, ArrayRef{k})));
  return vector::FromElementsOp::create(b, loc, vectorType, elements);
}

/// Whether `type` is f32 or a 1-D vector of f32.
static bool isF32OrVector(Type type) {
  auto vectorType = dyn_cast<VectorType>(type);
  if (vectorType && vectorType.getRank() != 1)
    return false;
  return getElementTypeOrSelf(type).isF32();
}

/// Whether `value` is 1.0: a constant, a splat, or a broadcast of one.
static bool isOne(Value value) {
  if (auto broadcast = value.getDefiningOp<vector::BroadcastOp>())
    value = broadcast.getSource();
  return matchPattern(value, m_OneFloat());
}

struct NVVMApproximationsPass
    : kiln::impl::NVVMApproximationsPassBase<NVVMApproximationsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](gpu::LaunchOp launch) {
      launch.getBody().walk([&](Operation *op) {
        if (isa<math::Exp2Op, math::TanhOp, arith::DivFOp>(op))
          candidates.push_back(op);
      });
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : candidates) {
      if (auto exp2 = dyn_cast<math::Exp2Op>(op))
        rewriteExp2(rewriter, exp2);
      else if (auto tanh = dyn_cast<math::TanhOp>(op))
        rewriteTanh(rewriter, tanh);
      else if (!rewriteReciprocal(rewriter, cast<arith::DivFOp>(op)))
        rewriteConstantDivisor(rewriter, cast<arith::DivFOp>(op));
    }
  }

  /// f32 `tanh` marked `afn`: `tanh.approx.f32` (sm_75 and later), one
  /// instruction for libdevice's exp2, reciprocal and polynomial.
  static void rewriteTanh(IRRewriter &rewriter, math::TanhOp op) {
    if (!isF32OrVector(op.getType()) ||
        !bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn))
      return;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value result =
        mapElements(rewriter, loc, op.getOperand(), [&](Value x) -> Value {
          // The NVPTX back end selects tanh.approx.f32 for an afn tanh.
          return LLVM::TanhOp::create(rewriter, loc, rewriter.getF32Type(), x,
                                      LLVM::FastmathFlags::afn)
              .getResult();
        });
    rewriter.replaceOp(op, result);
  }

  /// f32 `x / c` marked `afn`, for a finite, nonzero scalar constant `c`:
  /// `x * (1 / c)`, a multiply for IEEE division's dozen instructions.
  static void rewriteConstantDivisor(IRRewriter &rewriter, arith::DivFOp op) {
    FloatAttr divisor;
    if (!op.getType().isF32() ||
        !bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn) ||
        !matchPattern(op.getRhs(), m_Constant(&divisor)))
      return;
    double value = divisor.getValueAsDouble();
    if (value == 0.0 || !std::isfinite(value))
      return;
    rewriter.setInsertionPoint(op);
    Value inverse = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        rewriter.getF32FloatAttr(static_cast<float>(1.0 / value)));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, op.getLhs(), inverse,
                                               op.getFastmath());
  }

  static void rewriteExp2(IRRewriter &rewriter, math::Exp2Op op) {
    if (!isF32OrVector(op.getType()))
      return;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value result =
        mapElements(rewriter, loc, op.getOperand(), [&](Value x) -> Value {
          return LLVM::CallIntrinsicOp::create(
                     rewriter, loc, rewriter.getF32Type(),
                     rewriter.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
                     ValueRange{x})
              .getResult(0);
        });
    rewriter.replaceOp(op, result);
  }

  /// `1 / x` marked `afn`: its caller accepts an approximate reciprocal.
  /// Returns whether it rewrote `op`.
  static bool rewriteReciprocal(IRRewriter &rewriter, arith::DivFOp op) {
    if (!isF32OrVector(op.getType()) ||
        !bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn) ||
        !isOne(op.getLhs()))
      return false;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value result = mapElements(rewriter, loc, op.getRhs(), [&](Value x) {
      return NVVM::RcpApproxFtzF32Op::create(rewriter, loc,
                                             rewriter.getF32Type(), x)
          .getResult();
    });
    rewriter.replaceOp(op, result);
    return true;
  }
};
} // namespace
