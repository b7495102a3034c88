//===- ProductChoice.cpp - Kiln's product kernels or the library, timed ---===//
//
// Part of Kiln. A product that both Kiln's tensor-core kernel and cuBLASLt
// can compute runs, at its first call with a shape, both ways a few times
// between events (the artifact's host code queues the runs; see
// kiln_cuda_product_choice), and keeps the faster for that shape: a model
// of either's speed would be off for some shapes, and this way Kiln never
// picks a slower product than the library's.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "LibrarySupport.h"
#include "kiln/Runtime/CUDARuntime.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

using namespace kiln::cuda;

namespace {

/// A product of one shape at one site of one artifact, in one context.
struct ChoiceKey {
  CUcontext context;
  const void *site;
  int64_t batch, m, n, k;

  bool operator<(const ChoiceKey &other) const {
    return std::tie(context, site, batch, m, n, k) <
           std::tie(other.context, other.site, other.batch, other.m, other.n,
                    other.k);
  }
};

/// The candidates' events of the site being timed on this thread: a pair
/// per run, recorded around it on the stream.
struct Timing {
  const void *site = nullptr;
  std::vector<std::pair<CUevent, CUevent>> runs[kiln_cuda_product_candidates];
  bool failed = false;
};

std::mutex choiceMutex;
std::map<ChoiceKey, int32_t> choices;
thread_local Timing timing;

/// The current context, or null.
CUcontext currentContext(const Driver &driver) {
  CUcontext context = nullptr;
  if (driver.cuCtxGetCurrent(&context) != kCudaSuccess)
    return nullptr;
  return context;
}

void destroyEvents(const Driver &driver) {
  for (auto &runs : timing.runs) {
    for (auto [start, stop] : runs) {
      if (start)
        driver.cuEventDestroy(start);
      if (stop)
        driver.cuEventDestroy(stop);
    }
    runs.clear();
  }
  timing.site = nullptr;
  timing.failed = false;
}

} // namespace

extern "C" int32_t kiln_cuda_product_choice(const void *site, int64_t batch,
                                            int64_t m, int64_t n, int64_t k,
                                            void *stream) {
  const Driver *driver = getReadyDriver();
  if (!driver || errorPending())
    return 0;
  CUcontext context = currentContext(*driver);
  {
    std::lock_guard<std::mutex> lock(choiceMutex);
    auto it = choices.find(ChoiceKey{context, site, batch, m, n, k});
    if (it != choices.end())
      return it->second;
  }
  // Timing waits for events, which a stream being captured must not do:
  // the library's product runs, and a later call outside the capture times.
  auto cuStream = static_cast<CUstream>(stream);
  if (!context || !driver->cuEventCreate || isCapturing(*driver, cuStream))
    return 0;
  destroyEvents(*driver);
  timing.site = site;
  return -1;
}

extern "C" void kiln_cuda_product_mark(const void *site, int32_t candidate,
                                       int32_t stop, void *stream) {
  const Driver *driver = getDriver();
  if (!driver || site != timing.site || candidate < 0 ||
      candidate >= kiln_cuda_product_candidates || timing.failed)
    return;
  auto &runs = timing.runs[candidate];
  if (!stop)
    runs.emplace_back(nullptr, nullptr);
  else if (runs.empty() || runs.back().second) {
    timing.failed = true;
    return;
  }
  CUevent event = nullptr;
  if (driver->cuEventCreate(&event, 0) != kCudaSuccess) {
    timing.failed = true;
    return;
  }
  (stop ? runs.back().second : runs.back().first) = event;
  if (driver->cuEventRecord(event, static_cast<CUstream>(stream)) !=
      kCudaSuccess)
    timing.failed = true;
}

extern "C" void kiln_cuda_product_decide(const void *site, int64_t batch,
                                         int64_t m, int64_t n, int64_t k,
                                         void *stream) {
  const Driver *driver = getDriver();
  if (!driver || site != timing.site)
    return;
  // Each candidate's shortest run; the library's product where a run could
  // not be timed.
  float shortest[kiln_cuda_product_candidates];
  int32_t chosen = 0;
  for (int32_t candidate = 0; candidate < kiln_cuda_product_candidates;
       ++candidate) {
    shortest[candidate] = -1;
    for (auto [start, stop] : timing.runs[candidate]) {
      float ms = 0;
      if (timing.failed || !start || !stop ||
          driver->cuEventSynchronize(stop) != kCudaSuccess ||
          driver->cuEventElapsedTime(&ms, start, stop) != kCudaSuccess) {
        timing.failed = true;
        break;
      }
      if (shortest[candidate] < 0 || ms < shortest[candidate])
        shortest[candidate] = ms;
    }
    if (shortest[candidate] < 0)
      timing.failed = true;
  }
  if (!timing.failed && shortest[1] < shortest[0])
    chosen = 1;
  if (isTracing("KILN_PRODUCT_TRACE"))
    std::fprintf(stderr,
                 "kiln: product %lldx%lldx%lldx%lld: library %.4f ms, Kiln's "
                 "kernel %.4f ms%s: %s\n",
                 static_cast<long long>(batch), static_cast<long long>(m),
                 static_cast<long long>(n), static_cast<long long>(k),
                 shortest[0], shortest[1],
                 timing.failed ? " (not all runs timed)" : "",
                 chosen ? "Kiln's kernel" : "the library");
  CUcontext context = currentContext(*driver);
  destroyEvents(*driver);
  std::lock_guard<std::mutex> lock(choiceMutex);
  choices[ChoiceKey{context, site, batch, m, n, k}] = chosen;
  (void)stream;
}
