// Upsampling of images of any size: the result's sizes and the scales come
// from the run-time sizes.
fx.graph @forward(%x: tensor<?x2x?x?xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) {
  %0 = fx.upsample_bilinear2d %x {align_corners = true, scale_factors = array<f64: 2.0, 3.0>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %1 = fx.upsample_nearest2d %x {scale_factors = array<f64: 2.0, 2.0>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  fx.output %0, %1 : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>
}
