//===- LoopDialect.cpp - loop dialect registration ------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/IR/LoopDialect.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
} // namespace

void LoopDialect::getCanonicalizationPatterns(
    RewritePatternSet &results) const {
  results.add<FoldDimOfNode>(getContext());
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
