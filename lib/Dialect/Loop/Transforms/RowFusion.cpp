//===- RowFusion.cpp - Fusing the nodes of a row into one kernel ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/RowFusion.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/IR/PatternMatch.h"
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

namespace {
/// A reduction and the nodes after it that join it in one kernel.
class RowGroup {
public:
  RowGroup(ReduceOp seed, int64_t rows) : rows(rows) {
    members.insert(seed);
    auto type = seed.getResultType();
    rowShape.assign(type.getShape().take_front(rows).begin(),
                    type.getShape().take_front(rows).end());
    rowSizes = getRowDynamicSizes(seed);
  }

  /// Whether `node` reads a member of the group.
  bool readsMember(Operation *node) const {
    bool reads = false;
    node->walk([&](LoadOp load) {
      if (Operation *source = load.getSource().getDefiningOp())
        reads |= members.contains(source);
    });
    return reads;
  }

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
    members.insert(node);
    return true;
  }

  bool isWorthAKernel() const { return members.size() > 1; }

  LogicalResult materialize(RewriterBase &rewriter) {
    return groupIntoKernel(rewriter, members.getArrayRef(), rows);
  }

private:
  /// The dynamic sizes of `node`'s row dimensions.
  SmallVector<Value> getRowDynamicSizes(Operation *op) const {
    auto node = cast<LoopNodeOpInterface>(op);
    int64_t numDynamic = 0;
    for (int64_t size : node.getResultType().getShape().take_front(rows))
      numDynamic += ShapedType::isDynamic(size);
    return SmallVector<Value>(node.getDynamicSizes().take_front(numDynamic));
  }

  int64_t rows;
  SmallVector<int64_t> rowShape;
  SmallVector<Value> rowSizes;
  llvm::SetVector<Operation *> members;
};
} // namespace

unsigned mlir::kiln::loop::fuseRows(RewriterBase &rewriter, Block &block) {
  unsigned kernels = 0;
  SmallVector<Operation *> nodes;
  for (Operation &op : block)
    if (isNode(&op))
      nodes.push_back(&op);
  DenseSet<Operation *> grouped;
  for (auto [index, seed] : llvm::enumerate(nodes)) {
    auto reduce = dyn_cast<ReduceOp>(seed);
    if (!reduce || grouped.contains(seed))
      continue;
    std::optional<int64_t> rows = getReductionRows(reduce);
    if (!rows)
      continue;
    RowGroup group(reduce, *rows);
    for (Operation *node : ArrayRef(nodes).drop_front(index + 1)) {
      if (grouped.contains(node) || !group.readsMember(node))
        continue;
      // A reader that cannot join must run after the kernel: stop here, so
      // that the kernel comes before it.
      if (!group.tryAdd(node))
        break;
    }
    if (!group.isWorthAKernel() || failed(group.materialize(rewriter)))
      continue;
    ++kernels;
    // Members are inside the kernel now; none seeds or joins another group.
    for (Operation *node : nodes)
      if (node->getParentOfType<KernelOp>())
        grouped.insert(node);
  }
  return kernels;
}

/// The tensors defined outside `node` that it loads.
static llvm::SmallSetVector<Value, 4> getLoadedTensors(Operation *node) {
  llvm::SmallSetVector<Value, 4> loaded;
  node->walk([&](LoadOp load) { loaded.insert(load.getSource()); });
  return loaded;
}

unsigned mlir::kiln::loop::fuseSiblings(RewriterBase &rewriter, Block &block,
                                        int64_t minRowBytes) {
  SmallVector<PointwiseOp> nodes(block.getOps<PointwiseOp>());
  SmallVector<llvm::SmallSetVector<Value, 4>> loadedBy = llvm::map_to_vector(
      nodes, [](PointwiseOp node) { return getLoadedTensors(node); });
  DenseSet<Operation *> grouped;
  unsigned kernels = 0;
  for (auto [index, seed] : llvm::enumerate(nodes)) {
    RankedTensorType type = seed.getType();
    int64_t rank = type.getRank();
    if (grouped.contains(seed) || rank < 2 || type.isDynamicDim(rank - 1) ||
        type.getDimSize(rank - 1) * 4 < minRowBytes)
      continue;
    const llvm::SmallSetVector<Value, 4> &shared = loadedBy[index];
    SmallVector<Operation *> members = {seed};
    for (size_t other = index + 1; other < nodes.size(); ++other) {
      PointwiseOp sibling = nodes[other];
      const llvm::SmallSetVector<Value, 4> &loaded = loadedBy[other];
      if (grouped.contains(sibling) || sibling.getType() != type ||
          sibling.getDynamicSizes() != seed.getDynamicSizes())
        continue;
      // Siblings read a common tensor and none of each other.
      bool readsMember = llvm::any_of(members, [&](Operation *member) {
        return loaded.contains(member->getResult(0));
      });
      if (readsMember || !llvm::any_of(loaded, [&](Value tensor) {
            return shared.contains(tensor);
          }))
        continue;
      members.push_back(sibling);
    }
    if (members.size() < 2 ||
        failed(groupIntoKernel(rewriter, members, rank - 1)))
      continue;
    ++kernels;
    grouped.insert(members.begin(), members.end());
  }
  return kernels;
}
