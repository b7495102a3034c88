// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='vector-bytes=0' | FileCheck %s --check-prefix=SCALAR

// Tests that a kernel runs its rows in parallel and, in each row, its nodes
// in order: the maximum accumulates in four interleaved vectors (a compare
// and a select each, NaN kept), which combine, then in one vector, then a
// scalar tail; the vector's lanes combine as a tree (halves of 4, 2, 1)
// into a register that the next node reads; only the yielded node is
// stored, as vectors.
// CHECK-LABEL: func.func @kernel
// SCALAR-LABEL: func.func @kernel
// CHECK-SAME: (%[[X:.+]]: memref<8x64xf32>, %[[OUT:.+]]: memref<8x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK: scf.for %{{.+}} step %c32{{.*}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: %[[V0:.+]] = vector.load %[[X]][%[[I]], %{{.+}}]
// CHECK: %[[PAST:.+]] = arith.cmpf ogt, %[[V0]], %{{.+}} : vector<8xf32>
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[V0]], %[[V0]] : vector<8xf32>
// CHECK: %[[KEPT:.+]] = arith.select %[[PAST]], %[[V0]], %{{.+}}
// CHECK: arith.select %[[NAN]], %[[V0]], %[[KEPT]]
// CHECK-COUNT-3: arith.cmpf ogt
// CHECK: %[[LANES:.+]] = scf.for %{{.+}} iter_args(%{{.+}}) -> (vector<8xf32>)
// CHECK: %[[TAIL:.+]] = scf.for %{{.+}} iter_args(%{{.+}}) -> (f32)
// CHECK: %[[LOW:.+]] = vector.extract_strided_slice %[[LANES]] {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK: %[[HIGH:.+]] = vector.extract_strided_slice %[[LANES]] {offsets = [4], sizes = [4], strides = [1]}
// CHECK: arith.cmpf ogt, %[[HIGH]], %[[LOW]] : vector<4xf32>
// CHECK: vector.extract_strided_slice %{{.+}} {offsets = [2], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
// CHECK: vector.extract_strided_slice %{{.+}} {offsets = [1], sizes = [1], strides = [1]} : vector<2xf32> to vector<1xf32>
// CHECK: arith.cmpf ogt, %{{.+}}, %{{.+}} : vector<1xf32>
// CHECK-NOT: vector.extract_strided_slice
// CHECK: %[[LANE:.+]] = vector.extract %{{.+}}[0] : f32 from vector<1xf32>
// CHECK-NEXT: arith.cmpf ogt, %[[LANE]], %[[TAIL]] : f32
// CHECK-NEXT: arith.cmpf uno
// CHECK-NEXT: arith.select
// CHECK-NEXT: %[[MAX:.+]] = arith.select
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

// -----

// A softmax's exponentials, which its sum and its final node both compute,
// are computed once: the sum also stores them into a cache of the row on
// the stack (in a scope per row, so that each row frees its cache), and the
// final node reads them back, as vectors then one at a time. The maximum
// (no math function) is not cached.
// CHECK-LABEL: func.func @softmax_kernel
// CHECK-SAME: (%[[X:.+]]: memref<8x100xf32>, %[[OUT:.+]]: memref<8x100xf32>)
// CHECK: scf.parallel
// CHECK: memref.alloca_scope {
// CHECK: %[[CACHE:.+]] = memref.alloca() {alignment = 16 : i64} : memref<100xf32>
// CHECK-NOT: memref.alloca()
// CHECK: math.exp %{{.+}} : vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[CACHE]][%{{.+}}] : memref<100xf32>, vector<8xf32>
// CHECK: math.exp %{{.+}} : f32
// CHECK: memref.store %{{.+}}, %[[CACHE]][%{{.+}}] : memref<100xf32>
// CHECK-NOT: math.exp
// CHECK: vector.load %[[CACHE]][%{{.+}}] : memref<100xf32>, vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[OUT]]
// CHECK: memref.load %[[CACHE]][%{{.+}}] : memref<100xf32>
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK-NOT: math.exp
// CHECK: scf.reduce
// SCALAR-LABEL: func.func @softmax_kernel
// SCALAR: memref.alloca() {alignment = 16 : i64} : memref<100xf32>
// SCALAR-COUNT-1: math.exp
// SCALAR-NOT: math.exp
fx.graph @softmax_kernel(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %k = loop.kernel rows(1) -> tensor<8x100xf32> {
    %m = loop.reduce "max" over [100] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x100xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce "sum" over [100] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x100xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    %y = loop.pointwise : tensor<8x100xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x100xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %t = loop.load %s[%i, %c0] : tensor<8x1xf32>
      %r = arith.divf %one, %t : f32
      %p = arith.mulf %e, %r : f32
      loop.yield %p : f32
    }
    loop.kernel_yield %y : tensor<8x100xf32>
  }
  fx.output %k : tensor<8x100xf32>
}

// -----

// Not cached: the final node's exponential is of another value (the
// difference the other way round), and a reduction whose index the node
// reads along its rows would not pair with its columns.
// CHECK-LABEL: func.func @different_exponentials
// SCALAR-LABEL: func.func @different_exponentials
// CHECK-NOT: memref.alloca
// CHECK: math.exp
// CHECK: math.exp
// CHECK-NOT: memref.alloca
// CHECK: return
fx.graph @different_exponentials(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %c0 = arith.constant 0 : index
  %k = loop.kernel rows(1) -> tensor<8x100xf32> {
    %m = loop.reduce "max" over [100] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x100xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce "sum" over [100] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x100xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    %y = loop.pointwise : tensor<8x100xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x100xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %mx, %v : f32
      %e = math.exp %d : f32
      %t = loop.load %s[%i, %c0] : tensor<8x1xf32>
      %p = arith.mulf %e, %t : f32
      loop.yield %p : f32
    }
    loop.kernel_yield %y : tensor<8x100xf32>
  }
  fx.output %k : tensor<8x100xf32>
}

// -----

// A kernel that computes element by element (every node has only the row
// dimensions: a window sum and the relu that reads it) runs its innermost
// row dimension in vectors: the window accumulates 8 elements' sums at
// once, its clamped read loads a whole vector where the step's columns stay
// inside the row and gathers where they do not, and the relu reads the
// sums' vector. The columns after the last whole vector run one at a time.
// CHECK-LABEL: func.func @window_kernel
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: memref<4x18xf32>, %[[OUT:[a-z0-9_]+]]: memref<4x18xf32>)
// CHECK: %[[REM:[a-z0-9_]+]] = arith.remui %c18, %c8
// CHECK: %[[END:[a-z0-9_]+]] = arith.subi %c18, %[[REM]]
// CHECK: scf.parallel (%[[I:[a-z0-9_]+]], %[[J:[a-z0-9_]+]]) = (%{{.+}}, %{{.+}}) to (%c4, %[[END]]) step (%{{.+}}, %c8
// CHECK: %[[SUM:[a-z0-9_]+]] = scf.for %[[K:[a-z0-9_]+]] = %{{.+}} to %c3 step %{{.+}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (vector<8xf32>) {
// CHECK: %[[SHIFT:[a-z0-9_]+]] = arith.subi %[[K]], %c1 : index
// CHECK: %[[INSIDE:[a-z0-9_]+]] = arith.andi %{{.+}}, %{{.+}} : vector<8xi1>
// CHECK: %[[START:[a-z0-9_]+]] = arith.addi %[[J]], %[[SHIFT]] : index
// CHECK: %[[LAST:[a-z0-9_]+]] = arith.addi %[[START]], %c7
// CHECK: %[[FROM:[a-z0-9_]+]] = arith.cmpi sge, %[[START]], %c0 : index
// CHECK: %[[TO:[a-z0-9_]+]] = arith.cmpi sle, %[[LAST]], %c17 : index
// CHECK: %[[WHOLE:[a-z0-9_]+]] = arith.andi %[[FROM]], %[[TO]] : i1
// CHECK: %[[V:[a-z0-9_]+]] = scf.if %[[WHOLE]] -> (vector<8xf32>) {
// CHECK: vector.load %[[X]][%[[I]], %[[START]]] : memref<4x18xf32>, vector<8xf32>
// CHECK: } else {
// CHECK-COUNT-8: memref.load %[[X]][%[[I]], %{{.+}}] : memref<4x18xf32>
// CHECK: vector.from_elements
// CHECK: }
// CHECK: %[[W:[a-z0-9_]+]] = arith.select %[[INSIDE]], %[[V]], %{{.+}} : vector<8xi1>, vector<8xf32>
// CHECK: arith.addf %[[ACC]], %[[W]] : vector<8xf32>
// CHECK: %[[RELU:[a-z0-9_]+]] = arith.maximumf %[[SUM]], %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[RELU]], %[[OUT]][%[[I]], %[[J]]] : memref<4x18xf32>, vector<8xf32>
// CHECK: scf.parallel (%{{.+}}, %[[TAIL:[a-z0-9_]+]]) = (%{{.+}}, %[[END]]) to (%c4, %c18)
// CHECK: memref.store %{{.+}}, %[[OUT]][%{{.+}}, %[[TAIL]]] : memref<4x18xf32>
// Without vectors, one element at a time.
// SCALAR-LABEL: func.func @window_kernel
// SCALAR-NOT: vector
// SCALAR: scf.parallel (%{{.+}}, %{{.+}}) = (%{{.+}}, %{{.+}}) to (%c4, %c18)
// SCALAR-NOT: vector
fx.graph @window_kernel(%x: tensor<4x18xf32>) -> tensor<4x18xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c17 = arith.constant 17 : index
  %zero = arith.constant 0.0 : f32
  %k = loop.kernel rows(2) -> tensor<4x18xf32> {
    %s = loop.reduce "sum" over [3] : tensor<4x18xf32> {
    ^bb0(%i: index, %j: index, %r: index):
      %a = arith.addi %j, %r : index
      %p = arith.subi %a, %c1 : index
      %lo = arith.cmpi sge, %p, %c0 : index
      %hi = arith.cmpi sle, %p, %c17 : index
      %in = arith.andi %lo, %hi : i1
      %m = arith.maxsi %p, %c0 : index
      %q = arith.minsi %m, %c17 : index
      %v = loop.load %x[%i, %q] : tensor<4x18xf32>
      %w = arith.select %in, %v, %zero : f32
      loop.yield %w : f32
    }
    %y = loop.pointwise : tensor<4x18xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %s[%i, %j] : tensor<4x18xf32>
      %r = arith.maximumf %v, %zero : f32
      loop.yield %r : f32
    }
    loop.kernel_yield %y : tensor<4x18xf32>
  }
  fx.output %k : tensor<4x18xf32>
}

// -----

// A long reduction per element (512 values) accumulates along its own
// innermost dimension instead, one element of the kernel at a time.
// CHECK-LABEL: func.func @long_element_reduction
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = (%{{.+}}, %{{.+}}) to (%c4, %c16) step
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8xf32>)
// CHECK: vector.load %{{.+}} : memref<4x16x512xf32>, vector<8xf32>
// CHECK: memref.store %{{.+}} : memref<4x16xf32>
// CHECK-NOT: vector.store
fx.graph @long_element_reduction(%x: tensor<4x16x512xf32>) -> tensor<4x16xf32> {
  %k = loop.kernel rows(2) -> tensor<4x16xf32> {
    %s = loop.reduce "sum" over [512] : tensor<4x16xf32> {
    ^bb0(%i: index, %j: index, %r: index):
      %v = loop.load %x[%i, %j, %r] : tensor<4x16x512xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<4x16xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %s[%i, %j] : tensor<4x16xf32>
      %r = arith.negf %v : f32
      loop.yield %r : f32
    }
    loop.kernel_yield %y : tensor<4x16xf32>
  }
  fx.output %k : tensor<4x16xf32>
}

// -----

// A short reduction along a row's own elements (64 values) keeps vectors
// along them too: vectors along the kernel's rows would gather from 8 rows.
// CHECK-LABEL: func.func @short_reduction_along_rows
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = (%{{.+}}, %{{.+}}) to (%c4, %c16) step
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8xf32>)
// CHECK: vector.load %{{.+}} : memref<4x16x64xf32>, vector<8xf32>
// CHECK: memref.store %{{.+}} : memref<4x16xf32>
// CHECK-NOT: vector.store
fx.graph @short_reduction_along_rows(%x: tensor<4x16x64xf32>) -> tensor<4x16xf32> {
  %k = loop.kernel rows(2) -> tensor<4x16xf32> {
    %s = loop.reduce "sum" over [64] : tensor<4x16xf32> {
    ^bb0(%i: index, %j: index, %r: index):
      %v = loop.load %x[%i, %j, %r] : tensor<4x16x64xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<4x16xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %s[%i, %j] : tensor<4x16xf32>
      %r = arith.negf %v : f32
      loop.yield %r : f32
    }
    loop.kernel_yield %y : tensor<4x16xf32>
  }
  fx.output %k : tensor<4x16xf32>
}

// -----

// A standalone reduction per element (a max-pooling window) runs a vector of
// elements at a time too, then the tail one at a time.
// CHECK-LABEL: func.func @window_reduce
// CHECK: scf.parallel (%{{.+}}, %[[J:[a-z0-9_]+]]) = {{.+}} step (%{{.+}}, %c8
// CHECK: scf.for {{.+}} -> (vector<8xf32>)
// CHECK: scf.if %{{.+}} -> (vector<8xf32>)
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %[[J]]] {alignment = 16 : i64} : memref<4x16xf32>, vector<8xf32>
// CHECK: scf.parallel
// CHECK: memref.store
// SCALAR-LABEL: func.func @window_reduce
// SCALAR-NOT: vector.store
fx.graph @window_reduce(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %s = loop.reduce "max" over [3] : tensor<4x16xf32> {
  ^bb0(%i: index, %j: index, %r: index):
    %a = arith.addi %j, %r : index
    %p = arith.subi %a, %c1 : index
    %m = arith.maxsi %p, %c0 : index
    %q = arith.minsi %m, %c15 : index
    %v = loop.load %x[%i, %q] : tensor<4x16xf32>
    loop.yield %v : f32
  }
  fx.output %s : tensor<4x16xf32>
}
