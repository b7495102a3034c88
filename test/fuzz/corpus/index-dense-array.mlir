// kiln-opt index-dense-array.mlir --kiln-lower-to-loop
// from test/Dialect/FX/reductions.mlir (mutated): killed by signal 11 in
// MLIR's parser (a dense array of index)
fx.graph @sum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = fx.sum %x {dim = array<index: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}
