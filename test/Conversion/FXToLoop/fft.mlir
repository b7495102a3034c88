// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop))' | FileCheck %s

// Tests that a real-to-complex transform is two real sums over the signal
// (the cosine and the negated sine terms, each with its phase reduced in
// integers) and a node that pairs them into complex numbers, scaled by the
// normalization (1/8 here).
// CHECK-LABEL: fx.graph @rfft
// CHECK: %[[RE:.+]] = loop.reduce "sum" over [8] : tensor<3x5xf32> {
// CHECK: ^bb0(%[[I:.+]]: index, %[[K:.+]]: index, %[[N:.+]]: index):
// CHECK: %[[X:.+]] = loop.load %{{.+}}[%[[I]], %[[N]]] : tensor<3x8xf32>
// CHECK: %[[KN:.+]] = arith.muli %[[K]], %[[N]] : index
// CHECK: arith.remui %[[KN]], %c8
// CHECK: %[[COS:.+]] = math.cos
// CHECK: arith.mulf %[[X]], %[[COS]] : f32
// CHECK: %[[IM:.+]] = loop.reduce "sum" over [8] : tensor<3x5xf32> {
// CHECK: math.sin
// CHECK: arith.negf
// CHECK: loop.pointwise : tensor<3x5xcomplex<f32>> {
// CHECK: %[[R:.+]] = loop.load %[[RE]]
// CHECK: %[[RS:.+]] = arith.mulf %[[R]], %{{.+}} : f32
// CHECK: %[[J:.+]] = loop.load %[[IM]]
// CHECK: %[[JS:.+]] = arith.mulf %[[J]], %{{.+}} : f32
// CHECK: %[[Z:.+]] = complex.create %[[RS]], %[[JS]] : complex<f32>
// CHECK: loop.yield %[[Z]] : complex<f32>
fx.graph @rfft(%x: tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 1>, normalization = 2, onesided = true} : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>
  fx.output %0 : tensor<3x5xcomplex<f32>>
}

// -----

// Tests a two-dimensional, two-sided transform: the sum runs over both
// transformed dimensions, whose phases add and wrap around once.
// CHECK-LABEL: fx.graph @fft2
// CHECK: loop.reduce "sum" over [4, 6] : tensor<4x6xf64> {
// CHECK: ^bb0(%[[K0:.+]]: index, %[[K1:.+]]: index, %[[N0:.+]]: index, %[[N1:.+]]: index):
// CHECK: loop.load %{{.+}}[%[[N0]], %[[N1]]] : tensor<4x6xf64>
// CHECK: arith.muli %[[K0]], %[[N0]]
// CHECK: arith.muli %[[K1]], %[[N1]]
// CHECK: math.floor
// CHECK: loop.pointwise : tensor<4x6xcomplex<f64>>
// CHECK-NOT: arith.mulf
// CHECK: complex.create
fx.graph @fft2(%x: tensor<4x6xf64>) -> tensor<4x6xcomplex<f64>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 0, 1>, normalization = 0, onesided = false} : (tensor<4x6xf64>) -> tensor<4x6xcomplex<f64>>
  fx.output %0 : tensor<4x6xcomplex<f64>>
}

// -----

// Tests the inverse of a one-sided transform: one real sum over the first
// M/2 + 1 = 4 frequencies of the last dimension, the real part of each term
// rotated to the sample's phase, frequencies 0 and M/2 counted once and the
// others twice (with the conjugate they stand for), times the 1/sqrt(6)
// normalization.
// CHECK-LABEL: fx.graph @irfft
// CHECK: loop.reduce "sum" over [4] : tensor<2x6xf32> {
// CHECK: ^bb0(%{{.+}}: index, %[[N:.+]]: index, %[[K:.+]]: index):
// CHECK: %[[X:.+]] = loop.load %{{.+}}[%{{.+}}, %[[K]]] : tensor<2x5xcomplex<f32>>
// CHECK: arith.muli %[[K]], %[[N]]
// CHECK: arith.remui %{{.+}}, %c6
// CHECK-DAG: %[[RE:.+]] = complex.re %[[X]] : complex<f32>
// CHECK-DAG: %[[IM:.+]] = complex.im %[[X]] : complex<f32>
// CHECK: arith.subf
// CHECK: arith.cmpi eq, %[[K]], %c0
// CHECK: arith.cmpi eq, %[[K]], %c3
// CHECK: arith.ori
// CHECK: arith.select %{{.+}}, %cst{{.*}}, %cst
// CHECK-NOT: loop.pointwise
fx.graph @irfft(%x: tensor<2x5xcomplex<f32>>) -> tensor<2x6xf32> {
  %0 = fx.fft_c2r %x {dim = array<i64: 1>, normalization = 1, last_dim_size = 6} : (tensor<2x5xcomplex<f32>>) -> tensor<2x6xf32>
  fx.output %0 : tensor<2x6xf32>
}

// -----

// Tests that an odd length has no unpaired middle frequency.
// CHECK-LABEL: fx.graph @irfft_odd
// CHECK: loop.reduce "sum" over [3]
// CHECK: arith.cmpi eq, %{{.+}}, %c0
// CHECK-NOT: arith.ori
// CHECK: arith.select
fx.graph @irfft_odd(%x: tensor<3xcomplex<f32>>) -> tensor<5xf32> {
  %0 = fx.fft_c2r %x {dim = array<i64: 0>, normalization = 0, last_dim_size = 5} : (tensor<3xcomplex<f32>>) -> tensor<5xf32>
  fx.output %0 : tensor<5xf32>
}

// -----

// A longer signal whose length is a power of two runs a radix-2 FFT: the
// signal as complex numbers, a node that reads it in bit-reversed order (13
// bits for 8192: 12 shifts left, the lowest bit moving furthest), 13
// butterfly nodes, then the one-sided result read from the whole spectrum.
// CHECK-LABEL: fx.graph @long_rfft
// CHECK-SAME: (%[[X:.+]]: tensor<2x8192xf32>)
// CHECK: %[[SIGNAL:.+]] = loop.pointwise : tensor<2x8192xcomplex<f32>> {
// CHECK: %[[RE:.+]] = loop.load %[[X]]
// CHECK: complex.create %[[RE]], %cst
// CHECK: loop.pointwise : tensor<2x8192xcomplex<f32>> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-COUNT-12: arith.shli
// CHECK: loop.load %[[SIGNAL]][%[[I]], %{{.+}}]
// CHECK-COUNT-13: loop.pointwise : tensor<2x8192xcomplex<f32>> {
// CHECK: loop.pointwise : tensor<2x4097xcomplex<f32>> {
// CHECK-NOT: loop.pointwise
fx.graph @long_rfft(%x: tensor<2x8192xf32>) -> tensor<2x4097xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 1>, normalization = 0, onesided = true} : (tensor<2x8192xf32>) -> tensor<2x4097xcomplex<f32>>
  fx.output %0 : tensor<2x4097xcomplex<f32>>
}

// -----

// A butterfly: elements j and j + h of each group of 2h, the second turned
// by w = cos θ - i sin θ (θ = π j / h; here h = 4096), summed into the lower
// half and subtracted in the upper.
// CHECK-LABEL: fx.graph @long_rfft_butterfly
// CHECK-COUNT-14: loop.pointwise : tensor<8192xcomplex<f32>>
// CHECK: loop.pointwise : tensor<8192xcomplex<f32>> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index):
// CHECK: %[[J:.+]] = arith.andi %[[I]], %c4095
// CHECK: %[[HIGH:.+]] = arith.andi %[[I]], %c4096
// CHECK: %[[UPPER:.+]] = arith.cmpi ne, %[[HIGH]], %c0
// CHECK: %[[A:.+]] = loop.load %{{.+}}[%[[FIRST:.+]]]
// CHECK: %[[SECOND:.+]] = arith.addi %[[FIRST]], %c4096
// CHECK: loop.load %{{.+}}[%[[SECOND]]]
// CHECK: math.cos
// CHECK: math.sin
// CHECK: arith.negf
// CHECK: %[[SUB:.+]] = arith.subf
// CHECK: %[[ADD:.+]] = arith.addf
// CHECK: arith.select %[[UPPER]]
// CHECK: loop.pointwise : tensor<4097xcomplex<f32>>
fx.graph @long_rfft_butterfly(%x: tensor<8192xf32>) -> tensor<4097xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 0>, normalization = 0, onesided = true} : (tensor<8192xf32>) -> tensor<4097xcomplex<f32>>
  fx.output %0 : tensor<4097xcomplex<f32>>
}

// -----

// The inverse of a one-sided spectrum of 8192: frequencies above 4096 are
// the conjugates of their mirrors 8192 - k; the result is the real parts of
// the inverse transform (w = cos θ + i sin θ), scaled by 1/8192.
// CHECK-LABEL: fx.graph @long_irfft
// CHECK-SAME: (%[[Z:.+]]: tensor<4097xcomplex<f32>>)
// CHECK: loop.pointwise : tensor<8192xcomplex<f32>> {
// CHECK: %[[MIRRORED:.+]] = arith.cmpi ugt, %[[K:.+]], %c4096
// CHECK: arith.subi %c8192, %[[K]]
// CHECK: %[[AT:.+]] = arith.select %[[MIRRORED]], %{{.+}}, %[[K]]
// CHECK: %[[X:.+]] = loop.load %[[Z]][%[[AT]]]
// CHECK: %[[IM:.+]] = complex.im %[[X]]
// CHECK: %[[NEG:.+]] = arith.negf %[[IM]]
// CHECK: arith.select %[[MIRRORED]], %[[NEG]], %[[IM]]
// CHECK-NOT: arith.negf
// CHECK: loop.pointwise : tensor<8192xf32> {
// CHECK: complex.re
// CHECK: arith.mulf %{{.+}}, %cst
fx.graph @long_irfft(%z: tensor<4097xcomplex<f32>>) -> tensor<8192xf32> {
  %0 = fx.fft_c2r %z {dim = array<i64: 0>, normalization = 2, last_dim_size = 8192} : (tensor<4097xcomplex<f32>>) -> tensor<8192xf32>
  fx.output %0 : tensor<8192xf32>
}

// -----

// Transforms of more than 4096 elements in all run one dimension at a
// time: 100 (not a power of two) as two direct sums and a node pairing
// them, 64 by radix-2 butterflies (a bit-reversed read and 6 spans).
// CHECK-LABEL: fx.graph @separable_rfft2
// CHECK: loop.pointwise : tensor<100x64xcomplex<f32>>
// CHECK: loop.reduce "sum" over [100] : tensor<100x64xf32>
// CHECK: loop.reduce "sum" over [100] : tensor<100x64xf32>
// CHECK: loop.pointwise : tensor<100x64xcomplex<f32>>
// CHECK-COUNT-7: loop.pointwise : tensor<100x64xcomplex<f32>>
// CHECK: loop.pointwise : tensor<100x33xcomplex<f32>>
// CHECK-NOT: loop.{{pointwise|reduce}}
fx.graph @separable_rfft2(%x: tensor<100x64xf32>) -> tensor<100x33xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 0, 1>, normalization = 0, onesided = true} : (tensor<100x64xf32>) -> tensor<100x33xcomplex<f32>>
  fx.output %0 : tensor<100x33xcomplex<f32>>
}

// -----

// Tests that a longer transform of another length is Bluestein's: the
// signal times the chirp e^{-iπ k²/n} (k² reduced modulo 2n = 10000),
// zero-padded to 16384 and transformed (a bit-reversed read, 14 butterfly
// nodes), the kernel conj(chirp) at l and 16384 - l transformed alike, the
// inverse transform of their product, and the chirp times that over 16384.
// CHECK-LABEL: fx.graph @long_odd_rfft
// CHECK: %[[SCALE:.+]] = arith.constant 6.10351563E-5 : f32
// CHECK: loop.pointwise : tensor<5000xcomplex<f32>>
// CHECK: loop.pointwise : tensor<16384xcomplex<f32>>
// CHECK: arith.cmpi ult, %{{.+}}, %c5000
// CHECK: arith.minui %{{.+}}, %c4999
// CHECK: %[[SQUARE:.+]] = arith.muli %[[K:.+]], %[[K]] : index
// CHECK: arith.remui %[[SQUARE]], %c10000
// CHECK: math.cos
// CHECK-COUNT-14: loop.pointwise : tensor<16384xcomplex<f32>>
// CHECK: loop.pointwise : tensor<16384xcomplex<f32>>
// CHECK: arith.subi %c16384, %[[L:.+]] : index
// CHECK-COUNT-14: loop.pointwise : tensor<16384xcomplex<f32>>
// CHECK: loop.pointwise : tensor<16384xcomplex<f32>>
// CHECK-COUNT-14: loop.pointwise : tensor<16384xcomplex<f32>>
// CHECK: loop.pointwise : tensor<5000xcomplex<f32>>
// CHECK: arith.mulf %{{.+}}, %[[SCALE]]
// CHECK: loop.pointwise : tensor<2501xcomplex<f32>>
// CHECK-NOT: loop.pointwise
fx.graph @long_odd_rfft(%x: tensor<5000xf32>) -> tensor<2501xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 0>, normalization = 0, onesided = true} : (tensor<5000xf32>) -> tensor<2501xcomplex<f32>>
  fx.output %0 : tensor<2501xcomplex<f32>>
}

// -----

// Tests that complex-to-complex transforms run one dimension at a time: a
// direct sum along 6 (the real and imaginary parts, paired), radix-2
// butterflies along 64 with + in the exponent for the inverse, and the
// "ortho" scale 1/sqrt(384) at the end.
// CHECK-LABEL: fx.graph @complex_to_complex
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.0510310382 : f32
// CHECK: loop.reduce "sum" over [6] : tensor<6x64xf32>
// CHECK: loop.reduce "sum" over [6] : tensor<6x64xf32>
// CHECK: loop.pointwise : tensor<6x64xcomplex<f32>>
// CHECK-COUNT-7: loop.pointwise : tensor<6x64xcomplex<f32>>
// CHECK-NOT: arith.negf
// CHECK: loop.pointwise : tensor<6x64xcomplex<f32>>
// CHECK: arith.mulf %{{.+}}, %[[SCALE]]
// CHECK-NOT: loop.{{pointwise|reduce}}
fx.graph @complex_to_complex(%z: tensor<6x64xcomplex<f32>>) -> tensor<6x64xcomplex<f32>> {
  %0 = fx.fft_c2c %z {dim = array<i64: 0, 1>, normalization = 1, forward = false} : (tensor<6x64xcomplex<f32>>) -> tensor<6x64xcomplex<f32>>
  fx.output %0 : tensor<6x64xcomplex<f32>>
}

// -----

// Tests that the longest transform of a length other than a power of two,
// 2^23 - 1, is Bluestein's through three FFTs of 2^24 points (a
// bit-reversed read and 24 butterfly nodes each), with k² reduced modulo
// 2n = 2^24 - 2.
// CHECK-LABEL: fx.graph @longest_bluestein_transform
// CHECK-NOT: fx.fft_c2c
// CHECK: loop.pointwise : tensor<16777216xcomplex<f32>>
// CHECK: arith.remui %{{.+}}, %c16777214
// CHECK-COUNT-74: loop.pointwise : tensor<16777216xcomplex<f32>>
// CHECK-NOT: loop.pointwise : tensor<16777216xcomplex<f32>>
// CHECK: loop.pointwise : tensor<8388607xcomplex<f32>>
// CHECK-NOT: loop.pointwise
fx.graph @longest_bluestein_transform(%z: tensor<8388607xcomplex<f32>>) -> tensor<8388607xcomplex<f32>> {
  %0 = fx.fft_c2c %z {dim = array<i64: 0>, normalization = 0, forward = true} : (tensor<8388607xcomplex<f32>>) -> tensor<8388607xcomplex<f32>>
  fx.output %0 : tensor<8388607xcomplex<f32>>
}

// -----

// Tests that a transform along a dimension too long for Bluestein's
// transform (2^23 + 2) stays an fx op.
// CHECK-LABEL: fx.graph @too_long_complex_transform
// CHECK: fx.fft_c2c
fx.graph @too_long_complex_transform(%z: tensor<8388610xcomplex<f32>>) -> tensor<8388610xcomplex<f32>> {
  %0 = fx.fft_c2c %z {dim = array<i64: 0>, normalization = 0, forward = true} : (tensor<8388610xcomplex<f32>>) -> tensor<8388610xcomplex<f32>>
  fx.output %0 : tensor<8388610xcomplex<f32>>
}
