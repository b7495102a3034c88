// kiln-opt load-through-reshape-bad-reassociation.mlir --kiln-gpu-pipeline=format=isa
// from test/Dialect/Loop/canonicalize.mlir#8 (mutated): killed by signal 6 in
// the canonicalization of loads through reshapes (a reassociation index out
// of range, which tensor.collapse_shape's verifier lets through)

fx.graph @load_through_merging_reshape(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %flat = tensor.collapse_shape %x [[4294967296, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %0 = loop.pointwise : tensor<32xf32> {
  ^bb0(%i: index):
    %v = loop.load %flat[%i] : tensor<32xf32>
    %s = arith.mulf %v, %v : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<32xf32>
}
