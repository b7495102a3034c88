//===- Compiler.h - The whole compiler, fx graphs to artifacts --*- C++ -*-===//
//
// Part of Kiln. What kiln-compile does, as a library: runs a target's whole
// pipeline on a module of fx graphs and turns the result into a shared object
// with Kiln's C entry points (docs/ABI.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_COMPILER_H
#define KILN_COMPILER_COMPILER_H

#include "kiln/Target/CPU/CPUTarget.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
class ModuleOp;
class OpPassManager;
class PassManager;
namespace kiln {

/// Where a compiled graph runs.
enum class CompileTarget { CPU, CUDA };

struct CompileOptions {
  CompileTarget target = CompileTarget::CPU;
  /// Options of the target's pipeline in kiln-opt's syntax, e.g.
  /// "openmp=false" (kiln-cpu-pipeline) or "chip=sm_80 block-size=128"
  /// (kiln-gpu-pipeline).
  std::string pipelineOptions;
  /// Code generation for host code, and for all of a CPU graph.
  CPUTargetOptions cpu;
  /// The CUDA toolkit whose ptxas builds kernels; empty: $CUDA_ROOT,
  /// $CUDA_HOME, $CUDA_PATH, then /usr/local/cuda.
  std::string cudaPath;
  /// Stop after the graph lowering (lowerToLLVM then leaves loop nodes after
  /// fusion, as the target's pipeline makes them: kiln-compile --emit=loop).
  bool graphLoweringOnly = false;
  /// Directories searched first for the shared libraries an artifact needs
  /// at run time (libkiln_openmp.so, libkiln_cuda_runtime.so). After them:
  /// ../lib beside the running program.
  llvm::SmallVector<std::string> runtimeLibraryDirs;
};

/// Parses `options.pipelineOptions` and adds the target's whole pipeline
/// (kiln-cpu-pipeline or kiln-gpu-pipeline) to `pm`; the CPU's vectors are
/// as wide as `options.cpu` computes on (getVectorBytes) unless the options
/// set `vector-bytes`. Returns failure and the reason in `error` when the
/// options do not parse.
LogicalResult buildCompilePipeline(OpPassManager &pm,
                                   const CompileOptions &options,
                                   std::string &error);

/// Lowers `module`, a module of fx graphs, in place to the LLVM dialect with
/// the target's pipeline. `configure`, if given, sets up the pass manager
/// before it runs (instrumentation, IR printing). Errors are reported as
/// diagnostics; the context must know the fx dialect.
LogicalResult lowerToLLVM(
    ModuleOp module, const CompileOptions &options,
    llvm::function_ref<LogicalResult(PassManager &)> configure = nullptr);

/// Compiles `module`, already in the LLVM dialect, to an object file and
/// links it into the shared object `outputPath`, recording the runtime
/// libraries its code calls (OpenMP, Kiln's CUDA runtime). The context must
/// have the LLVM IR translations (registerAllKilnTranslations).
LogicalResult linkArtifact(ModuleOp module, const CompileOptions &options,
                           StringRef outputPath);

/// The whole compiler: lowerToLLVM, then linkArtifact.
LogicalResult compileToSharedObject(ModuleOp module,
                                    const CompileOptions &options,
                                    StringRef outputPath);

} // namespace kiln
} // namespace mlir

#endif // KILN_COMPILER_COMPILER_H
