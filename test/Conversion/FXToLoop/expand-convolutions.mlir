// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-expand-convolutions))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop | FileCheck %s --check-prefix=LOWERED

// A convolution is a product of its weights and the input's patches: the
// patches node reads the input at o * stride + k * dilation - padding,
// zero outside; the result regroups the product.
// CHECK-LABEL: fx.graph @convolution
// CHECK: %[[P:.+]] = loop.pointwise : tensor<1x27x128xf32> {
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi sle
// CHECK: %[[X:.+]] = loop.load %arg0[{{.+}}] : tensor<2x3x8x8xf32>
// CHECK: arith.select %{{.+}}, %[[X]], %{{.+}} : f32
// CHECK: %[[W:.+]] = loop.pointwise : tensor<1x4x27xf32> {
// CHECK: loop.load %arg1[{{.+}}] : tensor<4x3x3x3xf32>
// CHECK: %[[M:.+]] = loop.matmul %[[W]], %[[P]] : tensor<1x4x27xf32>, tensor<1x27x128xf32> -> tensor<1x4x128xf32>
// CHECK: loop.pointwise : tensor<2x4x8x8xf32> {
// CHECK: arith.divui %{{.+}}, %c4
// CHECK: arith.remui %{{.+}}, %c4
// CHECK: loop.load %[[M]]
// CHECK-NOT: loop.convolution
// The lowering pipeline expands convolutions before it inlines and fuses.
// LOWERED-LABEL: fx.graph @convolution
// LOWERED: loop.matmul
// LOWERED-NOT: loop.convolution
fx.graph @convolution(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  fx.output %0 : tensor<2x4x8x8xf32>
}

// -----

// Groups are the product's batch dimension (a depthwise convolution here);
// a dynamic batch makes the patch columns dynamic.
// CHECK-LABEL: fx.graph @depthwise
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[C:.+]] = arith.muli %[[N]], %c16
// CHECK: %[[P:.+]] = loop.pointwise(%[[C]]) : tensor<6x9x?xbf16>
// CHECK: loop.matmul(%[[C]]) %{{.+}}, %[[P]] : tensor<6x1x9xbf16>, tensor<6x9x?xbf16> -> tensor<6x1x?xf32>
// CHECK: loop.pointwise(%[[N]]) : tensor<?x6x4x4xf32>
fx.graph @depthwise(%x: tensor<?x6x4x4xbf16>, %w: tensor<6x1x3x3xbf16>) -> tensor<?x6x4x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6x4x4xbf16>
  %0 = loop.convolution(%n) %x, %w {dilation = array<i64: 1, 1>, groups = 6 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x6x4x4xbf16>, tensor<6x1x3x3xbf16> -> tensor<?x6x4x4xf32>
  fx.output %0 : tensor<?x6x4x4xf32>
}

// -----

// Dynamic spatial sizes: the patch columns are the batch times the
// result's run-time positions, the patches clamp reads to the input's
// run-time extent, and the result regroups by the run-time sizes.
// CHECK-LABEL: fx.graph @any_size
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[W:.+]] = tensor.dim %arg0, %c3
// CHECK: %[[NH:.+]] = arith.muli %[[H]], %c2
// CHECK: %[[C:.+]] = arith.muli %[[NH]], %[[W]]
// CHECK: %[[P:.+]] = loop.pointwise(%[[C]]) : tensor<1x27x?xf32>
// CHECK: arith.remui %{{.+}}, %[[W]]
// CHECK: arith.remui %{{.+}}, %[[H]]
// CHECK: loop.matmul(%[[C]]) %{{.+}}, %[[P]] : tensor<1x4x27xf32>, tensor<1x27x?xf32> -> tensor<1x4x?xf32>
// CHECK: loop.pointwise(%[[H]], %[[W]]) : tensor<2x4x?x?xf32>
// CHECK: arith.muli %{{.+}}, %[[H]]
// CHECK: arith.muli %{{.+}}, %[[W]]
fx.graph @any_size(%x: tensor<2x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x?x?xf32> {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %h = tensor.dim %x, %c2 : tensor<2x3x?x?xf32>
  %w_ = tensor.dim %x, %c3 : tensor<2x3x?x?xf32>
  %0 = loop.convolution(%h, %w_) %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x3x?x?xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x?x?xf32>
  fx.output %0 : tensor<2x4x?x?xf32>
}
