// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s

// Tests that constants reach kernels as constants, not as kernel arguments:
// the canonicalizer hoists them out of launch bodies, and the pipeline sinks
// them back before outlining. A row kernel's warp shuffles then take
// immediate lane offsets, and no 32-bit value (shuffle offsets, warp sizes,
// identities) comes in as a parameter; memref descriptors (64-bit) do.
// CHECK-LABEL: .entry kiln_rows
// CHECK-NOT: ld.param.b32
// CHECK-NOT: ld.param.v4.b32
// CHECK: shfl.sync.bfly.b32 \09%r{{[0-9]+}}, %r{{[0-9]+}}, 16, 31, -1;
// CHECK-NOT: ld.param.b32
fx.graph @softmax_rows(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<64x4096xf32>) -> tensor<64x4096xf32>
  fx.output %0 : tensor<64x4096xf32>
}
