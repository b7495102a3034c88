// Rotary embeddings written with complex numbers (bf16 pairs as complex,
// times e^{iθ}, back to real), a complex quotient, the conjugate of the
// sigmoid of the sine of the tanh of a power of a root of a logarithm, numbers from polar coordinates, absolute values,
// angles, a complex batched product and a complex fill.
fx.graph @forward(%x: tensor<2x8x4x16xbf16>, %freqs: tensor<1x8x1x8xcomplex<f32>>, %r: tensor<8xf32>, %a: tensor<2x3x4xcomplex<f32>>, %b: tensor<2x4x5xcomplex<f32>>) -> (tensor<2x8x4x16xbf16>, tensor<1x8x1x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>, tensor<8xcomplex<f32>>, tensor<1x8x1x8xf32>, tensor<1x8x1x8xf32>, tensor<2x3x5xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.to_copy %x {dtype = f32} : (tensor<2x8x4x16xbf16>) -> tensor<2x8x4x16xf32>
  %1 = fx.view %0 : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x8x2xf32>
  %2 = fx.view_as_complex %1 : (tensor<2x8x4x8x2xf32>) -> tensor<2x8x4x8xcomplex<f32>>
  %3 = fx.mul %2, %freqs : (tensor<2x8x4x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>) -> tensor<2x8x4x8xcomplex<f32>>
  %4 = fx.view_as_real %3 : (tensor<2x8x4x8xcomplex<f32>>) -> tensor<2x8x4x8x2xf32>
  %5 = fx.view %4 : (tensor<2x8x4x8x2xf32>) -> tensor<2x8x4x16xf32>
  %6 = fx.to_copy %5 {dtype = bf16} : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xbf16>
  %7 = fx.add_scalar %freqs {other = 1 : i64} : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %8 = fx.div %freqs, %7 : (tensor<1x8x1x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %l = fx.log %freqs : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %s = fx.sqrt %l : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %p = fx.pow_tensor_scalar %s {exponent = 1.500000e+00 : f64} : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %t = fx.tanh %p : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %u = fx.sin %t : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %v = fx.sigmoid %u : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xcomplex<f32>>
  %9 = fx.conj %v : tensor<1x8x1x8xcomplex<f32>>
  %10 = fx.polar %r, %r : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xcomplex<f32>>
  %11 = fx.abs %8 : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xf32>
  %12 = fx.angle %8 : (tensor<1x8x1x8xcomplex<f32>>) -> tensor<1x8x1x8xf32>
  %13 = fx.bmm %a, %b : (tensor<2x3x4xcomplex<f32>>, tensor<2x4x5xcomplex<f32>>) -> tensor<2x3x5xcomplex<f32>>
  %14 = fx.full {dtype = complex<f32>, fill_value = 0 : i64} : () -> tensor<4xcomplex<f32>>
  fx.output %6, %8, %9, %10, %11, %12, %13, %14 : tensor<2x8x4x16xbf16>, tensor<1x8x1x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>, tensor<8xcomplex<f32>>, tensor<1x8x1x8xf32>, tensor<1x8x1x8xf32>, tensor<2x3x5xcomplex<f32>>, tensor<4xcomplex<f32>>
}
