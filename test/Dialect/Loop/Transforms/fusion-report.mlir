// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop --kiln-fusion-report -o /dev/null | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop='fuse-rows=false' --kiln-fusion-report -o /dev/null | FileCheck %s --check-prefix=UNFUSED

// The anchor micro-graphs: one kernel each, moving exactly the ideal bytes
// (each input read once, each output written once).

// LayerNorm(x + r) -> GELU -> * 0.5 + x, bf16: reads x, r, w, b; writes y.
// CHECK-LABEL: fusion report for @layer_norm_gelu: 1 kernel, 25600 bytes moved, ideal 25600 (1.00x)
// CHECK-NEXT: kernel 0: loop.kernel, 3 nodes (2 reductions), reads 17408, writes 8192
// UNFUSED-LABEL: fusion report for @layer_norm_gelu: 3 kernels, 58688 bytes moved, ideal 25600 (2.29x)
fx.graph @layer_norm_gelu(%x: tensor<16x256xbf16>, %r: tensor<16x256xbf16>, %w: tensor<256xbf16>, %b: tensor<256xbf16>) -> tensor<16x256xbf16> {
  %h = fx.add %x, %r : (tensor<16x256xbf16>, tensor<16x256xbf16>) -> tensor<16x256xbf16>
  %n, %mean, %rstd = fx.native_layer_norm %h weight(%w) bias(%b) {eps = 1.0e-05 : f64, normalized_shape = array<i64: 256>} : (tensor<16x256xbf16>, tensor<256xbf16>, tensor<256xbf16>) -> (tensor<16x256xbf16>, tensor<16x1xf32>, tensor<16x1xf32>)
  %g = fx.gelu %n : tensor<16x256xbf16>
  %s = fx.mul_scalar %g {other = 5.000000e-01 : f64} : (tensor<16x256xbf16>) -> tensor<16x256xbf16>
  %y = fx.add %s, %x : (tensor<16x256xbf16>, tensor<16x256xbf16>) -> tensor<16x256xbf16>
  fx.output %y : tensor<16x256xbf16>
}

// -----

// softmax(x * 0.125) over the last dimension.
// CHECK-LABEL: fusion report for @scaled_softmax: 1 kernel, 32768 bytes moved, ideal 32768 (1.00x)
// CHECK-NEXT: kernel 0: loop.kernel, 3 nodes (2 reductions), reads 16384, writes 16384
// CHECK-NEXT: from {{.*}}fusion-report.mlir:[[@LINE+2]]:8 {{.*}}fusion-report.mlir:[[@LINE+3]]:8{{$}}
fx.graph @scaled_softmax(%x: tensor<2x4x16x64xbf16>) -> tensor<2x4x16x64xbf16> {
  %s = fx.mul_scalar %x {other = 1.250000e-01 : f64} : (tensor<2x4x16x64xbf16>) -> tensor<2x4x16x64xbf16>
  %y = fx.softmax %s {dim = -1 : i64, half_to_float = false} : (tensor<2x4x16x64xbf16>) -> tensor<2x4x16x64xbf16>
  fx.output %y : tensor<2x4x16x64xbf16>
}

// -----

// A long pointwise chain: one node, no reductions.
// CHECK-LABEL: fusion report for @chain: 1 kernel, 12288 bytes moved, ideal 12288 (1.00x)
// CHECK-NEXT: kernel 0: loop.pointwise, 1 node (0 reductions), reads 8192, writes 4096
fx.graph @chain(%x: tensor<32x32xf32>, %r: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = fx.add %x, %r : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %1 = fx.relu %0 : tensor<32x32xf32>
  %2 = fx.mul %1, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %3 = fx.tanh %2 : (tensor<32x32xf32>) -> tensor<32x32xf32>
  fx.output %3 : tensor<32x32xf32>
}

// -----

// Dynamic sizes are reported as unknown.
// CHECK-LABEL: fusion report for @dynamic: 1 kernel, ? bytes moved, ideal ?
fx.graph @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fx.relu %x : tensor<?x8xf32>
  fx.output %0 : tensor<?x8xf32>
}
