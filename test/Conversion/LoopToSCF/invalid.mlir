// RUN: kiln-opt %s -split-input-file -verify-diagnostics --kiln-loop-to-scf

fx.graph @not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kiln-loop-to-scf: 'fx.relu' has no buffer form; lower the graph to loop nodes first}}
  %0 = fx.relu %x : tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}


// -----

fx.graph @dynamic_expand(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %m = tensor.dim %x, %c0 : tensor<?x8xf32>
  %n = arith.divui %m, %c2 : index
  %y = loop.matmul(%m) %x, %w : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  // expected-error @+1 {{kiln-loop-to-scf: a tensor.expand_shape with dynamic sizes has no buffer form}}
  %r = tensor.expand_shape %y [[0, 1], [2]] output_shape [%n, 2, 4] : tensor<?x4xf32> into tensor<?x2x4xf32>
  fx.output %r : tensor<?x2x4xf32>
}

// -----

fx.graph @missing_resource(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{the frozen constant's resource 'nowhere' is missing}}
  %w = arith.constant dense_resource<nowhere> : tensor<2xf32>
  %0 = loop.pointwise : tensor<2xf32> {
  ^bb0(%i0: index):
    %a = loop.load %x[%i0] : tensor<2xf32>
    %b = loop.load %w[%i0] : tensor<2xf32>
    %c = arith.mulf %a, %b : f32
    loop.yield %c : f32
  }
  fx.output %0 : tensor<2xf32>
}

// -----

fx.graph @short_resource(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{the frozen constant's resource 'short' does not hold 8 bytes}}
  %w = arith.constant dense_resource<short> : tensor<2xf32>
  %0 = loop.pointwise : tensor<2xf32> {
  ^bb0(%i0: index):
    %a = loop.load %x[%i0] : tensor<2xf32>
    %b = loop.load %w[%i0] : tensor<2xf32>
    %c = arith.mulf %a, %b : f32
    loop.yield %c : f32
  }
  fx.output %0 : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F"
    }
  }
#-}

// -----

// A temporary whose bytes do not fit in 2^48 (nor, multiplied out, in
// int64_t) is refused by name, not planned into a workspace that wrapped
// around to a small size.
fx.graph @huge_temporary(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a result of 'tensor<4611686018427387904x4xf32>' takes 2^48 bytes or more, more than Kiln plans}}
  %a = loop.pointwise : tensor<4611686018427387904x4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%j] : tensor<4xf32>
    loop.yield %v : f32
  }
  %b = loop.pointwise : tensor<4xf32> {
  ^bb0(%j: index):
    %c0 = arith.constant 0 : index
    %v = loop.load %a[%c0, %j] : tensor<4611686018427387904x4xf32>
    loop.yield %v : f32
  }
  fx.output %b : tensor<4xf32>
}

// -----

fx.graph @dim_out_of_range(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c = arith.constant -2147483648 : index
  // expected-error @+1 {{dimension -2147483648 of a tensor of rank 2 does not exist}}
  %n = tensor.dim %x, %c : tensor<?x64xf32>
  %y = loop.pointwise(%n) : tensor<?x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<?x64xf32>
    loop.yield %v : f32
  }
  fx.output %y : tensor<?x64xf32>
}
