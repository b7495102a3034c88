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
    and Inductor compute them.
  }];
  let dependentDialects = [
    "::mlir::kiln::loop::LoopDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"computeInF32", "compute-in-f32", "bool", /*default=*/"true",
           "Compute f16 and bf16 elementwise math in f32">,
    Option<"failOnUnsupported", "fail-on-unsupported", "bool",
           /*default=*/"false",
           "Report an error for fx ops that have no lowering yet">,
  ];
}

#endif // KILN_CONVERSION_PASSES_TD
