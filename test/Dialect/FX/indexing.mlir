// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests advanced indexing: index tensors broadcast together; next to each
// other they replace the indexed dimensions in place, separated by a full
// slice they go first. A bool mask makes a data-dependent dimension.
// CHECK-LABEL: fx.graph @index
fx.graph @index(%x: tensor<5x6x7xf32>, %i: tensor<3xsi64>, %j: tensor<2x1xsi32>, %m: tensor<5x6xi1>,
                %v: tensor<f32>, %r: tensor<2x3x7xf32>) {
  // CHECK: fx.index %{{.*}}, %{{.*}} : (tensor<5x6x7xf32>, tensor<3xsi64>) -> tensor<3x6x7xf32>
  %0 = fx.index %x, %i : (tensor<5x6x7xf32>, tensor<3xsi64>) -> tensor<3x6x7xf32>
  // x[:, i]
  // CHECK: fx.index %{{.*}}, %{{.*}} {index_positions = array<i64: 1>} : (tensor<5x6x7xf32>, tensor<3xsi64>) -> tensor<5x3x7xf32>
  %1 = fx.index %x, %i {index_positions = array<i64: 1>} : (tensor<5x6x7xf32>, tensor<3xsi64>) -> tensor<5x3x7xf32>
  // x[:, j, i]
  // CHECK: fx.index %{{.*}}, %{{.*}}, %{{.*}} {index_positions = array<i64: 1, 2>} : (tensor<5x6x7xf32>, tensor<2x1xsi32>, tensor<3xsi64>) -> tensor<5x2x3xf32>
  %2 = fx.index %x, %j, %i {index_positions = array<i64: 1, 2>} : (tensor<5x6x7xf32>, tensor<2x1xsi32>, tensor<3xsi64>) -> tensor<5x2x3xf32>
  // x[j, :, i]
  // CHECK: fx.index %{{.*}}, %{{.*}}, %{{.*}} {index_positions = array<i64: 0, 2>} : (tensor<5x6x7xf32>, tensor<2x1xsi32>, tensor<3xsi64>) -> tensor<2x3x6xf32>
  %3 = fx.index %x, %j, %i {index_positions = array<i64: 0, 2>} : (tensor<5x6x7xf32>, tensor<2x1xsi32>, tensor<3xsi64>) -> tensor<2x3x6xf32>
  // x[m]
  // CHECK: fx.index %{{.*}}, %{{.*}} : (tensor<5x6x7xf32>, tensor<5x6xi1>) -> tensor<?x7xf32>
  %4 = fx.index %x, %m : (tensor<5x6x7xf32>, tensor<5x6xi1>) -> tensor<?x7xf32>
  // CHECK: fx.index_put %{{.*}}, %{{.*}}, %{{.*}} {index_positions = array<i64: 1>} : (tensor<5x6x7xf32>, tensor<3xsi64>, tensor<f32>) -> tensor<5x6x7xf32>
  %5 = fx.index_put %x, %i, %v {index_positions = array<i64: 1>} : (tensor<5x6x7xf32>, tensor<3xsi64>, tensor<f32>) -> tensor<5x6x7xf32>
  // CHECK: fx.index_put %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {accumulate = true} : (tensor<5x6x7xf32>, tensor<2x1xsi32>, tensor<3xsi64>, tensor<2x3x7xf32>) -> tensor<5x6x7xf32>
  %6 = fx.index_put %x, %j, %i, %r {accumulate = true} : (tensor<5x6x7xf32>, tensor<2x1xsi32>, tensor<3xsi64>, tensor<2x3x7xf32>) -> tensor<5x6x7xf32>
  fx.output
}

// -----

// Tests index_select, gather and the scatters along a dimension.
// CHECK-LABEL: fx.graph @gather_scatter
fx.graph @gather_scatter(%x: tensor<4x8xbf16>, %i: tensor<3xsi64>, %g: tensor<4x2xsi64>, %s: tensor<4x2xbf16>) {
  // CHECK: fx.index_select %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<4x8xbf16>, tensor<3xsi64>) -> tensor<4x3xbf16>
  %0 = fx.index_select %x, %i {dim = 1} : (tensor<4x8xbf16>, tensor<3xsi64>) -> tensor<4x3xbf16>
  // CHECK: fx.gather %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<4x8xbf16>, tensor<4x2xsi64>) -> tensor<4x2xbf16>
  %1 = fx.gather %x, %g {dim = 1} : (tensor<4x8xbf16>, tensor<4x2xsi64>) -> tensor<4x2xbf16>
  // CHECK: fx.scatter %{{.*}}, %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<4x8xbf16>, tensor<4x2xsi64>, tensor<4x2xbf16>) -> tensor<4x8xbf16>
  %2 = fx.scatter %x, %g, %s {dim = 1} : (tensor<4x8xbf16>, tensor<4x2xsi64>, tensor<4x2xbf16>) -> tensor<4x8xbf16>
  // CHECK: fx.scatter_value %{{.*}}, %{{.*}} {dim = 1 : i64, value = 0.000000e+00 : f64} : (tensor<4x8xbf16>, tensor<4x2xsi64>) -> tensor<4x8xbf16>
  %3 = fx.scatter_value %x, %g {dim = 1, value = 0.0} : (tensor<4x8xbf16>, tensor<4x2xsi64>) -> tensor<4x8xbf16>
  // CHECK: fx.scatter_add %{{.*}}, %{{.*}}, %{{.*}} {dim = -1 : i64} : (tensor<4x8xbf16>, tensor<4x2xsi64>, tensor<4x2xbf16>) -> tensor<4x8xbf16>
  %4 = fx.scatter_add %x, %g, %s {dim = -1} : (tensor<4x8xbf16>, tensor<4x2xsi64>, tensor<4x2xbf16>) -> tensor<4x8xbf16>
  // CHECK: fx.scatter_reduce %{{.*}}, %{{.*}}, %{{.*}} {dim = 1 : i64, include_self = false, reduce = "amax"} : (tensor<4x8xbf16>, tensor<4x2xsi64>, tensor<4x2xbf16>) -> tensor<4x8xbf16>
  %5 = fx.scatter_reduce %x, %g, %s {dim = 1, reduce = "amax", include_self = false} : (tensor<4x8xbf16>, tensor<4x2xsi64>, tensor<4x2xbf16>) -> tensor<4x8xbf16>
  fx.output
}

// -----

// Tests embedding and its dense backward (num_weights is the result's first
// size).
// CHECK-LABEL: fx.graph @embedding
fx.graph @embedding(%w: tensor<50257x768xf32>, %ids: tensor<?x128xsi64>, %g: tensor<?x128x768xf32>) {
  // CHECK: fx.embedding %{{.*}}, %{{.*}} : (tensor<50257x768xf32>, tensor<?x128xsi64>) -> tensor<?x128x768xf32>
  %0 = fx.embedding %w, %ids : (tensor<50257x768xf32>, tensor<?x128xsi64>) -> tensor<?x128x768xf32>
  // CHECK: fx.embedding %{{.*}}, %{{.*}} {padding_idx = 0 : i64} : (tensor<50257x768xf32>, tensor<?x128xsi64>) -> tensor<?x128x768xf32>
  %1 = fx.embedding %w, %ids {padding_idx = 0} : (tensor<50257x768xf32>, tensor<?x128xsi64>) -> tensor<?x128x768xf32>
  // CHECK: fx.embedding_dense_backward %{{.*}}, %{{.*}} {padding_idx = -1 : i64, scale_grad_by_freq = false} : (tensor<?x128x768xf32>, tensor<?x128xsi64>) -> tensor<50257x768xf32>
  %2 = fx.embedding_dense_backward %g, %ids {padding_idx = -1, scale_grad_by_freq = false} : (tensor<?x128x768xf32>, tensor<?x128xsi64>) -> tensor<50257x768xf32>
  fx.output
}

// -----

// Tests masked_scatter: self and mask broadcast.
// CHECK-LABEL: fx.graph @masked_scatter
fx.graph @masked_scatter(%x: tensor<4x1xf32>, %m: tensor<3xi1>, %src: tensor<20xf32>) {
  // CHECK: fx.masked_scatter %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<3xi1>, tensor<20xf32>) -> tensor<4x3xf32>
  %0 = fx.masked_scatter %x, %m, %src : (tensor<4x1xf32>, tensor<3xi1>, tensor<20xf32>) -> tensor<4x3xf32>
  fx.output
}
