// Tests each kind of output kiln-compile produces.
// RUN: kiln-compile %s --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: kiln-compile %s --emit=llvm -o - | FileCheck %s --check-prefix=LLVM
// RUN: kiln-compile %s --emit=llvm --pipeline-options='openmp=false' -o - | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-compile %s --emit=obj -o %t.o && llvm-nm %t.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: kiln-compile %s -o %t.so && llvm-nm -D --defined-only %t.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: llvm-readelf -d %t.so | FileCheck %s --check-prefix=DYNAMIC
// RUN: kiln-compile %s -O0 --mcpu=x86-64 -o %t-generic.so && llvm-nm -D --defined-only %t-generic.so | FileCheck %s --check-prefix=SYMBOLS

// MLIR: llvm.func @kiln_forward_run
// LLVM-DAG: define {{.*}}i32 @kiln_forward_run(ptr
// LLVM-DAG: call void {{.*}}@__kmpc_fork_call
// SERIAL: define {{.*}}i32 @kiln_forward_run(ptr
// SERIAL-NOT: __kmpc
// SYMBOLS-DAG: R kiln_abi_version
// SYMBOLS-DAG: T kiln_forward_result_sizes
// SYMBOLS-DAG: T kiln_forward_run
// SYMBOLS-DAG: R kiln_forward_signature
// DYNAMIC-DAG: (NEEDED) Shared library: [libkiln_openmp.so]
// DYNAMIC-DAG: (RUNPATH) Library runpath: [{{.+}}]
fx.graph @forward(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = fx.mul %x, %y : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %1 = fx.relu %0 : tensor<16x64xf32>
  fx.output %1 : tensor<16x64xf32>
}
