// Tests --emit=loop: the graph after the target's graph lowering (fusion,
// the CPU's run-time checks; the GPU's neither checks nor fuses bias and
// relu into products that are library calls).
// RUN: kiln-compile %s --emit=loop | FileCheck %s --check-prefix=CPU
// RUN: kiln-compile %s --emit=loop --target=cuda | FileCheck %s --check-prefix=CUDA
// RUN: kiln-compile %s --emit=loop --pipeline-options='inline=false' | FileCheck %s --check-prefix=UNFUSED

// CPU-LABEL: fx.graph @forward
// CPU-SAME: -> (tensor<16x64xsi64>, tensor<si32>)
// CPU-SAME: kiln.checks = ["RuntimeError: ZeroDivisionError"]
// CPU: loop.pointwise : tensor<16x64xsi64>
// CPU: arith.floordivsi
// CPU-NOT: llvm.
// CUDA-LABEL: fx.graph @forward
// CUDA-SAME: -> tensor<16x64xsi64>
// CUDA-NOT: kiln.checks
// CUDA: loop.pointwise
// UNFUSED-COUNT-2: loop.pointwise : tensor<16x64xsi64>
fx.graph @forward(%x: tensor<16x64xsi64>, %y: tensor<16x64xsi64>) -> tensor<16x64xsi64> {
  %0 = fx.mul %x, %y : (tensor<16x64xsi64>, tensor<16x64xsi64>) -> tensor<16x64xsi64>
  %1 = fx.div_mode %0, %y {rounding_mode = "floor"} : (tensor<16x64xsi64>, tensor<16x64xsi64>) -> tensor<16x64xsi64>
  fx.output %1 : tensor<16x64xsi64>
}
