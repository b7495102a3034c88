//===- LoopCSEPass.cpp - The kiln-loop-cse pass ---------------------------===//
//
// Part of Kiln. Upstream's CSE algorithm, whose hash of an operation with
// regions covers the regions' operations: a loop node has no operands to
// tell it from the others, so upstream's hash puts every node of a type in
// one bucket, and a graph's CSE compares its nodes pairwise.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopedHashTable.h"
#include "llvm/Support/RecyclingAllocator.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_LOOPCSEPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;

namespace {
/// Upstream CSE's equivalence of operations, with a hash that also covers
/// the operations nested in them. Equivalent operations have nested
/// operations alike but for the values they define, which the hash leaves
/// out, so they still hash alike.
struct DeepOperationInfo : llvm::DenseMapInfo<Operation *> {
  static unsigned getHashValue(const Operation *constOp) {
    auto *op = const_cast<Operation *>(constOp);
    llvm::hash_code hash = OperationEquivalence::computeHash(
        op, OperationEquivalence::directHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
    if (op->getNumRegions() == 0)
      return hash;
    auto hashOperand = [&](Value value) -> llvm::hash_code {
      Region *region = value.getParentRegion();
      if (region && op->isAncestor(region->getParentOp()))
        return llvm::hash_code{};
      return hash_value(value);
    };
    op->walk([&](Operation *nested) {
      if (nested != op)
        hash = llvm::hash_combine(hash,
                                  OperationEquivalence::computeHash(
                                      nested, hashOperand,
                                      OperationEquivalence::ignoreHashValue,
                                      OperationEquivalence::IgnoreLocations));
    });
    return hash;
  }

  static bool isEqual(const Operation *constLhs, const Operation *constRhs) {
    if (constLhs == constRhs)
      return true;
    if (constLhs == getEmptyKey() || constLhs == getTombstoneKey() ||
        constRhs == getEmptyKey() || constRhs == getTombstoneKey())
      return false;
    return OperationEquivalence::isEquivalentTo(
        const_cast<Operation *>(constLhs), const_cast<Operation *>(constRhs),
        OperationEquivalence::IgnoreLocations);
  }
};

/// Upstream's CSE (mlir/lib/Transforms/CSE.cpp) over DeepOperationInfo.
class Driver {
public:
  Driver(RewriterBase &rewriter, DominanceInfo &domInfo)
      : rewriter(rewriter), domInfo(domInfo) {}

  /// Simplifies the regions of `root`; returns whether anything changed.
  bool simplify(Operation *root);

private:
  using Allocator = llvm::RecyclingAllocator<
      llvm::BumpPtrAllocator,
      llvm::ScopedHashTableVal<Operation *, Operation *>>;
  using KnownOps = llvm::ScopedHashTable<Operation *, Operation *,
                                         DeepOperationInfo, Allocator>;

  void simplifyRegion(KnownOps &known, Region &region);
  void simplifyBlock(KnownOps &known, Block &block, bool hasSSADominance);
  /// Whether `op` was marked for erasure.
  bool simplifyOperation(KnownOps &known, Operation *op, bool hasSSADominance);
  void replace(KnownOps &known, Operation *op, Operation *existing,
               bool hasSSADominance);
  /// Whether an operation between `from` and `to`, in one block, may write.
  bool writesBetween(Operation *from, Operation *to);

  RewriterBase &rewriter;
  DominanceInfo &domInfo;
  SmallVector<Operation *> opsToErase;
  /// Per operation that reads, how far after it no write was found (null
  /// effect), or the first write found (the write effect).
  DenseMap<Operation *, std::pair<Operation *, MemoryEffects::Effect *>>
      writesAfter;
};
} // namespace

void Driver::replace(KnownOps &known, Operation *op, Operation *existing,
                     bool hasSSADominance) {
  if (hasSSADominance) {
    // No use of `op` has been visited yet.
    rewriter.replaceAllUsesWith(op->getResults(), existing->getResults());
    opsToErase.push_back(op);
  } else {
    // Uses already visited keep `op`.
    rewriter.replaceUsesWithIf(
        op->getResults(), existing->getResults(),
        [&](OpOperand &use) { return !known.count(use.getOwner()); });
    if (op->use_empty())
      opsToErase.push_back(op);
  }
  if (isa<UnknownLoc>(existing->getLoc()) && !isa<UnknownLoc>(op->getLoc()))
    existing->setLoc(op->getLoc());
}

bool Driver::writesBetween(Operation *from, Operation *to) {
  Operation *next = from->getNextNode();
  auto [entry, inserted] =
      writesAfter.try_emplace(from, std::make_pair(from, nullptr));
  if (!inserted) {
    if (entry->second.second)
      return true;
    next = entry->second.first;
  }
  for (; next && next != to; next = next->getNextNode()) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(next);
    // Unknown effects may write.
    bool writes = !effects || llvm::any_of(*effects, [](auto &effect) {
      return isa<MemoryEffects::Write>(effect.getEffect());
    });
    if (writes) {
      entry->second = {next, MemoryEffects::Write::get()};
      return true;
    }
  }
  entry->second = {to, nullptr};
  return false;
}

bool Driver::simplifyOperation(KnownOps &known, Operation *op,
                               bool hasSSADominance) {
  if (op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (isOpTriviallyDead(op)) {
    opsToErase.push_back(op);
    return true;
  }
  if (!llvm::all_of(op->getRegions(),
                    [](Region &r) { return r.empty() || r.hasOneBlock(); }))
    return false;
  if (!isMemoryEffectFree(op)) {
    // Of operations with effects, only ones that just read, with no write
    // in between, in one block.
    if (!hasSingleEffect<MemoryEffects::Read>(op))
      return false;
    if (Operation *existing = known.lookup(op)) {
      if (existing->getBlock() == op->getBlock() &&
          !writesBetween(existing, op)) {
        replace(known, op, existing, hasSSADominance);
        return true;
      }
    }
    known.insert(op, op);
    return false;
  }
  if (Operation *existing = known.lookup(op)) {
    replace(known, op, existing, hasSSADominance);
    return true;
  }
  known.insert(op, op);
  return false;
}

void Driver::simplifyBlock(KnownOps &known, Block &block,
                           bool hasSSADominance) {
  for (Operation &op : block) {
    if (op.getNumRegions() != 0) {
      // Values above an isolated operation are out of its regions' reach.
      if (op.mightHaveTrait<OpTrait::IsIsolatedFromAbove>()) {
        KnownOps isolated;
        for (Region &region : op.getRegions())
          simplifyRegion(isolated, region);
      } else {
        for (Region &region : op.getRegions())
          simplifyRegion(known, region);
      }
    }
    (void)simplifyOperation(known, &op, hasSSADominance);
  }
  writesAfter.clear();
}

void Driver::simplifyRegion(KnownOps &known, Region &region) {
  if (region.empty())
    return;
  bool hasSSADominance = domInfo.hasSSADominance(&region);
  if (region.hasOneBlock()) {
    KnownOps::ScopeTy scope(known);
    simplifyBlock(known, region.front(), hasSSADominance);
    return;
  }
  if (!hasSSADominance)
    return;
  // Blocks in dominator tree order, each seeing what its dominators define.
  struct Visit {
    Visit(KnownOps &known, DominanceInfoNode *node)
        : scope(known), node(node), child(node->begin()) {}
    KnownOps::ScopeTy scope;
    DominanceInfoNode *node;
    DominanceInfoNode::const_iterator child;
  };
  SmallVector<std::unique_ptr<Visit>> stack;
  stack.push_back(std::make_unique<Visit>(known, domInfo.getRootNode(&region)));
  simplifyBlock(known, *stack.back()->node->getBlock(), hasSSADominance);
  while (!stack.empty()) {
    Visit &visit = *stack.back();
    if (visit.child == visit.node->end()) {
      stack.pop_back();
      continue;
    }
    DominanceInfoNode *child = *visit.child++;
    stack.push_back(std::make_unique<Visit>(known, child));
    simplifyBlock(known, *child->getBlock(), hasSSADominance);
  }
}

bool Driver::simplify(Operation *root) {
  KnownOps known;
  for (Region &region : root->getRegions())
    simplifyRegion(known, region);
  for (Operation *op : opsToErase)
    rewriter.eraseOp(op);
  bool changed = !opsToErase.empty();
  opsToErase.clear();
  return changed;
}

namespace {
struct LoopCSEPass : kiln::loop::impl::LoopCSEPassBase<LoopCSEPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    Driver driver(rewriter, getAnalysis<DominanceInfo>());
    if (!driver.simplify(getOperation()))
      return markAllAnalysesPreserved();
    // Erasing operations leaves the dominance of the blocks left (upstream's
    // CSE says so too).
    markAnalysesPreserved<DominanceInfo, PostDominanceInfo>();
  }
};
} // namespace
