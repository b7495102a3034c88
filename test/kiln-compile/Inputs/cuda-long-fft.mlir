// A long convolution's transforms: radix-2 FFTs of 8192 samples; a 2-d
// transform of 100 x 64, one dimension at a time (direct sums along 100,
// butterflies along 64); and Bluestein's transform of 5000 complex samples
// forward and back (power-of-two FFTs of 16384).
fx.graph @forward(%x: tensor<2x8192xf32>, %g: tensor<100x64xf32>, %z: tensor<5000xcomplex<f32>>) -> (tensor<2x4097xcomplex<f32>>, tensor<2x8192xf32>, tensor<100x64xf32>, tensor<5000xcomplex<f32>>) {
  %0 = fx.fft_r2c %x {dim = array<i64: 1>, normalization = 0, onesided = true} : (tensor<2x8192xf32>) -> tensor<2x4097xcomplex<f32>>
  %1 = fx.fft_c2r %0 {dim = array<i64: 1>, normalization = 2, last_dim_size = 8192} : (tensor<2x4097xcomplex<f32>>) -> tensor<2x8192xf32>
  %2 = fx.fft_r2c %g {dim = array<i64: 0, 1>, normalization = 0, onesided = true} : (tensor<100x64xf32>) -> tensor<100x33xcomplex<f32>>
  %3 = fx.fft_c2r %2 {dim = array<i64: 0, 1>, normalization = 2, last_dim_size = 64} : (tensor<100x33xcomplex<f32>>) -> tensor<100x64xf32>
  %4 = fx.fft_c2c %z {dim = array<i64: 0>, normalization = 0, forward = true} : (tensor<5000xcomplex<f32>>) -> tensor<5000xcomplex<f32>>
  %5 = fx.fft_c2c %4 {dim = array<i64: 0>, normalization = 2, forward = false} : (tensor<5000xcomplex<f32>>) -> tensor<5000xcomplex<f32>>
  fx.output %0, %1, %3, %5 : tensor<2x4097xcomplex<f32>>, tensor<2x8192xf32>, tensor<100x64xf32>, tensor<5000xcomplex<f32>>
}
