// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests softmax, log-softmax and their backwards.
// CHECK-LABEL: fx.graph @softmax
fx.graph @softmax(%x: tensor<2x?x16xf16>, %g: tensor<2x?x16xf32>, %y: tensor<2x?x16xf32>) {
  // CHECK: fx.softmax %{{.*}} {dim = -1 : i64, half_to_float = false} : (tensor<2x?x16xf16>) -> tensor<2x?x16xf16>
  %0 = fx.softmax %x {dim = -1, half_to_float = false} : (tensor<2x?x16xf16>) -> tensor<2x?x16xf16>
  // CHECK: fx.softmax %{{.*}} {dim = 2 : i64, half_to_float = true} : (tensor<2x?x16xf16>) -> tensor<2x?x16xf32>
  %1 = fx.softmax %x {dim = 2, half_to_float = true} : (tensor<2x?x16xf16>) -> tensor<2x?x16xf32>
  // CHECK: fx.log_softmax %{{.*}} {dim = 1 : i64, half_to_float = false} : (tensor<2x?x16xf16>) -> tensor<2x?x16xf16>
  %2 = fx.log_softmax %x {dim = 1, half_to_float = false} : (tensor<2x?x16xf16>) -> tensor<2x?x16xf16>
  // CHECK: fx.softmax_backward_data %{{.*}} {dim = -1 : i64, input_dtype = f16} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xf16>
  %3 = fx.softmax_backward_data %g, %y {dim = -1, input_dtype = f16} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xf16>
  // CHECK: fx.log_softmax_backward_data %{{.*}} {dim = -1 : i64, input_dtype = f32} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xf32>
  %4 = fx.log_softmax_backward_data %g, %y {dim = -1, input_dtype = f32} : (tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xf32>
  fx.output
}

// -----

// Tests layer norm with and without affine parameters, statistics in the
// input's dtype (CPU) or its compute dtype (CUDA), and its backward.
// CHECK-LABEL: fx.graph @layer_norm
fx.graph @layer_norm(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %b: tensor<4096xbf16>,
                     %x3: tensor<2x3x4xf32>, %m: tensor<2x1x1xf32>) {
  // CHECK: fx.native_layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}}) {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 4096>} : (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
  %0:3 = fx.native_layer_norm %x weight(%w) bias(%b) {normalized_shape = array<i64: 4096>, eps = 1.0e-05}
      : (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
  // CHECK: fx.native_layer_norm %{{.*}} bias(%{{.*}}) {{.*}} -> (tensor<?x4096xbf16>, tensor<?x1xbf16>, tensor<?x1xbf16>)
  %1:3 = fx.native_layer_norm %x bias(%b) {normalized_shape = array<i64: 4096>, eps = 1.0e-05}
      : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x1xbf16>, tensor<?x1xbf16>)
  // CHECK: fx.native_layer_norm %{{.*}} {eps = {{.*}}, normalized_shape = array<i64: 3, 4>} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %2:3 = fx.native_layer_norm %x3 {normalized_shape = array<i64: 3, 4>, eps = 1.0e-05}
      : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  // Without weight and bias, their gradients are typed as if they existed.
  // CHECK: fx.native_layer_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {normalized_shape = array<i64: 3, 4>, output_mask = array<i1: true, false, false>} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
  %3:3 = fx.native_layer_norm_backward %x3, %x3, %m, %m {normalized_shape = array<i64: 3, 4>, output_mask = array<i1: true, false, false>}
      : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
  // CHECK: fx.native_layer_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} weight(%{{.*}}) bias(%{{.*}})
  %4:3 = fx.native_layer_norm_backward %x, %x, %0#1, %0#2 weight(%w) bias(%b) {normalized_shape = array<i64: 4096>, output_mask = array<i1: true, true, true>}
      : (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<4096xbf16>, tensor<4096xbf16>)
      -> (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
  fx.output
}

// -----

// Tests group norm: statistics are [N, group]; N, C and HxW come from the
// input's type.
// CHECK-LABEL: fx.graph @group_norm
fx.graph @group_norm(%x: tensor<?x32x8x8xf16>, %w: tensor<32xf16>, %s: tensor<?x4xf32>) {
  // CHECK: fx.native_group_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}}) {eps = 1.000000e-05 : f64, group = 4 : i64} : (tensor<?x32x8x8xf16>, tensor<32xf16>, tensor<32xf16>) -> (tensor<?x32x8x8xf16>, tensor<?x4xf32>, tensor<?x4xf32>)
  %0:3 = fx.native_group_norm %x weight(%w) bias(%w) {group = 4, eps = 1.0e-05}
      : (tensor<?x32x8x8xf16>, tensor<32xf16>, tensor<32xf16>) -> (tensor<?x32x8x8xf16>, tensor<?x4xf32>, tensor<?x4xf32>)
  // CHECK: fx.native_group_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} weight(%{{.*}}) {group = 4 : i64, output_mask = array<i1: true, true, true>} {{.*}} -> (tensor<?x32x8x8xf16>, tensor<32xf16>, tensor<32xf16>)
  %1:3 = fx.native_group_norm_backward %x, %x, %s, %s weight(%w) {group = 4, output_mask = array<i1: true, true, true>}
      : (tensor<?x32x8x8xf16>, tensor<?x32x8x8xf16>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<32xf16>)
      -> (tensor<?x32x8x8xf16>, tensor<32xf16>, tensor<32xf16>)
  fx.output
}

// -----

// Tests the batch norm variants: evaluation (empty saved statistics),
// functional training (updated running statistics), no running statistics,
// and the backward.
// CHECK-LABEL: fx.graph @batch_norm
fx.graph @batch_norm(%x: tensor<?x64x56x56xf32>, %w: tensor<64xf32>, %rm: tensor<64xf32>, %e: tensor<0xf32>) {
  // CHECK: fx.native_batch_norm_legit_no_training %{{.*}} weight(%{{.*}}) bias(%{{.*}}), %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64} : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x64x56x56xf32>, tensor<0xf32>, tensor<0xf32>)
  %0:3 = fx.native_batch_norm_legit_no_training %x weight(%w) bias(%w), %rm, %rm {momentum = 0.1, eps = 1.0e-05}
      : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x64x56x56xf32>, tensor<0xf32>, tensor<0xf32>)
  // CHECK: fx.native_batch_norm_legit_functional %{{.*}}, %{{.*}}, %{{.*}} {{{.*}}training = true} {{.*}} -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  %1:5 = fx.native_batch_norm_legit_functional %x, %rm, %rm {training = true, momentum = 0.1, eps = 1.0e-05}
      : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  // CHECK: fx.native_batch_norm_legit_no_stats %{{.*}} weight(%{{.*}}) {{.*}} -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
  %2:3 = fx.native_batch_norm_legit_no_stats %x weight(%w) {training = true, momentum = 0.1, eps = 1.0e-05}
      : (tensor<?x64x56x56xf32>, tensor<64xf32>) -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
  // CHECK: fx.native_batch_norm_backward %{{.*}}, %{{.*}} weight(%{{.*}}) save_mean(%{{.*}}) save_invstd(%{{.*}}) {eps = {{.*}}, output_mask = array<i1: true, true, true>, train = true}
  %3:3 = fx.native_batch_norm_backward %x, %x weight(%w) save_mean(%1#1) save_invstd(%1#2) {train = true, eps = 1.0e-05, output_mask = array<i1: true, true, true>}
      : (tensor<?x64x56x56xf32>, tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
  // Evaluation-mode saved statistics are empty.
  // CHECK: fx.native_batch_norm_backward %{{.*}}, %{{.*}} running_mean(%{{.*}}) running_var(%{{.*}}) save_mean(%{{.*}}) save_invstd(%{{.*}})
  %4:3 = fx.native_batch_norm_backward %x, %x running_mean(%rm) running_var(%rm) save_mean(%e) save_invstd(%e) {train = false, eps = 1.0e-05, output_mask = array<i1: true, false, false>}
      : (tensor<?x64x56x56xf32>, tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<0xf32>, tensor<0xf32>)
      -> (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
  fx.output
}
