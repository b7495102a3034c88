// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @dim_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.sum' op `dim` 2 is out of range for a tensor of rank 2 (expected [-2, 1])}}
  %0 = fx.sum %x {dim = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @dim_repeated(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.amax' op `dim` names dimension 1 more than once}}
  %0 = fx.amax %x {dim = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @keepdim_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.sum' op result type 'tensor<4xf32>' does not match the inferred type 'tensor<4x1xf32>'}}
  %0 = fx.sum %x {dim = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4xf32>
  fx.output
}

// -----

// Tests that an integral sum is si64 without `dtype`.
fx.graph @integral_sum(%i: tensor<4x8xsi32>) {
  // expected-error @+1 {{'fx.sum' op result type 'tensor<si32>' does not match the inferred type 'tensor<si64>'}}
  %0 = fx.sum %i : (tensor<4x8xsi32>) -> tensor<si32>
  fx.output
}

// -----

fx.graph @integral_mean(%i: tensor<4x8xsi32>) {
  // expected-error @+1 {{'fx.mean' op cannot compute the mean in dtype 'si32': the input or `dtype` must be floating or complex}}
  %0 = fx.mean %i {dim = array<i64: 1>} : (tensor<4x8xsi32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @indices_dtype(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.max_dim' op result #1 type 'tensor<4xsi32>' does not match the inferred type 'tensor<4xsi64>'}}
  %0:2 = fx.max_dim %x {dim = 1} : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xsi32>)
  fx.output
}

// -----

fx.graph @any_is_bool(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.any_dim' op result type 'tensor<4xf32>' does not match the inferred type 'tensor<4xi1>'}}
  %0 = fx.any_dim %x {dim = 1} : (tensor<4x8xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @var_of_complex_is_real(%c: tensor<4xcomplex<f64>>) {
  // expected-error @+1 {{'fx.var' op result type 'tensor<f32>' does not match the inferred type 'tensor<f64>'}}
  %0 = fx.var %c : (tensor<4xcomplex<f64>>) -> tensor<f32>
  fx.output
}

// -----

fx.graph @cumsum_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.cumsum' op `dim` -3 is out of range for a tensor of rank 2 (expected [-2, 1])}}
  %0 = fx.cumsum %x {dim = -3} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @topk_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.topk' op `k` must not be negative, but is -1}}
  %0:2 = fx.topk %x {k = -1} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xsi64>)
  fx.output
}

// -----

fx.graph @topk_too_large(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.topk' op `k` 9 is larger than dimension 1 of size 8}}
  %0:2 = fx.topk %x {k = 9} : (tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x9xsi64>)
  fx.output
}

// -----

fx.graph @sort_indices_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.sort' op result #1 type 'tensor<4xsi64>' does not match the inferred type 'tensor<4x8xsi64>'}}
  %0:2 = fx.sort %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xsi64>)
  fx.output
}
