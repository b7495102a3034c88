//===- LoopToSCF.cpp - Bufferizing graphs into SCF loops ------------------===//
//
// Part of Kiln. The CPU's way to bufferize a graph: each loop node becomes an
// scf.parallel (or scf.for) nest, temporaries are memref.alloc'd.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Conversion/Bufferization/GraphBufferization.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOSCFPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// Emits the loop nest of `node` storing into `dest`.
static void emitSCFLoops(OpBuilder &b, loop::PointwiseOp node, Value dest,
                         IRMapping &mapping, bool parallel) {
  Location loc = node.getLoc();
  SmallVector<Value> upperBounds = getNodeSizes(b, loc, node, mapping);
  if (upperBounds.empty()) {
    emitNodeBody(b, node, dest, mapping, {});
    return;
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lowerBounds(upperBounds.size(), zero);
  SmallVector<Value> steps(upperBounds.size(), one);
  auto body = [&](OpBuilder &nested, Location, ValueRange ivs) {
    emitNodeBody(nested, node, dest, mapping, ivs);
  };
  if (parallel)
    scf::ParallelOp::create(b, loc, lowerBounds, upperBounds, steps, body);
  else
    scf::buildLoopNest(b, loc, lowerBounds, upperBounds, steps, body);
}

GraphBufferizationTarget
mlir::kiln::getSCFBufferizationTarget(const LoopToSCFOptions &options) {
  GraphBufferizationTarget target;
  bool parallel = options.parallel;
  target.emitNode = [parallel](OpBuilder &b, loop::PointwiseOp node, Value dest,
                               IRMapping &mapping, ValueRange) {
    emitSCFLoops(b, node, dest, mapping, parallel);
  };
  target.allocate = [](OpBuilder &b, Location loc, MemRefType type,
                       ValueRange dynamicSizes, ValueRange) -> Value {
    return memref::AllocOp::create(b, loc, type, dynamicSizes);
  };
  target.deallocate = [](OpBuilder &b, Location loc, Value buffer, ValueRange) {
    memref::DeallocOp::create(b, loc, buffer);
  };
  target.copy = [](OpBuilder &b, Location loc, Value source, Value dest,
                   ValueRange) {
    memref::CopyOp::create(b, loc, source, dest);
  };
  return target;
}

namespace {
struct ConvertLoopToSCFPass
    : kiln::impl::ConvertLoopToSCFPassBase<ConvertLoopToSCFPass> {
  using Base::Base;

  void runOnOperation() override {
    LoopToSCFOptions options;
    options.parallel = parallel;
    GraphBufferizationTarget target = getSCFBufferizationTarget(options);
    if (failed(bufferizeGraphs(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
