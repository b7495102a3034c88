//===- SplitReductionsPass.cpp - The reduction-splitting pass -------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/RowFusion.h"
#include "kiln/Dialect/Loop/Transforms/SplitReductions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

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
    SplitReductionsOptions options;
    options.minElements = minElements;
    options.maxResults = maxResults;
    options.partialResults = partialResults;
    options.columnChunk = columnChunk;
    IRRewriter rewriter(&getContext());
    for (Block *block : getBlocksWithReductions(getOperation()))
      splitReductions(rewriter, *block, options);
  }
};
} // namespace
