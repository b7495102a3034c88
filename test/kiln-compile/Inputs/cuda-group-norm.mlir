fx.graph @forward(%x: tensor<2x8x5x5xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0:3 = fx.native_group_norm %x weight(%w) bias(%b) {group = 4 : i64, eps = 1.0e-05 : f64} : (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
