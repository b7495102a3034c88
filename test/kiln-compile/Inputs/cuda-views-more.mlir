fx.graph @forward(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<2x6x4xf32>, tensor<3x1xf32>, tensor<3x3xf32>, tensor<3x7xf32>) {
  %0 = fx.flip %x {dims = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = fx.repeat %x {repeats = array<i64: 2, 2, 1>} : (tensor<3x4xf32>) -> tensor<2x6x4xf32>
  %2:2 = fx.split_with_sizes %x {dim = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x3xf32>)
  %3 = fx.constant_pad_nd %x {pad = array<i64: 1, 2>, value = 1.5 : f64} : (tensor<3x4xf32>) -> tensor<3x7xf32>
  fx.output %0, %1, %2#0, %2#1, %3 : tensor<3x4xf32>, tensor<2x6x4xf32>, tensor<3x1xf32>, tensor<3x3xf32>, tensor<3x7xf32>
}
