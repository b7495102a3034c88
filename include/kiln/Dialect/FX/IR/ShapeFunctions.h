//===- ShapeFunctions.h - PyTorch broadcasting and type promotion -*- C++
//-*-===//
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

/// The broadcast shape of two ranked shapes, or failure with a reason. A `?`
/// dimension is never 1 (Dynamo specialises sizes 0 and 1), so `?` against a
/// static size s != 1 is s, and `?` against 1 is `?`.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs,
                                                std::string &reason);

} // namespace mlir::kiln::fx

#endif // KILN_DIALECT_FX_IR_SHAPEFUNCTIONS_H
