// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-llvm-cpu | FileCheck %s --check-prefix=LLVM

// Tests that complex buffers are read and written one element at a time (the
// node does not vectorize), and that complex numbers become structs of their
// parts in LLVM.
// CHECK-LABEL: func.func @conjugate
// CHECK-SAME: (%[[Z:.+]]: memref<4x8xcomplex<f32>>, %[[OUT:.+]]: memref<4x8xcomplex<f32>>)
// CHECK-NOT: vector.
// CHECK: %[[E:.+]] = memref.load %[[Z]][%{{.+}}, %{{.+}}] : memref<4x8xcomplex<f32>>
// CHECK: complex.re %[[E]]
// CHECK: complex.im %[[E]]
// CHECK: %[[C:.+]] = complex.create
// CHECK: memref.store %[[C]], %[[OUT]][%{{.+}}, %{{.+}}] : memref<4x8xcomplex<f32>>
// LLVM-LABEL: llvm.func internal @conjugate(
// LLVM: llvm.load %{{.+}} : !llvm.ptr -> !llvm.struct<(f32, f32)>
// LLVM: llvm.extractvalue %{{.+}}[1] : !llvm.struct<(f32, f32)>
// LLVM: llvm.fneg
// LLVM: llvm.insertvalue
// LLVM: llvm.store %{{.+}}, %{{.+}} : !llvm.struct<(f32, f32)>, !llvm.ptr
fx.graph @conjugate(%z: tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  %0 = loop.pointwise : tensor<4x8xcomplex<f32>> {
  ^bb0(%i: index, %j: index):
    %e = loop.load %z[%i, %j] : tensor<4x8xcomplex<f32>>
    %re = complex.re %e : complex<f32>
    %im = complex.im %e : complex<f32>
    %neg = arith.negf %im : f32
    %c = complex.create %re, %neg : complex<f32>
    loop.yield %c : complex<f32>
  }
  fx.output %0 : tensor<4x8xcomplex<f32>>
}

// -----

// Tests that a complex graph input passed through is copied.
// CHECK-LABEL: func.func @pass_through
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<4xcomplex<f32>> to memref<4xcomplex<f32>>
fx.graph @pass_through(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  fx.output %x : tensor<4xcomplex<f32>>
}
