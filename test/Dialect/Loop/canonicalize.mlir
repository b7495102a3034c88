// RUN: kiln-opt %s -split-input-file -canonicalize | FileCheck %s

// Tests that the size of a node's dynamic dimension folds to its size operand.
// CHECK-LABEL: fx.graph @dim_of_node
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]]
// CHECK: %[[NODE:.+]] = loop.pointwise(%[[N]])
// CHECK-NOT: tensor.dim %[[NODE]]
// CHECK: loop.pointwise(%[[N]])
fx.graph @dim_of_node(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %0 = loop.pointwise(%n) : tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<?x4xf32>
    loop.yield %v : f32
  }
  %m = tensor.dim %0, %c0 : tensor<?x4xf32>
  %1 = loop.pointwise(%m) : tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %0[%i, %j] : tensor<?x4xf32>
    %w = arith.mulf %v, %v : f32
    loop.yield %w : f32
  }
  fx.output %1 : tensor<?x4xf32>
}

// -----

// Tests that a node nobody reads is erased.
// CHECK-LABEL: fx.graph @dead_node
// CHECK-NOT: loop.pointwise
// CHECK: fx.output
fx.graph @dead_node(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    loop.yield %v : f32
  }
  fx.output %x : tensor<4xf32>
}
