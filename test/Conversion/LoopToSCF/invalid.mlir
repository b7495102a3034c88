// RUN: kiln-opt %s -split-input-file -verify-diagnostics --kiln-loop-to-scf

fx.graph @not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kiln-loop-to-scf: 'fx.relu' has no buffer form; lower the graph to loop nodes first}}
  %0 = fx.relu %x : tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

