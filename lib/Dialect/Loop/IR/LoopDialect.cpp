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

/// A pointwise node that copies a tensor of the same static shape up to a
/// permutation that keeps the order of the dimensions larger than 1 (a
/// transpose that moves only size-1 dimensions: the channels-last copy of a
/// 1x1 or depthwise filter, of a 1x1 image) reads the elements in memory
/// order: it is a reshape, a view of its source, not a kernel.
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
        sourceType.getElementType() != type.getElementType() ||
        sourceType.getRank() != type.getRank())
      return failure();
    // A graph's result keeps a buffer of its own.
    if (llvm::any_of(node->getUsers(), [](Operation *user) {
          return user->hasTrait<OpTrait::IsTerminator>();
        }))
      return failure();
    // Each source dimension is read at a result dimension of its size, and
    // those larger than 1 in order: `squeezed` is their shape.
    SmallVector<int64_t> squeezed;
    llvm::SmallBitVector seen(type.getRank());
    int64_t lastLarge = -1;
    for (auto [d, index] : llvm::enumerate(load.getIndices())) {
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
    Value view = load.getSource();
    if (sourceType.getShape() == type.getShape()) {
      rewriter.replaceOp(node, view);
      return success();
    }
    std::optional<SmallVector<ReassociationIndices>> collapse =
        getReassociationIndicesForCollapse(sourceType.getShape(), squeezed);
    std::optional<SmallVector<ReassociationIndices>> expand =
        getReassociationIndicesForCollapse(type.getShape(), squeezed);
    if (!collapse || !expand)
      return failure();
    Location loc = node.getLoc();
    if (sourceType.getShape() != ArrayRef<int64_t>(squeezed))
      view = tensor::CollapseShapeOp::create(rewriter, loc, view, *collapse);
    if (type.getShape() != ArrayRef<int64_t>(squeezed))
      view = tensor::ExpandShapeOp::create(rewriter, loc, type, view, *expand);
    rewriter.replaceOp(node, view);
    return success();
  }
};
} // namespace

void LoopDialect::getCanonicalizationPatterns(
    RewritePatternSet &results) const {
  results.add<FoldDimOfNode, FoldReshapingCopy>(getContext());
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
