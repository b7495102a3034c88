/*===-- kiln-c/Registration.h - Registering Kiln, C API -----------*- C -*-===*\
|*                                                                            *|
|* Part of Kiln. What a compiler registers to use Kiln through MLIR's C API:  *|
|* Kiln's dialects, the LLVM IR translations of its output, its passes and    *|
|* named pipelines.                                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_C_REGISTRATION_H
#define KILN_C_REGISTRATION_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Adds Kiln's dialects (fx, loop) and the upstream dialects their IR
/// contains (arith, math, tensor) to `registry`.
MLIR_CAPI_EXPORTED void kilnRegisterAllDialects(MlirDialectRegistry registry);

/// Adds what translating Kiln's LLVM-dialect output to LLVM IR needs (LLVM,
/// OpenMP, GPU and NVVM translations, the NVVM target) to `registry`; needed
/// by kilnCompileToSharedObject.
MLIR_CAPI_EXPORTED void
kilnRegisterAllTranslations(MlirDialectRegistry registry);

/// Registers Kiln's passes and named pipelines (kiln-lower-to-loop,
/// kiln-cpu-pipeline, ...) and the upstream passes they run, so that textual
/// pipelines can name them. Only the first call registers; later calls do
/// nothing.
MLIR_CAPI_EXPORTED void kilnRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_REGISTRATION_H */
