// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop='direct-convolution-depth=0' | FileCheck %s --check-prefix=PATCHES
// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop | FileCheck %s --check-prefix=FUSED

// Convolution gradients. With direct-convolution-depth=0 (PATCHES) every
// one goes through the forward's im2col matrices; by default (CHECK) filters
// that read at most 64 inputs, no fewer than a group's filters, are summed
// directly.

// A convolution's gradients go through the forward's im2col matrices: the
// output gradient regrouped [G, F, (n, o)], dPatches = weightsᵀ·dOut summed
// back over the kernel positions (col2im), dW = dOut·patchesᵀ, and the
// bias gradient a sum over the batch and the positions.
// PATCHES-LABEL: fx.graph @convolution_backward
// PATCHES: %[[DOUT:.+]] = loop.pointwise : tensor<1x4x32xf32>
// PATCHES: %[[PATCHES:.+]] = loop.pointwise : tensor<1x27x32xf32>
// PATCHES: %[[W:.+]] = loop.pointwise : tensor<1x4x27xf32>
// PATCHES: %[[DP:.+]] = loop.matmul %[[W]], %[[DOUT]] {transpose_lhs} : tensor<1x4x27xf32>, tensor<1x4x32xf32> -> tensor<1x27x32xf32>
// PATCHES: %[[TERMS:.+]] = loop.pointwise : tensor<2x3x6x6x3x3xf32>
// PATCHES: loop.load %[[DP]]
// PATCHES: %[[DX:.+]] = loop.reduce "sum" over [3, 3] : tensor<2x3x6x6xf32>
// PATCHES: loop.load %[[TERMS]]
// PATCHES: %[[DWG:.+]] = loop.matmul %[[DOUT]], %[[PATCHES]] {transpose_rhs} : tensor<1x4x32xf32>, tensor<1x27x32xf32> -> tensor<1x4x27xf32>
// PATCHES: %[[DW:.+]] = loop.pointwise : tensor<4x3x3x3xf32>
// PATCHES: loop.load %[[DWG]]
// PATCHES: %[[DB:.+]] = loop.reduce "sum" over [2, 4, 4] : tensor<4xf32>
// PATCHES: fx.output %[[DX]], %[[DW]], %[[DB]]
// CHECK-LABEL: fx.graph @convolution_backward
// CHECK: %[[DX:.+]] = loop.reduce "sum" over [4, 3, 3] : tensor<2x3x6x6xf32>
// CHECK: %[[DW:.+]] = loop.reduce "sum" over [2, 4, 4] : tensor<4x3x3x3xf32>
// CHECK: %[[DB:.+]] = loop.reduce "sum" over [2, 4, 4] : tensor<4xf32>
// CHECK: fx.output %[[DX]], %[[DW]], %[[DB]]
fx.graph @convolution_backward(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {bias_sizes = array<i64: 4>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, true>} : (tensor<2x4x4x4xf32>, tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
}

// -----

// Masked-off gradients are zeros; no product computes them.
// PATCHES-LABEL: fx.graph @convolution_weight_gradient_only
// PATCHES-NOT: transpose_lhs
// PATCHES: loop.matmul %{{.+}}, %{{.+}} {transpose_rhs}
// PATCHES-NOT: loop.matmul
// CHECK-LABEL: fx.graph @convolution_weight_gradient_only
// CHECK-NOT: loop.matmul
// CHECK: loop.reduce "sum" over [2, 4, 4] : tensor<4x3x3x3xf32>
// CHECK-NOT: loop.matmul
fx.graph @convolution_weight_gradient_only(%g: tensor<2x4x4x4xf32>, %x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: false, true, false>} : (tensor<2x4x4x4xf32>, tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  fx.output %0#1 : tensor<4x3x3x3xf32>
}

// -----

// A transposed convolution's gradients swap the roles of its input and its
// output's gradient: the patches read the output's gradient, the input
// gradient is weights·patches regrouped (a convolution of the output's
// gradient), dW = input·patchesᵀ, and the bias gradient sums the output's.
// PATCHES-LABEL: fx.graph @transposed_backward
// PATCHES: %[[X:.+]] = loop.pointwise : tensor<1x2x16xf32>
// PATCHES: %[[PATCHES:.+]] = loop.pointwise : tensor<1x27x16xf32>
// PATCHES: load %arg0
// PATCHES: %[[W:.+]] = loop.pointwise : tensor<1x2x27xf32>
// PATCHES: %[[SUMS:.+]] = loop.matmul %[[W]], %[[PATCHES]] : tensor<1x2x27xf32>, tensor<1x27x16xf32> -> tensor<1x2x16xf32>
// PATCHES: %[[DX:.+]] = loop.pointwise : tensor<1x2x4x4xf32>
// PATCHES: loop.load %[[SUMS]]
// PATCHES: %[[DWG:.+]] = loop.matmul %[[X]], %[[PATCHES]] {transpose_rhs} : tensor<1x2x16xf32>, tensor<1x27x16xf32> -> tensor<1x2x27xf32>
// PATCHES: %[[DW:.+]] = loop.pointwise : tensor<2x3x3x3xf32>
// PATCHES: %[[DB:.+]] = loop.reduce "sum" over [1, 6, 6] : tensor<3xf32>
// PATCHES: fx.output %[[DX]], %[[DW]], %[[DB]]
// CHECK-LABEL: fx.graph @transposed_backward
// CHECK-NOT: loop.matmul
// CHECK: %[[DX:.+]] = loop.reduce "sum" over [3, 3, 3] : tensor<1x2x4x4xf32>
// CHECK: loop.load %arg0
// CHECK: loop.load %arg2
// CHECK: %[[DW:.+]] = loop.reduce "sum" over [1, 4, 4] : tensor<2x3x3x3xf32>
// CHECK: loop.load %arg0
// CHECK: loop.load %arg1
// CHECK: %[[DB:.+]] = loop.reduce "sum" over [1, 6, 6] : tensor<3xf32>
// CHECK: fx.output %[[DX]], %[[DW]], %[[DB]]
fx.graph @transposed_backward(%g: tensor<1x3x6x6xf32>, %x: tensor<1x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {bias_sizes = array<i64: 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, true>} : (tensor<1x3x6x6xf32>, tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>
}

// -----

// A dynamic batch sizes the gradients' columns (the batch times the
// positions), the products along them and the input's gradient.
// PATCHES-LABEL: fx.graph @backward_of_a_dynamic_batch
// PATCHES: %[[N:.+]] = tensor.dim %arg1, %c0
// PATCHES: %[[COLUMNS:.+]] = arith.muli %[[N]], %c16
// PATCHES: %[[X:.+]] = loop.pointwise(%[[COLUMNS]]) : tensor<1x2x?xf32>
// PATCHES: %[[PATCHES:.+]] = loop.pointwise(%[[COLUMNS]]) : tensor<1x27x?xf32>
// PATCHES: loop.matmul(%[[COLUMNS]]) %{{.+}}, %[[PATCHES]] : tensor<1x2x27xf32>, tensor<1x27x?xf32> -> tensor<1x2x?xf32>
// PATCHES: %[[DX:.+]] = loop.pointwise(%[[N]]) : tensor<?x2x4x4xf32>
// PATCHES: loop.matmul %[[X]], %[[PATCHES]] {transpose_rhs} : tensor<1x2x?xf32>, tensor<1x27x?xf32> -> tensor<1x2x27xf32>
// CHECK-LABEL: fx.graph @backward_of_a_dynamic_batch
// CHECK: %[[N:.+]] = tensor.dim %arg1, %c0
// CHECK: loop.reduce "sum"(%[[N]]) over [3, 3, 3] : tensor<?x2x4x4xf32>
// CHECK: %[[M:.+]] = tensor.dim %arg1, %c0
// CHECK: loop.reduce "sum" over [%[[M]], 4, 4] : tensor<2x3x3x3xf32>
fx.graph @backward_of_a_dynamic_batch(%g: tensor<?x3x6x6xf32>, %x: tensor<?x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> (tensor<?x2x4x4xf32>, tensor<2x3x3x3xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, false>} : (tensor<?x3x6x6xf32>, tensor<?x2x4x4xf32>, tensor<2x3x3x3xf32>) -> (tensor<?x2x4x4xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>)
  fx.output %0#0, %0#1 : tensor<?x2x4x4xf32>, tensor<2x3x3x3xf32>
}

// -----

// Tests that a depthwise convolution's gradients are direct sums, with no
// patches: the input gradient over each element's filters and kernel
// positions whose outputs read it ((x + 1 - k) / 2 where that divides and
// is an output position), the weight gradient over the batch and the
// output positions.
// CHECK-LABEL: fx.graph @depthwise_backward
// CHECK-NOT: loop.matmul
// CHECK: %[[DX:.+]] = loop.reduce "sum" over [1, 3, 3] : tensor<2x6x8x8xf32>
// CHECK: %[[CHANNEL:.+]] = arith.addi %{{.+}}, %[[F:.+]] : index
// CHECK: %[[SHIFTED:.+]] = arith.subi %{{.+}}, %[[KH:.+]] : index
// CHECK: arith.divsi %[[SHIFTED]], %c2
// CHECK: arith.remsi %[[SHIFTED]], %c2
// CHECK: arith.cmpi slt, %{{.+}}, %c4
// CHECK: %[[GRAD:.+]] = loop.load %arg0[%{{.+}}, %[[CHANNEL]], %{{.+}}, %{{.+}}] : tensor<2x6x4x4xf32>
// CHECK: %[[WEIGHT:.+]] = loop.load %arg2[%[[CHANNEL]], %c0, %[[KH]], %{{.+}}] : tensor<6x1x3x3xf32>
// CHECK: %[[TERM:.+]] = arith.mulf %[[GRAD]], %[[WEIGHT]] : f32
// CHECK: arith.select %{{.+}}, %[[TERM]], %cst : f32
// CHECK: %[[DW:.+]] = loop.reduce "sum" over [2, 4, 4] : tensor<6x1x3x3xf32>
// CHECK: loop.load %arg1
// CHECK: loop.load %arg0
// CHECK: %[[DB:.+]] = loop.reduce "sum" over [2, 4, 4] : tensor<6xf32>
// CHECK: fx.output %[[DX]], %[[DW]], %[[DB]]
// PATCHES-LABEL: fx.graph @depthwise_backward
// PATCHES: loop.matmul
// FUSED-LABEL: fx.graph @depthwise_backward
// FUSED-NOT: loop.matmul
// FUSED: loop.reduce "sum" over [1, 3, 3] : tensor<2x6x8x8xf32>
// FUSED-NOT: loop.matmul
// FUSED: loop.reduce "sum" over [2, 4, 4] : tensor<6x1x3x3xf32>
// FUSED-NOT: loop.matmul
// FUSED: loop.reduce "sum" over [2, 4, 4] : tensor<6xf32>
// FUSED-NOT: loop.matmul
// FUSED: fx.output
fx.graph @depthwise_backward(%g: tensor<2x6x4x4xf32>, %x: tensor<2x6x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> (tensor<2x6x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {bias_sizes = array<i64: 6>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 6, output_mask = array<i1: true, true, true>} : (tensor<2x6x4x4xf32>, tensor<2x6x8x8xf32>, tensor<6x1x3x3xf32>) -> (tensor<2x6x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<2x6x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>
}

// -----

// Tests that 16-bit gradients sum products in f32 (the reduce rounds
// once), here of a depthwise convolution with two filters per channel.
// CHECK-LABEL: fx.graph @depthwise_backward_bf16
// CHECK: %[[DX:.+]] = loop.reduce "sum" over [2, 3] : tensor<2x6x8xbf16>
// CHECK-COUNT-2: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[TERM:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.select %{{.+}}, %[[TERM]], %{{.+}} : f32
// CHECK: %[[DW:.+]] = loop.reduce "sum" over [2, 8] : tensor<12x1x3xbf16>
// CHECK-COUNT-2: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[WTERM:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: loop.yield %[[WTERM]] : f32
// CHECK-NOT: arith.truncf
// CHECK: fx.output %[[DX]], %[[DW]]
fx.graph @depthwise_backward_bf16(%g: tensor<2x12x8xbf16>, %x: tensor<2x6x8xbf16>, %w: tensor<12x1x3xbf16>) -> (tensor<2x6x8xbf16>, tensor<12x1x3xbf16>) {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 6, output_mask = array<i1: true, true, false>} : (tensor<2x12x8xbf16>, tensor<2x6x8xbf16>, tensor<12x1x3xbf16>) -> (tensor<2x6x8xbf16>, tensor<12x1x3xbf16>, tensor<12xbf16>)
  fx.output %0#0, %0#1 : tensor<2x6x8xbf16>, tensor<12x1x3xbf16>
}

// -----

// Tests that dynamic sizes size the input gradient (the input's) and the
// weight gradient's sums (the output gradient's batch and positions).
// CHECK-LABEL: fx.graph @depthwise_of_any_size
// CHECK-DAG: %[[H:.+]] = tensor.dim %arg1, %c2
// CHECK-DAG: %[[W:.+]] = tensor.dim %arg1, %c3
// CHECK-DAG: %[[OH:.+]] = tensor.dim %arg0, %c2
// CHECK-DAG: %[[OW:.+]] = tensor.dim %arg0, %c3
// CHECK-DAG: %[[N:.+]] = tensor.dim %arg1, %c0
// CHECK: loop.reduce "sum"(%[[N]], %[[H]], %[[W]]) over [1, 3, 3] : tensor<?x4x?x?xf32>
// CHECK: %[[GN:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.reduce "sum" over [%[[GN]], %[[OH]], %[[OW]]] : tensor<4x1x3x3xf32>
fx.graph @depthwise_of_any_size(%g: tensor<?x4x?x?xf32>, %x: tensor<?x4x?x?xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 4, output_mask = array<i1: true, true, false>} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>) -> (tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>)
  fx.output %0#0, %0#1 : tensor<?x4x?x?xf32>, tensor<4x1x3x3xf32>
}

// -----

// Tests that an input gradient whose elements would each sum over more than
// 64 filter entries (8 filters x 9 positions) goes through patches while the
// weight gradient (27 inputs per filter) is direct.
// CHECK-LABEL: fx.graph @do_not_sum_many_filters_directly
// CHECK: loop.matmul %{{.+}}, %{{.+}} {transpose_lhs}
// CHECK: loop.reduce "sum" over [3, 3] : tensor<2x3x6x6xf32>
// CHECK-NOT: loop.matmul
// CHECK: loop.reduce "sum" over [2, 4, 4] : tensor<8x3x3x3xf32>
fx.graph @do_not_sum_many_filters_directly(%g: tensor<2x8x4x4xf32>, %x: tensor<2x3x6x6xf32>, %w: tensor<8x3x3x3xf32>) -> (tensor<2x3x6x6xf32>, tensor<8x3x3x3xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, false>} : (tensor<2x8x4x4xf32>, tensor<2x3x6x6xf32>, tensor<8x3x3x3xf32>) -> (tensor<2x3x6x6xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>)
  fx.output %0#0, %0#1 : tensor<2x3x6x6xf32>, tensor<8x3x3x3xf32>
}

// -----

// Tests that filters reading more than 64 inputs (8 channels x 9
// positions) keep both products.
// CHECK-LABEL: fx.graph @do_not_sum_deep_filters_directly
// CHECK: loop.matmul %{{.+}}, %{{.+}} {transpose_lhs}
// CHECK: loop.matmul %{{.+}}, %{{.+}} {transpose_rhs}
// CHECK-NOT: loop.reduce "sum" over [2, 4, 4]
fx.graph @do_not_sum_deep_filters_directly(%g: tensor<2x8x4x4xf32>, %x: tensor<2x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> (tensor<2x8x6x6xf32>, tensor<8x8x3x3xf32>) {
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, false>} : (tensor<2x8x4x4xf32>, tensor<2x8x6x6xf32>, tensor<8x8x3x3xf32>) -> (tensor<2x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>)
  fx.output %0#0, %0#1 : tensor<2x8x6x6xf32>, tensor<8x8x3x3xf32>
}
