//===- AttentionBuilders.cpp - Attention as products and a softmax --------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Utils/AttentionBuilders.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/NodeBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

bool loop::hasAttentionKernel(AttentionOp node) {
  return hasAttentionKernel(cast<RankedTensorType>(node.getQuery().getType()),
                            cast<RankedTensorType>(node.getValue().getType()));
}

bool loop::hasAttentionBackwardKernel(AttentionBackwardOp node) {
  return hasAttentionKernel(cast<RankedTensorType>(node.getQuery().getType()),
                            cast<RankedTensorType>(node.getValue().getType()));
}

bool loop::hasAttentionKernel(RankedTensorType query, RankedTensorType value) {
  Type element = query.getElementType();
  int64_t head = query.getShape().back();
  return (element.isF16() || element.isBF16()) &&
         value.getShape().back() == head && head % 16 == 0 &&
         head <= kMaxKernelHeadSize;
}

Value loop::addAttentionMask(OpBuilder &b, Location loc, Value mask,
                             ValueRange ivs, Value score, Type accumulator) {
  auto maskType = cast<RankedTensorType>(mask.getType());
  int64_t skipped = static_cast<int64_t>(ivs.size()) - maskType.getRank();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> indices;
  for (int64_t dim = 0; dim < maskType.getRank(); ++dim)
    indices.push_back(maskType.getDimSize(dim) == 1 ? zero
                                                    : ivs[skipped + dim]);
  return arith::AddFOp::create(
      b, loc, score,
      convertScalar(b, loc, LoadOp::create(b, loc, mask, indices),
                    maskType.getElementType(), accumulator));
}

/// The score that the scores region `scores` (empty for none) yields for
/// `score` at `ivs`, its ops cloned at `b`'s insertion point.
static Value applyScoresRegion(OpBuilder &b, Region &scores, ValueRange ivs,
                               Value score) {
  if (scores.empty())
    return score;
  Block &body = scores.front();
  IRMapping mapping;
  mapping.map(body.getArguments().drop_back(), ivs);
  mapping.map(body.getArguments().back(), score);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  return mapping.lookupOrDefault(
      cast<YieldOp>(body.getTerminator()).getValue());
}

Value loop::applyScoreModifier(OpBuilder &b, AttentionOp node, ValueRange ivs,
                               Value score) {
  return applyScoresRegion(b, node.getScores(), ivs, score);
}

Value loop::applyScoreModifier(OpBuilder &b, AttentionBackwardOp node,
                               ValueRange ivs, Value score) {
  return applyScoresRegion(b, node.getScores(), ivs, score);
}

Value loop::buildAttentionScores(OpBuilder &b, Location loc, Value query,
                                 Value key, bool causal, double scale,
                                 Type accumulator, ScoreModifierFn modify) {
  auto queryType = cast<RankedTensorType>(query.getType());
  auto keyType = cast<RankedTensorType>(key.getType());
  int64_t rank = queryType.getRank();
  SmallVector<int64_t> shape(queryType.getShape().drop_back());
  shape.push_back(keyType.getDimSize(rank - 2));
  auto type = RankedTensorType::get(shape, accumulator);
  Value products = buildMatmulNode(b, loc, query, key, type,
                                   /*transposeLhs=*/false,
                                   /*transposeRhs=*/true);
  return buildGeneratorNode(
      b, loc, type, getSizesLike(b, loc, type, products),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value score =
            arith::MulFOp::create(b, loc, LoadOp::create(b, loc, products, ivs),
                                  makeFloat(b, loc, accumulator, scale));
        if (modify)
          score = modify(b, loc, ivs, score);
        if (causal) {
          Value later = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                              ivs[rank - 1], ivs[rank - 2]);
          score = arith::SelectOp::create(
              b, loc, later,
              makeFloat(b, loc, accumulator,
                        -std::numeric_limits<double>::infinity()),
              score);
        }
        return score;
      });
}

/// The element of the rows' statistics `stats` ([B..., L] or [B..., L, 1])
/// at the scores' indices `ivs` ([B..., i, j]).
static Value loadRowStatistic(OpBuilder &b, Location loc, Value stats,
                              ValueRange ivs) {
  SmallVector<Value> indices(ivs.drop_back());
  if (cast<RankedTensorType>(stats.getType()).getRank() ==
      static_cast<int64_t>(ivs.size()))
    indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
  return LoadOp::create(b, loc, stats, indices);
}

AttentionNodes loop::buildAttentionNodes(OpBuilder &b, Location loc,
                                         Value query, Value key, Value value,
                                         bool causal, double scale,
                                         RankedTensorType outputType,
                                         ScoreModifierFn modify) {
  Type dtype = cast<RankedTensorType>(query.getType()).getElementType();
  Type accumulator = dtype.isF16() || dtype.isBF16() ? b.getF32Type() : dtype;
  Value scores = buildAttentionScores(b, loc, query, key, causal, scale,
                                      accumulator, modify);
  auto scoresType = cast<RankedTensorType>(scores.getType());
  int64_t last = scoresType.getRank() - 1;
  SmallVector<int64_t> statsShape(scoresType.getShape());
  statsShape[last] = 1;
  auto statsType = RankedTensorType::get(statsShape, accumulator);
  Value max = buildReduction(b, loc, scores, {last}, /*keepdim=*/true,
                             CombiningKind::max, statsType);
  SmallVector<Value> scoresSizes = getSizesLike(b, loc, scoresType, scores);
  // A row with every key hidden subtracts 0, not -inf: its exponentials
  // and sum are 0, and its probabilities 0 rather than NaN.
  Value zero = makeFloat(b, loc, accumulator, 0.0);
  Value exps = buildGeneratorNode(
      b, loc, scoresType, scoresSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value rowMax = loadRowStatistic(b, loc, max, ivs);
        Value hidden = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, rowMax,
            makeFloat(b, loc, accumulator,
                      -std::numeric_limits<double>::infinity()));
        return math::ExpOp::create(
            b, loc,
            arith::SubFOp::create(
                b, loc, LoadOp::create(b, loc, scores, ivs),
                arith::SelectOp::create(b, loc, hidden, zero, rowMax)));
      });
  Value sum = buildReduction(b, loc, exps, {last}, /*keepdim=*/true,
                             CombiningKind::sum, statsType);
  Value probabilities = buildGeneratorNode(
      b, loc, scoresType.clone(dtype), scoresSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value rowSum = loadRowStatistic(b, loc, sum, ivs);
        Value p = arith::SelectOp::create(
            b, loc,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, rowSum,
                                  zero),
            arith::DivFOp::create(b, loc, LoadOp::create(b, loc, exps, ivs),
                                  rowSum),
            zero);
        return convertScalar(b, loc, p, accumulator, dtype);
      });
  Value output = buildMatmulNode(b, loc, probabilities, value, outputType);
  return {output, max, sum};
}

Value loop::buildAttentionLogsumexp(OpBuilder &b, Location loc,
                                    const AttentionNodes &nodes,
                                    RankedTensorType type) {
  Type accumulator = type.getElementType();
  return buildGeneratorNode(
      b, loc, type, getSizesLike(b, loc, type, nodes.max),
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        SmallVector<Value> indices(ivs);
        indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
        Value sum = LoadOp::create(b, loc, nodes.sum, indices);
        Value logsumexp = arith::AddFOp::create(
            b, loc, LoadOp::create(b, loc, nodes.max, indices),
            math::LogOp::create(b, loc, sum));
        return arith::SelectOp::create(
            b, loc,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sum,
                                  makeFloat(b, loc, accumulator, 0.0)),
            logsumexp,
            makeFloat(b, loc, accumulator,
                      std::numeric_limits<double>::infinity()));
      });
}

Value loop::buildAttentionDelta(OpBuilder &b, Location loc, Value grad,
                                Value output, Type accumulator) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  int64_t last = gradType.getRank() - 1;
  Type dtype = gradType.getElementType();
  auto type =
      RankedTensorType::get(gradType.getShape().drop_back(), accumulator);
  return buildReduction(
      b, loc, grad, {last}, /*keepdim=*/false, CombiningKind::sum, type,
      [&](OpBuilder &b, Location loc, ValueRange indices, ValueRange) {
        auto load = [&](Value tensor) {
          return convertScalar(b, loc, LoadOp::create(b, loc, tensor, indices),
                               dtype, accumulator);
        };
        return arith::MulFOp::create(b, loc, load(grad), load(output))
            .getResult();
      });
}

AttentionGradients loop::buildAttentionGradients(OpBuilder &b,
                                                 AttentionBackwardOp node) {
  Location loc = node.getLoc();
  Value query = node.getQuery(), key = node.getKey(), value = node.getValue();
  Value grad = node.getGrad(), logsumexp = node.getLogsumexp();
  Type dtype = cast<RankedTensorType>(query.getType()).getElementType();
  Type accumulator = node.getAccumulatorType();
  double scale = node.getScale().convertToDouble();
  Value scores = buildAttentionScores(
      b, loc, query, key, node.getCausal(), scale, accumulator,
      [&](OpBuilder &b, Location, ValueRange ivs, Value score) {
        return applyScoreModifier(b, node, ivs, score);
      });
  auto scoresType = cast<RankedTensorType>(scores.getType());
  SmallVector<Value> scoresSizes = getSizesLike(b, loc, scoresType, scores);
  // p = exp(s - logsumexp): 0 for hidden scores and, through a logsumexp of
  // +inf, for rows with every key hidden.
  Value probabilities = buildGeneratorNode(
      b, loc, scoresType.clone(dtype), scoresSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value p = math::ExpOp::create(
            b, loc,
            arith::SubFOp::create(b, loc, LoadOp::create(b, loc, scores, ivs),
                                  loadRowStatistic(b, loc, logsumexp, ivs)));
        return convertScalar(b, loc, p, accumulator, dtype);
      });
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  Value gradValue =
      buildMatmulNode(b, loc, probabilities, grad, typeOf(node.getGradValue()),
                      /*transposeLhs=*/true);
  Value gradProbabilities = buildMatmulNode(b, loc, grad, value, scoresType,
                                            /*transposeLhs=*/false,
                                            /*transposeRhs=*/true);
  // dS, scaled once here for both products.
  Value delta = node.getDelta();
  Value gradScores = buildGeneratorNode(
      b, loc, scoresType.clone(dtype), scoresSizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        Value p =
            convertScalar(b, loc, LoadOp::create(b, loc, probabilities, ivs),
                          dtype, accumulator);
        Value dp = LoadOp::create(b, loc, gradProbabilities, ivs);
        Value ds = arith::MulFOp::create(
            b, loc,
            arith::MulFOp::create(
                b, loc, p,
                arith::SubFOp::create(b, loc, dp,
                                      loadRowStatistic(b, loc, delta, ivs))),
            makeFloat(b, loc, accumulator, scale));
        return convertScalar(b, loc, ds, accumulator, dtype);
      });
  return {buildMatmulNode(b, loc, gradScores, key, typeOf(node.getGradQuery())),
          buildMatmulNode(b, loc, gradScores, query, typeOf(node.getGradKey()),
                          /*transposeLhs=*/true),
          gradValue};
}
