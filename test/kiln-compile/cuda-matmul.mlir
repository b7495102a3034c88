// A GPU artifact with matrix products calls the runtime's GEMM between its
// kernels; the kernels still assemble for sm_90a. Both products add their
// bias in the GEMM and round to bf16 there; the first one's erf-GELU is a
// kernel after it.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s --check-prefix=LLVM

// CHECK-DAG: T kiln_mlp_run
// CHECK-DAG: U kiln_cuda_gemm
// CHECK-DAG: U mgpuLaunchKernel
// LLVM: define {{.*}}i32 @kiln_mlp_run(
// LLVM: call void @kiln_cuda_gemm(i32 2, i32 2, i64 1, i64 %{{.+}}, i64 256, i64 64, ptr %{{.+}}, i32 0, ptr %{{.+}}, i32 1, ptr %{{.+}}, i32 0,
// LLVM: call void @mgpuLaunchKernel(
// LLVM: call void @kiln_cuda_gemm(i32 2, i32 2, i64 1, i64 %{{.+}}, i64 64, i64 256, ptr %{{.+}}, i32 0, ptr %{{.+}}, i32 1, ptr %{{.+}}, i32 0,
fx.graph @mlp(%x: tensor<?x64xbf16>, %w1: tensor<256x64xbf16>, %b1: tensor<256xbf16>, %w2: tensor<64x256xbf16>, %b2: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %t1 = fx.permute %w1 {dims = array<i64: 1, 0>} : (tensor<256x64xbf16>) -> tensor<64x256xbf16>
  %h = fx.addmm %b1, %x, %t1 : (tensor<256xbf16>, tensor<?x64xbf16>, tensor<64x256xbf16>) -> tensor<?x256xbf16>
  %g = fx.gelu %h : tensor<?x256xbf16>
  %t2 = fx.permute %w2 {dims = array<i64: 1, 0>} : (tensor<64x256xbf16>) -> tensor<256x64xbf16>
  %y = fx.addmm %b2, %g, %t2 : (tensor<64xbf16>, tensor<?x256xbf16>, tensor<256x64xbf16>) -> tensor<?x64xbf16>
  fx.output %y : tensor<?x64xbf16>
}
