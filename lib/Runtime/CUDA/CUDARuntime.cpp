//===- CUDARuntime.cpp - The runtime library of Kiln's GPU artifacts ------===//
//
// Part of Kiln. Implements the mgpu* functions that MLIR's GPU lowering calls,
// on the CUDA driver API, which it loads at run time: a CPU-only machine can
// load GPU artifacts' libraries, and fails with a message only when it runs
// them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/CUDARuntime.h"

#include "Driver.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::cuda {

std::mutex mutex;
std::string firstError;

void recordError(const std::string &message) {
  std::lock_guard<std::mutex> lock(mutex);
  if (firstError.empty())
    firstError = message;
}

bool errorPending() {
  std::lock_guard<std::mutex> lock(mutex);
  return !firstError.empty();
}

const Driver *getDriver() {
  static const Driver *driver = []() -> const Driver * {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      recordError(std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                  dlerror());
      return nullptr;
    }
    static Driver loaded;
    bool ok =
        loadSymbol(library, "cuInit", loaded.cuInit) &&
        loadSymbol(library, "cuDeviceGet", loaded.cuDeviceGet) &&
        loadSymbol(library, "cuCtxGetCurrent", loaded.cuCtxGetCurrent) &&
        loadSymbol(library, "cuCtxSetCurrent", loaded.cuCtxSetCurrent) &&
        loadSymbol(library, "cuDevicePrimaryCtxRetain",
                   loaded.cuDevicePrimaryCtxRetain) &&
        loadSymbol(library, "cuModuleLoadData", loaded.cuModuleLoadData) &&
        loadSymbol(library, "cuModuleUnload", loaded.cuModuleUnload) &&
        loadSymbol(library, "cuModuleGetFunction",
                   loaded.cuModuleGetFunction) &&
        loadSymbol(library, "cuFuncSetAttribute", loaded.cuFuncSetAttribute) &&
        loadSymbol(library, "cuLaunchKernel", loaded.cuLaunchKernel) &&
        loadSymbol(library, "cuMemAlloc_v2", loaded.cuMemAlloc) &&
        loadSymbol(library, "cuMemAllocAsync", loaded.cuMemAllocAsync) &&
        loadSymbol(library, "cuMemFree_v2", loaded.cuMemFree) &&
        loadSymbol(library, "cuCtxGetDevice", loaded.cuCtxGetDevice) &&
        loadSymbol(library, "cuDeviceGetAttribute",
                   loaded.cuDeviceGetAttribute) &&
        loadSymbol(library, "cuDeviceGetDefaultMemPool",
                   loaded.cuDeviceGetDefaultMemPool) &&
        loadSymbol(library, "cuMemPoolSetAttribute",
                   loaded.cuMemPoolSetAttribute) &&
        loadSymbol(library, "cuMemFreeAsync", loaded.cuMemFreeAsync) &&
        loadSymbol(library, "cuMemcpyAsync", loaded.cuMemcpyAsync) &&
        loadSymbol(library, "cuMemsetD8Async", loaded.cuMemsetD8Async) &&
        loadSymbol(library, "cuMemcpy2DAsync_v2", loaded.cuMemcpy2DAsync) &&
        loadSymbol(library, "cuGetErrorString", loaded.cuGetErrorString) &&
        loadSymbol(library, "cuStreamSynchronize", loaded.cuStreamSynchronize);
    if (!ok) {
      recordError("the CUDA driver lacks an entry point Kiln needs");
      return nullptr;
    }
    // The timing entry points are optional: without them the GEMM takes
    // cuBLASLt's first choice.
    if (!loadSymbol(library, "cuEventElapsedTime_v2",
                    loaded.cuEventElapsedTime))
      loadSymbol(library, "cuEventElapsedTime", loaded.cuEventElapsedTime);
    if (!(loadSymbol(library, "cuEventCreate", loaded.cuEventCreate) &&
          loadSymbol(library, "cuEventRecord", loaded.cuEventRecord) &&
          loadSymbol(library, "cuEventSynchronize",
                     loaded.cuEventSynchronize) &&
          loadSymbol(library, "cuEventDestroy_v2", loaded.cuEventDestroy) &&
          loadSymbol(library, "cuStreamIsCapturing",
                     loaded.cuStreamIsCapturing) &&
          loaded.cuEventElapsedTime))
      loaded.cuEventCreate = nullptr;
    loadSymbol(library, "cuTensorMapEncodeTiled",
               loaded.cuTensorMapEncodeTiled);
    if (CUresult status = loaded.cuInit(0); status != kCudaSuccess) {
      recordError("cuInit failed with CUDA error " + std::to_string(status));
      return nullptr;
    }
    return &loaded;
  }();
  return driver;
}

bool check(const Driver &driver, CUresult status, const char *what) {
  if (status == kCudaSuccess)
    return true;
  const char *text = nullptr;
  driver.cuGetErrorString(status, &text);
  recordError(std::string(what) + " failed: " +
              (text ? text : ("CUDA error " + std::to_string(status))));
  return false;
}

bool ensureContext(const Driver &driver) {
  CUcontext current = nullptr;
  if (!check(driver, driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent"))
    return false;
  if (current)
    return true;
  CUdevice device;
  CUcontext primary;
  return check(driver, driver.cuDeviceGet(&device, 0), "cuDeviceGet") &&
         check(driver, driver.cuDevicePrimaryCtxRetain(&primary, device),
               "cuDevicePrimaryCtxRetain") &&
         check(driver, driver.cuCtxSetCurrent(primary), "cuCtxSetCurrent");
}

const Driver *getReadyDriver() {
  const Driver *driver = getDriver();
  if (!driver || !ensureContext(*driver))
    return nullptr;
  return driver;
}

} // namespace kiln::cuda

using namespace kiln::cuda;

namespace {

/// A kernel module as artifacts see it. Artifacts "load" their modules in a
/// constructor, while the dynamic loader holds its lock; initializing CUDA
/// there can deadlock (the driver starts threads that need that lock). So
/// loading only records the binary, and the driver loads it when a kernel is
/// first needed in a context (a module belongs to one context; callers may
/// use several devices).
struct LazyModule {
  const void *binary = nullptr;
  std::map<CUcontext, CUmodule> modules;
  std::map<std::pair<CUcontext, std::string>, CUfunction> functions;
};

} // namespace

namespace {
/// A frozen constant's device copy, and the loaded image (artifact) whose
/// read-only data it copies.
struct DeviceConstant {
  CUdeviceptr device;
  const void *image;
};
} // namespace

/// Device copies of frozen constants, by context and host data: each is
/// uploaded once and kept until its artifact is unloaded.
static std::map<std::tuple<CUcontext, const void *, uint64_t>, DeviceConstant>
    deviceConstants;

/// The base address of the loaded image that holds `address`, if any.
static const void *getImageBase(const void *address) {
  Dl_info info;
  return dladdr(address, &info) ? info.dli_fbase : nullptr;
}

/// Frees the device copies of the constants of the image at `image`, which
/// is being unloaded: another image loaded at its address later must not
/// find them.
static void forgetDeviceConstants(const void *image) {
  std::vector<CUdeviceptr> freed;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = deviceConstants.begin(); it != deviceConstants.end();) {
      if (it->second.image != image) {
        ++it;
        continue;
      }
      freed.push_back(it->second.device);
      it = deviceConstants.erase(it);
    }
  }
  if (freed.empty())
    return;
  // Errors are ignored: an unload has no caller to report them to.
  if (const Driver *driver = getDriver())
    for (CUdeviceptr device : freed)
      driver->cuMemFree(device);
}

extern "C" void *mgpuModuleLoad(void *data, size_t) {
  auto *lazy = new LazyModule;
  lazy->binary = data;
  return lazy;
}

/// Set when the process begins to exit. Artifacts unload their modules in
/// destructors that the dynamic loader runs after every exit handler, so
/// after this library's own state (the constants' map, the mutex) has been
/// destroyed, and while the driver is shutting down. The process's end frees
/// modules and device memory anyway, so unloading then is skipped.
static std::atomic<bool> processExiting{false};
[[maybe_unused]] static const bool exitHandlerRegistered =
    std::atexit([] { processExiting = true; }) == 0;

extern "C" void mgpuModuleUnload(void *module) {
  auto *lazy = static_cast<LazyModule *>(module);
  if (!lazy || processExiting)
    return;
  if (const void *image = getImageBase(lazy->binary))
    forgetDeviceConstants(image);
  // Errors are ignored: an unload has no caller to report them to.
  if (!lazy->modules.empty()) {
    if (const Driver *driver = getDriver()) {
      for (auto &entry : lazy->modules)
        driver->cuModuleUnload(entry.second);
    }
  }
  delete lazy;
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  auto *lazy = static_cast<LazyModule *>(module);
  const Driver *driver = getReadyDriver();
  if (!driver || !lazy)
    return nullptr;
  CUcontext context = nullptr;
  if (!check(*driver, driver->cuCtxGetCurrent(&context), "cuCtxGetCurrent"))
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(context, std::string(name));
  if (auto it = lazy->functions.find(key); it != lazy->functions.end())
    return it->second;
  auto [loaded, inserted] = lazy->modules.try_emplace(context, nullptr);
  if (inserted) {
    CUresult status = driver->cuModuleLoadData(&loaded->second, lazy->binary);
    if (status != kCudaSuccess) {
      lazy->modules.erase(loaded);
      if (firstError.empty())
        firstError = "cuModuleLoadData failed with CUDA error " +
                     std::to_string(status) + "; kernel '" + name +
                     "' is unavailable";
      return nullptr;
    }
  }
  CUfunction function = nullptr;
  CUresult status =
      driver->cuModuleGetFunction(&function, loaded->second, name);
  if (status != kCudaSuccess) {
    const char *text = nullptr;
    driver->cuGetErrorString(status, &text);
    if (firstError.empty())
      firstError = std::string("cuModuleGetFunction(") + name +
                   ") failed: " + (text ? text : "unknown error");
    return nullptr;
  }
  lazy->functions.emplace(key, function);
  return function;
}

/// The dynamic workgroup memory any kernel may use without opting in.
static constexpr int32_t kDefaultDynamicSharedBytes = 48 * 1024;
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
static constexpr int kMaxDynamicSharedAttribute = 8;

/// Lets `function` use `bytes` of dynamic workgroup memory (more than the
/// default: Kiln's tensor-core products stage their tiles in it), once per
/// function and size.
static bool allowSharedBytes(const Driver &driver, void *function,
                             int32_t bytes) {
  static std::mutex allowedMutex;
  static std::map<void *, int32_t> allowed;
  std::lock_guard<std::mutex> lock(allowedMutex);
  int32_t &most = allowed[function];
  if (bytes <= most)
    return true;
  if (!check(driver,
             driver.cuFuncSetAttribute(function, kMaxDynamicSharedAttribute,
                                       bytes),
             "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"))
    return false;
  most = bytes;
  return true;
}

extern "C" void mgpuLaunchKernel(void *function, int64_t gridX, int64_t gridY,
                                 int64_t gridZ, int64_t blockX, int64_t blockY,
                                 int64_t blockZ, int32_t sharedBytes,
                                 void *stream, void **params, void **extra,
                                 int64_t) {
  const Driver *driver = getReadyDriver();
  if (!driver || !function || errorPending())
    return;
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return; // An empty tensor: nothing to compute.
  if (sharedBytes > kDefaultDynamicSharedBytes &&
      !allowSharedBytes(*driver, function, sharedBytes))
    return;
  check(*driver,
        driver->cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                               blockZ, sharedBytes, stream, params, extra),
        "cuLaunchKernel");
}

/// Makes the current device's default memory pool, which temporaries come
/// from, keep freed memory instead of returning it to the system at every
/// synchronization: mapping hundreds of megabytes again on each run costs
/// milliseconds. (PyTorch's caching allocator keeps memory likewise.)
static bool keepPoolMemory(const Driver &driver) {
  static std::set<CUdevice> configured;
  CUdevice device;
  if (!check(driver, driver.cuCtxGetDevice(&device), "cuCtxGetDevice"))
    return false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!configured.insert(device).second)
      return true;
  }
  CUmemoryPool pool = nullptr;
  uint64_t keepAll = ~uint64_t(0);
  return check(driver, driver.cuDeviceGetDefaultMemPool(&pool, device),
               "cuDeviceGetDefaultMemPool") &&
         check(driver,
               driver.cuMemPoolSetAttribute(pool, kMemPoolAttrReleaseThreshold,
                                            &keepAll),
               "cuMemPoolSetAttribute");
}

extern "C" void *mgpuMemAlloc(uint64_t bytes, void *stream, uint8_t) {
  const Driver *driver = getReadyDriver();
  if (!driver || bytes == 0 || !keepPoolMemory(*driver))
    return nullptr;
  CUdeviceptr pointer = 0;
  if (!check(*driver, driver->cuMemAllocAsync(&pointer, bytes, stream),
             "cuMemAllocAsync"))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

extern "C" void mgpuMemFree(void *pointer, void *stream) {
  const Driver *driver = getReadyDriver();
  if (!driver || !pointer)
    return;
  check(*driver,
        driver->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream),
        "cuMemFreeAsync");
}

extern "C" void mgpuMemcpy(void *dest, void *source, uint64_t bytes,
                           void *stream) {
  const Driver *driver = getReadyDriver();
  if (!driver || bytes == 0 || errorPending())
    return;
  check(*driver,
        driver->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dest),
                              reinterpret_cast<CUdeviceptr>(source), bytes,
                              stream),
        "cuMemcpyAsync");
}

/// The device copy of `bytes` of frozen constant data at `host` (an
/// artifact's read-only global) in the current context; uploaded at its
/// first use, on `stream`, and waited for, so that any stream may read it
/// afterwards. Null after an error.
extern "C" void *kiln_cuda_constant(const void *host, uint64_t bytes,
                                    void *stream) {
  const Driver *driver = getReadyDriver();
  if (!driver || errorPending())
    return nullptr;
  CUcontext context = nullptr;
  if (!check(*driver, driver->cuCtxGetCurrent(&context), "cuCtxGetCurrent"))
    return nullptr;
  auto key = std::make_tuple(context, host, bytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = deviceConstants.find(key); it != deviceConstants.end())
      return reinterpret_cast<void *>(it->second.device);
  }
  if (isCapturing(*driver, stream)) {
    recordError("a graph with frozen constants must run once before its "
                "stream is captured (the constants' upload cannot be)");
    return nullptr;
  }
  CUdeviceptr device = 0;
  if (!check(*driver, driver->cuMemAlloc(&device, std::max<uint64_t>(bytes, 1)),
             "cuMemAlloc"))
    return nullptr;
  if (!check(*driver,
             driver->cuMemcpyAsync(device, reinterpret_cast<CUdeviceptr>(host),
                                   bytes, stream),
             "cuMemcpyAsync") ||
      !check(*driver, driver->cuStreamSynchronize(stream),
             "cuStreamSynchronize")) {
    driver->cuMemFree(device);
    return nullptr;
  }
  DeviceConstant entry{device, getImageBase(host)};
  CUdeviceptr kept;
  {
    std::lock_guard<std::mutex> lock(mutex);
    // Another thread may have uploaded it meanwhile: keep the first.
    kept = deviceConstants.try_emplace(key, entry).first->second.device;
  }
  if (kept != device)
    driver->cuMemFree(device);
  return reinterpret_cast<void *>(kept);
}

extern "C" int kiln_cuda_take_error(char *message, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex);
  if (firstError.empty())
    return 0;
  if (message && capacity > 0)
    std::snprintf(message, capacity, "%s", firstError.c_str());
  firstError.clear();
  return 1;
}
