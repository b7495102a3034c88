//===- ContractFloatOps.cpp - Allow FMA contraction -----------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONTRACTFLOATOPSPASS
#include "kiln/Transforms/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct ContractFloatOpsPass
    : kiln::impl::ContractFloatOpsPassBase<ContractFloatOpsPass> {
  void runOnOperation() override {
    getOperation()->walk([](arith::ArithFastMathInterface op) {
      // Only the operations of a multiply-add: on casts the flag would let
      // the canonicalizer drop a rounding that PyTorch does
      // (extf(truncf(x)) -> x).
      if (!isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, arith::NegFOp>(op))
        return;
      arith::FastMathFlags flags = arith::FastMathFlags::none;
      if (arith::FastMathFlagsAttr attr = op.getFastMathFlagsAttr())
        flags = attr.getValue();
      if (bitEnumContainsAll(flags, arith::FastMathFlags::contract))
        return;
      op->setAttr(
          op.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(
              op->getContext(), flags | arith::FastMathFlags::contract));
    });
  }
};
} // namespace
