// A GPU artifact with matrix products calls the runtime's GEMM between its
// kernels; the kernels still assemble for sm_90a. Both products add their
// bias in the GEMM and round to bf16 there; the first one's erf-GELU is a
// kernel after it.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s --check-prefix=LLVM
// With matmul-kernels, both products are Kiln's tensor-core kernels, the
// GELU in the first one's epilogue; they assemble for sm_80 (mma.sync) and
// sm_90a (warpgroup MMA: both read their weights [N, K]). The second, whose
// bias the GEMM adds as well, runs as the faster of the two, which the
// runtime times at each shape's first call; with choose-products=false it
// is the kernel alone.
// RUN: kiln-compile %s --target=cuda --pipeline-options='matmul-kernels chip=sm_80' -o %t-tc80.so
// RUN: kiln-compile %s --target=cuda --pipeline-options='matmul-kernels' -o %t-tc90.so
// RUN: llvm-nm -D %t-tc90.so | FileCheck %s --check-prefix=CHOICE
// RUN: kiln-compile %s --target=cuda --pipeline-options='matmul-kernels choose-products=false' -o %t-tc90-kernels.so
// RUN: llvm-nm -D %t-tc90-kernels.so | FileCheck %s --check-prefix=KERNELS
// RUN: kiln-opt %s --kiln-gpu-pipeline='matmul-kernels format=isa' | FileCheck %s --check-prefix=PTX
// With warpgroup-tma the kernels copy by TMA, and the host encodes the
// operands' tensor maps, which ptxas sees as 128-byte parameters.
// RUN: kiln-compile %s --target=cuda --pipeline-options='matmul-kernels warpgroup-tma choose-products=false' -o %t-tma.so
// RUN: llvm-nm -D %t-tma.so | FileCheck %s --check-prefix=TMA
// RUN: kiln-opt %s --kiln-gpu-pipeline='matmul-kernels format=isa chip=sm_80' | FileCheck %s --check-prefix=PTX80

// CHECK-DAG: T kiln_mlp_run
// CHECK-DAG: U kiln_cuda_gemm
// CHECK-DAG: U mgpuLaunchKernel
// LLVM: define {{.*}}i32 @kiln_mlp_run(
// LLVM: call void @kiln_cuda_gemm(i32 2, i32 2, i64 1, i64 %{{.+}}, i64 256, i64 64, ptr %{{.+}}, i32 0, ptr %{{.+}}, i32 1, ptr %{{.+}}, i32 0,
// LLVM: call void @mgpuLaunchKernel(
// LLVM: call void @kiln_cuda_gemm(i32 2, i32 2, i64 1, i64 %{{.+}}, i64 64, i64 256, ptr %{{.+}}, i32 0, ptr %{{.+}}, i32 1, ptr %{{.+}}, i32 0,
// CHOICE-DAG: T kiln_mlp_run
// CHOICE-DAG: U kiln_cuda_gemm
// CHOICE-DAG: U kiln_cuda_product_choice
// CHOICE-DAG: U kiln_cuda_product_decide
// CHOICE-DAG: U kiln_cuda_product_mark
// KERNELS-NOT: kiln_cuda_
// KERNELS: T kiln_mlp_run
// KERNELS-NOT: kiln_cuda_
// TMA-NOT: kiln_cuda_gemm
// TMA: U kiln_cuda_tensor_map
// TMA-NOT: kiln_cuda_gemm
// PTX: gpu.binary @kiln_matmul_addmm {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX80: gpu.binary @kiln_matmul_addmm {{.*}}mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX80-NOT: wgmma
// PTX-NOT: gpu.binary @kiln_pointwise
fx.graph @mlp(%x: tensor<?x64xbf16>, %w1: tensor<256x64xbf16>, %b1: tensor<256xbf16>, %w2: tensor<64x256xbf16>, %b2: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %t1 = fx.permute %w1 {dims = array<i64: 1, 0>} : (tensor<256x64xbf16>) -> tensor<64x256xbf16>
  %h = fx.addmm %b1, %x, %t1 : (tensor<256xbf16>, tensor<?x64xbf16>, tensor<64x256xbf16>) -> tensor<?x256xbf16>
  %g = fx.gelu %h : tensor<?x256xbf16>
  %t2 = fx.permute %w2 {dims = array<i64: 1, 0>} : (tensor<64x256xbf16>) -> tensor<256x64xbf16>
  %y = fx.addmm %b2, %g, %t2 : (tensor<64xbf16>, tensor<?x256xbf16>, tensor<256x64xbf16>) -> tensor<?x64xbf16>
  fx.output %y : tensor<?x64xbf16>
}
