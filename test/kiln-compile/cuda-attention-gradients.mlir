// A training step's attention on CUDA: the forward kernel stores the
// logsumexp, and the gradients (the CPU flash op's, with a mask and causal)
// run as Kiln's backward kernels, no GEMM; ptxas assembles them for
// sm_90a and for sm_80, at heads of 64 and 128.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --pipeline-options='chip=sm_80' -o %t-80.so
// RUN: llvm-nm -D %t-80.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --emit=loop | FileCheck %s --check-prefix=LOOP
// sm_90a's default is the warpgroup-MMA gradient kernel (heads of 64 and
// 128); without warpgroup-attention-gradients, the two mma.sync kernels
// assemble there too.
// RUN: kiln-compile %s --target=cuda --pipeline-options='warpgroup-attention-gradients=false' -o %t-mma.so
// RUN: llvm-nm -D %t-mma.so | FileCheck %s

// CHECK-NOT: kiln_cuda_gemm
// CHECK: T kiln_attention_step_run
// CHECK-NOT: kiln_cuda_gemm
// LOOP-LABEL: fx.graph @attention_step
// LOOP-NOT: loop.matmul
// LOOP: loop.attention{{.*}} -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32> scores {
// LOOP: loop.attention_backward
// LOOP: loop.attention {{.*}} -> tensor<2x4x100x128xf16>, tensor<2x4x100xf32>
// LOOP: loop.attention_backward
// LOOP-NOT: loop.matmul

fx.graph @attention_step(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %mask: tensor<?x?xbf16>, %do: tensor<?x8x?x64xbf16>, %w: tensor<2x4x100x128xf16>, %dw: tensor<2x4x100x128xf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>) {
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %k attn_mask(%mask) {is_causal = true} : (tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x?xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
  %1:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %k, %0#0, %0#1 attn_mask(%mask) {dropout_p = 0.0 : f64, is_causal = true} : (tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x?xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>)
  %2:2 = fx.scaled_dot_product_flash_attention_for_cpu %w, %w, %w {scale = 0.1 : f64} : (tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>) -> (tensor<2x4x100x128xf16>, tensor<2x4x100xf32>)
  %3:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %dw, %w, %w, %w, %2#0, %2#1 {dropout_p = 0.0 : f64, is_causal = false, scale = 0.1 : f64} : (tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100xf32>) -> (tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>)
  fx.output %1#0, %1#1, %1#2, %3#0, %3#1, %3#2 : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>, tensor<2x4x100x128xf16>
}
