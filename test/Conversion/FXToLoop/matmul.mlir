// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop | FileCheck %s --check-prefix=INLINED
// RUN: not kiln-opt %s -split-input-file --kiln-fx-to-loop=fail-on-unsupported 2>&1 | FileCheck %s --check-prefix=ERROR

// mm and bmm are loop.matmul nodes.
// CHECK-LABEL: fx.graph @mm
// CHECK: %[[D:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[Y:.+]] = loop.matmul(%[[D]]) %arg0, %arg1 : tensor<?x64xf16>, tensor<64x128xf16> -> tensor<?x128xf16>
// CHECK: fx.output %[[Y]]
fx.graph @mm(%a: tensor<?x64xf16>, %b: tensor<64x128xf16>) -> tensor<?x128xf16> {
  %0 = fx.mm %a, %b : (tensor<?x64xf16>, tensor<64x128xf16>) -> tensor<?x128xf16>
  fx.output %0 : tensor<?x128xf16>
}

// -----

// CHECK-LABEL: fx.graph @bmm
// CHECK: loop.matmul %arg0, %arg1 : tensor<4x8x16xbf16>, tensor<4x16x32xbf16> -> tensor<4x8x32xbf16>
fx.graph @bmm(%a: tensor<4x8x16xbf16>, %b: tensor<4x16x32xbf16>) -> tensor<4x8x32xbf16> {
  %0 = fx.bmm %a, %b : (tensor<4x8x16xbf16>, tensor<4x16x32xbf16>) -> tensor<4x8x32xbf16>
  fx.output %0 : tensor<4x8x32xbf16>
}

// -----

// A linear layer: t(weight) is read in place, transposed, and the bias is
// a pointwise node that reads the product, which stays in f32 for bf16 (by
// default) so that the sum is rounded once.
// CHECK-LABEL: fx.graph @linear
// CHECK-NOT: fx.permute
// CHECK: %[[Y:.+]] = loop.matmul(%{{.+}}) %arg0, %arg1 {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xf32>
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x128xbf16>
// CHECK: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-DAG: loop.load %[[Y]][%[[I]], %[[J]]] : tensor<?x128xf32>
// CHECK-DAG: loop.load %arg2[%[[J]]] : tensor<128xbf16>
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// INLINED-LABEL: fx.graph @linear
// INLINED-COUNT-1: loop.matmul
// INLINED-COUNT-1: loop.pointwise
fx.graph @linear(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %b: tensor<128xbf16>) -> tensor<?x128xbf16> {
  %t = fx.permute %w {dims = array<i64: 1, 0>} : (tensor<128x64xbf16>) -> tensor<64x128xbf16>
  %0 = fx.addmm %b, %x, %t : (tensor<128xbf16>, tensor<?x64xbf16>, tensor<64x128xbf16>) -> tensor<?x128xbf16>
  fx.output %0 : tensor<?x128xbf16>
}

// -----

// Attention scores: q x k^T over the last two dimensions of a batch.
// CHECK-LABEL: fx.graph @scores
// CHECK: loop.matmul %arg0, %arg1 {transpose_rhs} : tensor<12x16x8xf32>, tensor<12x16x8xf32> -> tensor<12x16x16xf32>
fx.graph @scores(%q: tensor<12x16x8xf32>, %k: tensor<12x16x8xf32>) -> tensor<12x16x16xf32> {
  %t = fx.permute %k {dims = array<i64: 0, 2, 1>} : (tensor<12x16x8xf32>) -> tensor<12x8x16xf32>
  %0 = fx.bmm %q, %t : (tensor<12x16x8xf32>, tensor<12x8x16xf32>) -> tensor<12x16x16xf32>
  fx.output %0 : tensor<12x16x16xf32>
}

// -----

// A permute that is not a transpose of the last two dimensions is a copy.
// CHECK-LABEL: fx.graph @not_a_transpose
// CHECK: %[[P:.+]] = loop.pointwise : tensor<16x12x8xf32>
// CHECK: loop.matmul %[[P]], %arg1 : tensor<16x12x8xf32>, tensor<16x8x4xf32> -> tensor<16x12x4xf32>
fx.graph @not_a_transpose(%q: tensor<12x16x8xf32>, %k: tensor<16x8x4xf32>) -> tensor<16x12x4xf32> {
  %t = fx.permute %q {dims = array<i64: 1, 0, 2>} : (tensor<12x16x8xf32>) -> tensor<16x12x8xf32>
  %0 = fx.bmm %t, %k : (tensor<16x12x8xf32>, tensor<16x8x4xf32>) -> tensor<16x12x4xf32>
  fx.output %0 : tensor<16x12x4xf32>
}

// -----

// beta and alpha scale; beta = 0 ignores `self` altogether.
// CHECK-LABEL: fx.graph @baddbmm
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[P:.+]] = loop.matmul %arg1, %arg2
// CHECK: loop.pointwise : tensor<2x3x5xf32>
// CHECK-DAG: %[[V:.+]] = loop.load %[[P]]
// CHECK-DAG: %[[S:.+]] = loop.load %arg0
// CHECK-DAG: %[[A:.+]] = arith.mulf %[[V]], %[[TWO]]
// CHECK-DAG: %[[B:.+]] = arith.mulf %[[S]], %[[HALF]]
// CHECK: arith.addf %[[B]], %[[A]]
// CHECK-LABEL: fx.graph @baddbmm_beta_zero
// CHECK: %[[P:.+]] = loop.matmul %arg1, %arg2
// CHECK: loop.pointwise : tensor<2x3x5xf32>
// CHECK-NOT: %arg0
// CHECK: loop.load %[[P]]
// CHECK-NOT: arith.addf
// CHECK: fx.output
fx.graph @baddbmm(%s: tensor<3x1xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = fx.baddbmm %s, %a, %b {alpha = 2.0 : f64, beta = 0.5 : f64} : (tensor<3x1xf32>, tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  fx.output %0 : tensor<2x3x5xf32>
}
fx.graph @baddbmm_beta_zero(%s: tensor<3x1xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = fx.baddbmm %s, %a, %b {beta = 0 : i64} : (tensor<3x1xf32>, tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  fx.output %0 : tensor<2x3x5xf32>
}

// -----

// Integer products have no lowering.
// ERROR: error: kiln-fx-to-loop: no lowering for 'fx.mm' with these operand types
fx.graph @integer_mm(%a: tensor<2x8xsi32>, %b: tensor<8x4xsi32>) -> tensor<2x4xsi32> {
  %0 = fx.mm %a, %b : (tensor<2x8xsi32>, tensor<8x4xsi32>) -> tensor<2x4xsi32>
  fx.output %0 : tensor<2x4xsi32>
}

// -----

// torch.matmul of 4-d tensors merges their batch dimensions by views into a
// bmm and splits the result again: the product runs on the unmerged
// tensors, reading k transposed, and nothing is copied.
// CHECK-LABEL: fx.graph @attention_scores
// CHECK-NEXT: %[[P:.+]] = loop.matmul %arg0, %arg1 {transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x16xf32>
// CHECK-NEXT: fx.output %[[P]]
fx.graph @attention_scores(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32> {
  %kt = fx.permute %k {dims = array<i64: 0, 1, 3, 2>} : (tensor<2x4x16x8xf32>) -> tensor<2x4x8x16xf32>
  %e = fx.expand %q : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %a = fx.view %e : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
  %f = fx.expand %kt : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %b = fx.view %f : (tensor<2x4x8x16xf32>) -> tensor<8x8x16xf32>
  %p = fx.bmm %a, %b : (tensor<8x16x8xf32>, tensor<8x8x16xf32>) -> tensor<8x16x16xf32>
  %r = fx.unsafe_view %p : (tensor<8x16x16xf32>) -> tensor<2x4x16x16xf32>
  fx.output %r : tensor<2x4x16x16xf32>
}

// -----

// Batches that the views merge differently stay merged (and copied).
// CHECK-LABEL: fx.graph @do_not_unmerge_different_batches
// CHECK: loop.matmul %{{.+}}, %{{.+}} : tensor<8x16x8xf32>, tensor<8x8x16xf32> -> tensor<8x16x16xf32>
fx.graph @do_not_unmerge_different_batches(%q: tensor<2x4x16x8xf32>, %k: tensor<4x2x8x16xf32>) -> tensor<8x16x16xf32> {
  %a = fx.view %q : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
  %b = fx.view %k : (tensor<4x2x8x16xf32>) -> tensor<8x8x16xf32>
  %p = fx.bmm %a, %b : (tensor<8x16x8xf32>, tensor<8x8x16xf32>) -> tensor<8x16x16xf32>
  fx.output %p : tensor<8x16x16xf32>
}

// -----

// A linear layer on a 3-d input multiplies the input's rows where they are:
// merging its leading dimensions is a collapse, free on contiguous buffers,
// not a copy.
// CHECK-LABEL: fx.graph @linear_3d
// CHECK: %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x7x64xf32> into tensor<14x64xf32>
// CHECK-NEXT: loop.matmul %[[X]], %arg1 {transpose_rhs} : tensor<14x64xf32>, tensor<32x64xf32> -> tensor<14x32xf32>
fx.graph @linear_3d(%x: tensor<2x7x64xf32>, %w: tensor<32x64xf32>) -> tensor<14x32xf32> {
  %v = fx.view %x : (tensor<2x7x64xf32>) -> tensor<14x64xf32>
  %t = fx.permute %w {dims = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %y = fx.mm %v, %t : (tensor<14x64xf32>, tensor<64x32xf32>) -> tensor<14x32xf32>
  fx.output %y : tensor<14x32xf32>
}

// -----

// A convolution is a loop.convolution of the input and the weight (sums in
// f32 for bf16), which a pointwise node reads, adding the bias and
// rounding; kiln-loop-expand-convolutions expands it
// (expand-convolutions.mlir).
// CHECK-LABEL: fx.graph @convolution
// CHECK: %[[C:.+]] = loop.convolution %arg0, %arg1 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
// CHECK: loop.pointwise : tensor<2x4x8x8xf32> {
// CHECK: loop.load %[[C]]
// CHECK: loop.load %arg2
// CHECK: arith.addf
fx.graph @convolution(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x8x8xf32> {
  %0 = fx.convolution %x, %w bias(%b) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  fx.output %0 : tensor<2x4x8x8xf32>
}

// -----

// A dynamic batch is the convolution's dynamic size.
// CHECK-LABEL: fx.graph @depthwise
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.convolution(%[[N]]) %arg0, %arg1 {dilation = array<i64: 1, 1>, groups = 6 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x6x4x4xbf16>, tensor<6x1x3x3xbf16> -> tensor<?x6x4x4xf32>
fx.graph @depthwise(%x: tensor<?x6x4x4xbf16>, %w: tensor<6x1x3x3xbf16>) -> tensor<?x6x4x4xbf16> {
  %0 = fx.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 6} : (tensor<?x6x4x4xbf16>, tensor<6x1x3x3xbf16>) -> tensor<?x6x4x4xbf16>
  fx.output %0 : tensor<?x6x4x4xbf16>
}

// -----

// A transposed convolution is the input gradient of the convolution that
// swaps its shapes: its input regrouped [G, Cin/G, (n, x)], the patches
// weightsᵀ·input, each output position summing the entries that stand for
// it (col2im) in f32; then the bias and the rounding. A dynamic batch sizes
// the columns and every node after them.
// CHECK-LABEL: fx.graph @transposed
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[COLUMNS:.+]] = arith.muli %[[N]], %c16
// CHECK: %[[X:.+]] = loop.pointwise(%[[COLUMNS]]) : tensor<2x2x?xbf16>
// CHECK: %[[W:.+]] = loop.pointwise : tensor<2x2x27xbf16>
// CHECK: %[[P:.+]] = loop.matmul(%[[COLUMNS]]) %[[W]], %[[X]] {transpose_lhs} : tensor<2x2x27xbf16>, tensor<2x2x?xbf16> -> tensor<2x27x?xf32>
// CHECK: %[[TERMS:.+]] = loop.pointwise(%[[N]]) : tensor<?x6x8x8x3x3xf32>
// CHECK: loop.load %[[P]]
// CHECK: %[[SUMS:.+]] = loop.reduce "sum"(%[[N]]) over [3, 3] : tensor<?x6x8x8xf32>
// CHECK: %[[Y:.+]] = loop.pointwise(%[[N]]) : tensor<?x6x8x8xbf16>
// CHECK: loop.load %[[SUMS]]
// CHECK: loop.load %arg2
// CHECK: arith.addf
// CHECK: arith.truncf
// CHECK: fx.output %[[Y]]
fx.graph @transposed(%x: tensor<?x4x4x4xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<6xbf16>) -> tensor<?x6x8x8xbf16> {
  %0 = fx.convolution %x, %w bias(%b) {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 1, 1>, groups = 2} : (tensor<?x4x4x4xbf16>, tensor<4x3x3x3xbf16>, tensor<6xbf16>) -> tensor<?x6x8x8xbf16>
  fx.output %0 : tensor<?x6x8x8xbf16>
}

// -----

// Dynamic spatial sizes: a convolution's result sizes are (x + 2p - d(k -
// 1) - 1) / s + 1 of its input's, the loop.convolution's dynamic sizes; a
// transposed one's (x - 1)s - 2p + d(k - 1) + output_padding + 1, and its
// columns the batch times the input's positions.
// CHECK-LABEL: fx.graph @convolution_of_any_size
// CHECK-DAG: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK-DAG: %[[W:.+]] = tensor.dim %arg0, %c3
// CHECK: %[[H1:.+]] = arith.addi %[[H]], %c-1
// CHECK: %[[OH:.+]] = arith.addi %[[H1]], %c1
// CHECK: %[[W1:.+]] = arith.addi %[[W]], %c-3
// CHECK: %[[OW:.+]] = arith.addi %[[W1]], %c1
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.convolution(%[[N]], %[[OH]], %[[OW]]) %arg0, %arg1
// CHECK-SAME: tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x?x?xf32>
// CHECK: loop.pointwise(%[[N]], %[[OH]], %[[OW]]) : tensor<?x4x?x?xf32>
fx.graph @convolution_of_any_size(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32> {
  %0 = fx.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1} : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  fx.output %0 : tensor<?x4x?x?xf32>
}

// -----

// CHECK-LABEL: fx.graph @transposed_of_any_size
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[H2:.+]] = arith.muli %[[H]], %c2
// CHECK: %[[OH:.+]] = arith.addi %[[H2]], %c1
// CHECK: %[[NH:.+]] = arith.muli %[[H]], %c2
// CHECK: %[[COLUMNS:.+]] = arith.muli %[[NH]], %c4
// CHECK: %[[X:.+]] = loop.pointwise(%[[COLUMNS]]) : tensor<1x2x?xf32>
// CHECK: loop.matmul(%[[COLUMNS]]) %{{.+}}, %[[X]] {transpose_lhs} : tensor<1x2x27xf32>, tensor<1x2x?xf32> -> tensor<1x27x?xf32>
// CHECK: loop.pointwise(%[[OH]]) : tensor<2x3x?x9x3x3xf32>
// CHECK: loop.reduce "sum"(%[[OH]]) over [3, 3] : tensor<2x3x?x9xf32>
fx.graph @transposed_of_any_size(%x: tensor<2x2x?x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<2x3x?x9xf32> {
  %0 = fx.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1} : (tensor<2x2x?x4xf32>, tensor<2x3x3x3xf32>) -> tensor<2x3x?x9xf32>
  fx.output %0 : tensor<2x3x?x9xf32>
}

// -----

// Integer convolutions have no lowering.
// ERROR: error: kiln-fx-to-loop: no lowering for 'fx.convolution' with these operand types
fx.graph @do_not_lower_integer_transposed(%x: tensor<1x2x4x4xsi64>, %w: tensor<2x3x3x3xsi64>) -> tensor<1x3x6x6xsi64> {
  %0 = fx.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1} : (tensor<1x2x4x4xsi64>, tensor<2x3x3x3xsi64>) -> tensor<1x3x6x6xsi64>
  fx.output %0 : tensor<1x3x6x6xsi64>
}

// -----

// A view that only splits or merges a product's dimensions (a language
// model's logits) is a reshape of the product's buffer, not a copy.
// CHECK-LABEL: fx.graph @logits_view
// CHECK: %[[P:.+]] = loop.matmul %{{.+}}, %arg1 {transpose_rhs}
// CHECK-NEXT: %[[R:.+]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 4, 10] : tensor<8x10xf32> into tensor<2x4x10xf32>
// CHECK-NEXT: fx.output %[[R]]
fx.graph @logits_view(%h: tensor<8x16xf32>, %w: tensor<10x16xf32>) -> tensor<2x4x10xf32> {
  %t = fx.permute %w {dims = array<i64: 1, 0>} : (tensor<10x16xf32>) -> tensor<16x10xf32>
  %p = fx.mm %h, %t : (tensor<8x16xf32>, tensor<16x10xf32>) -> tensor<8x10xf32>
  %r = fx.unsafe_view %p : (tensor<8x10xf32>) -> tensor<2x4x10xf32>
  fx.output %r : tensor<2x4x10xf32>
}

// -----

// A view that regroups elements across dimensions reads the product by
// index, in a node.
// CHECK-LABEL: fx.graph @do_not_reshape_regrouped_product
// CHECK: %[[P:.+]] = loop.matmul
// CHECK-NOT: tensor.expand_shape
// CHECK: loop.pointwise : tensor<4x4x3xf32>
// CHECK: loop.load %[[P]]
fx.graph @do_not_reshape_regrouped_product(%a: tensor<8x3xf32>, %b: tensor<3x6xf32>) -> tensor<4x4x3xf32> {
  %p = fx.mm %a, %b : (tensor<8x3xf32>, tensor<3x6xf32>) -> tensor<8x6xf32>
  %r = fx.view %p : (tensor<8x6xf32>) -> tensor<4x4x3xf32>
  fx.output %r : tensor<4x4x3xf32>
}
