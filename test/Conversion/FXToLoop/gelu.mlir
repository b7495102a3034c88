// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s

// CHECK-LABEL: fx.graph @gelu
// CHECK: loop.pointwise : tensor<4x8xbf16>
// CHECK: %[[X:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[S:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// CHECK: %[[E:.+]] = math.erf %[[S]] : f32
// CHECK: %[[H:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// CHECK: %[[P:.+]] = arith.addf %[[E]], %{{.+}} : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK: arith.truncf %[[Y]] : f32 to bf16
fx.graph @gelu(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = fx.gelu %x : tensor<4x8xbf16>
  fx.output %0 : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: fx.graph @tanh_gelu
// CHECK: math.tanh
// CHECK-NOT: math.erf
fx.graph @tanh_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fx.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  fx.output %0 : tensor<4x8xf32>
}
