//===- ShapeVerifiers.cpp - view, reshape, concat and pad verifiers -------===//
//
// Part of Kiln. Ops that move or select elements without computing on them
// keep their input's dtype (cat promotes). Sizes that ATen passes as SymInt
// lists and that the result type restates (view, expand, split sizes) are not
// attributes: the result type carries them, with `?` for symbolic sizes.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// Requires the result to keep `self`'s dtype.
static LogicalResult verifySameDtype(Operation *op, RankedTensorType self,
                                     RankedTensorType result) {
  if (self.getElementType() == result.getElementType())
    return success();
  return op->emitOpError("result ")
         << result << " must have the dtype of `self` " << self;
}

/// Requires at most one of the attribute `name` and the operand (group
/// `group`, a symbolic value) `dynamicName`; returns whether the operand is
/// there.
static FailureOr<bool> hasSymbolicOperand(Operation *op, OperandGroups groups,
                                          unsigned group, StringRef name,
                                          StringRef dynamicName) {
  if (groups(group).empty())
    return false;
  if (op->getAttr(name))
    return op->emitOpError("has both `")
           << name << "` and `" << dynamicName << "`; a symbolic `" << name
           << "` is only the operand";
  return true;
}

/// The shape of self[..., start:end:step, ...] along `dim` (attributes
/// `start`, `end`, `step`), with kAnySize where a `?` or a symbolic bound
/// (operand groups `dynamicStart`, `dynamicEnd`) makes it unknowable.
static FailureOr<SmallVector<int64_t>>
getSliceShape(Operation *op, RankedTensorType self, OperandGroups groups = {},
              unsigned dynamicStart = 0, unsigned dynamicEnd = 0) {
  if (self.getRank() == 0)
    return op->emitOpError("cannot slice a zero-dim tensor");
  FailureOr<int64_t> dim =
      wrapDimOrError(op, "dim", getI64(op, "dim", 0), self.getRank());
  if (failed(dim))
    return failure();
  int64_t step = getI64(op, "step", 1);
  if (step <= 0)
    return op->emitOpError("`step` must be positive, but is ") << step;
  std::optional<int64_t> start = getOptionalI64(op, "start");
  std::optional<int64_t> end = getOptionalI64(op, "end");
  SmallVector<int64_t> shape(self.getShape());
  int64_t size = shape[*dim];
  if (groups) {
    FailureOr<bool> symbolicStart =
        hasSymbolicOperand(op, groups, dynamicStart, "start", "dynamic_start");
    if (failed(symbolicStart))
      return failure();
    FailureOr<bool> symbolicEnd =
        hasSymbolicOperand(op, groups, dynamicEnd, "end", "dynamic_end");
    if (failed(symbolicEnd))
      return failure();
    if (*symbolicStart || *symbolicEnd) {
      shape[*dim] = kAnySize;
      return shape;
    }
  }
  if (ShapedType::isDynamic(size)) {
    // The whole of a `?` dimension is `?`; any other slice of it depends on
    // the run-time size.
    bool whole = start.value_or(0) == 0 &&
                 end.value_or(std::numeric_limits<int64_t>::max()) ==
                     std::numeric_limits<int64_t>::max() &&
                 step == 1;
    shape[*dim] = whole ? ShapedType::kDynamic : kAnySize;
    return shape;
  }
  auto clamp = [&](int64_t index) {
    if (index < 0)
      index += size;
    return std::clamp<int64_t>(index, 0, size);
  };
  int64_t first = clamp(start.value_or(0));
  int64_t last = clamp(end.value_or(size));
  shape[*dim] = last > first ? llvm::divideCeil(last - first, step) : 0;
  return shape;
}

/// The shape of self.select(dim, index), where the index is the attribute
/// `index` or, for fx.select, a symbolic one (operand group `dynamicIndex`).
static FailureOr<SmallVector<int64_t>>
getSelectShape(Operation *op, RankedTensorType self, OperandGroups groups = {},
               unsigned dynamicIndex = 0) {
  if (self.getRank() == 0)
    return op->emitOpError("cannot select from a zero-dim tensor");
  FailureOr<int64_t> dim =
      wrapDimOrError(op, "dim", getI64(op, "dim", 0), self.getRank());
  if (failed(dim))
    return failure();
  int64_t size = self.getDimSize(*dim);
  bool symbolic = false;
  if (groups) {
    FailureOr<bool> hasOperand =
        hasSymbolicOperand(op, groups, dynamicIndex, "index", "dynamic_index");
    if (failed(hasOperand))
      return failure();
    symbolic = *hasOperand;
  }
  if (!symbolic && !op->getAttr("index"))
    return op->emitOpError("needs `index` or `dynamic_index`");
  int64_t index = getI64(op, "index", 0);
  if (!symbolic && !ShapedType::isDynamic(size) &&
      (index < -size || index >= size))
    return op->emitOpError("`index` ")
           << index << " is out of range for dimension " << *dim << " of size "
           << size;
  SmallVector<int64_t> shape(self.getShape());
  shape.erase(shape.begin() + *dim);
  return shape;
}

/// The shape after padding the trailing dimensions of `self` by `pad`
/// (pairs, last dimension first), as constant_pad_nd and the reflection and
/// replication pads do.
static FailureOr<SmallVector<int64_t>>
getPaddedShape(Operation *op, StringRef name, RankedTensorType self) {
  SmallVector<int64_t> pad = getI64Array(op, name);
  if (pad.size() % 2 != 0 ||
      static_cast<int64_t>(pad.size() / 2) > self.getRank())
    return op->emitOpError("`")
           << name << "` must have an even number of entries, two per "
           << "padded dimension, at most " << 2 * self.getRank() << " for "
           << self;
  SmallVector<int64_t> shape(self.getShape());
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t dim = self.getRank() - 1 - i;
    if (ShapedType::isDynamic(shape[dim]))
      continue;
    shape[dim] += pad[2 * i] + pad[2 * i + 1];
    if (shape[dim] < 0)
      return op->emitOpError("`")
             << name << "` leaves dimension " << dim << " of " << self
             << " with negative size " << shape[dim];
  }
  return shape;
}

static LogicalResult verifyView(Operation *op, RankedTensorType self,
                                RankedTensorType result) {
  if (failed(verifySameDtype(op, self, result)))
    return failure();
  if (self.hasStaticShape() && result.hasStaticShape() &&
      self.getNumElements() != result.getNumElements())
    return op->emitOpError("cannot view ")
           << self << " (" << self.getNumElements() << " elements) as "
           << result << " (" << result.getNumElements() << " elements)";
  return verifySizeSymbols(op, result);
}

static LogicalResult verifyExpand(Operation *op, RankedTensorType self,
                                  RankedTensorType result) {
  if (failed(verifySameDtype(op, self, result)))
    return failure();
  std::string reason;
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes(self.getShape(), result.getShape(), reason);
  if (result.getRank() < self.getRank() || failed(broadcast) ||
      ArrayRef<int64_t>(*broadcast) != result.getShape())
    return op->emitOpError("cannot expand ")
           << self << " to " << result
           << ": only size-1 dimensions stretch, and new ones lead";
  return verifySizeSymbols(op, result);
}

static LogicalResult verifyCat(Operation *op, OperandGroups groups) {
  OperandRange tensors = groups(0);
  if (tensors.empty())
    return op->emitOpError("needs at least one tensor");
  // Like PyTorch, skip legacy empty 1-d tensors of another rank.
  auto isLegacyEmpty = [](RankedTensorType type) {
    return type.getShape() == ArrayRef<int64_t>{0};
  };
  RankedTensorType reference = getTensorType(tensors.front());
  for (Value tensor : tensors) {
    if (!isLegacyEmpty(getTensorType(tensor))) {
      reference = getTensorType(tensor);
      break;
    }
  }
  int64_t rank = reference.getRank();
  if (rank == 0)
    return op->emitOpError("cannot concatenate zero-dim tensors");
  FailureOr<int64_t> dim =
      wrapDimOrError(op, "dim", getI64(op, "dim", 0), rank);
  if (failed(dim))
    return failure();
  SmallVector<int64_t> shape(reference.getShape());
  shape[*dim] = 0;
  for (auto [index, tensor] : llvm::enumerate(tensors)) {
    auto type = getTensorType(tensor);
    if (isLegacyEmpty(type) && rank != 1)
      continue;
    if (type.getRank() != rank)
      return op->emitOpError("tensor #")
             << index << " " << type << " must have rank " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *dim) {
        int64_t size = type.getDimSize(d);
        shape[d] =
            ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[d])
                ? ShapedType::kDynamic
                : shape[d] + size;
        continue;
      }
      std::optional<int64_t> joined = joinSizes(shape[d], type.getDimSize(d));
      if (!joined)
        return op->emitOpError("tensor #")
               << index << " " << type << " differs from " << reference
               << " in dimension " << d
               << ", which is not the concatenated one";
      shape[d] = *joined;
    }
  }
  SmallVector<Type> types(tensors.getTypes());
  return verifyResult(op, 0, shape, getResultDtype(types));
}

static LogicalResult verifySplit(Operation *op, RankedTensorType self) {
  if (self.getRank() == 0)
    return op->emitOpError("cannot split a zero-dim tensor");
  FailureOr<int64_t> dim =
      wrapDimOrError(op, "dim", getI64(op, "dim", 0), self.getRank());
  if (failed(dim))
    return failure();
  int64_t total = 0;
  for (auto [index, result] : llvm::enumerate(op->getResults())) {
    auto type = getTensorType(result);
    bool matches = type.getElementType() == self.getElementType() &&
                   type.getRank() == self.getRank();
    for (int64_t d = 0; matches && d < self.getRank(); ++d) {
      if (d != *dim && !joinSizes(type.getDimSize(d), self.getDimSize(d)))
        matches = false;
    }
    if (!matches)
      return op->emitOpError("result #")
             << index << " " << type << " must have the dtype and sizes of "
             << "`self` " << self << " except in dimension " << *dim;
    int64_t size = type.getDimSize(*dim);
    total = ShapedType::isDynamic(size) || ShapedType::isDynamic(total)
                ? ShapedType::kDynamic
                : total + size;
  }
  if (!ShapedType::isDynamic(total) &&
      !ShapedType::isDynamic(self.getDimSize(*dim)) &&
      total != self.getDimSize(*dim))
    return op->emitOpError("results have ")
           << total << " elements in dimension " << *dim << ", but `self` "
           << self << " has " << self.getDimSize(*dim);
  return success();
}

/// as_strided and as_strided_scatter: one stride per dimension of the view.
static LogicalResult verifyStrides(Operation *op, RankedTensorType view) {
  SmallVector<int64_t> stride = getI64Array(op, "stride");
  if (static_cast<int64_t>(stride.size()) != view.getRank())
    return op->emitOpError("`stride` has ")
           << stride.size() << " entries, but the view " << view << " has rank "
           << view.getRank();
  if (llvm::any_of(stride, [](int64_t s) { return s < 0; }))
    return op->emitOpError("`stride` entries must not be negative");
  if (getI64(op, "storage_offset", 0) < 0)
    return op->emitOpError("`storage_offset` must not be negative");
  return success();
}

static LogicalResult verifyDiagonal(Operation *op, RankedTensorType self) {
  if (self.getRank() < 2)
    return op->emitOpError("`self` ") << self << " must have rank 2 or more";
  FailureOr<int64_t> dim1 =
      wrapDimOrError(op, "dim1", getI64(op, "dim1", 0), self.getRank());
  FailureOr<int64_t> dim2 =
      wrapDimOrError(op, "dim2", getI64(op, "dim2", 1), self.getRank());
  if (failed(dim1) || failed(dim2))
    return failure();
  if (*dim1 == *dim2)
    return op->emitOpError("`dim1` and `dim2` must differ, but both are ")
           << *dim1;
  int64_t offset = getI64(op, "offset", 0);
  int64_t size1 = self.getDimSize(*dim1), size2 = self.getDimSize(*dim2);
  int64_t diagonal = kAnySize;
  if (!ShapedType::isDynamic(size1) && !ShapedType::isDynamic(size2))
    diagonal = std::max<int64_t>(offset >= 0 ? std::min(size1, size2 - offset)
                                             : std::min(size1 + offset, size2),
                                 0);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < self.getRank(); ++d) {
    if (d != *dim1 && d != *dim2)
      shape.push_back(self.getDimSize(d));
  }
  shape.push_back(diagonal);
  return verifyResult(op, 0, shape, self.getElementType());
}

/// Requires `src` of a scatter into a view to have the view's shape.
static LogicalResult verifySource(Operation *op, RankedTensorType src,
                                  ArrayRef<int64_t> viewShape) {
  if (shapesJoin(src.getShape(), viewShape))
    return success();
  return op->emitOpError("`src` ")
         << src << " does not have the shape of the view it fills, "
         << formatShape(viewShape);
}

LogicalResult mlir::kiln::fx::verifyShapeOp(Operation *op, ShapeKind kind,
                                            OperandGroups groups) {
  // cat's operands are a list, maybe empty.
  if (kind == ShapeKind::Cat)
    return verifyCat(op, groups);
  auto self = getTensorType(op->getOperand(0));
  // split_with_sizes may have no results.
  if (kind == ShapeKind::Split)
    return verifySplit(op, self);
  auto result = getTensorType(op->getResult(0));
  Type dtype = self.getElementType();
  int64_t rank = self.getRank();

  switch (kind) {
  case ShapeKind::View:
    return verifyView(op, self, result);
  case ShapeKind::Permute: {
    SmallVector<int64_t> dims = getI64Array(op, "dims");
    if (static_cast<int64_t>(dims.size()) != rank)
      return op->emitOpError("`dims` has ")
             << dims.size() << " entries, but `self` " << self << " has rank "
             << rank;
    FailureOr<SmallVector<int64_t>> wrapped =
        wrapDimsOrError(op, "dims", dims, rank);
    if (failed(wrapped))
      return failure();
    SmallVector<int64_t> shape;
    for (int64_t d : *wrapped)
      shape.push_back(self.getDimSize(d));
    return verifyResult(op, 0, shape, dtype);
  }
  case ShapeKind::Expand:
    return verifyExpand(op, self, result);
  case ShapeKind::Squeeze: {
    FailureOr<SmallVector<int64_t>> dims =
        wrapDimsOrError(op, "dim", getI64Array(op, "dim"), rank);
    if (failed(dims))
      return failure();
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (!llvm::is_contained(*dims, d) || self.getDimSize(d) != 1)
        shape.push_back(self.getDimSize(d));
    }
    return verifyResult(op, 0, shape, dtype);
  }
  case ShapeKind::Unsqueeze: {
    FailureOr<int64_t> dim =
        wrapDimOrError(op, "dim", getI64(op, "dim", 0), rank + 1);
    if (failed(dim))
      return failure();
    SmallVector<int64_t> shape(self.getShape());
    shape.insert(shape.begin() + *dim, 1);
    return verifyResult(op, 0, shape, dtype);
  }
  case ShapeKind::ViewAsComplex: {
    if (!dtype.isF32() && !dtype.isF64())
      return op->emitOpError("`self` ")
             << self << " must hold f32 or f64 (complex<f32> or complex<f64>)";
    if (rank == 0 || self.getDimSize(rank - 1) != 2)
      return op->emitOpError("`self` ")
             << self << " must have a last dimension of size 2";
    return verifyResult(op, 0, self.getShape().drop_back(),
                        ComplexType::get(dtype));
  }
  case ShapeKind::ViewAsReal: {
    SmallVector<int64_t> shape(self.getShape());
    shape.push_back(2);
    return verifyResult(op, 0, shape,
                        cast<ComplexType>(dtype).getElementType());
  }
  case ShapeKind::Slice: {
    FailureOr<SmallVector<int64_t>> shape =
        getSliceShape(op, self, groups, /*dynamicStart=*/1, /*dynamicEnd=*/2);
    if (failed(shape))
      return failure();
    return verifyResult(op, 0, *shape, dtype);
  }
  case ShapeKind::Select: {
    FailureOr<SmallVector<int64_t>> shape =
        getSelectShape(op, self, groups, /*dynamicIndex=*/1);
    if (failed(shape))
      return failure();
    return verifyResult(op, 0, *shape, dtype);
  }
  case ShapeKind::Cat:
  case ShapeKind::Split:
    break;
  case ShapeKind::AsStrided:
    if (failed(verifySameDtype(op, self, result)))
      return failure();
    return verifyStrides(op, result);
  case ShapeKind::ConstantPad:
  case ShapeKind::Pad: {
    FailureOr<SmallVector<int64_t>> shape = getPaddedShape(
        op, kind == ShapeKind::ConstantPad ? "pad" : "padding", self);
    if (failed(shape))
      return failure();
    return verifyResult(op, 0, *shape, dtype);
  }
  case ShapeKind::Flip:
    if (failed(wrapDimsOrError(op, "dims", getI64Array(op, "dims"), rank)))
      return failure();
    return verifyResult(op, 0, self);
  case ShapeKind::Repeat: {
    SmallVector<int64_t> repeats = getI64Array(op, "repeats");
    if (static_cast<int64_t>(repeats.size()) < rank)
      return op->emitOpError("`repeats` has ")
             << repeats.size() << " entries, fewer than the rank " << rank
             << " of `self` " << self;
    SmallVector<int64_t> shape(repeats.size() - rank, 1);
    llvm::append_range(shape, self.getShape());
    for (auto [size, repeat] : llvm::zip(shape, repeats)) {
      if (repeat < 0)
        return op->emitOpError("`repeats` entries must not be negative");
      if (repeat == 0 || !ShapedType::isDynamic(size))
        size *= repeat;
      else if (repeat != 1)
        size = ShapedType::kDynamic;
    }
    return verifyResult(op, 0, shape, dtype);
  }
  case ShapeKind::Diagonal:
    return verifyDiagonal(op, self);
  case ShapeKind::Copy: {
    auto src = getTensorType(op->getOperand(1));
    std::string reason;
    FailureOr<SmallVector<int64_t>> broadcast =
        broadcastShapes(src.getShape(), self.getShape(), reason);
    if (failed(broadcast) || ArrayRef<int64_t>(*broadcast) != self.getShape())
      return op->emitOpError("`src` ")
             << src << " does not broadcast to `self` " << self;
    return verifyResult(op, 0, self);
  }
  case ShapeKind::SliceScatter: {
    FailureOr<SmallVector<int64_t>> shape = getSliceShape(op, self);
    if (failed(shape) ||
        failed(verifySource(op, getTensorType(op->getOperand(1)), *shape)))
      return failure();
    return verifyResult(op, 0, self);
  }
  case ShapeKind::SelectScatter: {
    FailureOr<SmallVector<int64_t>> shape = getSelectShape(op, self);
    if (failed(shape) ||
        failed(verifySource(op, getTensorType(op->getOperand(1)), *shape)))
      return failure();
    return verifyResult(op, 0, self);
  }
  case ShapeKind::AsStridedScatter:
    if (failed(verifyStrides(op, getTensorType(op->getOperand(1)))))
      return failure();
    return verifyResult(op, 0, self);
  }
  llvm_unreachable("unknown shape kind");
}
