// RUN: kiln-opt %s -split-input-file -canonicalize | FileCheck %s

// Tests that copies and views that change nothing fold to their input.
// CHECK-LABEL: fx.graph @fold_no_ops
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: fx.output %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]] :
fx.graph @fold_no_ops(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fx.clone %x : tensor<4x8xf32>
  %1 = fx.alias %x : tensor<4x8xf32>
  %2 = fx.view %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = fx.permute %x {dims = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = fx.expand %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = fx.to_copy %x {dtype = f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  fx.output %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that a view of a view reads the original, and that the inner view,
// now unused, is erased (fx ops are Pure).
// CHECK-LABEL: fx.graph @fold_view_of_view
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[V:.+]] = fx.view %[[X]] : (tensor<4x8xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: fx.output %[[V]]
fx.graph @fold_view_of_view(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = fx.view %x : (tensor<4x8xf32>) -> tensor<32xf32>
  %1 = fx.view %0 : (tensor<32xf32>) -> tensor<2x16xf32>
  fx.output %1 : tensor<2x16xf32>
}

// -----

// A view whose names move dynamic sizes around keeps its type and is no
// identity ([s0, s1] -> [s1, s0]); nor does a view that pairs its sizes in
// order with it read the original. Unnamed views with the type of their
// operand, or with one `?`, fold.
// CHECK-LABEL: fx.graph @do_not_fold_views_that_move_dynamic_sizes
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>
// CHECK: %[[SWAP:.+]] = fx.view %[[X]] {size_symbols = ["s1", "s0"]}
// CHECK: %[[MORE:.+]] = fx.view %[[SWAP]] : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
// CHECK: %[[ONE:.+]] = fx.view %[[X]] : (tensor<?x?xf32>) -> tensor<?xf32>
// CHECK: fx.output %[[SWAP]], %[[MORE]], %[[X]], %[[ONE]]
fx.graph @do_not_fold_views_that_move_dynamic_sizes(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1]>})
    -> (tensor<?x?xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>, tensor<?xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.view %x {size_symbols = ["s1", "s0"]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = fx.view %0 : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
  %2 = fx.view %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = fx.view %0 : (tensor<?x?xf32>) -> tensor<?xf32>
  fx.output %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>, tensor<?xf32>
}

// -----

// Tests that two permutations compose into one: dims c[i] = a[b[i]].
// CHECK-LABEL: fx.graph @fold_permute_of_permute
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[P:.+]] = fx.permute %[[X]] {dims = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK-NEXT: fx.output %[[P]]
fx.graph @fold_permute_of_permute(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = fx.permute %x {dims = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = fx.permute %0 {dims = array<i64: 2, 1, 0>} : (tensor<4x2x3xf32>) -> tensor<3x2x4xf32>
  fx.output %1 : tensor<3x2x4xf32>
}

// -----

// Tests that ops which change something stay, and that dead ops go.
// CHECK-LABEL: fx.graph @do_not_fold_real_changes
// CHECK: fx.permute %{{.+}} {dims = array<i64: 1, 0>}
// CHECK: fx.expand
// CHECK: fx.to_copy %{{.+}} {dtype = bf16}
// CHECK-NOT: fx.exp
fx.graph @do_not_fold_real_changes(%x: tensor<4x1xf32>) -> (tensor<1x4xf32>, tensor<4x8xf32>, tensor<4x1xbf16>) {
  %0 = fx.permute %x {dims = array<i64: 1, 0>} : (tensor<4x1xf32>) -> tensor<1x4xf32>
  %1 = fx.expand %x : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = fx.to_copy %x {dtype = bf16} : (tensor<4x1xf32>) -> tensor<4x1xbf16>
  %3 = fx.exp %x : (tensor<4x1xf32>) -> tensor<4x1xf32>
  fx.output %0, %1, %2 : tensor<1x4xf32>, tensor<4x8xf32>, tensor<4x1xbf16>
}

// -----

// Tests that slices of every element (to the end written as INT64_MAX, as
// importers write `x[:]`, or as the static size, from 0 or no start) and a
// squeeze of dimensions that are not 1 fold to their input, also along a
// `?` dimension and with a negative `dim`.
// CHECK-LABEL: fx.graph @fold_full_slices
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>
// CHECK-NEXT: fx.output %[[X]], %[[X]], %[[X]], %[[X]] :
fx.graph @fold_full_slices(%x: tensor<?x8xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 8]>}) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %0 = fx.slice %x {dim = 0 : i64, start = 0 : i64, end = 9223372036854775807 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = fx.slice %x {dim = -1 : i64, end = 8 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = fx.slice %x {dim = 1 : i64, start = 0 : i64, end = 100 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = fx.squeeze %x {dim = array<i64: 0, 1>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  fx.output %0, %1, %2, %3 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Tests that slices that keep a part, or step, stay: a `?` dimension's end
// may cut it, and a negative end counts from the end.
// CHECK-LABEL: fx.graph @do_not_fold_partial_slices
// CHECK-COUNT-4: fx.slice
// CHECK: fx.squeeze
fx.graph @do_not_fold_partial_slices(%x: tensor<?x8xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 8]>}, %y: tensor<8x1xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x7xf32>, tensor<8xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %0 = fx.slice %x {dim = 0 : i64, start = 0 : i64, end = 16 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = fx.slice %x {dim = 0 : i64, start = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = fx.slice %x {dim = 1 : i64, step = 2 : i64} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  %3 = fx.slice %x {dim = 1 : i64, end = -1 : i64} : (tensor<?x8xf32>) -> tensor<?x7xf32>
  %4 = fx.squeeze %y {dim = array<i64: 1>} : (tensor<8x1xf32>) -> tensor<8xf32>
  fx.output %0, %1, %2, %3, %4 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x7xf32>, tensor<8xf32>
}

// -----

// Tests that arithmetic with a scalar that changes no element folds to its
// input: x * 1 (an int, float or bool one), x / 1, x ** 1, x - 0 (with a
// positive alpha), integer x + 0, and float x + -0.0.
// CHECK-LABEL: fx.graph @fold_identity_scalars
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xsi32>, %[[B:.+]]: tensor<4xi1>)
// CHECK-NEXT: fx.output %[[X]], %[[X]], %[[B]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[I]], %[[X]] :
fx.graph @fold_identity_scalars(%x: tensor<4xf32>, %i: tensor<4xsi32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xsi32>, tensor<4xsi32>, tensor<4xf32>) {
  %0 = fx.mul_scalar %x {other = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.mul_scalar %x {other = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = fx.mul_scalar %b {other = true} : (tensor<4xi1>) -> tensor<4xi1>
  %3 = fx.div_scalar %x {other = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = fx.pow_tensor_scalar %x {exponent = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = fx.sub_scalar %x {other = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = fx.sub_scalar %x {other = 0.0 : f64, alpha = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %7 = fx.add_scalar %i {other = 0 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %8 = fx.sub_scalar %i {other = 0 : i64, alpha = 3 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %9 = fx.add_scalar %x {other = -0.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xsi32>, tensor<4xsi32>, tensor<4xf32>
}

// -----

// Tests that scalars that change elements, or types, stay: float x + 0
// (-0.0 becomes +0.0), x * -1, x * 1 promoting an int tensor to float,
// integer x / 1 (true division gives floats), x - 0 with a negative alpha
// (x - -0.0 is x + 0.0), x ** 1 of a bool (a long), and x * 2.
// CHECK-LABEL: fx.graph @do_not_fold_scalars_that_change_elements
// CHECK: fx.add_scalar
// CHECK: fx.mul_scalar
// CHECK: fx.mul_scalar
// CHECK: fx.div_scalar
// CHECK: fx.sub_scalar
// CHECK: fx.pow_tensor_scalar
// CHECK: fx.mul_scalar
fx.graph @do_not_fold_scalars_that_change_elements(%x: tensor<4xf32>, %i: tensor<4xsi32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xsi64>, tensor<4xf32>) {
  %0 = fx.add_scalar %x {other = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.mul_scalar %x {other = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = fx.mul_scalar %i {other = 1.0 : f64} : (tensor<4xsi32>) -> tensor<4xf32>
  %3 = fx.div_scalar %i {other = 1 : i64} : (tensor<4xsi32>) -> tensor<4xf32>
  %4 = fx.sub_scalar %x {other = 0 : i64, alpha = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = fx.pow_tensor_scalar %b {exponent = 1 : i64} : (tensor<4xi1>) -> tensor<4xsi64>
  %6 = fx.mul_scalar %x {other = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xsi64>, tensor<4xf32>
}

// -----

// Tests that complex arithmetic with a scalar stays (a full complex product
// turns inf into inf + NaN i), but x ** 1 folds, and that x - 0 stays with
// an alpha that is infinite in f32 (inf * 0 is NaN).
// CHECK-LABEL: fx.graph @do_not_fold_complex_or_huge_alpha
// CHECK-SAME: (%[[C:.+]]: tensor<4xcomplex<f32>>, %[[X:.+]]: tensor<4xf32>)
// CHECK: %[[M:.+]] = fx.mul_scalar %[[C]]
// CHECK: %[[S:.+]] = fx.sub_scalar %[[C]]
// CHECK: %[[H:.+]] = fx.sub_scalar %[[X]]
// CHECK: fx.output %[[M]], %[[S]], %[[C]], %[[H]] :
fx.graph @do_not_fold_complex_or_huge_alpha(%c: tensor<4xcomplex<f32>>, %x: tensor<4xf32>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xf32>) {
  %0 = fx.mul_scalar %c {other = 1 : i64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.sub_scalar %c {other = 0 : i64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %2 = fx.pow_tensor_scalar %c {exponent = 1 : i64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %3 = fx.sub_scalar %x {other = 0 : i64, alpha = 1.0e+39 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1, %2, %3 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xf32>
}
