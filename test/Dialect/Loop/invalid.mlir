// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @missing_dynamic_size(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'loop.pointwise' op has 0 dynamic sizes, but its result 'tensor<?xf32>' has 1 dynamic dimensions}}
  %0 = loop.pointwise : tensor<?xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<?xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<?xf32>
}

// -----

fx.graph @wrong_arity(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'loop.pointwise' op body has 1 arguments, but the index space of 'tensor<4x4xf32>' has 2 dimensions}}
  %0 = loop.pointwise : tensor<4x4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i, %i] : tensor<4x4xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4x4xf32>
}

// -----

fx.graph @non_index_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.pointwise' op body argument #0 must be an index, but is 'i64'}}
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: i64):
    %c = arith.constant 1.0 : f32
    loop.yield %c : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @wrong_yield_type(%x: tensor<4xsi32>) -> tensor<4xsi32> {
  %0 = loop.pointwise : tensor<4xsi32> {
  ^bb0(%i: index):
    %c = arith.constant 1.0 : f32
    // expected-error @+1 {{'loop.yield' op yields 'f32', but the elements of 'tensor<4xsi32>' are computed as 'i32'}}
    loop.yield %c : f32
  }
  fx.output %0 : tensor<4xsi32>
}

// -----

fx.graph @load_rank(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    // expected-error @+1 {{'loop.load' op has 1 indices, but its source 'tensor<4x4xf32>' has rank 2}}
    %v = loop.load %x[%i] : tensor<4x4xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @yield_outside_node(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'loop.yield' op expects parent op 'loop.pointwise'}}
  loop.yield %c : f32
}
