//===- LibrarySupport.cpp - What the library calls share ------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "LibrarySupport.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

using namespace kiln::cuda;

namespace {

/// A stream's workspace, in the context that allocated it.
struct WorkspaceKey {
  CUcontext context;
  CUstream stream;

  bool operator<(const WorkspaceKey &other) const {
    return std::tie(context, stream) < std::tie(other.context, other.stream);
  }
};

/// Guards `workspaces`. (Not kiln::cuda::mutex, which recordError takes.)
std::mutex workspaceMutex;
/// Every stream's workspace; they live as long as the process.
std::map<WorkspaceKey, CUdeviceptr> workspaces;

} // namespace

CUdeviceptr kiln::cuda::getStreamWorkspace(const Driver &driver,
                                           CUcontext context, CUstream stream,
                                           StreamTemporary &captureWorkspace,
                                           const std::string &caller) {
  {
    std::lock_guard<std::mutex> lock(workspaceMutex);
    if (auto space = workspaces.find(WorkspaceKey{context, stream});
        space != workspaces.end())
      return space->second;
  }
  if (isCapturing(driver, stream)) {
    if (!check(driver,
               driver.cuMemAllocAsync(&captureWorkspace.pointer,
                                      kWorkspaceBytes, stream),
               "cuMemAllocAsync"))
      return 0;
    return captureWorkspace.pointer;
  }
  CUdeviceptr made = 0;
  CUresult status = driver.cuMemAlloc(&made, kWorkspaceBytes);
  if (status != kCudaSuccess) {
    recordError(caller + ": cuMemAlloc of the " +
                std::to_string(kWorkspaceBytes >> 20) +
                " MiB workspace failed (CUDA error " + std::to_string(status) +
                ")");
    return 0;
  }
  std::lock_guard<std::mutex> lock(workspaceMutex);
  // Another thread on the same stream may have made one meanwhile.
  CUdeviceptr workspace =
      workspaces.try_emplace(WorkspaceKey{context, stream}, made).first->second;
  if (workspace != made)
    driver.cuMemFree(made);
  return workspace;
}

std::optional<int>
kiln::cuda::timeCandidates(const Driver &driver, CUstream stream, int count,
                           const std::function<bool(int)> &run,
                           std::string &trace) {
  if (!driver.cuEventCreate) {
    trace += " (no driver events: not timed)";
    return std::nullopt;
  }
  if (isCapturing(driver, stream)) {
    trace += " (stream being captured: not timed)";
    return std::nullopt;
  }
  CUevent start = nullptr, stop = nullptr;
  if (driver.cuEventCreate(&start, 0) != kCudaSuccess)
    return std::nullopt;
  if (driver.cuEventCreate(&stop, 0) != kCudaSuccess) {
    driver.cuEventDestroy(start);
    return std::nullopt;
  }
  std::optional<int> fastest;
  float best = 0;
  for (int candidate = 0; candidate < count; ++candidate) {
    if (!run(candidate)) {
      trace += " unsupported";
      continue; // This one does not run here; the others may.
    }
    float shortest = -1;
    for (int repeat = 0; repeat < 2; ++repeat) {
      float ms = 0;
      if (driver.cuEventRecord(start, stream) != kCudaSuccess ||
          !run(candidate) ||
          driver.cuEventRecord(stop, stream) != kCudaSuccess ||
          driver.cuEventSynchronize(stop) != kCudaSuccess ||
          driver.cuEventElapsedTime(&ms, start, stop) != kCudaSuccess) {
        shortest = -1;
        break;
      }
      if (shortest < 0 || ms < shortest)
        shortest = ms;
    }
    trace += shortest >= 0 ? " " + std::to_string(shortest) : " failed";
    if (shortest >= 0 && (!fastest || shortest < best)) {
      fastest = candidate;
      best = shortest;
    }
  }
  driver.cuEventDestroy(start);
  driver.cuEventDestroy(stop);
  return fastest;
}

void *kiln::cuda::openLibrary(std::initializer_list<const char *> names,
                              const std::string &caller,
                              const std::string &what, std::string &error) {
  for (const char *name : names)
    if (void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))
      return library;
  std::string reason = "unknown error", tried;
  for (const char *name : names) {
    if (void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return library;
    if (const char *text = dlerror())
      reason = text;
    tried += (tried.empty() ? "" : ", ") + std::string(name);
  }
  error =
      caller + ": cannot load " + what + " (tried " + tried + "): " + reason;
  return nullptr;
}

uint32_t kiln::cuda::getAlignment(const void *pointer,
                                  int64_t batchStrideBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(pointer) | 256;
  if (batchStrideBytes > 0)
    bits |= static_cast<uint64_t>(batchStrideBytes);
  return static_cast<uint32_t>(bits & -bits);
}

bool kiln::cuda::isTracing(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && std::string(value) != "0";
}
