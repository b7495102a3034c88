// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa row-min-blocks=6' | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s --check-prefix=DEFAULT

// With row-min-blocks, the softmax row kernel's PTX asks ptxas to fit six
// blocks of its 32 threads on an SM; by default it does not.
// CHECK: gpu.binary @kiln_rows
// CHECK-SAME: .maxntid 32, 1, 1
// CHECK-SAME: .minnctapersm 6
// DEFAULT: gpu.binary @kiln_rows
// DEFAULT-NOT: .minnctapersm
fx.graph @softmax(%x: tensor<64x1024xbf16>) -> tensor<64x1024xbf16> {
  %0 = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<64x1024xbf16>) -> tensor<64x1024xbf16>
  fx.output %0 : tensor<64x1024xbf16>
}
