fx.graph @forward(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) {
  %0 = fx.elu %x {alpha = 1.0 : f64, scale = 1.0 : f64, input_scale = 1.0 : f64} : tensor<4x64xf32>
  %1 = fx.mish %x : tensor<4x64xf32>
  %2 = fx.softplus %x {beta = 1.0 : f64, threshold = 20.0 : f64} : tensor<4x64xf32>
  %3 = fx.log1p %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  fx.output %0, %1, %2, %3 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}
