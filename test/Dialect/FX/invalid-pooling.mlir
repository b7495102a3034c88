// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @pool_rank(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'fx.max_pool2d_with_indices' op `self` 'tensor<8x8xf32>' must have rank 3 or 4}}
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 2>} : (tensor<8x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xsi64>)
  fx.output
}

// -----

fx.graph @pool_kernel_count(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.avg_pool2d' op `kernel_size` has 3 entries; expected 2 (one per spatial dimension) or 1}}
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 2, 2, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  fx.output
}

// -----

fx.graph @pool_positive(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.avg_pool2d' op window parameters must be positive (padding not negative) in spatial dimension 0}}
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 0, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  fx.output
}

// -----

fx.graph @pool_padding(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.max_pool2d_with_indices' op `padding` 2 exceeds half the window in spatial dimension 0}}
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 2>, padding = array<i64: 2>}
      : (tensor<1x2x8x8xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x2x6x6xsi64>)
  fx.output
}

// -----

fx.graph @pool_fits(%x: tensor<1x2x2x8xf32>) {
  // expected-error @+1 {{'fx.avg_pool2d' op the window does not fit: spatial dimension 0 of 'tensor<1x2x2x8xf32>' gives output size 0}}
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 3>} : (tensor<1x2x2x8xf32>) -> tensor<1x2x0x2xf32>
  fx.output
}

// -----

fx.graph @pool_divisor(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.avg_pool2d' op `divisor_override` must not be 0}}
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 2>, divisor_override = 0} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  fx.output
}

// -----

// Tests that ceil_mode keeps a last partial window.
fx.graph @pool_ceil_mode(%x: tensor<1x2x9x9xf32>) {
  // expected-error @+1 {{'fx.max_pool2d_with_indices' op result #0 type 'tensor<1x2x4x4xf32>' does not match the inferred type 'tensor<1x2x5x5xf32>'}}
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 2>, ceil_mode = true}
      : (tensor<1x2x9x9xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xsi64>)
  fx.output
}

// -----

fx.graph @pool_backward_grad(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.avg_pool2d_backward' op `grad_output` 'tensor<1x2x3x3xf32>' does not have the forward's output shape [1, 2, 4, 4]}}
  %0 = fx.avg_pool2d_backward %g, %x {kernel_size = array<i64: 2>, stride = array<i64: 2>, padding = array<i64: 0>, ceil_mode = false, count_include_pad = true}
      : (tensor<1x2x3x3xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  fx.output
}

// -----

fx.graph @pool_backward_indices(%g: tensor<1x2x4x4xf32>, %x: tensor<1x2x8x8xf32>, %i: tensor<1x2x3x3xsi64>) {
  // expected-error @+1 {{'fx.max_pool2d_with_indices_backward' op `indices` 'tensor<1x2x3x3xsi64>' does not have the forward's output shape [1, 2, 4, 4]}}
  %0 = fx.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 2>, stride = array<i64: 2>, padding = array<i64: 0>, dilation = array<i64: 1>, ceil_mode = false}
      : (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<1x2x3x3xsi64>) -> tensor<1x2x8x8xf32>
  fx.output
}

// -----

fx.graph @adaptive_leading(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.adaptive_avg_pool2d' op result type 'tensor<1x3x1x1xf32>' does not match the inferred type 'tensor<1x2x?x?xf32>'}}
  %0 = fx.adaptive_avg_pool2d %x : (tensor<1x2x8x8xf32>) -> tensor<1x3x1x1xf32>
  fx.output
}

// -----

fx.graph @adaptive_empty(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.adaptive_avg_pool2d' op result 'tensor<1x2x0x1xf32>' must have positive spatial sizes}}
  %0 = fx.adaptive_avg_pool2d %x : (tensor<1x2x8x8xf32>) -> tensor<1x2x0x1xf32>
  fx.output
}

// -----

fx.graph @adaptive_backward(%g: tensor<1x3x1x1xf32>, %x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.adaptive_avg_pool2d_backward' op `grad_output` 'tensor<1x3x1x1xf32>' must have the rank and leading sizes of `self` 'tensor<1x2x8x8xf32>'}}
  %0 = fx.adaptive_avg_pool2d_backward %g, %x : (tensor<1x3x1x1xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  fx.output
}

// -----

fx.graph @upsample_unbatched(%x: tensor<2x8x8xf32>) {
  // expected-error @+1 {{'fx.upsample_nearest2d' op `input` 'tensor<2x8x8xf32>' must have rank 4}}
  %0 = fx.upsample_nearest2d %x : (tensor<2x8x8xf32>) -> tensor<2x16x16xf32>
  fx.output
}

// -----

fx.graph @upsample_scales_count(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.upsample_bilinear2d' op `scale_factors` has 1 entries; expected 2}}
  %0 = fx.upsample_bilinear2d %x {align_corners = true, scale_factors = array<f64: 2.0>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x16x16xf32>
  fx.output
}

// -----

fx.graph @upsample_linear_rank(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.upsample_linear1d' op `input` 'tensor<1x2x8x8xf32>' must have rank 3}}
  %0 = fx.upsample_linear1d %x {align_corners = false} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32>
  fx.output
}

// -----

fx.graph @upsample_trilinear_scales_count(%x: tensor<1x2x4x8x8xf32>) {
  // expected-error @+1 {{'fx.upsample_trilinear3d' op `scale_factors` has 2 entries; expected 3}}
  %0 = fx.upsample_trilinear3d %x {align_corners = false, scale_factors = array<f64: 2.0, 2.0>} : (tensor<1x2x4x8x8xf32>) -> tensor<1x2x8x16x16xf32>
  fx.output
}

// -----

fx.graph @upsample_bicubic_integers(%x: tensor<1x2x8x8xsi32>) {
  // expected-error @+1 {{'fx.upsample_bicubic2d' op operand #0 must be}}
  %0 = fx.upsample_bicubic2d %x {align_corners = false} : (tensor<1x2x8x8xsi32>) -> tensor<1x2x16x16xsi32>
  fx.output
}

// -----

fx.graph @upsample_nearest3d_empty(%x: tensor<1x2x4x8x8xf32>) {
  // expected-error @+1 {{'fx.upsample_nearest3d' op result 'tensor<1x2x0x16x16xf32>' must have positive spatial sizes}}
  %0 = fx.upsample_nearest3d %x : (tensor<1x2x4x8x8xf32>) -> tensor<1x2x0x16x16xf32>
  fx.output
}

// -----

fx.graph @upsample_scales(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'fx.upsample_nearest2d' op result type 'tensor<1x2x16x16xf32>' does not match the inferred type 'tensor<1x2x16x12xf32>'}}
  %0 = fx.upsample_nearest2d %x {scale_factors = array<f64: 2.0, 1.5>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x16x16xf32>
  fx.output
}

// -----

fx.graph @grid_shape(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x4x3xf32>) {
  // expected-error @+1 {{'fx.grid_sampler_2d' op `grid` 'tensor<1x4x4x3xf32>' must be [N, H_out, W_out, 2] for `input` 'tensor<1x3x8x8xf32>'}}
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 0, padding_mode = 0, align_corners = false}
      : (tensor<1x3x8x8xf32>, tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
  fx.output
}

// -----

fx.graph @grid_dtype(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x4x2xf16>) {
  // expected-error @+1 {{'fx.grid_sampler_2d' op `grid` 'tensor<1x4x4x2xf16>' must have the dtype of `input` 'tensor<1x3x8x8xf32>'}}
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 0, padding_mode = 0, align_corners = false}
      : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf16>) -> tensor<1x3x4x4xf32>
  fx.output
}

// -----

fx.graph @col2im_rank(%x: tensor<12xf32>) {
  // expected-error @+1 {{'fx.col2im' op `self` 'tensor<12xf32>' must have rank 2 or 3}}
  %0 = fx.col2im %x {kernel_size = array<i64: 2>, dilation = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 1>}
      : (tensor<12xf32>) -> tensor<3x8x8xf32>
  fx.output
}

// -----

fx.graph @col2im_stride(%x: tensor<2x12x49xf32>) {
  // expected-error @+1 {{'fx.col2im' op window parameters must be positive (padding not negative) in spatial dimension 0}}
  %0 = fx.col2im %x {kernel_size = array<i64: 2>, dilation = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 0>}
      : (tensor<2x12x49xf32>) -> tensor<2x3x8x8xf32>
  fx.output
}

// -----

fx.graph @col2im_overflows(%x: tensor<2x12x49xf32>) {
  // expected-error @+1 {{'fx.col2im' op the number of blocks or of their channels overflows}}
  %0 = fx.col2im %x {kernel_size = array<i64: 2, 4611686018427387904>, dilation = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 1>}
      : (tensor<2x12x49xf32>) -> tensor<2x3x8x8xf32>
  fx.output
}

// -----

fx.graph @pool_size_overflows(%x: tensor<1x2x9223372036854775807x8xf32>) {
  // expected-error @+1 {{'fx.avg_pool2d' op the window's output size overflows in spatial dimension 0}}
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 3>, stride = array<i64: 1>, padding = array<i64: 1>} : (tensor<1x2x9223372036854775807x8xf32>) -> tensor<1x2x8x8xf32>
  fx.output
}

// -----

fx.graph @col2im_blocks(%x: tensor<2x12x50xf32>) {
  // expected-error @+1 {{'fx.col2im' op `self` 'tensor<2x12x50xf32>' must be [.., 12, 49]: C * kh * kw channels and one column per block of the result 'tensor<2x3x8x8xf32>'}}
  %0 = fx.col2im %x {kernel_size = array<i64: 2>, dilation = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 1>}
      : (tensor<2x12x50xf32>) -> tensor<2x3x8x8xf32>
  fx.output
}

// -----

fx.graph @upsample_names_too_few_sizes(
    %x: tensor<1x2x?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [1, 2, s0, 4]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.upsample_nearest2d' op `size_symbols` names 1 sizes, but the result 'tensor<1x2x?x?xf32>' has 2 dynamic dimensions}}
  %0 = fx.upsample_nearest2d %x {size_symbols = ["s0"]} : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x?xf32>
  fx.output
}

// -----

fx.graph @upsample_names_an_unknown_symbol(
    %x: tensor<1x2x?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [1, 2, s0, 4]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.upsample_bilinear2d' op `size_symbols` names 'zz', which is not a size symbol of the graph}}
  %0 = fx.upsample_bilinear2d %x {align_corners = false, size_symbols = ["zz"]} : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  fx.output
}
