//===- AttentionLowering.cpp - Attention ----------------------------------===//
//
// Part of Kiln. The CPU's flash attention and its gradient and CUDA's
// memory-efficient attention (without dropout), over static or dynamic
// batches, heads and sequence lengths: a loop.attention node where the row
// statistics are not asked for, a mask added to its scores in its scores
// region (kiln-loop-expand-attention writes it out for targets without a
// kernel), else the scores' product, a
// softmax over the keys and the product with the values
// (loop::buildAttentionNodes), which row fusion turns into two products
// around one kernel.
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

/// Attention's forward nodes (loop::buildAttentionNodes) and the row
/// statistics' logsumexp.
struct AttentionForward {
  loop::AttentionNodes nodes;
  Type accumulator;

  /// logsumexp = max + log Σ exp per query, as `type` [B, H, rows] (its
  /// rows `rows` where dynamic); rows past the L queries (CUDA's kernel pads
  /// them to a multiple of 32: `padsRows`) are +inf, as that kernel writes
  /// them.
  Value buildLogsumexp(OpBuilder &b, Location loc, RankedTensorType type,
                       Value rows, bool padsRows) const {
    Value max = nodes.max, sum = nodes.sum;
    auto maxType = cast<RankedTensorType>(max.getType());
    int64_t queries = maxType.getShape().end()[-2];
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(type, [&](int64_t dim) -> Value {
          return dim == type.getRank() - 1 ? rows
                                           : getDimSize(b, loc, max, dim);
        });
    // Whether rows are padded is known only at run time where either count
    // is dynamic.
    bool padded = padsRows && (ShapedType::isDynamic(queries) ||
                               type.isDynamicDim(type.getRank() - 1) ||
                               type.getShape().back() > queries);
    return buildGeneratorNode(
        b, loc, type, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value row = ivs.back();
          Value lastQuery = arith::SubIOp::create(
              b, loc, getDimSize(b, loc, max, maxType.getRank() - 2),
              arith::ConstantIndexOp::create(b, loc, 1));
          SmallVector<Value> indices(ivs.drop_back());
          // A padded row loads the last query's statistics and drops them.
          indices.push_back(
              padded ? arith::MinUIOp::create(b, loc, row, lastQuery) : row);
          indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
          Value result = arith::AddFOp::create(
              b, loc, loop::LoadOp::create(b, loc, max, indices),
              math::LogOp::create(b, loc,
                                  loop::LoadOp::create(b, loc, sum, indices)));
          if (padded)
            result = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, row,
                                      lastQuery),
                makeFloat(b, loc, accumulator,
                          std::numeric_limits<double>::infinity()),
                result);
          return convertScalar(b, loc, result, accumulator,
                               type.getElementType());
        });
  }
};

/// A loop.attention node of `query`, `key` and `value` into `outputType`,
/// its scores plus `mask` where there is one.
static Value createAttentionNode(OpBuilder &b, Location loc, Value query,
                                 Value key, Value value, Value mask,
                                 bool causal, double scale,
                                 RankedTensorType outputType) {
  auto node = loop::AttentionOp::create(b, loc, outputType, query, key, value,
                                        getSizesLike(b, loc, outputType, query),
                                        b.getF64FloatAttr(scale),
                                        causal ? b.getUnitAttr() : UnitAttr());
  if (mask) {
    OpBuilder::InsertionGuard guard(b);
    Type accumulator = node.getAccumulatorType();
    SmallVector<Type> argTypes(outputType.getRank(), b.getIndexType());
    argTypes.push_back(accumulator);
    Block *body = b.createBlock(&node.getScores(), {}, argTypes,
                                SmallVector<Location>(argTypes.size(), loc));
    Value score =
        loop::addAttentionMask(b, loc, mask, body->getArguments().drop_back(),
                               body->getArguments().back(), accumulator);
    loop::YieldOp::create(b, loc, score);
  }
  return node.getResult();
}

/// The output and logsumexp of attention op `op` (without dropout; its
/// mask or bias `mask`), into the types of `op`'s results `output` and
/// `logsumexp`: a loop.attention node where the logsumexp is empty or
/// unused (it then holds NaNs), else the nodes of
/// loop::buildAttentionNodes and their logsumexp; failure where it does not
/// lower.
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
  auto getRows = [&]() -> Value {
    if (!logsumexpType.isDynamicDim(logsumexpType.getRank() - 1))
      return nullptr;
    Value rows = getDimSize(rewriter, loc, query, rank - 2);
    if constexpr (padsRows) {
      Value alignment = arith::ConstantIndexOp::create(rewriter, loc, 32);
      rows = arith::MulIOp::create(
          rewriter, loc,
          arith::CeilDivUIOp::create(rewriter, loc, rows, alignment),
          alignment);
    }
    return rows;
  };
  bool emptyStatistics =
      logsumexpType.hasStaticShape() && logsumexpType.getNumElements() == 0;
  if (emptyStatistics || logsumexp.use_empty()) {
    Value rows = getRows();
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
    return std::make_pair(createAttentionNode(rewriter, loc, query, key, value,
                                              mask, op.getIsCausal(), scale,
                                              outputType),
                          unused);
  }
  Type dtype = cast<RankedTensorType>(query.getType()).getElementType();
  Type accumulator = getNormalizationDtype(rewriter, dtype);
  auto addMask = [&](OpBuilder &b, Location loc, ValueRange ivs,
                     Value score) -> Value {
    return mask ? loop::addAttentionMask(b, loc, mask, ivs, score, accumulator)
                : score;
  };
  AttentionForward forward{
      loop::buildAttentionNodes(rewriter, loc, query, key, value,
                                op.getIsCausal(), scale, outputType, addMask),
      accumulator};
  return std::make_pair(forward.nodes.output,
                        forward.buildLogsumexp(rewriter, loc, logsumexpType,
                                               getRows(), padsRows));
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

/// Lowers fx.scaled_dot_product_flash_attention_for_cpu_backward (without
/// dropout) from the saved logsumexp: p = exp(scores - lse) recomputed,
/// dV = pᵀ·dO, dP = dO·vᵀ, D = Σ dO·O per query, dS = p·(dP - D), and
/// dQ = dS·k·scale, dK = dSᵀ·q·scale; the products read their transposed
/// operands in place.
struct FlashAttentionForCpuBackwardLowering
    : OpRewritePattern<fx::ScaledDotProductFlashAttentionForCpuBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult
  matchAndRewrite(fx::ScaledDotProductFlashAttentionForCpuBackwardOp op,
                  PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
    if (op.getDropoutP().convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(op, "dropout");
    if (!hasAttentionOperands(query, key, value))
      return rewriter.notifyMatchFailure(
          op, "dynamic head sizes or mixed operands");
    auto queryType = cast<RankedTensorType>(query.getType());
    Type dtype = queryType.getElementType();
    Type accumulator = getNormalizationDtype(rewriter, dtype);
    double scale = getAttentionScale(query, op.getScale());
    Value mask = op.getAttnMask();
    Value scores = loop::buildAttentionScores(
        rewriter, loc, query, key, op.getIsCausal(), scale, accumulator,
        [&](OpBuilder &b, Location loc, ValueRange ivs, Value score) -> Value {
          return mask ? loop::addAttentionMask(b, loc, mask, ivs, score,
                                               accumulator)
                      : score;
        });
    auto scoresType = cast<RankedTensorType>(scores.getType());
    Value logsumexp = op.getLogsumexp();
    auto logsumexpType = cast<RankedTensorType>(logsumexp.getType());
    Value probabilities = buildGeneratorNode(
        rewriter, loc, scoresType.clone(dtype),
        getSizesLike(rewriter, loc, scoresType, scores),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value rowLse = convertScalar(
              b, loc, loop::LoadOp::create(b, loc, logsumexp, ivs.drop_back()),
              logsumexpType.getElementType(), accumulator);
          Value p = math::ExpOp::create(
              b, loc,
              arith::SubFOp::create(
                  b, loc, loop::LoadOp::create(b, loc, scores, ivs), rowLse));
          return convertScalar(b, loc, p, accumulator, dtype);
        });
    Value gradOut = op.getGradOut();
    auto matmul = [&](RankedTensorType type, Value lhs, Value rhs,
                      bool transposeLhs, bool transposeRhs) {
      return loop::buildMatmulNode(rewriter, loc, lhs, rhs, type, transposeLhs,
                                   transposeRhs);
    };
    Value gradValue =
        matmul(cast<RankedTensorType>(op.getGradValue().getType()),
               probabilities, gradOut, /*transposeLhs=*/true, false);
    Value gradProbabilities =
        matmul(scoresType, gradOut, value, false, /*transposeRhs=*/true);
    int64_t last = scoresType.getRank() - 1;
    auto outputType = cast<RankedTensorType>(op.getOut().getType());
    Value rowDot = buildReduction(
        rewriter, loc,
        buildBroadcastPointwise(
            rewriter, loc, outputType.clone(accumulator),
            ValueRange{gradOut, op.getOut()},
            TypeRange{accumulator, accumulator}, accumulator,
            [](OpBuilder &b, Location loc, ValueRange e) -> Value {
              return arith::MulFOp::create(b, loc, e[0], e[1]);
            }),
        {last}, /*keepdim=*/true, CombiningKind::sum,
        getStatisticsType(outputType, {last}, accumulator));
    // dS, scaled once here for both products.
    Value gradScores = buildBroadcastPointwise(
        rewriter, loc, scoresType.clone(dtype),
        ValueRange{probabilities, gradProbabilities, rowDot},
        TypeRange{accumulator, accumulator, accumulator}, accumulator,
        [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
          return arith::MulFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, e[0],
                                    arith::SubFOp::create(b, loc, e[1], e[2])),
              makeFloat(b, loc, accumulator, scale));
        });
    Value gradQuery =
        matmul(cast<RankedTensorType>(op.getGradQuery().getType()), gradScores,
               key, false, false);
    Value gradKey = matmul(cast<RankedTensorType>(op.getGradKey().getType()),
                           gradScores, query, /*transposeLhs=*/true, false);
    rewriter.replaceOp(op, {gradQuery, gradKey, gradValue});
    return success();
  }
};
} // namespace

void fxtoloop::populateAttentionLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<FlashAttentionForCpuLowering, FlashAttentionForCpuBackwardLowering,
           EfficientAttentionLowering>(ctx);
}
