//===- FormAttentionPass.cpp - The kiln-loop-form-attention pass ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/AttentionFormation.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_FORMATTENTIONPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln::loop;

namespace {
struct FormAttentionPass
    : kiln::loop::impl::FormAttentionPassBase<FormAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MatmulOp> products;
    getOperation()->walk(
        [&](MatmulOp product) { products.push_back(product); });
    IRRewriter rewriter(&getContext());
    for (MatmulOp product : products)
      (void)formAttention(rewriter, product);
  }
};
} // namespace
