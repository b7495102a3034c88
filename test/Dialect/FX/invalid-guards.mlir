// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests the guard's rank against the tensor's.
// expected-error @+1 {{'fx.graph' op argument #0 has rank 2, but its guard has 1 sizes}}
fx.graph @guard_rank(%x: tensor<?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 guards dimension 1 with size 8, but its type's size is 4}}
fx.graph @static_size_mismatch(%x: tensor<?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 8]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 guards static dimension 1 (size 4) with size symbol 's0'; a symbol is for a '?' size}}
fx.graph @symbol_on_static(%x: tensor<?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  fx.output
}

// -----

// Tests that a symbol shared by arguments (an equality) is only for `?`
// dimensions: equal static sizes are equal already.
// expected-error @+1 {{'fx.graph' op argument #1 guards static dimension 0 (size 4) with size symbol 's0'; a symbol is for a '?' size}}
fx.graph @shared_symbol_on_static(
    %x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>},
    %y: tensor<4xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 guards dynamic dimension 0 with static size 8; a '?' size is guarded by a size symbol}}
fx.graph @static_on_dynamic(%x: tensor<?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [8, 4]>}) {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 guards dimension 0 with undefined size symbol 's1'}}
fx.graph @undefined_symbol(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s1]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op defines size symbol 's0' more than once}}
fx.graph @duplicate_symbol(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s0", min = 4>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op size symbol 's1' is the size of no guarded argument dimension, so the runtime cannot bind it}}
fx.graph @unused_symbol(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  fx.output
}

// -----

fx.graph @stride_count(
    // expected-error @+1 {{tensor guard has 1 strides for 2 dimensions; it needs one per dimension}}
    %x: tensor<4x4xf32> {fx.guard = #fx.tensor_guard<sizes = [4, 4], strides = [1]>}) {
  fx.output
}

// -----

fx.graph @negative_stride(
    // expected-error @+1 {{tensor guard stride at dimension 0 is negative: -4}}
    %x: tensor<4x4xf32> {fx.guard = #fx.tensor_guard<sizes = [4, 4], strides = [-4, 1]>}) {
  fx.output
}

// -----

fx.graph @align(
    // expected-error @+1 {{tensor guard alignment 24 is not a power of two}}
    %x: tensor<4xf32> {fx.guard = #fx.tensor_guard<sizes = [4], align = 24>}) {
  fx.output
}

// -----

fx.graph @device(
    // expected-error @+1 {{tensor guard device 'gpu:0' is not 'cpu', 'cuda' or 'cuda:N'}}
    %x: tensor<4xf32> {fx.guard = #fx.tensor_guard<sizes = [4], device = "gpu:0">}) {
  fx.output
}

// -----

fx.graph @device_index(
    // expected-error @+1 {{tensor guard device 'cuda:' is not 'cpu', 'cuda' or 'cuda:N'}}
    %x: tensor<4xf32> {fx.guard = #fx.tensor_guard<sizes = [4], device = "cuda:">}) {
  fx.output
}

// -----

fx.graph @guard_sizes_syntax(
    // expected-error @+2 {{expected a static size or a size symbol name}}
    // expected-error @+1 {{failed to parse FX_TensorGuardAttr parameter 'sizes'}}
    %x: tensor<4xf32> {fx.guard = #fx.tensor_guard<sizes = [?]>}) {
  fx.output
}

// -----

// expected-error @+1 {{size symbol 's0' has min = 1, but a size symbol is at least 2 (sizes 0 and 1 are specialised)}}
fx.graph @symbol_min(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 1>]} {
  fx.output
}

// -----

// expected-error @+1 {{size symbol 's0' has max = 8 below its min = 16}}
fx.graph @symbol_range(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 16, max = 8>]} {
  fx.output
}

// -----

// expected-error @+1 {{size symbol 's0' has no multiple of 16 in [2, 8]}}
fx.graph @symbol_divisor(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 2, max = 8, divisor = 16>]} {
  fx.output
}

// -----

// expected-error @+1 {{size symbol name '0s' is not an identifier (letters, digits and '_', not starting with a digit)}}
fx.graph @symbol_name(%x: tensor<4xf32>) attributes {symbols = [#fx.symbol<"0s", min = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op attribute 'symbols' failed to satisfy constraint: array of size symbols}}
fx.graph @symbols_kind(%x: tensor<4xf32>) attributes {symbols = ["s0"]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 has 'fx.guard' that is not a #fx.tensor_guard: [4]}}
fx.graph @guard_kind(%x: tensor<4xf32> {fx.guard = [4]}) {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op result #0 aliases argument #2, but the graph has 2 arguments}}
fx.graph @alias_range(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32> {fx.aliases = 2}) {
  fx.output %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.graph' op result #0 aliases argument #-1, but the graph has 1 arguments}}
fx.graph @alias_negative(%x: tensor<4xf32>) -> (tensor<4xf32> {fx.aliases = -1}) {
  fx.output %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.graph' op result #0 of element type 'f16' aliases argument #0 of element type 'f32'; aliasing tensors share a dtype}}
fx.graph @alias_dtype(%x: tensor<4xf32>) -> (tensor<4xf16> {fx.aliases = 0}) {
  %0 = fx.to_copy %x {dtype = f16} : (tensor<4xf32>) -> tensor<4xf16>
  fx.output %0 : tensor<4xf16>
}

// -----

// expected-error @+1 {{'fx.graph' op result #0 has 'fx.aliases' that is not an argument number: "x"}}
fx.graph @alias_kind(%x: tensor<4xf32>) -> (tensor<4xf32> {fx.aliases = "x"}) {
  fx.output %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 has 'fx.aliases', which is an attribute of a result}}
fx.graph @alias_on_argument(%x: tensor<4xf32> {fx.aliases = 0}) {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op result #0 has 'fx.mutated', which is an attribute of an argument}}
fx.graph @mutated_result(%x: tensor<4xf32>) -> (tensor<4xf32> {fx.mutated}) {
  fx.output %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.graph' op argument #0 has 'fx.mutated' with a value; it is a unit attribute}}
fx.graph @mutated_value(%x: tensor<4xf32> {fx.mutated = true}) {
  fx.output
}

// -----

fx.graph @mutated_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fx.mutated' is an attribute of an fx.graph argument, not of an operation}}
  %0 = fx.relu %x {fx.mutated} : tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fx.mutated' is an attribute of an fx.graph argument, not of an operation}}
fx.graph @mutated_graph(%x: tensor<4xf32>) attributes {fx.mutated} {
  fx.output
}

// -----

// expected-error @+1 {{size symbol 's0' has divisor = 0, but a divisor is positive}}
fx.graph @symbol_zero_divisor(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 2, divisor = 0>]} {
  fx.output
}

// -----

fx.graph @negative_size(
    // expected-error @+1 {{tensor guard size at dimension 1 is negative: -4}}
    %x: tensor<4x4xf32> {fx.guard = #fx.tensor_guard<sizes = [4, -4]>}) {
  fx.output
}

// -----

fx.graph @aliases_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fx.aliases' is an attribute of an fx.graph result, not of an operation}}
  %0 = fx.relu %x {fx.aliases = 0} : tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @symbol_value_of_no_symbol(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.symbol_value' op reads 's1', which is not a size symbol of the graph}}
  %n = fx.symbol_value "s1"
  fx.output
}

// -----

// expected-error @+1 {{'fx.symbol_value' op must be inside an fx.graph, whose guards bind 's0'}}
%n = fx.symbol_value "s0"

// -----

// expected-error @+1 {{size symbol 'e0' has a scale or an offset but derives from no symbol ('of')}}
fx.graph @scale_without_base(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e0]>}) attributes {symbols = [#fx.symbol<"e0", min = 2, scale = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{size symbol 'e0' has scale = 0, but a scale is positive}}
fx.graph @zero_scale(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e0]>}, %y: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"e0", min = 2, of = "s0", scale = 0>]} {
  fx.output
}

// -----

// expected-error @+1 {{size symbol 'e0' derives from 'e0', which is not another symbol's name}}
fx.graph @derived_from_itself(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e0]>}) attributes {symbols = [#fx.symbol<"e0", min = 2, of = "e0">]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op size symbol 'e0' derives from 's1', which is not a free size symbol of the graph}}
fx.graph @derived_from_an_unknown_symbol(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e0]>}, %y: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}) attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"e0", min = 4, of = "s1", scale = 2>]} {
  fx.output
}

// -----

// expected-error @+1 {{'fx.graph' op size symbol 'e1' derives from 'e0', which is not a free size symbol of the graph}}
fx.graph @derived_from_a_derived_symbol(%x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e0]>}, %y: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>}, %z: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e1]>}) attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"e0", min = 4, of = "s0", scale = 2>, #fx.symbol<"e1", min = 5, of = "e0", offset = 1>]} {
  fx.output
}
