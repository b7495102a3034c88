// Tests that CPU code computes on vectors as wide as the target CPU's
// (64 bytes with AVX-512F, 32 with AVX, 16 otherwise), unless the pipeline
// options choose a width.
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64-v4 | FileCheck %s --check-prefix=AVX512
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64 | FileCheck %s --check-prefix=SSE
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64-v4 --pipeline-options='vector-bytes=32' | FileCheck %s --check-prefix=AVX2
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64-v3 --mattr=+avx512f | FileCheck %s --check-prefix=AVX512
// AVX512: llvm.func internal @forward(
// AVX512: vector<16xf32>
// AVX2: llvm.func internal @forward(
// AVX2-NOT: vector<16xf32>
// AVX2: vector<8xf32>
// AVX2-NOT: vector<16xf32>
// SSE: llvm.func internal @forward(
// SSE-NOT: vector<8xf32>
// SSE: vector<4xf32>
// SSE-NOT: vector<8xf32>
fx.graph @forward(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %0 = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<64x256xf32>) -> tensor<64x256xf32>
  fx.output %0 : tensor<64x256xf32>
}
