// Three results that read %x: one row kernel (sibling fusion).
fx.graph @forward(%x: tensor<8x512xf32>, %y: tensor<8x512xbf16>) -> (tensor<8x512xf32>, tensor<8x512xf32>, tensor<8x512xbf16>) {
  %0 = fx.mul_scalar %x {other = 2.0 : f64} : (tensor<8x512xf32>) -> tensor<8x512xf32>
  %1 = fx.sigmoid %x : (tensor<8x512xf32>) -> tensor<8x512xf32>
  %2 = fx.mul %x, %y : (tensor<8x512xf32>, tensor<8x512xbf16>) -> tensor<8x512xf32>
  %3 = fx.to_copy %2 {dtype = bf16} : (tensor<8x512xf32>) -> tensor<8x512xbf16>
  fx.output %0, %1, %3 : tensor<8x512xf32>, tensor<8x512xf32>, tensor<8x512xbf16>
}
