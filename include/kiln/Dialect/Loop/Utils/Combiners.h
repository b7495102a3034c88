//===- Combiners.h - The arithmetic of loop.reduce's combiners --*- C++ -*-===//
//
// Part of Kiln. Every target combines a reduction's values the same way;
// only where the partial results live differs. Lowerings that build
// reductions (scans in blocks) use the same arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_UTILS_COMBINERS_H
#define KILN_DIALECT_LOOP_UTILS_COMBINERS_H

#include "kiln/Dialect/Loop/IR/LoopAttrs.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

namespace mlir {
class OpBuilder;
namespace kiln {

/// The value `kind` starts from for accumulators of `type` (a scalar or a
/// vector of them): 0 for sum and welford, 1 for prod, the lowest value for
/// max and the highest for min; the signedness of integers comes from the
/// result's `dtype`.
Value getCombinerIdentity(OpBuilder &b, Location loc, loop::CombiningKind kind,
                          Type type, Type dtype);

/// `accumulator <kind> value`, for scalars or vectors; max and min
/// propagate NaN, as PyTorch's do. A welford accumulator is its state
/// (getReductionStateType) and `value` one element.
Value emitCombine(OpBuilder &b, Location loc, loop::CombiningKind kind,
                  Value accumulator, Value value, Type dtype);

/// The atomic read-modify-write that combines a value into an element of
/// `dtype` in memory with `kind` (a scatter's update), or nullopt where no
/// target has one: prod (a compare-and-swap loop of emitCombine instead) and
/// assign (a plain store).
std::optional<arith::AtomicRMWKind>
getAtomicCombineKind(loop::CombiningKind kind, Type dtype);

/// Whether `kind` accumulates a state other than its result: welford keeps
/// (count, mean, M2) of the values seen, Welford's one-pass moments.
bool hasReductionState(loop::CombiningKind kind);

/// What a reduction with `kind` accumulates values of type `accumulator`
/// in: vector<3> of it for welford, else `accumulator`.
Type getReductionStateType(loop::CombiningKind kind, Type accumulator);

/// Combines two partial states of `kind` (of disjoint values): Chan's merge
/// of Welford states, else emitCombine.
Value emitMerge(OpBuilder &b, Location loc, loop::CombiningKind kind, Value lhs,
                Value rhs, Type dtype);

/// A reduction's result from its final state: M2 for welford (the sum of
/// squared deviations from the mean), else the state itself.
Value emitReductionResult(OpBuilder &b, Location loc, loop::CombiningKind kind,
                          Value state);

} // namespace kiln
} // namespace mlir

#endif // KILN_DIALECT_LOOP_UTILS_COMBINERS_H
