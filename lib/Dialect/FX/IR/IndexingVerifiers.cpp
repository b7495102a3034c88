//===- IndexingVerifiers.cpp - gather, scatter and advanced indexing ------===//
//
// Part of Kiln. `aten.index.Tensor` and `aten.index_put` take a list of
// optional index tensors; fx passes the present ones as operands and their
// positions in ATen's list as `index_positions` (absent: 0, 1, ...). A
// position without a tensor is a full slice (`:`). Integer index tensors
// broadcast together; a bool mask selects a data-dependent number of
// elements, so with masks only ranks and dtypes are checked.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// The shape of self[indices] (ATen's advanced indexing), with kAnySize for
/// the dimension that bool masks produce.
static FailureOr<SmallVector<int64_t>>
getIndexedShape(Operation *op, RankedTensorType self, ValueRange indices) {
  SmallVector<int64_t> positions;
  if (std::optional<SmallVector<int64_t>> attr =
          getOptionalI64Array(op, "index_positions")) {
    positions = std::move(*attr);
    if (positions.size() != indices.size())
      return op->emitOpError("`index_positions` has ")
             << positions.size() << " entries for " << indices.size()
             << " index tensors";
    for (size_t i = 0; i < positions.size(); ++i) {
      if (positions[i] < 0 || (i > 0 && positions[i] <= positions[i - 1]))
        return op->emitOpError(
            "`index_positions` must be increasing and not negative");
    }
  } else {
    for (size_t i = 0; i < indices.size(); ++i)
      positions.push_back(i);
  }
  if (indices.empty())
    return op->emitOpError("needs at least one index tensor");

  // Walk ATen's index list: each None or integer index consumes one
  // dimension of self, a bool mask as many as its rank.
  SmallVector<bool> indexed(self.getRank(), false);
  SmallVector<int64_t> broadcast;
  bool hasMask = false;
  int64_t dim = 0;
  size_t next = 0;
  for (int64_t position = 0; next < indices.size(); ++position) {
    if (positions[next] != position) {
      // A full slice.
      if (++dim > self.getRank())
        return op->emitOpError("`index_positions` ")
               << positions[next] << " is past the dimensions of `self` "
               << self;
      continue;
    }
    auto index = getTensorType(indices[next++]);
    bool isMask = !cast<IntegerType>(index.getElementType()).isSigned();
    int64_t consumed = isMask ? index.getRank() : 1;
    if (dim + consumed > self.getRank())
      return op->emitOpError("too many indices for `self` ")
             << self << ": they cover " << dim + consumed << " dimensions";
    if (isMask) {
      hasMask = true;
      if (!shapesJoin(index.getShape(), self.getShape().slice(dim, consumed)))
        return op->emitOpError("mask ")
               << index << " does not match the dimensions of `self` " << self
               << " that it indexes, from dimension " << dim;
    } else {
      std::string reason;
      FailureOr<SmallVector<int64_t>> joined =
          broadcastShapes(broadcast, index.getShape(), reason);
      if (failed(joined))
        return op->emitOpError("index tensors are not broadcastable: ")
               << reason;
      broadcast = std::move(*joined);
    }
    std::fill_n(indexed.begin() + dim, consumed, true);
    dim += consumed;
  }

  // A mask contributes one data-dependent dimension to the broadcast shape.
  if (hasMask)
    broadcast =
        SmallVector<int64_t>(std::max<size_t>(broadcast.size(), 1), kAnySize);
  // Indexed dimensions next to each other are replaced in place; separated
  // by a full slice, the broadcast dimensions go first.
  auto first = llvm::find(indexed, true);
  auto last = std::find(indexed.rbegin(), indexed.rend(), true).base();
  if (first == indexed.end()) // Only zero-dim masks.
    first = last = indexed.begin();
  bool adjacent = std::all_of(first, last, [](bool b) { return b; });
  ArrayRef<int64_t> selfShape = self.getShape();
  SmallVector<int64_t> shape;
  if (adjacent)
    llvm::append_range(shape, selfShape.take_front(first - indexed.begin()));
  llvm::append_range(shape, broadcast);
  for (int64_t d = adjacent ? last - indexed.begin() : 0; d < self.getRank();
       ++d) {
    if (!indexed[d])
      shape.push_back(selfShape[d]);
  }
  return shape;
}

/// Requires `index` of gather/scatter to have `self`'s rank, and sizes no
/// larger than `self` (except along `dim`) and `src`.
static LogicalResult verifyScatterIndex(Operation *op, RankedTensorType self,
                                        int64_t dim, RankedTensorType index,
                                        RankedTensorType src) {
  if (index.getRank() != self.getRank() &&
      !(index.getRank() <= 1 && self.getRank() <= 1))
    return op->emitOpError("`index` ")
           << index << " must have the rank of `self` " << self;
  for (int64_t d = 0; d < index.getRank() && d < self.getRank(); ++d) {
    int64_t size = index.getDimSize(d);
    if (ShapedType::isDynamic(size))
      continue;
    int64_t selfSize = self.getDimSize(d);
    if (d != dim && !ShapedType::isDynamic(selfSize) && size > selfSize)
      return op->emitOpError("`index` ") << index << " is larger than `self` "
                                         << self << " in dimension " << d;
    if (src && d < src.getRank() && !ShapedType::isDynamic(src.getDimSize(d)) &&
        size > src.getDimSize(d))
      return op->emitOpError("`index` ") << index << " is larger than `src` "
                                         << src << " in dimension " << d;
  }
  return success();
}

LogicalResult mlir::kiln::fx::verifyIndexingOp(Operation *op, IndexingKind kind,
                                               OperandGroups groups) {
  auto self = getTensorType(op->getOperand(0));
  Type dtype = self.getElementType();

  switch (kind) {
  case IndexingKind::Index: {
    FailureOr<SmallVector<int64_t>> shape =
        getIndexedShape(op, self, groups(1));
    if (failed(shape))
      return failure();
    return verifyResult(op, 0, *shape, dtype);
  }
  case IndexingKind::IndexPut: {
    FailureOr<SmallVector<int64_t>> shape =
        getIndexedShape(op, self, groups(1));
    if (failed(shape))
      return failure();
    auto values = getTensorType(groups(2).front());
    if (values.getElementType() != dtype)
      return op->emitOpError("`values` ")
             << values << " must have the dtype of `self` " << self;
    if (!llvm::is_contained(*shape, kAnySize)) {
      std::string reason;
      FailureOr<SmallVector<int64_t>> broadcast =
          broadcastShapes(values.getShape(), *shape, reason);
      if (failed(broadcast) || *broadcast != *shape)
        return op->emitOpError("`values` ")
               << values << " does not broadcast to the indexed shape "
               << formatShape(*shape);
    }
    return verifyResult(op, 0, self);
  }
  case IndexingKind::IndexSelect: {
    FailureOr<int64_t> dim =
        wrapDimOrError(op, "dim", getI64(op, "dim", 0), self.getRank());
    if (failed(dim))
      return failure();
    auto index = getTensorType(op->getOperand(1));
    if (index.getRank() > 1)
      return op->emitOpError("`index` ") << index << " must have rank 0 or 1";
    SmallVector<int64_t> shape(self.getShape());
    if (self.getRank() > 0)
      shape[*dim] = index.getRank() == 0 ? 1 : index.getDimSize(0);
    return verifyResult(op, 0, shape, dtype);
  }
  case IndexingKind::Gather: {
    FailureOr<int64_t> dim =
        wrapDimOrError(op, "dim", getI64(op, "dim", 0), self.getRank());
    auto index = getTensorType(op->getOperand(1));
    if (failed(dim) ||
        failed(verifyScatterIndex(op, self, *dim, index, nullptr)))
      return failure();
    return verifyResult(op, 0, index.getShape(), dtype);
  }
  case IndexingKind::Scatter:
  case IndexingKind::ScatterValue: {
    FailureOr<int64_t> dim =
        wrapDimOrError(op, "dim", getI64(op, "dim", 0), self.getRank());
    if (failed(dim))
      return failure();
    auto index = getTensorType(op->getOperand(1));
    RankedTensorType src;
    if (kind == IndexingKind::Scatter) {
      src = getTensorType(op->getOperand(2));
      if (src.getElementType() != dtype)
        return op->emitOpError("`src` ")
               << src << " must have the dtype of `self` " << self;
      if (src.getRank() != index.getRank())
        return op->emitOpError("`src` ")
               << src << " must have the rank of `index` " << index;
    }
    if (failed(verifyScatterIndex(op, self, *dim, index, src)))
      return failure();
    return verifyResult(op, 0, self);
  }
  case IndexingKind::Embedding: {
    // Operands: (weight, indices).
    if (self.getRank() != 2)
      return op->emitOpError("`weight` ") << self << " must be a matrix";
    auto indices = getTensorType(op->getOperand(1));
    SmallVector<int64_t> shape(indices.getShape());
    shape.push_back(self.getDimSize(1));
    return verifyResult(op, 0, shape, dtype);
  }
  case IndexingKind::MaskedScatter: {
    // Operands: (self, mask, source); self and mask broadcast.
    auto mask = getTensorType(op->getOperand(1));
    auto source = getTensorType(op->getOperand(2));
    if (source.getElementType() != dtype)
      return op->emitOpError("`source` ")
             << source << " must have the dtype of `self` " << self;
    std::string reason;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(self.getShape(), mask.getShape(), reason);
    if (failed(shape))
      return op->emitOpError("`self` ") << self << " and `mask` " << mask
                                        << " are not broadcastable: " << reason;
    return verifyResult(op, 0, *shape, dtype);
  }
  case IndexingKind::EmbeddingDenseBackward: {
    // Operands: (grad_output, indices); the result is [num_weights, D].
    auto indices = getTensorType(op->getOperand(1));
    if (self.getRank() != indices.getRank() + 1 ||
        !shapesJoin(self.getShape().drop_back(), indices.getShape()))
      return op->emitOpError("`grad_output` ")
             << self << " must have the shape of `indices` " << indices
             << " and one more dimension";
    return verifyResult(op, 0, {kAnySize, self.getShape().back()}, dtype);
  }
  }
  llvm_unreachable("unknown indexing kind");
}
