//===- Convolution.cpp - kiln_cuda_convolution on cuDNN -------------------===//
//
// Part of Kiln. Implements kiln_cuda_convolution with cuDNN's convolution
// API, loaded when first needed (a process with PyTorch already has it), so
// that the runtime loads on machines without cuDNN. Each shape's
// descriptors are made at its first call and kept, and its algorithm is the
// fastest of cuDNN's proposals, timed once: a call afterwards costs the
// host a stream change and the launch.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/CUDARuntime.h"

#include "LibrarySupport.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace kiln::cuda;

namespace {

// The few cuDNN types and values Kiln needs, as cuDNN's ABI (the same in
// versions 8 and 9) defines them. Enum parameters are passed as ints.
using cudnnStatus_t = int;
using cudnnHandle_t = void *;
using cudnnTensorDescriptor_t = void *;
using cudnnFilterDescriptor_t = void *;
using cudnnConvolutionDescriptor_t = void *;
constexpr cudnnStatus_t kCudnnSuccess = 0;
// cudnnDataType_t.
constexpr int kCudnnFloat = 0;
constexpr int kCudnnHalf = 2;
constexpr int kCudnnBFloat16 = 9;
// cudnnTensorFormat_t.
constexpr int kCudnnNHWC = 1;
// cudnnConvolutionMode_t: PyTorch's convolution does not flip its filters.
constexpr int kCudnnCrossCorrelation = 1;
// cudnnMathType_t.
constexpr int kCudnnTensorOpMath = 1;
constexpr int kCudnnTensorOpMathAllowConversion = 2;
constexpr int kCudnnFmaMath = 3;
/// CUDNN_CONVOLUTION_FWD_ALGO_COUNT.
constexpr int kForwardAlgoCount = 8;

/// cudnnConvolutionFwdAlgoPerf_t.
struct ForwardAlgoPerf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

/// The cuDNN entry points Kiln calls.
struct Cudnn {
  cudnnStatus_t (*cudnnCreate)(cudnnHandle_t *);
  cudnnStatus_t (*cudnnSetStream)(cudnnHandle_t, CUstream);
  const char *(*cudnnGetErrorString)(cudnnStatus_t);
  cudnnStatus_t (*cudnnCreateTensorDescriptor)(cudnnTensorDescriptor_t *);
  cudnnStatus_t (*cudnnSetTensor4dDescriptor)(cudnnTensorDescriptor_t, int, int,
                                              int, int, int, int);
  cudnnStatus_t (*cudnnDestroyTensorDescriptor)(cudnnTensorDescriptor_t);
  cudnnStatus_t (*cudnnCreateFilterDescriptor)(cudnnFilterDescriptor_t *);
  cudnnStatus_t (*cudnnSetFilter4dDescriptor)(cudnnFilterDescriptor_t, int, int,
                                              int, int, int, int);
  cudnnStatus_t (*cudnnDestroyFilterDescriptor)(cudnnFilterDescriptor_t);
  cudnnStatus_t (*cudnnCreateConvolutionDescriptor)(
      cudnnConvolutionDescriptor_t *);
  cudnnStatus_t (*cudnnSetConvolution2dDescriptor)(cudnnConvolutionDescriptor_t,
                                                   int, int, int, int, int, int,
                                                   int, int);
  cudnnStatus_t (*cudnnSetConvolutionGroupCount)(cudnnConvolutionDescriptor_t,
                                                 int);
  cudnnStatus_t (*cudnnSetConvolutionMathType)(cudnnConvolutionDescriptor_t,
                                               int);
  cudnnStatus_t (*cudnnDestroyConvolutionDescriptor)(
      cudnnConvolutionDescriptor_t);
  cudnnStatus_t (*cudnnGetConvolution2dForwardOutputDim)(
      cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t,
      cudnnFilterDescriptor_t, int *, int *, int *, int *);
  cudnnStatus_t (*cudnnGetConvolutionForwardAlgorithm_v7)(
      cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
      cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int *,
      ForwardAlgoPerf *);
  cudnnStatus_t (*cudnnConvolutionForward)(
      cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *,
      cudnnFilterDescriptor_t, const void *, cudnnConvolutionDescriptor_t, int,
      void *, size_t, const void *, cudnnTensorDescriptor_t, void *);
};

/// cuDNN, loaded on first use; null (with an error recorded, on every
/// call) if it cannot be loaded.
const Cudnn *getCudnn() {
  static std::string loadError;
  static const Cudnn *cudnn = []() -> const Cudnn * {
    const char *names[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"};
    // The process's own cuDNN (PyTorch's) comes first: one copy is enough,
    // and it is the one that matches the driver.
    void *library = nullptr;
    for (const char *name : names)
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)))
        break;
    std::string reason;
    for (const char *name : names) {
      if (library || (library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
      const char *text = dlerror();
      reason = text ? text : "unknown error";
    }
    if (!library) {
      loadError = "kiln_cuda_convolution: cannot load cuDNN (tried "
                  "libcudnn.so.9, libcudnn.so.8, libcudnn.so): " +
                  reason;
      return nullptr;
    }
    static Cudnn loaded;
#define KILN_LOAD(name) loadSymbol(library, #name, loaded.name)
    bool ok = KILN_LOAD(cudnnCreate) && KILN_LOAD(cudnnSetStream) &&
              KILN_LOAD(cudnnGetErrorString) &&
              KILN_LOAD(cudnnCreateTensorDescriptor) &&
              KILN_LOAD(cudnnSetTensor4dDescriptor) &&
              KILN_LOAD(cudnnDestroyTensorDescriptor) &&
              KILN_LOAD(cudnnCreateFilterDescriptor) &&
              KILN_LOAD(cudnnSetFilter4dDescriptor) &&
              KILN_LOAD(cudnnDestroyFilterDescriptor) &&
              KILN_LOAD(cudnnCreateConvolutionDescriptor) &&
              KILN_LOAD(cudnnSetConvolution2dDescriptor) &&
              KILN_LOAD(cudnnSetConvolutionGroupCount) &&
              KILN_LOAD(cudnnSetConvolutionMathType) &&
              KILN_LOAD(cudnnDestroyConvolutionDescriptor) &&
              KILN_LOAD(cudnnGetConvolution2dForwardOutputDim) &&
              KILN_LOAD(cudnnGetConvolutionForwardAlgorithm_v7) &&
              KILN_LOAD(cudnnConvolutionForward);
#undef KILN_LOAD
    if (!ok) {
      loadError = "kiln_cuda_convolution: cuDNN lacks an entry point Kiln "
                  "needs (its convolution API)";
      return nullptr;
    }
    return &loaded;
  }();
  if (!cudnn)
    recordError(loadError);
  return cudnn;
}

/// What selects a convolution's descriptors and algorithm: its geometry,
/// dtype, device (by its context) and operands' alignment.
struct ConvolutionKey {
  CUcontext context;
  int32_t dtype;
  int batch, height, width, channels, filters, kernelH, kernelW;
  int strideH, strideW, padH, padW, dilationH, dilationW, groups;
  uint32_t alignInput, alignWeight, alignResult;

  auto tie() const {
    return std::tie(context, dtype, batch, height, width, channels, filters,
                    kernelH, kernelW, strideH, strideW, padH, padW, dilationH,
                    dilationW, groups, alignInput, alignWeight, alignResult);
  }
  bool operator<(const ConvolutionKey &other) const {
    return tie() < other.tie();
  }
};

/// One shape's cuDNN descriptors, destroyed with it.
struct Descriptors {
  const Cudnn &dnn;
  cudnnTensorDescriptor_t input = nullptr, result = nullptr;
  cudnnFilterDescriptor_t weight = nullptr;
  cudnnConvolutionDescriptor_t convolution = nullptr;

  explicit Descriptors(const Cudnn &dnn) : dnn(dnn) {}
  Descriptors(const Descriptors &) = delete;
  Descriptors &operator=(const Descriptors &) = delete;
  ~Descriptors() {
    if (convolution)
      dnn.cudnnDestroyConvolutionDescriptor(convolution);
    if (weight)
      dnn.cudnnDestroyFilterDescriptor(weight);
    for (cudnnTensorDescriptor_t tensor : {input, result})
      if (tensor)
        dnn.cudnnDestroyTensorDescriptor(tensor);
  }
};

/// The algorithm a shape runs, with the math type it needs.
struct Choice {
  int algo;
  int mathType;
};

/// The chosen algorithms, guarded by convolutionMutex. (Not
/// kiln::cuda::mutex, which recordError takes.)
std::mutex convolutionMutex;
std::map<ConvolutionKey, Choice> choices;

/// Each thread's handles, by context (a cuDNN handle serves one thread at a
/// time), and its descriptors, by shape.
thread_local std::map<CUcontext, cudnnHandle_t> threadHandles;
thread_local std::map<ConvolutionKey, std::unique_ptr<Descriptors>>
    threadDescriptors;

/// The alignment in bytes (at most 256) of `pointer`.
uint32_t alignment(const void *pointer) {
  uint64_t bits = reinterpret_cast<uintptr_t>(pointer) | 256;
  return static_cast<uint32_t>(bits & -bits);
}

} // namespace

extern "C" void
kiln_cuda_convolution(int32_t dtype, int64_t batch, int64_t height,
                      int64_t width, int64_t channels, int64_t filters,
                      int64_t kernelH, int64_t kernelW, int64_t outHeight,
                      int64_t outWidth, int64_t strideH, int64_t strideW,
                      int64_t padH, int64_t padW, int64_t dilationH,
                      int64_t dilationW, int64_t groups, const void *input,
                      const void *weight, void *result, void *stream) {
  static const char *const dtypeNames[] = {"f32", "f16", "bf16"};
  static const int dataTypes[] = {kCudnnFloat, kCudnnHalf, kCudnnBFloat16};
  static const int64_t elementBytes[] = {4, 2, 2};
  auto describe = [&]() {
    auto x = [](int64_t a, int64_t b) {
      return std::to_string(a) + "x" + std::to_string(b);
    };
    std::string text =
        " for " + std::to_string(batch) + "x" + x(height, width) + "x" +
        std::to_string(channels) + " * " + std::to_string(filters) + "x" +
        x(kernelH, kernelW) + " -> " + x(outHeight, outWidth) + " (stride " +
        x(strideH, strideW) + ", padding " + x(padH, padW) + ", dilation " +
        x(dilationH, dilationW) + ", " + std::to_string(groups) + " groups";
    if (dtype >= 0 && dtype <= 2)
      text += std::string(", ") + dtypeNames[dtype];
    return text + ")";
  };
  auto fail = [&](const std::string &what) {
    recordError("kiln_cuda_convolution: " + what + describe());
  };
  if (dtype < 0 || dtype > 2) {
    fail("unsupported dtype " + std::to_string(dtype) +
         " (0 = f32, 1 = f16, 2 = bf16)");
    return;
  }
  for (int64_t size : {batch, height, width, channels, filters, kernelH,
                       kernelW, outHeight, outWidth, padH, padW})
    if (size < 0) {
      fail("negative size");
      return;
    }
  for (int64_t step : {strideH, strideW, dilationH, dilationW, groups})
    if (step < 1) {
      fail("strides, dilations and groups must be positive");
      return;
    }
  if (channels % groups || filters % groups) {
    fail("channels and filters must split into the groups");
    return;
  }
  auto outputs = [](int64_t size, int64_t kernel, int64_t stride, int64_t pad,
                    int64_t dilation) -> int64_t {
    int64_t span = dilation * (kernel - 1) + 1, reach = size + 2 * pad;
    return reach < span ? 0 : (reach - span) / stride + 1;
  };
  if (outputs(height, kernelH, strideH, padH, dilationH) != outHeight ||
      outputs(width, kernelW, strideW, padW, dilationW) != outWidth) {
    fail("the result's spatial sizes are not what the geometry gives");
    return;
  }
  int64_t resultElements = batch * outHeight * outWidth * filters;
  if (resultElements == 0)
    return; // Nothing to compute.
  // Without channels the operands are empty (PyTorch gives them no data).
  if (!result || (channels > 0 && (!input || !weight))) {
    fail("null operand");
    return;
  }
  // cuDNN's convolution API counts sizes and elements in 32 bits.
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  for (int64_t elements :
       {batch * height * width * channels,
        filters * kernelH * kernelW * (channels / groups), resultElements})
    if (elements > kLimit) {
      fail("more than 2^31 - 1 elements in an operand, more than cuDNN's "
           "convolution takes");
      return;
    }

  const Driver *driver = getReadyDriver();
  if (!driver || errorPending())
    return;
  if (channels == 0) {
    // Every sum is empty.
    check(*driver,
          driver->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(result), 0,
                                  resultElements * elementBytes[dtype], stream),
          "cuMemsetD8Async");
    return;
  }
  const Cudnn *dnn = getCudnn();
  if (!dnn)
    return;
  auto checkDnn = [&](cudnnStatus_t status, const char *call) {
    if (status == kCudnnSuccess)
      return true;
    fail(std::string(call) + " failed (status " + std::to_string(status) +
         ", " + dnn->cudnnGetErrorString(status) + ")");
    return false;
  };

  CUcontext context = nullptr;
  if (!check(*driver, driver->cuCtxGetCurrent(&context), "cuCtxGetCurrent"))
    return;
  cudnnHandle_t &handle = threadHandles[context];
  if (!handle && !checkDnn(dnn->cudnnCreate(&handle), "cudnnCreate")) {
    threadHandles.erase(context);
    return;
  }
  if (!checkDnn(dnn->cudnnSetStream(handle, stream), "cudnnSetStream"))
    return;
  StreamTemporary captureWorkspace(*driver, stream);
  CUdeviceptr workspace = getStreamWorkspace(
      *driver, context, stream, captureWorkspace, "kiln_cuda_convolution");
  if (!workspace)
    return;

  auto i32 = [](int64_t value) { return static_cast<int>(value); };
  ConvolutionKey key{context,          dtype,
                     i32(batch),       i32(height),
                     i32(width),       i32(channels),
                     i32(filters),     i32(kernelH),
                     i32(kernelW),     i32(strideH),
                     i32(strideW),     i32(padH),
                     i32(padW),        i32(dilationH),
                     i32(dilationW),   i32(groups),
                     alignment(input), alignment(weight),
                     alignment(result)};
  std::unique_ptr<Descriptors> &cached = threadDescriptors[key];
  if (!cached) {
    auto made = std::make_unique<Descriptors>(*dnn);
    int dataType = dataTypes[dtype];
    int n = 0, c = 0, h = 0, w = 0;
    // Descriptors take sizes in NCHW order; the format says the memory's.
    if (!checkDnn(dnn->cudnnCreateTensorDescriptor(&made->input),
                  "cudnnCreateTensorDescriptor") ||
        !checkDnn(dnn->cudnnSetTensor4dDescriptor(
                      made->input, kCudnnNHWC, dataType, key.batch,
                      key.channels, key.height, key.width),
                  "cudnnSetTensor4dDescriptor") ||
        !checkDnn(dnn->cudnnCreateFilterDescriptor(&made->weight),
                  "cudnnCreateFilterDescriptor") ||
        !checkDnn(dnn->cudnnSetFilter4dDescriptor(
                      made->weight, dataType, kCudnnNHWC, key.filters,
                      key.channels / key.groups, key.kernelH, key.kernelW),
                  "cudnnSetFilter4dDescriptor") ||
        !checkDnn(dnn->cudnnCreateConvolutionDescriptor(&made->convolution),
                  "cudnnCreateConvolutionDescriptor") ||
        !checkDnn(dnn->cudnnSetConvolution2dDescriptor(
                      made->convolution, key.padH, key.padW, key.strideH,
                      key.strideW, key.dilationH, key.dilationW,
                      kCudnnCrossCorrelation, kCudnnFloat),
                  "cudnnSetConvolution2dDescriptor") ||
        !checkDnn(
            dnn->cudnnSetConvolutionGroupCount(made->convolution, key.groups),
            "cudnnSetConvolutionGroupCount") ||
        // f32 sums exactly (no TF32); 16-bit operands use tensor cores.
        !checkDnn(dnn->cudnnSetConvolutionMathType(
                      made->convolution,
                      dtype == 0 ? kCudnnFmaMath : kCudnnTensorOpMath),
                  "cudnnSetConvolutionMathType") ||
        !checkDnn(
            dnn->cudnnGetConvolution2dForwardOutputDim(
                made->convolution, made->input, made->weight, &n, &c, &h, &w),
            "cudnnGetConvolution2dForwardOutputDim"))
      return;
    if (n != key.batch || c != key.filters || h != outHeight || w != outWidth) {
      fail("cuDNN computes a " + std::to_string(n) + "x" + std::to_string(c) +
           "x" + std::to_string(h) + "x" + std::to_string(w) + " result");
      return;
    }
    if (!checkDnn(dnn->cudnnCreateTensorDescriptor(&made->result),
                  "cudnnCreateTensorDescriptor") ||
        !checkDnn(dnn->cudnnSetTensor4dDescriptor(made->result, kCudnnNHWC,
                                                  dataType, n, c, h, w),
                  "cudnnSetTensor4dDescriptor"))
      return;
    cached = std::move(made);
  }
  Descriptors &descriptors = *cached;
  float alpha = 1.0f, beta = 0.0f;
  auto forward = [&](const Choice &choice) -> cudnnStatus_t {
    if (cudnnStatus_t status = dnn->cudnnSetConvolutionMathType(
            descriptors.convolution, choice.mathType))
      return status;
    return dnn->cudnnConvolutionForward(
        handle, &alpha, descriptors.input, input, descriptors.weight, weight,
        descriptors.convolution, choice.algo,
        reinterpret_cast<void *>(workspace), kWorkspaceBytes, &beta,
        descriptors.result, result);
  };

  Choice choice;
  {
    std::lock_guard<std::mutex> lock(convolutionMutex);
    auto found = choices.find(key);
    if (found != choices.end()) {
      choice = found->second;
    } else {
      ForwardAlgoPerf proposals[kForwardAlgoCount] = {};
      int count = 0;
      if (!checkDnn(dnn->cudnnGetConvolutionForwardAlgorithm_v7(
                        handle, descriptors.input, descriptors.weight,
                        descriptors.convolution, descriptors.result,
                        kForwardAlgoCount, &count, proposals),
                    "cudnnGetConvolutionForwardAlgorithm_v7"))
        return;
      // Those that run here within the workspace, in cuDNN's order; f32
      // keeps to exact products.
      std::vector<Choice> candidates;
      for (int i = 0; i < count; ++i) {
        const ForwardAlgoPerf &proposal = proposals[i];
        bool roundsToTF32 =
            dtype == 0 &&
            (proposal.mathType == kCudnnTensorOpMath ||
             proposal.mathType == kCudnnTensorOpMathAllowConversion);
        if (proposal.status == kCudnnSuccess &&
            proposal.memory <= kWorkspaceBytes && !roundsToTF32)
          candidates.push_back({proposal.algo, proposal.mathType});
      }
      if (candidates.empty()) {
        fail("cuDNN proposes no algorithm that runs within a " +
             std::to_string(kWorkspaceBytes >> 20) + " MiB workspace");
        return;
      }
      choice = candidates.front();
      // KILN_CONVOLUTION_TRACE=1 prints each shape's candidates, in ms.
      static const bool tracing = isTracing("KILN_CONVOLUTION_TRACE");
      std::string trace = "kiln_cuda_convolution" + describe() + ": " +
                          std::to_string(candidates.size()) + " algorithm(s)";
      if (candidates.size() > 1) {
        trace += ", ms:";
        auto run = [&](int index) {
          return forward(candidates[index]) == kCudnnSuccess;
        };
        if (std::optional<int> fastest =
                timeCandidates(*driver, stream,
                               static_cast<int>(candidates.size()), run, trace))
          choice = candidates[*fastest];
      }
      if (tracing)
        std::fprintf(stderr, "%s\n", trace.c_str());
      choices.emplace(key, choice);
    }
  }
  checkDnn(forward(choice), "cudnnConvolutionForward");
}
