// kiln-opt col2im-stride-zero.mlir --kiln-lower-to-loop --kiln-loop-to-scf-cpu
// from test/Dialect/FX/invalid-pooling.mlir#22 (mutated): killed by signal 8
fx.graph @col2im_blocks(%x: tensor<2x12x50xf32>) {
  %0 = fx.col2im %x {kernel_size = array<i64: 2>, dilation = array<i64: 1>, padding = array<i64: 0>, stride = array<i64: 0>}
      : (tensor<2x12x50xf32>) -> tensor<2x3x8x8xf32>
  fx.output
}
