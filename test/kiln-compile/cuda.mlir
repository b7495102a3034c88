// Tests GPU artifacts: a shared object that loads its kernels through Kiln's
// CUDA runtime and launches them on the stream it is given.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: llvm-readelf -d %t.so | FileCheck %s --check-prefix=DYNAMIC
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s --check-prefix=LLVM
// RUN: not kiln-compile %s --target=cuda --pipeline-options='openmp=true' -o %t.so 2>&1 | FileCheck %s --check-prefix=OPTIONS

// SYMBOLS-DAG: T kiln_forward_run
// SYMBOLS-DAG: R kiln_forward_device
// SYMBOLS-DAG: U mgpuLaunchKernel
// SYMBOLS-DAG: U mgpuModuleLoad
// DYNAMIC-DAG: (NEEDED) Shared library: [libkiln_cuda_runtime.so]
// DYNAMIC-DAG: (RUNPATH) Library runpath: [{{.+}}]
// LLVM: @llvm.global_ctors = appending global
// LLVM: define {{.*}}i32 @kiln_forward_run(ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}})
// LLVM: call void @mgpuLaunchKernel(
// OPTIONS: kiln-compile: invalid kiln-gpu-pipeline options 'openmp=true': <Pass-Options-Parser>: no such option openmp; kiln-gpu-pipeline takes: attention-kernels, block-size,
fx.graph @forward(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = fx.mul %x, %y : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  fx.output %0 : tensor<16x64xf32>
}
