//===- OpenMPRuntime.cpp - Kiln's parallel loops on the process's OpenMP --===//
//
// Part of Kiln. CPU artifacts call the few libomp entry points that MLIR's
// OpenMP translation emits (__kmpc_fork_call and friends). This library
// implements them on the OpenMP runtime that the process already runs:
// PyTorch's libgomp (possibly renamed, as pip wheels bundle it), else a
// loaded libiomp5 or libomp (both implement GOMP's entry points), else the
// system's libgomp. Kiln's parallel loops then share PyTorch's threads
// instead of bringing a second pool whose threads would compete with
// PyTorch's for the cores between Kiln's kernels and PyTorch's ops.
//
// It also asks Linux for AMX tiles for CPU artifacts whose bf16 products
// run on them (kiln_cpu_request_amx).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <array>
#include <asm/prctl.h>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>
#include <vector>

#define KILN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// The GOMP entry points Kiln uses.
struct GOMP {
  void (*parallel)(void (*)(void *), void *, unsigned, unsigned) = nullptr;
  void (*barrier)() = nullptr;
  int (*getThreadNum)() = nullptr;
  int (*getNumThreads)() = nullptr;
  int (*getMaxThreads)() = nullptr;
  void (*setNumThreads)(int) = nullptr;
  std::string library;
};

/// The loaded libraries whose file names start with `prefix`, in load order.
std::vector<std::string> findLoaded(const char *prefix) {
  struct Search {
    const char *prefix;
    std::vector<std::string> found;
  } search{prefix, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto *search = static_cast<Search *>(data);
        const char *path = info->dlpi_name;
        if (!path || !*path)
          return 0;
        const char *name = std::strrchr(path, '/');
        name = name ? name + 1 : path;
        if (std::strncmp(name, search->prefix, std::strlen(search->prefix)) ==
            0)
          search->found.push_back(path);
        return 0;
      },
      &search);
  return search.found;
}

template <typename F> bool bind(void *handle, const char *name, F &function) {
  function = reinterpret_cast<F>(dlsym(handle, name));
  return function != nullptr;
}

/// Binds `gomp` to the library `handle` if it has every entry point.
bool bindAll(void *handle, GOMP &gomp) {
  return handle && bind(handle, "GOMP_parallel", gomp.parallel) &&
         bind(handle, "GOMP_barrier", gomp.barrier) &&
         bind(handle, "omp_get_thread_num", gomp.getThreadNum) &&
         bind(handle, "omp_get_num_threads", gomp.getNumThreads) &&
         bind(handle, "omp_get_max_threads", gomp.getMaxThreads) &&
         bind(handle, "omp_set_num_threads", gomp.setNumThreads);
}

GOMP loadGOMP() {
  GOMP gomp;
  // A loaded runtime first, libgomp before the runtimes that implement its
  // entry points too; a name that matches but lacks them (libgomp's
  // offloading plugins) is skipped.
  for (const char *prefix : {"libgomp", "libiomp5", "libomp"}) {
    for (const std::string &path : findLoaded(prefix)) {
      if (bindAll(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD), gomp)) {
        gomp.library = path;
        return gomp;
      }
    }
  }
  void *handle = dlopen("libgomp.so.1", RTLD_NOW);
  if (bindAll(handle, gomp)) {
    gomp.library = "libgomp.so.1";
    return gomp;
  }
  // Nothing to fall back on: a parallel loop cannot run without it.
  std::fprintf(stderr,
               "kiln: CPU artifacts need an OpenMP runtime with GOMP's entry "
               "points (libgomp.so.1, from the libgomp1 package): %s\n",
               handle ? "a GOMP function is missing" : dlerror());
  std::abort();
}

const GOMP &getGOMP() {
  static const GOMP gomp = loadGOMP();
  return gomp;
}

using Microtask = void (*)(int32_t *, int32_t *, ...);

/// The most shared-variable arguments a parallel region passes. MLIR's
/// translation packs them into one structure.
constexpr int32_t kMaxArguments = 8;

struct Region {
  Microtask microtask;
  int32_t argumentCount;
  void *arguments[kMaxArguments];
};

/// Calls `microtask` with the thread ids and `N` arguments.
template <size_t... I>
void invokeWith(Microtask microtask, int32_t *thread, int32_t *bound,
                void **arguments, std::index_sequence<I...>) {
  microtask(thread, bound, arguments[I]...);
}
template <size_t N>
void invoke(Microtask microtask, int32_t *thread, int32_t *bound,
            void **arguments) {
  invokeWith(microtask, thread, bound, arguments,
             std::make_index_sequence<N>());
}
using Invoker = void (*)(Microtask, int32_t *, int32_t *, void **);
template <size_t... N>
constexpr std::array<Invoker, sizeof...(N)>
makeInvokers(std::index_sequence<N...>) {
  return {&invoke<N>...};
}
/// invoke<N> by argument count.
constexpr auto kInvokers =
    makeInvokers(std::make_index_sequence<kMaxArguments + 1>());

void runRegion(void *data) {
  auto *region = static_cast<Region *>(data);
  int32_t thread = getGOMP().getThreadNum();
  int32_t bound = thread;
  kInvokers[region->argumentCount](region->microtask, &thread, &bound,
                                   region->arguments);
}

} // namespace

/// The library Kiln's parallel loops run on, for diagnostics and tests.
KILN_EXPORT const char *kiln_openmp_library() {
  return getGOMP().library.c_str();
}

KILN_EXPORT int32_t __kmpc_global_thread_num(void *) {
  return getGOMP().getThreadNum();
}

KILN_EXPORT void __kmpc_fork_call(void *, int32_t argumentCount,
                                  Microtask microtask, ...) {
  if (argumentCount < 0 || argumentCount > kMaxArguments) {
    std::fprintf(stderr,
                 "kiln: a parallel region passes %d arguments; Kiln's OpenMP "
                 "layer takes at most %d\n",
                 argumentCount, kMaxArguments);
    std::abort();
  }
  Region region{microtask, argumentCount, {}};
  va_list arguments;
  va_start(arguments, microtask);
  for (int32_t i = 0; i < argumentCount; ++i)
    region.arguments[i] = va_arg(arguments, void *);
  va_end(arguments);
  // 0 threads: the calling thread's default (omp_set_num_threads).
  getGOMP().parallel(runRegion, &region, /*num_threads=*/0, /*flags=*/0);
}

/// A static schedule without chunks (kmp_sch_static): each thread gets one
/// contiguous block of the inclusive range [*lower, *upper], the first
/// `trips % threads` threads one iteration more than the others.
KILN_EXPORT void __kmpc_for_static_init_8u(void *, int32_t, int32_t schedule,
                                           int32_t *isLast, uint64_t *lower,
                                           uint64_t *upper, int64_t *stride,
                                           int64_t increment, int64_t) {
  constexpr int32_t kStaticSchedule = 34;
  if (schedule != kStaticSchedule || increment != 1) {
    std::fprintf(stderr,
                 "kiln: unsupported loop schedule %d (increment %lld) in "
                 "Kiln's OpenMP layer\n",
                 schedule, static_cast<long long>(increment));
    std::abort();
  }
  const GOMP &gomp = getGOMP();
  uint64_t threads = std::max(gomp.getNumThreads(), 1);
  uint64_t thread = std::max(gomp.getThreadNum(), 0);
  // Wraps to 0 for an empty range (upper = lower - 1).
  uint64_t trips = *upper - *lower + 1;
  uint64_t share = trips / threads, extra = trips % threads;
  uint64_t first = thread * share + std::min(thread, extra);
  uint64_t count = share + (thread < extra ? 1 : 0);
  uint64_t start = *lower + first;
  *lower = start;
  *upper = start + count - 1; // start - 1 when empty: no iterations.
  *stride = static_cast<int64_t>(trips);
  if (isLast)
    *isLast = count > 0 && first + count == trips;
}

KILN_EXPORT void __kmpc_for_static_fini(void *, int32_t) {}

KILN_EXPORT void __kmpc_barrier(void *, int32_t) { getGOMP().barrier(); }

// What Kiln's Python runtime calls to give parallel loops PyTorch's thread
// count (per calling thread, as OpenMP keeps it).
KILN_EXPORT void omp_set_num_threads(int threads) {
  getGOMP().setNumThreads(threads);
}

KILN_EXPORT int omp_get_max_threads() { return getGOMP().getMaxThreads(); }

/// Asks Linux for leave to use AMX tiles in this process, once (arch_prctl
/// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA): without it the first tile
/// instruction faults. Kiln compiles AMX code only where the compiler's own
/// request succeeded, so a refusal here means an artifact for another
/// machine or kernel: it stops with that message rather than fault.
KILN_EXPORT void kiln_cpu_request_amx() {
  static const bool granted = [] {
    constexpr long kTileData = 18; // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, kTileData) == 0;
  }();
  if (granted)
    return;
  std::fprintf(stderr, "kiln_cpu_request_amx: the OS refused AMX tiles to "
                       "this process; recompile the artifact with amx=false "
                       "for this machine\n");
  std::abort();
}
