//===- ElementKernels.h - Kernels that compute element by element -*- C++
//-*-===//
//
// Part of Kiln. A kernel whose nodes have only row dimensions (a pooling
// window or a direct convolution's sums, and the batch norm and activation
// that read them: a reduction per element) computes element by element; a
// target can run its innermost row dimension in vectors, each reduction
// accumulating a vector of elements' states over its reduction space.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_ELEMENTKERNELS_H
#define KILN_CODEGEN_ELEMENTKERNELS_H

#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class IRMapping;
class OpBuilder;
class Operation;
namespace kiln {

/// The elements of a kernel's `nodes` (over `rows` row dimensions) that a
/// vector step computes along the innermost row dimension when they compute
/// element by element: `vectorBytes` of the widest type they compute in; 1
/// where a body does not vectorize, or reads across the rows (a load that
/// follows the row index without having it last: a row's own elements,
/// summed, would be gathered from as many rows), or a reduction is long or
/// keeps a state other than its result.
int64_t getElementKernelWidth(ArrayRef<Operation *> nodes, int64_t rows,
                              int64_t vectorBytes);

/// Emits `nodes` (getElementKernelWidth gave `width`) for the `width`
/// elements from `ivs` on along the innermost row dimension: each node's
/// elements as one vector, which `store` stores where the node's result
/// goes and the nodes after it read; a reduction accumulates the vector
/// over its reduction space. Buffers are `bufferAlignment`-aligned; reads at
/// clamped columns load whole vectors inside their range.
void emitElementKernelStep(
    OpBuilder &b, ArrayRef<Operation *> nodes, int64_t rows, IRMapping &mapping,
    ValueRange ivs, int64_t width, int64_t bufferAlignment,
    function_ref<void(Value result, Value elements)> store);

} // namespace kiln
} // namespace mlir

#endif // KILN_CODEGEN_ELEMENTKERNELS_H
