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
  // expected-error @+1 {{'loop.yield' op expects parent op to be one of 'loop.pointwise, loop.reduce'}}
  loop.yield %c : f32
}

// -----

fx.graph @unknown_combiner(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.reduce' op combiner must be "sum", "prod", "max" or "min", not "mean"}}
  %0 = loop.reduce "mean" over [8] : tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @reduce_arity(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.reduce' op body has 1 arguments, but the result 'tensor<4xf32>' and the reduction space have 2 dimensions}}
  %0 = loop.reduce "sum" over [8] : tensor<4xf32> {
  ^bb0(%i: index):
    %c = arith.constant 1.0 : f32
    loop.yield %c : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @reduce_accumulator(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = loop.reduce "sum" over [8] : tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %c = arith.constant 1.0 : f64
    // expected-error @+1 {{'loop.yield' op yields 'f64', but the elements of 'tensor<4xf32>' accumulate as 'f32'}}
    loop.yield %c : f64
  }
  fx.output %0 : tensor<4xf32>
}
