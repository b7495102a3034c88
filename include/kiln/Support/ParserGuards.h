//===- ParserGuards.h - Inputs MLIR's parser cannot take --------*- C++ -*-===//
//
// Part of Kiln. Checks run on .mlir text before MLIR's parser sees it, for
// inputs on which the parser of the MLIR release Kiln builds against
// crashes instead of reporting an error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SUPPORT_PARSERGUARDS_H
#define KILN_SUPPORT_PARSERGUARDS_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace mlir {
class MLIRContext;
namespace kiln {

/// Reports, as errors of `context` at their locations in `buffer` (named by
/// its identifier), the constructs that MLIR's parser crashes on: a dense
/// array of `index` (`array<index: ...>`, whose element width the parser
/// asks of a type that has none). Fails when there is one.
LogicalResult checkParserGuards(llvm::MemoryBufferRef buffer,
                                MLIRContext *context);

} // namespace kiln
} // namespace mlir

#endif // KILN_SUPPORT_PARSERGUARDS_H
