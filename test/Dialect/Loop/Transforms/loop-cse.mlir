// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-cse))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(cse))' | FileCheck %s

// kiln-loop-cse merges what upstream's cse merges (the second RUN line): only
// its hash differs.

// Tests that nodes whose bodies are alike merge, and that nodes that differ
// only in what they load, or in an op of their bodies, stay apart.
// CHECK-LABEL: fx.graph @merge_nodes
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>)
// CHECK: %[[A:.+]] = loop.pointwise
// CHECK: loop.load %[[X]]
// CHECK-NEXT: math.exp
// CHECK: %[[B:.+]] = loop.pointwise
// CHECK: loop.load %[[Y]]
// CHECK-NEXT: math.exp
// CHECK: %[[C:.+]] = loop.pointwise
// CHECK: loop.load %[[X]]
// CHECK-NEXT: math.sin
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[A]], %[[A]], %[[B]], %[[C]]
fx.graph @merge_nodes(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%j: index):
    %v = loop.load %x[%j] : tensor<4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %2 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %3 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %e = math.sin %v : f32
    loop.yield %e : f32
  }
  fx.output %0, %1, %2, %3
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that ops merge inside a body, with ops of the graph before it too.
// The second node's body becomes the first's, but the ops it loses are
// erased only at the end, as upstream does: the nodes merge in a later run.
// CHECK-LABEL: fx.graph @merge_in_bodies
// CHECK: %[[S:.+]] = arith.constant 3 : index
// CHECK: %[[T:.+]] = arith.index_cast %[[S]]
// CHECK-COUNT-2: loop.pointwise
// CHECK-NEXT: ^bb0(%[[I:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %{{.+}}[%[[I]]]
// CHECK-NEXT: %[[E:.+]] = math.exp %[[V]]
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[E]], %[[E]]
// CHECK-NEXT: %[[F:.+]] = arith.sitofp %[[T]]
// CHECK-NEXT: %[[R:.+]] = arith.addf %[[M]], %[[F]]
// CHECK-NEXT: loop.yield %[[R]]
// CHECK-NOT: loop.pointwise
fx.graph @merge_in_bodies(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = arith.constant 3 : index
  %t = arith.index_cast %s : index to i32
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    %m = arith.mulf %e, %e : f32
    %f = arith.sitofp %t : i32 to f32
    %r = arith.addf %m, %f : f32
    loop.yield %r : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    %w = loop.load %x[%i] : tensor<4xf32>
    %g = math.exp %w : f32
    %m = arith.mulf %e, %g : f32
    %u = arith.index_cast %s : index to i32
    %f = arith.sitofp %u : i32 to f32
    %r = arith.addf %m, %f : f32
    loop.yield %r : f32
  }
  fx.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}
