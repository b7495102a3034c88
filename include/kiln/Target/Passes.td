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
    stream runs on the GPU).
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
  ];
}

#endif // KILN_TARGET_PASSES_TD
