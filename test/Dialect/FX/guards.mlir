// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests a symbol without max, shared by two arguments (their first sizes are
// equal), next to a static dimension.
// CHECK-LABEL: fx.graph @shared_symbol
// CHECK-SAME: (%{{.+}}: tensor<?x4096xbf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 4096]>},
// CHECK-SAME: %{{.+}}: tensor<?x4096xbf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 4096]>})
// CHECK-SAME: attributes {symbols = [#fx.symbol<"s0", min = 2>]}
fx.graph @shared_symbol(
    %x: tensor<?x4096xbf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 4096]>},
    %r: tensor<?x4096xbf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 4096]>})
    -> tensor<?x4096xbf16> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %0 = fx.add %x, %r : (tensor<?x4096xbf16>, tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  fx.output %0 : tensor<?x4096xbf16>
}

// -----

// Tests symbols with max and divisor; struct fields parse in any order and
// print in declaration order.
// CHECK-LABEL: fx.graph @bounded_symbols
// CHECK-SAME: attributes {symbols = [#fx.symbol<"s0", min = 2, max = 4096>, #fx.symbol<"batch_1", min = 8, max = 1024, divisor = 8>]}
fx.graph @bounded_symbols(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [batch_1, s0]>})
    -> tensor<?x?xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2, max = 4096>,
                           #fx.symbol<"batch_1", divisor = 8, max = 1024, min = 8>]} {
  fx.output %x : tensor<?x?xf32>
}

// -----

// Tests strides (with an unguarded one), alignment and devices.
// CHECK-LABEL: fx.graph @layout
// CHECK-SAME: #fx.tensor_guard<sizes = [s0, 64], strides = [64, 1], align = 16, device = "cuda:0">
// CHECK-SAME: #fx.tensor_guard<sizes = [64, s0], strides = [?, 1], device = "cuda">
// CHECK-SAME: #fx.tensor_guard<sizes = [], align = 64, device = "cpu">
fx.graph @layout(
    %a: tensor<?x64xf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 64], strides = [64, 1], align = 16, device = "cuda:0">},
    %b: tensor<64x?xf16> {fx.guard = #fx.tensor_guard<device = "cuda", strides = [?, 1], sizes = [64, s0]>},
    %c: tensor<f32> {fx.guard = #fx.tensor_guard<sizes = [], align = 64, device = "cpu">})
    -> tensor<?x64xf16> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  fx.output %a : tensor<?x64xf16>
}

// -----

// Tests aliasing results and mutated arguments, on a graph without guards:
// every guard attribute is optional.
// CHECK-LABEL: fx.graph @aliasing
// CHECK-SAME: (%{{.+}}: tensor<4xf32> {fx.mutated}, %{{.+}}: tensor<4xsi64>)
// CHECK-SAME: -> (tensor<4xf32> {fx.aliases = 0 : i64}, tensor<4xf32>)
// CHECK-NOT: attributes
fx.graph @aliasing(%x: tensor<4xf32> {fx.mutated}, %i: tensor<4xsi64>)
    -> (tensor<4xf32> {fx.aliases = 0}, tensor<4xf32>) {
  %0 = fx.relu %x : tensor<4xf32>
  fx.output %x, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests a graph that guards some arguments only, with guards on static
// tensors (which restate the type).
// CHECK-LABEL: fx.graph @partial
// CHECK-SAME: (%{{.+}}: tensor<2x3xf32> {fx.guard = #fx.tensor_guard<sizes = [2, 3], align = 16>}, %{{.+}}: tensor<?xf32>)
fx.graph @partial(%a: tensor<2x3xf32> {fx.guard = #fx.tensor_guard<sizes = [2, 3], align = 16>},
                  %b: tensor<?xf32>) -> tensor<2x3xf32> {
  fx.output %a : tensor<2x3xf32>
}

// -----

// Tests symbolic integer arguments: fx.symbol_value reads a size symbol,
// `arith` computes on it, and slice, select and arange take the results as
// operands instead of their static attributes.
// CHECK-LABEL: fx.graph @symbolic_bounds
fx.graph @symbolic_bounds(
    %x: tensor<?x64xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 64]>},
    %pe: tensor<512x64xf32> {fx.guard = #fx.tensor_guard<sizes = [512, 64]>})
    -> (tensor<?x64xf32>, tensor<64xf32>, tensor<?xsi64>)
    attributes {symbols = [#fx.symbol<"s0", min = 2, max = 512>]} {
  // CHECK: %[[N:.+]] = fx.symbol_value "s0"
  %n = fx.symbol_value "s0"
  // CHECK: fx.slice %{{.*}} dynamic_end(%[[N]]) : (tensor<512x64xf32>, i64) -> tensor<?x64xf32>
  %0 = fx.slice %pe dynamic_end(%n) {dim = 0 : i64} : (tensor<512x64xf32>, i64) -> tensor<?x64xf32>
  %1 = fx.add %x, %0 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  // CHECK: %[[LAST:.+]] = arith.subi %[[N]], %{{.*}} : i64
  // CHECK: fx.select %{{.*}} dynamic_index(%[[LAST]]) {dim = 0 : i64} : (tensor<?x64xf32>, i64) -> tensor<64xf32>
  %c1 = arith.constant 1 : i64
  %last = arith.subi %n, %c1 : i64
  %2 = fx.select %x dynamic_index(%last) {dim = 0 : i64} : (tensor<?x64xf32>, i64) -> tensor<64xf32>
  // CHECK: fx.arange dynamic_end(%[[N]]) {start = 0 : i64} : (i64) -> tensor<?xsi64>
  %3 = fx.arange dynamic_end(%n) {start = 0 : i64} : (i64) -> tensor<?xsi64>
  // CHECK: fx.slice %{{.*}} dynamic_start(%[[N]]) dynamic_end(%[[N]]) {step = 2 : i64}
  %4 = fx.slice %pe dynamic_start(%n) dynamic_end(%n) {dim = 0 : i64, step = 2 : i64} : (tensor<512x64xf32>, i64, i64) -> tensor<?x64xf32>
  fx.output %1, %2, %3 : tensor<?x64xf32>, tensor<64xf32>, tensor<?xsi64>
}

// -----

// Tests a symbolic count: a mean's gradient divides by 16 * s0, a zero-dim
// f64 tensor of the symbol's run-time value.
// CHECK-LABEL: fx.graph @symbolic_count
// CHECK: %[[N:.+]] = fx.symbol_value "s0"
// CHECK: %[[COUNT:.+]] = arith.muli %[[N]], %{{.*}} : i64
// CHECK: fx.scalar_tensor dynamic_s(%[[COUNT]]) {dtype = f64} : (i64) -> tensor<f64>
fx.graph @symbolic_count(%g: tensor<?x16xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 16]>})
    -> tensor<?x16xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %n = fx.symbol_value "s0"
  %c16 = arith.constant 16 : i64
  %count = arith.muli %n, %c16 : i64
  %0 = fx.scalar_tensor dynamic_s(%count) {dtype = f64} : (i64) -> tensor<f64>
  %1 = fx.div %g, %0 : (tensor<?x16xf32>, tensor<f64>) -> tensor<?x16xf32>
  fx.output %1 : tensor<?x16xf32>
}

// -----

// Tests a derived symbol: e0 = 2*s0 + 1, which the runtime checks.
// CHECK-LABEL: fx.graph @derived_symbol
// CHECK-SAME: attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"e0", min = 5, of = "s0", scale = 2, offset = 1>, #fx.symbol<"e1", min = 2, of = "s0">]}
fx.graph @derived_symbol(
    %x: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0]>},
    %y: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e0]>},
    %z: tensor<?xf32> {fx.guard = #fx.tensor_guard<sizes = [e1]>})
    attributes {symbols = [#fx.symbol<"s0", min = 2>,
                           #fx.symbol<"e0", offset = 1, scale = 2, of = "s0", min = 5>,
                           #fx.symbol<"e1", min = 2, of = "s0">]} {
  fx.output
}
