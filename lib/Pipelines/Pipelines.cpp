//===- Pipelines.cpp - Kiln's named pass pipelines ------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/Transforms/Passes.h"
#include "kiln/Target/Passes.h"
#include "kiln/Transforms/Passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ComplexToLLVM/ComplexToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include <cstdlib>

using namespace mlir;
using namespace mlir::kiln;

// Each stage's passes and their options are built once, from the options of
// whichever pipeline runs the stage (GraphLoweringOptions, CPUBackendOptions
// and GPUBackendOptions are shared by the stage's pipeline and the whole
// ones).

/// How graphs lower for a target, from what its code generation does.
struct TargetLowering {
  /// Products are library calls: only epilogues the library applies fuse,
  /// except into the products Kiln's tensor-core kernels compute with
  /// `tensorCoreProducts`.
  bool libraryEpilogues = false;
  bool tensorCoreProducts = false;
  /// Convolutions are library calls.
  bool libraryConvolutions = false;
  /// The target computes loop.attention in a kernel (where
  /// loop::hasAttentionKernel).
  bool attentionKernels = false;
  /// Code generation needs every op lowered.
  bool failOnUnsupported = true;
  /// Eager's kernels check values (CPUs): integer division by zero and
  /// indices out of range raise.
  bool runtimeChecks = false;
  /// Eager's kernels assert on indices out of range (GPUs).
  bool deviceAsserts = false;
  /// Reductions down columns split into chunks (where reductions split; the
  /// GPU's column kernels run the chunks).
  bool splitColumns = true;
};

/// Adds the graph lowering (kiln-lower-to-loop's passes) with `options`, as
/// `target` needs it.
template <typename Options>
static void addGraphLowering(OpPassManager &pm, const Options &options,
                             const TargetLowering &target) {
  OpPassManager &graphPm = pm.nest<fx::GraphOp>();
  ConvertFXToLoopPassOptions toLoop;
  toLoop.computeInF32 = options.computeInF32;
  toLoop.welford = options.welford;
  toLoop.normalCdfFromTail = options.normalCdfFromTail;
  toLoop.failOnUnsupported = target.failOnUnsupported;
  toLoop.directConvolutionDepth = options.directConvolutionDepth;
  toLoop.runtimeChecks = target.runtimeChecks;
  toLoop.deviceAsserts = target.deviceAsserts;
  graphPm.addPass(createConvertFXToLoopPass(toLoop));
  loop::ExpandAttentionPassOptions attention;
  attention.kernels = target.attentionKernels;
  graphPm.addPass(loop::createExpandAttentionPass(attention));
  loop::ExpandConvolutionsPassOptions expand;
  expand.directDepth = options.directConvolutionDepth;
  expand.library = target.libraryConvolutions;
  graphPm.addPass(loop::createExpandConvolutionsPass(expand));
  // Images around library convolutions (every image with channels-last),
  // and nodes that read channels-last images, computed [N, H, W, C].
  loop::ChannelsLastPassOptions channelsLast;
  channelsLast.allGraphs = options.channelsLast;
  graphPm.addPass(loop::createChannelsLastPass(channelsLast));
  graphPm.addPass(createCanonicalizerPass());
  // Upstream's cse, with loop nodes hashed with their bodies: under its own
  // hash, it compares every pair of nodes of a type.
  graphPm.addPass(loop::createLoopCSEPass());
  if (options.inlinePointwise) {
    graphPm.addPass(loop::createInlinePointwisePass());
    graphPm.addPass(createCanonicalizerPass());
    graphPm.addPass(loop::createLoopCSEPass());
    // Attention written out, its softmax's nodes each recomputing the work
    // on the scores, as one node where the target has the kernel.
    if (target.attentionKernels)
      graphPm.addPass(loop::createFormAttentionPass());
  }
  if (options.fuseEpilogues) {
    loop::FuseEpiloguesPassOptions epilogues;
    epilogues.libraryOnly = target.libraryEpilogues;
    epilogues.tensorCoreProducts = target.tensorCoreProducts;
    graphPm.addPass(loop::createFuseEpiloguesPass(epilogues));
  }
  if (options.splitReductions) {
    loop::SplitReductionsPassOptions split;
    if (!target.splitColumns)
      split.columnChunk = 0;
    graphPm.addPass(loop::createSplitReductionsPass(split));
  }
  if (options.fuseRows)
    graphPm.addPass(loop::createFuseRowsPass());
  if (options.fuseSiblings)
    graphPm.addPass(loop::createFuseSiblingsPass());
}

void mlir::kiln::buildLowerToLoopPipeline(
    OpPassManager &pm, const LowerToLoopPipelineOptions &options) {
  TargetLowering target;
  target.libraryEpilogues = options.libraryEpilogues;
  target.libraryConvolutions = options.libraryConvolutions;
  target.failOnUnsupported = options.failOnUnsupported;
  target.attentionKernels = options.attentionKernels;
  target.runtimeChecks = options.runtimeChecks;
  target.deviceAsserts = options.deviceAsserts;
  addGraphLowering(pm, options, target);
}

/// Adds kiln-loop-to-scf-cpu's passes with `options`.
template <typename Options>
static void addLoopToSCFCPU(OpPassManager &pm, const Options &options) {
  ConvertLoopToSCFPassOptions toSCF;
  toSCF.parallel = options.openmp;
  toSCF.vectorBytes = options.vectorBytes;
  toSCF.amx = options.amx;
  pm.addPass(createConvertLoopToSCFPass(toSCF));
  pm.addPass(createEmitEntryPointsPass());
  // One function per distinct kernel, before anything else reads them: the
  // passes after work on each once, however often a model repeats it.
  pm.addPass(createOutlineKernelsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::kiln::buildLoopToSCFCPUPipeline(
    OpPassManager &pm, const LoopToSCFCPUPipelineOptions &options) {
  addLoopToSCFCPU(pm, options);
}

/// Adds kiln-scf-to-llvm-cpu's passes; `openmp` runs scf.parallel nests with
/// OpenMP.
static void addSCFToLLVMCPU(OpPassManager &pm, bool openmp) {
  // Math without an LLVM intrinsic becomes exp and arithmetic (sinh, cosh,
  // tan, ...), then polynomials (f32) or accurate forms (f64 log1p, expm1),
  // erf calls to libm (f64). tanh and f32 powf are kiln-approximate-math's
  // alone (upstream's expansions lose digits: every one of a tiny x's tanh,
  // |y ln x| ulp of x^y), f64 powf calls libm's pow, and fma and roundeven
  // stay LLVM intrinsics, which the polynomials use.
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"ctlz",  "sinh",  "cosh",  "tan",  "asinh",
                        "acosh", "atanh", "ceil",  "exp2", "fpowi",
                        "round", "rsqrt", "clampf"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  ApproximateMathPassOptions approximate;
  approximate.libmErf = true;
  pm.addPass(createApproximateMathPass(approximate));
  if (openmp)
    pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Strided metadata of dynamic collapses is affine arithmetic.
  pm.addPass(createLowerAffinePass());
  // AMX tiles (bf16 products with `amx`), loop-carried ones too.
  pm.addPass(createConvertAMXToLLVMPass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Complex numbers (Fourier transforms) are structs of their parts.
  pm.addPass(createConvertComplexToLLVMPass());
  // Before scf-to-cf: the memref.alloca_scope that wraps each OpenMP loop
  // body must still hold a single block when it is lowered.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  if (openmp)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::kiln::buildSCFToLLVMCPUPipeline(
    OpPassManager &pm, const SCFToLLVMCPUPipelineOptions &options) {
  addSCFToLLVMCPU(pm, options.openmp);
}

void mlir::kiln::buildLoopToLLVMCPUPipeline(
    OpPassManager &pm, const LoopToLLVMCPUPipelineOptions &options) {
  addLoopToSCFCPU(pm, options);
  addSCFToLLVMCPU(pm, options.openmp);
}

void mlir::kiln::buildCPUGraphLowering(OpPassManager &pm,
                                       const CPUPipelineOptions &options) {
  TargetLowering target;
  target.runtimeChecks = true;
  addGraphLowering(pm, options, target);
}

void mlir::kiln::buildCPUPipeline(OpPassManager &pm,
                                  const CPUPipelineOptions &options) {
  buildCPUGraphLowering(pm, options);
  addLoopToSCFCPU(pm, options);
  addSCFToLLVMCPU(pm, options.openmp);
}

/// NVVM, host code and the kernel binary: the passes of upstream's
/// gpu-lower-to-nvvm-pipeline (whose outlining finds nothing left to outline)
/// with kiln-tensor-map-parameters after the kernels' NVVM lowering, before
/// they are compiled.
template <typename Options>
static void addNVVMLowering(OpPassManager &pm, const Options &options) {
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertIndexToLLVMPassOptions index;
  index.indexBitwidth = 64;
  pm.addPass(createConvertIndexToLLVMPass(index));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createTensorMapParametersPass());

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.binaryFormat;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Adds kiln-loop-to-llvm-gpu's passes with `options`.
template <typename Options>
static void addLoopToLLVMGPU(OpPassManager &pm, const Options &options) {
  ConvertLoopToGPUPassOptions toGPU;
  toGPU.blockSize = options.blockSize;
  toGPU.elementsPerThread = options.elementsPerThread;
  toGPU.transposeTiles = options.transposeTiles;
  toGPU.rowThreads = options.rowThreads;
  toGPU.rowCache = options.rowCache;
  toGPU.rowLaneVectors = options.rowLaneVectors;
  toGPU.shortRowBlockSize = options.shortRowBlockSize;
  toGPU.elementKernelVectorBytes = options.elementKernelVectorBytes;
  toGPU.columnKernels = options.columnKernels;
  toGPU.matmulKernels = options.matmulKernels;
  // wgmma is sm_90a's alone: other chips run every product with mma.sync.
  toGPU.warpgroupMma =
      options.warpgroupMma && StringRef(options.chip) == "sm_90a";
  toGPU.warpgroupAttentionGradients = options.warpgroupAttentionGradients;
  toGPU.warpgroupTileN = options.warpgroupTileN;
  toGPU.warpgroupTma = options.warpgroupTma;
  toGPU.tf32Products = options.tf32Products;
  toGPU.chooseProducts = options.chooseProducts;
  pm.addPass(createConvertLoopToGPUPass(toGPU));
  pm.addPass(createEmitEntryPointsPass());
  // Complex numbers (Fourier transforms) are structs of their parts, in
  // kernels as on the host.
  pm.addPass(createConvertComplexToLLVMPass());
  if (options.fastExp) {
    ApproximateMathPassOptions approximate;
    approximate.fastExp = true;
    pm.addPass(createApproximateMathPass(approximate));
    pm.addPass(createNVVMApproximationsPass());
  }
  if (options.fpContract)
    pm.addPass(createContractFloatOpsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The canonicalizer hoists constants out of launch bodies; outlining would
  // pass them as kernel arguments, hiding shuffle offsets, divisors and
  // strides from the kernel's compiler. They go back in.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());

  // Kernels are outlined before upstream's pipeline, which then finds
  // nothing left to outline, so that alike ones merge (one binary each)
  // and row kernels get their annotations.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createGPUMergeKernelsPass());
  if (options.rowMinBlocks > 0) {
    RowKernelOccupancyPassOptions occupancy;
    occupancy.minBlocksPerSM = options.rowMinBlocks;
    pm.addPass(createRowKernelOccupancyPass(occupancy));
  }

  addNVVMLowering(pm, options);
}

void mlir::kiln::buildLoopToLLVMGPUPipeline(
    OpPassManager &pm, const LoopToLLVMGPUPipelineOptions &options) {
  addLoopToLLVMGPU(pm, options);
}

void mlir::kiln::buildGPUGraphLowering(OpPassManager &pm,
                                       const GPUPipelineOptions &options) {
  // CUDA's kernels divide by zero without raising, and report indices out
  // of range through device asserts: no flags to read back at every run.
  TargetLowering target;
  target.libraryEpilogues = true;
  target.tensorCoreProducts = options.matmulKernels;
  target.libraryConvolutions = options.libraryConvolutions;
  target.deviceAsserts = options.deviceAsserts;
  target.attentionKernels = options.attentionKernels;
  target.splitColumns = options.columnKernels;
  addGraphLowering(pm, options, target);
}

void mlir::kiln::buildGPUPipeline(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  buildGPUGraphLowering(pm, options);
  addLoopToLLVMGPU(pm, options);
}

void mlir::kiln::registerKilnPipelines() {
  PassPipelineRegistration<GPUPipelineOptions>(
      "kiln-gpu-pipeline",
      "Compile fx graphs to host code with NVIDIA GPU kernels (LLVM dialect)",
      buildGPUPipeline);
  PassPipelineRegistration<LoopToLLVMGPUPipelineOptions>(
      "kiln-loop-to-llvm-gpu",
      "Lower loop-level graphs to host code with NVIDIA GPU kernels (LLVM "
      "dialect)",
      buildLoopToLLVMGPUPipeline);
  PassPipelineRegistration<LoopToSCFCPUPipelineOptions>(
      "kiln-loop-to-scf-cpu",
      "Bufferize loop-level graphs into SCF loop nests over memrefs for x86 "
      "CPUs, with the artifact's entry points",
      buildLoopToSCFCPUPipeline);
  PassPipelineRegistration<SCFToLLVMCPUPipelineOptions>(
      "kiln-scf-to-llvm-cpu",
      "Lower bufferized graphs (SCF, vector, memref) to the LLVM dialect for "
      "x86 CPUs",
      buildSCFToLLVMCPUPipeline);
  PassPipelineRegistration<LoopToLLVMCPUPipelineOptions>(
      "kiln-loop-to-llvm-cpu",
      "Lower loop-level graphs to the LLVM dialect for x86 CPUs",
      buildLoopToLLVMCPUPipeline);
  PassPipelineRegistration<CPUPipelineOptions>(
      "kiln-cpu-pipeline", "Compile fx graphs to the LLVM dialect for x86 CPUs",
      buildCPUPipeline);
  PassPipelineRegistration<LowerToLoopPipelineOptions>(
      "kiln-lower-to-loop",
      "Lower fx graphs to loop nodes and inline pointwise producers",
      buildLowerToLoopPipeline);
}

void mlir::kiln::selectCUDAToolkit(llvm::StringRef path) {
  if (!path.empty()) {
    setenv("CUDA_ROOT", path.str().c_str(), /*overwrite=*/1);
    return;
  }
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"}) {
    if (getenv(variable))
      return;
  }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    setenv("CUDA_ROOT", "/usr/local/cuda", /*overwrite=*/0);
}
