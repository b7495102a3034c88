//===- RowFusion.h - Fusing the nodes of a row into one kernel --*- C++ -*-===//
//
// Part of Kiln. Library entry points behind the kiln-loop-fuse-rows pass.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_ROWFUSION_H
#define KILN_DIALECT_LOOP_TRANSFORMS_ROWFUSION_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class Block;
class Operation;
class RewriterBase;
namespace kiln::loop {
class ReduceOp;

/// The number of leading dimensions of `reduce`'s result that index rows:
/// those up to the last one its body reads at; the others have size 1 (as
/// with keepdim). None when a dimension after them has another size.
std::optional<int64_t> getReductionRows(ReduceOp reduce);

/// Groups each reduction in `block` with the later nodes that read it (and
/// other row values of the group) at their own row into a loop.kernel, so
/// that a row's reductions and the nodes that use them run together. Returns
/// the number of kernels made.
unsigned fuseRows(RewriterBase &rewriter, Block &block);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_ROWFUSION_H
