// RUN: kiln-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))'

fx.graph @bool_add_alpha(%p: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.add' with these operand types}}
  %0 = fx.add %p, %p {alpha = 2 : i64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  fx.output %0 : tensor<4xi1>
}

// -----

// Integers to negative powers are refused, as PyTorch refuses them.
fx.graph @negative_integer_power(%i: tensor<4xsi64>) -> tensor<4xsi64> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.pow_tensor_scalar' with these operand types}}
  %0 = fx.pow_tensor_scalar %i {exponent = -1 : i64} : (tensor<4xsi64>) -> tensor<4xsi64>
  fx.output %0 : tensor<4xsi64>
}

// -----

// A bool mask selects a data-dependent number of elements.
fx.graph @index_with_mask(%x: tensor<4x3xf32>, %m: tensor<4xi1>) -> tensor<?x3xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.index' with these operand types}}
  %0 = fx.index %x, %m : (tensor<4x3xf32>, tensor<4xi1>) -> tensor<?x3xf32>
  fx.output %0 : tensor<?x3xf32>
}

// -----

// A creation op with a dynamic size must name the size symbol that gives it
// (`size_symbols`); this one names none.
fx.graph @rand_dynamic(%seed: tensor<si64>) -> tensor<?xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.rand' with these operand types}}
  %0 = fx.rand %seed {offset = 0} : (tensor<si64>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

fx.graph @randperm(%seed: tensor<si64>) -> tensor<?xsi64> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.randperm' with these operand types}}
  %0 = fx.randperm %seed {offset = 0} : (tensor<si64>) -> tensor<?xsi64>
  fx.output %0 : tensor<?xsi64>
}

// -----

// A bool mask selects a data-dependent number of elements to write.
fx.graph @index_put_with_mask(%x: tensor<10x4xf32>, %m: tensor<10xi1>, %v: tensor<4xf32>) -> tensor<10x4xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.index_put' with these operand types}}
  %0 = fx.index_put %x, %m, %v {accumulate = false} : (tensor<10x4xf32>, tensor<10xi1>, tensor<4xf32>) -> tensor<10x4xf32>
  fx.output %0 : tensor<10x4xf32>
}

// -----

// Evaluation mode needs running statistics.
fx.graph @batch_norm_evaluation_without_statistics(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.native_batch_norm_legit_no_stats' with these operand types}}
  %0:3 = fx.native_batch_norm_legit_no_stats %x {training = false, momentum = 0.1, eps = 1.0e-05} : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<0xf32>, tensor<0xf32>)
  fx.output %0#0 : tensor<2x4x3xf32>
}

// -----

// group norm's gradient needs static channels (they split into groups).
fx.graph @dynamic_channels_group_norm_backward(%dy: tensor<2x?x3xf32>, %m: tensor<2x2xf32>) -> tensor<2x?x3xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.native_group_norm_backward' with these operand types}}
  %0:3 = fx.native_group_norm_backward %dy, %dy, %m, %m {group = 2 : i64, output_mask = array<i1: true, false, false>} : (tensor<2x?x3xf32>, tensor<2x?x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x?x3xf32>, tensor<?xf32>, tensor<?xf32>)
  fx.output %0#0 : tensor<2x?x3xf32>
}

// -----

// randperm sorts its draws: up to the sort lowering's 2^24 elements.
fx.graph @long_randperm(%seed: tensor<si64>) -> tensor<16777217xsi64> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.randperm' with these operand types}}
  %0 = fx.randperm %seed {offset = 0 : i64} : (tensor<si64>) -> tensor<16777217xsi64>
  fx.output %0 : tensor<16777217xsi64>
}

// -----

// A strided view reaching past self's 20 elements (2 + 4·4 + 1·2 = 20).
fx.graph @as_strided_scatter_past_the_end(%x: tensor<4x5xf32>, %s: tensor<5x3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.as_strided_scatter' with these operand types}}
  %0 = fx.as_strided_scatter %x, %s {stride = array<i64: 4, 1>, storage_offset = 2 : i64} : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
  fx.output %0 : tensor<4x5xf32>
}

// -----

// Fourier transforms along a dimension of a length other than a power of
// two go through power-of-two FFTs of at least twice the length: up to
// 2^23 (2^23 + 2 is too long).
fx.graph @too_long_odd_rfft(%x: tensor<8388610xf32>) -> tensor<4194306xcomplex<f32>> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.fft_r2c' with these operand types}}
  %0 = fx.fft_r2c %x {dim = array<i64: 0>, normalization = 0, onesided = true} : (tensor<8388610xf32>) -> tensor<4194306xcomplex<f32>>
  fx.output %0 : tensor<4194306xcomplex<f32>>
}

// -----

// Bools do not shift (nor in PyTorch).
fx.graph @bool_shift(%p: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.bitwise_left_shift' with these operand types}}
  %0 = fx.bitwise_left_shift %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  fx.output %0 : tensor<4xi1>
}
