// A GPU graph that is one library GEMM has no kernels, yet needs the CUDA
// runtime that provides the GEMM.
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-readelf -d %t.so | FileCheck %s
// RUN: llvm-nm -D %t.so | FileCheck %s --check-prefix=SYMBOLS

// CHECK-DAG: (NEEDED) Shared library: [libkiln_cuda_runtime.so]
// CHECK-DAG: (RUNPATH) Library runpath: [{{.+}}]
// SYMBOLS: U kiln_cuda_gemm
// SYMBOLS-NOT: mgpuLaunchKernel
fx.graph @gemm(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = fx.mm %a, %b : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  fx.output %0 : tensor<8x8xf32>
}
