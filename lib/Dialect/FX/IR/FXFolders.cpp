//===- FXFolders.cpp - Folding fx copies, views and identities ------------===//
//
// Part of Kiln. With value semantics a copy is its input, and so is a view or
// a permutation that changes nothing; a view of a view is one view of the
// original; arithmetic with a scalar that changes no element (x * 1) is its
// input. Ops listed in FOLDERS of utils/fx_op_table.py fold here.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXOps.h"

#include <cmath>

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

/// Whether a view's dynamic sizes are its operand's, in order: it names
/// none (`size_symbols`), and both have as many. A named view may move
/// sizes around (`[s0, s1] -> [s1, s0]` has the same type).
static bool keepsDynamicSizesInOrder(Operation *view) {
  auto source = cast<RankedTensorType>(view->getOperand(0).getType());
  auto result = cast<RankedTensorType>(view->getResult(0).getType());
  return !view->hasAttr("size_symbols") &&
         source.getNumDynamicDims() == result.getNumDynamicDims();
}

/// A view of `self`: the identity folds away, a view of a view reads the
/// original directly. Both only where the view's sizes still follow: from
/// the element count (at most one `?`), from its names, or in order from
/// an operand whose sizes are the original's in order.
template <typename OpTy> static OpFoldResult foldView(OpTy op) {
  auto type = cast<RankedTensorType>(op.getType());
  bool counted = type.getNumDynamicDims() <= 1;
  if (counted || keepsDynamicSizesInOrder(op))
    if (OpFoldResult identity = foldIdentity(op))
      return identity;
  Operation *producer = op.getSelf().getDefiningOp();
  if (isa_and_nonnull<ViewOp, UnsafeViewOp>(producer) &&
      (counted || op.getSizeSymbolsAttr() ||
       keepsDynamicSizesInOrder(producer))) {
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
  if (type != getType() || getDynamicStart() || getDynamicEnd() ||
      getStepAttr().getInt() != 1 ||
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

//===--- Scalars that change no element ----------------------------------===//

/// Whether the Scalar attribute `scalar` (bool, i64 or f64) is `value`;
/// zeros' signs must match too (integers' zeros are +0.0).
static bool isScalar(Attribute scalar, double value) {
  if (isa_and_nonnull<BoolAttr, IntegerAttr>(scalar) && std::signbit(value))
    return false;
  if (auto boolean = dyn_cast_or_null<BoolAttr>(scalar))
    return boolean.getValue() == (value != 0);
  if (auto integer = dyn_cast_or_null<IntegerAttr>(scalar))
    return static_cast<double>(integer.getInt()) == value;
  if (auto real = dyn_cast_or_null<FloatAttr>(scalar))
    return real.getValueAsDouble() == value &&
           real.getValue().isNegative() == std::signbit(value);
  return false;
}

/// Whether `alpha` (absent: 1) is positive and finite, also once rounded
/// to f32 (PyTorch's type for f32, f16 and bf16 tensors), so that `alpha *
/// other` is `other` for a zero `other`, sign included.
static bool isPositiveAlpha(Attribute alpha) {
  if (!alpha)
    return true;
  if (auto boolean = dyn_cast<BoolAttr>(alpha))
    return boolean.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(alpha))
    return integer.getInt() > 0;
  float value = static_cast<float>(cast<FloatAttr>(alpha).getValueAsDouble());
  return std::isfinite(value) && value > 0;
}

/// `self` for an op whose scalar leaves every element as it is, when the
/// result keeps self's type. Complex results never fold: PyTorch's complex
/// product and sum may turn a zero's sign or an infinity's partner (inf * 1
/// is inf + NaN i).
template <typename OpTy>
static OpFoldResult foldRealIdentity(OpTy op, bool unchanged) {
  Type element = cast<RankedTensorType>(op.getType()).getElementType();
  if (!unchanged || isa<ComplexType>(element))
    return {};
  return foldIdentity(op);
}

// Each folds only where IEEE arithmetic gives every element back: x * 1,
// x / 1, x ** 1 and x - 0 do (with a positive alpha); x + 0 turns -0.0 into
// +0.0, so it folds on integers only (and for floats with -0.0, which keeps
// every zero's sign). PyTorch's x ** 1 is a copy, complex too.
OpFoldResult MulScalarOp::fold(FoldAdaptor) {
  return foldRealIdentity(*this, isScalar(getOther(), 1.0));
}
OpFoldResult DivScalarOp::fold(FoldAdaptor) {
  return foldRealIdentity(*this, isScalar(getOther(), 1.0));
}
OpFoldResult PowTensorScalarOp::fold(FoldAdaptor) {
  return isScalar(getExponent(), 1.0) ? foldIdentity(*this) : OpFoldResult();
}
OpFoldResult SubScalarOp::fold(FoldAdaptor) {
  return foldRealIdentity(*this, isScalar(getOther(), 0.0) &&
                                     isPositiveAlpha(getAlphaAttr()));
}
OpFoldResult AddScalarOp::fold(FoldAdaptor) {
  bool isFloat =
      isa<FloatType>(cast<RankedTensorType>(getType()).getElementType());
  return foldRealIdentity(*this,
                          isPositiveAlpha(getAlphaAttr()) &&
                              isScalar(getOther(), isFloat ? -0.0 : 0.0));
}
