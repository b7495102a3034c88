//===- EntryPoints.h - The C entry points of Kiln artifacts -----*- C++ -*-===//
//
// Part of Kiln. The ABI a compiled graph exposes; see docs/ABI.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_ENTRYPOINTS_H
#define KILN_TARGET_ENTRYPOINTS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class RewriterBase;
namespace func {
class FuncOp;
} // namespace func
namespace kiln {

/// The version of the entry-point ABI, stored in `kiln_abi_version`.
inline constexpr int32_t kAbiVersion = 1;

/// Adds `kiln_<name>_run` and `kiln_<name>_result_sizes` for the bufferized
/// graph function `graphFunc` and its `<name>_result_sizes` companion.
LogicalResult emitEntryPoints(RewriterBase &rewriter, func::FuncOp graphFunc);

} // namespace kiln
} // namespace mlir

#endif // KILN_TARGET_ENTRYPOINTS_H
