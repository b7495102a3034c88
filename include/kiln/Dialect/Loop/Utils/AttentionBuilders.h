//===- AttentionBuilders.h - Attention as products and a softmax -*- C++
//-*-===//
//
// Part of Kiln. Attention written out in loop nodes: the scores' product, a
// softmax over the keys with its row statistics, and the product with the
// values. Row fusion turns the softmax into one kernel between the two
// products. The attention ops' lowerings use it where a mask or the
// statistics are asked for, and kiln-loop-expand-attention for a
// loop.attention that the target has no kernel for.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_UTILS_ATTENTIONBUILDERS_H
#define KILN_DIALECT_LOOP_UTILS_ATTENTIONBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::kiln::loop {
class AttentionBackwardOp;
class AttentionOp;

/// Query, key and value head sizes that the GPU's attention kernel takes:
/// equal, a multiple of 16, at most this.
inline constexpr int64_t kMaxKernelHeadSize = 128;

/// Whether the GPU's attention kernel computes `node`: f16 or bf16
/// operands whose head sizes are equal, a multiple of 16 and at most
/// kMaxKernelHeadSize.
bool hasAttentionKernel(AttentionOp node);

/// hasAttentionKernel for a node of queries of `queryType` and values of
/// `valueType`, keys like the queries.
bool hasAttentionKernel(RankedTensorType queryType, RankedTensorType valueType);

/// Whether the GPU's kernels of attention's gradients compute `node`: the
/// operands that hasAttentionKernel takes.
bool hasAttentionBackwardKernel(AttentionBackwardOp node);

/// Modifies the attention score `score` at `ivs` ([b..., i, j]) before the
/// softmax: a mask, a soft cap, a bias from the indices.
using ScoreModifierFn =
    function_ref<Value(OpBuilder &, Location, ValueRange ivs, Value score)>;

/// `score` (in `accumulator`) plus element `ivs` of the additive mask
/// `mask`, broadcast from its trailing dimensions (size-1 dimensions read
/// index 0).
Value addAttentionMask(OpBuilder &b, Location loc, Value mask, ValueRange ivs,
                       Value score, Type accumulator);

/// The score that `node`'s scores region yields for `score` at `ivs`, its
/// ops cloned at `b`'s insertion point; `score` itself without a region.
Value applyScoreModifier(OpBuilder &b, AttentionOp node, ValueRange ivs,
                         Value score);
Value applyScoreModifier(OpBuilder &b, AttentionBackwardOp node, ValueRange ivs,
                         Value score);

/// The attention scores [B..., L, S] in `accumulator`: query·keyᵀ (a
/// loop.matmul reading the keys transposed in place) times `scale`, through
/// `modify` if given, with keys after the query's position at -inf when
/// `causal` (PyTorch's top-left alignment).
Value buildAttentionScores(OpBuilder &b, Location loc, Value query, Value key,
                           bool causal, double scale, Type accumulator,
                           ScoreModifierFn modify = nullptr);

/// Attention's forward nodes, as PyTorch's kernels compute it in blocks.
struct AttentionNodes {
  /// The result, of the type asked for.
  Value output;
  /// Per query [B..., L, 1], in the accumulator type: the scores' maximum
  /// and Σ exp(score - max).
  Value max, sum;
};

/// Builds attention of `query`, `key` and `value` ([B..., L, E], [B..., S,
/// E], [B..., S, Ev]) into `outputType` ([B..., L, Ev]): the scores
/// (buildAttentionScores), their softmax in the accumulator type (f32 for
/// 16-bit elements) rounded to the operands' type, and its product with the
/// values. A row whose every score is -inf has probabilities 0 (and a
/// maximum of -inf), as in loop.attention.
AttentionNodes buildAttentionNodes(OpBuilder &b, Location loc, Value query,
                                   Value key, Value value, bool causal,
                                   double scale, RankedTensorType outputType,
                                   ScoreModifierFn modify = nullptr);

/// Each query's logsumexp [B..., L] of the `type` asked for (in the
/// accumulator type) from the statistics of `nodes`: max + log(sum), +inf
/// for a row with every key hidden, as loop.attention's.
Value buildAttentionLogsumexp(OpBuilder &b, Location loc,
                              const AttentionNodes &nodes,
                              RankedTensorType type);

/// loop.attention_backward's `delta` for attention's result `output` and
/// its gradient `grad` ([B..., L, Ev]): Σ grad · output per query, [B...,
/// L] in `accumulator`.
Value buildAttentionDelta(OpBuilder &b, Location loc, Value grad, Value output,
                          Type accumulator);

/// Attention's gradients, as loop.attention_backward defines them.
struct AttentionGradients {
  Value query, key, value;
};

/// Builds `node`'s gradients written out: the scores (buildAttentionScores
/// with the node's region), the probabilities from its logsumexp, rounded
/// to the operands' type, and the four products around dS, which reads
/// its transposed operands in place.
AttentionGradients buildAttentionGradients(OpBuilder &b,
                                           AttentionBackwardOp node);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_UTILS_ATTENTIONBUILDERS_H
