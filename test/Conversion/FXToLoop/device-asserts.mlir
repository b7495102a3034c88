// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop=device-asserts=true | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop=device-asserts=true | FileCheck %s --check-prefix=PIPELINE

// Tests that with device asserts, embedding asserts each index it loads in
// [0, 10), where it loads it, and advanced indexing in [-4, 4); the reads
// stay clamped, and no flag becomes a result of the graph.
// CHECK-LABEL: fx.graph @indices
// CHECK-SAME: (%[[W:.+]]: tensor<10x4xf32>, %[[I:.+]]: tensor<3xsi64>, %[[J:.+]]: tensor<2xsi64>)
// CHECK-SAME: -> (tensor<3x4xf32>, tensor<10x2xf32>) {
// CHECK-NOT: loop.reduce
// CHECK: loop.pointwise : tensor<3x4xf32> {
// CHECK: %[[V:.+]] = loop.load %[[I]][%{{.+}}] : tensor<3xsi64>
// CHECK: %[[A:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK-DAG: %[[BELOW:.+]] = arith.cmpi slt, %[[A]], %c0 : index
// CHECK-DAG: %[[ABOVE:.+]] = arith.cmpi sge, %[[A]], %c10 : index
// CHECK: %[[OUT:.+]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK: %[[IN:.+]] = arith.xori %[[OUT]], %true : i1
// CHECK: cf.assert %[[IN]], "IndexError: index out of range in self"
// CHECK: arith.minsi %{{.+}}, %c9 : index
// CHECK: loop.pointwise : tensor<10x2xf32> {
// CHECK: %[[U:.+]] = loop.load %[[J]]
// CHECK: %[[B:.+]] = arith.index_cast %[[U]] : i64 to index
// CHECK-DAG: arith.cmpi slt, %[[B]], %c-4 : index
// CHECK-DAG: arith.cmpi sge, %[[B]], %c4 : index
// CHECK: cf.assert %{{.+}}, "IndexError: index out of bounds for dimension 1"
// CHECK: fx.output %{{.+}}, %{{.+}} : tensor<3x4xf32>, tensor<10x2xf32>
// Without the option, nothing is asserted.
// OFF-LABEL: fx.graph @indices
// OFF-NOT: cf.assert
// OFF: fx.output
// The assertion survives fusion: the table's read inlines into the add.
// PIPELINE-LABEL: fx.graph @indices
// PIPELINE: loop.pointwise : tensor<3x4xf32> {
// PIPELINE: cf.assert %{{.+}}, "IndexError: index out of range in self"
// PIPELINE: arith.addf
fx.graph @indices(%w: tensor<10x4xf32>, %i: tensor<3xsi64>, %j: tensor<2xsi64>) -> (tensor<3x4xf32>, tensor<10x2xf32>) {
  %0 = fx.embedding %w, %i : (tensor<10x4xf32>, tensor<3xsi64>) -> tensor<3x4xf32>
  %1 = fx.add %0, %0 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = fx.index %w, %j {index_positions = array<i64: 1>} : (tensor<10x4xf32>, tensor<2xsi64>) -> tensor<10x2xf32>
  fx.output %1, %2 : tensor<3x4xf32>, tensor<10x2xf32>
}

// -----

// Tests gather's and index_select's messages: each names what eager raises.
// CHECK-LABEL: fx.graph @gathers
// CHECK: loop.pointwise : tensor<10x3xf32> {
// CHECK: arith.cmpi sge, %{{.+}}, %c6 : index
// CHECK: cf.assert %{{.+}}, "RuntimeError: gather(): index out of bounds for dimension 1"
// CHECK: loop.pointwise : tensor<10x4xf32> {
// CHECK: cf.assert %{{.+}}, "IndexError: index out of range in self"
fx.graph @gathers(%x: tensor<10x6xf32>, %i: tensor<10x3xsi64>, %j: tensor<4xsi64>) -> (tensor<10x3xf32>, tensor<10x4xf32>) {
  %0 = fx.gather %x, %i {dim = 1 : i64} : (tensor<10x6xf32>, tensor<10x3xsi64>) -> tensor<10x3xf32>
  %1 = fx.index_select %x, %j {dim = 1 : i64} : (tensor<10x6xf32>, tensor<4xsi64>) -> tensor<10x4xf32>
  fx.output %0, %1 : tensor<10x3xf32>, tensor<10x4xf32>
}

// -----

// Tests that scatters assert their indices against [0, 6), self's dimension
// `dim`, not the index's: in the scatter's body for scatter_reduce's amax,
// in both gathered reductions for its float product, and index_put's
// against [-6, 6).
// CHECK-LABEL: fx.graph @scatters
// CHECK: loop.scatter "max"
// CHECK: arith.cmpi sge, %{{.+}}, %c6 : index
// CHECK: cf.assert %{{.+}}, "RuntimeError: scatter(): index out of bounds for dimension 1"
// CHECK: loop.scatter_yield
// CHECK: loop.reduce "prod" over [3]
// CHECK: cf.assert %{{.+}}, "RuntimeError: scatter(): index out of bounds for dimension 1"
// CHECK: loop.reduce "max" over [3]
// CHECK: cf.assert %{{.+}}, "RuntimeError: scatter(): index out of bounds for dimension 1"
// CHECK: loop.scatter "sum"
// CHECK: arith.cmpi slt, %{{.+}}, %c-6 : index
// CHECK: cf.assert %{{.+}}, "IndexError: index out of bounds for dimension 1"
// OFF-LABEL: fx.graph @scatters
// OFF-NOT: cf.assert
// OFF: fx.output
fx.graph @scatters(%x: tensor<10x6xf32>, %i: tensor<10x3xsi64>, %s: tensor<10x3xf32>, %j: tensor<2xsi64>, %v: tensor<10x2xf32>) -> (tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xf32>) {
  %0 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "amax", include_self = true} : (tensor<10x6xf32>, tensor<10x3xsi64>, tensor<10x3xf32>) -> tensor<10x6xf32>
  %1 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "prod", include_self = true} : (tensor<10x6xf32>, tensor<10x3xsi64>, tensor<10x3xf32>) -> tensor<10x6xf32>
  %2 = fx.index_put %x, %j, %v {index_positions = array<i64: 1>, accumulate = true} : (tensor<10x6xf32>, tensor<2xsi64>, tensor<10x2xf32>) -> tensor<10x6xf32>
  fx.output %0, %1, %2 : tensor<10x6xf32>, tensor<10x6xf32>, tensor<10x6xf32>
}

// -----

// Tests that divisions assert nothing: CUDA's eager kernels divide integers
// by zero without raising.
// CHECK-LABEL: fx.graph @remainder
// CHECK-NOT: cf.assert
// CHECK: fx.output
fx.graph @remainder(%x: tensor<8xsi64>, %y: tensor<8xsi64>) -> tensor<8xsi64> {
  %0 = fx.remainder %x, %y : (tensor<8xsi64>, tensor<8xsi64>) -> tensor<8xsi64>
  fx.output %0 : tensor<8xsi64>
}
