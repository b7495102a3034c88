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

// A load at a block argument past the node's dimensions leaves the error
// to the node.
fx.graph @load_at_an_extra_argument(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.pointwise' op body has 2 arguments, but the index space of 'tensor<4xf32>' has 1 dimensions}}
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<4x4xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

// A broadcast read at its induction variable instead of index 0.
fx.graph @load_past_a_broadcast_dimension(%x: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %0 = loop.pointwise : tensor<4x3xf32> {
  ^bb0(%i: index, %j: index):
    // expected-error @+1 {{'loop.load' op reads dimension 1 of its source (size 1) at an induction variable that runs to 2}}
    %v = loop.load %x[%i, %j] : tensor<4x1xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4x3xf32>
}

// -----

fx.graph @load_past_a_short_dimension(%x: tensor<8xf32>) -> tensor<f32> {
  %0 = loop.reduce "sum" over [10] : tensor<f32> {
  ^bb0(%k: index):
    // expected-error @+1 {{'loop.load' op reads dimension 0 of its source (size 8) at an induction variable that runs to 9}}
    %v = loop.load %x[%k] : tensor<8xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<f32>
}

// -----

fx.graph @yield_outside_node(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'loop.yield' op expects parent op to be one of 'loop.pointwise, loop.reduce, loop.matmul, loop.attention, loop.attention_backward'}}
  loop.yield %c : f32
}

// -----

fx.graph @unknown_combiner(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.reduce' op combiner must be "sum", "prod", "max", "min" or "welford", not "mean"}}
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

// -----

fx.graph @kernel_reads_columns(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %k:2 = loop.kernel rows(1) -> tensor<8x64xf32>, tensor<8x64xf32> {
    %a = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    %b = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      // expected-error @+1 {{'loop.load' op reads a value of its kernel other than at its own row; only row values (one element per row) can be read inside a kernel}}
      %v = loop.load %a[%i, %j] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    loop.kernel_yield %a, %b : tensor<8x64xf32>, tensor<8x64xf32>
  }
  fx.output %k#1 : tensor<8x64xf32>
}

// -----

fx.graph @kernel_reads_another_row(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %k = loop.kernel rows(1) -> tensor<8x64xf32> {
    %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      // expected-error @+1 {{reads a value of its kernel other than at its own row}}
      %s = loop.load %m[%c0, %c0] : tensor<8x1xf32>
      loop.yield %s : f32
    }
    loop.kernel_yield %y : tensor<8x64xf32>
  }
  fx.output %k : tensor<8x64xf32>
}

// -----

fx.graph @kernel_reduces_columns(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  %k = loop.kernel rows(1) -> tensor<8xf32> {
    // expected-error @+1 {{'loop.reduce' op reduces into 'tensor<8x4xf32>', which has more than the kernel's 1 row dimensions (besides size-1 ones)}}
    %m = loop.reduce "sum" over [16] : tensor<8x4xf32> {
    ^bb0(%i: index, %j: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce "sum" over [4] : tensor<8xf32> {
    ^bb0(%i: index, %r: index):
      %c0 = arith.constant 0 : index
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    loop.kernel_yield %s : tensor<8xf32>
  }
  fx.output %k : tensor<8xf32>
}

// -----

fx.graph @kernel_drops_columns(%x: tensor<8x64xf32>) -> tensor<8x1xf32> {
  %k = loop.kernel rows(1) -> tensor<8x1xf32> {
    %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    // expected-error @+1 {{'loop.pointwise' op has columns, so the kernel must yield it}}
    %y = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    loop.kernel_yield %m : tensor<8x1xf32>
  }
  fx.output %k : tensor<8x1xf32>
}

// -----

fx.graph @kernel_rows_differ(%x: tensor<8x64xf32>, %y: tensor<4x64xf32>) -> (tensor<8x1xf32>, tensor<4x1xf32>) {
  %k:2 = loop.kernel rows(1) -> tensor<8x1xf32>, tensor<4x1xf32> {
    %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    // expected-error @+1 {{'loop.reduce' op has rows [4], but the kernel's first node has [8]}}
    %n = loop.reduce "sum" over [64] : tensor<4x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %y[%i, %r] : tensor<4x64xf32>
      loop.yield %v : f32
    }
    loop.kernel_yield %m, %n : tensor<8x1xf32>, tensor<4x1xf32>
  }
  fx.output %k#0, %k#1 : tensor<8x1xf32>, tensor<4x1xf32>
}

// -----

fx.graph @kernel_yield_types(%x: tensor<8x64xf32>) -> tensor<8x1xf64> {
  %k = loop.kernel rows(1) -> tensor<8x1xf64> {
    %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    // expected-error @+1 {{'loop.kernel_yield' op yields 'tensor<8x1xf32>', but the kernel returns 'tensor<8x1xf64>'}}
    loop.kernel_yield %m : tensor<8x1xf32>
  }
  fx.output %k : tensor<8x1xf64>
}

// -----

fx.graph @matmul_rank(%x: tensor<8xf32>, %w: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.matmul' op multiplies 'tensor<8xf32>' by 'tensor<8x4xf32>' into 'tensor<4xf32>': all three must have the same rank, at least 2}}
  %y = loop.matmul %x, %w : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
  fx.output %y : tensor<4xf32>
}

// -----

fx.graph @matmul_integer(%x: tensor<2x8xi32>, %w: tensor<8x4xi32>) -> tensor<2x4xi32> {
  // expected-error @+1 {{'loop.matmul' op multiplies 'i32' elements; only floating-point ones are supported}}
  %y = loop.matmul %x, %w : tensor<2x8xi32>, tensor<8x4xi32> -> tensor<2x4xi32>
  fx.output %y : tensor<2x4xi32>
}

// -----

fx.graph @matmul_mixed(%x: tensor<2x8xbf16>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'loop.matmul' op multiplies 'bf16' by 'f32': the element types must be equal}}
  %y = loop.matmul %x, %w : tensor<2x8xbf16>, tensor<8x4xf32> -> tensor<2x4xf32>
  fx.output %y : tensor<2x4xf32>
}

// -----

fx.graph @matmul_sizes(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'loop.matmul' op has 0 dynamic sizes, but its result 'tensor<?x4xf32>' has 1 dynamic dimensions}}
  %y = loop.matmul %x, %w : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  fx.output %y : tensor<?x4xf32>
}

// -----

fx.graph @matmul_batch(%x: tensor<2x3x8xf32>, %w: tensor<3x8x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'loop.matmul' op has batch dimension 0 of sizes 2, 3 and 2 in lhs, rhs and result; they must be equal}}
  %y = loop.matmul %x, %w : tensor<2x3x8xf32>, tensor<3x8x4xf32> -> tensor<2x3x4xf32>
  fx.output %y : tensor<2x3x4xf32>
}

// -----

fx.graph @matmul_contraction(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'loop.matmul' op contracts K = 8 of the lhs with K = 4 of the rhs}}
  %y = loop.matmul %x, %w : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  fx.output %y : tensor<2x8xf32>
}

// -----

fx.graph @matmul_result(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'loop.matmul' op computes an M x N = 2 x 4 product into 'tensor<2x8xf32>'}}
  %y = loop.matmul %x, %w {transpose_rhs} : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  fx.output %y : tensor<2x8xf32>
}

// -----

fx.graph @matmul_rounding(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{'loop.matmul' op multiplies 'f32' matrices into 'bf16' elements without an epilogue: the result must be 'f32'}}
  %y = loop.matmul %x, %w : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xbf16>
  fx.output %y : tensor<2x4xbf16>
}

// -----

fx.graph @matmul_half_result(%x: tensor<2x8xbf16>, %w: tensor<8x4xbf16>) -> tensor<2x4xf16> {
  // expected-error @+1 {{'loop.matmul' op multiplies 'bf16' matrices into 'f16' elements without an epilogue: the result must be 'bf16' or f32}}
  %y = loop.matmul %x, %w : tensor<2x8xbf16>, tensor<8x4xbf16> -> tensor<2x4xf16>
  fx.output %y : tensor<2x4xf16>
}

// -----

fx.graph @epilogue_arguments(%x: tensor<2x8xbf16>, %w: tensor<8x4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{'loop.matmul' op epilogue takes 'index', 'index', 'bf16', but must take 2 indices and the 'f32' sum}}
  %y = loop.matmul %x, %w : tensor<2x8xbf16>, tensor<8x4xbf16> -> tensor<2x4xbf16> epilogue {
  ^bb0(%i: index, %j: index, %s: bf16):
    loop.yield %s : bf16
  }
  fx.output %y : tensor<2x4xbf16>
}

// -----

fx.graph @epilogue_yield(%x: tensor<2x8xbf16>, %w: tensor<8x4xbf16>) -> tensor<2x4xbf16> {
  %y = loop.matmul %x, %w : tensor<2x8xbf16>, tensor<8x4xbf16> -> tensor<2x4xbf16> epilogue {
  ^bb0(%i: index, %j: index, %s: f32):
    // expected-error @+1 {{'loop.yield' op yields 'f32', but the elements of 'tensor<2x4xbf16>' are computed as 'bf16'}}
    loop.yield %s : f32
  }
  fx.output %y : tensor<2x4xbf16>
}

// -----

fx.graph @scatter_combiner(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.scatter' op combiner must be "sum", "prod", "max", "min" or "assign", not "mean"}}
  %0 = loop.scatter "mean" %x over [4] : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    loop.scatter_yield %v at [%i] : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @scatter_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'loop.scatter' op combines floats or integers, not 'i1'}}
  %0 = loop.scatter "max" %x over [4] : tensor<4xi1> -> tensor<4xi1> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xi1>
    loop.scatter_yield %v at [%i] : i1
  }
  fx.output %0 : tensor<4xi1>
}

// -----

fx.graph @scatter_indices(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = loop.scatter "sum" %x over [4] : tensor<4x2xf32> -> tensor<4x2xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i, %i] : tensor<4x2xf32>
    // expected-error @+1 {{'loop.scatter_yield' op yields 1 indices into 'tensor<4x2xf32>'}}
    loop.scatter_yield %v at [%i] : f32
  }
  fx.output %0 : tensor<4x2xf32>
}

// -----

fx.graph @scatter_value(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = loop.scatter "sum" %x over [4] : tensor<4xbf16> -> tensor<4xbf16> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xbf16>
    %w = arith.extf %v : bf16 to f32
    // expected-error @+1 {{'loop.scatter_yield' op yields 'f32', but the elements of 'tensor<4xbf16>' are 'bf16'}}
    loop.scatter_yield %w at [%i] : f32
  }
  fx.output %0 : tensor<4xbf16>
}

// -----

fx.graph @scatter_init(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'loop.scatter' op starts from 'tensor<4xf32>', but defines 'tensor<5xf32>'}}
  %0 = loop.scatter "sum" %x over [4] : tensor<4xf32> -> tensor<5xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    loop.scatter_yield %v at [%i] : f32
  }
  fx.output %0 : tensor<5xf32>
}

// -----

fx.graph @welford_of_integers(%x: tensor<4x8xsi32>) -> tensor<4xsi32> {
  // expected-error @+1 {{'loop.reduce' op "welford" reduces floats, not 'si32'}}
  %0 = loop.reduce "welford" over [8] : tensor<4xsi32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x8xsi32>
    loop.yield %v : i32
  }
  fx.output %0 : tensor<4xsi32>
}

// -----

fx.graph @convolution_output_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'loop.convolution' op has 8 outputs in spatial dimension 0, but its input, filters and attributes give 6}}
  %y = loop.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  fx.output %y : tensor<1x4x8x8xf32>
}

// -----

fx.graph @convolution_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'loop.convolution' op convolves 3 channels with 'tensor<4x3x3x3xf32>' in 2 groups into 4 channels: channels and filters must split into the groups, each filter reading its group's channels}}
  %y = loop.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  fx.output %y : tensor<1x4x6x6xf32>
}

// -----

fx.graph @convolution_attribute_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'loop.convolution' op has 1 `stride` entries for 2 spatial dimensions}}
  %y = loop.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  fx.output %y : tensor<1x4x6x6xf32>
}

// -----

fx.graph @convolution_result_type(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>) -> tensor<1x4x6x6xf16> {
  // expected-error @+1 {{'loop.convolution' op holds 'bf16' sums in 'f16'; the result must be 'bf16' or f32}}
  %y = loop.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x6x6xf16>
  fx.output %y : tensor<1x4x6x6xf16>
}

// -----

fx.graph @convolution_dynamic_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'loop.convolution' op has a dynamic number of channels; only the batch and spatial sizes may be dynamic}}
  %y = loop.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x?x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  fx.output %y : tensor<1x4x6x6xf32>
}

// -----

fx.graph @convolution_dynamic_on_one_side(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'loop.convolution' op has a dynamic size in spatial dimension 0 of only one of its input and result}}
  %y = loop.convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  fx.output %y : tensor<1x4x6x6xf32>
}

// -----

fx.graph @negative_reduction_extent(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.reduce' op reduction extent -3 is negative}}
  %0 = loop.reduce "sum" over [-3] : tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

// MLIR's marker of a dynamic size, written as a number, has no size operand.
fx.graph @dynamic_marker_without_a_size(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.reduce' op has 0 dynamic reduction sizes, but 1 dynamic reduction extents}}
  %0 = loop.reduce "sum" over [-9223372036854775808] : tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @negative_update_extent(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loop.scatter' op update extent -1 is negative}}
  %0 = loop.scatter "sum" %x over [-1] : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    loop.scatter_yield %v at [%i] : f32
  }
  fx.output %0 : tensor<4xf32>
}

// -----

fx.graph @check_not_0d(%x: tensor<4xsi32>) {
  // expected-error @+1 {{'loop.check' op operand #0 must be 0D tensor of integer values}}
  loop.check %x, "RuntimeError: ZeroDivisionError" : tensor<4xsi32>
  fx.output
}

// -----

fx.graph @convolution_channels_last_groups(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<1x6x6x4xf32> {
  // expected-error @+1 {{'loop.convolution' op convolves 3 channels with 'tensor<4x3x3x2xf32>' in 1 groups into 4 channels: channels and filters must split into the groups, each filter reading its group's channels}}
  %y = loop.convolution %x, %w {channels_last, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x8x8x3xf32>, tensor<4x3x3x2xf32> -> tensor<1x6x6x4xf32>
  fx.output %y : tensor<1x6x6x4xf32>
}

// -----

fx.graph @convolution_channels_last_output_size(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x8x6x4xf32> {
  // expected-error @+1 {{'loop.convolution' op has 8 outputs in spatial dimension 0, but its input, filters and attributes give 6}}
  %y = loop.convolution %x, %w {channels_last, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<1x8x6x4xf32>
  fx.output %y : tensor<1x8x6x4xf32>
}

// -----

fx.graph @convolution_channels_last_dynamic_channels(%x: tensor<1x8x8x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x6x4xf32> {
  // expected-error @+1 {{'loop.convolution' op has a dynamic number of channels; only the batch and spatial sizes may be dynamic}}
  %y = loop.convolution %x, %w {channels_last, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : tensor<1x8x8x?xf32>, tensor<4x3x3x3xf32> -> tensor<1x6x6x4xf32>
  fx.output %y : tensor<1x6x6x4xf32>
}

// -----

fx.graph @attention_rank(%q: tensor<8xbf16>, %k: tensor<4x8xbf16>) -> tensor<8xbf16> {
  // expected-error @+1 {{'loop.attention' op attends with 'tensor<8xbf16>', 'tensor<4x8xbf16>' and 'tensor<4x8xbf16>' into 'tensor<8xbf16>': all four must have the same rank, at least 2}}
  %o = loop.attention %q, %k, %k {scale = 1.0 : f64} : tensor<8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<8xbf16>
  fx.output %o : tensor<8xbf16>
}

// -----

fx.graph @attention_integers(%q: tensor<2x8xi32>) -> tensor<2x8xi32> {
  // expected-error @+1 {{'loop.attention' op attends with 'i32' elements; only floating-point ones are supported}}
  %o = loop.attention %q, %q, %q {scale = 1.0 : f64} : tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi32> -> tensor<2x8xi32>
  fx.output %o : tensor<2x8xi32>
}

// -----

fx.graph @attention_mixed(%q: tensor<2x8xbf16>, %k: tensor<3x8xf16>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{'loop.attention' op attends with 'bf16' queries, 'f16' keys and 'f16' values into 'bf16' elements: the element types must be equal}}
  %o = loop.attention %q, %k, %k {scale = 1.0 : f64} : tensor<2x8xbf16>, tensor<3x8xf16>, tensor<3x8xf16> -> tensor<2x8xbf16>
  fx.output %o : tensor<2x8xbf16>
}

// -----

fx.graph @attention_dynamic_head(%q: tensor<2x?xf32>, %k: tensor<3x?xf32>) -> tensor<2x?xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.dim %q, %c1 : tensor<2x?xf32>
  // expected-error @+1 {{'loop.attention' op has dynamic head sizes; they must be static}}
  %o = loop.attention(%e) %q, %k, %k {scale = 1.0 : f64} : tensor<2x?xf32>, tensor<3x?xf32>, tensor<3x?xf32> -> tensor<2x?xf32>
  fx.output %o : tensor<2x?xf32>
}

// -----

fx.graph @attention_missing_size(%q: tensor<?x8xf32>, %k: tensor<3x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'loop.attention' op has 0 dynamic sizes, but its result 'tensor<?x8xf32>' has 1 dynamic dimensions}}
  %o = loop.attention %q, %k, %k {scale = 1.0 : f64} : tensor<?x8xf32>, tensor<3x8xf32>, tensor<3x8xf32> -> tensor<?x8xf32>
  fx.output %o : tensor<?x8xf32>
}

// -----

fx.graph @attention_batches(%q: tensor<2x4x8xf32>, %k: tensor<3x5x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'loop.attention' op has batch dimension 0 of sizes 2, 3, 3 and 2 in query, key, value and result; they must be equal}}
  %o = loop.attention %q, %k, %k {scale = 1.0 : f64} : tensor<2x4x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32> -> tensor<2x4x8xf32>
  fx.output %o : tensor<2x4x8xf32>
}

// -----

fx.graph @attention_head_sizes(%q: tensor<4x8xf32>, %k: tensor<5x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'loop.attention' op scores queries of 8 elements against keys of 16; they must be equal}}
  %o = loop.attention %q, %k, %k {scale = 1.0 : f64} : tensor<4x8xf32>, tensor<5x16xf32>, tensor<5x16xf32> -> tensor<4x16xf32>
  fx.output %o : tensor<4x16xf32>
}

// -----

fx.graph @attention_values(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'loop.attention' op has 5 keys but 6 values}}
  %o = loop.attention %q, %k, %v {scale = 1.0 : f64} : tensor<4x8xf32>, tensor<5x8xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  fx.output %o : tensor<4x8xf32>
}

// -----

fx.graph @attention_result(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x16xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'loop.attention' op computes 4 queries' sums of 16 values into 'tensor<4x8xf32>'}}
  %o = loop.attention %q, %k, %v {scale = 1.0 : f64} : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x16xf32> -> tensor<4x8xf32>
  fx.output %o : tensor<4x8xf32>
}

// -----

fx.graph @attention_scores_arguments(%q: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'loop.attention' op scores region takes 'index', 'bf16', but must take 2 indices and the 'f32' score}}
  %o = loop.attention %q, %q, %q {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16> scores {
  ^bb0(%i: index, %s: bf16):
    %e = arith.extf %s : bf16 to f32
    loop.yield %e : f32
  }
  fx.output %o : tensor<4x8xbf16>
}

// -----

fx.graph @attention_scores_yield(%q: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %o = loop.attention %q, %q, %q {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16> scores {
  ^bb0(%i: index, %j: index, %s: f32):
    %t = arith.truncf %s : f32 to bf16
    // expected-error @+1 {{'loop.yield' op yields 'bf16', but scores are 'f32'}}
    loop.yield %t : bf16
  }
  fx.output %o : tensor<4x8xbf16>
}

// -----

fx.graph @attention_logsumexp(%q: tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16> {
  // expected-error @+1 {{'loop.attention' op has logsumexp 'tensor<2x4xbf16>', but its queries' rows need 'tensor<2x4xf32>'}}
  %o:2 = loop.attention %q, %q, %q {scale = 1.0 : f64} : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>, tensor<2x4xbf16>
  fx.output %o#0 : tensor<2x4x8xbf16>
}

// -----

fx.graph @attention_backward_delta(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %lse: tensor<4xf32>, %delta: tensor<6xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'loop.attention_backward' op has delta 'tensor<6xf32>', but its queries' rows need 'tensor<4xf32>'}}
  %g:3 = loop.attention_backward %q, %k, %k, %q, %lse, %delta {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<6xf32> -> tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>
  fx.output %g#0 : tensor<4x8xbf16>
}

// -----

fx.graph @attention_backward_gradient(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %lse: tensor<4xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'loop.attention_backward' op computes the key's gradient as 'tensor<6x8xf32>', but the key is 'tensor<6x8xbf16>'}}
  %g:3 = loop.attention_backward %q, %k, %k, %q, %lse, %lse {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xbf16>, tensor<6x8xf32>, tensor<6x8xbf16>
  fx.output %g#0 : tensor<4x8xbf16>
}

// -----

fx.graph @attention_backward_sizes(%q: tensor<?x8xbf16>, %k: tensor<6x8xbf16>, %do: tensor<?x8xbf16>, %lse: tensor<?xf32>) -> tensor<?x8xbf16> {
  // expected-error @+1 {{'loop.attention_backward' op has 0 query sizes, but its gradient 'tensor<?x8xbf16>' has 1 dynamic dimensions}}
  %g:3 = loop.attention_backward %q, %k, %k, %do, %lse, %lse {scale = 1.0 : f64} : tensor<?x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<?x8xbf16>, tensor<?xf32>, tensor<?xf32> -> tensor<?x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>
  fx.output %g#0 : tensor<?x8xbf16>
}

// -----

fx.graph @attention_backward_operands(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %do: tensor<4x16xbf16>, %lse: tensor<4xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'loop.attention_backward' op computes 4 queries' sums of 8 values into 'tensor<4x16xbf16>'}}
  %g:3 = loop.attention_backward %q, %k, %k, %do, %lse, %lse {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<4x16xbf16>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>
  fx.output %g#0 : tensor<4x8xbf16>
}

// -----

// A soft cap changes the score's gradient, which the node does not compute.
fx.graph @attention_backward_soft_cap(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %lse: tensor<4xf32>) -> tensor<4x8xbf16> {
  %g:3 = loop.attention_backward %q, %k, %k, %q, %lse, %lse {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> scores {
  ^bb0(%i: index, %j: index, %s: f32):
    %t = math.tanh %s : f32
    // expected-error @+1 {{'loop.yield' op yields a score whose gradient is not the score's: the backward scores region may only add values that do not depend on the score, or hide it with -inf}}
    loop.yield %t : f32
  }
  fx.output %g#0 : tensor<4x8xbf16>
}

// -----

// The score on both sides of a sum doubles its gradient.
fx.graph @attention_backward_doubled(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %lse: tensor<4xf32>) -> tensor<4x8xbf16> {
  %g:3 = loop.attention_backward %q, %k, %k, %q, %lse, %lse {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> scores {
  ^bb0(%i: index, %j: index, %s: f32):
    %t = arith.addf %s, %s : f32
    // expected-error @+1 {{'loop.yield' op yields a score whose gradient is not the score's}}
    loop.yield %t : f32
  }
  fx.output %g#0 : tensor<4x8xbf16>
}

// -----

// A select between the score and another finite value cuts its gradient.
fx.graph @attention_backward_clamped(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %lse: tensor<4xf32>) -> tensor<4x8xbf16> {
  %g:3 = loop.attention_backward %q, %k, %k, %q, %lse, %lse {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16> scores {
  ^bb0(%i: index, %j: index, %s: f32):
    %zero = arith.constant 0.0 : f32
    %later = arith.cmpi ugt, %j, %i : index
    %t = arith.select %later, %zero, %s : f32
    // expected-error @+1 {{'loop.yield' op yields a score whose gradient is not the score's}}
    loop.yield %t : f32
  }
  fx.output %g#0 : tensor<4x8xbf16>
}
