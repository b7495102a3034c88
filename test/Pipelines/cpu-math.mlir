// RUN: kiln-opt %s --kiln-cpu-pipeline='openmp=false' | FileCheck %s

// Tests what the CPU pipeline makes of math without x86 instructions: f32
// sin (a reduction by round(2x/π) in f64, then a polynomial), exp and log
// polynomials, tanh (upstream's polynomial near 0, exp beyond), round-even
// and the polynomials' FMAs left as LLVM intrinsics (math-expand-ops does
// not split them), and no libm calls.
// CHECK-LABEL: llvm.func internal @forward
// CHECK-DAG: llvm.intr.roundeven(%{{.+}}) : (vector<{{[0-9]+}}xf64>) -> vector<{{[0-9]+}}xf64>
// CHECK-DAG: llvm.intr.fma
// CHECK-NOT: llvm.call @sinf
// CHECK-NOT: llvm.call @tanhf
// CHECK-NOT: llvm.call @expf
// CHECK-NOT: llvm.call @logf
// CHECK-NOT: llvm.intr.sin
// CHECK-NOT: llvm.intr.tanh
fx.graph @forward(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = fx.sin %x : (tensor<64xf32>) -> tensor<64xf32>
  %1 = fx.exp %x : (tensor<64xf32>) -> tensor<64xf32>
  %2 = fx.log %x : (tensor<64xf32>) -> tensor<64xf32>
  %3 = fx.tanh %x : (tensor<64xf32>) -> tensor<64xf32>
  fx.output %0, %1, %2, %3 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
