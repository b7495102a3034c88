// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that full infers its dtype from the fill value: an integer is si64.
fx.graph @full_dtype() {
  // expected-error @+1 {{'fx.full' op result type 'tensor<4xf32>' does not match the inferred type 'tensor<4xsi64>'}}
  %0 = fx.full {fill_value = 1} : () -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @full_like_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.full_like' op result type 'tensor<8x4xf32>' does not match the inferred type 'tensor<4x8xf32>'}}
  %0 = fx.full_like %x {fill_value = 0.0} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  fx.output
}

// -----

fx.graph @scalar_tensor_rank() {
  // expected-error @+1 {{'fx.scalar_tensor' op result type 'tensor<1xf32>' does not match the inferred type 'tensor<f32>'}}
  %0 = fx.scalar_tensor {s = 1.0} : () -> tensor<1xf32>
  fx.output
}

// -----

fx.graph @scalar_tensor_without_value() {
  // expected-error @+1 {{'fx.scalar_tensor' op needs exactly one of `s` and `dynamic_s`}}
  %0 = fx.scalar_tensor {dtype = f32} : () -> tensor<f32>
  fx.output
}

// -----

fx.graph @scalar_tensor_with_two_values(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %n = fx.symbol_value "s0"
  // expected-error @+1 {{'fx.scalar_tensor' op needs exactly one of `s` and `dynamic_s`}}
  %0 = fx.scalar_tensor dynamic_s(%n) {s = 1.0} : (i64) -> tensor<f32>
  fx.output
}

// -----

fx.graph @empty_strided_count() {
  // expected-error @+1 {{'fx.empty_strided' op `stride` has 1 entries, but the result 'tensor<4x4xf32>' has rank 2}}
  %0 = fx.empty_strided {stride = array<i64: 1>} : () -> tensor<4x4xf32>
  fx.output
}

// -----

fx.graph @arange_step() {
  // expected-error @+1 {{'fx.arange' op `step` must not be zero}}
  %0 = fx.arange {start = 0, end = 4, step = 0} : () -> tensor<4xsi64>
  fx.output
}

// -----

fx.graph @arange_sign() {
  // expected-error @+1 {{'fx.arange' op the range from `start` 4 to `end` 0 is inconsistent with the sign of `step` 1}}
  %0 = fx.arange {start = 4, end = 0} : () -> tensor<0xsi64>
  fx.output
}

// -----

fx.graph @arange_length() {
  // expected-error @+1 {{'fx.arange' op result type 'tensor<5xf32>' does not match the inferred type 'tensor<4xf32>'}}
  %0 = fx.arange {start = 0.0, end = 2.0, step = 0.5} : () -> tensor<5xf32>
  fx.output
}

// -----

fx.graph @random_dtype(%seed: tensor<si64>) {
  // expected-error @+1 {{'fx.rand' op random values need a floating dtype, not 'si64'}}
  %0 = fx.rand %seed {dtype = si64, offset = 0} : (tensor<si64>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @random_seed(%seed: tensor<1xsi64>) {
  // expected-error @+1 {{'fx.randn' op operand #0 must be 0D tensor of 64-bit signed integer values}}
  %0 = fx.randn %seed {offset = 0} : (tensor<1xsi64>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @random_offset(%seed: tensor<si64>) {
  // expected-error @+1 {{'fx.rand' op requires attribute 'offset'}}
  %0 = fx.rand %seed : (tensor<si64>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @dropout_p(%x: tensor<4xf32>, %seed: tensor<si64>) {
  // expected-error @+1 {{'fx.native_dropout' op dropout probability `p` must be in [0, 1], but is 1.5}}
  %0:2 = fx.native_dropout %x, %seed {p = 1.5, offset = 0} : (tensor<4xf32>, tensor<si64>) -> (tensor<4xf32>, tensor<4xi1>)
  fx.output
}

// -----

fx.graph @dropout_mask(%x: tensor<4xf32>, %seed: tensor<si64>) {
  // expected-error @+1 {{'fx.native_dropout' op result #1 must be ranked tensor of bool (i1) values}}
  %0:2 = fx.native_dropout %x, %seed {p = 0.5, offset = 0} : (tensor<4xf32>, tensor<si64>) -> (tensor<4xf32>, tensor<4xf32>)
  fx.output
}

// -----

fx.graph @bernoulli_p(%x: tensor<4xf32>, %seed: tensor<si64>) {
  // expected-error @+1 {{'fx.bernoulli_p' op probability `p` must be in [0, 1], but is -0.5}}
  %0 = fx.bernoulli_p %x, %seed {p = -0.5, offset = 0} : (tensor<4xf32>, tensor<si64>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @bernoulli_type(%x: tensor<4xf32>, %seed: tensor<si64>) {
  // expected-error @+1 {{'fx.bernoulli_p' op result type 'tensor<4xf16>' does not match the inferred type 'tensor<4xf32>'}}
  %0 = fx.bernoulli_p %x, %seed {p = 0.5, offset = 0} : (tensor<4xf32>, tensor<si64>) -> tensor<4xf16>
  fx.output
}

// -----

fx.graph @full_symbols_count(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.full' op `size_symbols` names 2 sizes, but the result 'tensor<?x4xf32>' has 1 dynamic dimensions}}
  %0 = fx.full {fill_value = 0 : i64, dtype = f32, size_symbols = ["s0", "s0"]} : () -> tensor<?x4xf32>
  fx.output
}

// -----

// A frozen constant has one of PyTorch's dtypes: signless integers are not.
fx.graph @constant_dtype() {
  // expected-error @+1 {{'fx.constant' op result #0 must be ranked tensor of}}
  %0 = fx.constant dense<[1, 2]> : tensor<2xi32>
  fx.output
}

// -----

fx.graph @arange_without_end() {
  // expected-error @+1 {{'fx.arange' op needs exactly one of `end` and `dynamic_end`}}
  %0 = fx.arange {start = 0 : i64} : () -> tensor<4xsi64>
  fx.output
}

// -----

fx.graph @arange_end_and_dynamic_end() {
  %n = arith.constant 4 : i64
  // expected-error @+1 {{'fx.arange' op needs exactly one of `end` and `dynamic_end`}}
  %0 = fx.arange dynamic_end(%n) {start = 0 : i64, end = 4 : i64} : (i64) -> tensor<?xsi64>
  fx.output
}

// -----

fx.graph @arange_dynamic_end_float_step() {
  %n = arith.constant 4 : i64
  // expected-error @+1 {{'fx.arange' op with `dynamic_end` needs an integral `step`}}
  %0 = fx.arange dynamic_end(%n) {start = 0 : i64, step = 0.5 : f64} : (i64) -> tensor<?xf32>
  fx.output
}

// -----

fx.graph @arange_dynamic_end_zero_step() {
  %n = arith.constant 4 : i64
  // expected-error @+1 {{'fx.arange' op `step` must not be zero}}
  %0 = fx.arange dynamic_end(%n) {start = 0 : i64, step = 0 : i64} : (i64) -> tensor<?xsi64>
  fx.output
}
