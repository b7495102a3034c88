// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// embedding_dense_backward: zeros, then each position's gradient row adds
// into the row its index names (clamped), except at padding_idx.
// CHECK-LABEL: fx.graph @embedding_backward
// CHECK-SAME: (%[[G:.+]]: tensor<3x4x6xf32>, %[[IDS:.+]]: tensor<3x4xsi64>)
// CHECK: %[[ZEROS:.+]] = loop.pointwise : tensor<10x6xf32>
// CHECK: loop.scatter "sum" %[[ZEROS]] over [3, 4, 6] : tensor<10x6xf32> -> tensor<10x6xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index, %[[D:.+]]: index):
// CHECK: %[[ID:.+]] = loop.load %[[IDS]][%[[A]], %[[B]]]
// CHECK: arith.index_cast %[[ID]] : i64 to index
// CHECK: arith.maxsi
// CHECK: %[[ROW:.+]] = arith.minsi
// CHECK: %[[V:.+]] = loop.load %[[G]][%[[A]], %[[B]], %[[D]]]
// CHECK: %[[PAD:.+]] = arith.cmpi eq, %[[ROW]], %c2
// CHECK: %[[KEPT:.+]] = arith.select %[[PAD]], %{{.+}}, %[[V]]
// CHECK: loop.scatter_yield %[[KEPT]] at [%[[ROW]], %[[D]]] : f32
fx.graph @embedding_backward(%g: tensor<3x4x6xf32>, %ids: tensor<3x4xsi64>) -> tensor<10x6xf32> {
  %0 = fx.embedding_dense_backward %g, %ids {padding_idx = 2 : i64, scale_grad_by_freq = false} : (tensor<3x4x6xf32>, tensor<3x4xsi64>) -> tensor<10x6xf32>
  fx.output %0 : tensor<10x6xf32>
}

// -----

// With scale_grad_by_freq, a scatter of ones counts each index first, and
// each gradient row is scaled by its index's reciprocal count.
// CHECK-LABEL: fx.graph @embedding_backward_by_frequency
// CHECK-SAME: (%[[G:.+]]: tensor<4x6xf32>, %[[IDS:.+]]: tensor<4xsi64>)
// CHECK: %[[NONE:.+]] = loop.pointwise : tensor<10xsi64>
// CHECK: %[[COUNTS:.+]] = loop.scatter "sum" %[[NONE]] over [4] : tensor<10xsi64> -> tensor<10xsi64> {
// CHECK: loop.scatter_yield %c1_i64 at [%{{.+}}] : i64
// CHECK: loop.scatter "sum" %{{.+}} over [4, 6] : tensor<10x6xf32> -> tensor<10x6xf32> {
// CHECK: %[[ROW:.+]] = arith.minsi
// CHECK: %[[V:.+]] = loop.load %[[G]]
// CHECK: %[[COUNT:.+]] = loop.load %[[COUNTS]][%[[ROW]]] : tensor<10xsi64>
// CHECK: %[[F:.+]] = arith.sitofp %[[COUNT]] : i64 to f32
// CHECK: %[[RECIPROCAL:.+]] = arith.divf %{{.+}}, %[[F]]
// CHECK: %[[SCALED:.+]] = arith.mulf %[[V]], %[[RECIPROCAL]]
// CHECK: loop.scatter_yield %[[SCALED]]
fx.graph @embedding_backward_by_frequency(%g: tensor<4x6xf32>, %ids: tensor<4xsi64>) -> tensor<10x6xf32> {
  %0 = fx.embedding_dense_backward %g, %ids {padding_idx = -1 : i64, scale_grad_by_freq = true} : (tensor<4x6xf32>, tensor<4xsi64>) -> tensor<10x6xf32>
  fx.output %0 : tensor<10x6xf32>
}

// -----

// scatter_add starts from self; the update space is the index's shape.
// CHECK-LABEL: fx.graph @scatter_add
// CHECK-SAME: (%[[X:.+]]: tensor<10x6xbf16>, %[[I:.+]]: tensor<10x3xsi64>, %[[S:.+]]: tensor<10x3xbf16>)
// CHECK: loop.scatter "sum" %[[X]] over [10, 3] : tensor<10x6xbf16> -> tensor<10x6xbf16> {
// CHECK-NEXT: ^bb0(%[[R:.+]]: index, %[[C:.+]]: index):
// CHECK: loop.load %[[I]][%[[R]], %[[C]]]
// CHECK: %[[COL:.+]] = arith.minsi
// CHECK: %[[V:.+]] = loop.load %[[S]][%[[R]], %[[C]]]
// CHECK: loop.scatter_yield %[[V]] at [%[[R]], %[[COL]]] : bf16
fx.graph @scatter_add(%x: tensor<10x6xbf16>, %i: tensor<10x3xsi64>, %s: tensor<10x3xbf16>) -> tensor<10x6xbf16> {
  %0 = fx.scatter_add %x, %i, %s {dim = 1 : i64} : (tensor<10x6xbf16>, tensor<10x3xsi64>, tensor<10x3xbf16>) -> tensor<10x6xbf16>
  fx.output %0 : tensor<10x6xbf16>
}

// -----

// index_put with accumulate: the values broadcast to the index's shape and
// self's other dimensions.
// CHECK-LABEL: fx.graph @index_put_accumulate
// CHECK-SAME: (%[[X:.+]]: tensor<10x?xf32>, %[[I:.+]]: tensor<4xsi64>, %[[V:.+]]: tensor<1x?xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c1
// CHECK: loop.scatter "sum" %[[X]](%{{.+}}) over [4, %[[N]]] : tensor<10x?xf32> -> tensor<10x?xf32> {
// CHECK-NEXT: ^bb0(%[[K:.+]]: index, %[[D:.+]]: index):
// CHECK: loop.load %[[I]][%[[K]]]
// CHECK: %[[ROW:.+]] = arith.minsi
// CHECK: %[[VAL:.+]] = loop.load %[[V]][%c0, %[[D]]]
// CHECK: loop.scatter_yield %[[VAL]] at [%[[ROW]], %[[D]]] : f32
fx.graph @index_put_accumulate(%x: tensor<10x?xf32>, %i: tensor<4xsi64>, %v: tensor<1x?xf32>) -> tensor<10x?xf32> {
  %0 = fx.index_put %x, %i, %v {accumulate = true} : (tensor<10x?xf32>, tensor<4xsi64>, tensor<1x?xf32>) -> tensor<10x?xf32>
  fx.output %0 : tensor<10x?xf32>
}

// -----

// index_put with several index tensors: they broadcast together (4x1 with
// 3 gives 4x3), and their dimensions replace the adjacent indexed ones; the
// values broadcast to that space.
// CHECK-LABEL: fx.graph @index_put_adjacent_indices
// CHECK-SAME: (%[[X:.+]]: tensor<2x10x8x5xf32>, %[[I:.+]]: tensor<4x1xsi64>, %[[J:.+]]: tensor<3xsi64>, %[[V:.+]]: tensor<3x5xf32>)
// CHECK: loop.scatter "sum" %[[X]] over [2, 4, 3, 5] : tensor<2x10x8x5xf32> -> tensor<2x10x8x5xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index, %[[C:.+]]: index, %[[D:.+]]: index):
// CHECK: loop.load %[[I]][%[[B]], %c0]
// CHECK: %[[ROW:.+]] = arith.minsi %{{.+}}, %c9
// CHECK: loop.load %[[J]][%[[C]]]
// CHECK: %[[COL:.+]] = arith.minsi %{{.+}}, %c7
// CHECK: %[[VAL:.+]] = loop.load %[[V]][%[[C]], %[[D]]]
// CHECK: loop.scatter_yield %[[VAL]] at [%[[A]], %[[ROW]], %[[COL]], %[[D]]] : f32
fx.graph @index_put_adjacent_indices(%x: tensor<2x10x8x5xf32>, %i: tensor<4x1xsi64>, %j: tensor<3xsi64>, %v: tensor<3x5xf32>) -> tensor<2x10x8x5xf32> {
  %0 = fx.index_put %x, %i, %j, %v {accumulate = true, index_positions = array<i64: 1, 2>} : (tensor<2x10x8x5xf32>, tensor<4x1xsi64>, tensor<3xsi64>, tensor<3x5xf32>) -> tensor<2x10x8x5xf32>
  fx.output %0 : tensor<2x10x8x5xf32>
}

// -----

// Index tensors at dimensions that are not adjacent put their broadcast
// dimensions first: x[i, :, j] = v writes the space [4, 10].
// CHECK-LABEL: fx.graph @index_put_separate_indices
// CHECK-SAME: (%[[X:.+]]: tensor<6x10x8xf32>, %[[I:.+]]: tensor<4xsi64>, %[[J:.+]]: tensor<4xsi64>, %[[V:.+]]: tensor<f32>)
// CHECK: loop.scatter "assign" %[[X]] over [4, 10] : tensor<6x10x8xf32> -> tensor<6x10x8xf32> {
// CHECK-NEXT: ^bb0(%[[K:.+]]: index, %[[M:.+]]: index):
// CHECK: loop.load %[[I]][%[[K]]]
// CHECK: %[[ROW:.+]] = arith.minsi %{{.+}}, %c5
// CHECK: loop.load %[[J]][%[[K]]]
// CHECK: %[[COL:.+]] = arith.minsi %{{.+}}, %c7
// CHECK: %[[VAL:.+]] = loop.load %[[V]][]
// CHECK: loop.scatter_yield %[[VAL]] at [%[[ROW]], %[[M]], %[[COL]]] : f32
fx.graph @index_put_separate_indices(%x: tensor<6x10x8xf32>, %i: tensor<4xsi64>, %j: tensor<4xsi64>, %v: tensor<f32>) -> tensor<6x10x8xf32> {
  %0 = fx.index_put %x, %i, %j, %v {accumulate = false, index_positions = array<i64: 0, 2>} : (tensor<6x10x8xf32>, tensor<4xsi64>, tensor<4xsi64>, tensor<f32>) -> tensor<6x10x8xf32>
  fx.output %0 : tensor<6x10x8xf32>
}

// -----

// scatter replaces elements ("assign"): one of several values at one
// element wins; scatter_value stores its scalar, index_put without
// accumulate its values.
// CHECK-LABEL: fx.graph @assigning_scatters
// CHECK: %[[VALUE:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: loop.scatter "assign" %{{.+}} over [10, 3] : tensor<10x6xf32> -> tensor<10x6xf32>
// CHECK: loop.scatter "assign" %{{.+}} over [10, 3] : tensor<10x6xf32> -> tensor<10x6xf32>
// CHECK: loop.scatter_yield %[[VALUE]]
// CHECK: loop.scatter "assign" %{{.+}} over [4, 6] : tensor<10x6xi1> -> tensor<10x6xi1>
fx.graph @assigning_scatters(%x: tensor<10x6xf32>, %i: tensor<10x3xsi64>, %s: tensor<10x3xf32>, %m: tensor<10x6xi1>, %rows: tensor<4xsi64>, %t: tensor<i1>) -> (tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xi1>) {
  %0 = fx.scatter %x, %i, %s {dim = 1 : i64} : (tensor<10x6xf32>, tensor<10x3xsi64>, tensor<10x3xf32>) -> tensor<10x6xf32>
  %1 = fx.scatter_value %x, %i {dim = 1 : i64, value = 2.5 : f64} : (tensor<10x6xf32>, tensor<10x3xsi64>) -> tensor<10x6xf32>
  %2 = fx.index_put %m, %rows, %t : (tensor<10x6xi1>, tensor<4xsi64>, tensor<i1>) -> tensor<10x6xi1>
  fx.output %0, %1, %2 : tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xi1>
}

// -----

// scatter_reduce without self: the receiving elements first take the
// identity of max (-inf), then the values combine with "max".
// CHECK-LABEL: fx.graph @scatter_amax_without_self
// CHECK-SAME: (%[[X:.+]]: tensor<8x5xf32>, %[[I:.+]]: tensor<8x3xsi64>, %[[S:.+]]: tensor<8x3xf32>)
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.+]] = loop.scatter "assign" %[[X]] over [8, 3]
// CHECK: loop.scatter_yield %[[NEG]]
// CHECK: loop.scatter "max" %[[INIT]] over [8, 3]
// CHECK: loop.load %[[S]]
fx.graph @scatter_amax_without_self(%x: tensor<8x5xf32>, %i: tensor<8x3xsi64>, %s: tensor<8x3xf32>) -> tensor<8x5xf32> {
  %0 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "amax", include_self = false} : (tensor<8x5xf32>, tensor<8x3xsi64>, tensor<8x3xf32>) -> tensor<8x5xf32>
  fx.output %0 : tensor<8x5xf32>
}

// -----

// "prod" without self: the receiving elements first take 1.
// CHECK-LABEL: fx.graph @scatter_prod_without_self
// CHECK-SAME: (%[[X:.+]]: tensor<8x5xsi32>, %[[I:.+]]: tensor<8x3xsi64>, %[[S:.+]]: tensor<8x3xsi32>)
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: %[[INIT:.+]] = loop.scatter "assign" %[[X]] over [8, 3]
// CHECK: loop.scatter_yield %[[ONE]]
// CHECK: loop.scatter "prod" %[[INIT]] over [8, 3]
// CHECK: loop.load %[[S]]
fx.graph @scatter_prod_without_self(%x: tensor<8x5xsi32>, %i: tensor<8x3xsi64>, %s: tensor<8x3xsi32>) -> tensor<8x5xsi32> {
  %0 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "prod", include_self = false} : (tensor<8x5xsi32>, tensor<8x3xsi64>, tensor<8x3xsi32>) -> tensor<8x5xsi32>
  fx.output %0 : tensor<8x5xsi32>
}

// -----

// as_strided_scatter: src's element (i, j) goes to self's row-major
// position 2 + 4i + j, split back into self's indices.
// CHECK-LABEL: fx.graph @as_strided_scatter
// CHECK-SAME: (%[[X:.+]]: tensor<4x5xf32>, %[[S:.+]]: tensor<3x2xf32>)
// CHECK: loop.scatter "assign" %[[X]] over [3, 2]
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: arith.muli %[[I]]
// CHECK: %[[AT:.+]] = arith.addi %{{.+}}, %[[J]]
// CHECK: %[[V:.+]] = loop.load %[[S]][%[[I]], %[[J]]]
// CHECK-DAG: %[[COL:.+]] = arith.remui %[[AT]]
// CHECK-DAG: %[[ROW:.+]] = arith.divui %[[AT]]
// CHECK: loop.scatter_yield %[[V]] at [%[[ROW]], %[[COL]]]
fx.graph @as_strided_scatter(%x: tensor<4x5xf32>, %s: tensor<3x2xf32>) -> tensor<4x5xf32> {
  %0 = fx.as_strided_scatter %x, %s {stride = array<i64: 4, 1>, storage_offset = 2 : i64} : (tensor<4x5xf32>, tensor<3x2xf32>) -> tensor<4x5xf32>
  fx.output %0 : tensor<4x5xf32>
}

// -----

// A "prod" of floats gathers: each output element multiplies, over the
// index's 3 columns, the src elements whose index names it (1 elsewhere);
// a "max" of the matches says whether any did; then self times the product
// where one did. bf16 multiplies in f32.
// CHECK-LABEL: fx.graph @scatter_prod_of_floats
// CHECK-SAME: (%[[X:.+]]: tensor<8x5xbf16>, %[[I:.+]]: tensor<6x3xsi64>, %[[S:.+]]: tensor<8x3xbf16>)
// CHECK: %[[PROD:.+]] = loop.reduce "prod" over [3] : tensor<8x5xf32>
// CHECK: arith.cmpi ult
// CHECK: loop.load %[[I]]
// CHECK: arith.cmpi eq
// CHECK: loop.load %[[S]]
// CHECK: arith.select
// CHECK: %[[ANY:.+]] = loop.reduce "max" over [3] : tensor<8x5xf32>
// CHECK: loop.pointwise : tensor<8x5xbf16>
// CHECK-DAG: loop.load %[[X]]
// CHECK-DAG: loop.load %[[PROD]]
// CHECK-DAG: loop.load %[[ANY]]
// CHECK: arith.mulf
// CHECK: arith.cmpf ogt
fx.graph @scatter_prod_of_floats(%x: tensor<8x5xbf16>, %i: tensor<6x3xsi64>, %s: tensor<8x3xbf16>) -> tensor<8x5xbf16> {
  %0 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "prod"} : (tensor<8x5xbf16>, tensor<6x3xsi64>, tensor<8x3xbf16>) -> tensor<8x5xbf16>
  fx.output %0 : tensor<8x5xbf16>
}

// -----

// Past 4096 elements along `dim` (or over dynamic sizes) a float product
// scatters: each element of src multiplies into the one its index names,
// by compare-and-swap, in whichever order the threads come.
// CHECK-LABEL: fx.graph @long_scatter_prod_of_floats
// CHECK-SAME: (%[[X:.+]]: tensor<2x5xf32>, %[[I:.+]]: tensor<2x4097xsi64>, %[[S:.+]]: tensor<2x4097xf32>)
// CHECK-NOT: loop.reduce
// CHECK: loop.scatter "prod" %[[X]] over [2, 4097] : tensor<2x5xf32> -> tensor<2x5xf32>
// CHECK-DAG: loop.load %[[S]]
// CHECK-DAG: loop.load %[[I]]
// CHECK: loop.scatter_yield
fx.graph @long_scatter_prod_of_floats(%x: tensor<2x5xf32>, %i: tensor<2x4097xsi64>, %s: tensor<2x4097xf32>) -> tensor<2x5xf32> {
  %0 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "prod"} : (tensor<2x5xf32>, tensor<2x4097xsi64>, tensor<2x4097xf32>) -> tensor<2x5xf32>
  fx.output %0 : tensor<2x5xf32>
}
