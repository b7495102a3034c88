// A long convolution's transforms: radix-2 FFTs of 8192 samples.
fx.graph @forward(%x: tensor<2x8192xf32>) -> (tensor<2x4097xcomplex<f32>>, tensor<2x8192xf32>) {
  %0 = fx.fft_r2c %x {dim = array<i64: 1>, normalization = 0, onesided = true} : (tensor<2x8192xf32>) -> tensor<2x4097xcomplex<f32>>
  %1 = fx.fft_c2r %0 {dim = array<i64: 1>, normalization = 2, last_dim_size = 8192} : (tensor<2x4097xcomplex<f32>>) -> tensor<2x8192xf32>
  fx.output %0, %1 : tensor<2x4097xcomplex<f32>>, tensor<2x8192xf32>
}
