// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-scf-cpu | FileCheck %s --check-prefix=SCF
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-scf-cpu | FileCheck %s --check-prefix=SCF-ONLY
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-scf-cpu='openmp=false vector-bytes=0' | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-scf-cpu --kiln-scf-to-llvm-cpu | FileCheck %s --check-prefix=LLVM
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-scf-cpu --kiln-scf-to-llvm-cpu | FileCheck %s --check-prefix=LLVM-ONLY
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-scf-cpu --kiln-scf-to-llvm-cpu='openmp=false' | FileCheck %s --check-prefix=NO-OMP

// Tests the CPU back end's two stages, which together are
// kiln-loop-to-llvm-cpu, and what each hands to the next.

// The first stage leaves a private function over memrefs (inputs, then the
// caller's result buffers) of SCF loop nests, and the entry points: public
// functions over !llvm.ptr that call it, and the ABI's globals.
// SCF-ONLY-NOT: fx.graph
// SCF-ONLY-NOT: loop.{{[a-z_]+}}
// SCF-LABEL: func.func private @forward(
// SCF-SAME: %{{.*}}: memref<?x64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<?x64xf32>)
// SCF-SAME: kiln.graph
// SCF: scf.parallel
// SCF: vector.store
// SCF-LABEL: func.func @kiln_forward_run(%{{.*}}: !llvm.ptr
// SCF: call @forward(
// SCF-DAG: llvm.mlir.global external constant @kiln_forward_signature
// SCF-DAG: llvm.mlir.global external constant @kiln_abi_version
// SERIAL-LABEL: func.func private @forward(
// SERIAL-NOT: scf.parallel
// SERIAL-NOT: vector.
// SERIAL: scf.for
// SERIAL-LABEL: func.func @kiln_forward_run

// The second stage leaves only the LLVM and OpenMP dialects.
// LLVM-ONLY-NOT: func.func
// LLVM-ONLY-NOT: memref.
// LLVM-ONLY-NOT: scf.
// LLVM-LABEL: llvm.func internal @forward
// LLVM: omp.parallel
// LLVM-LABEL: llvm.func @kiln_forward_run
// NO-OMP-LABEL: llvm.func internal @forward
// NO-OMP-NOT: omp.
// NO-OMP: llvm.cond_br
fx.graph @forward(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = fx.add %x, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = fx.relu %0 : tensor<?x64xf32>
  fx.output %1 : tensor<?x64xf32>
}
