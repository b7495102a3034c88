// Tests that views whose reads are gathered per element (merged dimensions,
// transposes) compile into GPU kernels: nothing of the vectorized index
// arithmetic is left that NVVM cannot lower.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// CHECK: T kiln_forward_run
// The host code launches the one fused kernel, a pointwise one, and nothing
// else: the views are index arithmetic in it, not copies.
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s --check-prefix=LAUNCHES
// LAUNCHES-LABEL: define {{.*}} @kiln_forward_run(
// LAUNCHES: call ptr @mgpuModuleGetFunction(ptr %{{[0-9]+}}, ptr nonnull @kiln_pointwise{{.*}}_name)
// LAUNCHES-NEXT: call void @mgpuLaunchKernel(
// LAUNCHES-NOT: call void @mgpuLaunchKernel
// LAUNCHES-NOT: call void @mgpuMemcpy
fx.graph @forward(%x: tensor<2x4x8x16xf32>) -> tensor<2x8x64xf32> {
  %0 = fx.permute %x {dims = array<i64: 0, 2, 1, 3>} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %1 = fx.view %0 : (tensor<2x8x4x16xf32>) -> tensor<2x8x64xf32>
  %2 = fx.mul %1, %1 : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  fx.output %2 : tensor<2x8x64xf32>
}
