/*===- CUDARuntime.h - The runtime library of Kiln's GPU artifacts --------===*\
|*                                                                            *|
|* Part of Kiln. GPU artifacts call the mgpu* functions, whose signatures are *|
|* fixed by MLIR's GPU-to-LLVM lowering; callers of artifacts use the kiln_*  *|
|* functions to learn about failures. All work is ordered on the stream the   *|
|* caller passes to kiln_<graph>_run; nothing here synchronizes the host.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_CUDARUNTIME_H
#define KILN_RUNTIME_CUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_RUNTIME_EXPORT __attribute__((visibility("default")))

/* Module loading (called from the artifact's constructors/destructors). */
KILN_RUNTIME_EXPORT void *mgpuModuleLoad(void *data, size_t size);
KILN_RUNTIME_EXPORT void mgpuModuleUnload(void *module);
KILN_RUNTIME_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);

/* Kernel launch and memory, on `stream`. */
KILN_RUNTIME_EXPORT void mgpuLaunchKernel(void *function, int64_t gridX,
                                          int64_t gridY, int64_t gridZ,
                                          int64_t blockX, int64_t blockY,
                                          int64_t blockZ, int32_t sharedBytes,
                                          void *stream, void **params,
                                          void **extra, int64_t paramCount);
KILN_RUNTIME_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                       uint8_t hostShared);
KILN_RUNTIME_EXPORT void mgpuMemFree(void *pointer, void *stream);
KILN_RUNTIME_EXPORT void mgpuMemcpy(void *dest, void *source, uint64_t bytes,
                                    void *stream);

/* Returns 1 and copies the first error since the last call (NUL-terminated,
   truncated to `capacity` bytes) if any mgpu* call failed; else returns 0.
   The functions above cannot report errors themselves, so callers check this
   after each run. While an error is pending, launches and copies are skipped
   (they could use a temporary that failed to allocate). The error slot is
   per process: concurrent runs on several threads share it. */
KILN_RUNTIME_EXPORT int kiln_cuda_take_error(char *message, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_CUDARUNTIME_H */
