//===- Passes.h - The host compiler's passes --------------------*- C++ -*-===//
//
// Part of Kiln's embedding example.
//
//===----------------------------------------------------------------------===//

#ifndef HOST_PASSES_H
#define HOST_PASSES_H

#include "mlir/Pass/Pass.h"

namespace host {
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"
} // namespace host

#endif // HOST_PASSES_H
