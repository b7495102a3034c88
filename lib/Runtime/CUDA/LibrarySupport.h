//===- LibrarySupport.h - What the library calls share ----------*- C++ -*-===//
//
// Part of Kiln. The GEMM (cuBLASLt) and convolution (cuDNN) entry points
// share each stream's workspace, stream-ordered temporaries and the timing
// that picks the fastest of a library's candidate algorithms.
//
// This header is private to kiln_cuda_runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_RUNTIME_CUDA_LIBRARYSUPPORT_H
#define KILN_LIB_RUNTIME_CUDA_LIBRARYSUPPORT_H

#include "Driver.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

namespace kiln::cuda {

/// The workspace each stream's library calls share (a stream runs them one
/// at a time).
constexpr uint64_t kWorkspaceBytes = 32 << 20;

/// Device memory from the stream's pool, freed on the stream when it goes.
struct StreamTemporary {
  const Driver &driver;
  CUstream stream;
  CUdeviceptr pointer = 0;

  StreamTemporary(const Driver &driver, CUstream stream)
      : driver(driver), stream(stream) {}
  StreamTemporary(const StreamTemporary &) = delete;
  StreamTemporary &operator=(const StreamTemporary &) = delete;
  ~StreamTemporary() {
    if (pointer)
      driver.cuMemFreeAsync(pointer, stream);
  }
};

/// The kWorkspaceBytes workspace of `stream` in `context`, made at the
/// stream's first library call and kept. On a stream being captured into a
/// CUDA graph, where cuMemAlloc would invalidate the capture, a stream whose
/// workspace is not made yet takes `captureWorkspace` (stream-ordered: the
/// graph allocates and frees it around the call on every replay). Returns 0
/// after recording an error prefixed with `caller` (the call, described).
CUdeviceptr getStreamWorkspace(const Driver &driver, CUcontext context,
                               CUstream stream,
                               StreamTemporary &captureWorkspace,
                               const std::string &caller);

/// The index of the fastest of `count` candidate algorithms, each timed on
/// `stream` by running it (`run(i)` queues one call with candidate i and
/// returns whether it was accepted): once to load its kernels, then twice,
/// the shorter run counting. A library's heuristic ranks by a model that
/// can be off, so a shape's first call measures. None when the driver
/// cannot time (no events, or a stream being captured, which must not
/// synchronize) or no candidate runs; the caller then keeps the library's
/// first choice. Appends the times, in milliseconds, to `trace`.
std::optional<int> timeCandidates(const Driver &driver, CUstream stream,
                                  int count,
                                  const std::function<bool(int)> &run,
                                  std::string &trace);

/// Whether the environment variable `name` is set to something but 0.
bool isTracing(const char *name);

/// The first of `names` (newest first) that the process has loaded already
/// (PyTorch's copy: it matches the driver, and one copy is enough), else the
/// first that loads. Null, with `error` set to "`caller`: cannot load
/// `what` (tried ...): <why>", if none does.
void *openLibrary(std::initializer_list<const char *> names,
                  const std::string &caller, const std::string &what,
                  std::string &error);

/// The alignment in bytes, at most 256, that `pointer` has and, with a
/// positive `batchStrideBytes`, every batch element after it.
uint32_t getAlignment(const void *pointer, int64_t batchStrideBytes = 0);

} // namespace kiln::cuda

#endif // KILN_LIB_RUNTIME_CUDA_LIBRARYSUPPORT_H
