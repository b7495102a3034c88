// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-pipeline='openmp=false' | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-llvm-cpu | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-pipeline | FileCheck %s --check-prefix=ONLY-LLVM

// Tests that the CPU pipeline leaves only the LLVM and OpenMP dialects: one
// parallel loop nest for the fused graph, in a function of its own that the
// graph calls, and the entry points.
// ONLY-LLVM-NOT: fx.{{[a-z_]+}}
// ONLY-LLVM-NOT: loop.{{[a-z_]+}}
// ONLY-LLVM-NOT: memref.
// ONLY-LLVM-NOT: scf.
// CHECK-LABEL: llvm.func internal @forward(
// CHECK-NOT: omp.parallel
// CHECK: llvm.call @forward_kernel(
// CHECK-LABEL: llvm.func internal @forward_kernel(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: llvm.intr.maximum
// CHECK-NOT: omp.parallel
// CHECK-LABEL: llvm.func @kiln_forward_run
// CHECK-LABEL: llvm.func @kiln_forward_result_sizes
// CHECK: llvm.mlir.global external constant @kiln_forward_signature
// CHECK: llvm.mlir.global external constant @kiln_abi_version
// SERIAL-LABEL: llvm.func internal @forward
// SERIAL-NOT: omp.
// SERIAL: llvm.cond_br
fx.graph @forward(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = fx.add %x, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = fx.relu %0 : tensor<?x64xf32>
  fx.output %1 : tensor<?x64xf32>
}
