//===- ShapeFunctions.h - PyTorch shape and dtype rules ---------*- C++ -*-===//
//
// Part of Kiln. The rules by which PyTorch derives an op's result shape and
// dtype from its operands, used by the fx verifiers and by the importer's
// tests. They are free functions so that other passes can reuse them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_SHAPEFUNCTIONS_H
#define KILN_DIALECT_FX_IR_SHAPEFUNCTIONS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::kiln::fx {

/// PyTorch's dtype categories, ordered: a higher category wins promotion.
enum class DtypeCategory { Bool, Integer, Floating, Complex };

/// Returns the category of a PyTorch dtype (as Kiln spells it in MLIR).
DtypeCategory getDtypeCategory(Type dtype);

/// `torch.promote_types(a, b)`: the smallest dtype both convert to safely.
Type promoteDtypes(Type lhs, Type rhs);

/// `torch.result_type` for tensor operands: dimensioned tensors decide within
/// a category, zero-dim tensors only when their category is higher.
Type getResultDtype(TypeRange operandTypes);

/// `torch.result_type` for tensor operands and Python scalars (bool, integer
/// and float attributes). Scalars are wrapped numbers: they rank below
/// zero-dim tensors and decide only when their category is higher, and then
/// an integer scalar gives si64 and a float scalar the default dtype (f32).
Type getResultDtype(TypeRange operandTypes, ArrayRef<Attribute> scalars);

/// The dtype of a wrapped number: i1 for a bool, si64 for an integer, f32
/// (the default dtype) for a float attribute.
Type getScalarDtype(Attribute scalar);

/// torch.get_default_dtype(): f32.
Type getDefaultFloatDtype(MLIRContext *ctx);

/// torch.long, the dtype of indices and of integral sums: si64.
Type getIndexDtype(MLIRContext *ctx);

/// The real counterpart of a complex dtype (complex<f32> -> f32); other dtypes
/// unchanged.
Type toRealDtype(Type dtype);

/// The dtype PyTorch computes in for `dtype`: f32 for f16 and bf16, the dtype
/// itself otherwise (at::opmath_type).
Type getComputeDtype(Type dtype);

/// Whether `dtype` is integral, counting bool (c10::isIntegralType(t, true)).
bool isIntegralOrBool(Type dtype);

/// The broadcast shape of two ranked shapes, or failure with a reason. A `?`
/// dimension is never 1 (Dynamo specialises sizes 0 and 1), so `?` against a
/// static size s != 1 is s, and `?` against 1 is `?`.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs,
                                                std::string &reason);

/// The size that two sizes of the same dimension must share: equal sizes are
/// that size, `?` against a static size s != 1 is s. Returns std::nullopt for
/// two different static sizes and for `?` against 1 (a `?` is never 1).
std::optional<int64_t> joinSizes(int64_t lhs, int64_t rhs);

/// PyTorch's maybe_wrap_dim: `dim` in [-rank, rank) as a dimension in
/// [0, rank); a zero-dim tensor accepts 0 and -1. std::nullopt when out of
/// range.
std::optional<int64_t> wrapDim(int64_t dim, int64_t rank);

/// The output size of a convolution or pooling window along one dimension:
/// floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1, or
/// with `ceilMode` rounded up unless the last window would start in the
/// right padding (PyTorch's pooling_output_shape). `?` when `in` is `?`;
/// nullopt when `stride` is not positive or the size overflows int64.
std::optional<int64_t> getWindowOutputSize(int64_t in, int64_t kernel,
                                           int64_t stride, int64_t padding,
                                           int64_t dilation,
                                           bool ceilMode = false);

/// The output size of a transposed convolution along one dimension:
/// (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + outputPadding
/// + 1. `?` when `in` is `?`; nullopt when the size overflows int64.
std::optional<int64_t> getTransposedWindowOutputSize(int64_t in, int64_t kernel,
                                                     int64_t stride,
                                                     int64_t padding,
                                                     int64_t dilation,
                                                     int64_t outputPadding);

} // namespace mlir::kiln::fx

#endif // KILN_DIALECT_FX_IR_SHAPEFUNCTIONS_H
