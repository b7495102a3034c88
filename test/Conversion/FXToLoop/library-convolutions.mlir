// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop,kiln-loop-expand-convolutions{library=true}))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop=library-convolutions=true | FileCheck %s --check-prefix=LOWERED

// With `library`, a 2-d convolution that is not summed directly becomes
// transposes to channels-last, a channels-last convolution into the
// operands' dtype, and a node that reads it back, converted to the
// original result's f32; the dynamic batch passes to all of them.
// CHECK-LABEL: fx.graph @convolution
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[X:.+]] = loop.pointwise(%[[N]]) : tensor<?x8x8x16xbf16> {
// CHECK: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index, %[[I2:.+]]: index, %[[I3:.+]]: index):
// CHECK: loop.load %{{.+}}[%[[I0]], %[[I3]], %[[I1]], %[[I2]]] : tensor<?x16x8x8xbf16>
// CHECK: %[[W:.+]] = loop.pointwise : tensor<32x3x3x16xbf16> {
// CHECK: loop.load %arg1[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<32x16x3x3xbf16>
// CHECK: %[[Y:.+]] = loop.convolution(%{{.+}}) %[[X]], %[[W]] {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x8x8x16xbf16>, tensor<32x3x3x16xbf16> -> tensor<?x4x4x32xbf16>
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x32x4x4xf32> {
// CHECK: ^bb0(%[[J0:.+]]: index, %[[J1:.+]]: index, %[[J2:.+]]: index, %[[J3:.+]]: index):
// CHECK: %[[S:.+]] = loop.load %[[Y]][%[[J0]], %[[J2]], %[[J3]], %[[J1]]] : tensor<?x4x4x32xbf16>
// CHECK: arith.extf %[[S]] : bf16 to f32
// After fusion the transposes and the reader are one node each around the
// library call: the scale inlines into the input's transpose, the relu
// into the reader.
// LOWERED-LABEL: fx.graph @convolution
// LOWERED: loop.pointwise(%{{.+}}) : tensor<?x8x8x16xbf16> {
// LOWERED: arith.mulf
// LOWERED: loop.convolution(%{{.+}}) %{{.+}}, %{{.+}} {channels_last,
// LOWERED: loop.pointwise(%{{.+}}) : tensor<?x32x4x4xbf16> {
// LOWERED: arith.maximumf
// LOWERED-NOT: loop.matmul
// LOWERED: fx.output
fx.graph @convolution(%x: tensor<?x16x8x8xbf16>, %w: tensor<32x16x3x3xbf16>) -> tensor<?x32x4x4xbf16> {
  %s = fx.mul_scalar %x {other = 2.0 : f64} : (tensor<?x16x8x8xbf16>) -> tensor<?x16x8x8xbf16>
  %0 = fx.convolution %s, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1} : (tensor<?x16x8x8xbf16>, tensor<32x16x3x3xbf16>) -> tensor<?x32x4x4xbf16>
  %1 = fx.relu %0 : tensor<?x32x4x4xbf16>
  fx.output %1 : tensor<?x32x4x4xbf16>
}

// -----

// A 1-d convolution too, in f32 (its sums already the result's dtype).
// CHECK-LABEL: fx.graph @one_dimension
// CHECK: loop.convolution %{{.+}}, %{{.+}} {channels_last, dilation = array<i64: 2>, groups = 1 : i64, padding = array<i64: 2>, stride = array<i64: 1>} : tensor<2x20x32xf32>, tensor<8x3x32xf32> -> tensor<2x20x8xf32>
// CHECK: loop.pointwise : tensor<2x8x20xf32> {
// CHECK-NOT: arith.extf
// CHECK: loop.yield
fx.graph @one_dimension(%x: tensor<2x32x20xf32>, %w: tensor<8x32x3xf32>) -> tensor<2x8x20xf32> {
  %0 = loop.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 2>, dilation = array<i64: 2>, groups = 1} : tensor<2x32x20xf32>, tensor<8x32x3xf32> -> tensor<2x8x20xf32>
  fx.output %0 : tensor<2x8x20xf32>
}

// -----

// A 16-bit stem over 3 channels reads them padded to 8 with zeros (the
// library's tensor-core kernels take multiples of 8), input and filters.
// CHECK-LABEL: fx.graph @few_channels
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : bf16
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[X:.+]] = loop.pointwise(%{{.+}}) : tensor<?x16x16x8xbf16> {
// CHECK: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index, %[[I2:.+]]: index, %[[I3:.+]]: index):
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[I3]], %[[C3]] : index
// CHECK: %[[C:.+]] = arith.minui %[[I3]], %[[C2]] : index
// CHECK: %[[V:.+]] = loop.load %arg0[%[[I0]], %[[C]], %[[I1]], %[[I2]]] : tensor<?x3x16x16xbf16>
// CHECK: arith.select %[[IN]], %[[V]], %[[ZERO]] : bf16
// CHECK: %[[W:.+]] = loop.pointwise : tensor<8x7x7x8xbf16> {
// CHECK: arith.select
// CHECK: loop.convolution(%{{.+}}) %[[X]], %[[W]] {channels_last, {{.+}}} : tensor<?x16x16x8xbf16>, tensor<8x7x7x8xbf16> -> tensor<?x8x8x8xbf16>
fx.graph @few_channels(%x: tensor<?x3x16x16xbf16>, %w: tensor<8x3x7x7xbf16>) -> tensor<?x8x8x8xbf16> {
  %0 = fx.convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 3, 3>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1} : (tensor<?x3x16x16xbf16>, tensor<8x3x7x7xbf16>) -> tensor<?x8x8x8xbf16>
  fx.output %0 : tensor<?x8x8x8xbf16>
}

// -----

// f32 sums take no tensor cores (no TF32), and grouped channels would
// need padding per group: neither is padded.
// CHECK-LABEL: fx.graph @do_not_pad_f32_or_groups
// CHECK: loop.convolution %{{.+}}, %{{.+}} {channels_last, {{.+}}} : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
// CHECK: loop.convolution %{{.+}}, %{{.+}} {channels_last, {{.+}}groups = 2{{.+}}} : tensor<1x8x8x6xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x6x6x4xbf16>
fx.graph @do_not_pad_f32_or_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %y: tensor<1x6x8x8xbf16>, %v: tensor<4x3x3x3xbf16>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xbf16>) {
  %0 = loop.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  %1 = loop.convolution %y, %v {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2} : tensor<1x6x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x6x6xbf16>
  fx.output %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xbf16>
}

// -----

// Depthwise filters go to the library too (its kernels beat window sums);
// 3-d convolutions and f64 ones still become patches and a product: the
// library has neither.
// CHECK-LABEL: fx.graph @depthwise
// CHECK: loop.convolution %{{.+}}, %{{.+}} {channels_last, dilation = array<i64: 1, 1>, groups = 6 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x4x4x6xbf16>, tensor<6x3x3x1xbf16> -> tensor<2x4x4x6xbf16>
// CHECK-NOT: loop.reduce
fx.graph @depthwise(%x: tensor<2x6x4x4xbf16>, %w: tensor<6x1x3x3xbf16>) -> tensor<2x6x4x4xf32> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 1, 1>, groups = 6 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<2x6x4x4xbf16>, tensor<6x1x3x3xbf16> -> tensor<2x6x4x4xf32>
  fx.output %0 : tensor<2x6x4x4xf32>
}

// -----

// CHECK-LABEL: fx.graph @volume
// CHECK: loop.matmul
// CHECK-NOT: channels_last
fx.graph @volume(%x: tensor<1x8x4x4x4xf32>, %w: tensor<16x8x3x3x3xf32>) -> tensor<1x16x2x2x2xf32> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 1, 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0>, stride = array<i64: 1, 1, 1>} : tensor<1x8x4x4x4xf32>, tensor<16x8x3x3x3xf32> -> tensor<1x16x2x2x2xf32>
  fx.output %0 : tensor<1x16x2x2x2xf32>
}

// -----

// CHECK-LABEL: fx.graph @double
// CHECK: loop.matmul
// CHECK-NOT: channels_last
fx.graph @double(%x: tensor<1x16x4x4xf64>, %w: tensor<16x16x3x3xf64>) -> tensor<1x16x2x2xf64> {
  %0 = loop.convolution %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x16x4x4xf64>, tensor<16x16x3x3xf64> -> tensor<1x16x2x2xf64>
  fx.output %0 : tensor<1x16x2x2xf64>
}

// -----

// A channels-last convolution is already the library's: left as it is.
// CHECK-LABEL: fx.graph @already_channels_last
// CHECK-NEXT: %[[Y:.+]] = loop.convolution %arg0, %arg1 {channels_last,
// CHECK-NEXT: fx.output %[[Y]]
fx.graph @already_channels_last(%x: tensor<2x8x8x16xf16>, %w: tensor<32x3x3x16xf16>) -> tensor<2x6x6x32xf16> {
  %0 = loop.convolution %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<2x8x8x16xf16>, tensor<32x3x3x16xf16> -> tensor<2x6x6x32xf16>
  fx.output %0 : tensor<2x6x6x32xf16>
}
