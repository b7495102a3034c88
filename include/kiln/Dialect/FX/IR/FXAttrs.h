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

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/FX/IR/FXAttrs.h.inc"

namespace mlir::kiln::fx {

/// A size that an op's `size_symbols` gives: `scale * symbol + offset`,
/// written `s0`, `3*s0`, `s0-1` or `2*s0+1` (scale positive).
struct SizeExpression {
  llvm::StringRef symbol;
  int64_t scale = 1;
  int64_t offset = 0;
};

/// Parses a `size_symbols` entry; none if it is not of that form.
std::optional<SizeExpression> parseSizeExpression(llvm::StringRef text);

} // namespace mlir::kiln::fx

#endif // KILN_DIALECT_FX_IR_FXATTRS_H
