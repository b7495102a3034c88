//===- MatmulToSCF.h - Matrix products as register-tiled SCF loops -*- C++ -*-//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_LOOPTOSCF_MATMULTOSCF_H
#define KILN_LIB_CONVERSION_LOOPTOSCF_MATMULTOSCF_H

#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"

namespace mlir {
namespace kiln {
namespace loop {
class MatmulOp;
} // namespace loop

/// Emits `node` as packing and register-tiled loops that store into `dest`;
/// `mapping` maps the graph's tensors to buffers.
void emitMatmulLoops(OpBuilder &b, loop::MatmulOp node, Value dest,
                     const IRMapping &mapping, const LoopToSCFOptions &options);

} // namespace kiln
} // namespace mlir

#endif // KILN_LIB_CONVERSION_LOOPTOSCF_MATMULTOSCF_H
