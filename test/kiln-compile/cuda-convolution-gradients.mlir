// A depthwise convolution's gradients build GPU code that ptxas assembles
// for sm_90a: the input gradient a sum per input element over the outputs
// that read it, the weight gradient a few long sums over the batch and the
// output positions, both summing in f32 for bf16 results, over a dynamic
// batch; and the same through patches and products.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-to-loop | FileCheck %s --check-prefix=LOOP
// RUN: kiln-compile %s --target=cuda --pipeline-options='direct-convolution-depth=0' -o %t-products.so
// RUN: llvm-nm -D %t-products.so | FileCheck %s

// CHECK: T kiln_forward_run
// LOOP-NOT: loop.matmul
// LOOP: loop.reduce "sum"(%{{.+}}) over [1, 3, 3] : tensor<?x8x12x12xbf16>
// LOOP-NOT: loop.matmul
// LOOP: loop.reduce "sum" over [%{{.+}}, 6, 6] : tensor<8x1x3x3xbf16>
// LOOP-NOT: loop.matmul
// LOOP: fx.output
fx.graph @forward(%g: tensor<?x8x6x6xbf16>, %x: tensor<?x8x12x12xbf16>, %w: tensor<8x1x3x3xbf16>) -> (tensor<?x8x12x12xbf16>, tensor<8x1x3x3xbf16>) {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 8, output_mask = array<i1: true, true, false>} : (tensor<?x8x6x6xbf16>, tensor<?x8x12x12xbf16>, tensor<8x1x3x3xbf16>) -> (tensor<?x8x12x12xbf16>, tensor<8x1x3x3xbf16>, tensor<8xbf16>)
  fx.output %0#0, %0#1 : tensor<?x8x12x12xbf16>, tensor<8x1x3x3xbf16>
}
