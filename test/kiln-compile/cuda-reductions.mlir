// Bool, uint8 and integer reductions (any, all, prod) and logsumexp build
// GPU kernels that ptxas assembles for sm_90a.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s

// CHECK: T kiln_any_all_run
fx.graph @any_all(%x: tensor<4x5xf32>, %u: tensor<4x9xui8>, %i: tensor<3x7xsi32>, %l: tensor<4x300xbf16>) -> (tensor<4xi1>, tensor<i1>, tensor<4xui8>, tensor<3xsi64>, tensor<4xbf16>) {
  %0 = fx.any_dim %x {dim = 1 : i64} : (tensor<4x5xf32>) -> tensor<4xi1>
  %1 = fx.all %x : (tensor<4x5xf32>) -> tensor<i1>
  %2 = fx.any_dim %u {dim = 1 : i64} : (tensor<4x9xui8>) -> tensor<4xui8>
  %3 = fx.prod_dim_int %i {dim = 1 : i64} : (tensor<3x7xsi32>) -> tensor<3xsi64>
  %4 = fx.logsumexp %l {dim = array<i64: 1>} : (tensor<4x300xbf16>) -> tensor<4xbf16>
  fx.output %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<i1>, tensor<4xui8>, tensor<3xsi64>, tensor<4xbf16>
}
