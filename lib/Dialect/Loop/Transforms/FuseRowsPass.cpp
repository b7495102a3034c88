//===- FuseRowsPass.cpp - The row-kernel fusion passes --------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/RowFusion.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_FUSEROWSPASS
#define GEN_PASS_DEF_FUSESIBLINGSPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln::loop;

namespace {
struct FuseRowsPass : kiln::loop::impl::FuseRowsPassBase<FuseRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (Block *block : getBlocksWithReductions(getOperation()))
      fuseRows(rewriter, *block);
  }
};

struct FuseSiblingsPass
    : kiln::loop::impl::FuseSiblingsPassBase<FuseSiblingsPass> {
  using Base::Base;

  void runOnOperation() override {
    // The blocks that hold nodes outside kernels: graph bodies.
    llvm::SetVector<Block *> blocks;
    getOperation()->walk([&](Operation *op) {
      if (isNode(op) && !op->getParentOfType<KernelOp>())
        blocks.insert(op->getBlock());
    });
    IRRewriter rewriter(&getContext());
    for (Block *block : blocks)
      fuseSiblings(rewriter, *block, minRowBytes);
  }
};
} // namespace
