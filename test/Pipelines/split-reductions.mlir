// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa split-reductions=false' | FileCheck %s --check-prefix=WHOLE
// RUN: kiln-opt %s --kiln-lower-to-loop | FileCheck %s --check-prefix=CPU

// Tests that the GPU pipeline splits a whole tensor's sum (one row, which a
// single block would run) into two kernels by default: partial sums, then
// their sum; `split-reductions=false` keeps one. The graph-lowering
// pipeline, as the CPU's, keeps the reduction whole (the CPU's code
// generation splits it across threads itself).
// CHECK: .entry kiln_rows
// CHECK: .entry kiln_rows
// WHOLE: .entry kiln_rows
// WHOLE-NOT: .entry
// CPU: loop.reduce "sum" over [3, 300001] : tensor<f32>
// CPU-NOT: loop.reduce
fx.graph @forward(%x: tensor<3x300001xf32>) -> tensor<f32> {
  %0 = fx.sum %x : (tensor<3x300001xf32>) -> tensor<f32>
  fx.output %0 : tensor<f32>
}
