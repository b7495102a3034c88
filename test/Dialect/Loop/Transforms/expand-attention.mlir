// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-expand-attention))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-expand-attention{kernels}))' | FileCheck %s --check-prefix=KERNELS

// Written out: the scores' product reading the keys transposed, scaled (and
// causally masked) in f32, the softmax's maximum and total, the
// probabilities rounded to bf16, and their product with the values. With
// `kernels` the GPU's kernel computes it: the node stays.
// CHECK-LABEL: fx.graph @causal
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x?x64xbf16>, %[[K:.+]]: tensor<?x4x?x64xbf16>, %[[V:.+]]: tensor<?x4x?x64xbf16>)
// CHECK-NOT: loop.attention
// CHECK: %[[S:.+]] = loop.matmul(%{{.+}}, %{{.+}}, %{{.+}}) %[[Q]], %[[K]] {transpose_rhs} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x?xf32>
// CHECK: loop.pointwise(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x4x?x?xf32>
// CHECK: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-DAG: arith.constant 1.250000e-01 : f32
// CHECK-DAG: arith.mulf
// CHECK: %[[LATER:.+]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK: arith.select %[[LATER]]
// CHECK: loop.reduce "max"
// CHECK: math.exp
// CHECK: loop.reduce "sum"
// CHECK: %[[P:.+]] = loop.pointwise(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x4x?x?xbf16>
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[O:.+]] = loop.matmul(%{{.+}}, %{{.+}}) %[[P]], %[[V]] : tensor<?x4x?x?xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
// CHECK: fx.output %[[O]]
// KERNELS-LABEL: fx.graph @causal
// KERNELS: %[[O:.+]] = loop.attention
// KERNELS-NOT: loop.matmul
// KERNELS: fx.output %[[O]]
fx.graph @causal(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %l = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %o = loop.attention(%n, %l) %q, %k, %v {scale = 0.125 : f64, causal} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
  fx.output %o : tensor<?x4x?x64xbf16>
}

// -----

// The kernel takes f16 and bf16 operands whose head sizes are equal, a
// multiple of 16 and at most 128: f32 operands, a head of 8, one of 256
// and values of another head size are written out even with `kernels`;
// f16 with a head of 128 is kept. f32 scores take no rounding.
// KERNELS-LABEL: fx.graph @forms
// KERNELS: loop.matmul {{.*}} -> tensor<2x8x5xf32>
// KERNELS-NOT: arith.truncf
// KERNELS: loop.matmul {{.*}} -> tensor<2x8x16xf32>
// KERNELS: loop.matmul {{.*}} -> tensor<1x4x6xf32>
// KERNELS: loop.matmul {{.*}} : tensor<1x4x6xbf16>, tensor<1x6x8xbf16> -> tensor<1x4x8xbf16>
// KERNELS: loop.matmul {{.*}} : tensor<1x4x6xbf16>, tensor<1x6x256xbf16> -> tensor<1x4x256xbf16>
// KERNELS: loop.matmul {{.*}} : tensor<1x4x6xbf16>, tensor<1x6x32xbf16> -> tensor<1x4x32xbf16>
// KERNELS: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f64} : tensor<1x4x128xf16>
// KERNELS-NOT: loop.attention
fx.graph @forms(%a: tensor<2x8x16xf32>, %b: tensor<2x5x16xf32>, %c: tensor<1x4x8xbf16>, %d: tensor<1x6x8xbf16>, %e: tensor<1x4x256xbf16>, %f: tensor<1x6x256xbf16>, %g: tensor<1x4x64xbf16>, %h: tensor<1x6x64xbf16>, %i: tensor<1x6x32xbf16>, %j: tensor<1x4x128xf16>) -> (tensor<2x8x16xf32>, tensor<1x4x8xbf16>, tensor<1x4x256xbf16>, tensor<1x4x32xbf16>, tensor<1x4x128xf16>) {
  %0 = loop.attention %a, %b, %b {scale = 0.25 : f64} : tensor<2x8x16xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32> -> tensor<2x8x16xf32>
  %1 = loop.attention %c, %d, %d {scale = 0.5 : f64} : tensor<1x4x8xbf16>, tensor<1x6x8xbf16>, tensor<1x6x8xbf16> -> tensor<1x4x8xbf16>
  %2 = loop.attention %e, %f, %f {scale = 0.0625 : f64} : tensor<1x4x256xbf16>, tensor<1x6x256xbf16>, tensor<1x6x256xbf16> -> tensor<1x4x256xbf16>
  %3 = loop.attention %g, %h, %i {scale = 0.125 : f64} : tensor<1x4x64xbf16>, tensor<1x6x64xbf16>, tensor<1x6x32xbf16> -> tensor<1x4x32xbf16>
  %4 = loop.attention %j, %j, %j {scale = 1.0 : f64} : tensor<1x4x128xf16>, tensor<1x4x128xf16>, tensor<1x4x128xf16> -> tensor<1x4x128xf16>
  fx.output %0, %1, %2, %3, %4 : tensor<2x8x16xf32>, tensor<1x4x8xbf16>, tensor<1x4x256xbf16>, tensor<1x4x32xbf16>, tensor<1x4x128xf16>
}

// -----

// A scores region runs on each scaled score in the scores' node, at its
// indices. A row whose every score is -inf subtracts 0 and divides by
// nothing: its probabilities are 0.
// CHECK-LABEL: fx.graph @scores_region
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x64xf32>, %[[MASK:.+]]: tensor<8x8xf32>)
// CHECK: %[[S:.+]] = loop.matmul %[[Q]], %[[Q]] {transpose_rhs}
// CHECK: %[[SCORES:.+]] = loop.pointwise : tensor<2x8x8xf32>
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[I1:.+]]: index, %[[I2:.+]]: index):
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: %[[T:.+]] = math.tanh %[[SCALED]] : f32
// CHECK: %[[M:.+]] = loop.load %[[MASK]][%[[I1]], %[[I2]]] : tensor<8x8xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[T]], %[[M]] : f32
// CHECK: loop.yield %[[SUM]] : f32
// CHECK: %[[MAX:.+]] = loop.reduce "max"
// CHECK: loop.pointwise : tensor<2x8x8xf32>
// CHECK: %[[ROWMAX:.+]] = loop.load %[[MAX]]
// CHECK: %[[HIDDEN:.+]] = arith.cmpf oeq, %[[ROWMAX]], %{{.+}} : f32
// CHECK: %[[BASE:.+]] = arith.select %[[HIDDEN]], %{{.+}}, %[[ROWMAX]] : f32
// CHECK: arith.subf %{{.+}}, %[[BASE]] : f32
// CHECK: %[[TOTAL:.+]] = loop.reduce "sum"
// CHECK: loop.pointwise : tensor<2x8x8xf32>
// CHECK: %[[ROWSUM:.+]] = loop.load %[[TOTAL]]
// CHECK: %[[ANY:.+]] = arith.cmpf ogt, %[[ROWSUM]], %{{.+}} : f32
// CHECK: %[[P:.+]] = arith.divf %{{.+}}, %[[ROWSUM]] : f32
// CHECK: arith.select %[[ANY]], %[[P]], %{{.+}} : f32
// CHECK-NOT: loop.attention
fx.graph @scores_region(%q: tensor<2x8x64xf32>, %mask: tensor<8x8xf32>) -> tensor<2x8x64xf32> {
  %o = loop.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<2x8x64xf32> scores {
  ^bb0(%i0: index, %i1: index, %i2: index, %score: f32):
    %t = math.tanh %score : f32
    %m = loop.load %mask[%i1, %i2] : tensor<8x8xf32>
    %s = arith.addf %t, %m : f32
    loop.yield %s : f32
  }
  fx.output %o : tensor<2x8x64xf32>
}

// -----

// A logsumexp result is max + log(sum) per query, +inf where the sum is 0
// (every key hidden). The node stays with `kernels`: the kernel writes it.
// CHECK-LABEL: fx.graph @logsumexp
// CHECK: %[[MAX:.+]] = loop.reduce "max"
// CHECK: %[[SUM:.+]] = loop.reduce "sum"
// CHECK: %[[O:.+]] = loop.matmul
// CHECK: %[[LSE:.+]] = loop.pointwise : tensor<2x4x8xf32>
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %[[H:.+]]: index, %[[I:.+]]: index):
// CHECK: %[[S:.+]] = loop.load %[[SUM]][%[[B]], %[[H]], %[[I]], %{{.+}}]
// CHECK: %[[M:.+]] = loop.load %[[MAX]][%[[B]], %[[H]], %[[I]], %{{.+}}]
// CHECK: %[[LOG:.+]] = math.log %[[S]] : f32
// CHECK: %[[ADD:.+]] = arith.addf %[[M]], %[[LOG]] : f32
// CHECK: %[[ANY:.+]] = arith.cmpf ogt, %[[S]], %{{.+}} : f32
// CHECK: arith.select %[[ANY]], %[[ADD]], %{{.+}} : f32
// CHECK: fx.output %[[O]], %[[LSE]]
// KERNELS-LABEL: fx.graph @logsumexp
// KERNELS: %[[O:.+]]:2 = loop.attention
// KERNELS: fx.output %[[O]]#0, %[[O]]#1
fx.graph @logsumexp(%q: tensor<2x4x8x64xbf16>) -> (tensor<2x4x8x64xbf16>, tensor<2x4x8xf32>) {
  %o:2 = loop.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x4x8x64xbf16>, tensor<2x4x8x64xbf16>, tensor<2x4x8x64xbf16> -> tensor<2x4x8x64xbf16>, tensor<2x4x8xf32>
  fx.output %o#0, %o#1 : tensor<2x4x8x64xbf16>, tensor<2x4x8xf32>
}

// -----

// The gradients, written out on every target so far: the scores with the
// region (a mask, and -inf for a window), p = exp(s - logsumexp) rounded
// to bf16, dV = pᵀ·dO, dP = dO·vᵀ, dS = p·(dP - delta)·scale, dQ = dS·k and
// dK = dSᵀ·q.
// CHECK-LABEL: fx.graph @gradients
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x64xbf16>, %[[K:[^:]+]]: tensor<2x6x64xbf16>, %[[V:[^:]+]]: tensor<2x6x32xbf16>, %[[DO:[^:]+]]: tensor<2x8x32xbf16>, %[[LSE:[^:]+]]: tensor<2x8xf32>, %[[DELTA:[^:]+]]: tensor<2x8xf32>, %[[MASK:[^:]+]]: tensor<8x6xf32>)
// CHECK: loop.matmul %[[Q]], %[[K]] {transpose_rhs}
// CHECK: %[[S:.+]] = loop.pointwise : tensor<2x8x6xf32>
// CHECK: loop.load %[[MASK]]
// CHECK: arith.select
// CHECK: %[[P:.+]] = loop.pointwise : tensor<2x8x6xbf16>
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[ROW:.+]] = loop.load %[[LSE]][%[[B]], %[[I]]] : tensor<2x8xf32>
// CHECK: math.exp
// CHECK: %[[DV:.+]] = loop.matmul %[[P]], %[[DO]] {transpose_lhs} : tensor<2x8x6xbf16>, tensor<2x8x32xbf16> -> tensor<2x6x32xbf16>
// CHECK: %[[DP:.+]] = loop.matmul %[[DO]], %[[V]] {transpose_rhs} : tensor<2x8x32xbf16>, tensor<2x6x32xbf16> -> tensor<2x8x6xf32>
// CHECK: %[[DS:.+]] = loop.pointwise : tensor<2x8x6xbf16>
// CHECK: loop.load %[[DELTA]]
// CHECK: arith.constant 1.250000e-01 : f32
// CHECK: %[[DQ:.+]] = loop.matmul %[[DS]], %[[K]] : tensor<2x8x6xbf16>, tensor<2x6x64xbf16> -> tensor<2x8x64xbf16>
// CHECK: %[[DK:.+]] = loop.matmul %[[DS]], %[[Q]] {transpose_lhs} : tensor<2x8x6xbf16>, tensor<2x8x64xbf16> -> tensor<2x6x64xbf16>
// CHECK: fx.output %[[DQ]], %[[DK]], %[[DV]]
// KERNELS-LABEL: fx.graph @gradients
// KERNELS-NOT: loop.attention_backward
fx.graph @gradients(%q: tensor<2x8x64xbf16>, %k: tensor<2x6x64xbf16>, %v: tensor<2x6x32xbf16>, %do: tensor<2x8x32xbf16>, %lse: tensor<2x8xf32>, %delta: tensor<2x8xf32>, %mask: tensor<8x6xf32>) -> (tensor<2x8x64xbf16>, tensor<2x6x64xbf16>, tensor<2x6x32xbf16>) {
  %g:3 = loop.attention_backward %q, %k, %v, %do, %lse, %delta {scale = 0.125 : f64} : tensor<2x8x64xbf16>, tensor<2x6x64xbf16>, tensor<2x6x32xbf16>, tensor<2x8x32xbf16>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8x64xbf16>, tensor<2x6x64xbf16>, tensor<2x6x32xbf16> scores {
  ^bb0(%b: index, %i: index, %j: index, %score: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %c4 = arith.constant 4 : index
    %m = loop.load %mask[%i, %j] : tensor<8x6xf32>
    %a = arith.addf %m, %score : f32
    %far = arith.addi %j, %c4 : index
    %outside = arith.cmpi ult, %far, %i : index
    %w = arith.select %outside, %ninf, %a : f32
    loop.yield %w : f32
  }
  fx.output %g#0, %g#1, %g#2 : tensor<2x8x64xbf16>, tensor<2x6x64xbf16>, tensor<2x6x32xbf16>
}
