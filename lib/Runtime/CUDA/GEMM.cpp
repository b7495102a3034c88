//===- GEMM.cpp - kiln_cuda_gemm on cuBLASLt ------------------------------===//
//
// Part of Kiln. Implements kiln_cuda_gemm with cuBLASLt, which it loads when
// first needed, like the driver: the runtime links neither, so it loads on
// machines without a GPU or without cuBLAS.
//
// cuBLASLt is column-major. A row-major M x N matrix is the column-major
// N x M matrix with the same bytes, so row-major C = op(A) x op(B) is
// column-major C^T = op(B)^T x op(A)^T: B's data is cuBLASLt's first operand
// and A's its second, and the bias (N elements) runs along the rows of the
// column-major result, as cuBLASLt's bias epilogues expect.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/CUDARuntime.h"

#include "LibrarySupport.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace kiln::cuda;

namespace {

// The few cuBLASLt types and values Kiln needs, as cuBLASLt's ABI (the same
// in CUDA 12 and 13) defines them. Enum parameters are passed as ints.
using cublasStatus_t = int;
using cublasLtHandle_t = void *;
using cublasLtMatmulDesc_t = void *;
using cublasLtMatrixLayout_t = void *;
using cublasLtMatmulPreference_t = void *;
constexpr cublasStatus_t kCublasSuccess = 0;

// cudaDataType_t.
constexpr int kCudaR32F = 0;
constexpr int kCudaR16F = 2;
constexpr int kCudaR16BF = 14;
// cublasComputeType_t: f32 accumulation, with f32 or TF32 multiplies.
constexpr int kCublasCompute32F = 68;
constexpr int kCublasCompute32FFastTF32 = 77;
// kiln_cuda_gemm's dtype code for f32 operands multiplied in TF32.
constexpr int32_t kDtypeTF32 = 3;
// cublasOperation_t.
constexpr int32_t kCublasOpN = 0;
constexpr int32_t kCublasOpT = 1;
// cublasLtMatmulDescAttributes_t.
constexpr int kDescTransA = 3;
constexpr int kDescTransB = 4;
constexpr int kDescEpilogue = 7;
constexpr int kDescBiasPointer = 8;
// cublasLtMatrixLayoutAttribute_t.
constexpr int kLayoutBatchCount = 5;
constexpr int kLayoutStridedBatchOffset = 6;
// cublasLtMatmulPreferenceAttributes_t.
constexpr int kPrefMaxWorkspaceBytes = 1;
constexpr int kPrefMinAlignmentABytes = 5;
constexpr int kPrefMinAlignmentBBytes = 6;
constexpr int kPrefMinAlignmentCBytes = 7;
constexpr int kPrefMinAlignmentDBytes = 8;
// cublasLtEpilogue_t.
constexpr uint32_t kEpilogueDefault = 1;
constexpr uint32_t kEpilogueRelu = 2;
constexpr uint32_t kEpilogueBias = 4;
constexpr uint32_t kEpilogueGelu = 32;

/// cublasLtMatmulAlgo_t.
struct MatmulAlgo {
  uint64_t data[8];
};

/// cublasLtMatmulHeuristicResult_t.
struct HeuristicResult {
  MatmulAlgo algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

/// The cuBLASLt entry points Kiln calls.
struct CublasLt {
  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t *);
  cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *, int, int);
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t, int,
                                                   const void *, size_t);
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *, int,
                                               uint64_t, uint64_t, int64_t);
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t,
                                                     int, const void *, size_t);
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(
      cublasLtMatmulPreference_t *);
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(
      cublasLtMatmulPreference_t, int, const void *, size_t);
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
      cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
      cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
      cublasLtMatmulPreference_t, int, HeuristicResult *, int *);
  cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                   const void *, const void *,
                                   cublasLtMatrixLayout_t, const void *,
                                   cublasLtMatrixLayout_t, const void *,
                                   const void *, cublasLtMatrixLayout_t, void *,
                                   cublasLtMatrixLayout_t, const MatmulAlgo *,
                                   void *, size_t, CUstream);
  /// Optional: names a status in error messages.
  const char *(*cublasLtGetStatusName)(cublasStatus_t);
};

/// cuBLASLt, loaded on first use; null (with an error recorded, on every
/// call) if it cannot be loaded.
const CublasLt *getCublasLt() {
  static std::string loadError;
  static const CublasLt *cublasLt = []() -> const CublasLt * {
    void *library = openLibrary(
        {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
        "kiln_cuda_gemm", "cuBLASLt", loadError);
    if (!library)
      return nullptr;
    static CublasLt loaded;
    bool ok = loadSymbol(library, "cublasLtCreate", loaded.cublasLtCreate) &&
              loadSymbol(library, "cublasLtMatmulDescCreate",
                         loaded.cublasLtMatmulDescCreate) &&
              loadSymbol(library, "cublasLtMatmulDescDestroy",
                         loaded.cublasLtMatmulDescDestroy) &&
              loadSymbol(library, "cublasLtMatmulDescSetAttribute",
                         loaded.cublasLtMatmulDescSetAttribute) &&
              loadSymbol(library, "cublasLtMatrixLayoutCreate",
                         loaded.cublasLtMatrixLayoutCreate) &&
              loadSymbol(library, "cublasLtMatrixLayoutDestroy",
                         loaded.cublasLtMatrixLayoutDestroy) &&
              loadSymbol(library, "cublasLtMatrixLayoutSetAttribute",
                         loaded.cublasLtMatrixLayoutSetAttribute) &&
              loadSymbol(library, "cublasLtMatmulPreferenceCreate",
                         loaded.cublasLtMatmulPreferenceCreate) &&
              loadSymbol(library, "cublasLtMatmulPreferenceDestroy",
                         loaded.cublasLtMatmulPreferenceDestroy) &&
              loadSymbol(library, "cublasLtMatmulPreferenceSetAttribute",
                         loaded.cublasLtMatmulPreferenceSetAttribute) &&
              loadSymbol(library, "cublasLtMatmulAlgoGetHeuristic",
                         loaded.cublasLtMatmulAlgoGetHeuristic) &&
              loadSymbol(library, "cublasLtMatmul", loaded.cublasLtMatmul);
    if (!ok) {
      loadError = "kiln_cuda_gemm: cuBLASLt lacks an entry point Kiln needs";
      return nullptr;
    }
    loadSymbol(library, "cublasLtGetStatusName", loaded.cublasLtGetStatusName);
    return &loaded;
  }();
  if (!cublasLt)
    recordError(loadError);
  return cublasLt;
}

/// The most algorithms cuBLASLt proposes for a shape that are timed.
constexpr int kMaxAlgoCandidates = 8;

/// What selects a GEMM's algorithm: its shape and options, the device (by its
/// context) and the operands' alignment, which the algorithm may rely on.
struct AlgoKey {
  CUcontext context;
  int32_t dtype, resultDtype;
  int64_t batch, m, n, k;
  /// The leading dimensions of A's and B's data (padded, or as given) and
  /// of the result, which a product of some of C's columns keeps from the
  /// whole.
  int64_t ldA, ldB, ldResult;
  bool transposeA, transposeB;
  uint32_t epilogue;
  uint32_t alignA, alignB, alignC, alignBias;

  bool operator<(const AlgoKey &other) const {
    auto tie = [](const AlgoKey &key) {
      return std::tie(key.context, key.dtype, key.resultDtype, key.batch, key.m,
                      key.n, key.k, key.ldA, key.ldB, key.ldResult,
                      key.transposeA, key.transposeB, key.epilogue, key.alignA,
                      key.alignB, key.alignC, key.alignBias);
    };
    return tie(*this) < tie(other);
  }
};

/// The GEMM state, guarded by gemmMutex. (Not kiln::cuda::mutex, which
/// recordError takes.) It lives as long as the process.
std::mutex gemmMutex;
std::map<CUcontext, cublasLtHandle_t> handles;
std::map<AlgoKey, MatmulAlgo> algos;

/// Results at least this large whose rows are not 16-byte aligned (a
/// vocabulary of 50257 columns) are computed into rows padded to 16 bytes,
/// then copied into place: cuBLASLt's kernels for unaligned rows are several
/// times slower than the copy.
constexpr int64_t kMinPaddedResultElements = int64_t(1) << 16;

/// The cuBLASLt descriptors of one GEMM, destroyed when it returns.
struct Descriptors {
  const CublasLt &lt;
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, result = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;

  explicit Descriptors(const CublasLt &lt) : lt(lt) {}
  Descriptors(const Descriptors &) = delete;
  Descriptors &operator=(const Descriptors &) = delete;
  ~Descriptors() {
    if (preference)
      lt.cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {first, second, result})
      if (layout)
        lt.cublasLtMatrixLayoutDestroy(layout);
    if (matmul)
      lt.cublasLtMatmulDescDestroy(matmul);
  }
};

/// Each thread's descriptors, by shape, options and alignment (AlgoKey).
thread_local std::map<AlgoKey, std::unique_ptr<Descriptors>> threadDescriptors;

} // namespace

extern "C" void kiln_cuda_gemm(int32_t dtype, int32_t resultDtype,
                               int64_t batch, int64_t m, int64_t n, int64_t k,
                               const void *a, int32_t transposeA, const void *b,
                               int32_t transposeB, const void *bias,
                               int32_t activation, void *c, void *stream) {
  static const char *const dtypeNames[] = {"f32", "f16", "bf16", "f32 (tf32)"};
  static const int dataTypes[] = {kCudaR32F, kCudaR16F, kCudaR16BF, kCudaR32F};
  static const int64_t elementBytes[] = {4, 2, 2, 4};
  if (dtype < 0 || dtype > kDtypeTF32) {
    recordError("kiln_cuda_gemm: unsupported dtype " + std::to_string(dtype) +
                " (0 = f32, 1 = f16, 2 = bf16, 3 = f32 multiplied in TF32)");
    return;
  }
  // TF32 products of f32 operands have f32 results.
  if (dtype == kDtypeTF32 && resultDtype == kDtypeTF32)
    resultDtype = 0;
  if (resultDtype != dtype && resultDtype != 0) {
    recordError("kiln_cuda_gemm: unsupported result dtype " +
                std::to_string(resultDtype) + " for " + dtypeNames[dtype] +
                " operands (the operands' dtype or 0 = f32)");
    return;
  }
  if (activation < 0 || activation > 2) {
    recordError("kiln_cuda_gemm: unsupported activation " +
                std::to_string(activation) + " (0 = none, 1 = relu, 2 = gelu)");
    return;
  }

  // "for 3x64x32x16 bf16 (transposeA, bias, gelu)", for error messages.
  auto describe = [&]() {
    std::string options;
    auto add = [&](bool set, const char *name) {
      if (set)
        options += (options.empty() ? " (" : ", ") + std::string(name);
    };
    add(transposeA, "transposeA");
    add(transposeB, "transposeB");
    add(bias, "bias");
    add(activation == 1, "relu");
    add(activation == 2, "gelu");
    if (!options.empty())
      options += ")";
    return " for " + std::to_string(batch) + "x" + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k) + " " +
           dtypeNames[dtype] +
           (resultDtype != dtype ? std::string(" -> ") + dtypeNames[resultDtype]
                                 : std::string()) +
           options;
  };
  auto fail = [&](const std::string &what) {
    recordError("kiln_cuda_gemm: " + what + describe());
  };

  if (batch < 0 || m < 0 || n < 0 || k < 0) {
    fail("negative size");
    return;
  }
  if (batch > std::numeric_limits<int32_t>::max()) {
    fail("batch larger than 2^31 - 1");
    return;
  }
  if (batch == 0 || m == 0 || n == 0)
    return; // C is empty: nothing to compute.
  if (!c || (k > 0 && (!a || !b))) {
    fail("null operand");
    return;
  }

  const Driver *driver = getReadyDriver();
  if (!driver || errorPending())
    return;
  int64_t bytes = elementBytes[dtype];
  int64_t resultBytes = elementBytes[resultDtype];
  if (k == 0) {
    // C = activation(0 + bias); relu and gelu keep zeros.
    if (bias) {
      fail("k = 0 with a bias is not supported");
      return;
    }
    CUresult status =
        driver->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(c), 0,
                                batch * m * n * resultBytes, stream);
    if (status != kCudaSuccess)
      fail("cuMemsetD8Async failed (CUDA error " + std::to_string(status) +
           ")");
    return;
  }

  const CublasLt *lt = getCublasLt();
  if (!lt)
    return;
  auto checkLt = [&](cublasStatus_t status, const char *call) {
    if (status == kCublasSuccess)
      return true;
    const char *name =
        lt->cublasLtGetStatusName ? lt->cublasLtGetStatusName(status) : nullptr;
    fail(std::string(call) + " failed (status " + std::to_string(status) +
         (name ? std::string(", ") + name : std::string()) + ")");
    return false;
  };

  CUcontext context = nullptr;
  if (!check(*driver, driver->cuCtxGetCurrent(&context), "cuCtxGetCurrent"))
    return;

  // The process-wide handle of this context and the stream's workspace.
  cublasLtHandle_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(gemmMutex);
    auto [entry, inserted] = handles.try_emplace(context, nullptr);
    if (inserted &&
        !checkLt(lt->cublasLtCreate(&entry->second), "cublasLtCreate")) {
      handles.erase(entry);
      return;
    }
    handle = entry->second;
  }
  StreamTemporary captureWorkspace(*driver, stream);
  CUdeviceptr workspace =
      getStreamWorkspace(*driver, context, stream, captureWorkspace,
                         "kiln_cuda_gemm" + describe());
  if (!workspace)
    return;

  // cuBLASLt's first operand is B: column-major N x K (ld N), or with
  // transposeB the N x K row-major matrix, column-major K x N (ld K), used
  // transposed. Its second is A: column-major K x M (ld K), or with
  // transposeA column-major M x K (ld M), used transposed. The result is
  // column-major N x M (ld N).
  int dataType = dataTypes[dtype];
  int resultDataType = dataTypes[resultDtype];
  uint32_t epilogue = kEpilogueDefault;
  if (bias)
    epilogue = kEpilogueBias;
  if (activation == 1)
    epilogue = bias ? (kEpilogueRelu | kEpilogueBias) : kEpilogueRelu;
  if (activation == 2)
    epilogue = bias ? (kEpilogueGelu | kEpilogueBias) : kEpilogueGelu;
  int32_t opFirst = transposeB ? kCublasOpT : kCublasOpN;
  int32_t opSecond = transposeA ? kCublasOpT : kCublasOpN;

  // The result's rows, padded to 16 bytes in a temporary when worth it.
  int64_t resultLd = n;
  StreamTemporary padded(*driver, stream);
  if ((n * resultBytes) % 16 != 0 &&
      batch * m * n >= kMinPaddedResultElements) {
    int64_t perVector = 16 / resultBytes;
    resultLd = (n + perVector - 1) / perVector * perVector;
    if (!check(*driver,
               driver->cuMemAllocAsync(
                   &padded.pointer, batch * m * resultLd * resultBytes, stream),
               "cuMemAllocAsync"))
      return;
  }
  void *result = padded.pointer ? reinterpret_cast<void *>(padded.pointer) : c;

  // Operands whose rows are not 16-byte aligned (the gradient of GPT-2's
  // logits, 50257 columns, that both of its products read) are copied into
  // rows padded to 16 bytes first, for the same reason: cuBLASLt's
  // kernels for them took 2.6 and 1.9 ms on an H100, the aligned ones
  // about 0.5, the copy about 0.3. `ld` is the row length of the operand
  // as stored (row-major, `rows` rows per batch).
  StreamTemporary paddedA(*driver, stream), paddedB(*driver, stream);
  auto padOperand = [&](const void *&data, int64_t rows, int64_t &ld,
                        StreamTemporary &temporary) {
    if ((ld * bytes) % 16 == 0 || batch * rows * ld < kMinPaddedResultElements)
      return true;
    int64_t perVector = 16 / bytes;
    int64_t paddedLd = (ld + perVector - 1) / perVector * perVector;
    if (!check(*driver,
               driver->cuMemAllocAsync(&temporary.pointer,
                                       batch * rows * paddedLd * bytes, stream),
               "cuMemAllocAsync"))
      return false;
    Memcpy2D copy;
    copy.srcDevice = reinterpret_cast<CUdeviceptr>(data);
    copy.srcPitch = ld * bytes;
    copy.dstDevice = temporary.pointer;
    copy.dstPitch = paddedLd * bytes;
    copy.WidthInBytes = ld * bytes;
    copy.Height = batch * rows;
    if (!check(*driver, driver->cuMemcpy2DAsync(&copy, stream),
               "cuMemcpy2DAsync"))
      return false;
    data = reinterpret_cast<const void *>(temporary.pointer);
    ld = paddedLd;
    return true;
  };
  int64_t ldA = transposeA ? m : k, ldB = transposeB ? k : n;
  if (!padOperand(a, transposeA ? k : m, ldA, paddedA) ||
      !padOperand(b, transposeB ? n : k, ldB, paddedB))
    return;
  auto setDesc = [&](Descriptors &descriptors, int attribute, const void *value,
                     size_t size) {
    return checkLt(lt->cublasLtMatmulDescSetAttribute(descriptors.matmul,
                                                      attribute, value, size),
                   "cublasLtMatmulDescSetAttribute");
  };
  // Multiplies the block of C of rows [firstRow, firstRow + rows) and
  // columns [firstColumn, firstColumn + columns): A's part, B's and the
  // bias's.
  auto multiplyBlock = [&](int64_t firstRow, int64_t rows, int64_t firstColumn,
                           int64_t columns) -> bool {
    const void *aPart = static_cast<const char *>(a) +
                        (transposeA ? firstRow : firstRow * ldA) * bytes;
    const void *bPart = static_cast<const char *>(b) +
                        (transposeB ? firstColumn * ldB : firstColumn) * bytes;
    void *resultPart = static_cast<char *>(result) +
                       (firstRow * resultLd + firstColumn) * resultBytes;
    const void *biasPart =
        bias ? static_cast<const char *>(bias) + firstColumn * resultBytes
             : nullptr;
    int64_t strideBytes = batch > 1 ? bytes : 0;
    int64_t resultStrideBytes = batch > 1 ? resultBytes : 0;
    AlgoKey key{context,
                dtype,
                resultDtype,
                batch,
                rows,
                columns,
                k,
                ldA,
                ldB,
                resultLd,
                transposeA != 0,
                transposeB != 0,
                epilogue,
                getAlignment(aPart, strideBytes * (transposeA ? k : m) * ldA),
                getAlignment(bPart, strideBytes * (transposeB ? n : k) * ldB),
                getAlignment(resultPart, resultStrideBytes * m * resultLd),
                biasPart ? getAlignment(biasPart, 0) : 0};
    // A thread's descriptors for a shape are made at its first product and
    // kept: making them costs more host time than the product's launch. The
    // bias pointer, which changes from call to call, is set on each.
    std::unique_ptr<Descriptors> &cached = threadDescriptors[key];
    if (!cached) {
      auto made = std::make_unique<Descriptors>(*lt);
      Descriptors &descriptors = *made;
      int computeType =
          dtype == kDtypeTF32 ? kCublasCompute32FFastTF32 : kCublasCompute32F;
      if (!checkLt(lt->cublasLtMatmulDescCreate(&descriptors.matmul,
                                                computeType, kCudaR32F),
                   "cublasLtMatmulDescCreate"))
        return false;
      // The bias has the result's type, cuBLASLt's default for it.
      if (!setDesc(descriptors, kDescTransA, &opFirst, sizeof(opFirst)) ||
          !setDesc(descriptors, kDescTransB, &opSecond, sizeof(opSecond)) ||
          !setDesc(descriptors, kDescEpilogue, &epilogue, sizeof(epilogue)))
        return false;

      auto makeLayout = [&](cublasLtMatrixLayout_t &layout, int type,
                            int64_t rows, int64_t cols, int64_t ld,
                            int64_t stride) {
        if (!checkLt(
                lt->cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld),
                "cublasLtMatrixLayoutCreate"))
          return false;
        if (batch == 1)
          return true;
        int32_t count = static_cast<int32_t>(batch);
        return checkLt(lt->cublasLtMatrixLayoutSetAttribute(
                           layout, kLayoutBatchCount, &count, sizeof(count)),
                       "cublasLtMatrixLayoutSetAttribute") &&
               checkLt(lt->cublasLtMatrixLayoutSetAttribute(
                           layout, kLayoutStridedBatchOffset, &stride,
                           sizeof(stride)),
                       "cublasLtMatrixLayoutSetAttribute");
      };

      // Column-major views of the row-major operands: ld is a row's length.
      if (transposeB ? !makeLayout(descriptors.first, dataType, k, columns, ldB,
                                   ldB * n)
                     : !makeLayout(descriptors.first, dataType, columns, k, ldB,
                                   ldB * k))
        return false;
      if (!makeLayout(descriptors.second, dataType, transposeA ? rows : k,
                      transposeA ? k : rows, ldA, ldA * (transposeA ? k : m)) ||
          !makeLayout(descriptors.result, resultDataType, columns, rows,
                      resultLd, resultLd * m))
        return false;
      cached = std::move(made);
    }
    Descriptors &descriptors = *cached;
    if (biasPart &&
        !setDesc(descriptors, kDescBiasPointer, &biasPart, sizeof(biasPart)))
      return false;
    // The product with algorithm `candidate`, queued on the stream.
    auto multiply = [&](const MatmulAlgo &candidate) {
      float alpha = 1.0f, beta = 0.0f;
      return lt->cublasLtMatmul(
          handle, descriptors.matmul, &alpha, bPart, descriptors.first, aPart,
          descriptors.second, &beta, resultPart, descriptors.result, resultPart,
          descriptors.result, &candidate, reinterpret_cast<void *>(workspace),
          kWorkspaceBytes, stream);
    };
    MatmulAlgo algo;
    {
      std::lock_guard<std::mutex> lock(gemmMutex);
      auto found = algos.find(key);
      if (found != algos.end()) {
        algo = found->second;
      } else {
        if (!descriptors.preference &&
            !checkLt(
                lt->cublasLtMatmulPreferenceCreate(&descriptors.preference),
                "cublasLtMatmulPreferenceCreate"))
          return false;
        auto setPref = [&](int attribute, const void *value, size_t size) {
          return checkLt(lt->cublasLtMatmulPreferenceSetAttribute(
                             descriptors.preference, attribute, value, size),
                         "cublasLtMatmulPreferenceSetAttribute");
        };
        // cuBLASLt's first operand is B's data, its second A's.
        uint64_t maxWorkspace = kWorkspaceBytes;
        if (!setPref(kPrefMaxWorkspaceBytes, &maxWorkspace,
                     sizeof(maxWorkspace)) ||
            !setPref(kPrefMinAlignmentABytes, &key.alignB,
                     sizeof(key.alignB)) ||
            !setPref(kPrefMinAlignmentBBytes, &key.alignA,
                     sizeof(key.alignA)) ||
            !setPref(kPrefMinAlignmentCBytes, &key.alignC,
                     sizeof(key.alignC)) ||
            !setPref(kPrefMinAlignmentDBytes, &key.alignC, sizeof(key.alignC)))
          return false;
        HeuristicResult candidates[kMaxAlgoCandidates] = {};
        int count = 0;
        if (!checkLt(lt->cublasLtMatmulAlgoGetHeuristic(
                         handle, descriptors.matmul, descriptors.first,
                         descriptors.second, descriptors.result,
                         descriptors.result, descriptors.preference,
                         kMaxAlgoCandidates, candidates, &count),
                     "cublasLtMatmulAlgoGetHeuristic"))
          return false;
        if (count == 0) {
          fail("cublasLtMatmulAlgoGetHeuristic found no algorithm");
          return false;
        }
        algo = candidates[0].algo;
        // KILN_GEMM_TRACE=1 prints each shape's candidates, in milliseconds.
        static const bool tracing = isTracing("KILN_GEMM_TRACE");
        std::string trace =
            "kiln_cuda_gemm: batch " + std::to_string(batch) + ", m " +
            std::to_string(rows) + ", n " + std::to_string(columns) + ", k " +
            std::to_string(k) + ": " + std::to_string(count) + " algorithm(s)";
        // cuBLASLt's first choice for GPT-2's logits was 10% slower than its
        // second, its last twice as slow.
        if (count > 1) {
          auto run = [&](int candidate) {
            return multiply(candidates[candidate].algo) == kCublasSuccess;
          };
          trace += ", ms:";
          if (std::optional<int> fastest =
                  timeCandidates(*driver, stream, count, run, trace))
            algo = candidates[*fastest].algo;
        }
        if (tracing)
          std::fprintf(stderr, "%s\n", trace.c_str());
        algos.emplace(key, algo);
      }
    }

    return checkLt(multiply(algo), "cublasLtMatmul");
  };

  // cuBLASLt's kernels for a contiguous extent that is not a multiple of 16
  // bytes' worth are several times slower than for the multiple below it,
  // even in rows padded to 16 bytes: 3.3 ms against 0.44 ms for GPT-2's
  // 4096 x 50257 x 768 logits in bf16, 3.2 ms for the product of their
  // gradient, transposed, with the hidden states. A large product computes
  // the aligned columns (of C, or of a transposed A: rows of C), then the
  // few left.
  int64_t perVector = 16 / bytes;
  // (first, count) of a range of rows or columns; from splitAligned, the
  // sizes of the aligned part and of the rest.
  using Range = std::pair<int64_t, int64_t>;
  auto splitAligned = [&](int64_t extent, bool worthIt) {
    int64_t aligned = extent - extent % perVector;
    if (batch != 1 || !worthIt || aligned == 0)
      return Range{extent, 0};
    return Range{aligned, extent - aligned};
  };
  auto [mainRows, restRows] =
      splitAligned(m, transposeA && paddedA.pointer != 0);
  auto [mainColumns, restColumns] = splitAligned(n, padded.pointer != 0);
  for (auto [firstRow, rows] : {Range{0, mainRows}, Range{mainRows, restRows}})
    for (auto [firstColumn, columns] :
         {Range{0, mainColumns}, Range{mainColumns, restColumns}})
      if (rows > 0 && columns > 0 &&
          !multiplyBlock(firstRow, rows, firstColumn, columns))
        return;
  if (!padded.pointer)
    return;
  Memcpy2D copy;
  copy.srcDevice = padded.pointer;
  copy.srcPitch = resultLd * resultBytes;
  copy.dstDevice = reinterpret_cast<CUdeviceptr>(c);
  copy.dstPitch = n * resultBytes;
  copy.WidthInBytes = n * resultBytes;
  copy.Height = batch * m;
  check(*driver, driver->cuMemcpy2DAsync(&copy, stream), "cuMemcpy2DAsync");
}
