//===- SplitReductionsPass.cpp - The reduction-splitting pass -------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/SplitReductions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln::loop;

namespace {
struct SplitReductionsPass
    : kiln::loop::impl::SplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    // The blocks that hold reductions outside kernels: graph bodies.
    llvm::SetVector<Block *> blocks;
    getOperation()->walk([&](ReduceOp reduce) {
      if (!reduce->getParentOfType<KernelOp>())
        blocks.insert(reduce->getBlock());
    });
    SplitReductionsOptions options;
    options.minElements = minElements;
    options.maxResults = maxResults;
    options.partialResults = partialResults;
    IRRewriter rewriter(&getContext());
    for (Block *block : blocks)
      splitReductions(rewriter, *block, options);
  }
};
} // namespace
