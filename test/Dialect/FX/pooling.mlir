// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests max pooling (ResNet's stem), ceil_mode, 3-d and unbatched inputs,
// and the backward.
// CHECK-LABEL: fx.graph @max_pool
fx.graph @max_pool(%x: tensor<?x64x112x112xf32>, %g: tensor<?x64x56x56xf32>, %ix: tensor<?x64x56x56xsi64>,
                   %u: tensor<3x10x10xf16>, %v: tensor<2x4x8x8x8xf32>) {
  // CHECK: fx.max_pool2d_with_indices %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x64x112x112xf32>) -> (tensor<?x64x56x56xf32>, tensor<?x64x56x56xsi64>)
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
      : (tensor<?x64x112x112xf32>) -> (tensor<?x64x56x56xf32>, tensor<?x64x56x56xsi64>)
  // An empty stride is the kernel size; ceil_mode keeps the partial window.
  // CHECK: fx.max_pool2d_with_indices %{{.*}} {ceil_mode = true, kernel_size = array<i64: 3>} : (tensor<3x10x10xf16>) -> (tensor<3x4x4xf16>, tensor<3x4x4xsi64>)
  %1:2 = fx.max_pool2d_with_indices %u {kernel_size = array<i64: 3>, ceil_mode = true}
      : (tensor<3x10x10xf16>) -> (tensor<3x4x4xf16>, tensor<3x4x4xsi64>)
  // CHECK: fx.max_pool2d_with_indices_backward %{{.*}}, %{{.*}}, %{{.*}} {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>, tensor<?x64x112x112xf32>, tensor<?x64x56x56xsi64>) -> tensor<?x64x112x112xf32>
  %2 = fx.max_pool2d_with_indices_backward %g, %x, %ix {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<?x64x56x56xf32>, tensor<?x64x112x112xf32>, tensor<?x64x56x56xsi64>) -> tensor<?x64x112x112xf32>
  // CHECK: fx.max_pool3d_with_indices %{{.*}} {kernel_size = array<i64: 2, 2, 2>} : (tensor<2x4x8x8x8xf32>) -> (tensor<2x4x4x4x4xf32>, tensor<2x4x4x4x4xsi64>)
  %3:2 = fx.max_pool3d_with_indices %v {kernel_size = array<i64: 2, 2, 2>}
      : (tensor<2x4x8x8x8xf32>) -> (tensor<2x4x4x4x4xf32>, tensor<2x4x4x4x4xsi64>)
  fx.output
}

// -----

// Tests average pooling and adaptive average pooling (the output size is the
// result's).
// CHECK-LABEL: fx.graph @avg_pool
fx.graph @avg_pool(%x: tensor<?x256x14x14xf32>, %g: tensor<?x256x7x7xf32>, %v: tensor<1x2x4x6x6xf32>,
                   %gp: tensor<?x256x1x1xf32>) {
  // CHECK: fx.avg_pool2d %{{.*}} {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<?x256x14x14xf32>) -> tensor<?x256x7x7xf32>
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<?x256x14x14xf32>) -> tensor<?x256x7x7xf32>
  // CHECK: fx.avg_pool2d %{{.*}} {count_include_pad = false, divisor_override = 4 : i64, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
  %1 = fx.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, count_include_pad = false, divisor_override = 4}
      : (tensor<?x256x14x14xf32>) -> tensor<?x256x14x14xf32>
  // CHECK: fx.avg_pool2d_backward %{{.*}}, %{{.*}} {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<?x256x7x7xf32>, tensor<?x256x14x14xf32>) -> tensor<?x256x14x14xf32>
  %2 = fx.avg_pool2d_backward %g, %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = true}
      : (tensor<?x256x7x7xf32>, tensor<?x256x14x14xf32>) -> tensor<?x256x14x14xf32>
  // CHECK: fx.avg_pool3d %{{.*}} {kernel_size = array<i64: 2>} : (tensor<1x2x4x6x6xf32>) -> tensor<1x2x2x3x3xf32>
  %3 = fx.avg_pool3d %v {kernel_size = array<i64: 2>} : (tensor<1x2x4x6x6xf32>) -> tensor<1x2x2x3x3xf32>
  // CHECK: fx.adaptive_avg_pool2d %{{.*}} : (tensor<?x256x14x14xf32>) -> tensor<?x256x1x1xf32>
  %4 = fx.adaptive_avg_pool2d %x : (tensor<?x256x14x14xf32>) -> tensor<?x256x1x1xf32>
  // CHECK: fx.adaptive_avg_pool2d_backward %{{.*}}, %{{.*}} : (tensor<?x256x1x1xf32>, tensor<?x256x14x14xf32>) -> tensor<?x256x14x14xf32>
  %5 = fx.adaptive_avg_pool2d_backward %gp, %x : (tensor<?x256x1x1xf32>, tensor<?x256x14x14xf32>) -> tensor<?x256x14x14xf32>
  // CHECK: fx.adaptive_avg_pool3d %{{.*}} : (tensor<1x2x4x6x6xf32>) -> tensor<1x2x2x2x2xf32>
  %6 = fx.adaptive_avg_pool3d %v : (tensor<1x2x4x6x6xf32>) -> tensor<1x2x2x2x2xf32>
  fx.output
}

// -----

// Tests resampling to the result's size, with or without scale factors.
// CHECK-LABEL: fx.graph @upsample
fx.graph @upsample(%x: tensor<2x3x16x16xf32>, %d: tensor<2x3x?x?xf32>) {
  // CHECK: fx.upsample_nearest2d %{{.*}} : (tensor<2x3x16x16xf32>) -> tensor<2x3x40x40xf32>
  %0 = fx.upsample_nearest2d %x : (tensor<2x3x16x16xf32>) -> tensor<2x3x40x40xf32>
  // CHECK: fx.upsample_nearest2d %{{.*}} {scale_factors = array<f64: 2.000000e+00, 1.500000e+00>} : (tensor<2x3x16x16xf32>) -> tensor<2x3x32x24xf32>
  %1 = fx.upsample_nearest2d %x {scale_factors = array<f64: 2.0, 1.5>} : (tensor<2x3x16x16xf32>) -> tensor<2x3x32x24xf32>
  // CHECK: fx.upsample_bilinear2d %{{.*}} {align_corners = false, scale_factors = array<f64: 2.000000e+00, 2.000000e+00>} : (tensor<2x3x?x?xf32>) -> tensor<2x3x?x?xf32>
  %2 = fx.upsample_bilinear2d %d {align_corners = false, scale_factors = array<f64: 2.0, 2.0>} : (tensor<2x3x?x?xf32>) -> tensor<2x3x?x?xf32>
  fx.output
}

// -----

// Tests resampling over one and three spatial dimensions, and bicubic.
// CHECK-LABEL: fx.graph @upsample_ranks
fx.graph @upsample_ranks(%x: tensor<2x3x16xf32>, %v: tensor<1x2x4x6x8xbf16>, %i: tensor<2x3x16xsi64>, %b: tensor<1x2x5x7xf64>) {
  // CHECK: fx.upsample_nearest1d %{{.*}} {scale_factors = array<f64: 2.500000e+00>} : (tensor<2x3x16xf32>) -> tensor<2x3x40xf32>
  %0 = fx.upsample_nearest1d %x {scale_factors = array<f64: 2.5>} : (tensor<2x3x16xf32>) -> tensor<2x3x40xf32>
  // CHECK: fx.upsample_nearest1d %{{.*}} : (tensor<2x3x16xsi64>) -> tensor<2x3x7xsi64>
  %1 = fx.upsample_nearest1d %i : (tensor<2x3x16xsi64>) -> tensor<2x3x7xsi64>
  // CHECK: fx.upsample_nearest3d %{{.*}} : (tensor<1x2x4x6x8xbf16>) -> tensor<1x2x8x12x16xbf16>
  %2 = fx.upsample_nearest3d %v : (tensor<1x2x4x6x8xbf16>) -> tensor<1x2x8x12x16xbf16>
  // CHECK: fx.upsample_linear1d %{{.*}} {align_corners = true} : (tensor<2x3x16xf32>) -> tensor<2x3x5xf32>
  %3 = fx.upsample_linear1d %x {align_corners = true} : (tensor<2x3x16xf32>) -> tensor<2x3x5xf32>
  // CHECK: fx.upsample_trilinear3d %{{.*}} {align_corners = false, scale_factors = array<f64: 2.000000e+00, 1.000000e+00, 5.000000e-01>} : (tensor<1x2x4x6x8xbf16>) -> tensor<1x2x8x6x4xbf16>
  %4 = fx.upsample_trilinear3d %v {align_corners = false, scale_factors = array<f64: 2.0, 1.0, 0.5>} : (tensor<1x2x4x6x8xbf16>) -> tensor<1x2x8x6x4xbf16>
  // CHECK: fx.upsample_bicubic2d %{{.*}} {align_corners = false} : (tensor<1x2x5x7xf64>) -> tensor<1x2x10x3xf64>
  %5 = fx.upsample_bicubic2d %b {align_corners = false} : (tensor<1x2x5x7xf64>) -> tensor<1x2x10x3xf64>
  fx.output
}

// -----

// Tests grid sampling and col2im (the output size is the result's).
// CHECK-LABEL: fx.graph @sampling_folding
fx.graph @sampling_folding(%x: tensor<?x3x32x32xf32>, %grid: tensor<?x8x8x2xf32>, %cols: tensor<2x12x49xf16>) {
  // CHECK: fx.grid_sampler_2d %{{.*}}, %{{.*}} {align_corners = false, interpolation_mode = 0 : i64, padding_mode = 0 : i64} : (tensor<?x3x32x32xf32>, tensor<?x8x8x2xf32>) -> tensor<?x3x8x8xf32>
  %0 = fx.grid_sampler_2d %x, %grid {interpolation_mode = 0, padding_mode = 0, align_corners = false}
      : (tensor<?x3x32x32xf32>, tensor<?x8x8x2xf32>) -> tensor<?x3x8x8xf32>
  // CHECK: fx.col2im %{{.*}} {dilation = array<i64: 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0>, stride = array<i64: 1>} : (tensor<2x12x49xf16>) -> tensor<2x3x8x8xf16>
  %1 = fx.col2im %cols {kernel_size = array<i64: 2, 2>, dilation = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 1>}
      : (tensor<2x12x49xf16>) -> tensor<2x3x8x8xf16>
  fx.output
}
