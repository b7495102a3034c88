// RUN: kiln-opt %s -split-input-file --kiln-loop-channels-last | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-channels-last=all-graphs=true | FileCheck %s --check-prefix=ALL

// Between two library convolutions the relu stores [N, H, W, C]: its body
// reads the first convolution at the permuted indices, the transpose that
// fed the second convolution folds away, and the result keeps PyTorch's
// layout, reading the relu at the permuted position.
// CHECK-LABEL: fx.graph @between_convolutions
// CHECK: %[[A:.+]] = loop.convolution(%{{.+}}) %arg0, %arg1 {channels_last
// CHECK: %[[R:.+]] = loop.pointwise(%[[N:.+]]) : tensor<?x8x8x16xbf16> {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index, %[[I2:.+]]: index, %[[I3:.+]]: index):
// CHECK-NEXT: loop.load %[[A]][%[[I0]], %[[I1]], %[[I2]], %[[I3]]] : tensor<?x8x8x16xbf16>
// CHECK-NOT: loop.pointwise
// CHECK: %[[B:.+]] = loop.convolution(%{{.+}}) %[[R]], %arg1 {channels_last
// CHECK: %[[OUT:.+]] = loop.pointwise(%[[N]]) : tensor<?x16x8x8xbf16> {
// CHECK-NEXT: ^bb0(%[[J0:.+]]: index, %[[J1:.+]]: index, %[[J2:.+]]: index, %[[J3:.+]]: index):
// CHECK-DAG: loop.load %[[B]][%[[J0]], %[[J2]], %[[J3]], %[[J1]]]
// CHECK-DAG: loop.load %[[R]][%[[J0]], %[[J2]], %[[J3]], %[[J1]]]
// CHECK: fx.output %[[OUT]]
fx.graph @between_convolutions(%x: tensor<?x8x8x16xbf16>, %w: tensor<16x3x3x16xbf16>) -> tensor<?x16x8x8xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x8x16xbf16>
  %a = loop.convolution(%n) %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x8x8x16xbf16>, tensor<16x3x3x16xbf16> -> tensor<?x8x8x16xbf16>
  %r = loop.pointwise(%n) : tensor<?x16x8x8xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %a[%i0, %i2, %i3, %i1] : tensor<?x8x8x16xbf16>
    %z = arith.constant 0.0 : bf16
    %m = arith.maximumf %v, %z : bf16
    loop.yield %m : bf16
  }
  %t = loop.pointwise(%n) : tensor<?x8x8x16xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %r[%i0, %i3, %i1, %i2] : tensor<?x16x8x8xbf16>
    loop.yield %v : bf16
  }
  %b = loop.convolution(%n) %t, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x8x8x16xbf16>, tensor<16x3x3x16xbf16> -> tensor<?x8x8x16xbf16>
  %out = loop.pointwise(%n) : tensor<?x16x8x8xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %b[%i0, %i2, %i3, %i1] : tensor<?x8x8x16xbf16>
    %u = loop.load %r[%i0, %i1, %i2, %i3] : tensor<?x16x8x8xbf16>
    %s = arith.addf %v, %u : bf16
    loop.yield %s : bf16
  }
  fx.output %out : tensor<?x16x8x8xbf16>
}

// -----

// A size query of a moved node asks the permuted dimension; what a
// reduction reads moves too, but a node that the graph returns, or that
// has another rank, keeps its layout.
// CHECK-LABEL: fx.graph @what_moves
// CHECK: %[[MOVED:.+]] = loop.pointwise : tensor<2x5x6x3xf32>
// CHECK: %[[D:.+]] = tensor.dim %[[MOVED]], %c3
// CHECK: loop.reduce "sum" over [5, 6] : tensor<2x3xf32>
// CHECK: loop.load %[[MOVED]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x5x6x3xf32>
// CHECK: loop.pointwise : tensor<2x3x5x6xf32>
// CHECK: loop.pointwise(%[[D]]) : tensor<?x6xf32>
// CHECK: fx.output
fx.graph @what_moves(%x: tensor<2x3x5x6xf32>, %xc: tensor<2x5x6x3xf32>, %w: tensor<4x1x1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3x5x6xf32>, tensor<?x6xf32>, tensor<2x5x6x4xf32>) {
  %c1 = arith.constant 1 : index
  %y = loop.convolution %xc, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, channels_last} : tensor<2x5x6x3xf32>, tensor<4x1x1x3xf32> -> tensor<2x5x6x4xf32>
  %a = loop.pointwise : tensor<2x3x5x6xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %x[%i0, %i1, %i2, %i3] : tensor<2x3x5x6xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %d = tensor.dim %a, %c1 : tensor<2x3x5x6xf32>
  %s = loop.reduce "sum" over [5, 6] : tensor<2x3xf32> {
  ^bb0(%i0: index, %i1: index, %r0: index, %r1: index):
    %v = loop.load %a[%i0, %i1, %r0, %r1] : tensor<2x3x5x6xf32>
    loop.yield %v : f32
  }
  %kept = loop.pointwise : tensor<2x3x5x6xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %a[%i0, %i1, %i2, %i3] : tensor<2x3x5x6xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %m = loop.pointwise(%d) : tensor<?x6xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %a[%c1, %c1, %c1, %j] : tensor<2x3x5x6xf32>
    loop.yield %v : f32
  }
  fx.output %s, %kept, %m, %y : tensor<2x3xf32>, tensor<2x3x5x6xf32>, tensor<?x6xf32>, tensor<2x5x6x4xf32>
}

// -----

// Without a library convolution nothing moves, unless `all-graphs`.
// CHECK-LABEL: fx.graph @no_convolution
// CHECK: loop.pointwise : tensor<1x2x3x4xf32>
// ALL-LABEL: fx.graph @no_convolution
// ALL: loop.pointwise : tensor<1x3x4x2xf32>
// ALL: loop.pointwise : tensor<1x2x3x4xf32>
fx.graph @no_convolution(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %a = loop.pointwise : tensor<1x2x3x4xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %x[%i0, %i1, %i2, %i3] : tensor<1x2x3x4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %b = loop.pointwise : tensor<1x2x3x4xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %a[%i0, %i1, %i2, %i3] : tensor<1x2x3x4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  fx.output %b : tensor<1x2x3x4xf32>
}

// -----

// A node that loads a moved image at its own indices over the same sizes
// is a copy and folds (the moved %r copies the convolution); over other
// sizes it reads part of it, and stays.
// CHECK-LABEL: fx.graph @not_a_copy
// CHECK: %[[M:.+]] = tensor.dim %arg1, %c0
// CHECK: %[[A:.+]] = loop.convolution(%{{.+}}) %arg0, %arg2
// CHECK-NEXT: %[[T:.+]] = loop.pointwise(%[[M]]) : tensor<?x8x8x16xbf16> {
// CHECK: loop.load %[[A]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]
// CHECK: loop.convolution(%[[M]]) %[[T]], %arg2
fx.graph @not_a_copy(%x: tensor<?x8x8x16xbf16>, %y: tensor<?x8x8x16xbf16>, %w: tensor<16x3x3x16xbf16>) -> tensor<?x8x8x16xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x8x16xbf16>
  %m = tensor.dim %y, %c0 : tensor<?x8x8x16xbf16>
  %a = loop.convolution(%n) %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x8x8x16xbf16>, tensor<16x3x3x16xbf16> -> tensor<?x8x8x16xbf16>
  %r = loop.pointwise(%n) : tensor<?x16x8x8xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %a[%i0, %i2, %i3, %i1] : tensor<?x8x8x16xbf16>
    loop.yield %v : bf16
  }
  %t = loop.pointwise(%m) : tensor<?x8x8x16xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %v = loop.load %r[%i0, %i3, %i1, %i2] : tensor<?x16x8x8xbf16>
    loop.yield %v : bf16
  }
  %b = loop.convolution(%m) %t, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x8x8x16xbf16>, tensor<16x3x3x16xbf16> -> tensor<?x8x8x16xbf16>
  fx.output %b : tensor<?x8x8x16xbf16>
}

// -----

// Without a library convolution, nodes that read channels-last images move:
// a window sum over an NHWC input (a max pooling's gradient) computes
// [N, H, W, C], and the transpose back to NHWC at the graph's end folds;
// a per-channel sum kept as [1, C, 1, 1] becomes [1, 1, 1, C].
// CHECK-LABEL: fx.graph @reads_channels_last
// CHECK: %[[W:.+]] = loop.reduce "sum" over [3, 3] : tensor<2x6x6x8xf32> {
// CHECK-NEXT: ^bb0(%[[N:.+]]: index, %[[H:.+]]: index, %[[X:.+]]: index, %[[C:.+]]: index, %[[R:.+]]: index, %[[S:.+]]: index):
// CHECK: loop.load %arg0[%[[N]], %{{.+}}, %{{.+}}, %[[C]]] : tensor<2x6x6x8xf32>
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [2, 6, 6] : tensor<1x1x1x8xf32>
// CHECK: loop.pointwise : tensor<2x8x6x6xf32>
// CHECK: loop.load %[[SUM]][%c0, %c0, %c0, %{{.+}}] : tensor<1x1x1x8xf32>
// CHECK: fx.output %[[W]], %{{.+}}
fx.graph @reads_channels_last(%x: tensor<2x6x6x8xf32>) -> (tensor<2x6x6x8xf32>, tensor<2x8x6x6xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %w = loop.reduce "sum" over [3, 3] : tensor<2x8x6x6xf32> {
  ^bb0(%n: index, %c: index, %h: index, %x0: index, %r: index, %s: index):
    %hr = arith.addi %h, %r : index
    %hh = arith.minsi %hr, %c5 : index
    %xs = arith.addi %x0, %s : index
    %xx = arith.minsi %xs, %c5 : index
    %v = loop.load %x[%n, %hh, %xx, %c] : tensor<2x6x6x8xf32>
    loop.yield %v : f32
  }
  %t = loop.pointwise : tensor<2x6x6x8xf32> {
  ^bb0(%n: index, %h: index, %x0: index, %c: index):
    %v = loop.load %w[%n, %c, %h, %x0] : tensor<2x8x6x6xf32>
    loop.yield %v : f32
  }
  %sum = loop.reduce "sum" over [2, 6, 6] : tensor<1x8x1x1xf32> {
  ^bb0(%i: index, %c: index, %j: index, %k: index, %n: index, %h: index, %x0: index):
    %v = loop.load %x[%n, %h, %x0, %c] : tensor<2x6x6x8xf32>
    loop.yield %v : f32
  }
  %d = loop.pointwise : tensor<2x8x6x6xf32> {
  ^bb0(%n: index, %c: index, %h: index, %x0: index):
    %v = loop.load %x[%n, %h, %x0, %c] : tensor<2x6x6x8xf32>
    %m = loop.load %sum[%c0, %c, %c0, %c0] : tensor<1x8x1x1xf32>
    %e = arith.subf %v, %m : f32
    loop.yield %e : f32
  }
  fx.output %t, %d : tensor<2x6x6x8xf32>, tensor<2x8x6x6xf32>
}

// -----

// Nodes that read an NCHW image, or one of each, stay.
// CHECK-LABEL: fx.graph @reads_other_layouts
// CHECK: loop.reduce "sum" over [3] : tensor<2x8x6x6xf32>
// CHECK: loop.pointwise : tensor<2x8x6x6xf32>
// CHECK: loop.pointwise : tensor<2x8x6x6xf32>
fx.graph @reads_other_layouts(%x: tensor<2x6x6x8xf32>, %y: tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32> {
  %c5 = arith.constant 5 : index
  %a = loop.reduce "sum" over [3] : tensor<2x8x6x6xf32> {
  ^bb0(%n: index, %c: index, %h: index, %x0: index, %r: index):
    %xr = arith.addi %x0, %r : index
    %xx = arith.minsi %xr, %c5 : index
    %v = loop.load %y[%n, %c, %h, %xx] : tensor<2x8x6x6xf32>
    loop.yield %v : f32
  }
  %b = loop.pointwise : tensor<2x8x6x6xf32> {
  ^bb0(%n: index, %c: index, %h: index, %x0: index):
    %v = loop.load %x[%n, %h, %x0, %c] : tensor<2x6x6x8xf32>
    %u = loop.load %a[%n, %c, %h, %x0] : tensor<2x8x6x6xf32>
    %e = arith.addf %v, %u : f32
    loop.yield %e : f32
  }
  %o = loop.pointwise : tensor<2x8x6x6xf32> {
  ^bb0(%n: index, %c: index, %h: index, %x0: index):
    %v = loop.load %b[%n, %c, %h, %x0] : tensor<2x8x6x6xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  fx.output %o : tensor<2x8x6x6xf32>
}
