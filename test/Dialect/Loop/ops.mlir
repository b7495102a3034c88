// RUN: kiln-opt %s -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// CHECK-LABEL: fx.graph @pointwise_dynamic
fx.graph @pointwise_dynamic(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  // CHECK: %[[N:.+]] = tensor.dim
  // CHECK: loop.pointwise(%[[N]]) : tensor<?x64xf32> {
  // CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index):
  // CHECK-NEXT: %[[A:.+]] = loop.load %{{.+}}[%[[I0]], %[[I1]]] : tensor<?x64xf32>
  // CHECK-NEXT: %[[B:.+]] = loop.load %{{.+}}[%[[I1]]] : tensor<64xf32>
  // CHECK-NEXT: %[[S:.+]] = arith.addf %[[A]], %[[B]] : f32
  // CHECK-NEXT: loop.yield %[[S]] : f32
  %0 = loop.pointwise(%n) : tensor<?x64xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%i, %j] : tensor<?x64xf32>
    %bv = loop.load %b[%j] : tensor<64xf32>
    %s = arith.addf %a, %bv : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<?x64xf32>
}

// -----

// Tests that integer elements load as signless scalars and that a rank-0
// node has an empty index space.
// CHECK-LABEL: fx.graph @signless_scalars
fx.graph @signless_scalars(%x: tensor<si64>) -> tensor<si64> {
  // CHECK: loop.pointwise : tensor<si64> {
  // CHECK: loop.load %{{.+}}[] : tensor<si64>
  // CHECK: loop.yield %{{.+}} : i64
  %0 = loop.pointwise : tensor<si64> {
  ^bb0:
    %v = loop.load %x[] : tensor<si64>
    %r = arith.addi %v, %v : i64
    loop.yield %r : i64
  }
  fx.output %0 : tensor<si64>
}

// -----

// Tests that a node may carry attributes.
// CHECK-LABEL: fx.graph @attributes
// CHECK: loop.pointwise : tensor<2xi1> attributes {tag = "x"}
fx.graph @attributes(%x: tensor<2xi1>) -> tensor<2xi1> {
  %0 = loop.pointwise : tensor<2xi1> attributes {tag = "x"} {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<2xi1>
    loop.yield %v : i1
  }
  fx.output %0 : tensor<2xi1>
}

// -----

// Tests a reduction with dynamic result and reduction sizes, accumulating a
// bf16 result in f32.
// CHECK-LABEL: fx.graph @reduce
// CHECK: loop.reduce "sum"(%{{.+}}) over [%{{.+}}, 8] : tensor<?xbf16> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[R0:.+]]: index, %[[R1:.+]]: index):
// CHECK: loop.yield %{{.+}} : f32
fx.graph @reduce(%x: tensor<?x?x8xbf16>) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x8xbf16>
  %m = tensor.dim %x, %c1 : tensor<?x?x8xbf16>
  %0 = loop.reduce "sum"(%n) over [%m, 8] : tensor<?xbf16> {
  ^bb0(%i: index, %j: index, %k: index):
    %v = loop.load %x[%i, %j, %k] : tensor<?x?x8xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<?xbf16>
}

// -----

// A kernel: a reduction kept per row and a node that reads it at its row.
// CHECK-LABEL: fx.graph @kernel
// CHECK: %[[K:.+]]:2 = loop.kernel rows(1) -> tensor<8x64xf32>, tensor<8x1xf32> {
// CHECK: %[[M:.+]] = loop.reduce "max" over [64] : tensor<8x1xf32>
// CHECK: %[[Y:.+]] = loop.pointwise : tensor<8x64xf32>
// CHECK: loop.load %[[M]][%{{.+}}, %{{.+}}] : tensor<8x1xf32>
// CHECK: loop.kernel_yield %[[Y]], %[[M]] : tensor<8x64xf32>, tensor<8x1xf32>
// CHECK: fx.output %[[K]]#0, %[[K]]#1
fx.graph @kernel(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x1xf32>) {
  %c0 = arith.constant 0 : index
  %k:2 = loop.kernel rows(1) -> tensor<8x64xf32>, tensor<8x1xf32> {
    %m = loop.reduce "max" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x64xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %mx : f32
      loop.yield %d : f32
    }
    loop.kernel_yield %y, %m : tensor<8x64xf32>, tensor<8x1xf32>
  }
  fx.output %k#0, %k#1 : tensor<8x64xf32>, tensor<8x1xf32>
}

// -----

// Matrix products: plain, batched, and reading a stored [N, K] weight
// transposed.
// CHECK-LABEL: fx.graph @matmul
// CHECK: %[[D:.+]] = tensor.dim
// CHECK: %[[Y:.+]] = loop.matmul(%[[D]]) %{{.+}}, %{{.+}} {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16>
// CHECK: loop.matmul %{{.+}}, %{{.+}} {transpose_lhs} : tensor<2x16x8xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
fx.graph @matmul(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %a: tensor<2x16x8xf32>, %b: tensor<2x16x4xf32>) -> (tensor<?x128xbf16>, tensor<2x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %y = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16>
  %z = loop.matmul %a, %b {transpose_lhs} : tensor<2x16x8xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  fx.output %y, %z : tensor<?x128xbf16>, tensor<2x8x4xf32>
}

// -----

// An epilogue: a bias and the rounding, applied to each sum before it is
// stored.
// CHECK-LABEL: fx.graph @epilogue
// CHECK: loop.matmul %{{.+}}, %{{.+}} : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xbf16> epilogue {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[SUM:.+]]: f32):
// CHECK-NEXT: %[[B:.+]] = loop.load %{{.+}}[%[[J]]] : tensor<32xf32>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[SUM]], %[[B]] : f32
// CHECK: loop.yield
// CHECK: loop.matmul %{{.+}}, %{{.+}} : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xf32>
// CHECK-NOT: epilogue
fx.graph @epilogue(%x: tensor<8x64xbf16>, %w: tensor<64x32xbf16>, %bias: tensor<32xf32>) -> (tensor<8x32xbf16>, tensor<8x32xf32>) {
  %y = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xbf16> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %b = loop.load %bias[%j] : tensor<32xf32>
    %s = arith.addf %sum, %b : f32
    %r = arith.truncf %s : f32 to bf16
    loop.yield %r : bf16
  }
  %z = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xf32>
  fx.output %y, %z : tensor<8x32xbf16>, tensor<8x32xf32>
}

// -----

// A scatter adds the values its body yields into `init` at the indices it
// yields; its update space has dynamic sizes like a reduction's.
// CHECK-LABEL: fx.graph @scatter
// CHECK: loop.scatter "sum" %{{.+}} over [%{{.+}}, 64] : tensor<100x64xf32> -> tensor<100x64xf32> {
// CHECK-NEXT: ^bb0(%[[U0:.+]]: index, %[[U1:.+]]: index):
// CHECK: loop.scatter_yield %{{.+}} at [%{{.+}}, %[[U1]]] : f32
fx.graph @scatter(%zeros: tensor<100x64xf32>, %ids: tensor<?xsi64>, %grad: tensor<?x64xf32>) -> tensor<100x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %ids, %c0 : tensor<?xsi64>
  %0 = loop.scatter "sum" %zeros over [%n, 64] : tensor<100x64xf32> -> tensor<100x64xf32> {
  ^bb0(%i: index, %d: index):
    %id = loop.load %ids[%i] : tensor<?xsi64>
    %row = arith.index_cast %id : i64 to index
    %v = loop.load %grad[%i, %d] : tensor<?x64xf32>
    loop.scatter_yield %v at [%row, %d] : f32
  }
  fx.output %0 : tensor<100x64xf32>
}

// -----

// CHECK-LABEL: fx.graph @convolution
// CHECK: loop.convolution(%{{.+}}) %arg0, %arg1 {dilation = array<i64: 1, 2>, groups = 2 : i64, padding = array<i64: 1, 0>, stride = array<i64: 2, 1>} : tensor<?x4x9x9xbf16>, tensor<6x2x3x3xbf16> -> tensor<?x6x5x5xf32>
fx.graph @convolution(%x: tensor<?x4x9x9xbf16>, %w: tensor<6x2x3x3xbf16>) -> tensor<?x6x5x5xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x9x9xbf16>
  %y = loop.convolution(%n) %x, %w {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2} : tensor<?x4x9x9xbf16>, tensor<6x2x3x3xbf16> -> tensor<?x6x5x5xf32>
  fx.output %y : tensor<?x6x5x5xf32>
}

// -----

// CHECK-LABEL: fx.graph @check
// CHECK: loop.check %{{.+}}, "RuntimeError: ZeroDivisionError" : tensor<si32>
fx.graph @check(%x: tensor<8xsi64>) {
  %flag = loop.reduce "max" over [8] : tensor<si32> {
  ^bb0(%r: index):
    %v = loop.load %x[%r] : tensor<8xsi64>
    %c0 = arith.constant 0 : i64
    %zero = arith.cmpi eq, %v, %c0 : i64
    %e = arith.extui %zero : i1 to i32
    loop.yield %e : i32
  }
  loop.check %flag, "RuntimeError: ZeroDivisionError" : tensor<si32>
  fx.output
}

// -----

// CHECK-LABEL: fx.graph @channels_last_convolution
// CHECK: loop.convolution(%{{.+}}) %arg0, %arg1 {channels_last, dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x9x9x4xbf16>, tensor<6x3x3x2xbf16> -> tensor<?x9x9x6xbf16>
fx.graph @channels_last_convolution(%x: tensor<?x9x9x4xbf16>, %w: tensor<6x3x3x2xbf16>) -> tensor<?x9x9x6xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x9x9x4xbf16>
  %y = loop.convolution(%n) %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x9x9x4xbf16>, tensor<6x3x3x2xbf16> -> tensor<?x9x9x6xbf16>
  fx.output %y : tensor<?x9x9x6xbf16>
}

// -----

// Attention: dynamic batches and sequence lengths, static head sizes; a
// causal one keeps its attribute.
// CHECK-LABEL: fx.graph @attention
// CHECK: loop.attention(%{{.+}}, %{{.+}}) %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 1.250000e-01 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x32xbf16> -> tensor<?x4x?x32xbf16>
// CHECK: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 5.000000e-01 : f64} : tensor<8x16xf32>, tensor<5x16xf32>, tensor<5x16xf32> -> tensor<8x16xf32>
fx.graph @attention(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x32xbf16>, %a: tensor<8x16xf32>, %b: tensor<5x16xf32>) -> (tensor<?x4x?x32xbf16>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %l = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %o = loop.attention(%n, %l) %q, %k, %v {scale = 0.125 : f64, causal} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x32xbf16> -> tensor<?x4x?x32xbf16>
  %p = loop.attention %a, %b, %b {scale = 0.5 : f64} : tensor<8x16xf32>, tensor<5x16xf32>, tensor<5x16xf32> -> tensor<8x16xf32>
  fx.output %o, %p : tensor<?x4x?x32xbf16>, tensor<8x16xf32>
}

// -----

// A scores region: the indices and the scaled score, a soft cap and a mask.
// CHECK-LABEL: fx.graph @attention_scores
// CHECK: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.250000e-01 : f64} : tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16> -> tensor<2x8x64xbf16> scores {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index, %[[I2:.+]]: index, %[[SCORE:.+]]: f32):
// CHECK: math.tanh
// CHECK: loop.load %{{.+}}[%[[I1]], %[[I2]]] : tensor<8x8xf32>
// CHECK: loop.yield %{{.+}} : f32
fx.graph @attention_scores(%q: tensor<2x8x64xbf16>, %mask: tensor<8x8xf32>) -> tensor<2x8x64xbf16> {
  %cap = arith.constant 30.0 : f32
  %o = loop.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16> -> tensor<2x8x64xbf16> scores {
  ^bb0(%i0: index, %i1: index, %i2: index, %score: f32):
    %d = arith.divf %score, %cap : f32
    %t = math.tanh %d : f32
    %c = arith.mulf %t, %cap : f32
    %m = loop.load %mask[%i1, %i2] : tensor<8x8xf32>
    %s = arith.addf %c, %m : f32
    loop.yield %s : f32
  }
  fx.output %o : tensor<2x8x64xbf16>
}

// -----

// A logsumexp result, and the gradients from it: dynamic sizes of the
// queries and of the keys, a mask added in the scores region.
// CHECK-LABEL: fx.graph @attention_gradients
// CHECK: %[[O:.+]]:2 = loop.attention(%{{.+}}, %{{.+}}) %{{.+}} {causal, scale = 1.250000e-01 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
// CHECK: loop.attention_backward query_sizes(%{{.+}}, %{{.+}}) key_sizes(%{{.+}}, %{{.+}}) %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[O]]#1, %{{.+}} {causal, scale = 1.250000e-01 : f64} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>, tensor<?x4x?xf32> -> tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> scores {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index, %[[SCORE:.+]]: f32):
// CHECK: loop.load %{{.+}}[%[[I]], %[[J]]] : tensor<?x?xf32>
fx.graph @attention_gradients(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %do: tensor<?x4x?x64xbf16>, %delta: tensor<?x4x?xf32>, %mask: tensor<?x?xf32>) -> (tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %l = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %s = tensor.dim %k, %c2 : tensor<?x4x?x64xbf16>
  %o:2 = loop.attention(%n, %l) %q, %k, %k {scale = 0.125 : f64, causal} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
  %g:3 = loop.attention_backward query_sizes(%n, %l) key_sizes(%n, %s) %q, %k, %k, %do, %o#1, %delta {scale = 0.125 : f64, causal} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>, tensor<?x4x?xf32> -> tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> scores {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %score: f32):
    %m = loop.load %mask[%i2, %i3] : tensor<?x?xf32>
    %a = arith.addf %score, %m : f32
    loop.yield %a : f32
  }
  fx.output %g#0, %g#1, %g#2 : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>
}
