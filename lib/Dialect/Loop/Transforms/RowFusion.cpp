//===- RowFusion.cpp - Fusing the nodes of a row into one kernel ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/RowFusion.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

SmallVector<Block *>
mlir::kiln::loop::getBlocksWithReductions(Operation *root) {
  llvm::SetVector<Block *> blocks;
  root->walk([&](ReduceOp reduce) {
    if (!reduce->getParentOfType<KernelOp>())
      blocks.insert(reduce->getBlock());
  });
  return blocks.takeVector();
}

std::optional<int64_t> mlir::kiln::loop::getReductionRows(ReduceOp reduce) {
  int64_t rows = 0;
  for (BlockArgument arg : reduce.getResultInductionVars()) {
    if (!arg.use_empty())
      rows = arg.getArgNumber() + 1;
  }
  if (!isRowValue(reduce.getResult(), rows))
    return std::nullopt;
  return rows;
}

LogicalResult mlir::kiln::loop::groupIntoKernel(RewriterBase &rewriter,
                                                ArrayRef<Operation *> members,
                                                int64_t rows) {
  Operation *last = members.back();
  llvm::SmallPtrSet<Operation *, 8> memberSet(members.begin(), members.end());
  SmallVector<Value> yielded;
  Block *block = last->getBlock();
  for (Operation *member : members) {
    Value result = member->getResult(0);
    bool usedOutside = false;
    for (Operation *user : result.getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (memberSet.contains(top))
        continue;
      if (top->isBeforeInBlock(last))
        return failure();
      usedOutside = true;
    }
    if (usedOutside || !isRowValue(result, rows))
      yielded.push_back(result);
  }

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(last);
  auto kernel = KernelOp::create(rewriter, last->getLoc(),
                                 ValueRange(yielded).getTypes(), rows);
  Block *body = rewriter.createBlock(&kernel.getBody());
  rewriter.setInsertionPointToStart(body);
  auto yield = KernelYieldOp::create(rewriter, last->getLoc(), yielded);
  for (Operation *member : members)
    rewriter.moveOpBefore(member, yield);
  for (auto [value, result] : llvm::zip(yielded, kernel.getResults()))
    rewriter.replaceUsesWithIf(value, result, [&](OpOperand &use) {
      return !kernel->isProperAncestor(use.getOwner());
    });
  return success();
}

/// The tensors defined outside `node` that it loads.
static llvm::SmallSetVector<Value, 4> getLoadedTensors(Operation *node) {
  llvm::SmallSetVector<Value, 4> loaded;
  node->walk([&](LoadOp load) { loaded.insert(load.getSource()); });
  return loaded;
}

/// The values that `op` uses, its regions' included, defined outside it.
static llvm::SetVector<Value> getUsedValues(Operation *op) {
  llvm::SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return used;
}

/// Whether every value that `op` uses is defined by `point` or before it
/// (or outside their block), so that `op` may move right after it.
static bool isReadyAfter(Operation *op, Operation *point) {
  return llvm::all_of(getUsedValues(op), [&](Value value) {
    Operation *definer = value.getDefiningOp();
    return !definer || definer->getBlock() != point->getBlock() ||
           definer == point || definer->isBeforeInBlock(point);
  });
}

namespace {
/// The tensors each node loads, found once per node: row fusion asks for
/// every seed, and nodes move (into kernels too) but their bodies do not
/// change.
class LoadedTensors {
public:
  const llvm::SmallSetVector<Value, 4> &get(Operation *node) {
    auto [it, inserted] = loaded.try_emplace(node);
    if (inserted)
      it->second = getLoadedTensors(node);
    return it->second;
  }

private:
  DenseMap<Operation *, llvm::SmallSetVector<Value, 4>> loaded;
};

/// A reduction and the nodes after it that join it in one kernel.
class RowGroup {
public:
  RowGroup(ReduceOp seed, int64_t rows, LoadedTensors &loaded)
      : rows(rows), loaded(loaded) {
    addMember(seed);
    auto type = seed.getResultType();
    rowShape.assign(type.getShape().take_front(rows).begin(),
                    type.getShape().take_front(rows).end());
    rowSizes = getRowDynamicSizes(seed);
  }

  /// Whether `op`, of the seed's block, reads a member of the group: loads
  /// it, or takes it as an operand (a matrix product of it, say).
  bool readsMember(Operation *op) const { return readers.contains(op); }

  /// Adds `node`, which reads the group, if it can run in the same kernel:
  /// it has the group's rows, and reads members only where they are row
  /// values, at its own row.
  bool tryAdd(Operation *node) {
    auto type = cast<RankedTensorType>(node->getResult(0).getType());
    if (type.getRank() < rows ||
        type.getShape().take_front(rows) != ArrayRef<int64_t>(rowShape) ||
        getRowDynamicSizes(node) != rowSizes)
      return false;
    if (isa<ReduceOp>(node) && !isRowValue(node->getResult(0), rows))
      return false;
    bool aligned = true;
    node->walk([&](LoadOp load) {
      Operation *source = load.getSource().getDefiningOp();
      if (!source || !members.contains(source))
        return;
      aligned &=
          isRowValue(load.getSource(), rows) && isRowAlignedLoad(load, rows);
    });
    if (!aligned)
      return false;
    addMember(node);
    return true;
  }

  /// Adds the reductions over the group's rows that members read at their
  /// own row and that can move to the group's kernel: a layer norm
  /// gradient's two row sums, one of which no member reads, join the
  /// pointwise node that reads both.
  void addReadReductions(const DenseSet<Operation *> &grouped) {
    bool changed = true;
    while (changed) {
      changed = false;
      Operation *last = getLast();
      for (Operation *member :
           SmallVector<Operation *>(members.begin(), members.end())) {
        member->walk([&](LoadOp load) {
          auto reduce = load.getSource().getDefiningOp<ReduceOp>();
          if (!reduce || members.contains(reduce) || grouped.contains(reduce) ||
              reduce->getBlock() != last->getBlock() ||
              getReductionRows(reduce) != rows ||
              !isRowAlignedLoad(load, rows) || !canMoveTo(reduce, last))
            return;
          changed |= tryAdd(reduce);
        });
      }
    }
  }

  /// Adds the later reductions over the group's rows that merge partials
  /// made alongside the seed's: each loads a tensor made by the op that
  /// made one the seed loads, or by a reduction that reads a tensor in
  /// common with that op (the partial sums of one column pass, before or
  /// after sibling fusion). Each moves up to the member before it: batch
  /// norm's two merged statistics, then what reads both, in one kernel.
  void addSiblingReductions(RewriterBase &rewriter, ArrayRef<Operation *> later,
                            const DenseSet<Operation *> &grouped) {
    SmallVector<Operation *> producers;
    for (Value tensor : loaded.get(members.front()))
      if (Operation *producer = tensor.getDefiningOp())
        producers.push_back(producer);
    auto madeAlongside = [&](Value tensor) {
      Operation *made = tensor.getDefiningOp();
      return made && llvm::any_of(producers, [&](Operation *producer) {
               return made == producer ||
                      (isa<ReduceOp>(made) && isa<ReduceOp>(producer) &&
                       llvm::any_of(loaded.get(made), [&](Value input) {
                         return loaded.get(producer).contains(input);
                       }));
             });
    };
    for (Operation *op : later) {
      auto reduce = dyn_cast<ReduceOp>(op);
      if (!reduce || grouped.contains(op) || getReductionRows(reduce) != rows ||
          !llvm::any_of(loaded.get(op), madeAlongside))
        continue;
      // The sibling moves up to the last member, or the members (none of
      // which anything reads before the sibling) down to it.
      Operation *last = getLast();
      if (isReadyAfter(op, last)) {
        if (tryAdd(op))
          rewriter.moveOpAfter(op, last);
        continue;
      }
      SmallVector<Operation *> ordered = getOrderedMembers();
      if (llvm::all_of(ordered,
                       [&](Operation *m) { return canMoveTo(m, op); }) &&
          tryAdd(op)) {
        for (Operation *member : ordered)
          rewriter.moveOpBefore(member, op);
      }
    }
  }

  /// Adds `node`, a later reader of the group that a reader which cannot
  /// join comes before, if it can join and move up to the last member (all
  /// it uses is ready there): the kernel then still comes before that
  /// reader. Batch norm's weight gradient, which reads a merged sum, after
  /// the input's gradient, which reads it at every element.
  bool tryAddAndMoveUp(RewriterBase &rewriter, Operation *node) {
    Operation *last = getLast();
    if (!isReadyAfter(node, last) || !tryAdd(node))
      return false;
    rewriter.moveOpAfter(node, last);
    return true;
  }

  bool isWorthAKernel() const { return members.size() > 1; }

  bool contains(Operation *op) const { return members.contains(op); }

  LogicalResult materialize(RewriterBase &rewriter) {
    return groupIntoKernel(rewriter, getOrderedMembers(), rows);
  }

private:
  void addMember(Operation *node) {
    members.insert(node);
    Block *block = node->getBlock();
    for (Operation *user : node->getUsers())
      if (Operation *reader = block->findAncestorOpInBlock(*user))
        readers.insert(reader);
  }

  /// The members in the block's order, which respects what each reads.
  SmallVector<Operation *> getOrderedMembers() const {
    SmallVector<Operation *> ordered(members.begin(), members.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return ordered;
  }

  /// The member that comes last in the block: the kernel goes there.
  Operation *getLast() const {
    Operation *last = members.front();
    for (Operation *member : members)
      if (last->isBeforeInBlock(member))
        last = member;
    return last;
  }

  /// Whether `node` can move down to `last` (into the kernel): no op other
  /// than a member uses it before there.
  bool canMoveTo(Operation *node, Operation *last) const {
    Block *block = last->getBlock();
    return llvm::all_of(node->getUsers(), [&](Operation *user) {
      Operation *top = block->findAncestorOpInBlock(*user);
      return top && (members.contains(top) || !top->isBeforeInBlock(last));
    });
  }

  /// The dynamic sizes of `node`'s row dimensions.
  SmallVector<Value> getRowDynamicSizes(Operation *op) const {
    auto node = cast<LoopNodeOpInterface>(op);
    int64_t numDynamic = 0;
    for (int64_t size : node.getResultType().getShape().take_front(rows))
      numDynamic += ShapedType::isDynamic(size);
    return SmallVector<Value>(node.getDynamicSizes().take_front(numDynamic));
  }

  int64_t rows;
  LoadedTensors &loaded;
  SmallVector<int64_t> rowShape;
  SmallVector<Value> rowSizes;
  llvm::SetVector<Operation *> members;
  /// The ops of the block that use a member's result.
  DenseSet<Operation *> readers;
};
} // namespace

unsigned mlir::kiln::loop::fuseRows(RewriterBase &rewriter, Block &block) {
  unsigned kernels = 0;
  // Every op of the block, in order: readers that are not nodes (matrix
  // products, library calls) end a group as readers that cannot join do.
  SmallVector<Operation *> ops = llvm::map_to_vector(
      block.without_terminator(), [](Operation &op) { return &op; });
  DenseSet<Operation *> grouped;
  LoadedTensors loaded;
  for (auto [index, seed] : llvm::enumerate(ops)) {
    auto reduce = dyn_cast<ReduceOp>(seed);
    if (!reduce || grouped.contains(seed))
      continue;
    std::optional<int64_t> rows = getReductionRows(reduce);
    if (!rows)
      continue;
    RowGroup group(reduce, *rows, loaded);
    ArrayRef<Operation *> later = ArrayRef(ops).drop_front(index + 1);
    group.addSiblingReductions(rewriter, later, grouped);
    // A reader that cannot join must run after the kernel: past one, only
    // readers that can move up before it join.
    bool blocked = false;
    for (Operation *op : later) {
      if (grouped.contains(op) || group.contains(op) || !group.readsMember(op))
        continue;
      if (!isNode(op))
        blocked = true;
      else if (blocked)
        group.tryAddAndMoveUp(rewriter, op);
      else if (!group.tryAdd(op))
        blocked = true;
    }
    group.addReadReductions(grouped);
    if (!group.isWorthAKernel() || failed(group.materialize(rewriter)))
      continue;
    ++kernels;
    // Members are inside the kernel now; none seeds or joins another group.
    for (Operation *op : ops)
      if (op->getParentOfType<KernelOp>())
        grouped.insert(op);
  }
  return kernels;
}

/// Groups `nodes` (of one block, in order) into kernels of siblings: each
/// node that `canSeed` accepts takes the later ones that are `alike` it,
/// read a tensor it reads and depend on no member of the group (not even
/// through other ops); a group of two or more becomes a loop.kernel over
/// `rows` of its seed's dimensions. Returns how many kernels it made.
template <typename NodeOp>
static unsigned groupSiblings(RewriterBase &rewriter, ArrayRef<NodeOp> nodes,
                              function_ref<bool(NodeOp)> canSeed,
                              function_ref<bool(NodeOp, NodeOp)> alike,
                              function_ref<int64_t(NodeOp)> rows) {
  // What each node loads, found once: nodes move (and group) below, but
  // none is made.
  DenseMap<Operation *, llvm::SmallSetVector<Value, 4>> loadedBy;
  for (NodeOp node : nodes)
    loadedBy[node] = getLoadedTensors(node);
  DenseSet<Operation *> grouped;
  unsigned kernels = 0;
  for (NodeOp seed : nodes) {
    if (grouped.contains(seed) || !canSeed(seed))
      continue;
    llvm::SmallSetVector<Value, 4> shared = loadedBy.lookup(seed);
    SmallVector<Operation *> members = {seed};
    // The members, and the ops of the block that read them, directly or
    // not (found along their results' uses).
    Block *block = seed->getBlock();
    DenseSet<Operation *> dependent;
    auto addDependents = [&](Operation *root) {
      SmallVector<Operation *> worklist = {root};
      while (!worklist.empty()) {
        Operation *op = worklist.pop_back_val();
        if (!dependent.insert(op).second)
          continue;
        for (Operation *user : op->getUsers())
          if (Operation *reader = block->findAncestorOpInBlock(*user))
            worklist.push_back(reader);
      }
    };
    addDependents(seed);
    for (Operation *op = seed->getNextNode(); op; op = op->getNextNode()) {
      auto sibling = dyn_cast<NodeOp>(op);
      if (!sibling || dependent.contains(op) || grouped.contains(op) ||
          !alike(seed, sibling) ||
          !llvm::any_of(loadedBy.lookup(op),
                        [&](Value tensor) { return shared.contains(tensor); }))
        continue;
      members.push_back(op);
      addDependents(op);
    }
    if (members.size() < 2)
      continue;
    // Members whose inputs are ready move up to the member before them, so
    // that readers of the earlier members in between (the reduction of a
    // seed's partials, say) may follow the kernel.
    for (auto [previous, member] : llvm::zip(ArrayRef(members).drop_back(),
                                             ArrayRef(members).drop_front()))
      if (isReadyAfter(member, previous))
        rewriter.moveOpAfter(member, previous);
    if (failed(groupIntoKernel(rewriter, members, rows(seed))))
      continue;
    ++kernels;
    grouped.insert(members.begin(), members.end());
  }
  return kernels;
}

unsigned mlir::kiln::loop::fuseSiblings(RewriterBase &rewriter, Block &block,
                                        int64_t minRowBytes) {
  // Pointwise nodes of one shape, a kernel over their rows.
  SmallVector<PointwiseOp> pointwise(block.getOps<PointwiseOp>());
  unsigned kernels = groupSiblings<PointwiseOp>(
      rewriter, pointwise,
      [&](PointwiseOp seed) {
        RankedTensorType type = seed.getType();
        int64_t rank = type.getRank();
        return rank >= 2 && !type.isDynamicDim(rank - 1) &&
               type.getDimSize(rank - 1) * 4 >= minRowBytes;
      },
      [](PointwiseOp seed, PointwiseOp sibling) {
        return sibling.getType() == seed.getType() &&
               sibling.getDynamicSizes() == seed.getDynamicSizes();
      },
      [](PointwiseOp seed) { return seed.getType().getRank() - 1; });
  // Reductions of one result type and reduction shape, a kernel whose every
  // node is a row value: a layer norm's weight and bias gradients, which
  // both sum the output's gradient down its columns, read it once.
  SmallVector<ReduceOp> reductions(block.getOps<ReduceOp>());
  return kernels +
         groupSiblings<ReduceOp>(
             rewriter, reductions,
             [](ReduceOp seed) { return seed.getResultType().getRank() > 0; },
             [](ReduceOp seed, ReduceOp sibling) {
               return sibling.getResultType() == seed.getResultType() &&
                      sibling.getReductionShape() == seed.getReductionShape() &&
                      sibling.getDynamicSizes() == seed.getDynamicSizes() &&
                      sibling.getReductionDynamicSizes() ==
                          seed.getReductionDynamicSizes();
             },
             [](ReduceOp seed) { return seed.getResultType().getRank(); });
}
