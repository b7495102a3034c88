// RUN: kiln-opt %s -split-input-file -verify-diagnostics --kiln-loop-to-gpu

fx.graph @reduce(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reductions are not lowered for this target yet}}
  %0 = loop.reduce "sum" over [8] : tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4xf32>
}
