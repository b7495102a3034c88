// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop --kiln-fusion-report -o /dev/null | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop='fuse-rows=false' --kiln-fusion-report -o /dev/null | FileCheck %s --check-prefix=UNFUSED
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop='fuse-epilogues=false' --kiln-fusion-report -o /dev/null | FileCheck %s --check-prefix=NOEPILOGUE

// The anchor micro-graphs: one kernel each, moving exactly the ideal bytes
// (each input read once, each output written once).

// LayerNorm(x + r) -> GELU -> * 0.5 + x, bf16: reads x, r, w, b; writes y.
// CHECK-LABEL: fusion report for @layer_norm_gelu: 1 kernel, 25600 bytes moved, ideal 25600 (1.00x)
// CHECK-NEXT: kernel 0: loop.kernel, 4 nodes (3 reductions), reads 17408, writes 8192
// Without row fusion the mean is a kernel, the two sums of deviations that
// read it another (siblings), the normalization a third.
// UNFUSED-LABEL: fusion report for @layer_norm_gelu: 3 kernels, 58816 bytes moved, ideal 25600 (2.30x)
// UNFUSED: kernel 1: loop.kernel, 2 nodes (2 reductions)
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
// CHECK-NEXT: from mul_scalar at {{.*}}fusion-report.mlir:[[@LINE+2]]:8, softmax at {{.*}}fusion-report.mlir:[[@LINE+3]]:8{{$}}
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

// -----

// An MLP with biases and GELU, bf16: each product takes its bias and
// activation as an epilogue, so only the hidden activations (16 x 256 bf16,
// 8192 bytes) travel between the two kernels, once each way. Without
// epilogue fusion the f32 sums go out and back in too.
// CHECK-LABEL: fusion report for @mlp_bias_gelu: 2 kernels, 86656 bytes moved, ideal 70272 (1.23x)
// CHECK-NEXT: kernel 0: loop.matmul, 1 node (0 reductions), reads 35328, writes 8192
// CHECK: kernel 1: loop.matmul, 1 node (0 reductions), reads 41088, writes 2048
// UNFUSED-LABEL: fusion report for @mlp_bias_gelu: 2 kernels, 86656 bytes moved
// NOEPILOGUE-LABEL: fusion report for @mlp_bias_gelu: 4 kernels, 127616 bytes moved, ideal 70272 (1.82x)
fx.graph @mlp_bias_gelu(%x: tensor<16x64xbf16>, %w1: tensor<256x64xbf16>, %b1: tensor<256xbf16>, %w2: tensor<64x256xbf16>, %b2: tensor<64xbf16>) -> tensor<16x64xbf16> {
  %t1 = fx.permute %w1 {dims = array<i64: 1, 0>} : (tensor<256x64xbf16>) -> tensor<64x256xbf16>
  %h = fx.addmm %b1, %x, %t1 : (tensor<256xbf16>, tensor<16x64xbf16>, tensor<64x256xbf16>) -> tensor<16x256xbf16>
  %g = fx.gelu %h : tensor<16x256xbf16>
  %t2 = fx.permute %w2 {dims = array<i64: 1, 0>} : (tensor<64x256xbf16>) -> tensor<256x64xbf16>
  %y = fx.addmm %b2, %g, %t2 : (tensor<64xbf16>, tensor<16x256xbf16>, tensor<256x64xbf16>) -> tensor<16x64xbf16>
  fx.output %y : tensor<16x64xbf16>
}

// -----

// Attention, softmax(q k^T / 8) v: the products read q, k and v where they
// are (no copies to merge batches or transpose k); the scores and the
// probabilities (2 x 4 x 16 x 16 bf16, 4096 bytes) are stored and read
// once each, between the products and the fused softmax kernel.
// CHECK-LABEL: fusion report for @attention: 3 kernels, 49152 bytes moved, ideal 32768 (1.50x)
// CHECK-NEXT: kernel 0: loop.matmul, 1 node (0 reductions), reads 16384, writes 4096
// CHECK: kernel 1: loop.kernel, 3 nodes (2 reductions), reads 4096, writes 4096
// CHECK: kernel 2: loop.matmul, 1 node (0 reductions), reads 12288, writes 8192
fx.graph @attention(%q: tensor<2x4x16x32xbf16>, %k: tensor<2x4x16x32xbf16>, %v: tensor<2x4x16x32xbf16>) -> tensor<2x4x16x32xbf16> {
  %kt = fx.permute %k {dims = array<i64: 0, 1, 3, 2>} : (tensor<2x4x16x32xbf16>) -> tensor<2x4x32x16xbf16>
  %qv = fx.view %q : (tensor<2x4x16x32xbf16>) -> tensor<8x16x32xbf16>
  %kv = fx.view %kt : (tensor<2x4x32x16xbf16>) -> tensor<8x32x16xbf16>
  %s = fx.bmm %qv, %kv : (tensor<8x16x32xbf16>, tensor<8x32x16xbf16>) -> tensor<8x16x16xbf16>
  %s4 = fx.unsafe_view %s : (tensor<8x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %m = fx.mul_scalar %s4 {other = 1.250000e-01 : f64} : (tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %p = fx.softmax %m {dim = -1 : i64, half_to_float = false} : (tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %pv = fx.view %p : (tensor<2x4x16x16xbf16>) -> tensor<8x16x16xbf16>
  %vv = fx.view %v : (tensor<2x4x16x32xbf16>) -> tensor<8x16x32xbf16>
  %o = fx.bmm %pv, %vv : (tensor<8x16x16xbf16>, tensor<8x16x32xbf16>) -> tensor<8x16x32xbf16>
  %o4 = fx.unsafe_view %o : (tensor<8x16x32xbf16>) -> tensor<2x4x16x32xbf16>
  fx.output %o4 : tensor<2x4x16x32xbf16>
}

// -----

// Rotary embeddings with complex numbers: the views and the complex product
// inline into one pointwise kernel; x (bf16) and freqs (complex<f32>) are
// read once, no complex buffer is stored.
// CHECK-LABEL: fusion report for @complex_rotary: 1 kernel, 4608 bytes moved, ideal 4608 (1.00x)
// CHECK-NEXT: kernel 0: loop.pointwise, 1 node (0 reductions), reads 2560, writes 2048
fx.graph @complex_rotary(%x: tensor<2x8x4x16xbf16>, %freqs: tensor<1x8x1x8xcomplex<f32>>) -> tensor<2x8x4x16xbf16> {
  %0 = fx.to_copy %x {dtype = f32} : (tensor<2x8x4x16xbf16>) -> tensor<2x8x4x16xf32>
  %1 = fx.view %0 : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x8x2xf32>
  %2 = fx.view_as_complex %1 : (tensor<2x8x4x8x2xf32>) -> tensor<2x8x4x8xcomplex<f32>>
  %3 = fx.mul %2, %freqs : (tensor<2x8x4x8xcomplex<f32>>, tensor<1x8x1x8xcomplex<f32>>) -> tensor<2x8x4x8xcomplex<f32>>
  %4 = fx.view_as_real %3 : (tensor<2x8x4x8xcomplex<f32>>) -> tensor<2x8x4x8x2xf32>
  %5 = fx.view %4 : (tensor<2x8x4x8x2xf32>) -> tensor<2x8x4x16xf32>
  %6 = fx.to_copy %5 {dtype = bf16} : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xbf16>
  fx.output %6 : tensor<2x8x4x16xbf16>
}
