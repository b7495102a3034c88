// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// CHECK-LABEL: fx.graph @elementwise
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<64xf32>) -> tensor<?x64xf32>
fx.graph @elementwise(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  // CHECK: %[[ADD:.+]] = fx.add %[[X]], %[[B]] {alpha = 2.000000e+00 : f64} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %0 = fx.add %x, %b {alpha = 2.0 : f64} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: %[[RELU:.+]] = fx.relu %[[ADD]] : tensor<?x64xf32>
  %1 = fx.relu %0 : tensor<?x64xf32>
  // CHECK: %[[NEG:.+]] = fx.neg %[[RELU]] : tensor<?x64xf32>
  %2 = fx.neg %1 : tensor<?x64xf32>
  // CHECK: %[[SUB:.+]] = fx.sub %[[NEG]], %[[X]]
  %3 = fx.sub %2, %x : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  // CHECK: %[[MUL:.+]] = fx.mul %[[SUB]], %[[B]]
  %4 = fx.mul %3, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: fx.output %[[MUL]] : tensor<?x64xf32>
  fx.output %4 : tensor<?x64xf32>
}

// -----

// Tests that dtypes keep their signedness and that results follow PyTorch's
// type promotion.
// CHECK-LABEL: fx.graph @promotion
fx.graph @promotion(%i: tensor<4xsi32>, %u: tensor<4xui8>, %h: tensor<4xf16>,
                    %bh: tensor<4xbf16>, %d0: tensor<f64>, %p: tensor<4xi1>)
    -> (tensor<4xsi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf16>,
        tensor<4xui8>, tensor<f64>) {
  // int32 + uint8 -> int32.
  // CHECK: fx.add {{.*}} : (tensor<4xsi32>, tensor<4xui8>) -> tensor<4xsi32>
  %0 = fx.add %i, %u : (tensor<4xsi32>, tensor<4xui8>) -> tensor<4xsi32>
  // int32 * float16 -> float16.
  // CHECK: fx.mul {{.*}} : (tensor<4xsi32>, tensor<4xf16>) -> tensor<4xf16>
  %1 = fx.mul %i, %h : (tensor<4xsi32>, tensor<4xf16>) -> tensor<4xf16>
  // float16 + bfloat16 -> float32.
  // CHECK: fx.add {{.*}} : (tensor<4xf16>, tensor<4xbf16>) -> tensor<4xf32>
  %2 = fx.add %h, %bh : (tensor<4xf16>, tensor<4xbf16>) -> tensor<4xf32>
  // A zero-dim float64 does not widen a dimensioned float16.
  // CHECK: fx.mul {{.*}} : (tensor<4xf16>, tensor<f64>) -> tensor<4xf16>
  %3 = fx.mul %h, %d0 : (tensor<4xf16>, tensor<f64>) -> tensor<4xf16>
  // bool + uint8 -> uint8.
  // CHECK: fx.add {{.*}} : (tensor<4xi1>, tensor<4xui8>) -> tensor<4xui8>
  %4 = fx.add %p, %u : (tensor<4xi1>, tensor<4xui8>) -> tensor<4xui8>
  // Two zero-dim tensors.
  // CHECK: fx.add {{.*}} : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %5 = fx.add %d0, %d0 : (tensor<f64>, tensor<f64>) -> tensor<f64>
  fx.output %0, %1, %2, %3, %4, %5
      : tensor<4xsi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf16>,
        tensor<4xui8>, tensor<f64>
}

// -----

// Tests broadcasting: size-1 dimensions, missing leading dimensions, and a
// dynamic dimension against a static one.
// CHECK-LABEL: fx.graph @broadcast
fx.graph @broadcast(%a: tensor<8x1x3xf32>, %b: tensor<5x1xf32>, %c: tensor<?x3xf32>)
    -> (tensor<8x5x3xf32>, tensor<8x?x3xf32>) {
  // CHECK: -> tensor<8x5x3xf32>
  %0 = fx.add %a, %b : (tensor<8x1x3xf32>, tensor<5x1xf32>) -> tensor<8x5x3xf32>
  // CHECK: -> tensor<8x?x3xf32>
  %1 = fx.mul %a, %c : (tensor<8x1x3xf32>, tensor<?x3xf32>) -> tensor<8x?x3xf32>
  fx.output %0, %1 : tensor<8x5x3xf32>, tensor<8x?x3xf32>
}

// -----

// Tests that a graph may have no results and an integer alpha.
// CHECK-LABEL: fx.graph @no_results
// CHECK: fx.add {{.*}} {alpha = 3 : i64}
// CHECK: fx.output{{$}}
fx.graph @no_results(%x: tensor<2xsi64>) {
  %0 = fx.add %x, %x {alpha = 3 : i64} : (tensor<2xsi64>, tensor<2xsi64>) -> tensor<2xsi64>
  fx.output
}
