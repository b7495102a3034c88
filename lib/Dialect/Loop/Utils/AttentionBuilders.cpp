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

Value loop::applyScoreModifier(OpBuilder &b, AttentionOp node, ValueRange ivs,
                               Value score) {
  if (!node.hasScoreModifier())
    return score;
  Block &body = node.getScores().front();
  IRMapping mapping;
  mapping.map(body.getArguments().drop_back(), ivs);
  mapping.map(body.getArguments().back(), score);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  return mapping.lookupOrDefault(node.getScoresYield().getValue());
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
  // A row statistic at the element `ivs` of the scores.
  auto loadRowStatistic = [&](OpBuilder &b, Location loc, Value stats,
                              ValueRange ivs) -> Value {
    SmallVector<Value> indices(ivs.drop_back());
    indices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    return LoadOp::create(b, loc, stats, indices);
  };
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
