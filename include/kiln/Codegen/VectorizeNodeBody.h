//===- VectorizeNodeBody.h - Several elements of a node at once -*- C++ -*-===//
//
// Part of Kiln. Emits a node's body for `width` consecutive elements of a row
// as vector operations: contiguous reads become vector loads, reads that do
// not depend on the column become one scalar load and a broadcast, others are
// gathered element by element.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_VECTORIZENODEBODY_H
#define KILN_CODEGEN_VECTORIZENODEBODY_H

#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include <map>
#include <optional>

namespace mlir {
class Block;
class IRMapping;
class OpBuilder;
namespace kiln {
namespace loop {
class LoadOp;
class PointwiseOp;
} // namespace loop

/// Emits `node`'s body for the elements at `ivs` .. `ivs` + (0, ..., width-1)
/// in the innermost dimension, reading buffers through `mapping` (a load
/// whose result `mapping` maps takes that value instead: a vector of its
/// elements, or a scalar for all), and returns the vector of elements it
/// yields. Buffers are assumed aligned to
/// `bufferAlignment` bytes; vector accesses whose offsets are multiples of
/// `width` say so. Fails, emitting nothing, for bodies with ops that are not
/// elementwise or that read or yield bools (which LLVM packs into bits in
/// vectors, and tensors keep in bytes).
FailureOr<Value> emitVectorNodeElements(OpBuilder &b, loop::PointwiseOp node,
                                        const IRMapping &mapping,
                                        ValueRange ivs, int64_t width,
                                        int64_t bufferAlignment);

/// Whether emitVectorNodeElements can vectorize `node`'s body.
bool canVectorizeNodeBody(loop::PointwiseOp node);

/// Vector loads already emitted, by buffer, indices and width, so that nodes
/// of one kernel that read the same elements share one load (and whatever
/// is computed from it).
class VectorLoadCache {
public:
  Value lookup(Value buffer, ValueRange indices, int64_t width) const;
  void insert(Value buffer, ValueRange indices, int64_t width, Value loaded);

private:
  using Key = SmallVector<const void *, 6>;
  static Key getKey(Value buffer, ValueRange indices, int64_t width);
  std::map<Key, Value> loads;
};

/// emitVectorNodeElements for any node body (a reduction's too): its
/// argument `columnIndex` (by default its last) is the column that varies
/// by element; the other arguments take `ivs`' values, the same for every
/// element, or, for a vector of `width` elements (a product's sums for its
/// epilogue), one each. Contiguous loads come from and go to `cache` when one
/// is given; the caller makes sure that the cached loads dominate the code it
/// emits and that nothing stores to their buffers in between. A tensor that
/// `mapping` maps to a vector is an earlier node of the same elements: its
/// loads take the vector. With `branchOnClamps`, a load at a column clamped
/// into a range (a window's, say) reads a whole vector where all of the
/// step's columns are inside the range, else gathers.
FailureOr<Value>
emitVectorBodyElements(OpBuilder &b, Block &body, const IRMapping &mapping,
                       ValueRange ivs, int64_t width, int64_t bufferAlignment,
                       VectorLoadCache *cache = nullptr,
                       std::optional<unsigned> columnIndex = std::nullopt,
                       bool branchOnClamps = false);

/// Emits only the contiguous vector loads that emitVectorBodyElements would
/// emit for `body` at `ivs` (and the index arithmetic they need), into
/// `cache`; only those `filter` accepts, if given. A kernel that computes
/// several column steps issues all their loads first, so that their
/// latencies overlap: LLVM does not move a load above the branches of the
/// step before it (libdevice's erf has one).
void emitVectorBodyLoads(OpBuilder &b, Block &body, const IRMapping &mapping,
                         ValueRange ivs, int64_t width, int64_t bufferAlignment,
                         VectorLoadCache &cache,
                         function_ref<bool(loop::LoadOp)> filter = nullptr);

/// Whether emitVectorBodyElements can vectorize `body`.
bool canVectorizeBody(Block &body);

/// Stores `vector` into `buffer` at `indices`, with the alignment that
/// getVectorAccessAlignment proves for a `bufferAlignment`-aligned buffer.
void emitVectorStore(OpBuilder &b, Location loc, Value vector, Value buffer,
                     ValueRange indices, int64_t bufferAlignment);

/// The alignment, in bytes, of a `width`-element vector access to `buffer`
/// at a row offset that is a multiple of `width`, if the buffer is aligned to
/// `bufferAlignment`; 0 if nothing better than the element's is known.
int64_t getVectorAccessAlignment(Value buffer, int64_t width,
                                 int64_t bufferAlignment);

} // namespace kiln
} // namespace mlir

#endif // KILN_CODEGEN_VECTORIZENODEBODY_H
