//===- Passes.h - loop dialect transformation passes ------------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_PASSES_H
#define KILN_DIALECT_LOOP_TRANSFORMS_PASSES_H

#include "kiln/Dialect/Loop/Transforms/FusionReport.h"
#include "kiln/Dialect/Loop/Transforms/Inlining.h"
#include "kiln/Dialect/Loop/Transforms/RowFusion.h"
#include "kiln/Dialect/Loop/Transforms/SplitReductions.h"
#include "kiln/Dialect/Loop/Utils/ConvolutionDefaults.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln::loop {

// The options of kiln-loop-inline and kiln-loop-split-reductions are their
// libraries' (Inlining.h, SplitReductions.h).
#define GEN_PASS_DECL_CHANNELSLASTPASS
#define GEN_PASS_DECL_EXPANDATTENTIONPASS
#define GEN_PASS_DECL_EXPANDCONVOLUTIONSPASS
#define GEN_PASS_DECL_FORMATTENTIONPASS
#define GEN_PASS_DECL_FUSEEPILOGUESPASS
#define GEN_PASS_DECL_FUSEROWSPASS
#define GEN_PASS_DECL_FUSESIBLINGSPASS
#define GEN_PASS_DECL_FUSIONREPORTPASS
#define GEN_PASS_DECL_LOOPCSEPASS
#define GEN_PASS_REGISTRATION
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"

/// Adds the pattern of kiln-loop-expand-convolutions: a loop.convolution
/// whose filters read at most `directDepth` inputs into window sums, others
/// into patches and a product, or, with `library`, into a channels-last
/// convolution that a library computes (ExpandConvolutions.cpp).
void populateExpandConvolutionPatterns(RewritePatternSet &patterns,
                                       int64_t directDepth, bool library);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_TRANSFORMS_PASSES_H
