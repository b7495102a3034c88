// kiln-opt crash-f435d54f32f5.mlir --kiln-gpu-pipeline=format=isa
// from test/Dialect/Loop/ops.mlir#5 (mutated): killed by signal 11

fx.graph @matmul(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %a: tensor<2x16x8xf32>, %b: tensor<2x16x4xf32>) -> (tensor<?x128xbf16>, tensor<2x8x4xf32>) {
  %c0 = arith.constant -2147483648 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %y = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16>
  %z = loop.matmul %a, %b {transpose_lhs} : tensor<2x16x8xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  fx.output %y, %z : tensor<?x128xbf16>, tensor<2x8x4xf32>
}

