// RUN: kiln-opt %s --kiln-approximate-math | FileCheck %s
// RUN: kiln-opt %s --kiln-loop-to-llvm-cpu | FileCheck %s --check-prefix=LLVM

// Tests that erf becomes a rational polynomial wherever it is, here a node
// body, and that the CPU pipeline leaves no call for it.
// CHECK-LABEL: fx.graph @normal_cdf
// CHECK-NOT: math.erf
// CHECK: arith.cmpf olt
// CHECK: arith.divf
// CHECK-NOT: math.erf
// CHECK: loop.yield
// LLVM-NOT: erf
// LLVM: llvm.func @kiln_normal_cdf_run
// LLVM-NOT: erf
fx.graph @normal_cdf(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.erf %v : f32
    loop.yield %e : f32
  }
  fx.output %0 : tensor<64xf32>
}
