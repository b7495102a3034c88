//===- RowFusion.h - Fusing the nodes of a row into one kernel --*- C++ -*-===//
//
// Part of Kiln. Library entry points behind the kiln-loop-fuse-rows pass.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_ROWFUSION_H
#define KILN_DIALECT_LOOP_TRANSFORMS_ROWFUSION_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
class Block;
class Operation;
class RewriterBase;
namespace kiln::loop {
class ReduceOp;

/// The blocks under `root` that hold reductions outside kernels (graph
/// bodies), in walk order: where fuseRows and splitReductions look.
SmallVector<Block *> getBlocksWithReductions(Operation *root);

/// The number of leading dimensions of `reduce`'s result that index rows:
/// those up to the last one its body reads at; the others have size 1 (as
/// with keepdim). None when a dimension after them has another size.
std::optional<int64_t> getReductionRows(ReduceOp reduce);

/// Groups each reduction in `block` with the later nodes that read it (and
/// other row values of the group) at their own row into a loop.kernel, so
/// that a row's reductions and the nodes that use them run together. Returns
/// the number of kernels made.
unsigned fuseRows(RewriterBase &rewriter, Block &block);

/// Moves `members`, nodes of one block in order whose first `rows`
/// dimensions agree, into a loop.kernel with `rows` rows after the last of
/// them; the values used after it and the members with columns are its
/// results. Fails, changing nothing, when something other than a member
/// reads a member before that point.
LogicalResult groupIntoKernel(RewriterBase &rewriter,
                              ArrayRef<Operation *> members, int64_t rows);

/// Groups pointwise nodes of `block` with the same shape (rank 2 or more,
/// rows of at least `minRowBytes` as f32) that read a common tensor and none
/// of each other into a loop.kernel over their rows: the kernel reads a row
/// of the common tensor once for all of them; and reductions of one result
/// type and reduction shape that read a common tensor and none of each
/// other into a loop.kernel over all their result dimensions. Returns the
/// number of kernels made.
unsigned fuseSiblings(RewriterBase &rewriter, Block &block,
                      int64_t minRowBytes);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_ROWFUSION_H
