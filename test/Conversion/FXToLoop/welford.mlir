// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop=welford=true | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s --check-prefix=TWOPASS

// With `welford`, a variance's squared deviations are a "welford" reduction
// of the input beside the mean's sum, not a second pass reading the mean.
// CHECK-LABEL: fx.graph @var_mean
// CHECK-SAME: (%[[X:.+]]: tensor<4x8x5xf32>)
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [4, 5] : tensor<1x8x1xf32>
// CHECK: %[[M2:.+]] = loop.reduce "welford" over [4, 5] : tensor<1x8x1xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[V:.+]] = loop.load %[[X]]
// CHECK-NEXT: loop.yield %[[V]] : f32
// TWOPASS-LABEL: fx.graph @var_mean
// TWOPASS-NOT: "welford"
// TWOPASS: loop.reduce "sum"
// TWOPASS: loop.reduce "sum"
fx.graph @var_mean(%x: tensor<4x8x5xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = fx.var_mean %x {dim = array<i64: 0, 2>, correction = 1.0 : f64} : (tensor<4x8x5xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  fx.output %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Layer norm's statistics in bf16: M2 accumulates the f32 extension.
// CHECK-LABEL: fx.graph @layer_norm
// CHECK: loop.reduce "welford" over [64] : tensor<16x1xf32>
// CHECK: arith.extf %{{.+}} : bf16 to f32
fx.graph @layer_norm(%x: tensor<16x64xbf16>) -> tensor<16x64xbf16> {
  %out, %mean, %rstd = fx.native_layer_norm %x {eps = 1.0e-05 : f64, normalized_shape = array<i64: 64>} : (tensor<16x64xbf16>) -> (tensor<16x64xbf16>, tensor<16x1xf32>, tensor<16x1xf32>)
  fx.output %out : tensor<16x64xbf16>
}
