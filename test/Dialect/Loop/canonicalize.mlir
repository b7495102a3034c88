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
// copy of a 1x1 filter) folds to a reshape of its source, which its reader
// then reads through, and a static copy to the source itself: both read
// memory in order.
// CHECK-LABEL: fx.graph @reshaping_copies
// CHECK-SAME: (%[[W:.+]]: tensor<64x16x1x1xf32>, %[[X:.+]]: tensor<4x8xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: loop.pointwise : tensor<64x1x1x16xf32>
// CHECK-NEXT: ^bb0(%[[O:.+]]: index, %{{.+}}: index, %{{.+}}: index, %[[C:.+]]: index):
// CHECK-NEXT: loop.load %[[W]][%[[O]], %[[C]], %[[C0]], %[[C0]]]
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

// -----

// A copy into a graph's result that alone reads a node's tensor (a sum's
// kept dimension, dropped through a view's index arithmetic, which folds
// since the index is below the divisor) is a view: the sum is stored
// straight into the result's buffer.
// CHECK-LABEL: fx.graph @sum_returned_without_its_kept_dimension
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [64] : tensor<1x8xbf16>
// CHECK-NOT: loop.pointwise
// CHECK: %[[VIEW:.+]] = tensor.collapse_shape %[[SUM]] {{\[}}[0, 1]] : tensor<1x8xbf16> into tensor<8xbf16>
// CHECK: fx.output %[[VIEW]]
fx.graph @sum_returned_without_its_kept_dimension(%x: tensor<64x8xbf16>) -> tensor<8xbf16> {
  %c8 = arith.constant 8 : index
  %0 = loop.reduce "sum" over [64] : tensor<1x8xbf16> {
  ^bb0(%i0: index, %i1: index, %r0: index):
    %1 = loop.load %x[%r0, %i1] : tensor<64x8xbf16>
    %2 = arith.extf %1 : bf16 to f32
    loop.yield %2 : f32
  }
  %3 = loop.pointwise : tensor<8xbf16> {
  ^bb0(%i0: index):
    %4 = arith.remui %i0, %c8 : index
    %5 = arith.divui %i0, %c8 : index
    %6 = loop.load %0[%5, %4] : tensor<1x8xbf16>
    loop.yield %6 : bf16
  }
  fx.output %3 : tensor<8xbf16>
}

// -----

// Index arithmetic stays where the divisor is below the index's extent, or
// the extent is dynamic; a returned copy of a tensor that another node
// reads keeps its buffer.
// CHECK-LABEL: fx.graph @index_arithmetic_that_stays
// CHECK: loop.pointwise : tensor<16xf32>
// CHECK: arith.remui %{{.+}}, %c8
// CHECK: arith.divui %{{.+}}, %c8
// CHECK: loop.pointwise(%{{.+}}) : tensor<?xf32>
// CHECK: arith.divui %{{.+}}, %c8
// CHECK: loop.pointwise : tensor<8xf32>
// CHECK: fx.output
fx.graph @index_arithmetic_that_stays(%x: tensor<2x8xf32>, %d: tensor<?xf32>, %y: tensor<1x8xf32>) -> (tensor<16xf32>, tensor<?xf32>, tensor<8xf32>, tensor<1x8xf32>) {
  %c8 = arith.constant 8 : index
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?xf32>
  %0 = loop.pointwise : tensor<16xf32> {
  ^bb0(%i: index):
    %r = arith.remui %i, %c8 : index
    %q = arith.divui %i, %c8 : index
    %v = loop.load %x[%q, %r] : tensor<2x8xf32>
    loop.yield %v : f32
  }
  %1 = loop.pointwise(%n) : tensor<?xf32> {
  ^bb0(%i: index):
    %q = arith.divui %i, %c8 : index
    %v = loop.load %x[%q, %c0] : tensor<2x8xf32>
    loop.yield %v : f32
  }
  %2 = loop.pointwise : tensor<1x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %y[%i, %j] : tensor<1x8xf32>
    %s = arith.addf %v, %v : f32
    loop.yield %s : f32
  }
  %3 = loop.pointwise : tensor<8xf32> {
  ^bb0(%i: index):
    %v = loop.load %2[%c0, %i] : tensor<1x8xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1, %3, %2 : tensor<16xf32>, tensor<?xf32>, tensor<8xf32>, tensor<1x8xf32>
}

// -----

// Tests that loads through reshapes that only add or drop size-1 dimensions
// read the reshape's source: a per-channel node seen as [1, C, 1, 1] (then
// free to be inlined), a [1, C, 1, 1] statistic seen as [C].
// CHECK-LABEL: fx.graph @loads_through_unit_reshapes
// CHECK-SAME: (%[[S:.+]]: tensor<1x16x1x1xf32>, %[[X:.+]]: tensor<2x16x4x4xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[N:.+]] = loop.pointwise : tensor<16xf32>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index):
// CHECK-NEXT: loop.load %[[S]][%[[C0]], %[[I]], %[[C0]], %[[C0]]]
// CHECK-NOT: tensor.expand_shape
// CHECK: loop.pointwise : tensor<2x16x4x4xf32>
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[CH:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK: loop.load %[[N]][%[[CH]]]
fx.graph @loads_through_unit_reshapes(%s: tensor<1x16x1x1xf32>, %x: tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32> {
  %flat = tensor.collapse_shape %s [[0, 1, 2, 3]] : tensor<1x16x1x1xf32> into tensor<16xf32>
  %0 = loop.pointwise : tensor<16xf32> {
  ^bb0(%i: index):
    %v = loop.load %flat[%i] : tensor<16xf32>
    %r = math.rsqrt %v : f32
    loop.yield %r : f32
  }
  %kept = tensor.expand_shape %0 [[0, 1, 2, 3]] output_shape [1, 16, 1, 1] : tensor<16xf32> into tensor<1x16x1x1xf32>
  %1 = loop.pointwise : tensor<2x16x4x4xf32> {
  ^bb0(%n: index, %c: index, %h: index, %w: index):
    %c0 = arith.constant 0 : index
    %v = loop.load %x[%n, %c, %h, %w] : tensor<2x16x4x4xf32>
    %k = loop.load %kept[%c0, %c, %c0, %c0] : tensor<1x16x1x1xf32>
    %m = arith.mulf %v, %k : f32
    loop.yield %m : f32
  }
  fx.output %1 : tensor<2x16x4x4xf32>
}

// -----

// Tests that a load through a reshape that merges dimensions larger than 1
// stays as it is: its indices would need arithmetic.
// CHECK-LABEL: fx.graph @load_through_merging_reshape
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape
// CHECK: loop.load %[[FLAT]]
fx.graph @load_through_merging_reshape(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %0 = loop.pointwise : tensor<32xf32> {
  ^bb0(%i: index):
    %v = loop.load %flat[%i] : tensor<32xf32>
    %s = arith.mulf %v, %v : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<32xf32>
}
