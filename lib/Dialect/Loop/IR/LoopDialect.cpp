//===- LoopDialect.cpp - loop dialect registration ------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/IR/LoopDialect.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln::loop;

#include "kiln/Dialect/Loop/IR/LoopOpsDialect.cpp.inc"

void LoopDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Loop/IR/LoopOps.cpp.inc"
      >();
}

namespace {
/// `tensor.dim` of a dynamic dimension of a node's result is the node's own
/// size operand; folding it keeps size queries from holding the node alive.
struct FoldDimOfNode : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::DimOp dimOp,
                                PatternRewriter &rewriter) const override {
    auto node = dimOp.getSource().getDefiningOp<LoopNodeOpInterface>();
    std::optional<int64_t> dim = dimOp.getConstantIndex();
    if (!node || !dim)
      return failure();
    RankedTensorType type = node.getResultType();
    if (*dim < 0 || *dim >= type.getRank() || !type.isDynamicDim(*dim))
      return failure();
    rewriter.replaceOp(dimOp,
                       node.getDynamicSizes()[type.getDynamicDimIndex(*dim)]);
    return success();
  }
};

/// A pointwise node that copies a tensor of the same static shape up to
/// size-1 dimensions and a permutation that keeps the order of the
/// dimensions larger than 1 (a transpose that moves only size-1 dimensions:
/// the channels-last copy of a 1x1 or depthwise filter, of a 1x1 image; a
/// kept dimension of a sum dropped) reads the elements in memory order: it
/// is a reshape, a view of its source, not a kernel.
struct FoldReshapingCopy : OpRewritePattern<PointwiseOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PointwiseOp node,
                                PatternRewriter &rewriter) const override {
    Block &body = node.getBody().front();
    auto load = dyn_cast<LoadOp>(body.front());
    if (body.getOperations().size() != 2 || !load ||
        node.getYield().getValue() != load.getResult())
      return failure();
    RankedTensorType type = node.getResultType();
    RankedTensorType sourceType = load.getSource().getType();
    if (!type.hasStaticShape() || !sourceType.hasStaticShape() ||
        sourceType.getElementType() != type.getElementType())
      return failure();
    // A graph's result keeps a buffer of its own, unless it is the only
    // reader of a node's tensor, which bufferization then stores straight
    // into the result's buffer, seen through the inverse reshape.
    auto producer = load.getSource().getDefiningOp<LoopNodeOpInterface>();
    bool ownsSource = producer && load.getSource().hasOneUse();
    if (!ownsSource && llvm::any_of(node->getUsers(), [](Operation *user) {
          return user->hasTrait<OpTrait::IsTerminator>();
        }))
      return failure();
    // Each source dimension is read at a result dimension of its size, and
    // those larger than 1 in order: `squeezed` is their shape.
    SmallVector<int64_t> squeezed;
    llvm::SmallBitVector seen(type.getRank());
    int64_t lastLarge = -1;
    for (auto [d, index] : llvm::enumerate(load.getIndices())) {
      // A size-1 source dimension that no result dimension follows.
      if (sourceType.getDimSize(d) == 1 && matchPattern(index, m_Zero()))
        continue;
      auto arg = dyn_cast<BlockArgument>(index);
      if (!arg || arg.getOwner() != &body || seen.test(arg.getArgNumber()))
        return failure();
      int64_t dim = arg.getArgNumber();
      seen.set(dim);
      int64_t size = sourceType.getDimSize(d);
      if (size != type.getDimSize(dim))
        return failure();
      if (size == 1)
        continue;
      if (dim < lastLarge)
        return failure();
      lastLarge = dim;
      squeezed.push_back(size);
    }
    // Result dimensions that no source dimension follows have size 1.
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (!seen.test(dim) && type.getDimSize(dim) != 1)
        return failure();
    Value view = load.getSource();
    if (sourceType.getShape() == type.getShape()) {
      rewriter.replaceOp(node, view);
      return success();
    }
    // Collapsed to the dimensions larger than 1, then expanded to the
    // result's (either step may be nothing).
    auto reassociate = [&](ArrayRef<int64_t> shape) {
      return shape == ArrayRef<int64_t>(squeezed)
                 ? std::nullopt
                 : getReassociationIndicesForCollapse(shape, squeezed);
    };
    std::optional<SmallVector<ReassociationIndices>> collapse =
        reassociate(sourceType.getShape());
    std::optional<SmallVector<ReassociationIndices>> expand =
        reassociate(type.getShape());
    if ((!collapse && sourceType.getShape() != ArrayRef<int64_t>(squeezed)) ||
        (!expand && type.getShape() != ArrayRef<int64_t>(squeezed)))
      return failure();
    Location loc = node.getLoc();
    if (collapse)
      view = tensor::CollapseShapeOp::create(rewriter, loc, view, *collapse);
    if (expand)
      view = tensor::ExpandShapeOp::create(rewriter, loc, type, view, *expand);
    rewriter.replaceOp(node, view);
    return success();
  }
};

/// Whether each group of `groups` over `shape` has at most one dimension
/// that is not a static 1: a reshape that only adds or drops size-1
/// dimensions, whose indices map one to one without arithmetic.
static bool movesOnlyUnitDims(ArrayRef<int64_t> shape,
                              ArrayRef<ReassociationIndices> groups) {
  // (The verifier lets dimensions out of range through.)
  auto inRange = [&](int64_t dim) {
    return dim >= 0 && dim < static_cast<int64_t>(shape.size());
  };
  return llvm::all_of(groups, [&](const ReassociationIndices &group) {
    return llvm::all_of(group, inRange) &&
           llvm::count_if(group,
                          [&](int64_t dim) { return shape[dim] != 1; }) <= 1;
  });
}

/// A load through a reshape that only adds or drops size-1 dimensions (a
/// per-channel vector seen as [1, C, 1, 1]) reads the reshape's source: its
/// readers then read the node that made it, which can be inlined into them
/// or fused with them, rather than a view that stops both.
struct LoadThroughUnitReshape : OpRewritePattern<LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LoadOp load,
                                PatternRewriter &rewriter) const override {
    Value source;
    SmallVector<Value> indices;
    Value zero;
    auto getZero = [&]() {
      if (!zero)
        zero = arith::ConstantIndexOp::create(rewriter, load.getLoc(), 0);
      return zero;
    };
    // Per group, the index of its dimension larger than 1, or 0.
    auto pick = [&](ArrayRef<int64_t> shape, const ReassociationIndices &group,
                    ValueRange groupIndices) -> Value {
      for (auto [dim, index] : llvm::zip_equal(group, groupIndices))
        if (shape[dim] != 1)
          return index;
      return getZero();
    };
    rewriter.setInsertionPoint(load);
    if (auto expand = load.getSource().getDefiningOp<tensor::ExpandShapeOp>()) {
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      SmallVector<ReassociationIndices> groups =
          expand.getReassociationIndices();
      if (!movesOnlyUnitDims(shape, groups))
        return failure();
      source = expand.getSrc();
      for (const ReassociationIndices &group : groups) {
        SmallVector<Value> groupIndices = llvm::map_to_vector(
            group, [&](int64_t dim) { return load.getIndices()[dim]; });
        indices.push_back(pick(shape, group, groupIndices));
      }
    } else if (auto collapse =
                   load.getSource().getDefiningOp<tensor::CollapseShapeOp>()) {
      ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
      SmallVector<ReassociationIndices> groups =
          collapse.getReassociationIndices();
      if (!movesOnlyUnitDims(shape, groups))
        return failure();
      source = collapse.getSrc();
      for (auto [group, index] : llvm::zip_equal(groups, load.getIndices()))
        for (int64_t dim : group)
          indices.push_back(shape[dim] != 1 || group.size() == 1 ? index
                                                                 : getZero());
    } else {
      return failure();
    }
    rewriter.replaceOpWithNewOp<LoadOp>(load, source, indices);
    return success();
  }
};

/// In a node's body, an induction variable of static extent E divided by a
/// constant of at least E is 0, and its remainder by one is itself: what
/// a view's index arithmetic leaves when it merges or splits size-1
/// dimensions (a sum's kept dimension read through a reshape). Folded, the
/// node is a plain copy that FoldReshapingCopy can see.
template <typename NodeOp>
struct FoldBoundedIndexArithmetic : OpRewritePattern<NodeOp> {
  using OpRewritePattern<NodeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(NodeOp node,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> space =
        cast<LoopNodeOpInterface>(node.getOperation()).getIndexSpaceShape();
    Block &body = node.getBody().front();
    bool changed = false;
    for (BlockArgument arg : body.getArguments()) {
      int64_t extent = arg.getArgNumber() < space.size()
                           ? space[arg.getArgNumber()]
                           : ShapedType::kDynamic;
      if (ShapedType::isDynamic(extent))
        continue;
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        if (!isa<arith::DivUIOp, arith::RemUIOp>(user) ||
            user->getOperand(0) != arg)
          continue;
        APInt divisor;
        if (!matchPattern(user->getOperand(1), m_ConstantInt(&divisor)) ||
            divisor.getSExtValue() < extent)
          continue;
        rewriter.setInsertionPointToStart(&body);
        Value folded =
            isa<arith::DivUIOp>(user)
                ? arith::ConstantIndexOp::create(rewriter, user->getLoc(), 0)
                      .getResult()
                : Value(arg);
        rewriter.replaceOp(user, folded);
        changed = true;
      }
    }
    return success(changed);
  }
};
} // namespace

void LoopDialect::getCanonicalizationPatterns(
    RewritePatternSet &results) const {
  results.add<FoldDimOfNode, FoldReshapingCopy, LoadThroughUnitReshape,
              FoldBoundedIndexArithmetic<PointwiseOp>,
              FoldBoundedIndexArithmetic<ReduceOp>>(getContext());
}

bool mlir::kiln::loop::isNode(Operation *op) {
  return isa_and_nonnull<PointwiseOp, ReduceOp>(op);
}

int64_t mlir::kiln::loop::getElementBitWidth(Type elementType) {
  if (auto complex = dyn_cast<ComplexType>(elementType))
    return 2 * getElementBitWidth(complex.getElementType());
  if (elementType.isIndex())
    return 64;
  return elementType.getIntOrFloatBitWidth();
}

Type mlir::kiln::loop::getScalarType(Type elementType) {
  if (auto intType = dyn_cast<IntegerType>(elementType))
    return IntegerType::get(elementType.getContext(), intType.getWidth());
  return elementType;
}
