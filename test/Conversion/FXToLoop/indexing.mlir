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
