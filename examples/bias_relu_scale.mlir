// A small captured graph: relu(x + bias) * scale - x, with a dynamic batch.
// Run it through Kiln's loop-level pipeline with:
//   kiln-opt --kiln-lower-to-loop examples/bias_relu_scale.mlir
fx.graph @forward(%x: tensor<?x64xf32>, %bias: tensor<64xf32>,
                  %scale: tensor<?x1xf32>) -> tensor<?x64xf32> {
  %0 = fx.add %x, %bias : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = fx.relu %0 : tensor<?x64xf32>
  %2 = fx.mul %1, %scale : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  %3 = fx.sub %2, %x : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  fx.output %3 : tensor<?x64xf32>
}
