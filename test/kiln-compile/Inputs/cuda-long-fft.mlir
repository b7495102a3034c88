// A long convolution's transforms: radix-2 FFTs of 8192 samples; and a 2-d
// transform of 100 x 64, one dimension at a time (direct sums along 100,
// butterflies along 64).
fx.graph @forward(%x: tensor<2x8192xf32>, %g: tensor<100x64xf32>) -> (tensor<2x4097xcomplex<f32>>, tensor<2x8192xf32>, tensor<100x64xf32>) {
  %0 = fx.fft_r2c %x {dim = array<i64: 1>, normalization = 0, onesided = true} : (tensor<2x8192xf32>) -> tensor<2x4097xcomplex<f32>>
  %1 = fx.fft_c2r %0 {dim = array<i64: 1>, normalization = 2, last_dim_size = 8192} : (tensor<2x4097xcomplex<f32>>) -> tensor<2x8192xf32>
  %2 = fx.fft_r2c %g {dim = array<i64: 0, 1>, normalization = 0, onesided = true} : (tensor<100x64xf32>) -> tensor<100x33xcomplex<f32>>
  %3 = fx.fft_c2r %2 {dim = array<i64: 0, 1>, normalization = 2, last_dim_size = 64} : (tensor<100x33xcomplex<f32>>) -> tensor<100x64xf32>
  fx.output %0, %1, %3 : tensor<2x4097xcomplex<f32>>, tensor<2x8192xf32>, tensor<100x64xf32>
}
