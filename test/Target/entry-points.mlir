// RUN: kiln-opt %s --kiln-loop-to-scf --kiln-emit-entry-points | FileCheck %s

// Tests the C entry points: pointers and sizes become memref descriptors, the
// result sizes come from the sizes function, and only the entry points stay
// public.
// CHECK-LABEL: func.func private @forward
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-LABEL: func.func private @forward_result_sizes
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>

// CHECK-LABEL: func.func @kiln_forward_run
// CHECK-SAME: (%[[INS:.+]]: !llvm.ptr, %[[OUTS:.+]]: !llvm.ptr, %[[SIZES:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr) -> i32
// CHECK: %[[NP:.+]] = llvm.getelementptr %[[SIZES]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[N:.+]] = llvm.load %[[NP]] : !llvm.ptr -> i64
// CHECK: %[[P0:.+]] = llvm.getelementptr %[[INS]][0]
// CHECK: %[[D0:.+]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[D0]], %{{.+}}[0] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.insertvalue %[[N]], %{{.+}}[3, 0]
// CHECK: %[[X:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x8xf32>
// CHECK: %[[B:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<8xf32>
// CHECK: %[[RS:.+]] = call @forward_result_sizes(%[[X]], %[[B]])
// CHECK: %[[RS64:.+]] = arith.index_cast %[[RS]] : index to i64
// CHECK: llvm.getelementptr %[[OUTS]][0]
// CHECK: llvm.insertvalue %[[RS64]], %{{.+}}[3, 0]
// CHECK: %[[OUT:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<?x8xf32>
// CHECK: call @forward(%[[X]], %[[B]], %[[OUT]])
// CHECK: return %{{.+}} : i32

// CHECK-LABEL: func.func @kiln_forward_result_sizes
// CHECK-SAME: (%[[IN_SIZES:.+]]: !llvm.ptr, %[[OUT_SIZES:.+]]: !llvm.ptr) -> i32
// CHECK: llvm.mlir.zero : !llvm.ptr
// CHECK: %[[S:.+]] = call @forward_result_sizes
// CHECK: %[[S64:.+]] = arith.index_cast %[[S]] : index to i64
// CHECK: %[[SLOT:.+]] = llvm.getelementptr %[[OUT_SIZES]][0]
// CHECK: llvm.store %[[S64]], %[[SLOT]] : i64, !llvm.ptr

// CHECK: llvm.mlir.global external constant @kiln_forward_signature("(tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>\00")
// CHECK: llvm.mlir.global external constant @kiln_abi_version(1 : i32)
fx.graph @forward(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %0 = loop.pointwise(%n) : tensor<?x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<?x8xf32>
    %w = loop.load %b[%j] : tensor<8xf32>
    %s = arith.addf %v, %w : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<?x8xf32>
}
