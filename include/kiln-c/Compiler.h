/*===-- kiln-c/Compiler.h - Running Kiln's compiler, C API --------*- C -*-===*\
|*                                                                            *|
|* Part of Kiln. Running Kiln's pipelines on modules and compiling fx graphs  *|
|* into shared objects with Kiln's C entry points (docs/ABI.md). Errors are   *|
|* reported as diagnostics to the context's handlers                          *|
|* (mlirContextAttachDiagnosticHandler) and as a failed MlirLogicalResult.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_C_COMPILER_H
#define KILN_C_COMPILER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Runs the textual pass pipeline `pipeline` on `module`, in kiln-opt's
/// syntax: either the passes to run on the module ("kiln-lower-to-loop",
/// "kiln-cpu-pipeline{openmp=false}") or an anchored pipeline
/// ("builtin.module(fx.graph(kiln-fx-to-loop))"). Needs
/// kilnRegisterAllPasses. On failure the module may be partly transformed.
MLIR_CAPI_EXPORTED MlirLogicalResult kilnRunPipeline(MlirModule module,
                                                     MlirStringRef pipeline);

/// Parses `source` into a new module in `context`, then runs `pipeline` on
/// it as kilnRunPipeline does. On success `*result` is the module, owned by
/// the caller (mlirModuleDestroy); on failure it is null.
MLIR_CAPI_EXPORTED MlirLogicalResult
kilnParseAndRunPipeline(MlirContext context, MlirStringRef source,
                        MlirStringRef pipeline, MlirModule *result);

/// Compiles `module`, a module of fx graphs, into the shared object
/// `outputPath`, as kiln-compile does: `target` is "cpu" or "cuda",
/// `pipelineOptions` the options of its pipeline (kiln-cpu-pipeline or
/// kiln-gpu-pipeline, e.g. "openmp=false"; may be empty), and
/// `runtimeLibraryDir`, if not empty, the first place to look for the
/// libraries the artifact needs (libkiln_cuda_runtime.so, libkiln_openmp.so).
/// Code is generated for the host's CPU. The module is lowered in place. The
/// context must have Kiln's dialects and translations
/// (kilnRegisterAllDialects, kilnRegisterAllTranslations).
MLIR_CAPI_EXPORTED MlirLogicalResult kilnCompileToSharedObject(
    MlirModule module, MlirStringRef target, MlirStringRef pipelineOptions,
    MlirStringRef runtimeLibraryDir, MlirStringRef outputPath);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_COMPILER_H */
