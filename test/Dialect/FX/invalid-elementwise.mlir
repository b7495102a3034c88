// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that a unary math op on an integral tensor computes in f32.
fx.graph @int_to_float_result(%i: tensor<4xsi32>) {
  // expected-error @+1 {{'fx.exp' op result type 'tensor<4xf64>' does not match operand 'tensor<4xsi32>': expected 'tensor<4xf32>'}}
  %0 = fx.exp %i : (tensor<4xsi32>) -> tensor<4xf64>
  fx.output
}

// -----

fx.graph @abs_complex_is_real(%c: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'fx.abs' op result type 'tensor<4xcomplex<f32>>' does not match operand 'tensor<4xcomplex<f32>>': expected 'tensor<4xf32>'}}
  %0 = fx.abs %c : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output
}

// -----

// Tests that an int scalar does not change a float tensor's dtype.
fx.graph @int_scalar_keeps_float(%x: tensor<4xf16>) {
  // expected-error @+1 {{'fx.mul_scalar' op result type 'tensor<4xf32>' does not match operand 'tensor<4xf16>' and `other` = 2 : i64: expected 'tensor<4xf16>'}}
  %0 = fx.mul_scalar %x {other = 2} : (tensor<4xf16>) -> tensor<4xf32>
  fx.output
}

// -----

// Tests that a float scalar makes an integral tensor f32 (the default dtype),
// not f64.
fx.graph @float_scalar_on_int(%i: tensor<4xsi64>) {
  // expected-error @+1 {{expected 'tensor<4xf32>'}}
  %0 = fx.add_scalar %i {other = 0.5} : (tensor<4xsi64>) -> tensor<4xf64>
  fx.output
}

// -----

fx.graph @comparison_is_bool(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fx.lt_scalar' op result #0 must be ranked tensor of bool (i1) values}}
  %0 = fx.lt_scalar %x {other = 0} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output
}

// -----

// Tests that the condition of where broadcasts but does not promote.
fx.graph @where_condition_does_not_promote(%c: tensor<4xi1>, %x: tensor<4xsi32>) {
  // expected-error @+1 {{'fx.where' op result type 'tensor<4xi1>' does not match operands 'tensor<4xi1>', 'tensor<4xsi32>' and 'tensor<4xsi32>': expected 'tensor<4xsi32>'}}
  %0 = fx.where %c, %x, %x : (tensor<4xi1>, tensor<4xsi32>, tensor<4xsi32>) -> tensor<4xi1>
  fx.output
}

// -----

fx.graph @ternary_not_broadcastable(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'fx.where' op operands 'tensor<2x1xi1>', 'tensor<3xf32>' and 'tensor<4xf32>' are not broadcastable: sizes 3 and 4 at dimension 1 of the broadcast result cannot be broadcast together}}
  %0 = fx.where %c, %x, %y : (tensor<2x1xi1>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  fx.output
}

// -----

fx.graph @clamp_tensor_bounds_broadcast(%x: tensor<3x4xf32>, %lo: tensor<3xf32>) {
  // expected-error @+1 {{'fx.clamp_tensor' op operands 'tensor<3x4xf32>' and 'tensor<3xf32>' are not broadcastable}}
  %0 = fx.clamp_tensor %x min(%lo) : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  fx.output
}

// -----

fx.graph @sub_scalar_bool(%p: tensor<4xi1>) {
  // expected-error @+1 {{'fx.sub_scalar' op cannot subtract with a bool tensor, as PyTorch cannot}}
  %0 = fx.sub_scalar %p {other = 1} : (tensor<4xi1>) -> tensor<4xsi64>
  fx.output
}

// -----

fx.graph @float_value_on_int(%i: tensor<4xsi32>) {
  // expected-error @+1 {{'fx.addcmul' op floating value 5.000000e-01 : f64 cannot be applied to an integral result of dtype 'si32'}}
  %0 = fx.addcmul %i, %i, %i {value = 0.5} : (tensor<4xsi32>, tensor<4xsi32>, tensor<4xsi32>) -> tensor<4xsi32>
  fx.output
}

// -----

fx.graph @cast_dtype(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fx.to_copy' op result type 'tensor<4xf32>' does not match operand 'tensor<4xf32>': expected 'tensor<4xf16>'}}
  %0 = fx.to_copy %x {dtype = f16} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @rounding_mode(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fx.div_mode' op attribute 'rounding_mode' failed to satisfy constraint: string attribute whose value is one of 'trunc', 'floor'}}
  %0 = fx.div_mode %x, %x {rounding_mode = "round"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @same_type_unary(%i: tensor<4xsi32>) {
  // expected-error @+1 {{'fx.gelu' op operand #0 must be ranked tensor of PyTorch floating dtype values}}
  %0 = fx.gelu %i : tensor<4xsi32>
  fx.output
}

// -----

fx.graph @complex_from_integers(%a: tensor<4xsi64>) {
  // expected-error @+1 {{'fx.complex' op operand #0 must be ranked tensor of PyTorch floating dtype values}}
  %0 = fx.complex %a, %a : (tensor<4xsi64>, tensor<4xsi64>) -> tensor<4xcomplex<f32>>
  fx.output
}

// -----

fx.graph @polar_of_mixed_widths(%r: tensor<4xf32>, %t: tensor<4xf64>) {
  // expected-error @+1 {{'fx.polar' op result type 'tensor<4xcomplex<f32>>' does not match operands 'tensor<4xf32>' and 'tensor<4xf64>': expected 'tensor<4xcomplex<f64>>'}}
  %0 = fx.polar %r, %t : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xcomplex<f32>>
  fx.output
}

// -----

fx.graph @complex_of_halves(%a: tensor<4xf16>) {
  // expected-error @+1 {{'fx.complex' op result type 'tensor<4xcomplex<f32>>' does not match operands 'tensor<4xf16>' and 'tensor<4xf16>': expected 'tensor<4xf16>'}}
  %0 = fx.complex %a, %a : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xcomplex<f32>>
  fx.output
}

// -----

fx.graph @angle_of_complex_is_real(%z: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'fx.angle' op result #0 must be ranked tensor of PyTorch floating dtype values}}
  %0 = fx.angle %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output
}
