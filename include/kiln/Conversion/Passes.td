//===- Passes.td - Kiln conversion passes --------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFXToLoopPass : Pass<"kiln-fx-to-loop", "::mlir::kiln::fx::GraphOp"> {
  let summary = "Lowers fx graph ops to loop nodes";
  let description = [{
    Rewrites each fx op inside an `fx.graph` into a `loop` node that computes
    the same tensor element by element. Broadcasting becomes index arithmetic:
    a size-1 operand dimension is read at index 0, and missing leading
    dimensions are dropped. Ops without a lowering are left alone, so a graph
    can be lowered op by op; `fail-on-unsupported` turns them into errors.

    Before:
    ```mlir
    %0 = fx.add %x, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
    After:
    ```mlir
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x64xf32>
    %0 = loop.pointwise(%n) : tensor<?x64xf32> {
    ^bb0(%i0: index, %i1: index):
      %a = loop.load %x[%i0, %i1] : tensor<?x64xf32>
      %b = loop.load %b[%i1] : tensor<64xf32>
      %s = arith.addf %a, %b : f32
      loop.yield %s : f32
    }
    ```

    With `compute-in-f32` (the default), f16 and bf16 values are extended to
    f32 after each load and rounded back before the yield, as PyTorch eager
    and Inductor compute them. With `welford`, the variances of `var`,
    `var_mean` and the normalizations sum their squared deviations in one
    pass beside the mean's (a `loop.reduce "welford"`) rather than in a
    second pass that reads the mean.

    With `runtime-checks`, the graph also makes the checks that eager
    PyTorch's CPU kernels make on values (an integer division by zero, an
    index outside its dimension): each is a `loop.check` of a flag that a
    reduction computes, and at the end of the pass each flag becomes a
    result of the graph after its own, its message listed in the graph's
    `kiln.checks` attribute, for the runtime to raise after the run.
    With `device-asserts`, the nodes that read at loaded indices assert
    that each lies in range (`cf.assert`, which GPU kernels make a device
    assert, as CUDA's eager kernels do; the CUDA context then reports the
    failure at the next synchronization): no flag to read back per run.
  }];
  let dependentDialects = [
    "::mlir::kiln::loop::LoopDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::complex::ComplexDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"computeInF32", "compute-in-f32", "bool", /*default=*/"true",
           "Compute f16 and bf16 elementwise math in f32">,
    Option<"welford", "welford", "bool", /*default=*/"false",
           "Compute variances' squared deviations in one pass (loop.reduce "
           "\"welford\") instead of a second pass after the mean">,
    Option<"failOnUnsupported", "fail-on-unsupported", "bool",
           /*default=*/"false",
           "Report an error for fx ops that have no lowering yet">,
    Option<"normalCdfFromTail", "normal-cdf-from-tail", "bool",
           /*default=*/"false",
           "Compute the exact GELU's normal CDF in f32 from its upper tail "
           "(exp and a reciprocal) instead of erf (GPUs)">,
    Option<"runtimeChecks", "runtime-checks", "bool", /*default=*/"false",
           "Fail a run where eager PyTorch's CPU kernels would raise: "
           "integer division by zero, indices out of range (CPUs)">,
    Option<"deviceAsserts", "device-asserts", "bool", /*default=*/"false",
           "Assert in the nodes that read them that indices lie in range "
           "(cf.assert: device asserts in GPU kernels, as CUDA's eager "
           "kernels make)">,
    Option<"directConvolutionDepth", "direct-convolution-depth", "int64_t",
           /*default=*/"::mlir::kiln::loop::kDefaultDirectConvolutionDepth",
           "Compute convolution gradients as direct sums, not patches and "
           "products, where each result sums few terms: the weight gradient "
           "of filters that read at most this many inputs (no fewer than a "
           "group's filters), the input gradient where each element sums "
           "at most this many filter entries (no fewer than a group's "
           "channels) (0: none)">,
  ];
}

def ConvertLoopToSCFPass : Pass<"kiln-loop-to-scf", "::mlir::ModuleOp"> {
  let summary = "Bufferizes lowered graphs and turns loop nodes into SCF loops";
  let description = [{
    Replaces each `fx.graph` whose body holds only loop nodes and scalar ops
    with a `func.func` of the same name over memrefs, in destination-passing
    style: the graph's inputs, then one argument per result, which the caller
    allocates. Each node becomes a loop nest over its index space that stores
    its elements: into the result's buffer when the graph returns it, else into
    a temporary buffer. Tensors become memrefs with signless element types
    (the bodies already chose signed or unsigned arithmetic); the graph's
    signature with PyTorch's dtypes stays in the `kiln.signature` attribute.

    A second function, `<name>_result_sizes`, takes the inputs and returns the
    dynamic sizes of every result in order, so that callers can allocate them.

    Before:
    ```mlir
    fx.graph @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x4xf32>
      %0 = loop.pointwise(%n) : tensor<?x4xf32> {
      ^bb0(%i: index, %j: index):
        %v = loop.load %x[%i, %j] : tensor<?x4xf32>
        loop.yield %v : f32
      }
      fx.output %0 : tensor<?x4xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: memref<?x4xf32>, %out: memref<?x4xf32>)
        attributes {kiln.graph, kiln.signature = (tensor<?x4xf32>) -> tensor<?x4xf32>} {
      %n = memref.dim %x, %c0 : memref<?x4xf32>
      scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
        %v = memref.load %x[%i, %j] : memref<?x4xf32>
        memref.store %v, %out[%i, %j] : memref<?x4xf32>
      }
      return
    }
    func.func @f_result_sizes(%x: memref<?x4xf32>) -> index {...}
    ```

    With `parallel=false`, nests are `scf.for` loops instead of
    `scf.parallel`. The innermost dimension runs `vector-bytes` worth of
    elements at a time (vector loads, broadcasts and stores; 32 bytes suits
    AVX2, 64 AVX-512) while whole vectors fit, then one element at a time; 0
    keeps everything scalar. Bodies that read or yield bools stay scalar.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect",
    // Scatters' products compare and swap (llvm.cmpxchg).
    "::mlir::LLVM::LLVMDialect",
    // bf16 products with the `amx` option.
    "::mlir::amx::AMXDialect",
  ];
  let options = [
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "Emit scf.parallel nests (false: sequential scf.for nests)">,
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"32",
           "Bytes per vector in the innermost dimension (0: scalar code)">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "Run bf16 products on AMX tiles (with 64-byte vectors; the CPU "
           "needs AMX-BF16, and the artifact asks the OS for leave to use "
           "it through kiln_cpu_request_amx)">,
  ];
}

def ConvertAMXToLLVMPass : Pass<"kiln-amx-to-llvm"> {
  let summary = "Lowers AMX tile ops, and the loops that carry tiles, to LLVM";
  let description = [{
    Lowers the AMX dialect's ops to LLVM's AMX intrinsics (as vector-to-llvm
    does with `enable-amx`), and changes the `!amx.tile` values that
    structured control flow carries (`scf.for` iter_args: a product's sums
    over K) to `!llvm.x86_amx`, which no later conversion would. The CPU
    pipeline runs it before its other conversions to LLVM. Other ops and
    types stay as they are.

    Before:
    ```mlir
    %sums = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero)
        -> (!amx.tile<16x16xf32>) {
      %next = amx.tile_mulf %a, %b, %acc : ...
      scf.yield %next : !amx.tile<16x16xf32>
    }
    ```
    After: the same loop over `!llvm.x86_amx`, with
    `llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"` in its body.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ConvertLoopToGPUPass : Pass<"kiln-loop-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Bufferizes lowered graphs into GPU kernels on a caller's stream";
  let description = [{
    Like `kiln-loop-to-scf`, replaces each lowered `fx.graph` with a
    destination-passing `func.func` over memrefs (and its `_result_sizes`
    companion), for NVIDIA GPUs: the function takes one more argument, the
    CUDA stream to run on (`!llvm.ptr`), and every node becomes a `gpu.launch`
    over its index space flattened to one dimension: `block-size` threads per
    block, each computing `elements-per-thread` consecutive elements of a row
    (by default enough for 16-byte accesses, where the innermost dimension is
    a multiple of it; else one), the indices recovered by division. Buffers
    are declared 16-byte aligned (`memref.assume_alignment`), as Kiln's ABI
    requires, so that a thread's accesses become vector loads and stores.
    Temporaries and copies are `gpu.alloc`/`gpu.dealloc`/`gpu.memcpy`. All of
    them are asynchronous and ordered on the caller's stream: the stream is
    the async token they depend on, so nothing synchronizes the host.

    A `loop.reduce` and a `loop.kernel` become a launch with a block per row:
    the block's threads (enough for a row in 16-byte vectors, a power of two
    from 32 up to `block-size` and at most 128; short rows get a warp each,
    tiny ones a thread) stride over the row's columns, reductions
    combine with warp shuffles and then, across warps, through workgroup
    memory, and every thread keeps the total for the kernel's later nodes;
    thread 0 stores row values that leave the kernel.

    A pointwise node with a load that walks its source's innermost dimension
    along a result dimension other than the innermost (a permute that moves
    the innermost dimension) runs in 32x32 tiles of those two dimensions
    (`transpose-tiles`): each block reads its tile of such loads along the
    source's rows into workgroup memory, synchronizes, and computes its tile
    along the result's rows, so that both sides are coalesced.

    ```mlir
    func.func @f(%x: memref<?x4xf32>, %out: memref<?x4xf32>, %stream: !llvm.ptr)
        attributes {kiln.graph, kiln.signature = (tensor<?x4xf32>) -> tensor<?x4xf32>} {
      %token = builtin.unrealized_conversion_cast %stream : !llvm.ptr to !gpu.async.token
      %done = gpu.launch async [%token] blocks(...) in (%grid, %c1, %c1)
                                        threads(...) in (%c256, %c1, %c1) {
        ... if the flat index is in bounds: load, compute, store ...
        gpu.terminator
      }
      return
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of each kernel">,
    Option<"elementsPerThread", "elements-per-thread", "int64_t",
           /*default=*/"0",
           "Consecutive elements per thread (0: enough for 16-byte accesses)">,
    Option<"transposeTiles", "transpose-tiles", "bool", /*default=*/"true",
           "Run pointwise nodes that read a source transposed in 32x32 tiles "
           "staged through workgroup memory">,
    Option<"rowThreads", "row-threads", "int64_t", /*default=*/"128",
           "The most threads that share one long row of a row kernel">,
    Option<"rowCache", "row-cache", "bool", /*default=*/"true",
           "Keep a row kernel's loaded elements in registers from one node to "
           "the next (else each node loads them again, from L2)">,
    Option<"rowLaneVectors", "row-lane-vectors", "int64_t", /*default=*/"4",
           "The most 16-byte vectors per lane and node in rows that a warp "
           "or part of one shares">,
    Option<"shortRowBlockSize", "short-row-block-size", "int64_t",
           /*default=*/"32",
           "Threads per block of row kernels whose rows take a warp or less">,
    Option<"elementKernelVectorBytes", "element-kernel-vector-bytes",
           "int64_t", /*default=*/"0",
           "Bytes of the widest type per thread of kernels that compute "
           "element by element, as vectors (0: a thread per element)">,
    Option<"columnKernels", "column-kernels", "bool", /*default=*/"true",
           "Run long reductions down columns (a bias gradient) with a warp's "
           "lanes on consecutive results, else a block per result">,
    Option<"matmulKernels", "matmul-kernels", "bool", /*default=*/"false",
           "Run products of f16 and bf16 matrices whose rows hold a multiple "
           "of 8 elements as Kiln's tensor-core kernels (mma.sync), with any "
           "epilogue, instead of GEMM library calls">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", /*default=*/"false",
           "With matmul-kernels, run the products as sm_90a warpgroup-MMA "
           "(wgmma) kernels instead of mma.sync ones, and the attention "
           "kernels of heads of a multiple of 64 likewise; the code then "
           "needs an sm_90a target">,
    Option<"warpgroupAttentionGradients", "warpgroup-attention-gradients",
           "bool", /*default=*/"true",
           "With warpgroup-mma, run attention's gradients of heads of 64 and "
           "128 as one warpgroup-MMA kernel that sums dQ by bulk reductions; "
           "false: as two mma.sync kernels">,
    Option<"chooseProducts", "choose-products", "bool", /*default=*/"true",
           "With matmul-kernels, run each product as the faster of Kiln's "
           "kernel and the GEMM library's (with a kernel after it for an "
           "epilogue the library cannot apply), timed at each shape's first "
           "call">,
    Option<"warpgroupTileN", "warpgroup-tile-n", "int64_t", /*default=*/"0",
           "Columns of the result per block of the warpgroup-MMA kernels: "
           "128 (one warpgroup per 128x128 tile), 256 (two per 128x256 "
           "tile), or 0: 256 where the result's sizes are known and give "
           "every SM of an H100 a tile, else 128">,
    Option<"tf32Products", "tf32-products", "bool", /*default=*/"false",
           "Multiply the f32 operands of GEMM library calls in TF32 (as "
           "PyTorch does with allow_tf32), accumulating in f32">,
    Option<"warpgroupTma", "warpgroup-tma", "bool", /*default=*/"false",
           "Copy the warpgroup-MMA kernels' operand tiles with TMA from a "
           "producer warpgroup, for two warpgroups that multiply (warp "
           "specialization), instead of cp.async from every thread">,
  ];
}

def NVVMApproximationsPass : Pass<"kiln-nvvm-approximations"> {
  let summary = "Computes f32 exp2 and reciprocals in GPU kernels with one "
                "instruction each";
  let description = [{
    In `gpu.launch` bodies, f32 `math.exp2` (what `kiln-approximate-math`
    makes of `exp` for GPUs) becomes `ex2.approx.ftz.f32`, and a
    reciprocal `1 / x` marked `afn` becomes `rcp.approx.ftz.f32`; vectors
    go element by element. Marked `afn` (as the attention kernel marks
    those of its scores region), f32 `math.tanh` becomes `tanh.approx.f32`
    and a division by a constant a multiplication by its reciprocal. Without `ftz` the NVPTX back end emits
    `ex2.approx.f32` and `rcp.approx.f32`, which `ptxas` wraps in a compare
    and two predicated multiplies so that results below 2^-126 keep their
    subnormal digits: three more instructions per call in kernels whose time
    is instructions (LayerNorm + GELU). The one difference: such results
    (exp2 below -126, reciprocals of magnitudes above 2^126) are zero.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def GPUMergeKernelsPass : Pass<"kiln-gpu-merge-kernels", "ModuleOp"> {
  let summary = "Launches one kernel where outlined kernels are alike";
  let description = [{
    After outlining, each kernel is a `gpu.module` of one `gpu.func`, and
    each module becomes a binary of its own (LLVM's NVPTX back end, then
    `ptxas`). A model's repeated layers launch kernels that are alike but
    for their names: the same attributes and body. This pass keeps the
    first of each set of alike kernels, makes every `gpu.launch_func` of the
    others launch it, and erases their modules, so that each distinct
    kernel is compiled once (a 6-layer transformer encoder: 54 kernels to
    compile, 10 after).
  }];
}

def RowKernelOccupancyPass : Pass<"kiln-row-kernel-occupancy", "ModuleOp"> {
  let summary = "Asks ptxas to fit a number of blocks of each row kernel on "
                "an SM";
  let description = [{
    Sets `nvvm.minctasm` (PTX's `.minnctapersm`) on the outlined row kernels
    (`gpu.func`s named `kiln_rows...`): `ptxas` then keeps each kernel's
    registers few enough that `min-blocks-per-sm` of its blocks fit on one
    SM, spilling if it must. A row kernel holds its row in registers, and
    with many registers few rows are in flight: the softmax kernel takes 48
    registers for 32 elements per thread, which leaves five blocks of 256
    threads per SM and half its warps idle waiting for memory. Runs after
    outlining, before the NVVM lowering carries the attribute over.
  }];
  let options = [
    Option<"minBlocksPerSM", "min-blocks-per-sm", "int64_t", /*default=*/"0",
           "Blocks of each row kernel that must fit on an SM (0: no cap)">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def TensorMapParametersPass
    : Pass<"kiln-tensor-map-parameters", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Passes the kernels' TMA tensor maps as __grid_constant__ "
                "parameters";
  let description = [{
    A bulk tensor copy (TMA) reads its tensor map from the address of a
    kernel parameter, which PTX allows only for a parameter passed by value
    and marked `__grid_constant__`: the copy must not be one in local
    memory. The product kernels receive each 128-byte map as an
    `!llvm.array<16 x i64>` argument (what the host's launch passes) and
    store it into an `llvm.alloca` marked `kiln.tensor_map` whose address the
    copies read. After `convert-gpu-to-nvvm`, this pass makes each such
    argument an `!llvm.ptr` with `llvm.byval`, `llvm.align = 64` and
    `nvvm.grid_constant`, and the copies read it there; the alloca and its
    store go. A marked alloca whose only use is not such a store of a kernel
    argument is an error.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

#endif // KILN_CONVERSION_PASSES_TD
