// Hand-written variants of the softmax(x * 0.125) row kernel (bf16, rows of
// 1024, 64 * 16 * 1024 rows: bench.py's softmax workload), timed against a
// device-to-device copy of the same bytes: what the code generator's choices
// are worth when nothing else differs. docs/Performance.md has the results.
//
//   mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90a \
//       -o build/softmax_variants \
//       bench/softmax_variants.cu && build/softmax_variants
//
// Each variant's output is compared with the plain kernel's: the same
// arithmetic must give the same bits.

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t status = (call);                                               \
    if (status != cudaSuccess) {                                               \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__,                           \
                  cudaGetErrorString(status));                                 \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr int kColumns = 1024;
constexpr int kVectors = kColumns / (32 * 8); // 16-byte vectors per lane
constexpr long kRows = 64L * 16 * 1024;

// How a lane loads its vectors: plain, through the read-only cache
// (ld.global.nc), or streaming (ld.global.cs, evict first).
enum class Load { Plain, ReadOnly, Streaming };
// How it stores them: plain or streaming (st.global.cs).
enum class Store { Plain, Streaming };
// The exponentials: one ex2.approx per element (Kiln's), or two more per
// element that change nothing (work added between the loads and the stores).
enum class Work { Exp2, ExtraExp2 };

template <Load L> __device__ __forceinline__ uint4 load(const uint4 *p) {
  if constexpr (L == Load::ReadOnly)
    return __ldg(p);
  else if constexpr (L == Load::Streaming)
    return __ldcs(p);
  else
    return *p;
}

template <Store S> __device__ __forceinline__ void store(uint4 *p, uint4 v) {
  if constexpr (S == Store::Streaming)
    __stcs(p, v);
  else
    *p = v;
}

__device__ __forceinline__ float exp2Approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// One row held by one warp: each lane's kVectors vectors, lane-major (vector
// i of lane l at i * 32 + l, so that each load instruction is coalesced).
template <Store S, Work W>
__device__ __forceinline__ void softmaxRow(const uint4 (&v)[kVectors],
                                           uint4 *out, int lane) {
  constexpr float kLog2E = 1.44269504f;
  float f[kVectors * 8];
#pragma unroll
  for (int i = 0; i < kVectors; ++i) {
    unsigned words[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      unsigned word = words[k / 2];
      unsigned bits = k % 2 ? word & 0xffff0000u : word << 16;
      f[i * 8 + k] = __uint_as_float(bits) * 0.125f;
    }
  }
  float max = f[0];
#pragma unroll
  for (int k = 1; k < kVectors * 8; ++k)
    max = fmaxf(max, f[k]);
#pragma unroll
  for (int offset = 16; offset; offset /= 2)
    max = fmaxf(max, __shfl_xor_sync(~0u, max, offset));
  float sum = 0;
#pragma unroll
  for (int k = 0; k < kVectors * 8; ++k) {
    float e = exp2Approx((f[k] - max) * kLog2E);
    if constexpr (W == Work::ExtraExp2)
      e *= exp2Approx(exp2Approx(f[k]) * 0.0f); // 1 for finite inputs
    f[k] = e;
    sum += e;
  }
#pragma unroll
  for (int offset = 16; offset; offset /= 2)
    sum += __shfl_xor_sync(~0u, sum, offset);
  float scale = __frcp_rn(sum);
#pragma unroll
  for (int i = 0; i < kVectors; ++i) {
    unsigned words[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      __nv_bfloat162 pair = __floats2bfloat162_rn(f[i * 8 + 2 * k] * scale,
                                                  f[i * 8 + 2 * k + 1] * scale);
      std::memcpy(&words[k], &pair, 4);
    }
    store<S>(out + i * 32 + lane,
             make_uint4(words[0], words[1], words[2], words[3]));
  }
}

// A warp per row, `Warps` warps a block.
template <Load L, Store S, Work W, int Warps>
__global__ void __launch_bounds__(32 * Warps)
    rowPerWarp(const uint4 *__restrict__ x, uint4 *__restrict__ y) {
  long row = long(blockIdx.x) * Warps + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  uint4 v[kVectors];
#pragma unroll
  for (int i = 0; i < kVectors; ++i)
    v[i] = load<L>(x + row * (kColumns / 8) + i * 32 + lane);
  softmaxRow<S, W>(v, y + row * (kColumns / 8), lane);
}

// Persistent one-warp blocks: each loads its next row before computing and
// storing this one.
__global__ void __launch_bounds__(32)
    persistentPrefetching(const uint4 *__restrict__ x, uint4 *__restrict__ y) {
  long row = blockIdx.x;
  int lane = threadIdx.x;
  uint4 current[kVectors];
#pragma unroll
  for (int i = 0; i < kVectors; ++i)
    current[i] = x[row * (kColumns / 8) + i * 32 + lane];
  for (; row < kRows; row += gridDim.x) {
    long next = row + gridDim.x;
    uint4 ahead[kVectors];
    if (next < kRows) {
#pragma unroll
      for (int i = 0; i < kVectors; ++i)
        ahead[i] = x[next * (kColumns / 8) + i * 32 + lane];
    }
    softmaxRow<Store::Plain, Work::Exp2>(current, y + row * (kColumns / 8),
                                         lane);
#pragma unroll
    for (int i = 0; i < kVectors; ++i)
      current[i] = ahead[i];
  }
}

// Two rows per one-warp block, both loaded before either is computed.
__global__ void __launch_bounds__(32)
    twoRowsPerWarp(const uint4 *__restrict__ x, uint4 *__restrict__ y) {
  long row = long(blockIdx.x) * 2;
  int lane = threadIdx.x;
  uint4 first[kVectors], second[kVectors];
#pragma unroll
  for (int i = 0; i < kVectors; ++i) {
    first[i] = x[row * (kColumns / 8) + i * 32 + lane];
    second[i] = x[(row + 1) * (kColumns / 8) + i * 32 + lane];
  }
  softmaxRow<Store::Plain, Work::Exp2>(first, y + row * (kColumns / 8), lane);
  softmaxRow<Store::Plain, Work::Exp2>(second, y + (row + 1) * (kColumns / 8),
                                       lane);
}

int main() {
  const size_t bytes = size_t(kRows) * kColumns * 2;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint4 *x, *y, *reference;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMalloc(&reference, bytes));
  {
    // Uniform in [-4, 4), from a fixed linear congruential sequence.
    std::vector<unsigned short> host(bytes / 2);
    unsigned state = 12345;
    for (unsigned short &element : host) {
      state = state * 1664525u + 1013904223u;
      float value = ((state >> 8) / 16777216.0f - 0.5f) * 8;
      unsigned bits;
      std::memcpy(&bits, &value, 4);
      element = bits >> 16;
    }
    CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  rowPerWarp<Load::Plain, Store::Plain, Work::Exp2, 1>
      <<<kRows, 32, 0, stream>>>(x, reference);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());

  // Median of 90 calls queued back to back, each between its own events
  // (as bench.py times), after 5 unmeasured ones; then the output compared.
  auto time = [&](const char *name, bool compare, auto launch) {
    CHECK(cudaMemsetAsync(y, 0xff, bytes, stream));
    for (int i = 0; i < 5; ++i)
      launch();
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    constexpr int kCalls = 90;
    std::vector<cudaEvent_t> events(2 * kCalls);
    for (cudaEvent_t &event : events)
      CHECK(cudaEventCreate(&event));
    for (int i = 0; i < kCalls; ++i) {
      CHECK(cudaEventRecord(events[2 * i], stream));
      launch();
      CHECK(cudaEventRecord(events[2 * i + 1], stream));
    }
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    std::vector<float> times(kCalls);
    for (int i = 0; i < kCalls; ++i)
      CHECK(cudaEventElapsedTime(&times[i], events[2 * i], events[2 * i + 1]));
    for (cudaEvent_t &event : events)
      CHECK(cudaEventDestroy(event));
    std::sort(times.begin(), times.end());
    const char *verdict = "";
    if (compare) {
      // Seven 16 MB windows spread over the output, and its end.
      std::vector<unsigned char> got(1 << 24), want(1 << 24);
      for (size_t offset = 0; offset < bytes; offset += bytes / 7) {
        size_t length = std::min<size_t>(got.size(), bytes - offset);
        CHECK(cudaMemcpy(got.data(), reinterpret_cast<char *>(y) + offset,
                         length, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(want.data(),
                         reinterpret_cast<char *>(reference) + offset, length,
                         cudaMemcpyDeviceToHost));
        if (std::memcmp(got.data(), want.data(), length))
          verdict = "DIFFERENT";
      }
    }
    std::printf("%-44s %.4f ms (min %.4f) %s\n", name, times[kCalls / 2],
                times[0], verdict);
  };

  time("copy (cudaMemcpyAsync)", false, [&] {
    CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  for (int round = 0; round < 2; ++round) {
    time("warp per row, one-warp blocks (Kiln's)", true, [&] {
      rowPerWarp<Load::Plain, Store::Plain, Work::Exp2, 1>
          <<<kRows, 32, 0, stream>>>(x, y);
    });
    time("  two-warp blocks", true, [&] {
      rowPerWarp<Load::Plain, Store::Plain, Work::Exp2, 2>
          <<<kRows / 2, 64, 0, stream>>>(x, y);
    });
    time("  loads through the read-only cache", true, [&] {
      rowPerWarp<Load::ReadOnly, Store::Plain, Work::Exp2, 1>
          <<<kRows, 32, 0, stream>>>(x, y);
    });
    time("  streaming loads", true, [&] {
      rowPerWarp<Load::Streaming, Store::Plain, Work::Exp2, 1>
          <<<kRows, 32, 0, stream>>>(x, y);
    });
    time("  streaming stores", true, [&] {
      rowPerWarp<Load::Plain, Store::Streaming, Work::Exp2, 1>
          <<<kRows, 32, 0, stream>>>(x, y);
    });
    time("  streaming loads and stores", true, [&] {
      rowPerWarp<Load::Streaming, Store::Streaming, Work::Exp2, 1>
          <<<kRows, 32, 0, stream>>>(x, y);
    });
    time("  two ex2 more per element", true, [&] {
      rowPerWarp<Load::Plain, Store::Plain, Work::ExtraExp2, 1>
          <<<kRows, 32, 0, stream>>>(x, y);
    });
    time("two rows per one-warp block", true,
         [&] { twoRowsPerWarp<<<kRows / 2, 32, 0, stream>>>(x, y); });
    for (int perSM : {16, 32}) {
      char name[64];
      std::snprintf(name, sizeof(name), "persistent, prefetching, %d warps/SM",
                    perSM);
      time(name, true, [&] {
        persistentPrefetching<<<sms * perSM, 32, 0, stream>>>(x, y);
      });
    }
  }
  return 0;
}
