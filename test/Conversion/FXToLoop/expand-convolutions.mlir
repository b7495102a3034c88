// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-expand-convolutions{direct-depth=0}))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-expand-convolutions))' | FileCheck %s --check-prefix=DIRECT
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop | FileCheck %s --check-prefix=LOWERED
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop=direct-convolution-depth=0 | FileCheck %s --check-prefix=PRODUCTS

// With direct-depth=0 every convolution is a product.

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
// Its filters read 27 inputs each, at most direct-depth's default (64), and
// there are fewer filters (4), so the patches would be larger than the
// result: by default each output sums its window directly.
// DIRECT-LABEL: fx.graph @convolution
// DIRECT: loop.reduce "sum" over [3, 3, 3] : tensor<2x4x8x8xf32> {
// DIRECT: ^bb0(%[[N:.+]]: index, %[[F:.+]]: index, %[[H:.+]]: index, %[[W:.+]]: index, %[[C:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// DIRECT: %[[G:.+]] = arith.divui %[[F]], %c4
// DIRECT: %[[GC:.+]] = arith.muli %[[G]], %c3
// DIRECT: %[[CH:.+]] = arith.addi %[[GC]], %[[C]]
// DIRECT: arith.cmpi sge
// DIRECT: %[[X:.+]] = loop.load %arg0[%[[N]], %[[CH]], %{{.+}}, %{{.+}}] : tensor<2x3x8x8xf32>
// DIRECT: %[[XV:.+]] = arith.select %{{.+}}, %[[X]], %{{.+}} : f32
// DIRECT: %[[WV:.+]] = loop.load %arg1[%[[F]], %[[C]], %[[I]], %[[J]]] : tensor<4x3x3x3xf32>
// DIRECT: %[[P:.+]] = arith.mulf %[[XV]], %[[WV]] : f32
// DIRECT: loop.yield %[[P]] : f32
// DIRECT-NOT: loop.matmul
// DIRECT-NOT: loop.convolution
// The lowering pipeline expands convolutions before it inlines and fuses;
// its direct-convolution-depth option is the pass's.
// LOWERED-LABEL: fx.graph @convolution
// LOWERED: loop.reduce "sum" over [3, 3, 3]
// LOWERED-NOT: loop.convolution
// PRODUCTS-LABEL: fx.graph @convolution
// PRODUCTS: loop.matmul
// PRODUCTS-NOT: loop.convolution
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
// By default one node: 16-bit operands widened, their products summed in
// f32, the reduction sized by the dynamic batch.
// DIRECT-LABEL: fx.graph @depthwise
// DIRECT: %[[N:.+]] = tensor.dim %arg0, %c0
// DIRECT: loop.reduce "sum"(%[[N]]) over [1, 3, 3] : tensor<?x6x4x4xf32> {
// DIRECT: loop.load %arg0[{{.+}}] : tensor<?x6x4x4xbf16>
// DIRECT: loop.load %arg1[{{.+}}] : tensor<6x1x3x3xbf16>
// DIRECT: arith.extf %{{.+}} : bf16 to f32
// DIRECT: arith.extf %{{.+}} : bf16 to f32
// DIRECT-NOT: loop.matmul
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
// Directly, reads clamp to the run-time extents.
// DIRECT-LABEL: fx.graph @any_size
// DIRECT: %[[H:.+]] = tensor.dim %arg0, %c2
// DIRECT: %[[W:.+]] = tensor.dim %arg0, %c3
// DIRECT: %[[XH:.+]] = tensor.dim %arg0, %c2
// DIRECT: %[[XW:.+]] = tensor.dim %arg0, %c3
// DIRECT: loop.reduce "sum"(%[[H]], %[[W]]) over [3, 3, 3] : tensor<2x4x?x?xf32>
// DIRECT: %[[HL:.+]] = arith.subi %[[XH]], %c1
// DIRECT: arith.cmpi sle, %{{.+}}, %[[HL]] : index
// DIRECT: %[[WL:.+]] = arith.subi %[[XW]], %c1
// DIRECT: arith.cmpi sle, %{{.+}}, %[[WL]] : index
fx.graph @any_size(%x: tensor<2x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x?x?xf32> {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %h = tensor.dim %x, %c2 : tensor<2x3x?x?xf32>
  %w_ = tensor.dim %x, %c3 : tensor<2x3x?x?xf32>
  %0 = loop.convolution(%h, %w_) %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x3x?x?xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x?x?xf32>
  fx.output %0 : tensor<2x4x?x?xf32>
}

// -----

// Filters that read more than direct-depth inputs (8 channels x 9
// positions = 72 > 64) stay a product of patches; a stride and a dilation
// move the window.
// CHECK-LABEL: fx.graph @deep_filters
// CHECK: loop.matmul
// DIRECT-LABEL: fx.graph @deep_filters
// DIRECT: loop.pointwise : tensor<1x72x18xf32>
// DIRECT: loop.matmul %{{.+}}, %{{.+}} : tensor<1x5x72xf32>, tensor<1x72x18xf32> -> tensor<1x5x18xf32>
// DIRECT-NOT: loop.reduce
// LOWERED-LABEL: fx.graph @deep_filters
// LOWERED: loop.matmul
fx.graph @deep_filters(%x: tensor<2x8x9x9xf32>, %w: tensor<5x8x3x3xf32>) -> tensor<2x5x3x3xf32> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 2, 2>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 3, 3>} : tensor<2x8x9x9xf32>, tensor<5x8x3x3xf32> -> tensor<2x5x3x3xf32>
  fx.output %0 : tensor<2x5x3x3xf32>
}

// -----

// A depthwise filter of 2 multipliers per channel in 1-d, strided and
// dilated: filter f reads channel f / 2 at o * 2 + k * 3 - 2.
// DIRECT-LABEL: fx.graph @channel_multiplier
// DIRECT: loop.reduce "sum" over [1, 5] : tensor<3x4x7xf64> {
// DIRECT: ^bb0(%[[N:.+]]: index, %[[F:.+]]: index, %[[O:.+]]: index, %[[C:.+]]: index, %[[K:.+]]: index):
// DIRECT: %[[G:.+]] = arith.divui %[[F]], %c2
// DIRECT: %[[CH:.+]] = arith.addi %[[G]], %[[C]]
// DIRECT: %[[OS:.+]] = arith.muli %[[O]], %c2
// DIRECT: %[[KD:.+]] = arith.muli %[[K]], %c3
// DIRECT: %[[AT:.+]] = arith.addi %[[OS]], %[[KD]]
// DIRECT: arith.subi %[[AT]], %c2
// DIRECT: loop.load %arg0[%[[N]], %[[CH]], %{{.+}}] : tensor<3x2x21xf64>
// DIRECT: loop.load %arg1[%[[F]], %[[C]], %[[K]]] : tensor<4x1x5xf64>
// DIRECT: arith.mulf %{{.+}}, %{{.+}} : f64
fx.graph @channel_multiplier(%x: tensor<3x2x21xf64>, %w: tensor<4x1x5xf64>) -> tensor<3x4x7xf64> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 3>, groups = 2 : i64, padding = array<i64: 2>, stride = array<i64: 2>} : tensor<3x2x21xf64>, tensor<4x1x5xf64> -> tensor<3x4x7xf64>
  fx.output %0 : tensor<3x4x7xf64>
}

// -----

// Filters that read few inputs but many of them (16 filters of 4 inputs
// each, a pointwise convolution) stay a product: the patches are smaller
// than the result, and the product reuses each input 16 times.
// DIRECT-LABEL: fx.graph @many_filters
// DIRECT: loop.matmul %{{.+}}, %{{.+}} : tensor<1x16x4xf32>, tensor<1x4x50xf32> -> tensor<1x16x50xf32>
// DIRECT-NOT: loop.reduce
fx.graph @many_filters(%x: tensor<2x4x5x5xf32>, %w: tensor<16x4x1x1xf32>) -> tensor<2x16x5x5xf32> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<2x4x5x5xf32>, tensor<16x4x1x1xf32> -> tensor<2x16x5x5xf32>
  fx.output %0 : tensor<2x16x5x5xf32>
}

// -----

// A 16-bit result (compute-in-f32=false) still sums in f32, as a product's
// sums do, and rounds once.
// DIRECT-LABEL: fx.graph @half_sums
// DIRECT: loop.reduce "sum" over [1, 3] : tensor<2x4x8xbf16> {
// DIRECT: %[[X:.+]] = arith.extf %{{.+}} : bf16 to f32
// DIRECT: %[[W:.+]] = arith.extf %{{.+}} : bf16 to f32
// DIRECT: %[[P:.+]] = arith.mulf %[[X]], %[[W]] : f32
// DIRECT: loop.yield %[[P]] : f32
fx.graph @half_sums(%x: tensor<2x4x8xbf16>, %w: tensor<4x1x3xbf16>) -> tensor<2x4x8xbf16> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 1>, groups = 4 : i64, padding = array<i64: 1>, stride = array<i64: 1>} : tensor<2x4x8xbf16>, tensor<4x1x3xbf16> -> tensor<2x4x8xbf16>
  fx.output %0 : tensor<2x4x8xbf16>
}
