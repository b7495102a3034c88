//===- InitKiln.h - Registering Kiln with a tool ----------------*- C++ -*-===//
//
// Part of Kiln. The one place that says which dialects and passes a Kiln tool
// knows: Kiln's own and exactly the upstream ones Kiln's pipelines use.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_INITKILN_H
#define KILN_INITKILN_H

namespace mlir {
class DialectRegistry;
namespace kiln {

/// Adds Kiln's dialects and the upstream dialects its IR contains.
void registerAllKilnDialects(DialectRegistry &registry);

/// Registers Kiln's passes and pipelines and the upstream passes they use.
void registerAllKilnPasses();

/// Adds what translating Kiln's LLVM-dialect modules to LLVM IR needs: the
/// LLVM, OpenMP, GPU and NVVM translations, and the NVVM target (which builds
/// kernel binaries).
void registerAllKilnTranslations(DialectRegistry &registry);

/// Adds only what translating CPU artifacts to LLVM IR needs (the builtin,
/// LLVM and OpenMP translations), for compilers that never target GPUs.
void registerKilnCPUTranslations(DialectRegistry &registry);

} // namespace kiln
} // namespace mlir

#endif // KILN_INITKILN_H
