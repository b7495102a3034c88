// Every kind of kernel Kiln generates builds for A100-class GPUs too: ptxas
// assembles the sm_80 code (which the fatbinary carries with its PTX), and
// the PTX targets sm_80 with no instruction newer than it.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda --pipeline-options='chip=sm_80 features=+ptx80' -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa chip=sm_80 features=+ptx80' | FileCheck %s --check-prefix=PTX

// CHECK: T kiln_block_run

// PTX-NOT: sm_90
// PTX: gpu.binary @kiln_rows_native_layer_norm {{.*}}chip = "sm_80"{{.*}}.target sm_80
// PTX: gpu.binary @kiln_pointwise_gelu {{.*}}.target sm_80
// PTX: gpu.binary @kiln_columns_sum {{.*}}.target sm_80
// PTX: gpu.binary @kiln_rows_sum {{.*}}.target sm_80
// PTX: gpu.binary @kiln_transpose_permute {{.*}}.target sm_80
// PTX: gpu.binary @kiln_rows_softmax {{.*}}.target sm_80
// PTX: gpu.binary @kiln_pointwise_full {{.*}}.target sm_80
// PTX: gpu.binary @kiln_scatter_scatter_add {{.*}}.target sm_80
// PTX-NOT: sm_90
fx.graph @block(%x: tensor<512x768xbf16>, %w: tensor<768xbf16>, %b: tensor<768xbf16>, %i: tensor<512x4xsi64>, %u: tensor<512x4xf32>) -> (tensor<512x768xbf16>, tensor<768xbf16>, tensor<768x512xbf16>, tensor<512x768xbf16>, tensor<512x768xbf16>, tensor<512x768xf32>) {
  // A row kernel (the layer norm and its GELU reader).
  %n, %mean, %rstd = fx.native_layer_norm %x weight(%w) bias(%b) {eps = 1.0e-05 : f64, normalized_shape = array<i64: 768>} : (tensor<512x768xbf16>, tensor<768xbf16>, tensor<768xbf16>) -> (tensor<512x768xbf16>, tensor<512x1xf32>, tensor<512x1xf32>)
  %g = fx.gelu %n : tensor<512x768xbf16>
  // A column kernel (a sum down the columns).
  %c = fx.sum %x {dim = array<i64: 0>} : (tensor<512x768xbf16>) -> tensor<768xbf16>
  // A transposing copy in tiles.
  %t = fx.permute %g {dims = array<i64: 1, 0>} : (tensor<512x768xbf16>) -> tensor<768x512xbf16>
  %tc = fx.clone %t : tensor<768x512xbf16>
  // A softmax row kernel.
  %s = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<512x768xbf16>) -> tensor<512x768xbf16>
  // A product (a library call) and its pointwise epilogue.
  %m = fx.mm %g, %tc : (tensor<512x768xbf16>, tensor<768x512xbf16>) -> tensor<512x512xbf16>
  %r = fx.relu %m : tensor<512x512xbf16>
  %p = fx.mm %r, %n : (tensor<512x512xbf16>, tensor<512x768xbf16>) -> tensor<512x768xbf16>
  // A scatter (atomic adds).
  %big = fx.full {fill_value = 0.0} : () -> tensor<512x768xf32>
  %sc = fx.scatter_add %big, %i, %u {dim = 1 : i64} : (tensor<512x768xf32>, tensor<512x4xsi64>, tensor<512x4xf32>) -> tensor<512x768xf32>
  fx.output %g, %c, %tc, %s, %p, %sc : tensor<512x768xbf16>, tensor<768xbf16>, tensor<768x512xbf16>, tensor<512x768xbf16>, tensor<512x768xbf16>, tensor<512x768xf32>
}
