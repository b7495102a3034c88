//===- ExpandAttention.cpp - loop.attention as products and a softmax -----===//
//
// Part of Kiln. kiln-loop-expand-attention: each loop.attention that the
// target computes no other way into its scores' product, a softmax and the
// product with the values (loop::buildAttentionNodes), and each
// loop.attention_backward into its products (loop::buildAttentionGradients).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/AttentionBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_EXPANDATTENTIONPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

namespace {

struct ExpandAttentionPass
    : kiln::loop::impl::ExpandAttentionPassBase<ExpandAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AttentionOp> nodes;
    SmallVector<AttentionBackwardOp> gradients;
    getOperation()->walk([&](Operation *op) {
      if (auto node = dyn_cast<AttentionOp>(op)) {
        if (!kernels || !hasAttentionKernel(node))
          nodes.push_back(node);
      } else if (auto node = dyn_cast<AttentionBackwardOp>(op)) {
        if (!kernels || !hasAttentionBackwardKernel(node))
          gradients.push_back(node);
      }
    });
    IRRewriter rewriter(&getContext());
    for (AttentionOp node : nodes) {
      rewriter.setInsertionPoint(node);
      AttentionNodes expanded = buildAttentionNodes(
          rewriter, node.getLoc(), node.getQuery(), node.getKey(),
          node.getValue(), node.getCausal(), node.getScale().convertToDouble(),
          node.getResultType(),
          [&](OpBuilder &b, Location, ValueRange ivs, Value score) {
            return applyScoreModifier(b, node, ivs, score);
          });
      SmallVector<Value> results{expanded.output};
      if (Value logsumexp = node.getLogsumexp())
        results.push_back(buildAttentionLogsumexp(
            rewriter, node.getLoc(), expanded,
            cast<RankedTensorType>(logsumexp.getType())));
      rewriter.replaceOp(node, results);
    }
    for (AttentionBackwardOp node : gradients) {
      rewriter.setInsertionPoint(node);
      AttentionGradients expanded = buildAttentionGradients(rewriter, node);
      rewriter.replaceOp(node, {expanded.query, expanded.key, expanded.value});
    }
  }
};

} // namespace
