//===- Driver.h - The CUDA driver as kiln_cuda_runtime loads it -*- C++ -*-===//
//
// Part of Kiln. The runtime includes no CUDA headers: it declares the few
// driver API types and entry points it needs, as the driver's ABI defines
// them, and loads libcuda.so.1 when first needed. This header also holds the
// error slot that every entry point of the library shares.
//
// This header is private to kiln_cuda_runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_RUNTIME_CUDA_DRIVER_H
#define KILN_LIB_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace kiln::cuda {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUdeviceptr = unsigned long long;
using CUmemoryPool = void *;
using CUevent = void *;
constexpr CUresult kCudaSuccess = 0;
/// CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: memory a pool keeps at synchronization.
constexpr int kMemPoolAttrReleaseThreshold = 4;
/// CU_MEMORYTYPE_DEVICE.
constexpr int kMemoryTypeDevice = 2;

/// CUDA_MEMCPY2D: a copy of `Height` rows of `WidthInBytes` bytes between
/// pitched buffers.
struct Memcpy2D {
  size_t srcXInBytes = 0, srcY = 0;
  int srcMemoryType = kMemoryTypeDevice;
  const void *srcHost = nullptr;
  CUdeviceptr srcDevice = 0;
  void *srcArray = nullptr;
  size_t srcPitch = 0;
  size_t dstXInBytes = 0, dstY = 0;
  int dstMemoryType = kMemoryTypeDevice;
  void *dstHost = nullptr;
  CUdeviceptr dstDevice = 0;
  void *dstArray = nullptr;
  size_t dstPitch = 0;
  size_t WidthInBytes = 0, Height = 0;
};

/// The driver entry points Kiln calls, loaded from libcuda.so.1.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  /// Loaded as cuMemAlloc_v2: the unversioned symbol has 32-bit pointers.
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  /// Loaded as cuMemFree_v2, the pair of cuMemAlloc_v2.
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  /// Loaded as cuMemcpy2DAsync_v2, which takes 64-bit sizes.
  CUresult (*cuMemcpy2DAsync)(const Memcpy2D *, CUstream);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuStreamSynchronize)(CUstream);
  /// Optional, null where the driver lacks them: events time the GEMM
  /// algorithms a shape may use, on streams that are not being captured.
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  /// Writes a CUstreamCaptureStatus (0: not capturing).
  CUresult (*cuStreamIsCapturing)(CUstream, int *);
  /// Optional (CUDA 12), null where the driver lacks it: encodes the tensor
  /// maps of Hopper's bulk tensor copies (kiln_cuda_tensor_map).
  CUresult (*cuTensorMapEncodeTiled)(
      void *map, int dataType, unsigned rank, void *address,
      const unsigned long long *sizes, const unsigned long long *strides,
      const unsigned *box, const unsigned *elementStrides, int interleave,
      int swizzle, int l2Promotion, int outOfBoundsFill);
};

/// Whether `stream` is being captured into a CUDA graph, where calls that
/// may synchronize (cuMemAlloc, events waited for) are not allowed. A query
/// that fails counts as a capture: the caller then takes the safe path.
inline bool isCapturing(const Driver &driver, CUstream stream) {
  if (!driver.cuStreamIsCapturing)
    return false;
  int status = 0;
  return driver.cuStreamIsCapturing(stream, &status) != kCudaSuccess ||
         status != 0;
}

/// Guards firstError and the library's caches.
extern std::mutex mutex;
/// The first error since the caller last took it; empty if none.
extern std::string firstError;

/// Keeps `message` unless an earlier error is pending. Takes `mutex`.
void recordError(const std::string &message);

/// Whether an earlier call of this run failed: the work that follows would
/// use its missing results (a null temporary, say), so it is skipped until
/// the caller takes the error. Takes `mutex`.
bool errorPending();

template <typename T> bool loadSymbol(void *library, const char *name, T &fn) {
  fn = reinterpret_cast<T>(dlsym(library, name));
  return fn != nullptr;
}

/// The driver, loaded on first use; null (with an error recorded) if this
/// machine has none.
const Driver *getDriver();

/// Records a failed driver call; returns whether `status` is success.
bool check(const Driver &driver, CUresult status, const char *what);

/// Makes a context current on this thread: the caller's if it has one (as
/// PyTorch does), else device 0's primary context.
bool ensureContext(const Driver &driver);

/// The driver with a current context on this thread, or null (with an error
/// recorded).
const Driver *getReadyDriver();

} // namespace kiln::cuda

#endif // KILN_LIB_RUNTIME_CUDA_DRIVER_H
