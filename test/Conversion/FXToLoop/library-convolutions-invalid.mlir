// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-expand-convolutions))' -verify-diagnostics

// Without a library, a channels-last convolution has nowhere to run.
fx.graph @channels_last_without_library(%x: tensor<2x8x8x16xf16>, %w: tensor<32x3x3x16xf16>) -> tensor<2x6x6x32xf16> {
  // expected-error @+1 {{kiln-loop-expand-convolutions: a channels-last convolution is a convolution library's, and this target has none (only `library` leaves it)}}
  %0 = loop.convolution %x, %w {channels_last, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<2x8x8x16xf16>, tensor<32x3x3x16xf16> -> tensor<2x6x6x32xf16>
  fx.output %0 : tensor<2x6x6x32xf16>
}
