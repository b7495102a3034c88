// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @half_to_float_f32(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.softmax' op `half_to_float` needs an f16 or bf16 input, but the input is 'tensor<4x8xf32>'}}
  %0 = fx.softmax %x {dim = 1, half_to_float = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @softmax_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.log_softmax' op `dim` 2 is out of range for a tensor of rank 2}}
  %0 = fx.log_softmax %x {dim = 2, half_to_float = false} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @softmax_backward_shapes(%g: tensor<4x8xf32>, %y: tensor<4x7xf32>) {
  // expected-error @+1 {{'fx.softmax_backward_data' op `grad_output` 'tensor<4x8xf32>' and `output` 'tensor<4x7xf32>' must have the same shape}}
  %0 = fx.softmax_backward_data %g, %y {dim = 1, input_dtype = f32} : (tensor<4x8xf32>, tensor<4x7xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @softmax_backward_dtype(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.softmax_backward_data' op result type 'tensor<4x8xf32>' does not match the inferred type 'tensor<4x8xbf16>'}}
  %0 = fx.softmax_backward_data %g, %g {dim = 1, input_dtype = bf16} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @normalized_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.native_layer_norm' op `normalized_shape` [4] does not match the trailing dimensions of input 'tensor<4x8xf32>'}}
  %0:3 = fx.native_layer_norm %x {normalized_shape = array<i64: 4>, eps = 1.0e-05}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  fx.output
}

// -----

fx.graph @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'fx.native_layer_norm' op `weight` has type 'tensor<4xf32>', but input 'tensor<4x8xf32>' needs the shape [8]}}
  %0:3 = fx.native_layer_norm %x weight(%w) {normalized_shape = array<i64: 8>, eps = 1.0e-05}
      : (tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  fx.output
}

// -----

// Tests that statistics are in the input's dtype or its compute dtype only.
fx.graph @layer_norm_stats_dtype(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{'fx.native_layer_norm' op result #1 type 'tensor<4x1xf64>' does not match the inferred type 'tensor<4x1xf16>'}}
  %0:3 = fx.native_layer_norm %x {normalized_shape = array<i64: 8>, eps = 1.0e-05}
      : (tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x1xf64>, tensor<4x1xf64>)
  fx.output
}

// -----

fx.graph @layer_norm_backward_stats(%x: tensor<4x8xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'fx.native_layer_norm_backward' op `mean` has type 'tensor<4xf32>', but input 'tensor<4x8xf32>' has statistics of shape [4, 1]}}
  %0:3 = fx.native_layer_norm_backward %x, %x, %m, %m {normalized_shape = array<i64: 8>, output_mask = array<i1: true, true, true>}
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  fx.output
}

// -----

fx.graph @layer_norm_backward_grad(%g: tensor<4x7xf32>, %x: tensor<4x8xf32>, %m: tensor<4x1xf32>) {
  // expected-error @+1 {{'fx.native_layer_norm_backward' op `grad_out` 'tensor<4x7xf32>' and `input` 'tensor<4x8xf32>' must have the same shape}}
  %0:3 = fx.native_layer_norm_backward %g, %x, %m, %m {normalized_shape = array<i64: 8>, output_mask = array<i1: true, true, true>}
      : (tensor<4x7xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  fx.output
}

// -----

fx.graph @output_mask_size(%x: tensor<4x8xf32>, %m: tensor<4x1xf32>) {
  // expected-error @+1 {{'fx.native_layer_norm_backward' op attribute 'output_mask' failed to satisfy constraint: i1 dense array attribute with exactly 3 elements}}
  %0:3 = fx.native_layer_norm_backward %x, %x, %m, %m {normalized_shape = array<i64: 8>, output_mask = array<i1: true, true>}
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  fx.output
}

// -----

fx.graph @group_norm_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'fx.native_group_norm' op input 'tensor<8xf32>' must have a batch and a channel dimension}}
  %0:3 = fx.native_group_norm %x {group = 2, eps = 1.0e-05} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8x2xf32>, tensor<8x2xf32>)
  fx.output
}

// -----

fx.graph @group_norm_divisible(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'fx.native_group_norm' op input 'tensor<2x6x4xf32>' has 6 channels, which `group` 4 does not divide}}
  %0:3 = fx.native_group_norm %x {group = 4, eps = 1.0e-05} : (tensor<2x6x4xf32>) -> (tensor<2x6x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  fx.output
}

// -----

fx.graph @group_norm_group(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'fx.native_group_norm' op `group` must be positive, but is 0}}
  %0:3 = fx.native_group_norm %x {group = 0, eps = 1.0e-05} : (tensor<2x6x4xf32>) -> (tensor<2x6x4xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  fx.output
}

// -----

fx.graph @group_norm_stats(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'fx.native_group_norm' op result #1 type 'tensor<2x6xf32>' does not match the inferred type 'tensor<2x3xf32>'}}
  %0:3 = fx.native_group_norm %x {group = 3, eps = 1.0e-05} : (tensor<2x6x4xf32>) -> (tensor<2x6x4xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  fx.output
}

// -----

fx.graph @group_norm_backward_stats(%x: tensor<2x6x4xf32>, %s: tensor<2x2xf32>) {
  // expected-error @+1 {{'fx.native_group_norm_backward' op `mean` has type 'tensor<2x2xf32>', but input 'tensor<2x6x4xf32>' has statistics of shape [2, 3]}}
  %0:3 = fx.native_group_norm_backward %x, %x, %s, %s {group = 3, output_mask = array<i1: true, true, true>}
      : (tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>)
  fx.output
}

// -----

fx.graph @batch_norm_running_stats(%x: tensor<2x6x4xf32>, %r: tensor<4xf32>) {
  // expected-error @+1 {{'fx.native_batch_norm_legit_no_training' op `running_mean` has type 'tensor<4xf32>', but input 'tensor<2x6x4xf32>' needs the shape [6]}}
  %0:3 = fx.native_batch_norm_legit_no_training %x, %r, %r {momentum = 0.1, eps = 1.0e-05}
      : (tensor<2x6x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x6x4xf32>, tensor<0xf32>, tensor<0xf32>)
  fx.output
}

// -----

// Tests that evaluation-mode batch norm saves no statistics.
fx.graph @batch_norm_eval_stats(%x: tensor<2x6x4xf32>, %r: tensor<6xf32>) {
  // expected-error @+1 {{'fx.native_batch_norm_legit_no_training' op result #1 type 'tensor<6xf32>' does not match the inferred type 'tensor<0xf32>'}}
  %0:3 = fx.native_batch_norm_legit_no_training %x, %r, %r {momentum = 0.1, eps = 1.0e-05}
      : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>)
  fx.output
}

// -----

fx.graph @batch_norm_running_out(%x: tensor<2x6x4xf32>, %r: tensor<6xf32>) {
  // expected-error @+1 {{'fx.native_batch_norm_legit_functional' op result #3 type 'tensor<6xf16>' does not match the inferred type 'tensor<6xf32>'}}
  %0:5 = fx.native_batch_norm_legit_functional %x, %r, %r {training = true, momentum = 0.1, eps = 1.0e-05}
      : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf16>, tensor<6xf16>)
  fx.output
}

// -----

fx.graph @batch_norm_backward_grad(%g: tensor<2x6x5xf32>, %x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'fx.native_batch_norm_backward' op `grad_out` 'tensor<2x6x5xf32>' and `input` 'tensor<2x6x4xf32>' must have the same shape}}
  %0:3 = fx.native_batch_norm_backward %g, %x {train = true, eps = 1.0e-05, output_mask = array<i1: true, true, true>}
      : (tensor<2x6x5xf32>, tensor<2x6x4xf32>) -> (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>)
  fx.output
}
