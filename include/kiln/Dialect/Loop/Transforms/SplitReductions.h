//===- SplitReductions.h - Splitting few long reductions --------*- C++ -*-===//
//
// Part of Kiln. Library entry point behind the kiln-loop-split-reductions
// pass.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_SPLITREDUCTIONS_H
#define KILN_DIALECT_LOOP_TRANSFORMS_SPLITREDUCTIONS_H

#include "mlir/Pass/Pass.h"

#include <cstdint>

namespace mlir {
class Block;
class RewriterBase;
namespace kiln::loop {
class ReduceOp;

#define GEN_PASS_DECL_SPLITREDUCTIONSPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"

/// How splitReductions picks and splits reductions: kiln-loop-split-
/// reductions' options, declared with their defaults in Passes.td. Split
/// reductions with at least `minElements` elements per result and fewer
/// results than `maxResults`; aim for `partialResults` partial results
/// (results times chunks).
using SplitReductionsOptions = SplitReductionsPassOptions;

/// Splits each reduction of static sizes in `block` (outside kernels) that
/// has few long results into two: partial reductions over chunks of a
/// reduction dimension (the outermost with room for the chunks, else the
/// longest; the chunk an extra, last, result dimension; positions past its
/// end contribute the combiner's identity),
/// then the reduction of each result's partials. Targets whose rows run in
/// parallel (a GPU block per row) then use their parallelism on few long
/// rows. "sum", "prod", "max" and "min" split; "welford" (whose partial
/// results are not its states) does not. Reductions down columns
/// (isColumnReduction) of more than two `columnChunk`s split into partials
/// over `columnChunk` consecutive positions of their flattened reduction
/// space, the chunk a first result dimension, until the partials are few.
/// Returns how many split.
unsigned splitReductions(RewriterBase &rewriter, Block &block,
                         const SplitReductionsOptions &options);

/// Whether `reduce` reduces down columns: a stateless reduction whose
/// static innermost result dimension has at least 32 elements and whose
/// loads that vary with the reduction read at that dimension's index last
/// (a sum over a matrix's rows, a bias gradient), so that consecutive
/// results read consecutive elements.
bool isColumnReduction(ReduceOp reduce);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_SPLITREDUCTIONS_H
