//===- LoopToSCF.h - Bufferizing graphs into SCF loops ----------*- C++ -*-===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H
#define KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H

#include "kiln/Codegen/GraphBufferization.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace kiln {

#define GEN_PASS_DECL_CONVERTLOOPTOSCFPASS
#include "kiln/Conversion/Passes.h.inc"

/// The options of the CPU's bufferization: kiln-loop-to-scf's, declared with
/// their defaults in Passes.td. `parallel`: emit scf.parallel nests, else
/// sequential scf.for nests. `vectorBytes`: bytes per vector in the innermost
/// dimension; 0 for scalar code.
using LoopToSCFOptions = ConvertLoopToSCFPassOptions;

/// Buffers are 16-byte aligned (Kiln's ABI).
inline constexpr int64_t kCPUBufferAlignment = 16;

/// The CPU's bufferization: scf.parallel (or scf.for) nests, memref.alloc'd
/// temporaries, memref.copy. Use with bufferizeGraph.
GraphBufferizationTarget
getSCFBufferizationTarget(const LoopToSCFOptions &options);

} // namespace kiln
} // namespace mlir

#endif // KILN_CONVERSION_LOOPTOSCF_LOOPTOSCF_H
