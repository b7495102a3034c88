// Convolutions build GPU code that ptxas assembles for sm_90a: a depthwise
// one (a window sum per output, fused with the activation that reads it,
// over a dynamic batch) and a pointwise one after it (a product through
// cuBLASLt).
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-to-loop | FileCheck %s --check-prefix=LOOP
// RUN: kiln-opt %s --kiln-lower-to-loop | kiln-opt --kiln-loop-to-gpu='element-kernel-vector-bytes=16' | FileCheck %s --check-prefix=ELEMENTS
// Element kernels in vectors; the same as products only.
// RUN: kiln-compile %s --target=cuda --pipeline-options='element-kernel-vector-bytes=16' -o %t-vectors.so
// RUN: llvm-nm -D %t-vectors.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --pipeline-options='direct-convolution-depth=0' -o %t-products.so
// RUN: llvm-nm -D %t-products.so | FileCheck %s

// CHECK: T kiln_forward_run
// LOOP: loop.kernel rows(4)
// LOOP: loop.reduce "sum"(%{{.+}}) over [1, 3, 3] : tensor<?x8x6x6xf32>
// LOOP: loop.pointwise(%{{.+}}) : tensor<?x8x6x6xbf16>
// LOOP: loop.matmul
// The depthwise kernel's rows of 6 take 2 elements per thread.
// ELEMENTS: function(@kiln_elements)
// ELEMENTS: vector<2xf32>
fx.graph @forward(%x: tensor<?x8x12x12xbf16>, %w: tensor<8x1x3x3xbf16>, %w2: tensor<16x8x1x1xbf16>) -> (tensor<?x8x6x6xbf16>, tensor<?x16x6x6xbf16>) {
  %0 = fx.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 8 : i64} : (tensor<?x8x12x12xbf16>, tensor<8x1x3x3xbf16>) -> tensor<?x8x6x6xbf16>
  %1 = fx.silu %0 : tensor<?x8x6x6xbf16>
  %2 = fx.convolution %1, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<?x8x6x6xbf16>, tensor<16x8x1x1xbf16>) -> tensor<?x16x6x6xbf16>
  fx.output %1, %2 : tensor<?x8x6x6xbf16>, tensor<?x16x6x6xbf16>
}
