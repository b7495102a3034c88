// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests sums and means: reduced dimensions (negative ones count from the
// end), keepdim, all dimensions without `dim`, and their dtypes.
// CHECK-LABEL: fx.graph @sum_mean
fx.graph @sum_mean(%x: tensor<?x4x8xf32>, %i: tensor<4x8xsi32>, %p: tensor<4xi1>) {
  // CHECK: fx.sum %{{.*}} {dim = array<i64: -1>} : (tensor<?x4x8xf32>) -> tensor<?x4xf32>
  %0 = fx.sum %x {dim = array<i64: -1>} : (tensor<?x4x8xf32>) -> tensor<?x4xf32>
  // CHECK: fx.sum %{{.*}} {dim = array<i64: 0, 2>, keepdim = true} : (tensor<?x4x8xf32>) -> tensor<1x4x1xf32>
  %1 = fx.sum %x {dim = array<i64: 0, 2>, keepdim = true} : (tensor<?x4x8xf32>) -> tensor<1x4x1xf32>
  // Integral sums are si64 unless `dtype` says otherwise.
  // CHECK: fx.sum %{{.*}} : (tensor<4x8xsi32>) -> tensor<si64>
  %2 = fx.sum %i : (tensor<4x8xsi32>) -> tensor<si64>
  // CHECK: fx.sum %{{.*}} {dim = array<i64>, dtype = si32} : (tensor<4x8xsi32>) -> tensor<si32>
  %3 = fx.sum %i {dim = array<i64>, dtype = si32} : (tensor<4x8xsi32>) -> tensor<si32>
  // CHECK: fx.sum %{{.*}} : (tensor<4xi1>) -> tensor<si64>
  %4 = fx.sum %p : (tensor<4xi1>) -> tensor<si64>
  // CHECK: fx.mean %{{.*}} {dim = array<i64: 1, 2>, keepdim = true} : (tensor<?x4x8xf32>) -> tensor<?x1x1xf32>
  %5 = fx.mean %x {dim = array<i64: 1, 2>, keepdim = true} : (tensor<?x4x8xf32>) -> tensor<?x1x1xf32>
  // CHECK: fx.mean %{{.*}} {dtype = f64} : (tensor<4x8xsi32>) -> tensor<f64>
  %6 = fx.mean %i {dtype = f64} : (tensor<4x8xsi32>) -> tensor<f64>
  fx.output
}

// -----

// Tests products, extrema, argmax/argmin and any/all.
// CHECK-LABEL: fx.graph @prod_extrema
fx.graph @prod_extrema(%x: tensor<3x5xbf16>, %i: tensor<3x5xui8>, %s: tensor<f32>) {
  // CHECK: fx.prod %{{.*}} : (tensor<3x5xui8>) -> tensor<si64>
  %0 = fx.prod %i : (tensor<3x5xui8>) -> tensor<si64>
  // CHECK: fx.prod_dim_int %{{.*}} {dim = 0 : i64, keepdim = true} : (tensor<3x5xbf16>) -> tensor<1x5xbf16>
  %1 = fx.prod_dim_int %x {dim = 0, keepdim = true} : (tensor<3x5xbf16>) -> tensor<1x5xbf16>
  // CHECK: fx.amax %{{.*}} {dim = array<i64: 1>} : (tensor<3x5xbf16>) -> tensor<3xbf16>
  %2 = fx.amax %x {dim = array<i64: 1>} : (tensor<3x5xbf16>) -> tensor<3xbf16>
  // An empty `dim` reduces everything.
  // CHECK: fx.amin %{{.*}} : (tensor<3x5xui8>) -> tensor<ui8>
  %3 = fx.amin %i : (tensor<3x5xui8>) -> tensor<ui8>
  // CHECK: %{{.*}}, %{{.*}} = fx.max_dim %{{.*}} {dim = 1 : i64} : (tensor<3x5xbf16>) -> (tensor<3xbf16>, tensor<3xsi64>)
  %4:2 = fx.max_dim %x {dim = 1} : (tensor<3x5xbf16>) -> (tensor<3xbf16>, tensor<3xsi64>)
  // CHECK: fx.min_dim %{{.*}} {dim = -2 : i64, keepdim = true} : (tensor<3x5xui8>) -> (tensor<1x5xui8>, tensor<1x5xsi64>)
  %5:2 = fx.min_dim %i {dim = -2, keepdim = true} : (tensor<3x5xui8>) -> (tensor<1x5xui8>, tensor<1x5xsi64>)
  // CHECK: fx.argmax %{{.*}} : (tensor<3x5xbf16>) -> tensor<si64>
  %6 = fx.argmax %x : (tensor<3x5xbf16>) -> tensor<si64>
  // CHECK: fx.argmin %{{.*}} {dim = 1 : i64, keepdim = true} : (tensor<3x5xbf16>) -> tensor<3x1xsi64>
  %7 = fx.argmin %x {dim = 1, keepdim = true} : (tensor<3x5xbf16>) -> tensor<3x1xsi64>
  // A zero-dim tensor reduces over dimension 0 (or -1) to itself.
  // CHECK: fx.argmax %{{.*}} {dim = 0 : i64} : (tensor<f32>) -> tensor<si64>
  %8 = fx.argmax %s {dim = 0} : (tensor<f32>) -> tensor<si64>
  // any and all are bool, but uint8 for uint8 inputs.
  // CHECK: fx.any %{{.*}} : (tensor<3x5xbf16>) -> tensor<i1>
  %9 = fx.any %x : (tensor<3x5xbf16>) -> tensor<i1>
  // CHECK: fx.any_dim %{{.*}} {dim = 1 : i64} : (tensor<3x5xui8>) -> tensor<3xui8>
  %10 = fx.any_dim %i {dim = 1} : (tensor<3x5xui8>) -> tensor<3xui8>
  // CHECK: fx.any_dims %{{.*}} {dim = array<i64: 0, 1>, keepdim = true} : (tensor<3x5xbf16>) -> tensor<1x1xi1>
  %11 = fx.any_dims %x {dim = array<i64: 0, 1>, keepdim = true} : (tensor<3x5xbf16>) -> tensor<1x1xi1>
  // CHECK: fx.all %{{.*}} : (tensor<3x5xui8>) -> tensor<ui8>
  %12 = fx.all %i : (tensor<3x5xui8>) -> tensor<ui8>
  // CHECK: fx.all_dim %{{.*}} {dim = 0 : i64} : (tensor<3x5xbf16>) -> tensor<5xi1>
  %13 = fx.all_dim %x {dim = 0} : (tensor<3x5xbf16>) -> tensor<5xi1>
  fx.output
}

// -----

// Tests variance (real for complex inputs), logsumexp and the scans.
// CHECK-LABEL: fx.graph @statistics_scans
fx.graph @statistics_scans(%x: tensor<2x?xf32>, %c: tensor<6xcomplex<f32>>, %i: tensor<2x3xsi32>) {
  // CHECK: fx.var %{{.*}} {correction = 0 : i64, dim = array<i64: 1>} : (tensor<2x?xf32>) -> tensor<2xf32>
  %0 = fx.var %x {dim = array<i64: 1>, correction = 0} : (tensor<2x?xf32>) -> tensor<2xf32>
  // CHECK: fx.var %{{.*}} : (tensor<6xcomplex<f32>>) -> tensor<f32>
  %1 = fx.var %c : (tensor<6xcomplex<f32>>) -> tensor<f32>
  // CHECK: fx.var_mean %{{.*}} {dim = array<i64: 0>, keepdim = true} : (tensor<6xcomplex<f32>>) -> (tensor<1xf32>, tensor<1xcomplex<f32>>)
  %2:2 = fx.var_mean %c {dim = array<i64: 0>, keepdim = true} : (tensor<6xcomplex<f32>>) -> (tensor<1xf32>, tensor<1xcomplex<f32>>)
  // CHECK: fx.logsumexp %{{.*}} {dim = array<i64: 1>} : (tensor<2x3xsi32>) -> tensor<2xf32>
  %3 = fx.logsumexp %i {dim = array<i64: 1>} : (tensor<2x3xsi32>) -> tensor<2xf32>
  // CHECK: fx.cumsum %{{.*}} {dim = 1 : i64} : (tensor<2x3xsi32>) -> tensor<2x3xsi64>
  %4 = fx.cumsum %i {dim = 1} : (tensor<2x3xsi32>) -> tensor<2x3xsi64>
  // CHECK: fx.cumprod %{{.*}} {dim = -1 : i64, dtype = f64} : (tensor<2x?xf32>) -> tensor<2x?xf64>
  %5 = fx.cumprod %x {dim = -1, dtype = f64} : (tensor<2x?xf32>) -> tensor<2x?xf64>
  fx.output
}

// -----

// Tests sort and topk.
// CHECK-LABEL: fx.graph @sorting
fx.graph @sorting(%x: tensor<4x10xf16>, %d: tensor<4x?xf32>) {
  // CHECK: fx.sort %{{.*}} {descending = true} : (tensor<4x10xf16>) -> (tensor<4x10xf16>, tensor<4x10xsi64>)
  %0:2 = fx.sort %x {descending = true} : (tensor<4x10xf16>) -> (tensor<4x10xf16>, tensor<4x10xsi64>)
  // CHECK: fx.topk %{{.*}} {k = 3 : i64} : (tensor<4x10xf16>) -> (tensor<4x3xf16>, tensor<4x3xsi64>)
  %1:2 = fx.topk %x {k = 3} : (tensor<4x10xf16>) -> (tensor<4x3xf16>, tensor<4x3xsi64>)
  // CHECK: fx.topk %{{.*}} {dim = 0 : i64, k = 2 : i64, largest = false, sorted = false} : (tensor<4x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xsi64>)
  %2:2 = fx.topk %d {k = 2, dim = 0, largest = false, sorted = false} : (tensor<4x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xsi64>)
  fx.output
}
