// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @shape_mismatch(%a: tensor<4x3xf32>, %b: tensor<5xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'fx.add' op operands 'tensor<4x3xf32>' and 'tensor<5xf32>' are not broadcastable: sizes 3 and 5 at dimension 1 of the broadcast result cannot be broadcast together}}
  %0 = fx.add %a, %b : (tensor<4x3xf32>, tensor<5xf32>) -> tensor<4x3xf32>
  fx.output %0 : tensor<4x3xf32>
}

// -----

fx.graph @wrong_result_shape(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'fx.mul' op result type 'tensor<4x1xf32>' does not match operands 'tensor<4x1xf32>' and 'tensor<3xf32>': expected 'tensor<4x3xf32>'}}
  %0 = fx.mul %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x1xf32>
  fx.output %0 : tensor<4x1xf32>
}

// -----

fx.graph @wrong_result_dtype(%a: tensor<4xsi32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'fx.mul' op result type 'tensor<4xf32>' does not match operands 'tensor<4xsi32>' and 'tensor<4xf16>': expected 'tensor<4xf16>'}}
  %0 = fx.mul %a, %b : (tensor<4xsi32>, tensor<4xf16>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @signless_dtype(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'fx.neg' op operand #0 must be ranked tensor of}}
  %0 = fx.neg %a : tensor<4xi32>
  fx.output %0 : tensor<4xi32>
}

// -----

fx.graph @neg_bool(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'fx.neg' op operand #0 must be ranked tensor of}}
  %0 = fx.neg %a : tensor<4xi1>
  fx.output %0 : tensor<4xi1>
}

// -----

fx.graph @relu_complex(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{'fx.relu' op operand #0 must be ranked tensor of}}
  %0 = fx.relu %a : tensor<4xcomplex<f32>>
  fx.output %0 : tensor<4xcomplex<f32>>
}

// -----

fx.graph @sub_bool(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'fx.sub' op cannot subtract with a bool tensor, as PyTorch cannot}}
  %0 = fx.sub %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  fx.output %0 : tensor<4xi1>
}

// -----

fx.graph @sub_float_bool(%a: tensor<4xf32>, %p: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+1 {{'fx.sub' op cannot subtract with a bool tensor, as PyTorch cannot}}
  %0 = fx.sub %a, %p : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @float_alpha_on_int(%a: tensor<4xsi64>) -> tensor<4xsi64> {
  // expected-error @+1 {{'fx.add' op floating alpha 5.000000e-01 : f64 cannot be applied to an integral result of dtype 'si64'}}
  %0 = fx.add %a, %a {alpha = 0.5 : f64} : (tensor<4xsi64>, tensor<4xsi64>) -> tensor<4xsi64>
  fx.output %0 : tensor<4xsi64>
}

// -----

fx.graph @output_count(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'fx.output' op has 1 operands, but the enclosing graph @output_count returns 2}}
  fx.output %a : tensor<4xf32>
}

// -----

fx.graph @output_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'fx.output' op operand #0 has type 'tensor<4xf32>', but the graph returns 'tensor<4xf16>'}}
  fx.output %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.graph' op argument #1 must be a ranked tensor, but is 'f32'}}
fx.graph @scalar_argument(%a: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  fx.output %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.graph' op result #0 must be a ranked tensor, but is 'tensor<*xf32>'}}
fx.graph @unranked_result(%a: tensor<4xf32>) -> tensor<*xf32> {
  fx.output %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.output' op expects parent op 'fx.graph'}}
fx.output
