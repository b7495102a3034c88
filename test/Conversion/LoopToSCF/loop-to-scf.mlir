// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='vector-bytes=0' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='parallel=false vector-bytes=0' | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf | FileCheck %s --check-prefix=VEC
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='vector-bytes=64' | FileCheck %s --check-prefix=VEC64

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
// VEC-LABEL: func.func @graph
// VEC: %[[N:.+]] = memref.dim
// VEC: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%[[N]]) step (%{{.+}}) {
// VEC: scf.for %[[J:.+]] = %{{.+}} to %[[MAIN:.+]] step %c8{{(_[0-9]+)?}} {
// VEC: %[[V:.+]] = vector.load %{{.+}}[%[[I]], %[[J]]] : memref<?x4xf32>, vector<8xf32>
// VEC: scf.for %{{.+}} = %[[MAIN]] to %{{.+}} step %{{.+}} {
// VEC: memref.load
// VEC64-LABEL: func.func @graph
// VEC64: step %c16
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

// Tests that a size read off a collapse of a node (a view merging a node's
// dynamic dimension with a static one, as attention's heads are merged) is
// the product of the node's sizes in the result-sizes function.
// CHECK-LABEL: func.func @collapsed_node_result_sizes
// CHECK-SAME: (%[[X:.+]]: memref<?x5xf32>) -> index
// CHECK: %[[N:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x5xf32>
// CHECK: %[[PART:.+]] = arith.muli %{{.+}}, %[[N]]
// CHECK: %[[C5:.+]] = arith.constant 5 : index
// CHECK: %[[ROWS:.+]] = arith.muli %[[PART]], %[[C5]]
// CHECK: return %[[ROWS]]
fx.graph @collapsed_node(%x: tensor<?x5xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  %0 = loop.pointwise(%n) : tensor<?x5xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<?x5xf32>
    loop.yield %v : f32
  }
  %1 = tensor.collapse_shape %0 [[0, 1]] : tensor<?x5xf32> into tensor<?xf32>
  %rows = tensor.dim %1, %c0 : tensor<?xf32>
  %2 = loop.pointwise(%rows) : tensor<?xf32> {
  ^bb0(%i: index):
    %v = loop.load %1[%i] : tensor<?xf32>
    %s = arith.addf %v, %v : f32
    loop.yield %s : f32
  }
  fx.output %2 : tensor<?xf32>
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

// -----

// Tests the vector loops of one dimension: whole vectors in parallel, then the
// tail one element at a time; a read the same for every element is one load
// and a broadcast; vectors at offsets that are multiples of their size say
// that they are aligned.
// VEC-LABEL: func.func @one_dimension
// VEC-SAME: (%[[X:.+]]: memref<100xf32>, %[[S:.+]]: memref<f32>, %[[OUT:.+]]: memref<100xf32>)
// VEC: %[[MAIN:.+]] = arith.subi %c100, %{{.+}} : index
// VEC: scf.parallel (%[[J:.+]]) = (%{{.+}}) to (%[[MAIN]]) step (%c8) {
// VEC-DAG: %[[V:.+]] = vector.load %[[X]][%[[J]]] : memref<100xf32>, vector<8xf32>
// VEC-DAG: %[[ONE:.+]] = memref.load %[[S]][] : memref<f32>
// VEC: vector.broadcast %[[ONE]] : f32 to vector<8xf32>
// VEC: vector.store %{{.+}}, %[[OUT]][%[[J]]] : memref<100xf32>, vector<8xf32>
// VEC: scf.for %[[T:.+]] = %[[MAIN]] to %c100 step %{{.+}} {
// VEC: memref.store %{{.+}}, %[[OUT]][%[[T]]] : memref<100xf32>
fx.graph @one_dimension(%x: tensor<100xf32>, %s: tensor<f32>) -> tensor<100xf32> {
  %0 = loop.pointwise : tensor<100xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<100xf32>
    %w = loop.load %s[] : tensor<f32>
    %m = arith.mulf %v, %w : f32
    loop.yield %m : f32
  }
  fx.output %0 : tensor<100xf32>
}

// -----

// Tests that whole rows of a multiple of the vector width are aligned.
// VEC-LABEL: func.func @aligned_rows
// VEC: vector.load %{{.+}} {alignment = 16 : i64} : memref<4x16xf32>, vector<8xf32>
// VEC: vector.store %{{.+}} {alignment = 16 : i64} : memref<4x16xf32>, vector<8xf32>
fx.graph @aligned_rows(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loop.pointwise : tensor<4x16xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<4x16xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  fx.output %0 : tensor<4x16xf32>
}

// -----

// Tests a reduction: result elements in parallel, a serial loop per element
// accumulating from the combiner's identity, rounded once at the end.
// CHECK-LABEL: func.func @reduce
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK: %[[INIT:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ACC:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[INIT]]) -> (f32) {
// CHECK: %[[V:.+]] = memref.load %{{.+}}[%[[I]], %[[K]]]
// CHECK: %[[W:.+]] = arith.extf %[[V]] : bf16 to f32
// CHECK: %[[PAST:.+]] = arith.cmpf ogt, %[[W]], %[[A]] : f32
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[W]], %[[W]] : f32
// CHECK: %[[KEPT:.+]] = arith.select %[[PAST]], %[[W]], %[[A]] : f32
// CHECK: %[[M:.+]] = arith.select %[[NAN]], %[[W]], %[[KEPT]] : f32
// CHECK: scf.yield %[[M]] : f32
// CHECK: %[[R:.+]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK: memref.store %[[R]], %{{.+}}[%[[I]]] : memref<4xbf16>
fx.graph @reduce(%x: tensor<4x8xbf16>) -> tensor<4xbf16> {
  %0 = loop.reduce "max" over [8] : tensor<4xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x8xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<4xbf16>
}

// -----

// Static temporaries are views of one workspace at planned offsets: %c
// reuses %a's bytes, since %a's last reader comes before %c is written; %b
// lives across both. The workspace goes at the end, nothing else is freed.
// CHECK-LABEL: func.func @chain
// CHECK: %[[WS:.+]] = memref.alloc() : memref<512xi8>
// CHECK: %[[OA:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.+]] = memref.view %[[WS]][%[[OA]]][] : memref<512xi8> to memref<64xf32>
// CHECK: %[[OB:.+]] = arith.constant 256 : index
// CHECK-NEXT: %[[B:.+]] = memref.view %[[WS]][%[[OB]]][] : memref<512xi8> to memref<64xf32>
// CHECK: memref.load %[[A]]
// CHECK: memref.store %{{.+}}, %[[B]]
// CHECK: %[[OC:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.+]] = memref.view %[[WS]][%[[OC]]][] : memref<512xi8> to memref<64xf32>
// CHECK: memref.store %{{.+}}, %[[C]]
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[WS]]
// CHECK-NEXT: return
fx.graph @chain(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %r = arith.addf %v, %v : f32
    loop.yield %r : f32
  }
  %b = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %a[%i] : tensor<64xf32>
    %r = arith.mulf %v, %v : f32
    loop.yield %r : f32
  }
  %c = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %b[%i] : tensor<64xf32>
    %r = arith.subf %v, %v : f32
    loop.yield %r : f32
  }
  %d = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %c[%i] : tensor<64xf32>
    %w = loop.load %b[%i] : tensor<64xf32>
    %r = arith.addf %v, %w : f32
    loop.yield %r : f32
  }
  fx.output %d : tensor<64xf32>
}

// -----

// A scatter copies a graph input it starts from into its buffer, then adds
// its updates atomically, in parallel.
// CHECK-LABEL: func.func @scatter_into_input
// CHECK-SAME: (%[[X:.+]]: memref<10x4xf32>, %[[I:.+]]: memref<6xi64>, %[[V:.+]]: memref<6x4xf32>, %[[OUT:.+]]: memref<10x4xf32>)
// CHECK: memref.copy %[[X]], %[[OUT]]
// CHECK: scf.parallel (%[[K:.+]], %[[D:.+]]) =
// CHECK: %[[ROW:.+]] = arith.index_cast
// CHECK: %[[VAL:.+]] = memref.load %[[V]][%[[K]], %[[D]]]
// CHECK: memref.atomic_rmw addf %[[VAL]], %[[OUT]][%[[ROW]], %[[D]]]
// SERIAL-LABEL: func.func @scatter_into_input
// SERIAL: scf.for
// SERIAL: memref.atomic_rmw addf
fx.graph @scatter_into_input(%x: tensor<10x4xf32>, %i: tensor<6xsi64>, %v: tensor<6x4xf32>) -> tensor<10x4xf32> {
  %0 = loop.scatter "sum" %x over [6, 4] : tensor<10x4xf32> -> tensor<10x4xf32> {
  ^bb0(%k: index, %d: index):
    %id = loop.load %i[%k] : tensor<6xsi64>
    %row = arith.index_cast %id : i64 to index
    %w = loop.load %v[%k, %d] : tensor<6x4xf32>
    loop.scatter_yield %w at [%row, %d] : f32
  }
  fx.output %0 : tensor<10x4xf32>
}

// -----

// A computed `init` that nothing else reads is the scatter's buffer: zeros
// are written into the caller's buffer and the updates add there, with no
// copy.
// CHECK-LABEL: func.func @scatter_in_place
// CHECK-SAME: %[[OUT:[^:]+]]: memref<10x4xi32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: memref.atomic_rmw addi %{{.+}}, %[[OUT]]
fx.graph @scatter_in_place(%i: tensor<6xsi64>, %v: tensor<6x4xsi32>) -> tensor<10x4xsi32> {
  %zeros = loop.pointwise : tensor<10x4xsi32> {
  ^bb0(%r: index, %c: index):
    %z = arith.constant 0 : i32
    loop.yield %z : i32
  }
  %0 = loop.scatter "sum" %zeros over [6, 4] : tensor<10x4xsi32> -> tensor<10x4xsi32> {
  ^bb0(%k: index, %d: index):
    %id = loop.load %i[%k] : tensor<6xsi64>
    %row = arith.index_cast %id : i64 to index
    %w = loop.load %v[%k, %d] : tensor<6x4xsi32>
    loop.scatter_yield %w at [%row, %d] : i32
  }
  fx.output %0 : tensor<10x4xsi32>
}

// -----

// "max" and "min" scatters combine with atomic maxima and minima, signed or
// unsigned as the dtype says.
// CHECK-LABEL: func.func @scatter_extrema
// CHECK: memref.atomic_rmw maximumf
// CHECK: memref.atomic_rmw minu
fx.graph @scatter_extrema(%x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui8>) {
  %0 = loop.scatter "max" %x over [4] : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    loop.scatter_yield %v at [%i] : f32
  }
  %1 = loop.scatter "min" %u over [4] : tensor<4xui8> -> tensor<4xui8> {
  ^bb0(%i: index):
    %v = loop.load %u[%i] : tensor<4xui8>
    loop.scatter_yield %v at [%i] : i8
  }
  fx.output %0, %1 : tensor<4xf32>, tensor<4xui8>
}

// -----

// A "prod" scatter multiplies in a compare-and-swap loop (no target has an
// atomic product) on the element's bits at its address: floats' through
// bitcasts, as LLVM compares and swaps integers only.
// CHECK-LABEL: func.func @scatter_product
// CHECK: %[[BASE:.+]], %[[OFFSET:.+]], %{{.+}} = memref.extract_strided_metadata %[[INTS:.+]] : memref<4xi8>
// CHECK: %[[POINTER:.+]] = memref.extract_aligned_pointer_as_index %[[INTS]]
// CHECK: %[[ADDRESS:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[FIRST:.+]] = llvm.load %[[ADDRESS]] atomic monotonic {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK: scf.while (%[[EXPECTED:.+]] = %[[FIRST]]) : (i8) -> i8 {
// CHECK-NEXT: %[[PRODUCT:.+]] = arith.muli %[[EXPECTED]], %{{.+}} : i8
// CHECK-NEXT: %[[PAIR:.+]] = llvm.cmpxchg %[[ADDRESS]], %[[EXPECTED]], %[[PRODUCT]] acq_rel monotonic : !llvm.ptr, i8
// CHECK-NEXT: %[[OBSERVED:.+]] = llvm.extractvalue %[[PAIR]][0]
// CHECK-NEXT: %[[SWAPPED:.+]] = llvm.extractvalue %[[PAIR]][1]
// CHECK: %[[RETRY:.+]] = arith.xori %[[SWAPPED]], %{{.+}} : i1
// CHECK-NEXT: scf.condition(%[[RETRY]]) %[[OBSERVED]] : i8
// CHECK: llvm.cmpxchg %{{.+}} : !llvm.ptr, i64
// CHECK: %[[FLOAT_BITS:.+]] = llvm.load %{{.+}} atomic monotonic {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK: scf.while (%[[OLD_BITS:.+]] = %[[FLOAT_BITS]]) : (i32) -> i32 {
// CHECK-NEXT: %[[OLD:.+]] = arith.bitcast %[[OLD_BITS]] : i32 to f32
// CHECK-NEXT: %[[NEW:.+]] = arith.mulf %[[OLD]], %{{.+}} : f32
// CHECK-NEXT: %[[NEW_BITS:.+]] = arith.bitcast %[[NEW]] : f32 to i32
// CHECK-NEXT: llvm.cmpxchg %{{.+}}, %[[OLD_BITS]], %[[NEW_BITS]] acq_rel monotonic : !llvm.ptr, i32
fx.graph @scatter_product(%x: tensor<4xui8>, %n: tensor<4xsi64>, %f: tensor<4xf32>) -> (tensor<4xui8>, tensor<4xsi64>, tensor<4xf32>) {
  %0 = loop.scatter "prod" %x over [4] : tensor<4xui8> -> tensor<4xui8> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xui8>
    loop.scatter_yield %v at [%i] : i8
  }
  %1 = loop.scatter "prod" %n over [4] : tensor<4xsi64> -> tensor<4xsi64> {
  ^bb0(%i: index):
    %v = loop.load %n[%i] : tensor<4xsi64>
    loop.scatter_yield %v at [%i] : i64
  }
  %2 = loop.scatter "prod" %f over [4] : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %f[%i] : tensor<4xf32>
    loop.scatter_yield %v at [%i] : f32
  }
  fx.output %0, %1, %2 : tensor<4xui8>, tensor<4xsi64>, tensor<4xf32>
}

// -----

// A "welford" reduction carries (count, mean, M2) through a scalar loop
// (never vectors: each update divides by the count) and keeps M2.
// CHECK-LABEL: func.func @welford
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<3xf32>
// CHECK: %[[STATE:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (vector<3xf32>)
// CHECK: %[[N:.+]] = vector.extract %[[ACC]][0]
// CHECK: %[[MEAN:.+]] = vector.extract %[[ACC]][1]
// CHECK: %[[M2:.+]] = vector.extract %[[ACC]][2]
// CHECK: %[[N1:.+]] = arith.addf %[[N]]
// CHECK: %[[DELTA:.+]] = arith.subf %[[X:.+]], %[[MEAN]]
// CHECK: %[[STEP:.+]] = arith.divf %[[DELTA]], %[[N1]]
// CHECK: %[[MEAN1:.+]] = arith.addf %[[MEAN]], %[[STEP]]
// CHECK: %[[DELTA1:.+]] = arith.subf %[[X]], %[[MEAN1]]
// CHECK: %[[PRODUCT:.+]] = arith.mulf %[[DELTA]], %[[DELTA1]]
// CHECK: %[[M21:.+]] = arith.addf %[[M2]], %[[PRODUCT]]
// CHECK: vector.from_elements %[[N1]], %[[MEAN1]], %[[M21]] : vector<3xf32>
// CHECK: %[[RESULT:.+]] = vector.extract %[[STATE]][2]
// CHECK: arith.truncf %[[RESULT]] : f32 to bf16
// VEC-LABEL: func.func @welford
// VEC-NOT: vector<8xf32>
// VEC: iter_args(%{{.+}} = %{{.+}}) -> (vector<3xf32>)
fx.graph @welford(%x: tensor<4x1024xbf16>) -> tensor<4xbf16> {
  %0 = loop.reduce "welford" over [1024] : tensor<4xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x1024xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<4xbf16>
}

// -----

// Few long reductions split their outermost reduction dimension: every
// (element, chunk) pair accumulates in parallel into a buffer of partial
// states (4096-column chunks of a sole reduction dimension), then each
// element merges its chunks. Float sums add blocks of 2048 columns, each
// from zero.
// CHECK-LABEL: func.func @long_sum
// CHECK: %[[PARTIALS:.+]] = memref.alloc() : memref<2x25xf32>
// CHECK: scf.parallel (%[[ROW:.+]], %[[CHUNK:.+]]) = (%{{.+}}, %{{.+}}) to (%c2{{(_[0-9]+)?}}, %c25)
// CHECK: %[[LO:.+]] = arith.muli %[[CHUNK]], %c4096
// CHECK: %[[HI:.+]] = arith.minui %{{.+}}, %c100000
// CHECK: scf.for %{{.+}} = %[[LO]] to %[[HI]] step %c2048 iter_args
// CHECK: memref.store %{{.+}}, %[[PARTIALS]][%[[ROW]], %[[CHUNK]]]
// CHECK: scf.for %[[R:.+]] = {{.+}} {
// CHECK: scf.for %[[C:.+]] = {{.+}} iter_args(%[[ACC:.+]] = {{.+}}) -> (f32)
// CHECK: memref.load %[[PARTIALS]][%[[R]], %[[C]]]
// CHECK: memref.dealloc %[[PARTIALS]]
// SERIAL-LABEL: func.func @long_sum
// SERIAL-NOT: memref.alloc
fx.graph @long_sum(%x: tensor<2x100000xf32>) -> tensor<2xf32> {
  %0 = loop.reduce "sum" over [100000] : tensor<2xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<2x100000xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<2xf32>
}

// -----

// A kernel of one row (a whole tensor's mean and what reads it) splits its
// reductions too; a "welford" state merges by Chan's formula.
// CHECK-LABEL: func.func @whole_tensor_moments
// CHECK: memref.alloc() : memref<1x64xf32>
// CHECK: scf.parallel
// CHECK: memref.alloc() : memref<1x64xvector<3xf32>>
// CHECK: scf.parallel
// CHECK: arith.divf
// CHECK: memref.store
fx.graph @whole_tensor_moments(%x: tensor<256x1024xf32>) -> tensor<f32> {
  %0 = loop.kernel rows(0) -> tensor<f32> {
    %s = loop.reduce "sum" over [256, 1024] : tensor<f32> {
    ^bb0(%r0: index, %r1: index):
      %v = loop.load %x[%r0, %r1] : tensor<256x1024xf32>
      loop.yield %v : f32
    }
    %m2 = loop.reduce "welford" over [256, 1024] : tensor<f32> {
    ^bb0(%r0: index, %r1: index):
      %v = loop.load %x[%r0, %r1] : tensor<256x1024xf32>
      loop.yield %v : f32
    }
    %r = loop.pointwise : tensor<f32> {
      %a = loop.load %s[] : tensor<f32>
      %b = loop.load %m2[] : tensor<f32>
      %q = arith.divf %b, %a : f32
      loop.yield %q : f32
    }
    loop.kernel_yield %r : tensor<f32>
  }
  fx.output %0 : tensor<f32>
}

// -----

// Frozen constants are read-only globals of the artifact, their integers
// signless as buffers are.
// CHECK-DAG: memref.global "private" constant @[[W:kiln_constant[_0-9]*]] : memref<2xf32> = dense_resource<scale> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" constant @[[K:kiln_constant[_0-9]*]] : memref<2xi64> = dense<[5, 7]> {alignment = 64 : i64}
// CHECK-LABEL: func.func @frozen_constants
// CHECK-DAG: memref.get_global @[[W]] : memref<2xf32>
// CHECK-DAG: memref.get_global @[[K]] : memref<2xi64>
fx.graph @frozen_constants(%x: tensor<3x2xf32>, %i: tensor<2xsi64>) -> (tensor<3x2xf32>, tensor<2xsi64>) {
  %w = arith.constant dense_resource<scale> : tensor<2xf32>
  %k = arith.constant dense<[5, 7]> : tensor<2xsi64>
  %0 = loop.pointwise : tensor<3x2xf32> {
  ^bb0(%i0: index, %i1: index):
    %a = loop.load %x[%i0, %i1] : tensor<3x2xf32>
    %b = loop.load %w[%i1] : tensor<2xf32>
    %c = arith.mulf %a, %b : f32
    loop.yield %c : f32
  }
  %1 = loop.pointwise : tensor<2xsi64> {
  ^bb0(%i0: index):
    %a = loop.load %i[%i0] : tensor<2xsi64>
    %b = loop.load %k[%i0] : tensor<2xsi64>
    %c = arith.addi %a, %b : i64
    loop.yield %c : i64
  }
  fx.output %0, %1 : tensor<3x2xf32>, tensor<2xsi64>
}
{-#
  dialect_resources: {
    builtin: {
      scale: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// A 0-d frozen constant's global holds its value, not the blob: the LLVM
// lowering reads a 0-d global as a splat.
// CHECK: memref.global "private" constant @kiln_constant : memref<f32> = dense<1.500000e+00> {alignment = 64 : i64}
// CHECK-LABEL: func.func @zero_dim_constant
// CHECK: memref.get_global @kiln_constant : memref<f32>
fx.graph @zero_dim_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = arith.constant dense_resource<half_three> : tensor<f32>
  %0 = loop.pointwise : tensor<3xf32> {
  ^bb0(%i0: index):
    %a = loop.load %x[%i0] : tensor<3xf32>
    %b = loop.load %s[] : tensor<f32>
    %c = arith.mulf %a, %b : f32
    loop.yield %c : f32
  }
  fx.output %0 : tensor<3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      half_three: "0x040000000000C03F"
    }
  }
#-}

// -----

// A batch of 0: temporaries of zero bytes are views of a workspace of one
// aligned block (a workspace is allocated even though nothing is stored).
// CHECK-LABEL: func.func @zero_size_temporaries
// CHECK: %[[WS:.+]] = memref.alloc() : memref<256xi8>
// CHECK: memref.view %[[WS]][%{{.+}}][] : memref<256xi8> to memref<0x8xf32>
// CHECK: memref.dealloc %[[WS]]
// SERIAL-LABEL: func.func @zero_size_temporaries
fx.graph @zero_size_temporaries(%x: tensor<0x8xf32>) -> tensor<8xf32> {
  %a = loop.pointwise : tensor<0x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<0x8xf32>
    %r = arith.addf %v, %v : f32
    loop.yield %r : f32
  }
  %s = loop.reduce "sum" over [0] : tensor<8xf32> {
  ^bb0(%j: index, %i: index):
    %v = loop.load %a[%i, %j] : tensor<0x8xf32>
    loop.yield %v : f32
  }
  fx.output %s : tensor<8xf32>
}
