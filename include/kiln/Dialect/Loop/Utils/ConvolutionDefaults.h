//===- ConvolutionDefaults.h - When convolutions sum directly ---*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_UTILS_CONVOLUTIONDEFAULTS_H
#define KILN_DIALECT_LOOP_UTILS_CONVOLUTIONDEFAULTS_H

#include <cstdint>

namespace mlir::kiln::loop {

/// The most inputs a convolution's filter reads (channels per group times
/// kernel positions) for its windows to be summed directly rather than as
/// patches and a product: the default of kiln-fx-to-loop's
/// `direct-convolution-depth` (for gradients) and of
/// kiln-loop-expand-convolutions' `direct-depth`.
inline constexpr int64_t kDefaultDirectConvolutionDepth = 64;

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_UTILS_CONVOLUTIONDEFAULTS_H
