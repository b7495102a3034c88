// Tests that Fourier transforms compile into GPU kernels that ptxas
// assembles: complex buffers read and written as pairs of floats; direct
// sums for short signals, radix-2 butterflies for long ones, Bluestein's
// transform for long ones of other lengths.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-long-fft.mlir --target=cuda -o %t-long.so
// RUN: llvm-nm -D %t-long.so | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s --check-prefix=PTX
// CHECK: T kiln_forward_run
// PTX: st.global.v2.b32
// PTX: ld.global.v2.b32
fx.graph @forward(%x: tensor<4x16xf32>) -> (tensor<4x9xcomplex<f32>>, tensor<4x16xf32>) {
  %0 = fx.fft_r2c %x {dim = array<i64: 1>, normalization = 0, onesided = true} : (tensor<4x16xf32>) -> tensor<4x9xcomplex<f32>>
  %1 = fx.fft_c2r %0 {dim = array<i64: 1>, normalization = 2, last_dim_size = 16} : (tensor<4x9xcomplex<f32>>) -> tensor<4x16xf32>
  fx.output %0, %1 : tensor<4x9xcomplex<f32>>, tensor<4x16xf32>
}
