// Attention of bf16 heads of 64 runs as Kiln's flash-attention kernel, no
// GEMM: ptxas assembles it for sm_90a and for sm_80 (mma.sync, cp.async
// and ldmatrix are Ampere's), and the PTX for sm_80 uses nothing newer.
// With attention-kernels=false it is products around a softmax kernel.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --pipeline-options='chip=sm_80' -o %t-80.so
// RUN: llvm-nm -D %t-80.so | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa chip=sm_80' | FileCheck %s --check-prefix=PTX80
// RUN: kiln-compile %s --target=cuda --pipeline-options='attention-kernels=false' -o %t-off.so
// RUN: llvm-nm -D %t-off.so | FileCheck %s --check-prefix=OFF

// CHECK-NOT: kiln_cuda_gemm
// CHECK: T kiln_attention_run
// CHECK-NOT: kiln_cuda_gemm

// PTX80-NOT: sm_90
// PTX80: gpu.binary @kiln_attention_scaled_dot_product_efficient_attention {{.*}}.target sm_80
// PTX80-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX80-NOT: sm_90

// OFF: U kiln_cuda_gemm

fx.graph @attention(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v {compute_log_sumexp = false, is_causal = true} : (tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>) -> (tensor<?x4x?x64xbf16>, tensor<?x4x0xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0 : tensor<?x4x?x64xbf16>
}
