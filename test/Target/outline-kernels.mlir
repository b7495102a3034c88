// RUN: kiln-opt %s -split-input-file --kiln-outline-kernels | FileCheck %s

// Two nests alike but for their buffers call one function; the constants
// they use are defined again inside it, the buffers are its arguments.
// CHECK-LABEL: func.func private @forward(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<64xf32>, %[[B:[a-z0-9]+]]: memref<64xf32>, %[[C:[a-z0-9]+]]: memref<64xf32>
// CHECK-NOT: scf.parallel
// CHECK: call @forward_kernel(%[[A]], %[[B]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT: call @forward_kernel(%[[B]], %[[C]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @forward_kernel(%[[X:.+]]: memref<64xf32>, %[[Y:.+]]: memref<64xf32>)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[SIZE:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.0{{.*}} : f32
// CHECK: scf.parallel (%[[I:.+]]) = (%[[ZERO]]) to (%[[SIZE]]) step (%[[ONE]])
// CHECK: %[[V:.+]] = memref.load %[[X]][%[[I]]]
// CHECK: %[[W:.+]] = arith.mulf %[[V]], %[[TWO]]
// CHECK: memref.store %[[W]], %[[Y]][%[[I]]]
// CHECK: return
// CHECK-NOT: func.func private @forward_kernel_0
// CHECK-LABEL: func.func @not_a_graph
func.func private @forward(%a: memref<64xf32>, %b: memref<64xf32>,
                           %c: memref<64xf32>) attributes {kiln.graph} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %a[%i] : memref<64xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %b[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %b[%i] : memref<64xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %c[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// A function that is not a graph's keeps its loops.
// CHECK: scf.for
func.func @not_a_graph(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    memref.store %zero, %a[%i] : memref<64xf32>
  }
  return
}

// -----

// Nests that differ (here in a constant) get a function each, placed after
// their graph in the order they run; a size computed outside a nest is an
// argument, and a nest's results are the function's.
// CHECK-LABEL: func.func private @forward(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<?xf32>, %[[B:[a-z0-9]+]]: memref<?xf32>
// CHECK: %[[N:.+]] = memref.dim %[[A]]
// CHECK: call @forward_kernel(%[[N]], %[[A]], %[[B]]) : (index, memref<?xf32>, memref<?xf32>) -> ()
// CHECK: %[[SUM:.+]] = call @forward_kernel_0(%[[N]], %[[B]]) : (index, memref<?xf32>) -> f32
// CHECK: memref.store %[[SUM]]
// CHECK: func.func private @forward_kernel(%{{.+}}: index, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>)
// CHECK: arith.constant 3.0
// CHECK: func.func private @forward_kernel_0(%{{.+}}: index, %{{.+}}: memref<?xf32>) -> f32
// CHECK: %[[R:.+]] = scf.for
// CHECK: return %[[R]] : f32
// CHECK-LABEL: func.func private @forward_result_sizes
func.func private @forward(%a: memref<?xf32>, %b: memref<?xf32>,
                           %out: memref<f32>) attributes {kiln.graph} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %three = arith.constant 3.0 : f32
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.mulf %v, %three : f32
    memref.store %w, %b[%i] : memref<?xf32>
    scf.reduce
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %b[%i] : memref<?xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

func.func private @forward_result_sizes() {
  return
}

// -----

// Arithmetic on constants alone (a size the canonicalizer has not folded
// yet) is computed again in the kernel, not passed: the kernel's bounds stay
// constants.
// CHECK-LABEL: func.func private @forward(
// CHECK: call @forward_kernel(%{{.+}}) : (memref<64xf32>) -> ()
// CHECK: func.func private @forward_kernel(%{{.+}}: memref<64xf32>)
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[N:.+]] = arith.muli %[[C4]], %[[C16]] : index
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[N]])
func.func private @forward(%a: memref<64xf32>) attributes {kiln.graph} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %n = arith.muli %c4, %c16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %a[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
