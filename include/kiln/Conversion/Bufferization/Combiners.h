//===- Combiners.h - The arithmetic of loop.reduce's combiners --*- C++ -*-===//
//
// Part of Kiln. Every target combines a reduction's values the same way;
// only where the partial results live differs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_BUFFERIZATION_COMBINERS_H
#define KILN_CONVERSION_BUFFERIZATION_COMBINERS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class OpBuilder;
namespace kiln {

/// The value `combiner` starts from for accumulators of `type` (a scalar or
/// a vector of them); the signedness of integers comes from the result's
/// `dtype`.
Value getCombinerIdentity(OpBuilder &b, Location loc, llvm::StringRef combiner,
                          Type type, Type dtype);

/// `accumulator <combiner> value`, for scalars or vectors; max and min
/// propagate NaN, as PyTorch's do.
Value emitCombine(OpBuilder &b, Location loc, llvm::StringRef combiner,
                  Value accumulator, Value value, Type dtype);

} // namespace kiln
} // namespace mlir

#endif // KILN_CONVERSION_BUFFERIZATION_COMBINERS_H
