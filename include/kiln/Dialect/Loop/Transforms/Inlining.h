//===- Inlining.h - Inlining pointwise producers ----------------*- C++ -*-===//
//
// Part of Kiln. Library entry points behind the kiln-loop-inline pass.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_INLINING_H
#define KILN_DIALECT_LOOP_TRANSFORMS_INLINING_H

#include "mlir/IR/Value.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class RewriterBase;
namespace kiln::loop {
class LoadOp;
class PointwiseOp;

#define GEN_PASS_DECL_INLINEPOINTWISEPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"

/// When a producer read by several nodes is materialised instead of inlined:
/// kiln-loop-inline's options (`maxReads`, `maxOps`, `maxConsumerReads`,
/// `maxConsumerOps`), declared with their defaults, Inductor's realisation
/// heuristics, in Passes.td. `keepF32Intermediates`: keep an inlined f16/bf16
/// producer's value in f32 where its reader widens it again, instead of
/// rounding in between: fused intermediates stay in f32, as in Inductor. Off,
/// results round at every op boundary like eager.
using InliningOptions = InlinePointwisePassOptions;

/// Replaces `load`, whose source is defined by a loop.pointwise, with a copy of
/// that producer's body evaluated at the load's indices. Returns the value that
/// replaced the load. With `keepF32Intermediates`, a producer value rounded
/// to f16/bf16 and widened again by every reader of the load is used unrounded.
FailureOr<Value> inlinePointwiseLoad(RewriterBase &rewriter, LoadOp load,
                                     bool keepF32Intermediates = true);

/// Whether `producer` should be inlined into its readers under `options`.
bool shouldInline(PointwiseOp producer, const InliningOptions &options);

/// Inlines every pointwise producer below `root` that `options` allows, and
/// erases producers left without readers.
void inlinePointwiseProducers(RewriterBase &rewriter, Operation *root,
                              const InliningOptions &options);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_INLINING_H
