//===- FuseEpiloguesPass.cpp - The kiln-loop-fuse-epilogues pass ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/EpilogueFusion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_FUSEEPILOGUESPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln::loop;

namespace {
struct FuseEpiloguesPass
    : kiln::loop::impl::FuseEpiloguesPassBase<FuseEpiloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    // The blocks that hold matrix products: graph bodies.
    llvm::SetVector<Block *> blocks;
    getOperation()->walk(
        [&](MatmulOp matmul) { blocks.insert(matmul->getBlock()); });
    IRRewriter rewriter(&getContext());
    EpilogueFusionOptions options;
    options.libraryOnly = libraryOnly;
    options.tensorCoreProducts = tensorCoreProducts;
    for (Block *block : blocks)
      fuseEpilogues(rewriter, *block, options);
  }
};
} // namespace
