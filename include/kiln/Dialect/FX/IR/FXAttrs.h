//===- FXAttrs.h - fx dialect attributes ------------------------*- C++ -*-===//
//
// Part of Kiln. The shape-guard attributes: #fx.symbol, #fx.tensor_guard.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXATTRS_H
#define KILN_DIALECT_FX_IR_FXATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

#include "llvm/ADT/SmallVector.h"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/FX/IR/FXAttrs.h.inc"

namespace mlir::kiln::fx {

/// A size that an op's `size_symbols` gives: a product of factors, each a
/// size symbol's value taken through steps, each `scale * x + offset` (scale
/// positive) or `x // divisor` (a strided window's count). A factor is
/// written `s0`, `3*s0`, `s0-1`, `2*s0+1`, `(s0+1)//2` or `2*((s0-1)//4)+1`:
/// an optional `scale*`, the symbol or a parenthesized factor (optionally
/// `//divisor`), an optional offset; a product joins factors with `*`
/// (`s0*s1`, `2*s0*(s1-1)`), and a factor with an offset is parenthesized
/// there.
struct SizeExpression {
  struct Step {
    /// Zero for an affine step, else the divisor of a floor division.
    int64_t divisor = 0;
    int64_t scale = 1;
    int64_t offset = 0;
  };
  struct Factor {
    llvm::StringRef symbol;
    llvm::SmallVector<Step, 2> steps;
  };
  llvm::SmallVector<Factor, 1> factors;
};

/// Parses a `size_symbols` entry; none if it is not of that form.
std::optional<SizeExpression> parseSizeExpression(llvm::StringRef text);

} // namespace mlir::kiln::fx

#endif // KILN_DIALECT_FX_IR_FXATTRS_H
