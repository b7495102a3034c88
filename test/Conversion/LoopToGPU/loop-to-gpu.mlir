// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='elements-per-thread=1' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='transpose-tiles=false' | FileCheck %s --check-prefix=VEC
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='block-size=128' | FileCheck %s --check-prefix=BLOCK
// RUN: not kiln-opt %s -split-input-file --kiln-loop-to-gpu='block-size=2048' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s -split-input-file --kiln-loop-to-gpu='row-threads=48' 2>&1 | FileCheck %s --check-prefix=BADROWS
// RUN: not kiln-opt %s -split-input-file --kiln-loop-to-gpu='row-lane-vectors=0' 2>&1 | FileCheck %s --check-prefix=BADLANES
// RUN: not kiln-opt %s -split-input-file --kiln-loop-to-gpu='short-row-block-size=16' 2>&1 | FileCheck %s --check-prefix=BADSHORT
// RUN: not kiln-opt %s -split-input-file --kiln-loop-to-gpu='element-kernel-vector-bytes=24' 2>&1 | FileCheck %s --check-prefix=BADELEMENTS
// RUN: not kiln-opt %s -split-input-file --kiln-loop-to-gpu='warpgroup-tile-n=64' 2>&1 | FileCheck %s --check-prefix=BADTILE

// Tests that a node becomes one kernel with one thread per element, launched
// on the stream the function receives, and that temporaries and copies are
// ordered on the same stream.
// CHECK-LABEL: func.func @graph
// CHECK-SAME: (%[[X:.+]]: memref<?x4xf32>, %[[OUT0:.+]]: memref<?x4xf32>, %[[OUT1:.+]]: memref<?x4xf32>, %[[STREAM:.+]]: !llvm.ptr)
// CHECK: %[[T0:.+]] = builtin.unrealized_conversion_cast %[[STREAM]] : !llvm.ptr to !gpu.async.token
// CHECK: %[[N:.+]] = memref.dim %[[X]]
// CHECK: %[[TMP:.+]], %[[T1:.+]] = gpu.alloc async [%[[T0]]] (%[[N]]) : memref<?x4xf32>
// CHECK: %[[TOTAL:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK: %[[GRID:.+]] = arith.ceildivui %[[TOTAL]], %{{.+}} : index
// CHECK: %[[T2:.+]] = gpu.launch async [%[[T1]]] blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[GRID]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %{{.+}},
// CHECK: %[[BASE:.+]] = arith.muli %[[BX]], %{{.+}}
// CHECK: %[[THREAD:.+]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[FLAT:.+]] = arith.muli %[[THREAD]], %{{.+}}
// CHECK: %[[AX:.+]] = memref.assume_alignment %[[X]], 16
// CHECK: %[[ATMP:.+]] = memref.assume_alignment %[[TMP]], 16
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[FLAT]], %[[TOTAL]]
// CHECK: scf.if %[[IN]]
// CHECK: %[[J:.+]] = arith.remui %[[FLAT]], %{{.+}}
// CHECK: %[[I:.+]] = arith.divui %[[FLAT]], %{{.+}}
// CHECK: memref.load %[[AX]][%[[I]], %[[J]]]
// CHECK: memref.store %{{.+}}, %[[ATMP]][%[[I]], %[[J]]]
// CHECK: gpu.terminator
// CHECK: %[[T3:.+]] = gpu.launch async [%[[T2]]]
// CHECK: memref.assume_alignment %[[OUT0]], 16
// The temporary goes after its last reader, stream-ordered.
// CHECK: %[[T4:.+]] = gpu.dealloc async [%[[T3]]] %[[TMP]]
// CHECK: gpu.memcpy async [%[[T4]]] %[[OUT1]], %[[X]]
// CHECK: return
// CHECK-LABEL: func.func @graph_result_sizes
// VEC-LABEL: func.func @graph
// VEC: arith.ceildivui %{{.+}}, %c1024
// VEC: %[[V:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x4xf32>, vector<4xf32>
// VEC: %[[E:.+]] = math.exp %[[V]] : vector<4xf32>
// VEC: vector.store %[[E]], %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x4xf32>, vector<4xf32>
// BLOCK-LABEL: func.func @graph
// BLOCK: arith.constant 128 : index
// BLOCK: gpu.launch
// BAD: kiln-loop-to-gpu: block-size must be in [1, 1024], got 2048
// BADROWS: kiln-loop-to-gpu: row-threads must be a power of two in [32, 1024], got 48
// BADLANES: kiln-loop-to-gpu: row-lane-vectors must be in [1, 16], got 0
// BADSHORT: kiln-loop-to-gpu: short-row-block-size must be in [32, 1024], got 16
// BADELEMENTS: kiln-loop-to-gpu: element-kernel-vector-bytes must be 0 or a power of two in [4, 64], got 24
// BADTILE: kiln-loop-to-gpu: warpgroup-tile-n must be 0, 128 or 256, got 64
fx.graph @graph(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
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
    %m = arith.mulf %a, %a : f32
    loop.yield %m : f32
  }
  fx.output %1, %x : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Tests that a rank-0 node is a kernel of one thread.
// CHECK-LABEL: func.func @scalar
// CHECK: gpu.launch async
// CHECK: memref.load %{{.+}}[] : memref<f32>
// CHECK: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
fx.graph @scalar(%x: tensor<f32>) -> tensor<f32> {
  %0 = loop.pointwise : tensor<f32> {
  ^bb0:
    %v = loop.load %x[] : tensor<f32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  fx.output %0 : tensor<f32>
}

// -----

// Tests how a thread of a flat launch reads its elements: a row as one
// vector, a value the same for all of them once and broadcast, a column
// element by element (transpose-tiles.mlir tests the tiles such a read gets
// by default).
// VEC-LABEL: func.func @access_patterns
// VEC-SAME: (%[[X:.+]]: memref<8x16xbf16>, %[[S:.+]]: memref<8x1xbf16>, %[[T:.+]]: memref<16x8xbf16>
// VEC-DAG: %[[AX:.+]] = memref.assume_alignment %[[X]], 16
// VEC-DAG: %[[AS:.+]] = memref.assume_alignment %[[S]], 16
// VEC-DAG: %[[AT:.+]] = memref.assume_alignment %[[T]], 16
// VEC: %[[ROW:.+]] = vector.load %[[AX]][%[[I:.+]], %[[J:.+]]] {alignment = 16 : i64} : memref<8x16xbf16>, vector<8xbf16>
// VEC: %[[ONE:.+]] = memref.load %[[AS]][%[[I]], %{{.+}}] : memref<8x1xbf16>
// VEC-COUNT-8: memref.load %[[AT]]
// VEC: vector.from_elements
// VEC: vector.broadcast %[[ONE]] : bf16 to vector<8xbf16>
// VEC: vector.store %{{.+}}, %{{.+}}[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<8x16xbf16>, vector<8xbf16>
fx.graph @access_patterns(%x: tensor<8x16xbf16>, %s: tensor<8x1xbf16>, %t: tensor<16x8xbf16>) -> tensor<8x16xbf16> {
  %c0 = arith.constant 0 : index
  %0 = loop.pointwise : tensor<8x16xbf16> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%i, %j] : tensor<8x16xbf16>
    %b = loop.load %s[%i, %c0] : tensor<8x1xbf16>
    %c = loop.load %t[%j, %i] : tensor<16x8xbf16>
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %m, %c : bf16
    loop.yield %r : bf16
  }
  fx.output %0 : tensor<8x16xbf16>
}

// -----

// Tests that bools, bytes in tensors but bits in LLVM's vectors, are read and
// written one at a time, and that reading them keeps a node from vectorizing.
// VEC-LABEL: func.func @do_not_vectorize_bools
// VEC-NOT: vector.
// VEC: memref.store %{{.+}}, %{{.+}} : memref<64xi1>
// VEC-LABEL: func.func @do_not_vectorize_bools_result_sizes
// VEC-LABEL: func.func @do_not_vectorize_bool_reads
// VEC-NOT: vector.
// VEC: memref.store %{{.+}}, %{{.+}} : memref<64xf32>
fx.graph @do_not_vectorize_bools(%p: tensor<64xi1>) -> tensor<64xi1> {
  %0 = loop.pointwise : tensor<64xi1> {
  ^bb0(%i: index):
    %v = loop.load %p[%i] : tensor<64xi1>
    loop.yield %v : i1
  }
  fx.output %0 : tensor<64xi1>
}
fx.graph @do_not_vectorize_bool_reads(%p: tensor<64xi1>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %p[%i] : tensor<64xi1>
    %f = arith.uitofp %v : i1 to f32
    loop.yield %f : f32
  }
  fx.output %0 : tensor<64xf32>
}

// -----

// Tests that a read at the column plus a uniform offset (as views and slices
// make) is one vector load at the shifted column, with no claim of alignment,
// and that a read at another function of the column is gathered per element
// (the column is a vector of indices), never read as if it were the same for
// all of a thread's elements.
// VEC-LABEL: func.func @column_arithmetic
// VEC: %[[STEP:.+]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
// VEC: %[[COLUMNS:.+]] = arith.addi %{{.+}}, %[[STEP]] : vector<4xindex>
// VEC: %[[START:.+]] = arith.addi %{{.+}}, %c1 : index
// VEC: vector.load %{{.+}}[%{{.+}}, %[[START]]] : memref<4x9xf32>, vector<4xf32>
// VEC: %[[DOUBLED:.+]] = arith.muli %[[COLUMNS]], %{{.+}} : vector<4xindex>
// VEC-COUNT-4: vector.extract %[[DOUBLED]]
// VEC: vector.from_elements
fx.graph @column_arithmetic(%x: tensor<4x9xf32>, %y: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %0 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %k = arith.addi %j, %c1 : index
    %v = loop.load %x[%i, %k] : tensor<4x9xf32>
    %l = arith.muli %j, %c2 : index
    %w = loop.load %y[%i, %l] : tensor<4x16xf32>
    %s = arith.addf %v, %w : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<4x8xf32>
}


// -----

// Float remainders in kernels call libdevice's fmod, one lane at a time
// where the body is vectorized; halves widen to f32 for the call.
// CHECK-LABEL: func.func @remainders
// CHECK: gpu.launch
// CHECK: %[[R:.+]] = func.call @__nv_fmodf(%{{.+}}, %{{.+}}) : (f32, f32) -> f32
// CHECK: arith.truncf %[[R]] : f32 to f16
// CHECK: func.call @__nv_fmod(%{{.+}}, %{{.+}}) : (f64, f64) -> f64
// CHECK-NOT: arith.remf
// CHECK-DAG: func.func private @__nv_fmodf(f32, f32) -> f32
// CHECK-DAG: func.func private @__nv_fmod(f64, f64) -> f64
// VEC-LABEL: func.func @remainders
// VEC-COUNT-4: func.call @__nv_fmodf
// VEC: vector.from_elements
fx.graph @remainders(%x: tensor<64xf16>, %y: tensor<64xf64>) -> (tensor<64xf16>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf16> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf16>
    %r = arith.remf %v, %v : f16
    loop.yield %r : f16
  }
  %1 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<64xf64>
    %r = arith.remf %v, %v : f64
    loop.yield %r : f64
  }
  fx.output %0, %1 : tensor<64xf16>, tensor<64xf64>
}

// -----

// A scatter is a kernel with a thread per update, after the copy of the
// input it starts from, each an atomic addition.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: (%[[X:.+]]: memref<10x4xbf16>, %{{.+}}: memref<6xi64>, %{{.+}}: memref<6x4xbf16>, %[[OUT:.+]]: memref<10x4xbf16>
// CHECK: %[[COPIED:.+]] = gpu.memcpy async [%{{.+}}] %[[OUT]], %[[X]]
// CHECK: gpu.launch async [%[[COPIED]]]
// CHECK: scf.if
// CHECK: memref.atomic_rmw addf %{{.+}}, %[[OUT]][%{{.+}}, %{{.+}}] : (bf16, memref<10x4xbf16>) -> bf16
// CHECK: gpu.terminator
fx.graph @scatter(%x: tensor<10x4xbf16>, %i: tensor<6xsi64>, %v: tensor<6x4xbf16>) -> tensor<10x4xbf16> {
  %0 = loop.scatter "sum" %x over [6, 4] : tensor<10x4xbf16> -> tensor<10x4xbf16> {
  ^bb0(%k: index, %d: index):
    %id = loop.load %i[%k] : tensor<6xsi64>
    %row = arith.index_cast %id : i64 to index
    %w = loop.load %v[%k, %d] : tensor<6x4xbf16>
    loop.scatter_yield %w at [%row, %d] : bf16
  }
  fx.output %0 : tensor<10x4xbf16>
}

// -----

// Static temporaries are views of one workspace, allocated on the stream
// before the first kernel and freed after the last; %a and %b, both alive
// while %b is computed, take separate halves.
// CHECK-LABEL: func.func @workspace
// CHECK: %[[T0:.+]] = builtin.unrealized_conversion_cast
// CHECK: %[[WS:.+]], %[[T1:.+]] = gpu.alloc async [%[[T0]]] () : memref<8192xi8>
// CHECK: %[[OA:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[WS]][%[[OA]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK: gpu.launch async [%[[T1]]]
// CHECK: %[[OB:.+]] = arith.constant 4096 : index
// CHECK-NEXT: memref.view %[[WS]][%[[OB]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[TL:.+]] = gpu.launch async
// CHECK: %[[TL2:.+]] = gpu.launch async [%[[TL]]]
// CHECK-NOT: gpu.dealloc
// CHECK: gpu.dealloc async [%[[TL2]]] %[[WS]]
// CHECK-NOT: gpu.dealloc
// CHECK: return
fx.graph @workspace(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = loop.pointwise : tensor<1024xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<1024xf32>
    %r = arith.addf %v, %v : f32
    loop.yield %r : f32
  }
  %b = loop.pointwise : tensor<1024xf32> {
  ^bb0(%i: index):
    %v = loop.load %a[%i] : tensor<1024xf32>
    %r = arith.mulf %v, %v : f32
    loop.yield %r : f32
  }
  %c = loop.pointwise : tensor<1024xf32> {
  ^bb0(%i: index):
    %v = loop.load %b[%i] : tensor<1024xf32>
    %r = arith.subf %v, %v : f32
    loop.yield %r : f32
  }
  fx.output %c : tensor<1024xf32>
}

// -----

// A "welford" row reduction: each thread updates a (count, mean, M2) state
// one column at a time; the states merge across the warp (each component
// shuffled) and across the block through workgroup memory of states.
// CHECK-LABEL: func.func @welford
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[SCRATCH:.+]] : memref<4xvector<3xf32>, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.+}} -> (vector<3xf32>)
// CHECK: arith.divf
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32
// CHECK: vector.from_elements {{.+}} : vector<3xf32>
// CHECK: memref.store %{{.+}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
// CHECK: vector.extract %{{.+}}[2] : f32 from vector<3xf32>
// CHECK: arith.truncf
fx.graph @welford(%x: tensor<4x16384xbf16>) -> tensor<4xbf16> {
  %0 = loop.reduce "welford" over [16384] : tensor<4xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x16384xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<4xbf16>
}
