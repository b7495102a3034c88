// A bias added to attention's scores runs in the flash-attention kernel's
// scores region, no GEMM: ptxas assembles it for sm_90a and for sm_80.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %s --target=cuda --pipeline-options='chip=sm_80' -o %t-80.so
// RUN: llvm-nm -D %t-80.so | FileCheck %s

// CHECK-NOT: kiln_cuda_gemm
// CHECK: T kiln_masked_attention_run
// CHECK-NOT: kiln_cuda_gemm

fx.graph @masked_attention(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %bias: tensor<?x1x?x?xbf16>) -> tensor<?x8x?x128xbf16> {
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v attn_bias(%bias) {compute_log_sumexp = false} : (tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x1x?x?xbf16>) -> (tensor<?x8x?x128xbf16>, tensor<?x8x0xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0 : tensor<?x8x?x128xbf16>
}
