// Tests that fused normalization kernels (block reductions with shuffles and
// workgroup memory) assemble for sm_90a.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-group-norm.mlir --target=cuda -o %t-group.so
// RUN: llvm-nm -D %t-group.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-group-norm-dynamic.mlir --target=cuda -o %t-group-dynamic.so
// RUN: llvm-nm -D %t-group-dynamic.so | FileCheck %s
// Welford's one-pass variances: states shuffled and kept in workgroup memory.
// RUN: kiln-compile %s --target=cuda --pipeline-options='welford=true' -o %t-welford.so
// RUN: llvm-nm -D %t-welford.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-group-norm.mlir --target=cuda --pipeline-options='welford=true' -o %t-group-welford.so
// RUN: llvm-nm -D %t-group-welford.so | FileCheck %s
// CHECK: T kiln_forward_run
fx.graph @forward(%x: tensor<?x1024xbf16>, %w: tensor<1024xbf16>, %b: tensor<1024xbf16>) -> (tensor<?x1024xbf16>, tensor<?x1024xbf16>) {
  %0 = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<?x1024xbf16>) -> tensor<?x1024xbf16>
  %out, %mean, %rstd = fx.native_layer_norm %x weight(%w) bias(%b) {eps = 1.0e-05 : f64, normalized_shape = array<i64: 1024>} : (tensor<?x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>) -> (tensor<?x1024xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
  fx.output %0, %out : tensor<?x1024xbf16>, tensor<?x1024xbf16>
}
