//===- Inlining.cpp - Inlining pointwise producers ------------------------===//
//
// Part of Kiln. A pointwise producer read through loop.load is recomputed in
// its reader instead of being materialised: one pass over memory, not two.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Inlining.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln::loop;

/// The number of loads in a node's body.
static unsigned countLoads(PointwiseOp node) {
  unsigned loads = 0;
  node.getBody().walk([&](LoadOp) { ++loads; });
  return loads;
}

/// The number of operations in a node's body, not counting the yield.
static unsigned countOps(PointwiseOp node) {
  unsigned ops = 0;
  node.getBody().walk([&](Operation *op) { ops += !isa<YieldOp>(op); });
  return ops;
}

/// Whether every user of `value` is an arith.extf back to `wideType`.
static bool onlyWidenedTo(Value value, Type wideType) {
  return !value.use_empty() &&
         llvm::all_of(value.getUsers(), [&](Operation *user) {
           auto ext = dyn_cast<arith::ExtFOp>(user);
           return ext && ext.getType() == wideType;
         });
}

FailureOr<Value>
mlir::kiln::loop::inlinePointwiseLoad(RewriterBase &rewriter, LoadOp load,
                                      bool keepF32Intermediates) {
  auto producer = load.getSource().getDefiningOp<PointwiseOp>();
  if (!producer)
    return failure();
  IRMapping mapping;
  mapping.map(producer.getInductionVars(), load.getIndices());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(load);
  for (Operation &op : producer.getBody().front().without_terminator())
    rewriter.clone(op, mapping);
  Value replacement = mapping.lookupOrDefault(producer.getYield().getValue());
  auto rounding = replacement.getDefiningOp<arith::TruncFOp>();
  if (keepF32Intermediates && rounding &&
      !rounding->hasAttr(kExplicitRoundingAttrName) &&
      onlyWidenedTo(load.getResult(), rounding.getIn().getType())) {
    for (Operation *widen : llvm::to_vector(load->getUsers()))
      rewriter.replaceOp(widen, rounding.getIn());
    rewriter.eraseOp(load);
    // The rounding is dead unless the producer's body used it itself.
    if (rounding->use_empty())
      rewriter.eraseOp(rounding);
    return Value(rounding.getIn());
  }
  rewriter.replaceOp(load, replacement);
  return replacement;
}

bool mlir::kiln::loop::shouldInline(PointwiseOp producer,
                                    const InliningOptions &options) {
  unsigned readers = 0;
  for (Operation *user : producer->getUsers()) {
    // A tensor that something other than a load needs is materialised anyway;
    // its readers then load it instead of recomputing it.
    if (!isa<LoadOp>(user))
      return false;
    ++readers;
  }
  if (readers <= 1)
    return true;
  return countLoads(producer) <= options.maxReads &&
         countOps(producer) <= options.maxOps;
}

/// Inlines into `consumer` (a pointwise or reduction node) the producers it
/// may absorb, until none is left.
static void inlineIntoConsumer(RewriterBase &rewriter, Operation *consumer,
                               const InliningOptions &options) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<LoadOp> loads;
    consumer->getRegion(0).walk([&](LoadOp load) { loads.push_back(load); });
    unsigned consumerReads = loads.size();
    for (LoadOp load : loads) {
      auto producer = load.getSource().getDefiningOp<PointwiseOp>();
      if (!producer || !shouldInline(producer, options))
        continue;
      unsigned producerReads = countLoads(producer);
      if (consumerReads - 1 + producerReads > options.maxConsumerReads)
        continue;
      consumerReads = consumerReads - 1 + producerReads;
      (void)inlinePointwiseLoad(rewriter, load, options.keepF32Intermediates);
      changed = true;
    }
  }
}

void mlir::kiln::loop::inlinePointwiseProducers(
    RewriterBase &rewriter, Operation *root, const InliningOptions &options) {
  SmallVector<Operation *> nodes;
  root->walk([&](Operation *op) {
    if (isNode(op))
      nodes.push_back(op);
  });
  for (Operation *consumer : nodes)
    inlineIntoConsumer(rewriter, consumer, options);
  // Erase producers whose readers all absorbed them, consumers first so that
  // their producers lose their last reader before being visited. Results of
  // reductions are never inlined; only pointwise nodes can have lost theirs.
  for (Operation *node : llvm::reverse(nodes)) {
    if (isa<PointwiseOp>(node) && node->use_empty())
      rewriter.eraseOp(node);
  }
}
