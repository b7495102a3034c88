// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @view_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.view' op cannot view 'tensor<4x8xf32>' (32 elements) as 'tensor<4x4xf32>' (16 elements)}}
  %0 = fx.view %x : (tensor<4x8xf32>) -> tensor<4x4xf32>
  fx.output
}

// -----

fx.graph @view_dtype(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.view' op result 'tensor<32xf16>' must have the dtype of `self` 'tensor<4x8xf32>'}}
  %0 = fx.view %x : (tensor<4x8xf32>) -> tensor<32xf16>
  fx.output
}

// -----

fx.graph @expand_non_one(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{'fx.expand' op cannot expand 'tensor<3x1xf32>' to 'tensor<4x5xf32>': only size-1 dimensions stretch, and new ones lead}}
  %0 = fx.expand %x : (tensor<3x1xf32>) -> tensor<4x5xf32>
  fx.output
}

// -----

// Tests that expanding a static size keeps it static.
fx.graph @expand_to_dynamic(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{'fx.expand' op cannot expand 'tensor<3x1xf32>' to 'tensor<?x5xf32>'}}
  %0 = fx.expand %x : (tensor<3x1xf32>) -> tensor<?x5xf32>
  fx.output
}

// -----

fx.graph @permute_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'fx.permute' op `dims` has 2 entries, but `self` 'tensor<2x3x4xf32>' has rank 3}}
  %0 = fx.permute %x {dims = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  fx.output
}

// -----

fx.graph @permute_repeat(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'fx.permute' op `dims` names dimension 0 more than once}}
  %0 = fx.permute %x {dims = array<i64: 0, 1, -3>} : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
  fx.output
}

// -----

fx.graph @permute_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'fx.permute' op result type 'tensor<2x3x4xf32>' does not match the inferred type 'tensor<4x2x3xf32>'}}
  %0 = fx.permute %x {dims = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  fx.output
}

// -----

// Tests that squeeze keeps a `?` dimension, which is never 1.
fx.graph @squeeze_dynamic(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'fx.squeeze' op result type 'tensor<3xf32>' does not match the inferred type 'tensor<?x3xf32>'}}
  %0 = fx.squeeze %x {dim = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  fx.output
}

// -----

fx.graph @unsqueeze_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'fx.unsqueeze' op `dim` 3 is out of range for a tensor of rank 3 (expected [-3, 2])}}
  %0 = fx.unsqueeze %x {dim = 3} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  fx.output
}

// -----

fx.graph @slice_zero_dim(%x: tensor<f32>) {
  // expected-error @+1 {{'fx.slice' op cannot slice a zero-dim tensor}}
  %0 = fx.slice %x : (tensor<f32>) -> tensor<f32>
  fx.output
}

// -----

fx.graph @slice_step(%x: tensor<8xf32>) {
  // expected-error @+1 {{'fx.slice' op `step` must be positive, but is 0}}
  %0 = fx.slice %x {step = 0} : (tensor<8xf32>) -> tensor<8xf32>
  fx.output
}

// -----

fx.graph @slice_size(%x: tensor<8xf32>) {
  // expected-error @+1 {{'fx.slice' op result type 'tensor<4xf32>' does not match the inferred type 'tensor<3xf32>'}}
  %0 = fx.slice %x {start = 2, end = 8, step = 2} : (tensor<8xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @select_zero_dim(%x: tensor<f32>) {
  // expected-error @+1 {{'fx.select' op cannot select from a zero-dim tensor}}
  %0 = fx.select %x {dim = 0, index = 0} : (tensor<f32>) -> tensor<f32>
  fx.output
}

// -----

fx.graph @select_index(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.select' op `index` -5 is out of range for dimension 0 of size 4}}
  %0 = fx.select %x {dim = 0, index = -5} : (tensor<4x8xf32>) -> tensor<8xf32>
  fx.output
}

// -----

fx.graph @cat_nothing() {
  // expected-error @+1 {{'fx.cat' op needs at least one tensor}}
  %0 = fx.cat : () -> tensor<0xf32>
  fx.output
}

// -----

fx.graph @cat_zero_dim(%x: tensor<f32>) {
  // expected-error @+1 {{'fx.cat' op cannot concatenate zero-dim tensors}}
  %0 = fx.cat %x, %x : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  fx.output
}

// -----

fx.graph @cat_rank(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'fx.cat' op tensor #1 'tensor<3xf32>' must have rank 2}}
  %0 = fx.cat %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  fx.output
}

// -----

fx.graph @cat_sizes(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{'fx.cat' op tensor #1 'tensor<2x4xf32>' differs from 'tensor<2x3xf32>' in dimension 1, which is not the concatenated one}}
  %0 = fx.cat %x, %y : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  fx.output
}

// -----

// Tests that cat promotes, and skips legacy empty tensors.
fx.graph @cat_promotes(%x: tensor<2x3xf16>, %e: tensor<0xf32>, %i: tensor<1x3xsi64>) {
  // expected-error @+1 {{'fx.cat' op result type 'tensor<3x3xf16>' does not match the inferred type 'tensor<3x3xf32>'}}
  %0 = fx.cat %x, %e, %i : (tensor<2x3xf16>, tensor<0xf32>, tensor<1x3xsi64>) -> tensor<3x3xf16>
  fx.output
}

// -----

fx.graph @split_zero_dim(%x: tensor<f32>) {
  // expected-error @+1 {{'fx.split_with_sizes' op cannot split a zero-dim tensor}}
  %0 = fx.split_with_sizes %x : (tensor<f32>) -> tensor<f32>
  fx.output
}

// -----

fx.graph @split_result(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'fx.split_with_sizes' op result #1 'tensor<3x7xf32>' must have the dtype and sizes of `self` 'tensor<4x10xf32>' except in dimension 1}}
  %0:2 = fx.split_with_sizes %x {dim = 1} : (tensor<4x10xf32>) -> (tensor<4x3xf32>, tensor<3x7xf32>)
  fx.output
}

// -----

fx.graph @split_total(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'fx.split_with_sizes' op results have 9 elements in dimension 1, but `self` 'tensor<4x10xf32>' has 10}}
  %0:2 = fx.split_with_sizes %x {dim = 1} : (tensor<4x10xf32>) -> (tensor<4x3xf32>, tensor<4x6xf32>)
  fx.output
}

// -----

fx.graph @as_strided_rank(%x: tensor<16xf32>) {
  // expected-error @+1 {{'fx.as_strided' op `stride` has 1 entries, but the view 'tensor<4x4xf32>' has rank 2}}
  %0 = fx.as_strided %x {stride = array<i64: 1>} : (tensor<16xf32>) -> tensor<4x4xf32>
  fx.output
}

// -----

fx.graph @as_strided_negative(%x: tensor<16xf32>) {
  // expected-error @+1 {{'fx.as_strided' op `stride` entries must not be negative}}
  %0 = fx.as_strided %x {stride = array<i64: 4, -1>} : (tensor<16xf32>) -> tensor<4x4xf32>
  fx.output
}

// -----

fx.graph @as_strided_offset(%x: tensor<16xf32>) {
  // expected-error @+1 {{'fx.as_strided' op `storage_offset` must not be negative}}
  %0 = fx.as_strided %x {stride = array<i64: 4, 1>, storage_offset = -1} : (tensor<16xf32>) -> tensor<4x4xf32>
  fx.output
}

// -----

fx.graph @pad_odd(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.constant_pad_nd' op `pad` must have an even number of entries, two per padded dimension, at most 4 for 'tensor<4x8xf32>'}}
  %0 = fx.constant_pad_nd %x {pad = array<i64: 1, 2, 3>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @pad_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.constant_pad_nd' op `pad` leaves dimension 1 of 'tensor<4x8xf32>' with negative size -2}}
  %0 = fx.constant_pad_nd %x {pad = array<i64: -5, -5>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  fx.output
}

// -----

fx.graph @reflection_pad_count(%x: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'fx.reflection_pad1d' op attribute 'padding' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = fx.reflection_pad1d %x {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8xf32>) -> tensor<1x6x10xf32>
  fx.output
}

// -----

fx.graph @flip_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.flip' op `dims` names dimension 1 more than once}}
  %0 = fx.flip %x {dims = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @repeat_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.repeat' op `repeats` has 1 entries, fewer than the rank 2 of `self` 'tensor<4x8xf32>'}}
  %0 = fx.repeat %x {repeats = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4x16xf32>
  fx.output
}

// -----

fx.graph @repeat_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'fx.repeat' op `repeats` entries must not be negative}}
  %0 = fx.repeat %x {repeats = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @diagonal_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fx.diagonal' op `self` 'tensor<4xf32>' must have rank 2 or more}}
  %0 = fx.diagonal %x : (tensor<4xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @diagonal_dims(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'fx.diagonal' op `dim1` and `dim2` must differ, but both are 1}}
  %0 = fx.diagonal %x {dim1 = 1, dim2 = -1} : (tensor<4x4xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @copy_broadcast(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>) {
  // expected-error @+1 {{'fx.copy' op `src` 'tensor<2x8xf32>' does not broadcast to `self` 'tensor<4x8xf32>'}}
  %0 = fx.copy %x, %y : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @slice_scatter_src(%x: tensor<4x8xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+1 {{'fx.slice_scatter' op `src` 'tensor<4x3xf32>' does not have the shape of the view it fills, [4, 4]}}
  %0 = fx.slice_scatter %x, %y {dim = 1, start = 4} : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  fx.output
}

// -----

fx.graph @select_scatter_result(%x: tensor<4x8xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{'fx.select_scatter' op result type 'tensor<4x8xf16>' does not match the inferred type 'tensor<4x8xf32>'}}
  %0 = fx.select_scatter %x, %y {dim = 0, index = 1} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf16>
  fx.output
}

// -----

fx.graph @view_symbols_count(
    %x: tensor<?x64xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 64]>})
    -> tensor<?x?x64xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` names 1 sizes, but the result 'tensor<?x?x64xf32>' has 2 dynamic dimensions}}
  %0 = fx.view %x {size_symbols = ["s0"]} : (tensor<?x64xf32>) -> tensor<?x?x64xf32>
  fx.output %0 : tensor<?x?x64xf32>
}

// -----

fx.graph @view_unknown_symbol(
    %x: tensor<?x64xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 64]>})
    -> tensor<?x?x64xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` names 's1', which is not a size symbol of the graph}}
  %0 = fx.view %x {size_symbols = ["s0", "s1"]} : (tensor<?x64xf32>) -> tensor<?x?x64xf32>
  fx.output %0 : tensor<?x?x64xf32>
}

// -----

fx.graph @view_size_of_an_ambiguous_product(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1]>})
    -> tensor<?x?x1xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` entry 's0-1*s1' is not a size expression of size symbols ('s0', '3*s0', 's0-1', '(s0+1)//2', 's0*(s1-1)')}}
  %0 = fx.view %x {size_symbols = ["s0-1*s1", "1*s0"]} : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
  fx.output %0 : tensor<?x?x1xf32>
}

// -----

// An offset on a product's last factor would bind to that factor alone.
fx.graph @view_size_of_a_product_with_an_offset(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1]>})
    -> tensor<?xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` entry 's0*s1-1' is not a size expression of size symbols}}
  %0 = fx.view %x {size_symbols = ["s0*s1-1"]} : (tensor<?x?xf32>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

fx.graph @view_size_of_two_symbols_in_a_division(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1]>})
    -> tensor<?xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` entry '(s0+s1)//2' is not a size expression of size symbols}}
  %0 = fx.view %x {size_symbols = ["(s0+s1)//2"]} : (tensor<?x?xf32>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

fx.graph @view_size_of_an_unbalanced_division(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1]>})
    -> tensor<?xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` entry '((s0)//2' is not a size expression of size symbols}}
  %0 = fx.view %x {size_symbols = ["((s0)//2"]} : (tensor<?x?xf32>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

fx.graph @view_size_of_an_unknown_multiple(
    %x: tensor<?x3xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 3]>})
    -> tensor<?x?xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  // expected-error @+1 {{'fx.view' op `size_symbols` names 's2', which is not a size symbol of the graph}}
  %0 = fx.view %x {size_symbols = ["3*s2", "s0"]} : (tensor<?x3xf32>) -> tensor<?x?xf32>
  fx.output %0 : tensor<?x?xf32>
}

// -----

fx.graph @slice_both_end_and_dynamic_end(%x: tensor<8x4xf32>) {
  %n = arith.constant 4 : i64
  // expected-error @+1 {{'fx.slice' op has both `end` and `dynamic_end`; a symbolic `end` is only the operand}}
  %0 = fx.slice %x dynamic_end(%n) {dim = 0 : i64, end = 4 : i64} : (tensor<8x4xf32>, i64) -> tensor<?x4xf32>
  fx.output
}

// -----

fx.graph @slice_symbolic_start_keeps_other_dims(%x: tensor<8x4xf32>) {
  %n = arith.constant 4 : i64
  // expected-error @+1 {{'fx.slice' op result type 'tensor<?x5xf32>' does not match the inferred type 'tensor<?x4xf32>'}}
  %0 = fx.slice %x dynamic_start(%n) {dim = 0 : i64} : (tensor<8x4xf32>, i64) -> tensor<?x5xf32>
  fx.output
}

// -----

fx.graph @select_without_index(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'fx.select' op needs `index` or `dynamic_index`}}
  %0 = fx.select %x {dim = 0 : i64} : (tensor<8x4xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @select_both_index_and_dynamic_index(%x: tensor<8x4xf32>) {
  %n = arith.constant 4 : i64
  // expected-error @+1 {{'fx.select' op has both `index` and `dynamic_index`}}
  %0 = fx.select %x dynamic_index(%n) {dim = 0 : i64, index = 1 : i64} : (tensor<8x4xf32>, i64) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @expand_names_too_few_sizes(%row: tensor<1x1xf32>) {
  // expected-error @+1 {{'fx.expand' op `size_symbols` names 0 sizes, but the result 'tensor<?x?xf32>' has 2 dynamic dimensions}}
  %0 = fx.expand %row {size_symbols = []} : (tensor<1x1xf32>) -> tensor<?x?xf32>
  fx.output
}

// -----

fx.graph @view_as_complex_of_pairs_only(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'fx.view_as_complex' op `self` 'tensor<4x3xf32>' must have a last dimension of size 2}}
  %0 = fx.view_as_complex %x : (tensor<4x3xf32>) -> tensor<4xcomplex<f32>>
  fx.output
}

// -----

fx.graph @view_as_complex_of_half(%x: tensor<4x2xf16>) {
  // expected-error @+1 {{'fx.view_as_complex' op `self` 'tensor<4x2xf16>' must hold f32 or f64 (complex<f32> or complex<f64>)}}
  %0 = fx.view_as_complex %x : (tensor<4x2xf16>) -> tensor<4xcomplex<f32>>
  fx.output
}

// -----

fx.graph @view_as_complex_of_a_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'fx.view_as_complex' op `self` 'tensor<f32>' must have a last dimension of size 2}}
  %0 = fx.view_as_complex %x : (tensor<f32>) -> tensor<complex<f32>>
  fx.output
}

// -----

fx.graph @view_as_real_wrong_parts(%z: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'fx.view_as_real' op result type 'tensor<4x2xf64>' does not match the inferred type 'tensor<4x2xf32>'}}
  %0 = fx.view_as_real %z : (tensor<4xcomplex<f32>>) -> tensor<4x2xf64>
  fx.output
}
