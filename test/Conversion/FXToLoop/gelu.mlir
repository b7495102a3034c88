// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop=normal-cdf-from-tail=true | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop=normal-cdf-from-tail=true -canonicalize -cse \
// RUN:   | FileCheck %s --check-prefix=CSE
// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s --check-prefix=ERF

// The exact GELU in f32 (and bf16, which computes in f32): x * Φ(x), Φ from
// its upper tail exp(-x²/2) t P(t), t = 1 / (1 + p |x|), with P of degree 7
// (normal-cdf-from-tail, the GPU's choice), or from erf (the default).
// ERF-LABEL: fx.graph @gelu
// ERF: loop.pointwise : tensor<4x8xbf16>
// ERF: %[[X:.+]] = arith.extf %{{.+}} : bf16 to f32
// ERF: %[[S:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// ERF: %[[E:.+]] = math.erf %[[S]] : f32
// ERF: %[[H:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// ERF: %[[P:.+]] = arith.addf %[[E]], %{{.+}} : f32
// ERF: %[[Y:.+]] = arith.mulf %[[H]], %[[P]] : f32
// ERF: arith.truncf %[[Y]] : f32 to bf16
// ERF-NOT: math.exp
// CHECK-LABEL: fx.graph @gelu
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[MHALF:.+]] = arith.constant -5.000000e-01 : f32
// CHECK-DAG: %[[P:.+]] = arith.constant 3.045000e-01 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: loop.pointwise : tensor<4x8xbf16>
// CHECK: %[[X:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[Z:.+]] = math.absf %[[X]] : f32
// CHECK: %[[PZ:.+]] = arith.mulf %[[Z]], %[[P]] : f32
// CHECK: %[[D:.+]] = arith.addf %[[PZ]], %[[ONE]] : f32
// CHECK: %[[T:.+]] = arith.divf %[[ONE]], %[[D]] fastmath<afn> : f32
// CHECK: arith.mulf %[[T]], %{{.+}} : f32
// CHECK-COUNT-6: arith.mulf %{{.+}}, %[[T]] : f32
// CHECK: %[[POLY:.+]] = arith.addf
// CHECK: %[[SQ:.+]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[ARG:.+]] = arith.mulf %[[SQ]], %[[MHALF]] : f32
// CHECK: %[[EXP:.+]] = math.exp %[[ARG]] : f32
// CHECK: %[[TP:.+]] = arith.mulf %[[T]], %[[POLY]] : f32
// CHECK: %[[TAIL:.+]] = arith.mulf %[[EXP]], %[[TP]] : f32
// CHECK: %[[POS:.+]] = arith.cmpf oge, %[[X]], %[[ZERO]] : f32
// CHECK: %[[UPPER:.+]] = arith.subf %[[ONE]], %[[TAIL]] : f32
// CHECK: %[[CDF:.+]] = arith.select %[[POS]], %[[UPPER]], %[[TAIL]] : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[X]], %[[CDF]] : f32
// CHECK: arith.truncf %[[Y]] : f32 to bf16
// CHECK-NOT: math.erf
fx.graph @gelu(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = fx.gelu %x : tensor<4x8xbf16>
  fx.output %0 : tensor<4x8xbf16>
}

// -----

// f64 keeps erf: the tail's coefficients are good to f32's precision only.
// CHECK-LABEL: fx.graph @gelu_f64
// CHECK: loop.pointwise : tensor<4x8xf64>
// CHECK: %[[S:.+]] = arith.mulf %[[X:.+]], %{{.+}} : f64
// CHECK: %[[E:.+]] = math.erf %[[S]] : f64
// CHECK: %[[H:.+]] = arith.mulf %[[X]], %{{.+}} : f64
// CHECK: %[[P:.+]] = arith.addf %[[E]], %{{.+}} : f64
// CHECK: arith.mulf %[[H]], %[[P]] : f64
// CHECK-NOT: math.exp
fx.graph @gelu_f64(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %0 = fx.gelu %x : tensor<4x8xf64>
  fx.output %0 : tensor<4x8xf64>
}

// -----

// CHECK-LABEL: fx.graph @tanh_gelu
// CHECK: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
fx.graph @tanh_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fx.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  fx.output %0 : tensor<4x8xf32>
}

// -----

// The gradient Φ(x) + x φ(x): the tail's exp is φ's, computed once after CSE.
// CHECK-LABEL: fx.graph @gelu_backward
// CHECK: loop.pointwise : tensor<4x8xf32>
// CHECK-NOT: math.erf
// CHECK: loop.yield
// ERF-LABEL: fx.graph @gelu_backward
// ERF: math.erf
// CSE-LABEL: fx.graph @gelu_backward
// CSE: math.exp
// CSE-NOT: math.exp
// CSE: loop.yield
fx.graph @gelu_backward(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fx.gelu_backward %g, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output %0 : tensor<4x8xf32>
}
