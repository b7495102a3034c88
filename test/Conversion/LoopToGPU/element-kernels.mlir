// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='element-kernel-vector-bytes=16' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu | FileCheck %s --check-prefix=SCALAR
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu | FileCheck %s --check-prefix=NO-VECTORS

// A kernel that computes element by element (a window sum and the relu
// that reads it) runs 4 consecutive elements per thread (16 bytes of f32
// sums): the window accumulates a vector, its clamped read loads a whole
// vector where the thread's columns stay inside the row and gathers where
// they do not, and the thread stores one vector.
// CHECK-LABEL: func.func @window_kernel
// CHECK: gpu.launch {{.+}} function(@kiln_elements)
// CHECK: arith.muli %{{.+}}, %c4{{(_[0-9]+)?}} : index
// CHECK: scf.for {{.+}} -> (vector<4xf32>)
// CHECK: scf.if %{{.+}} -> (vector<4xf32>) {
// CHECK: vector.load %{{.+}} : memref<4x16xf32>, vector<4xf32>
// CHECK: } else {
// CHECK-COUNT-4: memref.load
// CHECK: arith.addf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: %[[RELU:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: vector.store %[[RELU]], %{{.+}} {alignment = 16 : i64} : memref<4x16xf32>, vector<4xf32>
// A thread per element by default.
// NO-VECTORS-NOT: kiln_elements
// SCALAR-LABEL: func.func @window_kernel
// SCALAR: function(@kiln_rows)
// SCALAR-NOT: vector.load
// SCALAR-LABEL: func.func @window_kernel_result_sizes
fx.graph @window_kernel(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %zero = arith.constant 0.0 : f32
  %k = loop.kernel rows(2) -> tensor<4x16xf32> {
    %s = loop.reduce "sum" over [3] : tensor<4x16xf32> {
    ^bb0(%i: index, %j: index, %r: index):
      %a = arith.addi %j, %r : index
      %p = arith.subi %a, %c1 : index
      %lo = arith.cmpi sge, %p, %c0 : index
      %hi = arith.cmpi sle, %p, %c15 : index
      %in = arith.andi %lo, %hi : i1
      %m = arith.maxsi %p, %c0 : index
      %q = arith.minsi %m, %c15 : index
      %v = loop.load %x[%i, %q] : tensor<4x16xf32>
      %w = arith.select %in, %v, %zero : f32
      loop.yield %w : f32
    }
    %y = loop.pointwise : tensor<4x16xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %s[%i, %j] : tensor<4x16xf32>
      %r = arith.maximumf %v, %zero : f32
      loop.yield %r : f32
    }
    loop.kernel_yield %y : tensor<4x16xf32>
  }
  fx.output %k : tensor<4x16xf32>
}

// -----

// Rows of 6 take 2 elements per thread, the most that divide them; the
// batch is dynamic: the grid covers its run-time elements, 2 per thread
// for blocks of 256, and threads past the end do nothing.
// CHECK-LABEL: func.func @short_rows
// CHECK: %[[N:.+]] = memref.dim %{{.+}}, %c0
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %[[N]] : index
// CHECK: %[[TOTAL:.+]] = arith.muli %[[ROWS]], %c6 : index
// CHECK: %[[GRID:.+]] = arith.ceildivui %[[TOTAL]], %c512 : index
// CHECK: gpu.launch {{.+}} in (%{{.+}} = %[[GRID]], {{.+}} function(@kiln_elements)
// CHECK: %[[FIRST:.+]] = arith.muli %{{.+}}, %c2{{(_[0-9]+)?}} : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[FIRST]], %[[TOTAL]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: vector.load %{{.+}} : memref<?x4x6xf32>, vector<2xf32>
// CHECK: vector.store %{{.+}} {alignment = 8 : i64} : memref<?x6xf32>, vector<2xf32>
fx.graph @short_rows(%x: tensor<?x4x6xf32>) -> tensor<?x6xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x6xf32>
  %k = loop.kernel rows(2) -> tensor<?x6xf32> {
    %s = loop.reduce "max"(%n) over [4] : tensor<?x6xf32> {
    ^bb0(%i: index, %j: index, %r: index):
      %v = loop.load %x[%i, %r, %j] : tensor<?x4x6xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise(%n) : tensor<?x6xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %s[%i, %j] : tensor<?x6xf32>
      %r = arith.negf %v : f32
      loop.yield %r : f32
    }
    loop.kernel_yield %y : tensor<?x6xf32>
  }
  fx.output %k : tensor<?x6xf32>
}

// -----

// A standalone reduction per element takes the same kernel.
// CHECK-LABEL: func.func @window_reduce
// CHECK: function(@kiln_elements)
// CHECK: scf.if %{{.+}} -> (vector<4xf32>)
// CHECK: vector.store %{{.+}} {alignment = 16 : i64} : memref<4x16xf32>, vector<4xf32>
// SCALAR-LABEL: func.func @window_reduce
// SCALAR: function(@kiln_rows)
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
