// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='parallel=false' | FileCheck %s --check-prefix=SERIAL

// Tests that a returned node stores into the caller's buffer, a node used
// only inside the graph gets a temporary that is freed, and the sizes
// function returns the result's dynamic size.
// CHECK-LABEL: func.func @graph
// CHECK-SAME: (%[[X:.+]]: memref<?x4xf32>, %[[OUT:.+]]: memref<?x4xf32>)
// CHECK-SAME: attributes {kiln.graph, kiln.signature = (tensor<?x4xf32>) -> tensor<?x4xf32>}
// CHECK: %[[N:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x4xf32>
// CHECK: %[[TMP:.+]] = memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) = (%{{.+}}, %{{.+}}) to (%[[N]], %{{.+}})
// CHECK: %[[V:.+]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK: %[[E:.+]] = math.exp %[[V]]
// CHECK: memref.store %[[E]], %[[TMP]][%[[I]], %[[J]]]
// CHECK: scf.parallel
// CHECK: memref.load %[[TMP]]
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: memref.dealloc %[[TMP]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @graph_result_sizes
// CHECK-SAME: (%[[X2:.+]]: memref<?x4xf32>) -> index
// CHECK: %[[N2:.+]] = memref.dim %[[X2]]
// CHECK: return %[[N2]]
// SERIAL-LABEL: func.func @graph
// SERIAL-NOT: scf.parallel
// SERIAL: scf.for
// SERIAL-NEXT: scf.for
fx.graph @graph(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %0 = loop.pointwise(%n) : tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<?x4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise(%n) : tensor<?x4xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %0[%i, %j] : tensor<?x4xf32>
    %b = loop.load %0[%i, %j] : tensor<?x4xf32>
    %m = arith.mulf %a, %b : f32
    loop.yield %m : f32
  }
  fx.output %1 : tensor<?x4xf32>
}

// -----

// Tests that signed integer tensors become signless buffers and that inputs
// returned as they are, or values returned twice, are copied.
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[X:.+]]: memref<3xi64>, %[[R0:.+]]: memref<3xi64>, %[[R1:.+]]: memref<3xi64>, %[[R2:.+]]: memref<3xi64>)
// CHECK: scf.parallel
// CHECK: memref.store %{{.+}}, %[[R0]]
// CHECK: memref.copy %[[X]], %[[R1]]
// CHECK: memref.copy %[[R0]], %[[R2]]
// CHECK-LABEL: func.func @copies_result_sizes
// CHECK-NEXT: return{{$}}
fx.graph @copies(%x: tensor<3xsi64>) -> (tensor<3xsi64>, tensor<3xsi64>, tensor<3xsi64>) {
  %0 = loop.pointwise : tensor<3xsi64> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<3xsi64>
    %s = arith.addi %v, %v : i64
    loop.yield %s : i64
  }
  fx.output %0, %x, %0 : tensor<3xsi64>, tensor<3xsi64>, tensor<3xsi64>
}

// -----

// Tests that a rank-0 node needs no loop.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: scf.parallel
// CHECK: %[[V:.+]] = memref.load %{{.+}}[] : memref<f64>
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<f64>
fx.graph @scalar(%x: tensor<f64>) -> tensor<f64> {
  %0 = loop.pointwise : tensor<f64> {
  ^bb0:
    %v = loop.load %x[] : tensor<f64>
    %n = arith.negf %v : f64
    loop.yield %n : f64
  }
  fx.output %0 : tensor<f64>
}
