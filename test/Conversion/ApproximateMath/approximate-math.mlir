// RUN: kiln-opt %s -split-input-file --kiln-approximate-math | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-approximate-math=fast-exp=true | FileCheck %s --check-prefix=FAST
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-llvm-cpu | FileCheck %s --check-prefix=LLVM

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

// -----

// By default f32 exp becomes a polynomial; with fast-exp (GPUs), exp2 of a
// product. f64 stays.
// FAST-LABEL: fx.graph @exps
// FAST: %[[P:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// FAST: math.exp2 %[[P]] : f32
// FAST: math.exp %{{.+}} : f64
// CHECK-LABEL: fx.graph @exps
// CHECK-NOT: math.exp %{{.+}} : f32
// CHECK: math.exp %{{.+}} : f64
fx.graph @exps(%x: tensor<64xf32>, %y: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<64xf64>
    %e = math.exp %v : f64
    loop.yield %e : f64
  }
  fx.output %0, %1 : tensor<64xf32>, tensor<64xf64>
}
