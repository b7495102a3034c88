//===- FXToLoop.h - Lowering fx ops to loop nodes ---------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_FXTOLOOP_FXTOLOOP_H
#define KILN_CONVERSION_FXTOLOOP_FXTOLOOP_H

#include "kiln/Dialect/Loop/Utils/ConvolutionDefaults.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class RewritePatternSet;
namespace kiln {

#define GEN_PASS_DECL_CONVERTFXTOLOOPPASS
#include "kiln/Conversion/Passes.h.inc"

/// The options of the lowering: kiln-fx-to-loop's, declared with their
/// defaults in Passes.td. `computeInF32`: f16/bf16 math in f32 (extend after
/// loads, round before yields). `welford`: variances in one pass ("welford"
/// reductions) instead of two. `normalCdfFromTail`: the exact GELU's Φ in
/// f32 (and its gradient's) from the normal distribution's upper tail, one
/// exp and one reciprocal, single instructions on GPUs, where erf takes two
/// dozen (on CPUs, whose exp and division cost more, erf's polynomials are
/// cheaper). `directConvolutionDepth`: the most terms a convolution
/// gradient's element sums for the gradient to be direct sums rather than
/// products of patches (0: never), the inputs a filter reads for the weight
/// gradient, the filter entries (filters per group times kernel positions)
/// for the input gradient; the forward convolution's is
/// kiln-loop-expand-convolutions' `direct-depth`, whose default is this
/// one's. `failOnUnsupported` is the pass's alone.
using FXToLoopOptions = ConvertFXToLoopPassOptions;

/// Adds the patterns that rewrite fx ops into loop nodes.
void populateFXToLoopPatterns(RewritePatternSet &patterns,
                              const FXToLoopOptions &options);

/// Adds the patterns that rewrite matrix products (a subset of the above).
/// kiln-fx-to-loop applies them first, so that they see their operands'
/// views (transposes, merged batch dimensions) before views become nodes.
void populateFXToLoopMatmulPatterns(RewritePatternSet &patterns,
                                    const FXToLoopOptions &options);

} // namespace kiln
} // namespace mlir

#endif // KILN_CONVERSION_FXTOLOOP_FXTOLOOP_H
