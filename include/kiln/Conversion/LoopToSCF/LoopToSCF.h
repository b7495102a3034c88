//===- LoopToSCF.h - Bufferizing graphs into SCF loops ----------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H
#define KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class RewriterBase;
namespace func {
class FuncOp;
} // namespace func
namespace kiln {
namespace fx {
class GraphOp;
} // namespace fx

/// The attribute that marks a function bufferized from an fx.graph.
inline constexpr llvm::StringLiteral kGraphFuncAttrName = "kiln.graph";

/// The attribute that keeps a bufferized graph's original signature, with
/// PyTorch's dtypes (the buffers themselves have signless elements).
inline constexpr llvm::StringLiteral kGraphSignatureAttrName = "kiln.signature";

/// The suffix of the function that computes a graph's dynamic result sizes.
inline constexpr llvm::StringLiteral kResultSizesSuffix = "_result_sizes";

struct LoopToSCFOptions {
  /// Emit scf.parallel nests; otherwise sequential scf.for nests.
  bool parallel = true;
};

/// Replaces `graph`, whose body holds only loop nodes and scalar ops, with a
/// destination-passing func.func over memrefs and its `_result_sizes`
/// companion. Returns the new graph function, or failure (with a diagnostic)
/// when the body still holds ops that have no buffer form.
FailureOr<func::FuncOp> bufferizeGraph(RewriterBase &rewriter,
                                       fx::GraphOp graph,
                                       const LoopToSCFOptions &options);

} // namespace kiln
} // namespace mlir

#endif // KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H
