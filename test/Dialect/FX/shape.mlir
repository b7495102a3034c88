// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests the views whose sizes are the result type's: view, _unsafe_view,
// expand; and permute, squeeze, unsqueeze.
// CHECK-LABEL: fx.graph @views
fx.graph @views(%x: tensor<?x128x768xf32>, %y: tensor<2x1x4xsi64>, %s: tensor<f32>) {
  // CHECK: fx.view %{{.*}} : (tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32>
  %0 = fx.view %x : (tensor<?x128x768xf32>) -> tensor<?x128x12x64xf32>
  // CHECK: fx.unsafe_view %{{.*}} : (tensor<2x1x4xsi64>) -> tensor<8xsi64>
  %1 = fx.unsafe_view %y : (tensor<2x1x4xsi64>) -> tensor<8xsi64>
  // CHECK: fx.permute %{{.*}} {dims = array<i64: 0, 2, 1, 3>} : (tensor<?x128x12x64xf32>) -> tensor<?x12x128x64xf32>
  %2 = fx.permute %0 {dims = array<i64: 0, 2, 1, 3>} : (tensor<?x128x12x64xf32>) -> tensor<?x12x128x64xf32>
  // CHECK: fx.expand %{{.*}} : (tensor<2x1x4xsi64>) -> tensor<3x2x5x4xsi64>
  %3 = fx.expand %y : (tensor<2x1x4xsi64>) -> tensor<3x2x5x4xsi64>
  // CHECK: fx.expand %{{.*}} : (tensor<f32>) -> tensor<?x4xf32>
  %4 = fx.expand %s : (tensor<f32>) -> tensor<?x4xf32>
  // Only size-1 dimensions among `dim` go.
  // CHECK: fx.squeeze %{{.*}} {dim = array<i64: 0, 1>} : (tensor<2x1x4xsi64>) -> tensor<2x4xsi64>
  %5 = fx.squeeze %y {dim = array<i64: 0, 1>} : (tensor<2x1x4xsi64>) -> tensor<2x4xsi64>
  // CHECK: fx.unsqueeze %{{.*}} {dim = -1 : i64} : (tensor<2x1x4xsi64>) -> tensor<2x1x4x1xsi64>
  %6 = fx.unsqueeze %y {dim = -1} : (tensor<2x1x4xsi64>) -> tensor<2x1x4x1xsi64>
  // CHECK: fx.unsqueeze %{{.*}} {dim = 0 : i64} : (tensor<f32>) -> tensor<1xf32>
  %7 = fx.unsqueeze %s {dim = 0} : (tensor<f32>) -> tensor<1xf32>
  fx.output
}

// -----

// Tests slice (with ATen's clamping, negative bounds and steps), select,
// cat (which promotes) and split_with_sizes.
// CHECK-LABEL: fx.graph @slices
fx.graph @slices(%x: tensor<4x10xf16>, %d: tensor<?x10xf16>, %i: tensor<2x10xsi32>) {
  // CHECK: fx.slice %{{.*}} {dim = 1 : i64, end = 9223372036854775807 : i64, start = 1 : i64} : (tensor<4x10xf16>) -> tensor<4x9xf16>
  %0 = fx.slice %x {dim = 1, start = 1, end = 9223372036854775807} : (tensor<4x10xf16>) -> tensor<4x9xf16>
  // CHECK: fx.slice %{{.*}} {dim = 1 : i64, end = -1 : i64, start = -7 : i64, step = 2 : i64} : (tensor<4x10xf16>) -> tensor<4x3xf16>
  %1 = fx.slice %x {dim = 1, start = -7, end = -1, step = 2} : (tensor<4x10xf16>) -> tensor<4x3xf16>
  // A bounded slice of a `?` dimension depends on its run-time size.
  // CHECK: fx.slice %{{.*}} {end = 2 : i64} : (tensor<?x10xf16>) -> tensor<2x10xf16>
  %2 = fx.slice %d {end = 2} : (tensor<?x10xf16>) -> tensor<2x10xf16>
  // CHECK: fx.slice %{{.*}} : (tensor<?x10xf16>) -> tensor<?x10xf16>
  %3 = fx.slice %d : (tensor<?x10xf16>) -> tensor<?x10xf16>
  // CHECK: fx.select %{{.*}} {dim = 0 : i64, index = -1 : i64} : (tensor<4x10xf16>) -> tensor<10xf16>
  %4 = fx.select %x {dim = 0, index = -1} : (tensor<4x10xf16>) -> tensor<10xf16>
  // CHECK: fx.cat %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x10xf16>, tensor<?x10xf16>, tensor<2x10xsi32>) -> tensor<?x10xf16>
  %5 = fx.cat %x, %d, %i : (tensor<4x10xf16>, tensor<?x10xf16>, tensor<2x10xsi32>) -> tensor<?x10xf16>
  // CHECK: fx.cat %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<4x10xf16>, tensor<4x10xf16>) -> tensor<4x20xf16>
  %6 = fx.cat %x, %x {dim = 1} : (tensor<4x10xf16>, tensor<4x10xf16>) -> tensor<4x20xf16>
  // CHECK: fx.split_with_sizes %{{.*}} {dim = 1 : i64} : (tensor<4x10xf16>) -> (tensor<4x3xf16>, tensor<4x7xf16>)
  %7:2 = fx.split_with_sizes %x {dim = 1} : (tensor<4x10xf16>) -> (tensor<4x3xf16>, tensor<4x7xf16>)
  // CHECK: fx.split_with_sizes %{{.*}} : (tensor<?x10xf16>) -> (tensor<?x10xf16>, tensor<?x10xf16>, tensor<1x10xf16>)
  %8:3 = fx.split_with_sizes %d : (tensor<?x10xf16>) -> (tensor<?x10xf16>, tensor<?x10xf16>, tensor<1x10xf16>)
  fx.output
}

// -----

// Tests strided views, padding, flip, repeat and diagonal.
// CHECK-LABEL: fx.graph @layout
fx.graph @layout(%x: tensor<2x3x8x8xf32>, %y: tensor<5x6xsi64>, %v: tensor<3x?xf32>) {
  // CHECK: fx.as_strided %{{.*}} {storage_offset = 1 : i64, stride = array<i64: 8, 1>} : (tensor<2x3x8x8xf32>) -> tensor<4x4xf32>
  %0 = fx.as_strided %x {stride = array<i64: 8, 1>, storage_offset = 1} : (tensor<2x3x8x8xf32>) -> tensor<4x4xf32>
  // Negative padding crops.
  // CHECK: fx.constant_pad_nd %{{.*}} {pad = array<i64: 1, 2, -1, 0>, value = 0.000000e+00 : f64} : (tensor<2x3x8x8xf32>) -> tensor<2x3x7x11xf32>
  %1 = fx.constant_pad_nd %x {pad = array<i64: 1, 2, -1, 0>, value = 0.0} : (tensor<2x3x8x8xf32>) -> tensor<2x3x7x11xf32>
  // CHECK: fx.constant_pad_nd %{{.*}} {pad = array<i64: 1, 1>} : (tensor<3x?xf32>) -> tensor<3x?xf32>
  %2 = fx.constant_pad_nd %v {pad = array<i64: 1, 1>} : (tensor<3x?xf32>) -> tensor<3x?xf32>
  // CHECK: fx.reflection_pad1d %{{.*}} {padding = array<i64: 2, 2>} : (tensor<5x6xsi64>) -> tensor<5x10xsi64>
  %3 = fx.reflection_pad1d %y {padding = array<i64: 2, 2>} : (tensor<5x6xsi64>) -> tensor<5x10xsi64>
  // CHECK: fx.reflection_pad2d %{{.*}} {padding = array<i64: 1, 1, 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x12x10xf32>
  %4 = fx.reflection_pad2d %x {padding = array<i64: 1, 1, 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x12x10xf32>
  // CHECK: fx.reflection_pad3d %{{.*}} {padding = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x5x10x10xf32>
  %5 = fx.reflection_pad3d %x {padding = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x5x10x10xf32>
  // CHECK: fx.replication_pad2d %{{.*}} {padding = array<i64: 0, 1, 0, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x9x9xf32>
  %6 = fx.replication_pad2d %x {padding = array<i64: 0, 1, 0, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x9x9xf32>
  // CHECK: fx.replication_pad3d %{{.*}} {padding = array<i64: 1, 0, 1, 0, 1, 0>} : (tensor<2x3x8x8xf32>) -> tensor<2x4x9x9xf32>
  %7 = fx.replication_pad3d %x {padding = array<i64: 1, 0, 1, 0, 1, 0>} : (tensor<2x3x8x8xf32>) -> tensor<2x4x9x9xf32>
  // CHECK: fx.flip %{{.*}} {dims = array<i64: -1, 0>} : (tensor<5x6xsi64>) -> tensor<5x6xsi64>
  %8 = fx.flip %y {dims = array<i64: -1, 0>} : (tensor<5x6xsi64>) -> tensor<5x6xsi64>
  // CHECK: fx.repeat %{{.*}} {repeats = array<i64: 2, 1, 3>} : (tensor<5x6xsi64>) -> tensor<2x5x18xsi64>
  %9 = fx.repeat %y {repeats = array<i64: 2, 1, 3>} : (tensor<5x6xsi64>) -> tensor<2x5x18xsi64>
  // CHECK: fx.diagonal %{{.*}} {offset = 2 : i64} : (tensor<5x6xsi64>) -> tensor<4xsi64>
  %10 = fx.diagonal %y {offset = 2} : (tensor<5x6xsi64>) -> tensor<4xsi64>
  // CHECK: fx.diagonal %{{.*}} {dim1 = 2 : i64, dim2 = 3 : i64, offset = -3 : i64} : (tensor<2x3x8x8xf32>) -> tensor<2x3x5xf32>
  %11 = fx.diagonal %x {offset = -3, dim1 = 2, dim2 = 3} : (tensor<2x3x8x8xf32>) -> tensor<2x3x5xf32>
  fx.output
}

// -----

// Tests copy and the scatters into views, which functionalised graphs use
// for in-place updates.
// CHECK-LABEL: fx.graph @scatters_into_views
fx.graph @scatters_into_views(%x: tensor<4x10xf32>, %row: tensor<10xf32>, %cols: tensor<4x3xf32>,
                              %h: tensor<1x10xf16>, %flat: tensor<6xf32>) {
  // CHECK: fx.copy %{{.*}}, %{{.*}} : (tensor<4x10xf32>, tensor<1x10xf16>) -> tensor<4x10xf32>
  %0 = fx.copy %x, %h : (tensor<4x10xf32>, tensor<1x10xf16>) -> tensor<4x10xf32>
  // CHECK: fx.slice_scatter %{{.*}}, %{{.*}} {dim = 1 : i64, end = 9 : i64, start = 3 : i64, step = 2 : i64} : (tensor<4x10xf32>, tensor<4x3xf32>) -> tensor<4x10xf32>
  %1 = fx.slice_scatter %x, %cols {dim = 1, start = 3, end = 9, step = 2} : (tensor<4x10xf32>, tensor<4x3xf32>) -> tensor<4x10xf32>
  // CHECK: fx.select_scatter %{{.*}}, %{{.*}} {dim = 0 : i64, index = 2 : i64} : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  %2 = fx.select_scatter %x, %row {dim = 0, index = 2} : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  // CHECK: fx.as_strided_scatter %{{.*}}, %{{.*}} {stride = array<i64: 2>} : (tensor<4x10xf32>, tensor<6xf32>) -> tensor<4x10xf32>
  %3 = fx.as_strided_scatter %x, %flat {stride = array<i64: 2>} : (tensor<4x10xf32>, tensor<6xf32>) -> tensor<4x10xf32>
  fx.output
}

// -----

// Tests view_as_complex and view_as_real: a last dimension of size 2 and
// complex numbers, both ways.
// CHECK-LABEL: fx.graph @complex_views
fx.graph @complex_views(%x: tensor<?x8x2xf32>, %z: tensor<3xcomplex<f64>>) {
  // CHECK: fx.view_as_complex %{{.*}} : (tensor<?x8x2xf32>) -> tensor<?x8xcomplex<f32>>
  %0 = fx.view_as_complex %x : (tensor<?x8x2xf32>) -> tensor<?x8xcomplex<f32>>
  // CHECK: fx.view_as_real %{{.*}} : (tensor<3xcomplex<f64>>) -> tensor<3x2xf64>
  %1 = fx.view_as_real %z : (tensor<3xcomplex<f64>>) -> tensor<3x2xf64>
  fx.output
}
