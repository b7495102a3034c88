// Tests that a transposing read compiles into a tiled GPU kernel: its 64x33
// tile in shared memory, 16-bit elements staged with shared stores, a barrier
// before the staged values are read back, and the result's rows read and
// written 16 bytes at a time; ptxas assembles it. The pipeline option turns
// the tiles off.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s --check-prefix=PTX
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa transpose-tiles=false' | FileCheck %s --check-prefix=FLAT
// CHECK: T kiln_forward_run
// The host code launches the tiled transpose kernel, and nothing else.
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s --check-prefix=LAUNCHES
// LAUNCHES-LABEL: define {{.*}} @kiln_forward_run(
// LAUNCHES: call ptr @mgpuModuleGetFunction(ptr %{{[0-9]+}}, ptr nonnull @kiln_transpose{{.*}}_name)
// LAUNCHES-NEXT: call void @mgpuLaunchKernel(
// LAUNCHES-NOT: call void @mgpuLaunchKernel
// PTX: .shared .align 2 .b8 __wg_kiln_transpose_add_0[4224];
// PTX: st.shared.b16
// PTX: bar.sync
// PTX: ld.shared.b16
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// FLAT-NOT: .shared
// FLAT-NOT: bar.sync
fx.graph @forward(%x: tensor<4x96x14x14xbf16>, %r: tensor<4x14x14x96xbf16>) -> tensor<4x14x14x96xbf16> {
  %0 = fx.permute %x {dims = array<i64: 0, 2, 3, 1>} : (tensor<4x96x14x14xbf16>) -> tensor<4x14x14x96xbf16>
  %1 = fx.add %0, %r : (tensor<4x14x14x96xbf16>, tensor<4x14x14x96xbf16>) -> tensor<4x14x14x96xbf16>
  fx.output %1 : tensor<4x14x14x96xbf16>
}
