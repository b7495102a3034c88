// Tests that accumulating scatters (embedding's gradient in bf16 and f32,
// scatter_add of integers) compile into GPU kernels with atomic additions
// that ptxas assembles for sm_90a, and a scan and a top-k (reductions and
// assigning scatters) beside them; scatter_reduce's atomic maxima and
// minima and its products (integers and floats) too.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-scatter-reduce.mlir --target=cuda -o %t-reduce.so
// RUN: llvm-nm -D %t-reduce.so | FileCheck %s
// CHECK: T kiln_forward_run
fx.graph @forward(%g: tensor<64x768xbf16>, %ids: tensor<64xsi64>, %g32: tensor<64x32xf32>, %x: tensor<8x5xsi32>, %i: tensor<8x3xsi64>, %s: tensor<8x3xsi32>) -> (tensor<1000x768xbf16>, tensor<50x32xf32>, tensor<8x5xsi32>, tensor<64x768xbf16>, tensor<64x5xsi64>) {
  %0 = fx.embedding_dense_backward %g, %ids {padding_idx = -1 : i64, scale_grad_by_freq = false} : (tensor<64x768xbf16>, tensor<64xsi64>) -> tensor<1000x768xbf16>
  %1 = fx.embedding_dense_backward %g32, %ids {padding_idx = 0 : i64, scale_grad_by_freq = false} : (tensor<64x32xf32>, tensor<64xsi64>) -> tensor<50x32xf32>
  %2 = fx.scatter_add %x, %i, %s {dim = 1 : i64} : (tensor<8x5xsi32>, tensor<8x3xsi64>, tensor<8x3xsi32>) -> tensor<8x5xsi32>
  %3 = fx.cumsum %g {dim = 0 : i64} : (tensor<64x768xbf16>) -> tensor<64x768xbf16>
  %4:2 = fx.topk %g32 {k = 5 : i64} : (tensor<64x32xf32>) -> (tensor<64x5xf32>, tensor<64x5xsi64>)
  fx.output %0, %1, %2, %3, %4#1 : tensor<1000x768xbf16>, tensor<50x32xf32>, tensor<8x5xsi32>, tensor<64x768xbf16>, tensor<64x5xsi64>
}
