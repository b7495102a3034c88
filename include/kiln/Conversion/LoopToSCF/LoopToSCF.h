//===- LoopToSCF.h - Bufferizing graphs into SCF loops ----------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H
#define KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H

#include "kiln/Conversion/Bufferization/GraphBufferization.h"

namespace mlir {
namespace kiln {

struct LoopToSCFOptions {
  /// Emit scf.parallel nests; otherwise sequential scf.for nests.
  bool parallel = true;
  /// Bytes per vector in the innermost dimension; 0 for scalar code.
  int64_t vectorBytes = 32;
};

/// The CPU's bufferization: scf.parallel (or scf.for) nests, memref.alloc'd
/// temporaries, memref.copy. Use with bufferizeGraph.
GraphBufferizationTarget
getSCFBufferizationTarget(const LoopToSCFOptions &options);

} // namespace kiln
} // namespace mlir

#endif // KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H
