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

#include <set>

using namespace mlir;
using namespace mlir::kiln::loop;

/// The number of distinct reads in a region: loads of the same tensor at
/// the same indices count once, as Inductor counts a buffer's reads (and as
/// CSE leaves them). Inlined producers often bring the same read twice: a
/// layer norm's normalized input reads the row's sum both for the mean and
/// for the variance.
static unsigned countLoads(Region &region) {
  std::set<SmallVector<const void *, 4>> reads;
  region.walk([&](LoadOp load) {
    SmallVector<const void *, 4> key = {load.getSource().getAsOpaquePointer()};
    for (Value index : load.getIndices())
      key.push_back(index.getAsOpaquePointer());
    reads.insert(std::move(key));
  });
  return reads.size();
}

/// The number of distinct reads in a node's body.
static unsigned countLoads(PointwiseOp node) {
  return countLoads(node.getBody());
}

/// The number of operations in a region, not counting the yields.
static unsigned countOps(Region &region) {
  unsigned ops = 0;
  region.walk([&](Operation *op) { ops += !isa<YieldOp>(op); });
  return ops;
}

/// The number of operations in a node's body, not counting the yield.
static unsigned countOps(PointwiseOp node) { return countOps(node.getBody()); }

/// Whether every user of `value` is an arith.extf back to `wideType`.
static bool onlyWidenedTo(Value value, Type wideType) {
  return !value.use_empty() &&
         llvm::all_of(value.getUsers(), [&](Operation *user) {
           auto ext = dyn_cast<arith::ExtFOp>(user);
           return ext && ext.getType() == wideType;
         });
}

/// Replaces `load` with `replacement`, its producer's value at the load's
/// indices, now computed before it; see inlinePointwiseLoad.
static Value replaceLoad(RewriterBase &rewriter, LoadOp load, Value replacement,
                         bool keepF32Intermediates) {
  auto rounding = replacement.getDefiningOp<arith::TruncFOp>();
  if (keepF32Intermediates && rounding &&
      !rounding->hasAttr(kExplicitRoundingAttrName) &&
      onlyWidenedTo(load.getResult(), rounding.getIn().getType())) {
    Value wide = rounding.getIn();
    for (Operation *widen : llvm::to_vector(load->getUsers()))
      rewriter.replaceOp(widen, wide);
    rewriter.eraseOp(load);
    // The rounding is dead unless the producer's body used it itself.
    if (rounding->use_empty())
      rewriter.eraseOp(rounding);
    return wide;
  }
  rewriter.replaceOp(load, replacement);
  return replacement;
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
  return replaceLoad(rewriter, load, replacement, keepF32Intermediates);
}

/// Inductor's realisation rule: whether `producer` is recomputed in each of
/// its readers, its loads and `readers` more (loads moved out of erased
/// bodies); `loads` and `ops` give its body's size, asked only when it has
/// several readers.
static bool isInlined(PointwiseOp producer, unsigned readers,
                      const InliningOptions &options,
                      function_ref<unsigned()> loads,
                      function_ref<unsigned()> ops) {
  for (Operation *user : producer->getUsers()) {
    // A tensor that something other than a load needs is materialised anyway;
    // its readers then load it instead of recomputing it.
    if (!isa<LoadOp>(user))
      return false;
    ++readers;
  }
  return readers <= 1 ||
         (loads() <= options.maxReads && ops() <= options.maxOps);
}

bool mlir::kiln::loop::shouldInline(PointwiseOp producer,
                                    const InliningOptions &options) {
  return isInlined(
      producer, 0, options, [&] { return countLoads(producer); },
      [&] { return countOps(producer); });
}

/// Whether `a` holds fewer operations than `b`, in time linear in the fewer.
static bool hasFewerOps(Block &a, Block &b) {
  Block::iterator i = a.begin(), j = b.begin();
  while (i != a.end() && j != b.end())
    ++i, ++j;
  return i == a.end() && j != b.end();
}

/// Moves the ops of `producer`'s body, whose yield is gone, before `load`,
/// evaluated at its indices, leaving the body empty.
static void moveBody(RewriterBase &rewriter, PointwiseOp producer,
                     LoadOp load) {
  Block &body = producer.getBody().front();
  Block *block = load->getBlock();
  // Where the load reads the producer at the reader's own indices, the
  // reader's ops can move around the producer's instead, into its block:
  // fewer of them when the producer has absorbed a chain.
  if (!block->isEntryBlock() || !isNode(block->getParentOp()) ||
      !llvm::equal(load.getIndices(), block->getArguments()) ||
      !hasFewerOps(*block, body)) {
    rewriter.inlineBlockBefore(&body, load, load.getIndices());
    return;
  }
  Region &region = *block->getParent();
  SmallVector<Location> argLocs = llvm::map_to_vector(
      block->getArguments(), [](BlockArgument arg) { return arg.getLoc(); });
  Block *tail = rewriter.splitBlock(block, std::next(load->getIterator()));
  rewriter.inlineBlockBefore(block, &body, body.begin(), body.getArguments());
  rewriter.inlineBlockBefore(tail, &body, body.end());
  rewriter.inlineRegionBefore(producer.getBody(), region, region.end());
  for (auto [arg, loc] : llvm::zip_equal(body.getArguments(), argLocs))
    arg.setLoc(loc);
}

/// The pointwise node whose tensor `load` reads, if any.
static PointwiseOp getProducer(LoadOp load) {
  return load.getSource().getDefiningOp<PointwiseOp>();
}

namespace {
/// Inlines the producers of every node below a root, producers first, as
/// inlinePointwiseProducers documents, walking each body once, when its node
/// is visited: what its readers need of it afterwards (how many loads it
/// has, which of them read pointwise nodes) is recorded then. A producer
/// whose last reader absorbs it gives that reader its ops instead of a copy,
/// so that a chain of N single-reader nodes collapses into its last node in
/// O(N), not O(N^2). The result is the same as copying every producer and
/// erasing the dead ones at the end.
class Inliner {
public:
  Inliner(RewriterBase &rewriter, const InliningOptions &options)
      : rewriter(rewriter), options(options) {}

  void run(Operation *root);

private:
  /// A visited node's body, which no longer changes.
  struct Summary {
    unsigned loads = 0;
    /// The loads of pointwise nodes, in the body's order.
    SmallVector<LoadOp> candidates;
  };

  /// Inlines into `consumer` the producers it may absorb, until none is left.
  void inlineInto(Operation *consumer);
  /// Inlines the producer of `load`, appending the loads of pointwise nodes
  /// that the producer's body brings to `candidates`.
  void inlineLoad(LoadOp load, PointwiseOp producer,
                  SmallVectorImpl<LoadOp> &candidates);
  bool shouldInline(PointwiseOp producer);
  unsigned getLoads(PointwiseOp producer);
  unsigned getOps(PointwiseOp producer);

  RewriterBase &rewriter;
  const InliningOptions &options;
  DenseMap<Operation *, Summary> summaries;
  DenseMap<Operation *, unsigned> opCounts;
  /// Per pointwise node, the loads of it that were moved out of the body of
  /// a producer erased early. Copied instead, they would have stayed in
  /// that dead body until the end, each still a reader of the node.
  DenseMap<Operation *, unsigned> movedReaders;
  DenseSet<Operation *> erased;
};
} // namespace

unsigned Inliner::getLoads(PointwiseOp producer) {
  auto it = summaries.find(producer);
  return it != summaries.end() ? it->second.loads : countLoads(producer);
}

unsigned Inliner::getOps(PointwiseOp producer) {
  // Only a visited node's body is final.
  if (!summaries.contains(producer))
    return countOps(producer);
  auto [it, inserted] = opCounts.try_emplace(producer, 0);
  if (inserted)
    it->second = countOps(producer);
  return it->second;
}

bool Inliner::shouldInline(PointwiseOp producer) {
  return isInlined(
      producer, movedReaders.lookup(producer), options,
      [&] { return getLoads(producer); }, [&] { return getOps(producer); });
}

void Inliner::inlineLoad(LoadOp load, PointwiseOp producer,
                         SmallVectorImpl<LoadOp> &candidates) {
  auto summary = summaries.find(producer);
  if (summary != summaries.end() && producer->hasOneUse()) {
    // `load` is the last reader: the producer's ops move before it, and the
    // producer, dead, goes now rather than at the end.
    for (LoadOp moved : summary->second.candidates) {
      ++movedReaders[getProducer(moved)];
      candidates.push_back(moved);
    }
    YieldOp yield = producer.getYield();
    Value value = yield.getValue();
    rewriter.eraseOp(yield);
    moveBody(rewriter, producer, load);
    replaceLoad(rewriter, load, value, options.keepF32Intermediates);
    summaries.erase(summary);
    opCounts.erase(producer);
    movedReaders.erase(producer);
    erased.insert(producer);
    rewriter.eraseOp(producer);
    return;
  }
  IRMapping mapping;
  mapping.map(producer.getInductionVars(), load.getIndices());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(load);
  for (Operation &op : producer.getBody().front().without_terminator())
    rewriter.clone(op, mapping);
  auto addCopy = [&](LoadOp original) {
    candidates.push_back(
        mapping.lookup(original.getResult()).getDefiningOp<LoadOp>());
  };
  if (summary != summaries.end()) {
    llvm::for_each(summary->second.candidates, addCopy);
  } else {
    producer.getBody().walk([&](LoadOp original) {
      if (getProducer(original))
        addCopy(original);
    });
  }
  Value replacement = mapping.lookupOrDefault(producer.getYield().getValue());
  replaceLoad(rewriter, load, replacement, options.keepF32Intermediates);
}

void Inliner::inlineInto(Operation *consumer) {
  // Each round looks at the loads of pointwise nodes present when it starts,
  // in the body's order; what they bring is for the next round.
  unsigned reads = 0;
  unsigned ops = countOps(consumer->getRegion(0));
  SmallVector<LoadOp> candidates;
  consumer->getRegion(0).walk([&](LoadOp load) {
    ++reads;
    if (getProducer(load))
      candidates.push_back(load);
  });
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<LoadOp> next;
    for (LoadOp load : candidates) {
      PointwiseOp producer = getProducer(load);
      // Reads bound what recomputation brings: a producer that this load
      // alone reads moves whole, and its tensor need not be written.
      bool onlyReader = producer->hasOneUse() && !movedReaders.lookup(producer);
      if (!shouldInline(producer) ||
          (!onlyReader &&
           reads - 1 + getLoads(producer) > options.maxConsumerReads) ||
          ops - 1 + getOps(producer) > options.maxConsumerOps) {
        next.push_back(load);
        continue;
      }
      reads = reads - 1 + getLoads(producer);
      ops = ops - 1 + getOps(producer);
      inlineLoad(load, producer, next);
      changed = true;
    }
    candidates = std::move(next);
  }
  summaries[consumer] = {countLoads(consumer->getRegion(0)),
                         std::move(candidates)};
}

void Inliner::run(Operation *root) {
  SmallVector<Operation *> nodes;
  root->walk([&](Operation *op) {
    if (isNode(op))
      nodes.push_back(op);
  });
  for (Operation *consumer : nodes)
    inlineInto(consumer);
  // Erase producers whose readers all absorbed them, consumers first so that
  // their producers lose their last reader before being visited. Results of
  // reductions are never inlined; only pointwise nodes can have lost theirs.
  for (Operation *node : llvm::reverse(nodes)) {
    if (!erased.contains(node) && isa<PointwiseOp>(node) && node->use_empty())
      rewriter.eraseOp(node);
  }
}

void mlir::kiln::loop::inlinePointwiseProducers(
    RewriterBase &rewriter, Operation *root, const InliningOptions &options) {
  Inliner(rewriter, options).run(root);
}
