//===- Convolution.cpp - kiln_cuda_convolution on cuDNN -------------------===//
//
// Part of Kiln. Implements kiln_cuda_convolution with cuDNN's graph API,
// loaded when first needed (a process with PyTorch already has it), so that
// the runtime loads on machines without cuDNN. A shape's first call builds
// its operation graph, asks cuDNN's heuristic for engine configurations and
// keeps the fastest execution plan among them, timed once; every later call
// costs the host a variant pack (three pointers and the workspace) and the
// launch. (cuDNN 9's older convolution API cost 51 us of host time per
// call, and its heuristic offered only slow kernels for 1x1 filters.)
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/CUDARuntime.h"

#include "LibrarySupport.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace kiln::cuda;

namespace {

// The few cuDNN types and values Kiln needs, as the ABI of cuDNN's graph API
// (versions 8 and 9) defines them. Enum parameters are passed as ints.
using cudnnStatus_t = int;
using cudnnHandle_t = void *;
using Descriptor = void *;
constexpr cudnnStatus_t kCudnnSuccess = 0;
// cudnnDataType_t.
constexpr int32_t kCudnnFloat = 0;
constexpr int32_t kCudnnHalf = 2;
constexpr int32_t kCudnnBFloat16 = 9;
// cudnnConvolutionMode_t: PyTorch's convolution does not flip its filters.
constexpr int32_t kCudnnCrossCorrelation = 1;
// cudnnBackendHeurMode_t: the ranked engines, then, where none of those
// builds, the fallback list (engines that support more, ranked by nothing).
constexpr int32_t kHeurModeFallback = 2;
constexpr int32_t kHeurModeA = 3;
// cudnnBackendNumericalNote_t: what an f32 convolution must not do (TF32).
constexpr int32_t kNoteTensorCore = 0;
constexpr int32_t kNoteDownConvertInputs = 1;
// cudnnBackendDescriptorType_t.
enum DescriptorType : int {
  kConvolutionDescriptor = 1,
  kEngineDescriptor = 2,
  kEngineConfigDescriptor = 3,
  kEngineHeuristicsDescriptor = 4,
  kExecutionPlanDescriptor = 5,
  kConvolutionForwardDescriptor = 10,
  kOperationGraphDescriptor = 15,
  kVariantPackDescriptor = 16,
  kTensorDescriptor = 17,
};
// cudnnBackendAttributeName_t.
enum Attribute : int {
  kConvolutionComputeType = 100,
  kConvolutionMode = 101,
  kConvolutionDilations = 102,
  kConvolutionStrides = 103,
  kConvolutionPostPaddings = 104,
  kConvolutionPrePaddings = 105,
  kConvolutionSpatialDims = 106,
  kHeuristicsMode = 200,
  kHeuristicsGraph = 201,
  kHeuristicsResults = 202,
  kEngineConfigEngine = 300,
  kPlanHandle = 400,
  kPlanEngineConfig = 401,
  kPlanWorkspaceSize = 402,
  kForwardAlpha = 700,
  kForwardBeta = 701,
  kForwardConvolution = 702,
  kForwardW = 703,
  kForwardX = 704,
  kForwardY = 705,
  kGraphHandle = 800,
  kGraphOperations = 801,
  kTensorAlignment = 900,
  kTensorDataType = 901,
  kTensorDimensions = 902,
  kTensorStrides = 903,
  kTensorUniqueId = 906,
  kVariantPackIds = 1000,
  kVariantPackPointers = 1001,
  kVariantPackWorkspace = 1003,
  kEngineNumericalNotes = 1303,
};
// cudnnBackendAttributeType_t.
enum AttributeType : int {
  kTypeHandle = 0,
  kTypeDataType = 1,
  kTypeInt64 = 3,
  kTypeFloat = 4,
  kTypeVoidPointer = 6,
  kTypeConvolutionMode = 7,
  kTypeHeuristicsMode = 8,
  kTypeNumericalNote = 11,
  kTypeDescriptor = 15,
};
/// The unique ids of a convolution's tensors in its graph.
constexpr int64_t kInputId = 'x', kWeightId = 'w', kResultId = 'y';
/// The most engine configurations of a shape that the heuristic ranks, and
/// the most of those (that build) that are timed: f32 skips the many that
/// round to TF32.
constexpr int kMaxConfigs = 32;
constexpr std::size_t kMaxCandidates = 8;

/// The cuDNN entry points Kiln calls.
struct Cudnn {
  cudnnStatus_t (*cudnnCreate)(cudnnHandle_t *);
  cudnnStatus_t (*cudnnSetStream)(cudnnHandle_t, CUstream);
  const char *(*cudnnGetErrorString)(cudnnStatus_t);
  cudnnStatus_t (*cudnnBackendCreateDescriptor)(int, Descriptor *);
  cudnnStatus_t (*cudnnBackendDestroyDescriptor)(Descriptor);
  cudnnStatus_t (*cudnnBackendFinalize)(Descriptor);
  cudnnStatus_t (*cudnnBackendSetAttribute)(Descriptor, int, int, int64_t,
                                            const void *);
  cudnnStatus_t (*cudnnBackendGetAttribute)(Descriptor, int, int, int64_t,
                                            int64_t *, void *);
  cudnnStatus_t (*cudnnBackendExecute)(cudnnHandle_t, Descriptor, Descriptor);
};

/// cuDNN, loaded on first use; null (with an error recorded, on every
/// call) if it cannot be loaded.
const Cudnn *getCudnn() {
  static std::string loadError;
  static const Cudnn *cudnn = []() -> const Cudnn * {
    void *library =
        openLibrary({"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"},
                    "kiln_cuda_convolution", "cuDNN", loadError);
    if (!library)
      return nullptr;
    static Cudnn loaded;
#define KILN_LOAD(name) loadSymbol(library, #name, loaded.name)
    bool ok = KILN_LOAD(cudnnCreate) && KILN_LOAD(cudnnSetStream) &&
              KILN_LOAD(cudnnGetErrorString) &&
              KILN_LOAD(cudnnBackendCreateDescriptor) &&
              KILN_LOAD(cudnnBackendDestroyDescriptor) &&
              KILN_LOAD(cudnnBackendFinalize) &&
              KILN_LOAD(cudnnBackendSetAttribute) &&
              KILN_LOAD(cudnnBackendGetAttribute) &&
              KILN_LOAD(cudnnBackendExecute);
#undef KILN_LOAD
    if (!ok) {
      loadError = "kiln_cuda_convolution: cuDNN lacks an entry point Kiln "
                  "needs (its graph API)";
      return nullptr;
    }
    return &loaded;
  }();
  if (!cudnn)
    recordError(loadError);
  return cudnn;
}

/// A cuDNN descriptor, destroyed with its owner.
class OwnedDescriptor {
public:
  OwnedDescriptor() = default;
  OwnedDescriptor(const Cudnn *dnn, Descriptor descriptor)
      : dnn(dnn), descriptor(descriptor) {}
  OwnedDescriptor(OwnedDescriptor &&other)
      : dnn(other.dnn), descriptor(other.descriptor) {
    other.descriptor = nullptr;
  }
  OwnedDescriptor &operator=(OwnedDescriptor &&other) {
    std::swap(dnn, other.dnn);
    std::swap(descriptor, other.descriptor);
    return *this;
  }
  OwnedDescriptor(const OwnedDescriptor &) = delete;
  OwnedDescriptor &operator=(const OwnedDescriptor &) = delete;
  ~OwnedDescriptor() {
    if (descriptor)
      dnn->cudnnBackendDestroyDescriptor(descriptor);
  }
  Descriptor get() const { return descriptor; }

private:
  const Cudnn *dnn = nullptr;
  Descriptor descriptor = nullptr;
};

/// What selects a convolution's plan: its geometry, dtype, device (by its
/// context) and operands' alignment.
struct ConvolutionKey {
  CUcontext context;
  int32_t dtype;
  int64_t batch, height, width, channels, filters, kernelH, kernelW;
  int64_t outHeight, outWidth, strideH, strideW, padH, padW, dilationH,
      dilationW, groups;
  int64_t alignInput, alignWeight, alignResult;

  auto tie() const {
    return std::tie(context, dtype, batch, height, width, channels, filters,
                    kernelH, kernelW, outHeight, outWidth, strideH, strideW,
                    padH, padW, dilationH, dilationW, groups, alignInput,
                    alignWeight, alignResult);
  }
  bool operator<(const ConvolutionKey &other) const {
    return tie() < other.tie();
  }
};

/// A shape's execution plan, and the graph it was made from (kept as long
/// as the plan, which may refer to it).
struct Plan {
  OwnedDescriptor plan;
  std::shared_ptr<std::vector<OwnedDescriptor>> graph;
};

/// Each thread's handles, by context (a cuDNN handle serves one thread at a
/// time, and plans are made for one handle), and its plans, by shape.
thread_local std::map<CUcontext, cudnnHandle_t> threadHandles;
thread_local std::map<ConvolutionKey, Plan> threadPlans;

/// Queues `plan` on the handle's stream, on these buffers.
cudnnStatus_t execute(const Cudnn &dnn, cudnnHandle_t handle, const Plan &plan,
                      const void *input, const void *weight, void *result,
                      CUdeviceptr workspace) {
  Descriptor pack = nullptr;
  if (cudnnStatus_t status =
          dnn.cudnnBackendCreateDescriptor(kVariantPackDescriptor, &pack))
    return status;
  OwnedDescriptor owned(&dnn, pack);
  int64_t ids[] = {kInputId, kWeightId, kResultId};
  void *pointers[] = {const_cast<void *>(input), const_cast<void *>(weight),
                      result};
  void *space = reinterpret_cast<void *>(workspace);
  cudnnStatus_t status = kCudnnSuccess;
  if ((status = dnn.cudnnBackendSetAttribute(pack, kVariantPackIds, kTypeInt64,
                                             3, ids)) ||
      (status = dnn.cudnnBackendSetAttribute(pack, kVariantPackPointers,
                                             kTypeVoidPointer, 3, pointers)) ||
      (status = dnn.cudnnBackendSetAttribute(pack, kVariantPackWorkspace,
                                             kTypeVoidPointer, 1, &space)) ||
      (status = dnn.cudnnBackendFinalize(pack)))
    return status;
  return dnn.cudnnBackendExecute(handle, plan.plan.get(), pack);
}

/// Builds one shape's operation graph and execution plans; failures are
/// recorded through `fail`.
class PlanBuilder {
public:
  PlanBuilder(const Cudnn &dnn, cudnnHandle_t handle, const ConvolutionKey &key,
              std::function<void(const std::string &)> fail)
      : dnn(dnn), handle(handle), key(key), fail(std::move(fail)) {}

  /// The operation graph of the convolution, or null; the builder owns it.
  Descriptor buildGraph();
  /// The execution plans cuDNN's heuristic in `mode` proposes for `graph`
  /// that build here within kWorkspaceBytes (and, for f32, without TF32),
  /// best first.
  std::vector<Plan> buildPlans(Descriptor graph, int32_t mode);

private:
  std::optional<OwnedDescriptor> create(int type) {
    Descriptor made = nullptr;
    if (!check(dnn.cudnnBackendCreateDescriptor(type, &made),
               "cudnnBackendCreateDescriptor"))
      return std::nullopt;
    return OwnedDescriptor(&dnn, made);
  }
  bool set(Descriptor descriptor, int attribute, int type, int64_t count,
           const void *values) {
    return check(dnn.cudnnBackendSetAttribute(descriptor, attribute, type,
                                              count, values),
                 "cudnnBackendSetAttribute");
  }
  bool finalize(Descriptor descriptor) {
    return check(dnn.cudnnBackendFinalize(descriptor), "cudnnBackendFinalize");
  }
  bool check(cudnnStatus_t status, const char *call) {
    if (status == kCudnnSuccess)
      return true;
    fail(std::string(call) + " failed (status " + std::to_string(status) +
         ", " + dnn.cudnnGetErrorString(status) + ")");
    return false;
  }
  /// A tensor of NCHW `sizes` in channels-last memory.
  std::optional<OwnedDescriptor>
  buildTensor(int64_t id, std::array<int64_t, 4> sizes, int64_t align);
  /// Whether `config`'s engine rounds f32 inputs to TF32.
  bool roundsToTF32(Descriptor config);

  const Cudnn &dnn;
  cudnnHandle_t handle;
  const ConvolutionKey &key;
  std::function<void(const std::string &)> fail;
  /// The graph and its tensors and operations, which the plans share.
  std::shared_ptr<std::vector<OwnedDescriptor>> parts =
      std::make_shared<std::vector<OwnedDescriptor>>();
};

std::optional<OwnedDescriptor>
PlanBuilder::buildTensor(int64_t id, std::array<int64_t, 4> sizes,
                         int64_t align) {
  static const int32_t dataTypes[] = {kCudnnFloat, kCudnnHalf, kCudnnBFloat16};
  auto [n, c, h, w] = sizes;
  std::array<int64_t, 4> strides = {h * w * c, 1, w * c, c};
  std::optional<OwnedDescriptor> tensor = create(kTensorDescriptor);
  if (!tensor)
    return std::nullopt;
  Descriptor raw = tensor->get();
  if (!set(raw, kTensorDataType, kTypeDataType, 1, &dataTypes[key.dtype]) ||
      !set(raw, kTensorDimensions, kTypeInt64, 4, sizes.data()) ||
      !set(raw, kTensorStrides, kTypeInt64, 4, strides.data()) ||
      !set(raw, kTensorUniqueId, kTypeInt64, 1, &id) ||
      !set(raw, kTensorAlignment, kTypeInt64, 1, &align) || !finalize(raw))
    return std::nullopt;
  return tensor;
}

Descriptor PlanBuilder::buildGraph() {
  std::optional<OwnedDescriptor> input =
      buildTensor(kInputId, {key.batch, key.channels, key.height, key.width},
                  key.alignInput);
  std::optional<OwnedDescriptor> weight = buildTensor(
      kWeightId,
      {key.filters, key.channels / key.groups, key.kernelH, key.kernelW},
      key.alignWeight);
  std::optional<OwnedDescriptor> result = buildTensor(
      kResultId, {key.batch, key.filters, key.outHeight, key.outWidth},
      key.alignResult);
  std::optional<OwnedDescriptor> convolution = create(kConvolutionDescriptor);
  std::optional<OwnedDescriptor> forward =
      create(kConvolutionForwardDescriptor);
  std::optional<OwnedDescriptor> graph = create(kOperationGraphDescriptor);
  if (!input || !weight || !result || !convolution || !forward || !graph)
    return nullptr;
  // The groups follow from the filters' depth: channels / groups.
  int64_t spatialDims = 2;
  int64_t strides[] = {key.strideH, key.strideW};
  int64_t paddings[] = {key.padH, key.padW};
  int64_t dilations[] = {key.dilationH, key.dilationW};
  Descriptor conv = convolution->get();
  if (!set(conv, kConvolutionComputeType, kTypeDataType, 1, &kCudnnFloat) ||
      !set(conv, kConvolutionMode, kTypeConvolutionMode, 1,
           &kCudnnCrossCorrelation) ||
      !set(conv, kConvolutionSpatialDims, kTypeInt64, 1, &spatialDims) ||
      !set(conv, kConvolutionStrides, kTypeInt64, 2, strides) ||
      !set(conv, kConvolutionPrePaddings, kTypeInt64, 2, paddings) ||
      !set(conv, kConvolutionPostPaddings, kTypeInt64, 2, paddings) ||
      !set(conv, kConvolutionDilations, kTypeInt64, 2, dilations) ||
      !finalize(conv))
    return nullptr;
  float alpha = 1.0f, beta = 0.0f;
  Descriptor x = input->get(), w = weight->get(), y = result->get();
  Descriptor op = forward->get();
  if (!set(op, kForwardX, kTypeDescriptor, 1, &x) ||
      !set(op, kForwardW, kTypeDescriptor, 1, &w) ||
      !set(op, kForwardY, kTypeDescriptor, 1, &y) ||
      !set(op, kForwardConvolution, kTypeDescriptor, 1, &conv) ||
      !set(op, kForwardAlpha, kTypeFloat, 1, &alpha) ||
      !set(op, kForwardBeta, kTypeFloat, 1, &beta) || !finalize(op))
    return nullptr;
  Descriptor g = graph->get();
  if (!set(g, kGraphHandle, kTypeHandle, 1, &handle) ||
      !set(g, kGraphOperations, kTypeDescriptor, 1, &op) || !finalize(g))
    return nullptr;
  for (std::optional<OwnedDescriptor> *part :
       {&input, &weight, &result, &convolution, &forward, &graph})
    parts->push_back(std::move(**part));
  return g;
}

bool PlanBuilder::roundsToTF32(Descriptor config) {
  std::optional<OwnedDescriptor> engine = create(kEngineDescriptor);
  if (!engine)
    return true;
  Descriptor raw = engine->get();
  int64_t count = 0;
  int32_t notes[16] = {};
  // An engine whose notes cannot be read counts as rounding: f32 stays
  // exact.
  if (dnn.cudnnBackendGetAttribute(config, kEngineConfigEngine, kTypeDescriptor,
                                   1, &count, &raw) != kCudnnSuccess ||
      dnn.cudnnBackendGetAttribute(raw, kEngineNumericalNotes,
                                   kTypeNumericalNote, 16, &count,
                                   notes) != kCudnnSuccess)
    return true;
  for (int64_t i = 0; i < count && i < 16; ++i)
    if (notes[i] == kNoteTensorCore || notes[i] == kNoteDownConvertInputs)
      return true;
  return false;
}

std::vector<Plan> PlanBuilder::buildPlans(Descriptor graph, int32_t mode) {
  std::vector<Plan> plans;
  std::optional<OwnedDescriptor> heuristics =
      create(kEngineHeuristicsDescriptor);
  if (!heuristics ||
      !set(heuristics->get(), kHeuristicsGraph, kTypeDescriptor, 1, &graph) ||
      !set(heuristics->get(), kHeuristicsMode, kTypeHeuristicsMode, 1, &mode) ||
      !finalize(heuristics->get()))
    return plans;
  std::vector<OwnedDescriptor> configs;
  std::vector<Descriptor> raw;
  for (int i = 0; i < kMaxConfigs; ++i) {
    std::optional<OwnedDescriptor> config = create(kEngineConfigDescriptor);
    if (!config)
      return plans;
    raw.push_back(config->get());
    configs.push_back(std::move(*config));
  }
  int64_t count = 0;
  if (!check(dnn.cudnnBackendGetAttribute(heuristics->get(), kHeuristicsResults,
                                          kTypeDescriptor, kMaxConfigs, &count,
                                          raw.data()),
             "cudnnBackendGetAttribute"))
    return plans;
  for (int64_t i = 0;
       i < count && i < kMaxConfigs && plans.size() < kMaxCandidates; ++i) {
    Descriptor config = raw[i];
    if (key.dtype == 0 && roundsToTF32(config))
      continue;
    Descriptor made = nullptr;
    if (dnn.cudnnBackendCreateDescriptor(kExecutionPlanDescriptor, &made) !=
        kCudnnSuccess)
      continue;
    Plan plan{OwnedDescriptor(&dnn, made), parts};
    int64_t bytes = 0, got = 0;
    // An engine that does not build here (for this device or shape) is
    // skipped, not an error: the next one may.
    if (dnn.cudnnBackendSetAttribute(made, kPlanHandle, kTypeHandle, 1,
                                     &handle) != kCudnnSuccess ||
        dnn.cudnnBackendSetAttribute(made, kPlanEngineConfig, kTypeDescriptor,
                                     1, &config) != kCudnnSuccess ||
        dnn.cudnnBackendFinalize(made) != kCudnnSuccess ||
        dnn.cudnnBackendGetAttribute(made, kPlanWorkspaceSize, kTypeInt64, 1,
                                     &got, &bytes) != kCudnnSuccess ||
        bytes < 0 || bytes > static_cast<int64_t>(kWorkspaceBytes))
      continue;
    plans.push_back(std::move(plan));
  }
  // The plans' engine configurations live as long as their graph.
  for (OwnedDescriptor &config : configs)
    parts->push_back(std::move(config));
  return plans;
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
  CUdeviceptr workspace =
      getStreamWorkspace(*driver, context, stream, captureWorkspace,
                         "kiln_cuda_convolution" + describe());
  if (!workspace)
    return;

  ConvolutionKey key{context,
                     dtype,
                     batch,
                     height,
                     width,
                     channels,
                     filters,
                     kernelH,
                     kernelW,
                     outHeight,
                     outWidth,
                     strideH,
                     strideW,
                     padH,
                     padW,
                     dilationH,
                     dilationW,
                     groups,
                     getAlignment(input),
                     getAlignment(weight),
                     getAlignment(result)};
  auto [entry, inserted] = threadPlans.try_emplace(key);
  if (inserted) {
    // The shape's first call on this thread: its plans, the fastest kept.
    PlanBuilder builder(*dnn, handle, key, fail);
    Descriptor graph = builder.buildGraph();
    std::vector<Plan> plans;
    if (graph)
      plans = builder.buildPlans(graph, kHeurModeA);
    // RegNetY's two groups of 24 channels, say: none of the ranked engines
    // builds for them.
    if (graph && plans.empty())
      plans = builder.buildPlans(graph, kHeurModeFallback);
    if (plans.empty()) {
      if (graph)
        fail("cuDNN has no engine for it within a " +
             std::to_string(kWorkspaceBytes >> 20) + " MiB workspace");
      threadPlans.erase(entry);
      return;
    }
    std::size_t chosen = 0;
    // KILN_CONVOLUTION_TRACE=1 prints each shape's candidates, in ms.
    static const bool tracing = isTracing("KILN_CONVOLUTION_TRACE");
    std::string trace = "kiln_cuda_convolution" + describe() + ": " +
                        std::to_string(plans.size()) + " plan(s)";
    if (plans.size() > 1) {
      trace += ", ms:";
      auto run = [&](int index) {
        return execute(*dnn, handle, plans[index], input, weight, result,
                       workspace) == kCudnnSuccess;
      };
      if (std::optional<int> fastest = timeCandidates(
              *driver, stream, static_cast<int>(plans.size()), run, trace))
        chosen = *fastest;
    }
    if (tracing)
      std::fprintf(stderr, "%s\n", trace.c_str());
    entry->second = std::move(plans[chosen]);
  }
  checkDnn(
      execute(*dnn, handle, entry->second, input, weight, result, workspace),
      "cudnnBackendExecute");
}
