//===- Pipelines.h - Kiln's named pass pipelines ----------------*- C++ -*-===//
//
// Part of Kiln. Every pipeline Kiln runs is built here, so that other compilers
// can embed it and kiln-opt can replay it by name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PIPELINES_PIPELINES_H
#define KILN_PIPELINES_PIPELINES_H

#include "kiln/Conversion/FXToLoop/FXToLoop.h"
#include "kiln/Conversion/LoopToGPU/LoopToGPU.h"
#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace kiln {

/// The options of lowering fx graphs to loop nodes, for every pipeline that
/// starts from fx graphs. `Base` chains option groups into one struct.
/// kiln-fx-to-loop's options take their defaults from its own (Passes.td).
template <typename Derived, typename Base = PassPipelineOptions<Derived>>
struct GraphLoweringOptions : public Base {
  detail::PassOptions::Option<bool> computeInF32{
      *this, "compute-in-f32",
      llvm::cl::desc("Compute f16 and bf16 elementwise math in f32"),
      llvm::cl::init(FXToLoopOptions().computeInF32)};
  detail::PassOptions::Option<bool> welford{
      *this, "welford",
      llvm::cl::desc("Compute variances in one pass (Welford) instead of two"),
      llvm::cl::init(FXToLoopOptions().welford)};
  detail::PassOptions::Option<bool> inlinePointwise{
      *this, "inline",
      llvm::cl::desc("Inline pointwise producers into their readers"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Fuse the pointwise reader of a matrix product into it"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> splitReductions{
      *this, "split-reductions",
      llvm::cl::desc("Split reductions with few long results into two levels "
                     "(the GPU pipeline's default: its rows run in parallel)"),
      llvm::cl::init(false)};
  detail::PassOptions::Option<bool> fuseRows{
      *this, "fuse-rows",
      llvm::cl::desc("Fuse reductions with the nodes that read them per row"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> fuseSiblings{
      *this, "fuse-siblings",
      llvm::cl::desc("Fuse pointwise nodes that read a common tensor per row"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<int64_t> directConvolutionDepth{
      *this, "direct-convolution-depth",
      llvm::cl::desc("Compute convolutions whose filters read at most this "
                     "many inputs, no fewer than there are filters per "
                     "group, and their gradients directly, as window sums "
                     "(0: every one as patches and products)"),
      llvm::cl::init(FXToLoopOptions().directConvolutionDepth)};
  detail::PassOptions::Option<bool> channelsLast{
      *this, "channels-last",
      llvm::cl::desc("Store every graph's 4-d images channels-last "
                     "(kiln-loop-channels-last; without it, graphs with "
                     "library convolutions, and nodes that read "
                     "channels-last images, are anyway)"),
      llvm::cl::init(false)};
  detail::PassOptions::Option<bool> normalCdfFromTail{
      *this, "normal-cdf-from-tail",
      llvm::cl::desc("Compute the exact GELU's normal CDF in f32 from its "
                     "upper tail instead of erf (the GPU pipeline's default)"),
      llvm::cl::init(FXToLoopOptions().normalCdfFromTail)};
};

/// The options of the CPU back end; kiln-loop-to-scf's take their defaults
/// from its own (Passes.td).
template <typename Derived, typename Base = PassPipelineOptions<Derived>>
struct CPUBackendOptions : public Base {
  detail::PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run loop nests in parallel with OpenMP (else serially)"),
      llvm::cl::init(LoopToSCFOptions().parallel)};
  detail::PassOptions::Option<int64_t> vectorBytes{
      *this, "vector-bytes",
      llvm::cl::desc("Bytes per vector (32: AVX2, 64: AVX-512, 0: scalar; "
                     "kiln-compile's default: the target CPU's widest)"),
      llvm::cl::init(LoopToSCFOptions().vectorBytes)};
  detail::PassOptions::Option<bool> amx{
      *this, "amx",
      llvm::cl::desc("Run bf16 products on AMX tiles (kiln-compile's "
                     "default: whether the target CPU has AMX-BF16 and, for "
                     "the host's, the OS lets this process use it)"),
      llvm::cl::init(LoopToSCFOptions().amx)};
};

struct LowerToLoopPipelineOptions
    : public GraphLoweringOptions<LowerToLoopPipelineOptions> {
  // The GPU pipeline sets it: its products are library calls.
  detail::PassOptions::Option<bool> libraryEpilogues{
      *this, "library-epilogues",
      llvm::cl::desc("Fuse only epilogues a GEMM library applies (bias, "
                     "relu)"),
      llvm::cl::init(false)};
  // The GPU pipeline sets it: its convolutions are library calls.
  detail::PassOptions::Option<bool> libraryConvolutions{
      *this, "library-convolutions",
      llvm::cl::desc("Leave the 1-d and 2-d float convolutions, depthwise "
                     "ones too, to a convolution library, as channels-last "
                     "convolutions (else window sums or patches and a "
                     "product)"),
      llvm::cl::init(false)};
  // The GPU pipeline sets it: it has an attention kernel.
  detail::PassOptions::Option<bool> attentionKernels{
      *this, "attention-kernels",
      llvm::cl::desc("Keep the loop.attention nodes that the GPU's attention "
                     "kernel computes (else products around a softmax)"),
      llvm::cl::init(false)};
  // The whole pipelines set it: code generation needs every op lowered.
  detail::PassOptions::Option<bool> failOnUnsupported{
      *this, "fail-on-unsupported",
      llvm::cl::desc("Fail on fx ops without a lowering (else leave them)"),
      llvm::cl::init(FXToLoopOptions().failOnUnsupported)};
  // The CPU pipeline sets it: eager's CPU kernels make these checks.
  detail::PassOptions::Option<bool> runtimeChecks{
      *this, "runtime-checks",
      llvm::cl::desc("Fail runs where eager's CPU kernels raise (integer "
                     "division by zero, indices out of range)"),
      llvm::cl::init(FXToLoopOptions().runtimeChecks)};
  // The GPU pipeline sets it: CUDA's eager kernels make device asserts.
  detail::PassOptions::Option<bool> deviceAsserts{
      *this, "device-asserts",
      llvm::cl::desc("Assert in the nodes that read at loaded indices that "
                     "each lies in range (device asserts on GPUs)"),
      llvm::cl::init(FXToLoopOptions().deviceAsserts)};
};

struct LoopToLLVMCPUPipelineOptions
    : public CPUBackendOptions<LoopToLLVMCPUPipelineOptions> {};

struct LoopToSCFCPUPipelineOptions
    : public CPUBackendOptions<LoopToSCFCPUPipelineOptions> {};

struct SCFToLLVMCPUPipelineOptions
    : public PassPipelineOptions<SCFToLLVMCPUPipelineOptions> {
  // The nests are kiln-loop-to-scf's: parallel by its default.
  detail::PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run scf.parallel nests with OpenMP (else serially)"),
      llvm::cl::init(LoopToSCFOptions().parallel)};
};

struct CPUPipelineOptions
    : public GraphLoweringOptions<CPUPipelineOptions,
                                  CPUBackendOptions<CPUPipelineOptions>> {};

/// The options of the NVIDIA GPU back end; kiln-loop-to-gpu's take their
/// defaults from its own (Passes.td).
template <typename Derived, typename Base = PassPipelineOptions<Derived>>
struct GPUBackendOptions : public Base {
  detail::PassOptions::Option<int64_t> blockSize{
      *this, "block-size", llvm::cl::desc("Threads per block of each kernel"),
      llvm::cl::init(LoopToGPUOptions().blockSize)};
  detail::PassOptions::Option<int64_t> elementsPerThread{
      *this, "elements-per-thread",
      llvm::cl::desc("Consecutive elements per thread (0: 16-byte accesses)"),
      llvm::cl::init(LoopToGPUOptions().elementsPerThread)};
  detail::PassOptions::Option<bool> transposeTiles{
      *this, "transpose-tiles",
      llvm::cl::desc("Run pointwise nodes that read a source transposed in "
                     "tiles staged through workgroup memory"),
      llvm::cl::init(LoopToGPUOptions().transposeTiles)};
  detail::PassOptions::Option<int64_t> rowThreads{
      *this, "row-threads",
      llvm::cl::desc("The most threads that share one long row of a row "
                     "kernel"),
      llvm::cl::init(LoopToGPUOptions().rowThreads)};
  detail::PassOptions::Option<bool> rowCache{
      *this, "row-cache",
      llvm::cl::desc("Keep a row kernel's loaded elements in registers from "
                     "one node to the next"),
      llvm::cl::init(LoopToGPUOptions().rowCache)};
  detail::PassOptions::Option<int64_t> rowLaneVectors{
      *this, "row-lane-vectors",
      llvm::cl::desc("The most 16-byte vectors per lane and node in rows that "
                     "a warp or part of one shares"),
      llvm::cl::init(LoopToGPUOptions().rowLaneVectors)};
  detail::PassOptions::Option<int64_t> shortRowBlockSize{
      *this, "short-row-block-size",
      llvm::cl::desc("Threads per block of row kernels whose rows take a warp "
                     "or less"),
      llvm::cl::init(LoopToGPUOptions().shortRowBlockSize)};
  detail::PassOptions::Option<int64_t> elementKernelVectorBytes{
      *this, "element-kernel-vector-bytes",
      llvm::cl::desc("Bytes of the widest type per thread of kernels that "
                     "compute element by element, as vectors (0: a thread "
                     "per element)"),
      llvm::cl::init(LoopToGPUOptions().elementKernelVectorBytes)};
  detail::PassOptions::Option<bool> columnKernels{
      *this, "column-kernels",
      llvm::cl::desc("Split long reductions down columns (a bias gradient) "
                     "into chunks and run them with a warp's lanes on "
                     "consecutive results, else a block per result"),
      llvm::cl::init(LoopToGPUOptions().columnKernels)};
  detail::PassOptions::Option<bool> matmulKernels{
      *this, "matmul-kernels",
      llvm::cl::desc("Run products of f16 and bf16 matrices whose rows hold "
                     "a multiple of 8 elements as Kiln's tensor-core "
                     "kernels, with any pointwise epilogue fused, instead of "
                     "GEMM library calls"),
      llvm::cl::init(LoopToGPUOptions().matmulKernels)};
  detail::PassOptions::Option<bool> warpgroupMma{
      *this, "warpgroup-mma",
      llvm::cl::desc("With matmul-kernels, run the products as warpgroup-MMA "
                     "(wgmma) kernels where the chip is sm_90a (others use "
                     "mma.sync), and attention with heads of a multiple of "
                     "64 likewise"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> warpgroupAttentionGradients{
      *this, "warpgroup-attention-gradients",
      llvm::cl::desc("With warpgroup-mma on sm_90a, run attention's "
                     "gradients of heads of 64 and 128 as one warpgroup-MMA "
                     "kernel that sums dQ by bulk reductions; false: as two "
                     "mma.sync kernels"),
      llvm::cl::init(LoopToGPUOptions().warpgroupAttentionGradients)};
  detail::PassOptions::Option<bool> chooseProducts{
      *this, "choose-products",
      llvm::cl::desc("With matmul-kernels, run each product as the faster of "
                     "Kiln's kernel and the GEMM library's (with a kernel "
                     "after it for an epilogue it cannot apply), timed per "
                     "shape"),
      llvm::cl::init(LoopToGPUOptions().chooseProducts)};
  detail::PassOptions::Option<int64_t> warpgroupTileN{
      *this, "warpgroup-tile-n",
      llvm::cl::desc("Columns per block of the warpgroup-MMA kernels: 128, "
                     "256, or 0 to choose per product"),
      llvm::cl::init(LoopToGPUOptions().warpgroupTileN)};
  detail::PassOptions::Option<bool> tf32Products{
      *this, "tf32-products",
      llvm::cl::desc("Multiply f32 matrix products in TF32, accumulating in "
                     "f32 (PyTorch's allow_tf32; Python sets it as PyTorch "
                     "does)"),
      llvm::cl::init(LoopToGPUOptions().tf32Products)};
  detail::PassOptions::Option<bool> warpgroupTma{
      *this, "warpgroup-tma",
      llvm::cl::desc("Copy the warpgroup-MMA kernels' operand tiles with TMA "
                     "from a producer warpgroup (warp specialization), "
                     "instead of cp.async from every thread"),
      llvm::cl::init(LoopToGPUOptions().warpgroupTma)};
  detail::PassOptions::Option<int64_t> rowMinBlocks{
      *this, "row-min-blocks",
      llvm::cl::desc("Blocks of a row kernel that must fit on an SM at once "
                     "(caps its registers; 0: ptxas chooses)"),
      llvm::cl::init(0)};
  detail::PassOptions::Option<bool> fastExp{
      *this, "fast-exp",
      llvm::cl::desc("Compute f32 exp as exp2 of a product, one instruction "
                     "(as Triton does)"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> fpContract{
      *this, "fp-contract",
      llvm::cl::desc("Let kernels fuse multiplies and adds into FMAs (as "
                     "nvcc and Triton do)"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture to compile for"),
      llvm::cl::init("sm_90a")};
  detail::PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features"),
      llvm::cl::init("+ptx80")};
  detail::PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("Optimization level of the kernels"),
      llvm::cl::init(3)};
  detail::PassOptions::Option<std::string> binaryFormat{
      *this, "format",
      llvm::cl::desc("Kernel binary format: fatbin, bin (cubin), isa (PTX)"),
      llvm::cl::init("fatbin")};
};

struct LoopToLLVMGPUPipelineOptions
    : public GPUBackendOptions<LoopToLLVMGPUPipelineOptions> {};

struct GPUPipelineOptions
    : public GraphLoweringOptions<GPUPipelineOptions,
                                  GPUBackendOptions<GPUPipelineOptions>> {
  // A block runs a row: few long reductions split by default.
  // exp and reciprocals are one instruction each: GELU's normal CDF from its
  // tail costs less than erf.
  GPUPipelineOptions() {
    splitReductions.setInitialValue(true);
    normalCdfFromTail.setInitialValue(true);
  }
  detail::PassOptions::Option<bool> libraryConvolutions{
      *this, "library-convolutions",
      llvm::cl::desc("Run the 1-d and 2-d float convolutions, depthwise ones "
                     "too, with cuDNN, called from the artifact (else as "
                     "window sums or patches and a GEMM)"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> attentionKernels{
      *this, "attention-kernels",
      llvm::cl::desc("Run attention of f16 and bf16 operands with head sizes "
                     "of a multiple of 16 up to 128 as Kiln's flash-attention "
                     "kernel, the scores kept on chip (else products around "
                     "a softmax kernel)"),
      llvm::cl::init(true)};
  detail::PassOptions::Option<bool> deviceAsserts{
      *this, "device-asserts",
      llvm::cl::desc("Make a device assert where a kernel reads at an index "
                     "out of range, as CUDA's eager kernels do (else read "
                     "at the index clamped into range, silently)"),
      llvm::cl::init(true)};
};

/// fx graphs -> loop nodes, with pointwise producers inlined: the graph-level
/// half of Kiln's compiler. Runs on a module of fx.graph ops.
void buildLowerToLoopPipeline(OpPassManager &pm,
                              const LowerToLoopPipelineOptions &options);

/// Loop-level graphs -> functions over memrefs for x86 CPUs: each graph
/// becomes a destination-passing func.func of SCF loop nests (scf.parallel,
/// or scf.for without `openmp`) and vector ops, plus the artifact's C entry
/// points (LLVM dialect). The first half of buildLoopToLLVMCPUPipeline.
void buildLoopToSCFCPUPipeline(OpPassManager &pm,
                               const LoopToSCFCPUPipelineOptions &options);

/// Functions over memrefs with SCF, vector, arith and math ops -> LLVM
/// dialect (and OpenMP, with `openmp`): the second half of
/// buildLoopToLLVMCPUPipeline.
void buildSCFToLLVMCPUPipeline(OpPassManager &pm,
                               const SCFToLLVMCPUPipelineOptions &options);

/// Loop-level graphs -> LLVM dialect for x86 CPUs: bufferization into SCF
/// loops, the artifact's C entry points, OpenMP, and the LLVM conversions.
void buildLoopToLLVMCPUPipeline(OpPassManager &pm,
                                const LoopToLLVMCPUPipelineOptions &options);

/// fx graphs -> loop nodes after fusion, with the CPU's settings (run-time
/// checks, no library epilogues): the first stage of kiln-cpu-pipeline.
void buildCPUGraphLowering(OpPassManager &pm,
                           const CPUPipelineOptions &options);

/// fx graphs -> LLVM dialect for x86 CPUs: the whole CPU compiler up to LLVM
/// IR translation.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Loop-level graphs -> LLVM dialect host code with embedded NVIDIA GPU
/// kernels: bufferization into kernels launched on the caller's stream, the
/// artifact's C entry points, then upstream's NVVM pipeline (outlining,
/// NVVM, host code, kernel binaries by ptxas).
void buildLoopToLLVMGPUPipeline(OpPassManager &pm,
                                const LoopToLLVMGPUPipelineOptions &options);

/// fx graphs -> loop nodes after fusion, with the GPU's settings (library
/// epilogues, device asserts for indices rather than run-time checks): the
/// first stage of kiln-gpu-pipeline.
void buildGPUGraphLowering(OpPassManager &pm,
                           const GPUPipelineOptions &options);

/// fx graphs -> LLVM dialect host code with embedded NVIDIA GPU kernels: the
/// whole GPU compiler up to LLVM IR translation. Kernel binaries are built by
/// the CUDA toolkit's ptxas.
void buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options);

/// Registers Kiln's pipelines with the global pipeline registry.
void registerKilnPipelines();

/// Points the NVVM target's toolkit search (CUDA_ROOT first), which finds
/// libdevice for the kernels' math functions, at `path`; with none, at the
/// environment's toolkit (CUDA_ROOT, CUDA_HOME, CUDA_PATH), else at
/// /usr/local/cuda. Without libdevice, math calls would stay unresolved in
/// the PTX.
void selectCUDAToolkit(llvm::StringRef path = {});

} // namespace kiln
} // namespace mlir

#endif // KILN_PIPELINES_PIPELINES_H
