// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// Tests a row sum: the reduced dimension becomes the reduction space, the
// others the result's index space.
// CHECK-LABEL: fx.graph @row_sum
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]]
// CHECK: loop.reduce "sum"(%[[N]]) over [64] : tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[K:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT: loop.yield %[[V]] : f32
fx.graph @row_sum(%x: tensor<?x64xf32>) -> tensor<?xf32> {
  %0 = fx.sum %x {dim = array<i64: 1>} : (tensor<?x64xf32>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

// Tests keepdim (the kept size-1 dimension's index is unused), a negative
// dimension, and max as the combiner.
// CHECK-LABEL: fx.graph @keepdim_max
// CHECK: loop.reduce "max" over [8] : tensor<4x1xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %{{.+}}: index, %[[K:.+]]: index):
// CHECK-NEXT: loop.load %{{.+}}[%[[I]], %[[K]]]
fx.graph @keepdim_max(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = fx.amax %x {dim = array<i64: -1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  fx.output %0 : tensor<4x1xf32>
}

// -----

// Tests accumulator types: integers sum as si64 (extended per element),
// bf16 sums accumulate in f32.
// CHECK-LABEL: fx.graph @accumulators
// CHECK: loop.reduce "sum" over [3, 5] : tensor<si64>
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: loop.reduce "min" over [4] : tensor<2xbf16>
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK-NEXT: loop.yield %{{.+}} : f32
fx.graph @accumulators(%i: tensor<3x5xsi32>, %h: tensor<2x4xbf16>) -> (tensor<si64>, tensor<2xbf16>) {
  %0 = fx.sum %i : (tensor<3x5xsi32>) -> tensor<si64>
  %1 = fx.amin %h {dim = array<i64: 1>} : (tensor<2x4xbf16>) -> tensor<2xbf16>
  fx.output %0, %1 : tensor<si64>, tensor<2xbf16>
}

// -----

// Tests a mean: a sum (in f32 for bf16, not rounded before the division),
// then a node dividing by the number of elements averaged.
// CHECK-LABEL: fx.graph @mean
// CHECK: %[[COUNT:.+]] = arith.constant 6.400000e+01 : f32
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [64] : tensor<4xf32>
// CHECK: loop.pointwise : tensor<4xbf16>
// CHECK: %[[V:.+]] = loop.load %[[SUM]]
// CHECK: %[[Q:.+]] = arith.divf %[[V]], %[[COUNT]] : f32
// CHECK: arith.truncf %[[Q]] : f32 to bf16
fx.graph @mean(%x: tensor<4x64xbf16>) -> tensor<4xbf16> {
  %0 = fx.mean %x {dim = array<i64: 1>} : (tensor<4x64xbf16>) -> tensor<4xbf16>
  fx.output %0 : tensor<4xbf16>
}

// -----

// Tests that the count of a dynamic reduced dimension is computed from its
// size.
// CHECK-LABEL: fx.graph @dynamic_mean
// CHECK: tensor.dim
// CHECK: %[[I64:.+]] = arith.index_castui %{{.+}} : index to i64
// CHECK: %[[COUNT:.+]] = arith.uitofp %[[I64]] : i64 to f32
// CHECK: arith.divf %{{.+}}, %[[COUNT]] : f32
fx.graph @dynamic_mean(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %0 = fx.mean %x {dim = array<i64: 1>} : (tensor<4x?xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

// prod multiplies in the result's dtype (f32 for bf16); prod_dim_int's one
// dimension is reduced.
// CHECK-LABEL: fx.graph @prod
// CHECK: loop.reduce "prod" over [5] : tensor<3x4xf32>
// CHECK: loop.reduce "prod" over [3, 4] : tensor<bf16>
// CHECK: arith.extf %{{.+}} : bf16 to f32
fx.graph @prod(%x: tensor<3x4x5xf32>, %y: tensor<3x4xbf16>) -> (tensor<3x4xf32>, tensor<bf16>) {
  %0 = fx.prod_dim_int %x {dim = 2 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4xf32>
  %1 = fx.prod %y : (tensor<3x4xbf16>) -> tensor<bf16>
  fx.output %0, %1 : tensor<3x4xf32>, tensor<bf16>
}

// -----

// any and all reduce whether elements are non-zero (NaN is) with or ("max"
// of bools) and and ("min").
// CHECK-LABEL: fx.graph @any_all
// CHECK: %[[NZ:.+]] = loop.pointwise : tensor<4x5xi1>
// CHECK: arith.cmpf une
// CHECK: loop.reduce "max" over [5] : tensor<4xi1>
// CHECK: loop.load %[[NZ]]
// CHECK: loop.reduce "min" over [4, 5] : tensor<i1>
fx.graph @any_all(%x: tensor<4x5xf32>) -> (tensor<4xi1>, tensor<i1>) {
  %0 = fx.any_dim %x {dim = 1 : i64} : (tensor<4x5xf32>) -> tensor<4xi1>
  %1 = fx.all %x : (tensor<4x5xf32>) -> tensor<i1>
  fx.output %0, %1 : tensor<4xi1>, tensor<i1>
}

// -----

// argmax is the row's maximum, then the smallest index of an element equal
// to it (NaN equal to NaN); 16-bit floats compare widened.
// CHECK-LABEL: fx.graph @argmax_rows
// CHECK: %[[MAX:.+]] = loop.reduce "max" over [45] : tensor<37x1xf32>
// CHECK: loop.reduce "min" over [45] : tensor<37xsi64>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[R:.+]]: index):
// CHECK: %[[X:.+]] = arith.extf
// CHECK: %[[M:.+]] = loop.load %[[MAX]][%[[I]], %c0] : tensor<37x1xf32>
// CHECK: %[[EQ:.+]] = arith.cmpf oeq, %[[X]], %[[M]]
// CHECK: arith.cmpf uno, %[[X]], %[[X]]
// CHECK: arith.cmpf uno, %[[M]], %[[M]]
// CHECK: %[[IDX:.+]] = arith.index_cast %[[R]] : index to i64
// CHECK: arith.select %{{.+}}, %[[IDX]], %c9223372036854775807_i64
fx.graph @argmax_rows(%x: tensor<37x45xbf16>) -> tensor<37xsi64> {
  %0 = fx.argmax %x {dim = 1 : i64} : (tensor<37x45xbf16>) -> tensor<37xsi64>
  fx.output %0 : tensor<37xsi64>
}

// -----

// Without a dimension, indices count all elements in row-major order.
// CHECK-LABEL: fx.graph @argmin_all
// CHECK: %[[MIN:.+]] = loop.reduce "min" over [6, 40] : tensor<1x1xsi32>
// CHECK: loop.reduce "min" over [6, 40] : tensor<si64>
// CHECK-NEXT: ^bb0(%[[R0:.+]]: index, %[[R1:.+]]: index):
// CHECK: %[[ROW:.+]] = arith.muli %[[R0]], %c40
// CHECK: %[[L:.+]] = arith.addi %[[ROW]], %[[R1]]
// CHECK: arith.cmpi eq
// CHECK: arith.index_cast %[[L]] : index to i64
fx.graph @argmin_all(%x: tensor<6x40xsi32>) -> tensor<si64> {
  %0 = fx.argmin %x : (tensor<6x40xsi32>) -> tensor<si64>
  fx.output %0 : tensor<si64>
}

// -----

// max along a dimension with its indices: the values are the extremum that
// the indices compare against, read back in the input's dtype.
// CHECK-LABEL: fx.graph @max_dim
// CHECK: %[[MAX:.+]] = loop.reduce "max" over [64] : tensor<4x3x1xf32>
// CHECK: %[[IDX:.+]] = loop.reduce "min" over [64] : tensor<4x3xsi64>
// CHECK: %[[VALUES:.+]] = loop.pointwise : tensor<4x3xbf16>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[M:.+]] = loop.load %[[MAX]][%[[I]], %[[J]], %c0] : tensor<4x3x1xf32>
// CHECK: arith.truncf %[[M]] : f32 to bf16
// CHECK: fx.output %[[VALUES]], %[[IDX]]
fx.graph @max_dim(%x: tensor<4x3x64xbf16>) -> (tensor<4x3xbf16>, tensor<4x3xsi64>) {
  %v, %i = fx.max_dim %x {dim = -1 : i64} : (tensor<4x3x64xbf16>) -> (tensor<4x3xbf16>, tensor<4x3xsi64>)
  fx.output %v, %i : tensor<4x3xbf16>, tensor<4x3xsi64>
}

// -----

// cdist with p = 2: squared differences of row pairs summed over M, then the
// square root.
// CHECK-LABEL: fx.graph @cdist
// CHECK: loop.pointwise : tensor<5x4x7xf32>
// CHECK: ^bb0(%[[P:.+]]: index, %[[R:.+]]: index, %[[M:.+]]: index):
// CHECK: loop.load %{{.+}}[%[[P]], %[[M]]] : tensor<5x7xf32>
// CHECK: loop.load %{{.+}}[%[[R]], %[[M]]] : tensor<4x7xf32>
// CHECK: math.absf
// CHECK: loop.reduce "sum" over [7] : tensor<5x4xf32>
// CHECK: math.sqrt
fx.graph @cdist(%a: tensor<5x7xf32>, %b: tensor<4x7xf32>) -> tensor<5x4xf32> {
  %0 = fx.cdist_forward %a, %b {p = 2.0 : f64} : (tensor<5x7xf32>, tensor<4x7xf32>) -> tensor<5x4xf32>
  fx.output %0 : tensor<5x4xf32>
}

// -----

// pdist: pair k's rows from a square root (corrected by one either way),
// then the same reduction as cdist.
// CHECK-LABEL: fx.graph @pdist
// CHECK: loop.pointwise : tensor<10x3xf32>
// CHECK: math.sqrt %{{.+}} : f64
// CHECK: arith.select
// CHECK: arith.select
// CHECK: loop.reduce "sum" over [3] : tensor<10xf32>
// CHECK: math.sqrt %{{.+}} : f32
fx.graph @pdist(%x: tensor<5x3xf32>) -> tensor<10xf32> {
  %0 = fx.pdist_forward %x : (tensor<5x3xf32>) -> tensor<10xf32>
  fx.output %0 : tensor<10xf32>
}

// -----

// Reductions of a zero-dim tensor reduce it as a one-element vector over
// its one dimension (dim 0 or -1, keepdim or not), into a zero-dim result.
// CHECK-LABEL: fx.graph @zero_dim_reductions
// CHECK-SAME: (%[[X:.+]]: tensor<f32>)
// CHECK: %[[V:.+]] = loop.pointwise : tensor<1xf32>
// CHECK-NEXT: ^bb0(%{{.+}}: index):
// CHECK-NEXT: loop.load %[[X]][] : tensor<f32>
// CHECK: loop.reduce "sum" over [1] : tensor<f32>
// CHECK-NEXT: ^bb0(%[[R:.+]]: index):
// CHECK-NEXT: loop.load %[[V]][%[[R]]] : tensor<1xf32>
// CHECK: loop.reduce "min" over [1] : tensor<si64>
fx.graph @zero_dim_reductions(%x: tensor<f32>) -> (tensor<f32>, tensor<si64>) {
  %0 = fx.sum %x {dim = array<i64: 0>, keepdim = true} : (tensor<f32>) -> tensor<f32>
  %1 = fx.argmax %x {dim = -1 : i64} : (tensor<f32>) -> tensor<si64>
  fx.output %0, %1 : tensor<f32>, tensor<si64>
}

// -----

// CHECK-LABEL: fx.graph @any(
// any: the largest of (x != 0) over every element (NaN counts as true).
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[NZ:.+]] = loop.pointwise : tensor<4x6xi1>
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[B:.+]] = arith.cmpf une, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: loop.yield %[[B]] : i1
// CHECK: loop.reduce "max" over [4, 6] : tensor<i1>
// CHECK: %[[V:.+]] = loop.load %[[NZ]][%{{.+}}, %{{.+}}] : tensor<4x6xi1>
// CHECK-NEXT: loop.yield %[[V]] : i1
fx.graph @any(%x: tensor<4x6xf32>) -> (tensor<i1>) {
  %r0 = fx.any %x : (tensor<4x6xf32>) -> tensor<i1>
  fx.output %r0 : tensor<i1>
}

// -----

// CHECK-LABEL: fx.graph @any_dims(
// CHECK: %[[NZ:.+]] = loop.pointwise : tensor<4x6xi1>
// CHECK: arith.cmpi ne, %{{.+}}, %{{.+}} : i32
// CHECK: loop.reduce "max" over [6] : tensor<4xi1> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[R:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %[[NZ]][%[[I]], %[[R]]] : tensor<4x6xi1>
fx.graph @any_dims(%x: tensor<4x6xsi32>) -> (tensor<4xi1>) {
  %r0 = fx.any_dims %x {dim = array<i64: 1>} : (tensor<4x6xsi32>) -> tensor<4xi1>
  fx.output %r0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: fx.graph @all_dim(
// all: the least of (x != 0), the reduced dimension kept.
// CHECK: %[[NZ:.+]] = loop.pointwise : tensor<4x6xi1>
// CHECK: arith.cmpf une
// CHECK: loop.reduce "min" over [4] : tensor<1x6xi1> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[J:.+]]: index, %[[R:.+]]: index):
// CHECK-NEXT: loop.load %[[NZ]][%[[R]], %[[J]]] : tensor<4x6xi1>
fx.graph @all_dim(%x: tensor<4x6xf32>) -> (tensor<1x6xi1>) {
  %r0 = fx.all_dim %x {dim = 0 : i64, keepdim = true} : (tensor<4x6xf32>) -> tensor<1x6xi1>
  fx.output %r0 : tensor<1x6xi1>
}

// -----

// CHECK-LABEL: fx.graph @min_dim(
// The values, then the first index that holds the row's minimum (or a
// NaN where the minimum is NaN): the least such index.
// CHECK-DAG: %[[NONE:.+]] = arith.constant 9223372036854775807 : i64
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[MIN:.+]] = loop.reduce "min" over [6] : tensor<4x1xf32>
// CHECK: %[[INDEX:.+]] = loop.reduce "min" over [6] : tensor<4xsi64> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[R:.+]]: index):
// CHECK-NEXT: %[[X:.+]] = loop.load %arg0[%[[I]], %[[R]]]
// CHECK-NEXT: %[[M:.+]] = loop.load %[[MIN]][%[[I]], %[[C0]]]
// CHECK-NEXT: %[[EQ:.+]] = arith.cmpf oeq, %[[X]], %[[M]] : f32
// CHECK-NEXT: %[[XNAN:.+]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[MNAN:.+]] = arith.cmpf uno, %[[M]], %[[M]] : f32
// CHECK-NEXT: %[[BOTH:.+]] = arith.andi %[[XNAN]], %[[MNAN]] : i1
// CHECK-NEXT: %[[HOLDS:.+]] = arith.ori %[[EQ]], %[[BOTH]] : i1
// CHECK-NEXT: %[[AT:.+]] = arith.index_cast %[[R]] : index to i64
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[HOLDS]], %[[AT]], %[[NONE]] : i64
// CHECK: fx.output %{{.+}}, %[[INDEX]] : tensor<4xf32>, tensor<4xsi64>
fx.graph @min_dim(%x: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<4xsi64>) {
  %r:2 = fx.min_dim %x {dim = 1 : i64} : (tensor<4x6xf32>) -> (tensor<4xf32>, tensor<4xsi64>)
  fx.output %r#0, %r#1 : tensor<4xf32>, tensor<4xsi64>
}
