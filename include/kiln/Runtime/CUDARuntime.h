/*===- CUDARuntime.h - The runtime library of Kiln's GPU artifacts --------===*\
|*                                                                            *|
|* Part of Kiln. GPU artifacts call the mgpu* functions, whose signatures are *|
|* fixed by MLIR's GPU-to-LLVM lowering, kiln_cuda_gemm and                   *|
|* kiln_cuda_convolution; callers of artifacts use kiln_cuda_take_error to    *|
|* learn about failures. All work is ordered on the stream the caller passes  *|
|* to kiln_<graph>_run (or to the library calls); nothing here synchronizes   *|
|* the host, but the first use of a frozen constant (kiln_cuda_constant) and  *|
|* the timing of a library call's algorithms, or of a product's candidates    *|
|* (kiln_cuda_product_decide), at a shape's first call.                       *|
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

/* C[b] = op(A[b]) x op(B[b]) (+ bias, activation) for b < batch, on `stream`,
   with cuBLASLt (loaded when first needed). All operands are contiguous and
   row-major; batch strides are the matrices' sizes (M*K, K*N, M*N).
   dtype: 0 = f32, 1 = f16, 2 = bf16, for A and B, or 3 = f32 multiplied in
   TF32 (as PyTorch's allow_tf32); resultDtype, for C and bias: dtype, or
   0 (f32: the sums unrounded). Accumulation and scaling are f32.
   A is M x K, or K x M when transposeA != 0 (op(A) is then its transpose);
   B is K x N, or N x K when transposeB != 0. C is M x N.
   bias: NULL or N elements, added to every row of C.
   activation: 0 none, 1 relu, 2 gelu (tanh approximation), after the bias.
   batch, m or n = 0 does nothing; k = 0 zero-fills C (no bias allowed).
   Failures are recorded for kiln_cuda_take_error. */
KILN_RUNTIME_EXPORT void
kiln_cuda_gemm(int32_t dtype, int32_t resultDtype, int64_t batch, int64_t m,
               int64_t n, int64_t k, const void *a, int32_t transposeA,
               const void *b, int32_t transposeB, const void *bias,
               int32_t activation, void *c, void *stream);

/* A product that Kiln's tensor-core kernel and kiln_cuda_gemm can both
   compute, at `site` (an address unique to it in its artifact): candidate 0
   is the library's, 1 Kiln's kernel. kiln_cuda_product_choice returns the
   candidate chosen for this shape in the current context, or -1 when none
   is yet: the caller then queues a few runs of each of the
   kiln_cuda_product_candidates candidates on `stream`, each between
   kiln_cuda_product_mark(site, candidate, 0, stream) and
   (site, candidate, 1, stream), then calls kiln_cuda_product_decide,
   which waits for them and keeps the faster (the library's if a run could
   not be timed). On a stream being captured into a CUDA graph nothing is
   timed and an unchosen shape runs the library's (0). KILN_PRODUCT_TRACE=1
   prints each choice's times. */
#define kiln_cuda_product_candidates 2
KILN_RUNTIME_EXPORT int32_t kiln_cuda_product_choice(const void *site,
                                                     int64_t batch, int64_t m,
                                                     int64_t n, int64_t k,
                                                     void *stream);
KILN_RUNTIME_EXPORT void kiln_cuda_product_mark(const void *site,
                                                int32_t candidate, int32_t stop,
                                                void *stream);
KILN_RUNTIME_EXPORT void kiln_cuda_product_decide(const void *site,
                                                  int64_t batch, int64_t m,
                                                  int64_t n, int64_t k,
                                                  void *stream);

/* Writes to `map` (128 bytes, 64-byte aligned) the tensor map of a batch of
   `batch` matrices of `rows` x `cols` elements of `dtype` (0 = f32, 1 = f16,
   2 = bf16), stored contiguously at `base` (16-byte aligned, rows of a
   multiple of 16 bytes), whose bulk tensor copies (sm_90) each fill a box of
   `boxRows` x `boxCols` elements of one matrix into workgroup memory,
   swizzled by 128 bytes (a box row is 128 bytes), with zeros where the box
   lies past the matrix's edges. A kernel reads it as a __grid_constant__
   parameter. Failures (no such entry point in the driver, sizes the
   hardware cannot copy) are recorded for kiln_cuda_take_error and leave
   `map` zeroed; the launch that would read it is then skipped. */
KILN_RUNTIME_EXPORT void kiln_cuda_tensor_map(void *map, const void *base,
                                              int32_t dtype, int64_t batch,
                                              int64_t rows, int64_t cols,
                                              int32_t boxRows, int32_t boxCols);

/* The number of SMs of the current context's device (the blocks a
   persistent kernel launches); 1 after an error, which is recorded. */
KILN_RUNTIME_EXPORT int32_t kiln_cuda_multiprocessors(void);

/* A 2-d convolution of channels-last tensors with cuDNN (loaded when first
   needed), on `stream`:
     result[n, y, x, f] = sum over c < C / groups, i < kernelH, j < kernelW of
       input[n, y * strideH + i * dilationH - padH,
                x * strideW + j * dilationW - padW, g * C / groups + c]
       * weight[f, i, j, c]
   with g = f / (filters / groups) and 0 outside the image. input is
   batch x height x width x channels, weight filters x kernelH x kernelW x
   (channels / groups), result batch x outHeight x outWidth x filters, all
   contiguous and of one dtype (0 = f32, 1 = f16, 2 = bf16); sums accumulate
   in f32 (no TF32) and are rounded once. A 1-d convolution is one of height
   1. An empty result does nothing; channels = 0 zero-fills it. Failures
   (sizes past cuDNN's 32-bit limits, outHeight or outWidth not what the
   geometry gives) are recorded for kiln_cuda_take_error. */
KILN_RUNTIME_EXPORT void
kiln_cuda_convolution(int32_t dtype, int64_t batch, int64_t height,
                      int64_t width, int64_t channels, int64_t filters,
                      int64_t kernelH, int64_t kernelW, int64_t outHeight,
                      int64_t outWidth, int64_t strideH, int64_t strideW,
                      int64_t padH, int64_t padW, int64_t dilationH,
                      int64_t dilationW, int64_t groups, const void *input,
                      const void *weight, void *result, void *stream);

/* The device copy of `bytes` of a frozen constant at `host` (an artifact's
   read-only global), in the current context: uploaded on `stream` at its
   first use, which waits for the upload (and so must not be inside a stream
   capture), then kept until the artifact is unloaded. Null after an error. */
KILN_RUNTIME_EXPORT void *kiln_cuda_constant(const void *host, uint64_t bytes,
                                             void *stream);

/* Returns 1 and copies the first error since the last call (NUL-terminated,
   truncated to `capacity` bytes) if any call above failed; else returns 0.
   The functions above cannot report errors themselves, so callers check this
   after each run. While an error is pending, launches, copies and library
   calls are skipped (they could use a temporary that failed to allocate).
   The error slot is per process: concurrent runs on several threads share
   it. */
KILN_RUNTIME_EXPORT int kiln_cuda_take_error(char *message, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_CUDARUNTIME_H */
