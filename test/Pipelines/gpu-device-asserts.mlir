// RUN: kiln-opt %s -split-input-file --kiln-gpu-pipeline='format=isa' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-gpu-pipeline='format=isa device-asserts=false' | FileCheck %s --check-prefix=OFF

// Tests that the GPU pipeline's kernels make a device assert (CUDA's
// __assertfail, as eager's kernels do) where an embedding's index is out
// of range: one unsigned compare of the index, which is uniform along the
// row, so the row's elements still load as 16-byte vectors.
// CHECK-LABEL: gpu.binary @kiln_pointwise
// CHECK: .extern .func __assertfail
// CHECK: setp.lt.u64 {{.*}}, 50000;
// CHECK: ld.global.v4.b32
// CHECK: call.uni __assertfail
// Without device asserts the index is clamped and nothing asserts.
// OFF-LABEL: gpu.binary @kiln_pointwise
// OFF-NOT: __assertfail
// OFF: ld.global.v4.b32
fx.graph @embedding(%w: tensor<50000x768xbf16>, %ids: tensor<8x128xsi64>) -> tensor<8x128x768xbf16> {
  %0 = fx.embedding %w, %ids : (tensor<50000x768xbf16>, tensor<8x128xsi64>) -> tensor<8x128x768xbf16>
  fx.output %0 : tensor<8x128x768xbf16>
}

// -----

// Tests that a scatter's kernel asserts its indices too.
// CHECK-LABEL: gpu.binary @kiln_scatter
// CHECK: call.uni __assertfail
// OFF-LABEL: gpu.binary @kiln_scatter
// OFF-NOT: __assertfail
fx.graph @scatter_add(%x: tensor<8x5xf32>, %i: tensor<8x3xsi64>, %s: tensor<8x3xf32>) -> tensor<8x5xf32> {
  %0 = fx.scatter_add %x, %i, %s {dim = 1 : i64} : (tensor<8x5xf32>, tensor<8x3xsi64>, tensor<8x3xf32>) -> tensor<8x5xf32>
  fx.output %0 : tensor<8x5xf32>
}
