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
// The host code: one row kernel per normalization (softmax, layer norm), a
// block per row, both on the caller's stream, and no other launch.
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s --check-prefix=LAUNCHES
// LAUNCHES-LABEL: define {{.*}} @kiln_forward_run(
// LAUNCHES-SAME: ptr %[[STREAM:[0-9]+]])
// LAUNCHES: %[[K0:[0-9]+]] = call ptr @mgpuModuleGetFunction(ptr %{{[0-9]+}}, ptr nonnull @kiln_rows{{.*}}_name)
// LAUNCHES-NEXT: call void @mgpuLaunchKernel(ptr %[[K0]], i64 %[[ROWS:[0-9]+]], i64 1, i64 1, i64 {{[0-9]+}}, i64 1, i64 1, i32 {{[0-9]+}}, ptr %[[STREAM]],
// LAUNCHES: %[[K1:[0-9]+]] = call ptr @mgpuModuleGetFunction(ptr %{{[0-9]+}}, ptr nonnull @kiln_rows{{.*}}_name)
// LAUNCHES-NEXT: call void @mgpuLaunchKernel(ptr %[[K1]], i64 %[[ROWS]], i64 1, i64 1, i64 {{[0-9]+}}, i64 1, i64 1, i32 {{[0-9]+}}, ptr %[[STREAM]],
// LAUNCHES-NOT: call void @mgpuLaunchKernel
// LAUNCHES-LABEL: define {{.*}} @kiln_forward_result_sizes
fx.graph @forward(%x: tensor<?x1024xbf16>, %w: tensor<1024xbf16>, %b: tensor<1024xbf16>) -> (tensor<?x1024xbf16>, tensor<?x1024xbf16>) {
  %0 = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<?x1024xbf16>) -> tensor<?x1024xbf16>
  %out, %mean, %rstd = fx.native_layer_norm %x weight(%w) bias(%b) {eps = 1.0e-05 : f64, normalized_shape = array<i64: 1024>} : (tensor<?x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>) -> (tensor<?x1024xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
  fx.output %0, %out : tensor<?x1024xbf16>, tensor<?x1024xbf16>
}
