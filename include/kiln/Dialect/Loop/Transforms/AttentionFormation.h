//===- AttentionFormation.h - Written-out attention as one node -*- C++ -*-===//
//
// Part of Kiln. The library entry point behind kiln-loop-form-attention.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_ATTENTIONFORMATION_H
#define KILN_DIALECT_LOOP_TRANSFORMS_ATTENTIONFORMATION_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class RewriterBase;
namespace kiln::loop {
class AttentionOp;
class MatmulOp;

/// Where `product` multiplies the softmax of attention scores written out
/// with the values, as inlining leaves it, replaces the chain with one
/// loop.attention whose scores region holds the pointwise work between the
/// scores' product and the softmax (a scale, a soft cap, a mask, a bias),
/// and returns it. Only nodes that the GPU's attention kernel computes are
/// formed (loop::hasAttentionKernel). The chain, with q, k and v of one
/// 16-bit type and `dims` its leading result indices:
///
///   %s   = loop.matmul %q, %k {transpose_rhs}       (f32 or rounded sums)
///   %max = loop.reduce "max" over [S]: g(%s[dims, r], dims, r)
///   %sum = loop.reduce "sum" over [S]: exp(g(...) - %max[dims, 0])
///   %p   = loop.pointwise: round(exp(g(%s[dims, j], dims, j) - %max) / %sum)
///   product = loop.matmul %p, %v
///
/// where g is the same computation in the three bodies, both reductions
/// run over all S keys, and each intermediate has no other reader. The
/// node goes where `product` was; nothing changes where it fails. The scores
/// are not rounded to 16 bits before g, and rows whose every score is -inf
/// yield zeros, not NaN. A causal term of a mask in g (-inf where `j > i`)
/// becomes the node's `causal`, so that the kernel skips the blocks it hides.
FailureOr<AttentionOp> formAttention(RewriterBase &rewriter, MatmulOp product);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_ATTENTIONFORMATION_H
