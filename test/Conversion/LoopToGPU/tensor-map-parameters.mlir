// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(kiln-tensor-map-parameters))' -verify-diagnostics | FileCheck %s

// A kernel's copy of a tensor map becomes the parameter itself: a byval,
// 64-byte aligned, grid-constant pointer that the copies read; the alloca
// and its store go, other arguments stay as they are.
// CHECK-LABEL: llvm.func @kiln_matmul
// CHECK-SAME: (%[[N:.+]]: i64, %[[MAP:.+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant})
// CHECK-NOT: llvm.alloca
// CHECK-NOT: llvm.store
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[MAP]], %{{.+}}, box[%{{.+}}, %{{.+}}]
gpu.module @kernels {
  llvm.func @kiln_matmul(%n: i64, %map: !llvm.array<16 x i64>) attributes {gpu.kernel, nvvm.kernel} {
    %one = llvm.mlir.constant(1 : i64) : i64
    %copy = llvm.alloca %one x !llvm.array<16 x i64> {alignment = 64 : i64, kiln.tensor_map} : (i64) -> !llvm.ptr
    llvm.store %map, %copy {alignment = 64 : i64} : !llvm.array<16 x i64>, !llvm.ptr
    %zero = llvm.mlir.constant(0 : i32) : i32
    %tile = llvm.mlir.zero : !llvm.ptr<7>
    %barrier = llvm.mlir.zero : !llvm.ptr<3>
    nvvm.cp.async.bulk.tensor.shared.cluster.global %tile, %copy, %barrier, box[%zero, %zero] : !llvm.ptr<7>, !llvm.ptr
    llvm.return
  }
}

// -----

// Allocas that are not marked stay.
// CHECK-LABEL: llvm.func @unmarked
// CHECK-SAME: (%{{.+}}: !llvm.array<16 x i64>)
// CHECK: llvm.alloca
// CHECK: llvm.store
gpu.module @kernels {
  llvm.func @unmarked(%map: !llvm.array<16 x i64>) attributes {gpu.kernel, nvvm.kernel} {
    %one = llvm.mlir.constant(1 : i64) : i64
    %copy = llvm.alloca %one x !llvm.array<16 x i64> {alignment = 64 : i64} : (i64) -> !llvm.ptr
    llvm.store %map, %copy : !llvm.array<16 x i64>, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @kernels {
  llvm.func @not_an_argument() attributes {gpu.kernel, nvvm.kernel} {
    %one = llvm.mlir.constant(1 : i64) : i64
    %map = llvm.mlir.zero : !llvm.array<16 x i64>
    // expected-error @below {{holds a tensor map that is not a copy of a kernel argument}}
    %copy = llvm.alloca %one x !llvm.array<16 x i64> {alignment = 64 : i64, kiln.tensor_map} : (i64) -> !llvm.ptr
    llvm.store %map, %copy : !llvm.array<16 x i64>, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @kernels {
  llvm.func @stored_twice(%map: !llvm.array<16 x i64>) attributes {gpu.kernel, nvvm.kernel} {
    %one = llvm.mlir.constant(1 : i64) : i64
    // expected-error @below {{holds a tensor map that is not a copy of a kernel argument}}
    %copy = llvm.alloca %one x !llvm.array<16 x i64> {alignment = 64 : i64, kiln.tensor_map} : (i64) -> !llvm.ptr
    llvm.store %map, %copy : !llvm.array<16 x i64>, !llvm.ptr
    llvm.store %map, %copy : !llvm.array<16 x i64>, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @kernels {
  llvm.func @helper(%map: !llvm.array<16 x i64>) {
    %one = llvm.mlir.constant(1 : i64) : i64
    // expected-error @below {{holds a tensor map outside a kernel}}
    %copy = llvm.alloca %one x !llvm.array<16 x i64> {alignment = 64 : i64, kiln.tensor_map} : (i64) -> !llvm.ptr
    llvm.store %map, %copy : !llvm.array<16 x i64>, !llvm.ptr
    llvm.return
  }
}
