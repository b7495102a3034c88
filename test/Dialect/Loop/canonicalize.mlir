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

// -----

// Tests that a transpose moving only size-1 dimensions (the channels-last
// copy of a 1x1 filter) folds to a reshape of its source, and a static
// copy to the source itself: both read memory in order.
// CHECK-LABEL: fx.graph @reshaping_copies
// CHECK-SAME: (%[[W:.+]]: tensor<64x16x1x1xf32>, %[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<64x16x1x1xf32> into tensor<64x16xf32>
// CHECK: %[[LAST:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0], [1, 2, 3]] output_shape [64, 1, 1, 16]
// CHECK: loop.pointwise : tensor<64x1x1x16xf32>
// CHECK: loop.load %[[LAST]]
// CHECK: arith.mulf
// CHECK: loop.pointwise : tensor<4x8xf32>
// CHECK: loop.load %[[X]]
// CHECK: arith.addf
fx.graph @reshaping_copies(%w: tensor<64x16x1x1xf32>, %x: tensor<4x8xf32>) -> (tensor<64x1x1x16xf32>, tensor<4x8xf32>) {
  %0 = loop.pointwise : tensor<64x1x1x16xf32> {
  ^bb0(%o: index, %h: index, %w2: index, %c: index):
    %v = loop.load %w[%o, %c, %h, %w2] : tensor<64x16x1x1xf32>
    loop.yield %v : f32
  }
  %1 = loop.pointwise : tensor<64x1x1x16xf32> {
  ^bb0(%o: index, %h: index, %w2: index, %c: index):
    %v = loop.load %0[%o, %h, %w2, %c] : tensor<64x1x1x16xf32>
    %s = arith.mulf %v, %v : f32
    loop.yield %s : f32
  }
  %2 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  %3 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %2[%i, %j] : tensor<4x8xf32>
    %s = arith.addf %v, %v : f32
    loop.yield %s : f32
  }
  fx.output %1, %3 : tensor<64x1x1x16xf32>, tensor<4x8xf32>
}

// -----

// Tests that a permuted copy of a tensor of size-1 dimensions folds to the
// source itself (the same shape: no reshape).
// CHECK-LABEL: fx.graph @unit_copies
// CHECK-SAME: (%[[X:.+]]: tensor<1x1xf32>, %[[Y:.+]]: tensor<1x1x1xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: loop.pointwise : tensor<1x1xf32>
// CHECK: loop.load %[[X]]
// CHECK: loop.load %[[Y]]
// CHECK: arith.addf
fx.graph @unit_copies(%x: tensor<1x1xf32>, %y: tensor<1x1x1xf32>) -> tensor<1x1xf32> {
  %0 = loop.pointwise : tensor<1x1xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%j, %i] : tensor<1x1xf32>
    loop.yield %v : f32
  }
  %1 = loop.pointwise : tensor<1x1x1xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %v = loop.load %y[%k, %i, %j] : tensor<1x1x1xf32>
    loop.yield %v : f32
  }
  %2 = loop.pointwise : tensor<1x1xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %0[%i, %j] : tensor<1x1xf32>
    %c0 = arith.constant 0 : index
    %b = loop.load %1[%i, %j, %c0] : tensor<1x1x1xf32>
    %s = arith.addf %a, %b : f32
    loop.yield %s : f32
  }
  fx.output %2 : tensor<1x1xf32>
}

// -----

// Tests what stays a copy: a transpose of dimensions larger than 1, a read
// of the diagonal (one index at two source positions), and a copy the graph
// returns (a result has a buffer of its own).
// CHECK-LABEL: fx.graph @copies_that_stay
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: loop.pointwise : tensor<8x4xf32>
// CHECK: loop.pointwise : tensor<4x4xf32>
// CHECK: loop.pointwise : tensor<4x8xf32>
// CHECK: fx.output
fx.graph @copies_that_stay(%x: tensor<4x8xf32>, %y: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>) {
  %0 = loop.pointwise : tensor<8x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%j, %i] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  %1 = loop.pointwise : tensor<8x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %0[%i, %j] : tensor<8x4xf32>
    %s = arith.addf %v, %v : f32
    loop.yield %s : f32
  }
  %2 = loop.pointwise : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %y[%i, %i] : tensor<4x4xf32>
    loop.yield %v : f32
  }
  %3 = loop.pointwise : tensor<4x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %2[%i, %j] : tensor<4x4xf32>
    %s = arith.addf %v, %v : f32
    loop.yield %s : f32
  }
  %4 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  fx.output %1, %3, %4 : tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>
}
