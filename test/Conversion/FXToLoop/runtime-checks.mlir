// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop=runtime-checks=true | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop=runtime-checks=true | FileCheck %s --check-prefix=PIPELINE

// Tests that an integer division checks its divisor for zeros: the flag is
// the largest of (divisor == 0) over its elements, a result of the graph
// after its own, with the message in kiln.checks.
// CHECK-LABEL: fx.graph @remainder
// CHECK-SAME: (%[[X:.+]]: tensor<8xsi64>, %[[Y:.+]]: tensor<8xsi64>)
// CHECK-SAME: -> (tensor<8xsi64>, tensor<si32>)
// CHECK-SAME: kiln.checks = ["RuntimeError: ZeroDivisionError"]
// CHECK: %[[Q:.+]] = loop.pointwise : tensor<8xsi64>
// CHECK: arith.remsi
// CHECK: %[[FLAG:.+]] = loop.reduce "max" over [8] : tensor<si32> {
// CHECK-NEXT: ^bb0(%[[R:.+]]: index):
// CHECK-NEXT: %[[D:.+]] = loop.load %[[Y]][%[[R]]] : tensor<8xsi64>
// CHECK-NEXT: %[[ZERO:.+]] = arith.cmpi eq, %[[D]], %{{.+}} : i64
// CHECK-NEXT: %[[E:.+]] = arith.extui %[[ZERO]] : i1 to i32
// CHECK-NEXT: loop.yield %[[E]] : i32
// CHECK-NOT: loop.check
// CHECK: fx.output %[[Q]], %[[FLAG]] : tensor<8xsi64>, tensor<si32>
// Without the option, nothing is checked.
// OFF-LABEL: fx.graph @remainder
// OFF-SAME: -> tensor<8xsi64> {
// OFF-NOT: loop.reduce
// OFF: fx.output
// The flag survives the whole graph lowering as the graph's last result.
// PIPELINE-LABEL: fx.graph @remainder
// PIPELINE-SAME: -> (tensor<8xsi64>, tensor<si32>)
// PIPELINE: %[[FLAG:.+]] = loop.reduce "max"
// PIPELINE: fx.output %{{.+}}, %[[FLAG]]
fx.graph @remainder(%x: tensor<8xsi64>, %y: tensor<8xsi64>) -> tensor<8xsi64> {
  %0 = fx.remainder %x, %y : (tensor<8xsi64>, tensor<8xsi64>) -> tensor<8xsi64>
  fx.output %0 : tensor<8xsi64>
}

// -----

// Tests that float divisions check nothing (eager gives inf and nan), and
// that a zero integer Scalar divisor fails every run with a dividend.
// CHECK-LABEL: fx.graph @scalar_divisors
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xsi32>, tensor<si32>)
// CHECK-SAME: kiln.checks = ["RuntimeError: ZeroDivisionError"]
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: arith.remf
// CHECK: loop.reduce "max" over [4] : tensor<si32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.yield %[[ONE]] : i32
// CHECK-NOT: loop.reduce
// CHECK: fx.output
fx.graph @scalar_divisors(%x: tensor<4xf32>, %y: tensor<4xf32>, %n: tensor<4xsi32>) -> (tensor<4xf32>, tensor<4xsi32>) {
  %0 = fx.fmod %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.remainder_scalar %n {other = 0 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  fx.output %0, %1 : tensor<4xf32>, tensor<4xsi32>
}

// -----

// Tests that embedding checks its indices against the table's rows, [0, 10),
// and advanced indexing against [-size, size) of each indexed dimension.
// CHECK-LABEL: fx.graph @indices
// CHECK-SAME: (%[[W:.+]]: tensor<10x4xf32>, %[[I:.+]]: tensor<3xsi64>, %[[J:.+]]: tensor<2xsi64>)
// CHECK-SAME: kiln.checks = ["IndexError: index out of range in self", "IndexError: index out of bounds for dimension 1"]
// CHECK: loop.reduce "max" over [3] : tensor<si32> {
// CHECK: %[[V:.+]] = loop.load %[[I]]
// CHECK: %[[A:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK-DAG: %[[BELOW:.+]] = arith.cmpi slt, %[[A]], %c0 : index
// CHECK-DAG: %[[ABOVE:.+]] = arith.cmpi sge, %[[A]], %c10 : index
// CHECK: arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK: loop.reduce "max" over [2] : tensor<si32> {
// CHECK: %[[U:.+]] = loop.load %[[J]]
// CHECK: %[[B:.+]] = arith.index_cast %[[U]] : i64 to index
// CHECK-DAG: %[[NEG:.+]] = arith.cmpi slt, %[[B]], %c-4 : index
// CHECK-DAG: %[[POS:.+]] = arith.cmpi sge, %[[B]], %c4 : index
// CHECK: arith.ori %[[NEG]], %[[POS]] : i1
fx.graph @indices(%w: tensor<10x4xf32>, %i: tensor<3xsi64>, %j: tensor<2xsi64>) -> (tensor<3x4xf32>, tensor<10x2xf32>) {
  %0 = fx.embedding %w, %i : (tensor<10x4xf32>, tensor<3xsi64>) -> tensor<3x4xf32>
  %1 = fx.index %w, %j {index_positions = array<i64: 1>} : (tensor<10x4xf32>, tensor<2xsi64>) -> tensor<10x2xf32>
  fx.output %0, %1 : tensor<3x4xf32>, tensor<10x2xf32>
}

// -----

// Tests that a scatter checks its indices against [0, size) of self's
// dimension `dim` (6 here), not the index's.
// CHECK-LABEL: fx.graph @scatter_add
// CHECK-SAME: (%[[X:.+]]: tensor<10x6xf32>, %[[I:.+]]: tensor<10x3xsi64>, %{{.+}}: tensor<10x3xf32>)
// CHECK-SAME: kiln.checks = ["RuntimeError: scatter(): index out of bounds for dimension 1"]
// CHECK: loop.reduce "max" over [10, 3] : tensor<si32> {
// CHECK: %[[V:.+]] = loop.load %[[I]]
// CHECK: %[[A:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK-DAG: arith.cmpi slt, %[[A]], %c0 : index
// CHECK-DAG: arith.cmpi sge, %[[A]], %c6 : index
fx.graph @scatter_add(%x: tensor<10x6xf32>, %i: tensor<10x3xsi64>, %s: tensor<10x3xf32>) -> tensor<10x6xf32> {
  %0 = fx.scatter_add %x, %i, %s {dim = 1 : i64} : (tensor<10x6xf32>, tensor<10x3xsi64>, tensor<10x3xf32>) -> tensor<10x6xf32>
  fx.output %0 : tensor<10x6xf32>
}
