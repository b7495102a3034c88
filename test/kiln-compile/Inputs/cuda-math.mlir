// Core ATen's remaining elementwise math: libdevice functions (acos, atanh,
// tan, log10, exp2, powf), rounding, classification and erfinv's
// polynomial, in f32 and bf16; bilinear upsampling and grid sampling.
fx.graph @forward(%x: tensor<4x64xf32>, %y: tensor<64xf32>, %h: tensor<4x64xbf16>, %i: tensor<4x64xsi32>, %img: tensor<1x2x4x4xf32>, %grid: tensor<1x3x3x2xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xbf16>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xi1>, tensor<4x64xsi32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<1x2x8x8xf32>, tensor<1x2x3x3xf32>) {
  %0 = fx.acos %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %1 = fx.atanh %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %2 = fx.tan %h : (tensor<4x64xbf16>) -> tensor<4x64xbf16>
  %3 = fx.log10 %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %4 = fx.exp2 %i : (tensor<4x64xsi32>) -> tensor<4x64xf32>
  %5 = fx.isinf %h : (tensor<4x64xbf16>) -> tensor<4x64xi1>
  %6 = fx.sign %i : tensor<4x64xsi32>
  %7 = fx.pow %x, %y : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %8 = fx.erfinv %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %9 = fx.lerp %x, %x, %y : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %10 = fx.upsample_bilinear2d %img {align_corners = false, scale_factors = array<f64: 2.0, 2.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  %11 = fx.grid_sampler_2d %img, %grid {interpolation_mode = 0 : i64, padding_mode = 1 : i64, align_corners = true} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  fx.output %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xbf16>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xi1>, tensor<4x64xsi32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<1x2x8x8xf32>, tensor<1x2x3x3xf32>
}
