// Rotary embeddings written with complex numbers (bf16 pairs as complex,
// times e^{iθ}, back to real), and a complex quotient.
fx.graph @forward(%x: tensor<2x8x4x16xbf16>, %freqs: tensor<1x8x1x8xcomplex<f32>>) -> (tensor<2x8x4x16xbf16>, tensor<1x8x1x8xcomplex<f32>>) {
  %0 = fx.to_copy %x {dtype = f32} : (tensor<2x8x4x16xbf16>) -> tensor<2x8x4x16xf32>
  %1 = fx.view %0 : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x8x2xf32>
  %2 = fx.view_as_complex %1 : (tensor<2x8x4x8x2xf32>) -> tensor<2x8x4x8xcomplex<f32>>
  %3 = fx.mul %2, %freqs : (tensor<2x8x4x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>) -> tensor<2x8x4x8xcomplex<f32>>
  %4 = fx.view_as_real %3 : (tensor<2x8x4x8xcomplex<f32>>) -> tensor<2x8x4x8x2xf32>
  %5 = fx.view %4 : (tensor<2x8x4x8x2xf32>) -> tensor<2x8x4x16xf32>
  %6 = fx.to_copy %5 {dtype = bf16} : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xbf16>
  %7 = fx.add_scalar %freqs {other = 1 : i64} : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %8 = fx.div %freqs, %7 : (tensor<1x8x1x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  fx.output %6, %8 : tensor<2x8x4x16xbf16>, tensor<1x8x1x8xcomplex<f32>>
}
