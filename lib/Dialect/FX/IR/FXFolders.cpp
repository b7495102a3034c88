//===- FXFolders.cpp - Folding fx copies and views ------------------------===//
//
// Part of Kiln. With value semantics a copy is its input, and so is a view or
// a permutation that changes nothing; a view of a view is one view of the
// original. Ops listed in FOLDERS of utils/fx_op_table.py fold here.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXOps.h"

using namespace mlir;
using namespace mlir::kiln::fx;

/// `self` when the op's result has its type: nothing changed.
template <typename OpTy> static OpFoldResult foldIdentity(OpTy op) {
  if (op.getSelf().getType() == op.getType())
    return op.getSelf();
  return {};
}

OpFoldResult AliasOp::fold(FoldAdaptor) { return getSelf(); }
OpFoldResult CloneOp::fold(FoldAdaptor) { return getSelf(); }
OpFoldResult LiftFreshCopyOp::fold(FoldAdaptor) { return getSelf(); }
OpFoldResult ExpandOp::fold(FoldAdaptor) { return foldIdentity(*this); }
OpFoldResult ToCopyOp::fold(FoldAdaptor) { return foldIdentity(*this); }

/// A view of `self`: the identity folds away, a view of a view reads the
/// original directly.
template <typename OpTy> static OpFoldResult foldView(OpTy op) {
  if (OpFoldResult identity = foldIdentity(op))
    return identity;
  Operation *producer = op.getSelf().getDefiningOp();
  if (isa_and_nonnull<ViewOp, UnsafeViewOp>(producer)) {
    op.getSelfMutable().assign(producer->getOperand(0));
    return op.getResult();
  }
  return {};
}

OpFoldResult ViewOp::fold(FoldAdaptor) { return foldView(*this); }
/// A squeeze that removes nothing: its dimensions are not 1 (a `?` never is).
OpFoldResult SqueezeOp::fold(FoldAdaptor) { return foldIdentity(*this); }

/// A slice of every element: step 1 from the start to the end, which
/// importers write as INT64_MAX (PyTorch's `x[:]`) or as the static size.
/// (The accessors return attributes' values unsigned; bounds are signed.)
OpFoldResult SliceOp::fold(FoldAdaptor) {
  auto type = cast<RankedTensorType>(getSelf().getType());
  if (type != getType() || getStepAttr().getInt() != 1 ||
      (getStartAttr() && getStartAttr().getInt() != 0))
    return {};
  if (!getEndAttr() ||
      getEndAttr().getInt() == std::numeric_limits<int64_t>::max())
    return getSelf();
  int64_t dim = getDimAttr().getInt();
  if (dim < 0)
    dim += type.getRank();
  if (dim < 0 || dim >= type.getRank() || type.isDynamicDim(dim))
    return {};
  return getEndAttr().getInt() >= type.getDimSize(dim) ? getSelf()
                                                       : OpFoldResult();
}
OpFoldResult UnsafeViewOp::fold(FoldAdaptor) { return foldView(*this); }

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> dims = getDims();
  bool identity = true;
  for (auto [index, dim] : llvm::enumerate(dims))
    identity &= dim == static_cast<int64_t>(index);
  if (identity)
    return getSelf();
  // permute(permute(x, a), b) is permute(x, c) with c[i] = a[b[i]].
  if (auto inner = getSelf().getDefiningOp<PermuteOp>()) {
    ArrayRef<int64_t> innerDims = inner.getDims();
    SmallVector<int64_t> composed;
    for (int64_t dim : dims)
      composed.push_back(innerDims[dim]);
    getSelfMutable().assign(inner.getSelf());
    setDims(composed);
    return getResult();
  }
  return {};
}
