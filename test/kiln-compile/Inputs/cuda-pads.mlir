fx.graph @forward(%x: tensor<2x7xf32>, %y: tensor<1x1x4x7xf32>) -> (tensor<2x12xf32>, tensor<2x10xf32>, tensor<1x1x8x14xf32>) {
  %0 = fx.reflection_pad1d %x {padding = array<i64: 2, 3>} : (tensor<2x7xf32>) -> tensor<2x12xf32>
  %1 = fx.replication_pad2d %x {padding = array<i64: 1, 2, 0, 0>} : (tensor<2x7xf32>) -> tensor<2x10xf32>
  %2 = fx.upsample_nearest2d %y {scale_factors = array<f64: 2.0, 2.0>} : (tensor<1x1x4x7xf32>) -> tensor<1x1x8x14xf32>
  fx.output %0, %1, %2 : tensor<2x12xf32>, tensor<2x10xf32>, tensor<1x1x8x14xf32>
}
