//===- AttentionFormation.cpp - Written-out attention as one node ---------===//
//
// Part of Kiln. Models that write attention out (soft-capped scores,
// biases from the positions, masks) reach the loop level as two products
// around a softmax's nodes, each of which recomputes the pointwise work on
// the scores. formAttention matches that chain structurally and moves the
// pointwise work into loop.attention's scores region, so that the scores
// never reach memory.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/AttentionFormation.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/AttentionBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

namespace {

/// Decides whether values of two node bodies compute the same: equal values
/// from outside both, block arguments that `arguments` pairs, or results of
/// ops alike (name, attributes, types) whose operands compute the same.
class SameComputation {
public:
  SameComputation(Block &lhs, Block &rhs, DenseMap<Value, Value> arguments)
      : lhs(lhs), rhs(rhs), arguments(std::move(arguments)) {}

  bool operator()(Value a, Value b) {
    if (Value paired = arguments.lookup(a))
      return paired == b;
    Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
    bool insideA = opA ? opA->getBlock() == &lhs : a.getParentBlock() == &lhs;
    bool insideB = opB ? opB->getBlock() == &rhs : b.getParentBlock() == &rhs;
    if (!insideA && !insideB)
      return a == b;
    if (!insideA || !insideB || !opA || !opB ||
        cast<OpResult>(a).getResultNumber() !=
            cast<OpResult>(b).getResultNumber())
      return false;
    auto [it, inserted] = known.try_emplace({opA, opB}, false);
    if (!inserted)
      return it->second;
    bool same = OperationEquivalence::isEquivalentTo(
        opA, opB, [&](Value x, Value y) { return success((*this)(x, y)); },
        /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
    known[{opA, opB}] = same;
    return same;
  }

private:
  Block &lhs, &rhs;
  DenseMap<Value, Value> arguments;
  DenseMap<std::pair<Operation *, Operation *>, bool> known;
};

/// The keys a softmax's row statistics must reduce over: the
/// probabilities' last size, and its value where dynamic.
struct KeyCount {
  int64_t size;
  Value dynamicSize;
};

/// The reduction of `kind` over the last dimension whose row statistic
/// `value` loads at the body's leading indices `rowIndices` and 0, if it is
/// one: [..., 1] of f32 from a reduction of one dimension.
ReduceOp getRowStatistic(Value value, CombiningKind kind,
                         ArrayRef<BlockArgument> rowIndices) {
  auto load = value.getDefiningOp<LoadOp>();
  if (!load)
    return nullptr;
  auto reduce = load.getSource().getDefiningOp<ReduceOp>();
  if (!reduce || reduce.getKind() != kind ||
      reduce.getReductionShape().size() != 1 ||
      !reduce.getResultType().getElementType().isF32())
    return nullptr;
  ValueRange indices = load.getIndices();
  if (indices.size() != rowIndices.size() + 1 ||
      !llvm::equal(indices.drop_back(), rowIndices) ||
      !matchPattern(indices.back(), m_Zero()) ||
      reduce.getResultType().getShape().back() != 1)
    return nullptr;
  return reduce;
}

/// Whether `reduce` reduces over exactly `keys` keys.
bool reducesOver(ReduceOp reduce, const KeyCount &keys) {
  int64_t size = reduce.getReductionShape().front();
  if (size != keys.size)
    return false;
  return !ShapedType::isDynamic(size) ||
         reduce.getReductionDynamicSizes().front() == keys.dynamicSize;
}

/// `value` as exp(g - max[row]): returns g and the maximum's reduction.
std::pair<Value, ReduceOp> matchShiftedExp(Value value,
                                           ArrayRef<BlockArgument> rows) {
  auto exp = value.getDefiningOp<math::ExpOp>();
  auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  if (!sub)
    return {};
  return {sub.getLhs(),
          getRowStatistic(sub.getRhs(), CombiningKind::max, rows)};
}

/// The probabilities' yield of `p` as e / sum[row] or e * (1 / sum[row]):
/// returns e and the sum's reduction.
std::pair<Value, ReduceOp> matchNormalized(Value value,
                                           ArrayRef<BlockArgument> rows) {
  if (auto div = value.getDefiningOp<arith::DivFOp>())
    return {div.getLhs(),
            getRowStatistic(div.getRhs(), CombiningKind::sum, rows)};
  auto mul = value.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return {};
  for (auto [e, inverse] : {std::pair(mul.getLhs(), mul.getRhs()),
                            std::pair(mul.getRhs(), mul.getLhs())}) {
    auto div = inverse.getDefiningOp<arith::DivFOp>();
    if (div && matchPattern(div.getLhs(), m_OneFloat()))
      if (ReduceOp sum =
              getRowStatistic(div.getRhs(), CombiningKind::sum, rows))
        return {e, sum};
  }
  return {};
}

/// Pairs the probabilities' indices with a softmax reduction's: its
/// leading result indices, and its reduction index for the last.
DenseMap<Value, Value> pairIndices(PointwiseOp p, ReduceOp reduce) {
  DenseMap<Value, Value> pairs;
  ArrayRef<BlockArgument> indices = p.getInductionVars();
  for (auto [index, other] :
       llvm::zip(indices.drop_back(), reduce.getResultInductionVars()))
    pairs[index] = other;
  pairs[indices.back()] = reduce.getReductionInductionVars().front();
  return pairs;
}

/// Whether every user of `value` is a load inside one of `readers`.
bool isOnlyLoadedBy(Value value, ArrayRef<Operation *> readers) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    return isa<LoadOp>(user) && llvm::any_of(readers, [&](Operation *reader) {
             return reader->isProperAncestor(user);
           });
  });
}

/// Whether `value` is the index argument `arg` or a cast of it to an
/// integer of 32 bits or more.
bool isIndex(Value value, BlockArgument arg) {
  // (A narrower integer could wrap.)
  Operation *cast = value.getDefiningOp();
  if (isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp>(cast) &&
      value.getType().isInteger() &&
      value.getType().getIntOrFloatBitWidth() >= 32)
    value = cast->getOperand(0);
  return value == arg;
}

/// Whether `condition` compares the key index with the query index: as
/// `key > query` (`hides`), else as `key <= query`.
bool isCausalTerm(Value condition, BlockArgument query, BlockArgument key,
                  bool hides) {
  auto compare = condition.getDefiningOp<arith::CmpIOp>();
  if (!compare)
    return false;
  using Predicate = arith::CmpIPredicate;
  Predicate predicate = compare.getPredicate();
  if (isIndex(compare.getLhs(), query) && isIndex(compare.getRhs(), key)) {
    switch (predicate) {
    case Predicate::ult:
      predicate = Predicate::ugt;
      break;
    case Predicate::slt:
      predicate = Predicate::sgt;
      break;
    case Predicate::uge:
      predicate = Predicate::ule;
      break;
    case Predicate::sge:
      predicate = Predicate::sle;
      break;
    default:
      return false;
    }
  } else if (!isIndex(compare.getLhs(), key) ||
             !isIndex(compare.getRhs(), query)) {
    return false;
  }
  if (hides)
    return predicate == Predicate::ugt || predicate == Predicate::sgt;
  return predicate == Predicate::ule || predicate == Predicate::sle;
}

/// `condition` without its causal term (isCausalTerm): for `hides`, one of
/// the terms of an `ori` tree, else of an `andi` tree. std::nullopt where
/// it has none, a null value where `condition` is the term itself.
std::optional<Value> dropCausalTerm(RewriterBase &rewriter, Value condition,
                                    BlockArgument query, BlockArgument key,
                                    bool hides) {
  if (isCausalTerm(condition, query, key, hides))
    return Value();
  Operation *op = condition.getDefiningOp();
  if (!op || !(hides ? isa<arith::OrIOp>(op) : isa<arith::AndIOp>(op)))
    return std::nullopt;
  for (unsigned side : {0u, 1u}) {
    std::optional<Value> rest =
        dropCausalTerm(rewriter, op->getOperand(side), query, key, hides);
    if (!rest)
      continue;
    Value other = op->getOperand(1 - side);
    if (!*rest)
      return other;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Operation *combined =
        rewriter.create(op->getLoc(), op->getName().getIdentifier(),
                        ValueRange{*rest, other}, op->getResultTypes());
    return combined->getResult(0);
  }
  return std::nullopt;
}

/// Where the scores region of `node` hides keys after the query's position
/// as a causal mask does (a select of -inf on `key > query`, or of the
/// score on `key <= query`, among other terms, reaching the yield through
/// additions), drops that term and sets `causal`, so that the kernel skips
/// the hidden blocks. Rows then keep every other term of the mask.
void extractCausalMask(RewriterBase &rewriter, AttentionOp node) {
  Block &body = node.getScores().front();
  auto query = body.getArgument(body.getNumArguments() - 3);
  auto key = body.getArgument(body.getNumArguments() - 2);
  // The select whose -inf reaches the yield, through additions only.
  Value value = node.getScoresYield().getValue();
  arith::SelectOp select;
  while (!select) {
    Operation *op = value.getDefiningOp();
    if (!op || op->getBlock() != &body)
      return;
    if (auto candidate = dyn_cast<arith::SelectOp>(op)) {
      select = candidate;
    } else if (auto add = dyn_cast<arith::AddFOp>(op)) {
      auto lhs = add.getLhs().getDefiningOp<arith::SelectOp>();
      value = lhs ? add.getLhs() : add.getRhs();
    } else {
      return;
    }
  }
  auto isMinusInfinity = [](Value v) {
    FloatAttr attr;
    return matchPattern(v, m_Constant(&attr)) && attr.getValue().isInfinity() &&
           attr.getValue().isNegative();
  };
  bool hides = isMinusInfinity(select.getTrueValue());
  if (!hides && !isMinusInfinity(select.getFalseValue()))
    return;
  std::optional<Value> rest =
      dropCausalTerm(rewriter, select.getCondition(), query, key, hides);
  if (!rest)
    return;
  if (*rest) {
    rewriter.modifyOpInPlace(
        select, [&] { select.getConditionMutable().assign(*rest); });
  } else {
    rewriter.replaceOp(select,
                       hides ? select.getFalseValue() : select.getTrueValue());
  }
  rewriter.modifyOpInPlace(node, [&] { node.setCausal(true); });
  // The term's ops, now dead, last first.
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      rewriter.eraseOp(op);
}

} // namespace

FailureOr<AttentionOp> loop::formAttention(RewriterBase &rewriter,
                                           MatmulOp product) {
  if (product.hasEpilogue() || product.getTransposeLhs() ||
      product.getTransposeRhs())
    return failure();
  auto p = product.getLhs().getDefiningOp<PointwiseOp>();
  if (!p || !p->hasOneUse())
    return failure();
  Value value = product.getRhs();
  Type dtype = product.getResultType().getElementType();
  if (!(dtype.isF16() || dtype.isBF16()) ||
      cast<RankedTensorType>(value.getType()).getElementType() != dtype ||
      p.getResultType().getElementType() != dtype)
    return failure();

  // The probabilities: round(exp(g - max) / sum).
  Block &pBody = p.getBody().front();
  ArrayRef<BlockArgument> indices = p.getInductionVars();
  ArrayRef<BlockArgument> rows = indices.drop_back();
  auto round = p.getYield().getValue().getDefiningOp<arith::TruncFOp>();
  if (!round || !round.getIn().getType().isF32())
    return failure();
  auto [exps, sum] = matchNormalized(round.getIn(), rows);
  if (!sum)
    return failure();
  auto [scores, max] = matchShiftedExp(exps, rows);
  if (!max || !scores.getType().isF32())
    return failure();

  // The same g in the sum's exponentials and as the maximum's values.
  Block &sumBody = sum.getBody().front();
  auto [sumScores, sumMax] = matchShiftedExp(
      sum.getYield().getValue(), sum.getResultInductionVars().drop_back());
  if (sumMax != max ||
      !SameComputation(pBody, sumBody, pairIndices(p, sum))(scores, sumScores))
    return failure();
  Block &maxBody = max.getBody().front();
  if (!SameComputation(pBody, maxBody,
                       pairIndices(p, max))(scores, max.getYield().getValue()))
    return failure();
  // Both over every key the probabilities take.
  RankedTensorType pType = p.getResultType();
  KeyCount keys{pType.getShape().back(), pType.isDynamicDim(pType.getRank() - 1)
                                             ? p.getDynamicSizes().back()
                                             : Value()};
  if (!reducesOver(max, keys) || !reducesOver(sum, keys))
    return failure();

  // g's ops in the probabilities' body, down to its one load of the scores'
  // product at the body's own indices: the scores region's ops.
  llvm::SetVector<Operation *> slice;
  LoadOp scoresLoad;
  bool valid = true;
  SmallVector<Value> worklist{scores};
  while (!worklist.empty() && valid) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != &pBody || !slice.insert(op))
      continue;
    if (auto load = dyn_cast<LoadOp>(op)) {
      auto scoresProduct = load.getSource().getDefiningOp<MatmulOp>();
      if (load.getSource() == max.getResult() ||
          load.getSource() == sum.getResult())
        valid = false;
      else if (scoresProduct && scoresProduct.getTransposeRhs() &&
               !scoresProduct.getTransposeLhs() &&
               !scoresProduct.hasEpilogue()) {
        valid = !scoresLoad && llvm::equal(load.getIndices(), indices);
        scoresLoad = load;
      }
    }
    if (op->getNumRegions())
      valid = false;
    llvm::append_range(worklist, op->getOperands());
  }
  if (!valid || !scoresLoad)
    return failure();
  auto scoresProduct = scoresLoad.getSource().getDefiningOp<MatmulOp>();
  Value query = scoresProduct.getLhs(), key = scoresProduct.getRhs();
  // The probabilities cover the scores, and the kernel computes the node.
  if (scoresProduct.getResultType().getShape() != pType.getShape() ||
      !llvm::equal(scoresProduct.getDynamicSizes(), p.getDynamicSizes()) ||
      !hasAttentionKernel(cast<RankedTensorType>(query.getType()),
                          cast<RankedTensorType>(value.getType())))
    return failure();
  if (cast<RankedTensorType>(query.getType()).getElementType() != dtype ||
      cast<RankedTensorType>(key.getType()).getElementType() != dtype ||
      !isOnlyLoadedBy(scoresProduct.getResult(), {p, sum, max}) ||
      !isOnlyLoadedBy(max.getResult(), {p, sum}) ||
      !isOnlyLoadedBy(sum.getResult(), {p}))
    return failure();

  // The score as the region takes it: the f32 sum (rounded sums widen to
  // it), then a factor of it as the node's scale.
  Value score = scoresLoad.getResult();
  if (!scoresProduct.getResultType().getElementType().isF32()) {
    auto widen = score.hasOneUse()
                     ? dyn_cast<arith::ExtFOp>(*score.getUsers().begin())
                     : nullptr;
    if (!widen || !widen.getType().isF32())
      return failure();
    slice.remove(widen);
    score = widen.getResult();
  }
  slice.remove(scoresLoad);
  double scale = 1.0;
  FloatAttr factor;
  if (score.hasOneUse() && score != scores) {
    Operation *user = *score.getUsers().begin();
    if (isa<arith::MulFOp, arith::DivFOp>(user) &&
        user->getOperand(0) == score &&
        matchPattern(user->getOperand(1), m_Constant(&factor))) {
      double c = factor.getValueAsDouble();
      scale = isa<arith::MulFOp>(user) ? c : 1.0 / c;
      slice.remove(user);
      score = user->getResult(0);
    }
  }

  // The node, the region's ops in the body's order.
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(product);
  auto node = AttentionOp::create(
      rewriter, product.getLoc(), product.getResultType(),
      /*logsumexp=*/Type(), query, key, value, product.getDynamicSizes(),
      rewriter.getF64FloatAttr(scale),
      /*causal=*/UnitAttr());
  {
    OpBuilder::InsertionGuard guard(rewriter);
    SmallVector<Type> argTypes(indices.size(), rewriter.getIndexType());
    argTypes.push_back(rewriter.getF32Type());
    Block *region = rewriter.createBlock(
        &node.getScores(), {}, argTypes,
        SmallVector<Location>(argTypes.size(), p.getLoc()));
    IRMapping mapping;
    mapping.map(indices, region->getArguments().drop_back());
    mapping.map(score, region->getArguments().back());
    for (Operation &op : pBody.without_terminator())
      if (slice.contains(&op))
        rewriter.clone(op, mapping);
    YieldOp::create(rewriter, p.getLoc(), mapping.lookupOrDefault(scores));
  }
  extractCausalMask(rewriter, node);
  // A region that yields the score as it takes it is none: the kernel
  // then folds the scale into its exponent.
  Block &region = node.getScores().front();
  if (node.getScoresYield().getValue() == region.getArguments().back() &&
      llvm::hasSingleElement(region))
    rewriter.eraseBlock(&region);
  rewriter.replaceOp(product, node.getResult());
  rewriter.eraseOp(p);
  rewriter.eraseOp(sum);
  rewriter.eraseOp(max);
  rewriter.eraseOp(scoresProduct);
  return node;
}
