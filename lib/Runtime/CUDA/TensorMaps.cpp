//===- TensorMaps.cpp - Tensor maps of Hopper's bulk tensor copies --------===//
//
// Part of Kiln. Kiln's sm_90a product kernels copy their operands' tiles with
// TMA (cp.async.bulk.tensor), which reads a tensor map: the matrix's address,
// sizes and strides, the box a copy fills and how it is swizzled. The host
// encodes it before each launch and passes it by value, as a kernel
// parameter, so that a CUDA graph captures it with the launch. Those
// kernels are persistent: a block per SM, which the runtime counts.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/CUDARuntime.h"

#include "Driver.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>

using namespace kiln::cuda;

namespace {
/// The driver's CUtensorMap* enumerators that Kiln uses.
constexpr int kTensorMapFloat16 = 6, kTensorMapFloat32 = 7,
              kTensorMapBFloat16 = 9;
constexpr int kInterleaveNone = 0, kSwizzle128B = 3, kL2Promotion256B = 3,
              kOutOfBoundsZeros = 0;
constexpr size_t kTensorMapBytes = 128;
constexpr int64_t kSwizzleBytes = 128;
/// CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT.
constexpr int kMultiprocessorCount = 16;
} // namespace

extern "C" int32_t kiln_cuda_multiprocessors(void) {
  const Driver *driver = getReadyDriver();
  if (!driver)
    return 1;
  CUdevice device = 0;
  if (!check(*driver, driver->cuCtxGetDevice(&device), "cuCtxGetDevice"))
    return 1;
  static std::map<CUdevice, int> counts;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = counts.find(device); it != counts.end())
      return it->second;
  }
  int count = 0;
  if (!check(*driver,
             driver->cuDeviceGetAttribute(&count, kMultiprocessorCount, device),
             "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)") ||
      count < 1)
    return 1;
  std::lock_guard<std::mutex> lock(mutex);
  counts[device] = count;
  return count;
}

extern "C" void kiln_cuda_tensor_map(void *map, const void *base, int32_t dtype,
                                     int64_t batch, int64_t rows, int64_t cols,
                                     int32_t boxRows, int32_t boxCols) {
  std::memset(map, 0, kTensorMapBytes);
  const Driver *driver = getDriver();
  if (!driver || errorPending())
    return;
  if (!driver->cuTensorMapEncodeTiled) {
    recordError("the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or "
                "later), which Kiln's sm_90a products need");
    return;
  }
  int dataType;
  int64_t elementBytes;
  switch (dtype) {
  case 0:
    dataType = kTensorMapFloat32;
    elementBytes = 4;
    break;
  case 1:
    dataType = kTensorMapFloat16;
    elementBytes = 2;
    break;
  case 2:
    dataType = kTensorMapBFloat16;
    elementBytes = 2;
    break;
  default:
    recordError("kiln_cuda_tensor_map: unknown dtype code " +
                std::to_string(dtype));
    return;
  }
  if (boxCols * elementBytes != kSwizzleBytes) {
    recordError("kiln_cuda_tensor_map: a box row of " +
                std::to_string(boxCols * elementBytes) +
                " bytes; 128-byte swizzling needs 128");
    return;
  }
  // Innermost first: columns, rows, matrices; strides in bytes of the outer
  // two. A batch of empty matrices copies nothing: no map is needed.
  if (batch <= 0 || rows <= 0 || cols <= 0)
    return;
  unsigned long long sizes[3] = {static_cast<unsigned long long>(cols),
                                 static_cast<unsigned long long>(rows),
                                 static_cast<unsigned long long>(batch)};
  unsigned long long strides[2] = {
      static_cast<unsigned long long>(cols * elementBytes),
      static_cast<unsigned long long>(rows * cols * elementBytes)};
  unsigned box[3] = {static_cast<unsigned>(boxCols),
                     static_cast<unsigned>(boxRows), 1};
  unsigned elementStrides[3] = {1, 1, 1};
  CUresult status = driver->cuTensorMapEncodeTiled(
      map, dataType, 3, const_cast<void *>(base), sizes, strides, box,
      elementStrides, kInterleaveNone, kSwizzle128B, kL2Promotion256B,
      kOutOfBoundsZeros);
  if (status != kCudaSuccess) {
    check(*driver, status,
          ("cuTensorMapEncodeTiled of " + std::to_string(batch) + " x " +
           std::to_string(rows) + " x " + std::to_string(cols) +
           " elements, boxes of " + std::to_string(boxRows) + " x " +
           std::to_string(boxCols))
              .c_str());
    std::memset(map, 0, kTensorMapBytes);
  }
}
