// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' -o /dev/null

// The CPU's flash attention: q·kᵀ with k read transposed in place (bf16
// operands, f32 sums), scaled and causally masked, a softmax over the keys
// rounded to bf16 for the second product, and max + log(sum) per row.
// CHECK-LABEL: fx.graph @causal_attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x16xbf16>, %[[K:.+]]: tensor<2x4x8x16xbf16>, %[[V:.+]]: tensor<2x4x8x16xbf16>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[S:.+]] = loop.matmul %[[Q]], %[[K]] {transpose_rhs} : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16> -> tensor<2x4x8x8xf32>
// CHECK: %[[M:.+]] = loop.pointwise : tensor<2x4x8x8xf32>
// CHECK: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[LATER:.+]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK: arith.select %[[LATER]]
// CHECK: loop.reduce "max" over [8] : tensor<2x4x8x1xf32>
// CHECK: loop.reduce "sum" over [8] : tensor<2x4x8x1xf32>
// CHECK: %[[P:.+]] = loop.pointwise : tensor<2x4x8x8xbf16>
// CHECK: loop.matmul %[[P]], %[[V]] : tensor<2x4x8x8xbf16>, tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xbf16>
// CHECK: loop.pointwise : tensor<2x4x8xf32>
// CHECK: math.log
fx.graph @causal_attention(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>, %v: tensor<2x4x8x16xbf16>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>) {
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v {is_causal = true} : (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  fx.output %0#0, %0#1 : tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
}

// -----

// Dropout draws would need the op's own generator.
// CHECK-LABEL: fx.graph @attention_with_dropout
fx.graph @attention_with_dropout(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.scaled_dot_product_flash_attention_for_cpu' with these operand types}}
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %q, %q {dropout_p = 0.1 : f64} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4xf32>)
  fx.output %0#0 : tensor<1x1x4x8xf32>
}
