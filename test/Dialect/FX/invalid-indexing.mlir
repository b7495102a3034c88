// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @index_nothing(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.index' op needs at least one index tensor}}
  %0 = fx.index %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @index_positions_count(%x: tensor<4x8xf32>, %i: tensor<3xsi64>) {
  // expected-error @+1 {{'fx.index' op `index_positions` has 2 entries for 1 index tensors}}
  %0 = fx.index %x, %i {index_positions = array<i64: 0, 1>} : (tensor<4x8xf32>, tensor<3xsi64>) -> tensor<3x8xf32>
  fx.output
}

// -----

fx.graph @index_positions_past_self(%x: tensor<4x8xf32>, %i: tensor<3xsi64>, %j: tensor<3xsi64>) {
  // expected-error @+1 {{'fx.index' op `index_positions` 9223372036854775807 is past the dimensions of `self` 'tensor<4x8xf32>'}}
  %0 = fx.index %x, %i, %j {index_positions = array<i64: 0, 9223372036854775807>} : (tensor<4x8xf32>, tensor<3xsi64>, tensor<3xsi64>) -> tensor<3xf32>
  fx.output
}

// -----

fx.graph @index_positions_order(%x: tensor<4x8xf32>, %i: tensor<3xsi64>) {
  // expected-error @+1 {{'fx.index' op `index_positions` must be increasing and not negative}}
  %0 = fx.index %x, %i, %i {index_positions = array<i64: 1, 0>} : (tensor<4x8xf32>, tensor<3xsi64>, tensor<3xsi64>) -> tensor<3xf32>
  fx.output
}

// -----

fx.graph @index_too_many(%x: tensor<4x8xf32>, %i: tensor<3xsi64>) {
  // expected-error @+1 {{'fx.index' op too many indices for `self` 'tensor<4x8xf32>': they cover 3 dimensions}}
  %0 = fx.index %x, %i {index_positions = array<i64: 2>} : (tensor<4x8xf32>, tensor<3xsi64>) -> tensor<4x8x3xf32>
  fx.output
}

// -----

fx.graph @index_broadcast(%x: tensor<4x8xf32>, %i: tensor<3xsi64>, %j: tensor<2xsi64>) {
  // expected-error @+1 {{'fx.index' op index tensors are not broadcastable: sizes 3 and 2 at dimension 0 of the broadcast result cannot be broadcast together}}
  %0 = fx.index %x, %i, %j : (tensor<4x8xf32>, tensor<3xsi64>, tensor<2xsi64>) -> tensor<3xf32>
  fx.output
}

// -----

fx.graph @index_mask(%x: tensor<4x8xf32>, %m: tensor<4x7xi1>) {
  // expected-error @+1 {{'fx.index' op mask 'tensor<4x7xi1>' does not match the dimensions of `self` 'tensor<4x8xf32>' that it indexes, from dimension 0}}
  %0 = fx.index %x, %m : (tensor<4x8xf32>, tensor<4x7xi1>) -> tensor<?xf32>
  fx.output
}

// -----

fx.graph @index_result(%x: tensor<4x8xf32>, %i: tensor<3xsi64>) {
  // expected-error @+1 {{'fx.index' op result type 'tensor<4x3xf32>' does not match the inferred type 'tensor<3x8xf32>'}}
  %0 = fx.index %x, %i : (tensor<4x8xf32>, tensor<3xsi64>) -> tensor<4x3xf32>
  fx.output
}

// -----

fx.graph @index_put_dtype(%x: tensor<4x8xf32>, %i: tensor<3xsi64>, %v: tensor<f16>) {
  // expected-error @+1 {{'fx.index_put' op `values` 'tensor<f16>' must have the dtype of `self` 'tensor<4x8xf32>'}}
  %0 = fx.index_put %x, %i, %v : (tensor<4x8xf32>, tensor<3xsi64>, tensor<f16>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @index_put_values(%x: tensor<4x8xf32>, %i: tensor<3xsi64>, %v: tensor<2x8xf32>) {
  // expected-error @+1 {{'fx.index_put' op `values` 'tensor<2x8xf32>' does not broadcast to the indexed shape [3, 8]}}
  %0 = fx.index_put %x, %i, %v : (tensor<4x8xf32>, tensor<3xsi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @index_select_rank(%x: tensor<4x8xf32>, %i: tensor<2x2xsi64>) {
  // expected-error @+1 {{'fx.index_select' op `index` 'tensor<2x2xsi64>' must have rank 0 or 1}}
  %0 = fx.index_select %x, %i {dim = 0} : (tensor<4x8xf32>, tensor<2x2xsi64>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @index_dtype(%x: tensor<4x8xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'fx.index_select' op operand #1 must be ranked tensor of PyTorch index dtype (si64, si32) values}}
  %0 = fx.index_select %x, %i {dim = 0} : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  fx.output
}

// -----

fx.graph @gather_rank(%x: tensor<4x8xf32>, %i: tensor<4xsi64>) {
  // expected-error @+1 {{'fx.gather' op `index` 'tensor<4xsi64>' must have the rank of `self` 'tensor<4x8xf32>'}}
  %0 = fx.gather %x, %i {dim = 1} : (tensor<4x8xf32>, tensor<4xsi64>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @gather_index_size(%x: tensor<4x8xf32>, %i: tensor<5x2xsi64>) {
  // expected-error @+1 {{'fx.gather' op `index` 'tensor<5x2xsi64>' is larger than `self` 'tensor<4x8xf32>' in dimension 0}}
  %0 = fx.gather %x, %i {dim = 1} : (tensor<4x8xf32>, tensor<5x2xsi64>) -> tensor<5x2xf32>
  fx.output
}

// -----

fx.graph @scatter_src_dtype(%x: tensor<4x8xf32>, %i: tensor<4x2xsi64>, %s: tensor<4x2xf16>) {
  // expected-error @+1 {{'fx.scatter' op `src` 'tensor<4x2xf16>' must have the dtype of `self` 'tensor<4x8xf32>'}}
  %0 = fx.scatter %x, %i, %s {dim = 1} : (tensor<4x8xf32>, tensor<4x2xsi64>, tensor<4x2xf16>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @scatter_src_rank(%x: tensor<4x8xf32>, %i: tensor<4x2xsi64>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'fx.scatter_add' op `src` 'tensor<8xf32>' must have the rank of `index` 'tensor<4x2xsi64>'}}
  %0 = fx.scatter_add %x, %i, %s {dim = 1} : (tensor<4x8xf32>, tensor<4x2xsi64>, tensor<8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @scatter_src_size(%x: tensor<4x8xf32>, %i: tensor<4x2xsi64>, %s: tensor<4x1xf32>) {
  // expected-error @+1 {{'fx.scatter' op `index` 'tensor<4x2xsi64>' is larger than `src` 'tensor<4x1xf32>' in dimension 1}}
  %0 = fx.scatter %x, %i, %s {dim = 1} : (tensor<4x8xf32>, tensor<4x2xsi64>, tensor<4x1xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @scatter_reduce_kind(%x: tensor<4x8xf32>, %i: tensor<4x2xsi64>) {
  // expected-error @+1 {{'fx.scatter_reduce' op attribute 'reduce' failed to satisfy constraint: string attribute whose value is one of 'sum', 'prod', 'mean', 'amax', 'amin'}}
  %0 = fx.scatter_reduce %x, %i, %x {dim = 1, reduce = "max"} : (tensor<4x8xf32>, tensor<4x2xsi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @embedding_weight(%w: tensor<10xf32>, %i: tensor<3xsi64>) {
  // expected-error @+1 {{'fx.embedding' op `weight` 'tensor<10xf32>' must be a matrix}}
  %0 = fx.embedding %w, %i : (tensor<10xf32>, tensor<3xsi64>) -> tensor<3xf32>
  fx.output
}

// -----

fx.graph @embedding_result(%w: tensor<10x4xf32>, %i: tensor<2x3xsi64>) {
  // expected-error @+1 {{'fx.embedding' op result type 'tensor<2x4xf32>' does not match the inferred type 'tensor<2x3x4xf32>'}}
  %0 = fx.embedding %w, %i : (tensor<10x4xf32>, tensor<2x3xsi64>) -> tensor<2x4xf32>
  fx.output
}

// -----

fx.graph @embedding_backward(%g: tensor<2x4xf32>, %i: tensor<2x3xsi64>) {
  // expected-error @+1 {{'fx.embedding_dense_backward' op `grad_output` 'tensor<2x4xf32>' must have the shape of `indices` 'tensor<2x3xsi64>' and one more dimension}}
  %0 = fx.embedding_dense_backward %g, %i {padding_idx = -1, scale_grad_by_freq = false} : (tensor<2x4xf32>, tensor<2x3xsi64>) -> tensor<10x4xf32>
  fx.output
}

// -----

fx.graph @masked_scatter_dtype(%x: tensor<4xf32>, %m: tensor<4xi1>, %s: tensor<4xf16>) {
  // expected-error @+1 {{'fx.masked_scatter' op `source` 'tensor<4xf16>' must have the dtype of `self` 'tensor<4xf32>'}}
  %0 = fx.masked_scatter %x, %m, %s : (tensor<4xf32>, tensor<4xi1>, tensor<4xf16>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @masked_scatter_broadcast(%x: tensor<4xf32>, %m: tensor<3xi1>) {
  // expected-error @+1 {{'fx.masked_scatter' op `self` 'tensor<4xf32>' and `mask` 'tensor<3xi1>' are not broadcastable}}
  %0 = fx.masked_scatter %x, %m, %x : (tensor<4xf32>, tensor<3xi1>, tensor<4xf32>) -> tensor<4xf32>
  fx.output
}
