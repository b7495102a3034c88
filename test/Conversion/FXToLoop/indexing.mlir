// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s

// An embedding reads the table at the row its index tensor holds, clamped
// into the table (out-of-range indices are an error in PyTorch; here they
// never read outside the tensor).
// CHECK-LABEL: fx.graph @embedding
// CHECK: loop.pointwise : tensor<3x7x16xf32>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[K:.+]]: index):
// CHECK: %[[TOKEN:.+]] = loop.load %{{.+}}[%[[I]], %[[J]]] : tensor<3x7xsi64>
// CHECK: %[[ROW:.+]] = arith.index_cast %[[TOKEN]] : i64 to index
// CHECK: %[[LOW:.+]] = arith.maxsi %[[ROW]], %{{.+}} : index
// CHECK: %[[CLAMPED:.+]] = arith.minsi %[[LOW]], %{{.+}} : index
// CHECK: loop.load %{{.+}}[%[[CLAMPED]], %[[K]]] : tensor<50x16xf32>
fx.graph @embedding(%w: tensor<50x16xf32>, %t: tensor<3x7xsi64>) -> tensor<3x7x16xf32> {
  %0 = fx.embedding %w, %t : (tensor<50x16xf32>, tensor<3x7xsi64>) -> tensor<3x7x16xf32>
  fx.output %0 : tensor<3x7x16xf32>
}

// -----

// A concatenation reads every input at an index clamped into its range and
// selects the one whose range holds the element.
// CHECK-LABEL: fx.graph @cat
// CHECK: loop.pointwise : tensor<3x9xf32>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[B:.+]] = loop.load %{{.+}}[%[[I]], %{{.+}}] : tensor<3x5xf32>
// CHECK: %[[A:.+]] = loop.load %{{.+}}[%[[I]], %{{.+}}] : tensor<3x4xf32>
// CHECK: %[[FIRST:.+]] = arith.cmpi slt, %[[J]], %c4
// CHECK: arith.select %[[FIRST]], %[[A]], %[[B]] : f32
fx.graph @cat(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) -> tensor<3x9xf32> {
  %0 = fx.cat %a, %b {dim = -1 : i64} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x9xf32>
  fx.output %0 : tensor<3x9xf32>
}

// -----

// Adjacent indexed dimensions are replaced in place by the index tensors'
// broadcast shape; a negative index counts from the end, then the index is
// clamped into the tensor.
// CHECK-LABEL: fx.graph @index_adjacent
// CHECK: loop.pointwise : tensor<2x3x4x7xf32>
// CHECK-NEXT: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index, %[[C:.+]]: index, %[[D:.+]]: index):
// CHECK: %[[I:.+]] = loop.load %{{.+}}[%[[B]], %[[C]]] : tensor<3x4xsi64>
// CHECK: %[[IC:.+]] = arith.index_cast %[[I]] : i64 to index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[IC]], %c0
// CHECK: %[[UP:.+]] = arith.addi %[[IC]], %c5
// CHECK: %[[W1:.+]] = arith.select %[[NEG]], %[[UP]], %[[IC]]
// CHECK: %[[R1:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: %[[J:.+]] = loop.load %{{.+}}[%c0{{.*}}, %[[C]]] : tensor<1x4xsi64>
// CHECK: %[[R2:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: loop.load %{{.+}}[%[[A]], %[[R1]], %[[R2]], %[[D]]] : tensor<2x5x6x7xf32>
fx.graph @index_adjacent(%x: tensor<2x5x6x7xf32>, %i: tensor<3x4xsi64>, %j: tensor<1x4xsi64>) -> tensor<2x3x4x7xf32> {
  %0 = fx.index %x, %i, %j {index_positions = array<i64: 1, 2>} : (tensor<2x5x6x7xf32>, tensor<3x4xsi64>, tensor<1x4xsi64>) -> tensor<2x3x4x7xf32>
  fx.output %0 : tensor<2x3x4x7xf32>
}

// -----

// Indexed dimensions separated by a full slice: the broadcast dimensions
// lead the result.
// CHECK-LABEL: fx.graph @index_separated
// CHECK: loop.pointwise : tensor<3x6xf32>
// CHECK-NEXT: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index):
// CHECK: loop.load %{{.+}}[%[[A]]] : tensor<3xsi64>
// CHECK: loop.load %{{.+}}[%[[A]]] : tensor<3xsi32>
// CHECK: loop.load %{{.+}}[%{{.+}}, %[[B]], %{{.+}}] : tensor<5x6x7xf32>
fx.graph @index_separated(%x: tensor<5x6x7xf32>, %i: tensor<3xsi64>, %j: tensor<3xsi32>) -> tensor<3x6xf32> {
  %0 = fx.index %x, %i, %j {index_positions = array<i64: 0, 2>} : (tensor<5x6x7xf32>, tensor<3xsi64>, tensor<3xsi32>) -> tensor<3x6xf32>
  fx.output %0 : tensor<3x6xf32>
}

// -----

// Dynamic sizes of the result come from the index tensor and from `self`.
// CHECK-LABEL: fx.graph @index_dynamic
// CHECK-DAG: %[[N:.+]] = tensor.dim %{{.+}}, %c0{{.*}} : tensor<?xsi64>
// CHECK-DAG: %[[M:.+]] = tensor.dim %{{.+}}, %c1{{.*}} : tensor<?x?xf32>
// CHECK: loop.pointwise(%[[N]], %[[M]]) : tensor<?x?xf32>
fx.graph @index_dynamic(%x: tensor<?x?xf32>, %i: tensor<?xsi64>) -> tensor<?x?xf32> {
  %0 = fx.index %x, %i : (tensor<?x?xf32>, tensor<?xsi64>) -> tensor<?x?xf32>
  fx.output %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: fx.graph @gather(
// gather along dim 1: the index, clamped into [0, 6), read at its own position.
// CHECK-DAG: %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: loop.pointwise : tensor<4x2xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %arg1[%[[I]], %[[J]]] : tensor<4x2xsi64>
// CHECK-NEXT: %[[A:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK-NEXT: %[[LO:.+]] = arith.maxsi %[[A]], %[[C0]] : index
// CHECK-NEXT: %[[K:.+]] = arith.minsi %[[LO]], %[[C5]] : index
// CHECK-NEXT: loop.load %arg0[%[[I]], %[[K]]] : tensor<4x6xf32>
fx.graph @gather(%x: tensor<4x6xf32>, %i: tensor<4x2xsi64>) -> (tensor<4x2xf32>) {
  %r0 = fx.gather %x, %i {dim = 1 : i64} : (tensor<4x6xf32>, tensor<4x2xsi64>) -> tensor<4x2xf32>
  fx.output %r0 : tensor<4x2xf32>
}

// -----

// CHECK-LABEL: fx.graph @index_select(
// index_select along dim 1: the index read at the result's column.
// CHECK-DAG: %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: loop.pointwise : tensor<4x3xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %arg1[%[[J]]] : tensor<3xsi64>
// CHECK-NEXT: %[[A:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK-NEXT: %[[LO:.+]] = arith.maxsi %[[A]], %[[C0]] : index
// CHECK-NEXT: %[[K:.+]] = arith.minsi %[[LO]], %[[C5]] : index
// CHECK-NEXT: loop.load %arg0[%[[I]], %[[K]]] : tensor<4x6xf32>
fx.graph @index_select(%x: tensor<4x6xf32>, %i: tensor<3xsi64>) -> (tensor<4x3xf32>) {
  %r0 = fx.index_select %x, %i {dim = 1 : i64} : (tensor<4x6xf32>, tensor<3xsi64>) -> tensor<4x3xf32>
  fx.output %r0 : tensor<4x3xf32>
}
