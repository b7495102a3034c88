//===- AttentionLowering.cpp - Attention ----------------------------------===//
//
// Part of Kiln. The CPU's flash attention and CUDA's memory-efficient
// attention and their gradients (without dropout), over static or dynamic
// batches, heads and sequence lengths: a loop.attention node (with its
// logsumexp where that is read) and a loop.attention_backward, a mask added
// to their scores in their scores regions. kiln-loop-expand-attention
// writes them out for targets without kernels for them.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/AttentionBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// The operands of the attention ops that their lowerings check alike:
/// [B, H, L, E] query, key and value of one rank and dtype, whose head sizes
/// (E, the scale's and the products' inner size) are static; batches, heads
/// and sequence lengths may be dynamic.
static bool hasAttentionOperands(Value query, Value key, Value value) {
  auto queryType = cast<RankedTensorType>(query.getType());
  int64_t rank = queryType.getRank();
  if (rank < 3)
    return false;
  for (Value operand : {key, value}) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != rank ||
        type.getElementType() != queryType.getElementType() ||
        type.isDynamicDim(rank - 1))
      return false;
  }
  return !queryType.isDynamicDim(rank - 1);
}

/// The factor of attention's scores: `scaleAttr`, else 1/√E for queries
/// [..., E].
static double getAttentionScale(Value query, std::optional<APFloat> scaleAttr) {
  if (scaleAttr)
    return scaleAttr->convertToDouble();
  auto type = cast<RankedTensorType>(query.getType());
  return 1.0 / std::sqrt(static_cast<double>(type.getShape().back()));
}

/// Fills `scores` (a loop.attention node's region, `rank` indices and an
/// `accumulator` score) with the score plus `mask`.
static void buildMaskRegion(OpBuilder &b, Location loc, Region &scores,
                            int64_t rank, Type accumulator, Value mask) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> argTypes(rank, b.getIndexType());
  argTypes.push_back(accumulator);
  Block *body = b.createBlock(&scores, {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
  Value score =
      loop::addAttentionMask(b, loc, mask, body->getArguments().drop_back(),
                             body->getArguments().back(), accumulator);
  loop::YieldOp::create(b, loc, score);
}

/// A loop.attention node of `query`, `key` and `value` into `outputType`,
/// its scores plus `mask` where there is one, with its logsumexp when
/// `withLogsumexp`.
static loop::AttentionOp
createAttentionNode(OpBuilder &b, Location loc, Value query, Value key,
                    Value value, Value mask, bool causal, double scale,
                    RankedTensorType outputType, bool withLogsumexp) {
  Type accumulator = getNormalizationDtype(
      b, cast<RankedTensorType>(query.getType()).getElementType());
  Type logsumexpType;
  if (withLogsumexp)
    logsumexpType =
        RankedTensorType::get(outputType.getShape().drop_back(), accumulator);
  auto node = loop::AttentionOp::create(
      b, loc, outputType, logsumexpType, query, key, value,
      getSizesLike(b, loc, outputType, query), b.getF64FloatAttr(scale),
      causal ? b.getUnitAttr() : UnitAttr());
  if (mask)
    buildMaskRegion(b, loc, node.getScores(), outputType.getRank(), accumulator,
                    mask);
  return node;
}

/// The node's logsumexp `logsumexp` ([B..., L]) as the op's of `type`
/// ([B..., rows]): converted to its element type, and, with `padsRows`
/// (CUDA's kernel pads the rows to a multiple of 32; `rows` where
/// dynamic), +inf past the L queries.
static Value convertLogsumexp(OpBuilder &b, Location loc, Value logsumexp,
                              RankedTensorType type, Value rows,
                              bool padsRows) {
  auto nodeType = cast<RankedTensorType>(logsumexp.getType());
  int64_t last = type.getRank() - 1;
  int64_t queries = nodeType.getShape().back();
  // Whether rows are padded is known only at run time where either count
  // is dynamic.
  bool padded =
      padsRows && (ShapedType::isDynamic(queries) || type.isDynamicDim(last) ||
                   type.getShape().back() > queries);
  if (!padded && nodeType == type)
    return logsumexp;
  SmallVector<Value> dynamicSizes =
      collectDynamicSizes(type, [&](int64_t dim) -> Value {
        return dim == last ? rows : getDimSize(b, loc, logsumexp, dim);
      });
  return buildGeneratorNode(
      b, loc, type, dynamicSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        Value row = ivs.back();
        Value lastQuery =
            arith::SubIOp::create(b, loc, getDimSize(b, loc, logsumexp, last),
                                  arith::ConstantIndexOp::create(b, loc, 1));
        SmallVector<Value> indices(ivs.drop_back());
        // A padded row loads the last query's and drops it.
        indices.push_back(
            padded ? arith::MinUIOp::create(b, loc, row, lastQuery) : row);
        Value result = loop::LoadOp::create(b, loc, logsumexp, indices);
        if (padded)
          result = arith::SelectOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, row,
                                    lastQuery),
              makeFloat(b, loc, nodeType.getElementType(),
                        std::numeric_limits<double>::infinity()),
              result);
        return convertScalar(b, loc, result, nodeType.getElementType(),
                             type.getElementType());
      });
}

/// The output and logsumexp of attention op `op` (without dropout; its
/// mask or bias `mask`), into the types of `op`'s results `output` and
/// `logsumexp`: a loop.attention node, with its logsumexp unless that is
/// empty or unused (it then holds NaNs); failure where it does not lower.
template <typename OpTy>
static FailureOr<std::pair<Value, Value>>
buildAttentionResults(PatternRewriter &rewriter, OpTy op, Value mask,
                      Value output, Value logsumexp) {
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  if (op.getDropoutP().convertToDouble() != 0.0)
    return rewriter.notifyMatchFailure(op, "dropout");
  if (!hasAttentionOperands(query, key, value))
    return rewriter.notifyMatchFailure(op,
                                       "dynamic head sizes or mixed operands");
  Location loc = op.getLoc();
  auto outputType = cast<RankedTensorType>(output.getType());
  auto logsumexpType = cast<RankedTensorType>(logsumexp.getType());
  double scale = getAttentionScale(query, op.getScale());
  // The CPU's kernel keeps a row per query; CUDA's pads to a multiple of 32
  // (its rows are dynamic only where it computes them).
  constexpr bool padsRows =
      std::is_same_v<OpTy, fx::ScaledDotProductEfficientAttentionOp>;
  // (Without compute_log_sumexp, the verifier makes the rows a static 0.)
  int64_t rank = cast<RankedTensorType>(query.getType()).getRank();
  Value rows;
  if (logsumexpType.isDynamicDim(logsumexpType.getRank() - 1)) {
    rows = getDimSize(rewriter, loc, query, rank - 2);
    if constexpr (padsRows) {
      Value alignment = arith::ConstantIndexOp::create(rewriter, loc, 32);
      rows = arith::MulIOp::create(
          rewriter, loc,
          arith::CeilDivUIOp::create(rewriter, loc, rows, alignment),
          alignment);
    }
  }
  bool emptyStatistics =
      logsumexpType.hasStaticShape() && logsumexpType.getNumElements() == 0;
  bool withLogsumexp = !emptyStatistics && !logsumexp.use_empty();
  loop::AttentionOp node =
      createAttentionNode(rewriter, loc, query, key, value, mask,
                          op.getIsCausal(), scale, outputType, withLogsumexp);
  if (withLogsumexp)
    return std::make_pair(Value(node.getResult()),
                          convertLogsumexp(rewriter, loc, node.getLogsumexp(),
                                           logsumexpType, rows, padsRows));
  SmallVector<Value> statisticsSizes =
      collectDynamicSizes(logsumexpType, [&](int64_t dim) {
        return dim == logsumexpType.getRank() - 1
                   ? rows
                   : getDimSize(rewriter, loc, query, dim);
      });
  Value unused = buildGeneratorNode(
      rewriter, loc, logsumexpType, statisticsSizes,
      [&](OpBuilder &b, Location loc, ValueRange) {
        return makeFloat(b, loc, logsumexpType.getElementType(),
                         std::numeric_limits<double>::quiet_NaN());
      });
  return std::make_pair(Value(node.getResult()), unused);
}

/// Lowers fx.scaled_dot_product_flash_attention_for_cpu (without dropout):
/// its output and logsumexp (buildAttentionResults).
struct FlashAttentionForCpuLowering
    : OpRewritePattern<fx::ScaledDotProductFlashAttentionForCpuOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ScaledDotProductFlashAttentionForCpuOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<std::pair<Value, Value>> results = buildAttentionResults(
        rewriter, op, op.getAttnMask(), op.getOutput(), op.getLogsumexp());
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, {results->first, results->second});
    return success();
  }
};

/// Lowers fx.scaled_dot_product_efficient_attention (without dropout), the
/// math of CUDA's memory-efficient kernel: its output and logsumexp
/// (buildAttentionResults; the logsumexp padded, or empty without
/// `compute_log_sumexp`), and a zero Philox state (no dropout draws
/// nothing).
struct EfficientAttentionLowering
    : OpRewritePattern<fx::ScaledDotProductEfficientAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::ScaledDotProductEfficientAttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<std::pair<Value, Value>> results = buildAttentionResults(
        rewriter, op, op.getAttnBias(), op.getOutput(), op.getLogSumexp());
    if (failed(results))
      return failure();
    auto stateType = cast<RankedTensorType>(op.getPhiloxSeed().getType());
    auto zeroState = [&]() {
      return buildGeneratorNode(
          rewriter, op.getLoc(), stateType, {},
          [&](OpBuilder &b, Location loc, ValueRange) -> Value {
            return makeInteger(b, loc, b.getI64Type(), 0);
          });
    };
    rewriter.replaceOp(
        op, {results->first, results->second, zeroState(), zeroState()});
    return success();
  }
};

/// The mask or bias that attention op `op` adds to its scores, if any.
static Value
getAttentionMask(fx::ScaledDotProductFlashAttentionForCpuBackwardOp op) {
  return op.getAttnMask();
}
static Value
getAttentionMask(fx::ScaledDotProductEfficientAttentionBackwardOp op) {
  return op.getAttnBias();
}

/// Lowers the gradients of the CPU's flash attention and of CUDA's
/// memory-efficient attention (without dropout) to loop.attention_backward:
/// its delta, Σ dO·O per query, a reduction before it, the saved logsumexp
/// in the accumulator type (the memory-efficient kernel's padded rows
/// dropped), its mask or bias added in its scores region. The memory-efficient
/// op's bias gradient, wanted only where the bias needs a gradient, does not
/// lower; unwanted, it is undefined (NaNs).
template <typename OpTy>
struct AttentionBackwardLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
    Value mask = getAttentionMask(op);
    if (op.getDropoutP().convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(op, "dropout");
    if (!hasAttentionOperands(query, key, value))
      return rewriter.notifyMatchFailure(
          op, "dynamic head sizes or mixed operands");
    constexpr bool isEfficient =
        std::is_same_v<OpTy, fx::ScaledDotProductEfficientAttentionBackwardOp>;
    if constexpr (isEfficient) {
      if (mask && op.getGradInputMask()[3])
        return rewriter.notifyMatchFailure(op, "the bias's gradient");
    }
    Type dtype = cast<RankedTensorType>(query.getType()).getElementType();
    Type accumulator = getNormalizationDtype(rewriter, dtype);
    Value grad = op.getGradOut();
    auto gradType = cast<RankedTensorType>(grad.getType());
    auto rowsType =
        RankedTensorType::get(gradType.getShape().drop_back(), accumulator);
    Value logsumexp = op.getLogsumexp();
    auto logsumexpType = cast<RankedTensorType>(logsumexp.getType());
    // The memory-efficient kernel's rows may be padded even where the types
    // match: where they are dynamic.
    int64_t last = rowsType.getRank() - 1;
    bool mayBePadded = isEfficient && (rowsType.isDynamicDim(last) ||
                                       logsumexpType.isDynamicDim(last));
    if (logsumexpType != rowsType || mayBePadded)
      logsumexp = buildGeneratorNode(
          rewriter, loc, rowsType, getSizesLike(rewriter, loc, rowsType, grad),
          [&](OpBuilder &b, Location loc, ValueRange ivs) {
            return convertScalar(b, loc,
                                 loop::LoadOp::create(b, loc, logsumexp, ivs),
                                 logsumexpType.getElementType(), accumulator);
          });
    Value delta = loop::buildAttentionDelta(rewriter, loc, grad, op.getOut(),
                                            accumulator);
    auto gradQueryType = cast<RankedTensorType>(op.getGradQuery().getType());
    auto gradKeyType = cast<RankedTensorType>(op.getGradKey().getType());
    auto node = loop::AttentionBackwardOp::create(
        rewriter, loc, gradQueryType, gradKeyType,
        cast<RankedTensorType>(op.getGradValue().getType()), query, key, value,
        grad, logsumexp, delta,
        getSizesLike(rewriter, loc, gradQueryType, query),
        getSizesLike(rewriter, loc, gradKeyType, key),
        rewriter.getF64FloatAttr(getAttentionScale(query, op.getScale())),
        op.getIsCausal() ? rewriter.getUnitAttr() : UnitAttr());
    if (mask)
      buildMaskRegion(rewriter, loc, node.getScores(), gradType.getRank(),
                      accumulator, mask);
    SmallVector<Value> results(node.getResults());
    if constexpr (isEfficient) {
      // Undefined, so a dynamic size may as well be 0.
      auto gradBiasType = cast<RankedTensorType>(op.getGradBias().getType());
      results.push_back(buildGeneratorNode(
          rewriter, loc, gradBiasType,
          collectDynamicSizes(gradBiasType,
                              [&](int64_t) -> Value {
                                return arith::ConstantIndexOp::create(rewriter,
                                                                      loc, 0);
                              }),
          [&](OpBuilder &b, Location loc, ValueRange) {
            return makeFloat(b, loc, gradBiasType.getElementType(),
                             std::numeric_limits<double>::quiet_NaN());
          }));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void fxtoloop::populateAttentionLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FlashAttentionForCpuLowering, EfficientAttentionLowering,
               AttentionBackwardLowering<
                   fx::ScaledDotProductFlashAttentionForCpuBackwardOp>,
               AttentionBackwardLowering<
                   fx::ScaledDotProductEfficientAttentionBackwardOp>>(ctx);
}
