// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu --canonicalize -verify-diagnostics | FileCheck %s

// A channels-last convolution on the GPU is a host call of the runtime's
// convolution (cuDNN) on the graph's stream: dtype, the input's batch,
// height, width and channels, the filters and their window, the result's
// height and width, strides, paddings, dilations and groups, then the
// buffers.
// CHECK-LABEL: func.func private @kiln_cuda_convolution(i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @convolution
// CHECK-SAME: (%[[X:.+]]: memref<?x14x14x16xbf16>, %[[W:.+]]: memref<32x3x3x16xbf16>, %[[OUT:.+]]: memref<?x7x7x32xbf16>, %[[STREAM:.+]]: !llvm.ptr)
// CHECK-DAG: %[[BF16:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[C14:.+]] = arith.constant 14 : i64
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : i64
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : i64
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : i64
// CHECK-DAG: %[[C7:.+]] = arith.constant 7 : i64
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : i64
// CHECK: %[[N:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[NI:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: call @kiln_cuda_convolution(%[[BF16]], %[[NI]], %[[C14]], %[[C14]], %[[C16]], %[[C32]], %[[C3]], %[[C3]], %[[C7]], %[[C7]], %[[C2]], %[[C2]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %[[C1]], %{{.+}}, %{{.+}}, %{{.+}}, %[[STREAM]])
fx.graph @convolution(%x: tensor<?x14x14x16xbf16>, %w: tensor<32x3x3x16xbf16>) -> tensor<?x7x7x32xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x14x14x16xbf16>
  %y = loop.convolution(%n) %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x14x14x16xbf16>, tensor<32x3x3x16xbf16> -> tensor<?x7x7x32xbf16>
  fx.output %y : tensor<?x7x7x32xbf16>
}

// -----

// A 1-d convolution is a 2-d one of height 1 (stride and dilation 1,
// padding 0 along it); f32 is dtype 0, and the groups pass through.
// CHECK-LABEL: func.func @one_dimension
// CHECK-DAG: %[[F32:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[C20:.+]] = arith.constant 20 : i64
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : i64
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : i64
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : i64
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : i64
// CHECK: call @kiln_cuda_convolution(%[[F32]], %[[TWO]], %[[ONE]], %[[C20]], %[[C32]], %[[C8]], %[[ONE]], %[[C3]], %[[ONE]], %[[C20]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[TWO]], %[[ONE]], %[[TWO]], %[[C4]],
fx.graph @one_dimension(%x: tensor<2x20x32xf32>, %w: tensor<8x3x8xf32>) -> tensor<2x20x8xf32> {
  %y = loop.convolution %x, %w {channels_last, dilation = array<i64: 2>, groups = 4 : i64, padding = array<i64: 2>, stride = array<i64: 1>} : tensor<2x20x32xf32>, tensor<8x3x8xf32> -> tensor<2x20x8xf32>
  fx.output %y : tensor<2x20x8xf32>
}

// -----

fx.graph @not_channels_last(%x: tensor<2x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32> {
  // expected-error @+1 {{'loop.convolution' op is not channels-last; the GPU computes those with its convolution library (kiln-loop-expand-convolutions with `library` makes them)}}
  %y = loop.convolution %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32> -> tensor<2x32x6x6xf32>
  fx.output %y : tensor<2x32x6x6xf32>
}

// -----

fx.graph @volume(%x: tensor<1x4x4x4x8xf32>, %w: tensor<16x3x3x3x8xf32>) -> tensor<1x2x2x2x16xf32> {
  // expected-error @+1 {{'loop.convolution' op has 3 spatial dimensions; the GPU's convolution library takes 1 or 2}}
  %y = loop.convolution %x, %w {channels_last, dilation = array<i64: 1, 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0>, stride = array<i64: 1, 1, 1>} : tensor<1x4x4x4x8xf32>, tensor<16x3x3x3x8xf32> -> tensor<1x2x2x2x16xf32>
  fx.output %y : tensor<1x2x2x2x16xf32>
}

// -----

fx.graph @double(%x: tensor<1x4x4x8xf64>, %w: tensor<16x3x3x8xf64>) -> tensor<1x2x2x16xf64> {
  // expected-error @+1 {{'loop.convolution' op convolves 'f64' tensors, which the GPU's convolution library does not (f32, f16 and bf16 it does)}}
  %y = loop.convolution %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x4x4x8xf64>, tensor<16x3x3x8xf64> -> tensor<1x2x2x16xf64>
  fx.output %y : tensor<1x2x2x16xf64>
}

// -----

fx.graph @unrounded(%x: tensor<1x4x4x8xbf16>, %w: tensor<16x3x3x8xbf16>) -> tensor<1x2x2x16xf32> {
  // expected-error @+1 {{'loop.convolution' op sums into 'f32'; the GPU's convolution library rounds to its operands' 'bf16'}}
  %y = loop.convolution %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x4x4x8xbf16>, tensor<16x3x3x8xbf16> -> tensor<1x2x2x16xf32>
  fx.output %y : tensor<1x2x2x16xf32>
}
