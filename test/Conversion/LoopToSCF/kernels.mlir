// RUN: kiln-opt %s --kiln-loop-to-scf | FileCheck %s

// Tests that a kernel runs its rows in parallel and, in each row, its nodes
// in order: the maximum accumulates in vectors, then a scalar tail, into a
// register that the next node reads; only the yielded node is stored, as
// vectors.
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: (%[[X:.+]]: memref<8x64xf32>, %[[OUT:.+]]: memref<8x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK: %[[LANES:.+]] = scf.for %{{.+}} iter_args(%{{.+}}) -> (vector<8xf32>)
// CHECK: vector.load %[[X]][%[[I]], %{{.+}}]
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: scf.for %{{.+}} iter_args(%{{.+}}) -> (f32)
// CHECK: vector.extract %[[LANES]][7]
// CHECK-NEXT: %[[MAX:.+]] = arith.maximumf
// CHECK: scf.for
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[I]], %{{.+}}]
// CHECK: %[[B:.+]] = vector.broadcast %[[MAX]] : f32 to vector<8xf32>
// CHECK: arith.subf %[[V]], %[[B]]
// CHECK: vector.store %{{.+}}, %[[OUT]][%[[I]], %{{.+}}]
// CHECK-NOT: scf.parallel
fx.graph @kernel(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %k = loop.kernel rows(1) -> tensor<8x64xf32> {
    %m = loop.reduce "max" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x64xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %mx : f32
      loop.yield %d : f32
    }
    loop.kernel_yield %y : tensor<8x64xf32>
  }
  fx.output %k : tensor<8x64xf32>
}
