//===- MatmulLowering.cpp - Matrix products -------------------------------===//
//
// Part of Kiln. mm, bmm, addmm and baddbmm as loop.matmul nodes, which read
// transposed operands and the merged rows of a view in place; addmm's and
// baddbmm's scaled sums as a pointwise node on the product.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

/// Whether `indices` are `ivs` with the last two swapped.
static bool isLastTwoSwapped(ValueRange indices, ValueRange ivs) {
  int64_t rank = ivs.size();
  if (static_cast<int64_t>(indices.size()) != rank || rank < 2)
    return false;
  for (int64_t dim = 0; dim < rank - 2; ++dim)
    if (indices[dim] != ivs[dim])
      return false;
  return indices[rank - 2] == ivs[rank - 1] &&
         indices[rank - 1] == ivs[rank - 2];
}

/// The tensor that `value` is, read transposed in its last two dimensions:
/// the source of an fx.permute or of the index-map node a permute lowers to
/// (a linear layer's `t(weight)`). Null if `value` is something else.
static Value getTransposeSource(Value value) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  if (rank < 2)
    return {};
  if (auto permute = value.getDefiningOp<fx::PermuteOp>()) {
    ArrayRef<int64_t> dims = permute.getDims();
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t expected = dim < rank - 2 ? dim : 2 * rank - 3 - dim;
      if ((dims[dim] + rank) % rank != expected)
        return {};
    }
    return permute.getSelf();
  }
  auto node = value.getDefiningOp<loop::PointwiseOp>();
  if (!node)
    return {};
  Block &body = node.getBody().front();
  auto load = dyn_cast<loop::LoadOp>(body.front());
  if (!load || load.getResult() != node.getYield().getValue() ||
      !isLastTwoSwapped(load.getIndices(), body.getArguments()))
    return {};
  return load.getSource();
}

/// `value` ([R, K]) as a collapse of the tensor [r..., K] whose leading
/// dimensions an fx view merges (a linear layer's input of rank 3 or more),
/// which costs nothing on contiguous buffers; `value` when it is not such a
/// view.
static Value collapseMergedRows(OpBuilder &b, Location loc, Value value) {
  Operation *view = value.getDefiningOp();
  auto type = cast<RankedTensorType>(value.getType());
  if (!isa_and_nonnull<fx::ViewOp, fx::UnsafeViewOp>(view) ||
      type.getRank() != 2 || type.isDynamicDim(1))
    return value;
  Value source = view->getOperand(0);
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t rank = sourceType.getRank();
  if (rank < 3 || sourceType.getDimSize(rank - 1) != type.getDimSize(1))
    return value;
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t dim = 0; dim < rank - 1; ++dim)
    groups[0].push_back(dim);
  groups[1].push_back(rank - 1);
  if (tensor::CollapseShapeOp::inferCollapsedType(sourceType, groups) != type)
    return value;
  return tensor::CollapseShapeOp::create(b, loc, type, source, groups);
}

Value fxtoloop::buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            RankedTensorType resultType) {
  bool transposeLhs = false, transposeRhs = false;
  if (resultType.getRank() == 2)
    lhs = collapseMergedRows(b, loc, lhs);
  if (Value source = getTransposeSource(lhs)) {
    lhs = source;
    transposeLhs = true;
  }
  if (Value source = getTransposeSource(rhs)) {
    rhs = source;
    transposeRhs = true;
  }
  return buildMatmulNode(b, loc, lhs, rhs, resultType, transposeLhs,
                         transposeRhs);
}

namespace {

/// Whether matrix products of `type`'s elements lower: floating point only.
static bool hasFloatElements(Type type) {
  return isa<FloatType>(cast<RankedTensorType>(type).getElementType());
}

/// The tensor [b..., X, Y] whose leading dimensions `value` ([B, X, Y], a
/// bmm operand) merges by a view (through expands that change nothing), as
/// torch.matmul's decomposition of batched products does; null otherwise.
static Value getUnmergedBatches(Value value) {
  Operation *view = value.getDefiningOp();
  if (!isa_and_nonnull<fx::ViewOp, fx::UnsafeViewOp>(view))
    return {};
  Value source = view->getOperand(0);
  while (auto expand = source.getDefiningOp<fx::ExpandOp>()) {
    if (expand.getSelf().getType() != expand.getType())
      break;
    source = expand.getSelf();
  }
  auto merged = cast<RankedTensorType>(value.getType());
  auto type = cast<RankedTensorType>(source.getType());
  if (type.getRank() <= 3 || !type.hasStaticShape() ||
      !merged.hasStaticShape() ||
      type.getShape().take_back(2) != merged.getShape().take_back(2))
    return {};
  return source;
}

/// Lowers bmm(view(a), view(b)) of tensors whose leading batch dimensions
/// the views merge as a loop.matmul over the unmerged tensors, so that
/// neither operand is copied to merge them (a view of the product gives
/// the bmm's result). Fails, changing nothing, on other operands.
static LogicalResult lowerUnmergedBmm(fx::BmmOp op, PatternRewriter &rewriter) {
  Value lhs = getUnmergedBatches(op.getSelf());
  Value rhs = getUnmergedBatches(op.getMat2());
  if (!lhs || !rhs)
    return failure();
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  ArrayRef<int64_t> batches = lhsType.getShape().drop_back(2);
  if (rhsType.getShape().drop_back(2) != batches)
    return failure();
  SmallVector<int64_t> shape(batches);
  llvm::append_range(shape, op.getType().getShape().take_back(2));
  Location loc = op.getLoc();
  Value product =
      buildMatmul(rewriter, loc, lhs, rhs, op.getType().clone(shape));
  // Views of the result read the product directly.
  for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
    Operation *user = use.getOwner();
    if (!isa<fx::ViewOp, fx::UnsafeViewOp>(user))
      continue;
    if (user->getResult(0).getType() == product.getType())
      rewriter.replaceOp(user, product);
    else
      rewriter.modifyOpInPlace(user, [&] { use.set(product); });
  }
  if (op->use_empty()) {
    rewriter.eraseOp(op);
    return success();
  }
  rewriter.replaceOpWithNewOp<fx::ViewOp>(op, op.getType(), product);
  return success();
}

/// Lowers fx.mm and fx.bmm to loop.matmul.
template <typename OpTy> struct MatmulLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!hasFloatElements(op.getType()))
      return rewriter.notifyMatchFailure(op, "integer matrix product");
    if constexpr (std::is_same_v<OpTy, fx::BmmOp>) {
      if (succeeded(lowerUnmergedBmm(op, rewriter)))
        return success();
    }
    rewriter.replaceOp(op, buildMatmul(rewriter, op.getLoc(), op->getOperand(0),
                                       op->getOperand(1), op.getType()));
    return success();
  }
};

/// Lowers fx.addmm and fx.baddbmm, `beta * self + alpha * (a x b)`, to a
/// loop.matmul and a pointwise node that scales and adds the broadcast
/// `self` (skipped for beta = 0, where PyTorch ignores `self`, NaNs too).
template <typename OpTy> struct AddMatmulLowering : OpRewritePattern<OpTy> {
  AddMatmulLowering(MLIRContext *ctx, const FXToLoopOptions &options)
      : OpRewritePattern<OpTy>(ctx), options(options) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType resultType = op.getType();
    if (!hasFloatElements(resultType))
      return rewriter.notifyMatchFailure(op, "integer matrix product");
    Location loc = op.getLoc();
    Type dtype = resultType.getElementType();
    Type computeDtype = getComputeDtype(dtype, options.computeInF32);
    // The product stays in f32 for 16-bit floats: PyTorch adds `self` to
    // the sums and rounds once.
    Value product =
        buildMatmul(rewriter, loc, op->getOperand(1), op->getOperand(2),
                    resultType.clone(computeDtype));
    std::optional<Attribute> beta = op.getBeta(), alpha = op.getAlpha();
    bool zeroBeta = isZeroScalar(beta);
    SmallVector<Value> inputs = {product};
    if (!zeroBeta)
      inputs.push_back(op.getSelf());
    Value result = buildBroadcastPointwise(
        rewriter, loc, resultType, inputs,
        SmallVector<Type>(inputs.size(), computeDtype), computeDtype,
        [&](OpBuilder &b, Location loc, ValueRange elements) {
          Value scaled = scaleByAlpha(b, loc, elements[0], computeDtype, alpha);
          if (zeroBeta)
            return scaled;
          Value self = scaleByAlpha(b, loc, elements[1], computeDtype, beta);
          return emitBinary(b, loc, BinaryKind::Add, self, scaled,
                            computeDtype);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  FXToLoopOptions options;
};
} // namespace

void fxtoloop::populateMatmulLoweringPatterns(RewritePatternSet &patterns,
                                              const FXToLoopOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulLowering<fx::MmOp>, MatmulLowering<fx::BmmOp>>(ctx);
  patterns
      .add<AddMatmulLowering<fx::AddmmOp>, AddMatmulLowering<fx::BaddbmmOp>>(
          ctx, options);
}
