//===- Passes.td - Kiln's artifact-building passes -----------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_PASSES_TD
#define KILN_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def EmitEntryPointsPass : Pass<"kiln-emit-entry-points", "::mlir::ModuleOp"> {
  let summary = "Adds the C entry points of Kiln's artifact ABI";
  let description = [{
    For each function bufferized from a graph (marked `kiln.graph`, with its
    original signature in `kiln.signature`), adds two
    functions with C signatures that take raw pointers, which is what a
    shared object's callers (ctypes, C, C++) can pass:

    ```c
    // Runs the graph. inputs[i] and outputs[j] point to contiguous data;
    // input_sizes holds the dynamic dimensions of the inputs in argument
    // order; stream is the CUDA stream to run on (ignored on the CPU).
    // Returns 0.
    int32_t kiln_<graph>_run(void *const *inputs, void *const *outputs,
                             const int64_t *input_sizes, void *stream);
    // Writes the dynamic dimensions of the results, in order. Returns 0.
    int32_t kiln_<graph>_result_sizes(const int64_t *input_sizes,
                                      int64_t *result_sizes);
    ```

    Each entry builds memref descriptors from the pointers and sizes (as
    `builtin.unrealized_conversion_cast`s of LLVM structs that the LLVM
    conversions fold away) and calls the graph's function. It also adds the
    global `kiln_abi_version` (an i32) so that loaders can check the ABI, and
    `kiln_<graph>_signature`, a C string holding the graph's signature with
    PyTorch's dtypes (for example
    `(tensor<?x64xf32>, tensor<64xsi64>) -> tensor<?x64xf32>`), and
    `kiln_<graph>_device`, "cpu" or "cuda" (a graph function that takes a
    stream runs on the GPU), and, for a graph with run-time checks (its
    `kiln.checks`), `kiln_<graph>_checks`: their messages, one a line, whose
    flags are the graph's last results.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
  ];
}

def OutlineKernelsPass : Pass<"kiln-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Moves each loop nest of a graph function into a function of "
                "its own, one for identical nests";
  let description = [{
    Each top-level operation with regions in a function bufferized from a
    graph (marked `kiln.graph`) — a kernel's loop nest — becomes a call of a
    private function that holds it. The values it takes from the graph
    function (buffers, sizes) become the function's arguments; constants,
    and arithmetic on constants alone (a size not folded yet), are computed
    again inside it, so that the kernel's sizes stay constants. Nests that are alike but for the buffers they read
    and write, such as those of a model's repeated layers, call one
    function.

    Code generation then works on functions of one kernel each rather than
    on one function as long as the graph, and compiles a repeated kernel
    once: the time LLVM takes grows with the distinct kernels of a graph,
    not with its length.

    Before:
    ```mlir
    func.func private @forward(%a: memref<64xf32>, %b: memref<64xf32>,
                               %c: memref<64xf32>) attributes {kiln.graph} {
      scf.parallel (%i) = (%c0) to (%c64) step (%c1) { ...%a, %b... }
      scf.parallel (%i) = (%c0) to (%c64) step (%c1) { ...%b, %c... }
      return
    }
    ```
    After:
    ```mlir
    func.func private @forward(...) attributes {kiln.graph} {
      call @forward_kernel0(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
      call @forward_kernel0(%b, %c) : (memref<64xf32>, memref<64xf32>) -> ()
      return
    }
    func.func private @forward_kernel0(%x: memref<64xf32>, %y: memref<64xf32>) {
      %c0 = arith.constant 0 : index
      ...
      scf.parallel (%i) = (%c0) to (%c64) step (%c1) { ...%x, %y... }
      return
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::func::FuncDialect",
  ];
}

#endif // KILN_TARGET_PASSES_TD
