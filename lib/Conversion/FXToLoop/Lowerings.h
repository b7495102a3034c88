//===- Lowerings.h - The fx-to-loop lowerings by op family ------*- C++ -*-===//
//
// Part of Kiln. The patterns of kiln-fx-to-loop live in one file per op
// family (those of the fx dialect's verifiers and of the tests), each adding
// its own with a populate function; FXToLoop.cpp assembles them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_FXTOLOOP_LOWERINGS_H
#define KILN_LIB_CONVERSION_FXTOLOOP_LOWERINGS_H

#include "kiln/Conversion/FXToLoop/FXToLoop.h"

#include <cstdint>

namespace mlir {
class RewritePatternSet;
namespace kiln {
namespace fxtoloop {

/// Adds the lowerings of arithmetic, comparisons, bitwise ops, the common
/// activations and their gradients, where and _to_copy
/// (ElementwiseLowering.cpp).
void populateElementwiseLoweringPatterns(RewritePatternSet &patterns,
                                         const FXToLoopOptions &options);

/// Adds the lowerings of sums, means, extrema and their indices, products,
/// any and all, and of cdist's and pdist's distances
/// (ReductionLowering.cpp).
void populateReductionLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of embedding, index_select, gather, index and cat
/// (IndexingLowering.cpp).
void populateIndexingLoweringPatterns(RewritePatternSet &patterns,
                                      const FXToLoopOptions &options);

/// Adds the lowerings of views, flips, repeats, splits, padding, diagonal
/// and as_strided: index arithmetic, not copies (ViewLowering.cpp).
void populateViewLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of var, softmax, log_softmax, logsumexp and the batch,
/// layer and group normalizations, and of their gradients
/// (NormalizationLowering.cpp).
void populateNormalizationLoweringPatterns(RewritePatternSet &patterns,
                                           const FXToLoopOptions &options);

/// Adds the lowerings of the CPU's flash attention and its gradient and of
/// CUDA's memory-efficient attention (AttentionLowering.cpp).
void populateAttentionLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of mm, bmm, addmm and baddbmm (MatmulLowering.cpp).
void populateMatmulLoweringPatterns(RewritePatternSet &patterns,
                                    const FXToLoopOptions &options);

/// Adds the lowerings of convolutions, transposed or not, and of their
/// gradients (ConvolutionLowering.cpp).
void populateConvolutionLoweringPatterns(RewritePatternSet &patterns,
                                         const FXToLoopOptions &options);

/// Adds the lowerings of max, average and adaptive average pooling, their
/// gradients, and col2im (PoolingLowering.cpp).
void populatePoolingLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of full, fill, empty, scalar_tensor, arange and
/// constant (CreationLowering.cpp).
void populateCreationLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of the elementwise math that PyTorch's Core ATen
/// opset has beyond the common activations: inverse and hyperbolic
/// trigonometry, rounding, sign and classification, pow with tensor
/// exponents, tensor clamps, lerp, addcmul and addcdiv (MathLowering.cpp).
void populateMathLoweringPatterns(RewritePatternSet &patterns,
                                  const FXToLoopOptions &options);

/// Adds the lowerings of view_as_complex, view_as_real, complex add, sub,
/// mul, div and neg, and of the ops on complex tensors that work on the
/// parts' tensors: scatters, variances, sums, products, scans
/// (ComplexLowering.cpp).
void populateComplexLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of the elementary functions of complex numbers:
/// exponentials, logarithms, roots, powers, the trigonometric and hyperbolic
/// functions and their inverses, sigmoid, abs, angle, eq and ne
/// (ComplexMathLowering.cpp).
void populateComplexMathLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of the real-to-complex and complex-to-real Fourier
/// transforms (FFTLowering.cpp).
void populateFFTLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowering of bilinear upsampling (InterpolationLowering.cpp).
void populateInterpolationLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of the random ops (RandomLowering.cpp).
void populateRandomLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of cumsum and cumprod (ScanLowering.cpp).
void populateScanLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of the accumulating scatters (ScatterLowering.cpp).
void populateScatterLoweringPatterns(RewritePatternSet &patterns,
                                     const FXToLoopOptions &options);

/// Adds the lowerings of fx.symbol_value and of slices and selects whose
/// bounds are known only at run time (SymbolicBoundsLowering.cpp).
void populateSymbolicBoundsLoweringPatterns(RewritePatternSet &patterns);

/// Adds the lowerings of slice_scatter and select_scatter
/// (ViewScatterLowering.cpp).
void populateViewScatterLoweringPatterns(RewritePatternSet &patterns);

} // namespace fxtoloop
} // namespace kiln
} // namespace mlir

#endif // KILN_LIB_CONVERSION_FXTOLOOP_LOWERINGS_H
