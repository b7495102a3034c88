//===- ReductionVerifiers.cpp - reduction, scan and sort verifiers --------===//
//
// Part of Kiln. Reductions remove (or, with `keepdim`, set to 1) the reduced
// dimensions; scans and sorts keep the input's shape. Dtypes follow ATen:
// sums of integral tensors widen to si64, means need a floating dtype,
// indices are si64.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// The dimensions that `dim` names, wrapped; all dimensions when `dim` is
/// absent or an empty list.
static FailureOr<SmallVector<int64_t>> getReducedDims(Operation *op,
                                                      int64_t rank) {
  Attribute attr = op->getAttr("dim");
  SmallVector<int64_t> dims;
  if (auto single = dyn_cast_or_null<IntegerAttr>(attr))
    dims.push_back(single.getInt());
  else if (auto list = dyn_cast_or_null<DenseI64ArrayAttr>(attr))
    llvm::append_range(dims, list.asArrayRef());
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
    return dims;
  }
  return wrapDimsOrError(op, "dim", dims, rank);
}

/// The shape after reducing `dims` of `shape`.
static SmallVector<int64_t> reduceShape(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<int64_t> result;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      result.push_back(size);
    else if (keepdim)
      result.push_back(1);
  }
  return result;
}

/// sum's and cumsum's dtype: `dtype`, else si64 for integral inputs.
static Type getSumDtype(Operation *op, Type input) {
  if (Type dtype = getDtypeAttr(op))
    return dtype;
  return isIntegralOrBool(input) ? getIndexDtype(op->getContext()) : input;
}

LogicalResult mlir::kiln::fx::verifyReductionOp(Operation *op,
                                                ReductionKind kind,
                                                OperandGroups groups) {
  auto input = getTensorType(op->getOperand(0));
  Type dtype = input.getElementType();
  int64_t rank = input.getRank();
  MLIRContext *ctx = op->getContext();
  Type indexDtype = getIndexDtype(ctx);

  // Scans and sorts keep the shape; `dim` is one dimension.
  if (kind == ReductionKind::Cumulative || kind == ReductionKind::Sort ||
      kind == ReductionKind::TopK) {
    FailureOr<int64_t> dim =
        wrapDimOrError(op, "dim", getI64(op, "dim", -1), rank);
    if (failed(dim))
      return failure();
    if (kind == ReductionKind::Cumulative)
      return verifyResult(op, 0, input.getShape(), getSumDtype(op, dtype));
    SmallVector<int64_t> shape(input.getShape());
    if (kind == ReductionKind::TopK) {
      int64_t k = getI64(op, "k", 0);
      int64_t size = rank == 0 ? 1 : shape[*dim];
      if (k < 0)
        return op->emitOpError("`k` must not be negative, but is ") << k;
      if (!ShapedType::isDynamic(size) && k > size)
        return op->emitOpError("`k` ") << k << " is larger than dimension "
                                       << *dim << " of size " << size;
      if (rank > 0)
        shape[*dim] = k;
    }
    if (failed(verifyResult(op, 0, shape, dtype)))
      return failure();
    return verifyResult(op, 1, shape, indexDtype);
  }

  FailureOr<SmallVector<int64_t>> dims = getReducedDims(op, rank);
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape =
      reduceShape(input.getShape(), *dims, getBool(op, "keepdim", false));

  switch (kind) {
  case ReductionKind::Sum:
    return verifyResult(op, 0, shape, getSumDtype(op, dtype));
  case ReductionKind::Mean: {
    Type resultDtype = getDtypeAttr(op);
    if (!resultDtype)
      resultDtype = dtype;
    if (isIntegralOrBool(resultDtype))
      return op->emitOpError("cannot compute the mean in dtype ")
             << resultDtype
             << ": the input or `dtype` must be floating or complex";
    return verifyResult(op, 0, shape, resultDtype);
  }
  case ReductionKind::SameDtype:
    return verifyResult(op, 0, shape, dtype);
  case ReductionKind::ValuesAndIndices:
    if (failed(verifyResult(op, 0, shape, dtype)))
      return failure();
    return verifyResult(op, 1, shape, indexDtype);
  case ReductionKind::ArgIndex:
    return verifyResult(op, 0, shape, indexDtype);
  case ReductionKind::AnyAll:
    return verifyResult(op, 0, shape,
                        dtype.isUnsignedInteger(8) ? dtype
                                                   : IntegerType::get(ctx, 1));
  case ReductionKind::Var:
    return verifyResult(op, 0, shape, toRealDtype(dtype));
  case ReductionKind::VarMean:
    if (failed(verifyResult(op, 0, shape, toRealDtype(dtype))))
      return failure();
    return verifyResult(op, 1, shape, dtype);
  case ReductionKind::LogSumExp:
    return verifyResult(op, 0, shape,
                        isIntegralOrBool(dtype) ? getDefaultFloatDtype(ctx)
                                                : dtype);
  case ReductionKind::Cumulative:
  case ReductionKind::Sort:
  case ReductionKind::TopK:
    break;
  }
  llvm_unreachable("handled above");
}
