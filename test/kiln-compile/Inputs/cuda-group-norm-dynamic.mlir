// Group norm of a dynamic batch and extent: moments over [C/G, H, W].
fx.graph @forward(%x: tensor<?x4x?x?xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<?x4x?x?xf32> {
  %0:3 = fx.native_group_norm %x weight(%w) bias(%b) {eps = 1.0e-05 : f64, group = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
  fx.output %0#0 : tensor<?x4x?x?xf32>
}
