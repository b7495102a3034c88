//===- InlinePointwisePass.cpp - The kiln-loop-inline pass ----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_INLINEPOINTWISEPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln::loop;

namespace {
struct InlinePointwisePass
    : kiln::loop::impl::InlinePointwisePassBase<InlinePointwisePass> {
  using Base::Base;

  void runOnOperation() override {
    InliningOptions options;
    options.maxReads = maxReads;
    options.maxOps = maxOps;
    options.maxConsumerReads = maxConsumerReads;
    options.maxConsumerOps = maxConsumerOps;
    options.keepF32Intermediates = keepF32Intermediates;
    IRRewriter rewriter(&getContext());
    inlinePointwiseProducers(rewriter, getOperation(), options);
  }
};
} // namespace
