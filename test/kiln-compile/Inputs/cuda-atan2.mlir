fx.graph @forward(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = fx.atan2 %x, %y : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  fx.output %0 : tensor<4x64xf32>
}
