// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop | FileCheck %s --check-prefix=INLINED
// RUN: not kiln-opt %s -split-input-file --kiln-fx-to-loop=fail-on-unsupported 2>&1 | FileCheck %s --check-prefix=ERROR

// Views are index arithmetic: a node that reads the source at mapped
// indices, which inlining folds into the readers.

// CHECK-LABEL: fx.graph @permute
// CHECK: loop.pointwise(%{{.+}}) : tensor<12x?x64xf32>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[K:.+]]: index):
// CHECK-NEXT: loop.load %{{.+}}[%[[J]], %[[I]], %[[K]]] : tensor<?x12x64xf32>
// INLINED-LABEL: fx.graph @permute
// INLINED-COUNT-1: loop.pointwise
// INLINED: loop.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<?x12x64xf32>
// INLINED: arith.mulf
fx.graph @permute(%x: tensor<?x12x64xf32>) -> tensor<12x?x64xf32> {
  %0 = fx.permute %x {dims = array<i64: 1, 0, 2>} : (tensor<?x12x64xf32>) -> tensor<12x?x64xf32>
  %1 = fx.mul %0, %0 : (tensor<12x?x64xf32>, tensor<12x?x64xf32>) -> tensor<12x?x64xf32>
  fx.output %1 : tensor<12x?x64xf32>
}

// -----

// Splitting a dimension multiplies and adds; merging divides.
// CHECK-LABEL: fx.graph @split_heads
// CHECK: ^bb0(%[[B:.+]]: index, %[[T:.+]]: index, %[[H:.+]]: index, %[[D:.+]]: index):
// CHECK: %[[ROW:.+]] = arith.muli %[[H]], %c64
// CHECK: %[[COL:.+]] = arith.addi %[[ROW]], %[[D]]
// CHECK: loop.load %{{.+}}[%[[B]], %[[T]], %[[COL]]] : tensor<?x8x768xf32>
// CHECK-NOT: arith.divui
fx.graph @split_heads(%x: tensor<?x8x768xf32>) -> tensor<?x8x12x64xf32> {
  %0 = fx.view %x : (tensor<?x8x768xf32>) -> tensor<?x8x12x64xf32>
  fx.output %0 : tensor<?x8x12x64xf32>
}

// -----

// CHECK-LABEL: fx.graph @merge
// CHECK: ^bb0(%[[I:.+]]: index):
// CHECK: %[[C:.+]] = arith.remui %[[I]], %c5
// CHECK: %[[Q:.+]] = arith.divui %[[I]], %c5
// CHECK: loop.load %{{.+}}[%[[Q]], %[[C]]] : tensor<4x5xf32>
fx.graph @merge(%x: tensor<4x5xf32>) -> tensor<20xf32> {
  %0 = fx.view %x : (tensor<4x5xf32>) -> tensor<20xf32>
  fx.output %0 : tensor<20xf32>
}

// -----

// Size-1 dimensions after the last source dimension read nothing.
// CHECK-LABEL: fx.graph @trailing_unit_dimensions
// CHECK: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index, %{{.+}}: index, %{{.+}}: index):
// CHECK: %[[R:.+]] = arith.muli %[[A]], %c96
// CHECK: %[[L:.+]] = arith.addi %[[R]], %[[B]]
// CHECK: loop.load %{{.+}}[%[[L]]] : tensor<96xbf16>
fx.graph @trailing_unit_dimensions(%x: tensor<96xbf16>) -> tensor<1x96x1x1xbf16> {
  %0 = fx.view %x : (tensor<96xbf16>) -> tensor<1x96x1x1xbf16>
  fx.output %0 : tensor<1x96x1x1xbf16>
}

// -----

// as_strided reads element offset + i * stride of the operand's row-major
// elements.
// CHECK-LABEL: fx.graph @as_strided
// CHECK: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[A:.+]] = arith.addi %[[I]], %c1
// CHECK: %[[B:.+]] = arith.muli %[[J]], %c2
// CHECK: %[[L:.+]] = arith.addi %[[A]], %[[B]]
// CHECK: %[[COL:.+]] = arith.remui %[[L]], %c4
// CHECK: %[[ROW:.+]] = arith.divui %[[L]], %c4
// CHECK: loop.load %{{.+}}[%[[ROW]], %[[COL]]] : tensor<4x4xf32>
fx.graph @as_strided(%x: tensor<4x4xf32>) -> tensor<3x3xf32> {
  %0 = fx.as_strided %x {stride = array<i64: 1, 2>, storage_offset = 1 : i64} : (tensor<4x4xf32>) -> tensor<3x3xf32>
  fx.output %0 : tensor<3x3xf32>
}

// -----

// Element (2, 2) would read element 1 + 2 + 2 * 7 = 17 of 16.
// ERROR: error: kiln-fx-to-loop: no lowering for 'fx.as_strided' with these operand types
fx.graph @as_strided_past_the_end(%x: tensor<4x4xf32>) -> tensor<3x3xf32> {
  %0 = fx.as_strided %x {stride = array<i64: 1, 7>, storage_offset = 1 : i64} : (tensor<4x4xf32>) -> tensor<3x3xf32>
  fx.output %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: fx.graph @slice_select_expand
// CHECK: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[S:.+]] = arith.muli %[[J]], %c2
// CHECK: %[[O:.+]] = arith.addi %[[S]], %c1
// CHECK: loop.load %{{.+}}[%[[I]], %[[O]]] : tensor<5x9xf32>
// CHECK: ^bb0(%[[I2:.+]]: index):
// CHECK: loop.load %{{.+}}[%c4{{.*}}, %[[I2]]] : tensor<5x9xf32>
// CHECK: ^bb0(%[[A:.+]]: index, %[[B2:.+]]: index):
// CHECK: loop.load %{{.+}}[%[[A]], %c0{{.*}}] : tensor<5x1xf32>
fx.graph @slice_select_expand(%x: tensor<5x9xf32>, %y: tensor<5x1xf32>) -> (tensor<5x4xf32>, tensor<9xf32>, tensor<5x3xf32>) {
  %0 = fx.slice %x {dim = 1 : i64, start = 1 : i64, end = 8 : i64, step = 2 : i64} : (tensor<5x9xf32>) -> tensor<5x4xf32>
  %1 = fx.select %x {dim = 0 : i64, index = -1 : i64} : (tensor<5x9xf32>) -> tensor<9xf32>
  %2 = fx.expand %y : (tensor<5x1xf32>) -> tensor<5x3xf32>
  fx.output %0, %1, %2 : tensor<5x4xf32>, tensor<9xf32>, tensor<5x3xf32>
}

// -----

// Merging dynamic dimensions: the result's one dynamic size is the source's
// element count over its static sizes, and indices map through the linear
// index with the source's run-time sizes.
// CHECK-LABEL: fx.graph @merge_dynamic
// CHECK-DAG: %[[B:.+]] = tensor.dim %{{.+}}, %c0
// CHECK-DAG: %[[T:.+]] = tensor.dim %{{.+}}, %c1
// CHECK: %[[BT:.+]] = arith.muli %{{.+}}, %[[T]]
// CHECK: %[[N:.+]] = arith.muli %[[BT]], %c32
// CHECK: %[[ROWS:.+]] = arith.divui %[[N]], %c32
// CHECK: loop.pointwise(%[[ROWS]]) : tensor<?x32xf32>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[L:.+]] = arith.addi %{{.+}}, %[[J]]
// CHECK: %[[K:.+]] = arith.remui %[[L]], %c32
// CHECK: %[[L2:.+]] = arith.divui %[[L]], %c32
// CHECK: %[[Y:.+]] = arith.remui %[[L2]], %[[T]]
// CHECK: %[[X:.+]] = arith.divui %[[L2]], %[[T]]
// CHECK: loop.load %{{.+}}[%[[X]], %[[Y]], %[[K]]] : tensor<?x?x32xf32>
fx.graph @merge_dynamic(%x: tensor<?x?x32xf32>) -> tensor<?x32xf32> {
  %0 = fx.view %x : (tensor<?x?x32xf32>) -> tensor<?x32xf32>
  fx.output %0 : tensor<?x32xf32>
}

// -----

// Size-1 dimensions before dynamic ones group on their own, on either side
// (a causal mask's [T, T] -> [1, 1, T, T]): the dynamic ones still pair in
// order, and the unit ones read index 0.
// CHECK-LABEL: fx.graph @unit_dimensions_around_dynamic_ones
// CHECK-DAG: %[[T0:.+]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[T1:.+]] = tensor.dim %arg0, %c1
// CHECK: loop.pointwise(%[[T0]], %[[T1]]) : tensor<1x1x?x?xf32>
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: loop.load %arg0[%[[I]], %[[J]]] : tensor<?x?xf32>
// CHECK-DAG: %[[S0:.+]] = tensor.dim %arg1, %c2
// CHECK-DAG: %[[S1:.+]] = tensor.dim %arg1, %c3
// CHECK: loop.pointwise(%[[S0]], %[[S1]]) : tensor<?x1x?xf32>
// CHECK-NEXT: ^bb0(%[[A:.+]]: index, %{{.+}}: index, %[[B:.+]]: index):
// CHECK: loop.load %arg1[%c0, %c0, %[[A]], %[[B]]] : tensor<1x1x?x?xf32>
fx.graph @unit_dimensions_around_dynamic_ones(%x: tensor<?x?xf32>, %y: tensor<1x1x?x?xf32>) -> (tensor<1x1x?x?xf32>, tensor<?x1x?xf32>) {
  %0 = fx.view %x : (tensor<?x?xf32>) -> tensor<1x1x?x?xf32>
  %1 = fx.view %y : (tensor<1x1x?x?xf32>) -> tensor<?x1x?xf32>
  fx.output %0, %1 : tensor<1x1x?x?xf32>, tensor<?x1x?xf32>
}

// -----

// Two dynamic result dimensions that do not pair with the source's: their
// sizes are not derived.
// ERROR: error: kiln-fx-to-loop: no lowering for 'fx.view' with these operand types
fx.graph @ambiguous_dynamic_regrouping(%x: tensor<?x?x4xf32>) -> tensor<?x?xf32> {
  %0 = fx.view %x : (tensor<?x?x4xf32>) -> tensor<?x?xf32>
  fx.output %0 : tensor<?x?xf32>
}

// -----

// flip reads size - 1 - i; repeat reads i mod size (a new leading dimension
// is not read); split reads from each result's offset; padding selects the
// fill value outside the source.
// CHECK-LABEL: fx.graph @flip_repeat_split_pad
// CHECK: loop.pointwise : tensor<3x4xf32>
// CHECK: arith.subi %c2, %{{.+}}
// CHECK: loop.pointwise : tensor<2x6x4xf32>
// CHECK: arith.remui %{{.+}}, %c3
// CHECK: loop.pointwise : tensor<3x1xf32>
// CHECK: loop.pointwise : tensor<3x3xf32>
// CHECK: arith.addi %{{.+}}, %c1
// CHECK: loop.pointwise : tensor<3x7xf32>
// CHECK: arith.cmpi sge
// CHECK: arith.select
fx.graph @flip_repeat_split_pad(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<2x6x4xf32>, tensor<3x1xf32>, tensor<3x3xf32>, tensor<3x7xf32>) {
  %0 = fx.flip %x {dims = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = fx.repeat %x {repeats = array<i64: 2, 2, 1>} : (tensor<3x4xf32>) -> tensor<2x6x4xf32>
  %2:2 = fx.split_with_sizes %x {dim = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x3xf32>)
  %3 = fx.constant_pad_nd %x {pad = array<i64: 1, 2>, value = 1.5 : f64} : (tensor<3x4xf32>) -> tensor<3x7xf32>
  fx.output %0, %1, %2#0, %2#1, %3 : tensor<3x4xf32>, tensor<2x6x4xf32>, tensor<3x1xf32>, tensor<3x3xf32>, tensor<3x7xf32>
}

// -----

// Reflection folds the index at both edges; replication clamps it; nearest
// upsampling scales it (in f32) and clamps.
// CHECK-LABEL: fx.graph @edge_pads_and_upsampling
// CHECK: loop.pointwise : tensor<2x12xf32>
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: loop.pointwise : tensor<2x10xf32>
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: loop.pointwise : tensor<1x1x8x14xf32>
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.fptoui
// CHECK: arith.minui
fx.graph @edge_pads_and_upsampling(%x: tensor<2x7xf32>, %y: tensor<1x1x4x7xf32>) -> (tensor<2x12xf32>, tensor<2x10xf32>, tensor<1x1x8x14xf32>) {
  %0 = fx.reflection_pad1d %x {padding = array<i64: 2, 3>} : (tensor<2x7xf32>) -> tensor<2x12xf32>
  %1 = fx.replication_pad2d %x {padding = array<i64: 1, 2, 0, 0>} : (tensor<2x7xf32>) -> tensor<2x10xf32>
  %2 = fx.upsample_nearest2d %y {scale_factors = array<f64: 2.0, 2.0>} : (tensor<1x1x4x7xf32>) -> tensor<1x1x8x14xf32>
  fx.output %0, %1, %2 : tensor<2x12xf32>, tensor<2x10xf32>, tensor<1x1x8x14xf32>
}

// -----

// A view that splits a dynamic size ([s0*s1, 64] -> [s0, s1, 64]) names the
// symbols of its `?`s: their sizes are the guarded arguments' dimensions, and
// the source is read at the result's linear index.
// CHECK-LABEL: fx.graph @split_dynamic_view
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32> {{.+}}, %[[Y:.+]]: tensor<?x?x64xf32>
// CHECK-DAG: %[[S0:.+]] = tensor.dim %[[Y]], %c0
// CHECK-DAG: %[[S1:.+]] = tensor.dim %[[Y]], %c1
// CHECK: loop.pointwise(%[[S0]], %[[S1]]) : tensor<?x?x64xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[K:.+]]: index):
// CHECK: %[[ROW:.+]] = arith.muli %[[I]], %[[S1]]
// CHECK: arith.addi %[[ROW]], %[[J]]
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: loop.load %[[X]]
fx.graph @split_dynamic_view(
    %x: tensor<?x64xf32> {fx.guard = #fx.tensor_guard<sizes = [e0, 64]>},
    %y: tensor<?x?x64xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1, 64]>})
    -> tensor<?x?x64xf32>
    attributes {symbols = [#fx.symbol<"e0", min = 4>, #fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.view %x {size_symbols = ["s0", "s1"]} : (tensor<?x64xf32>) -> tensor<?x?x64xf32>
  %1 = fx.add %0, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  fx.output %1 : tensor<?x?x64xf32>
}

// -----

// Instance norm's view merges a dynamic batch with the channels and keeps a
// dynamic extent: `size_symbols` writes the merged size as a multiple of a
// symbol (3*s0) and the kept one as a symbol plus a constant (s1-1 here).
// CHECK-LABEL: fx.graph @merge_dynamic_view
// CHECK: loop.pointwise(%{{.+}}, %{{.+}}) : tensor<?x3x?xf32>
// CHECK: %[[S0:.+]] = tensor.dim %arg0, %c0
// CHECK-NEXT: %[[MERGED:.+]] = arith.muli %[[S0]], %c3
// CHECK-NEXT: %[[S1:.+]] = tensor.dim %arg0, %c2
// CHECK-NEXT: %[[KEPT:.+]] = arith.addi %[[S1]], %c-1
// CHECK-NEXT: loop.pointwise(%[[MERGED]], %[[KEPT]]) : tensor<1x?x?xf32>
fx.graph @merge_dynamic_view(
    %x: tensor<?x3x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 3, s1]>})
    -> tensor<1x?x?xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 3>]} {
  %0 = fx.slice %x {dim = 2 : i64, start = 1 : i64, end = 9223372036854775807 : i64} : (tensor<?x3x?xf32>) -> tensor<?x3x?xf32>
  %1 = fx.view %0 {size_symbols = ["3*s0", "s1-1"]} : (tensor<?x3x?xf32>) -> tensor<1x?x?xf32>
  fx.output %1 : tensor<1x?x?xf32>
}

// -----

// A window count in `size_symbols`: an expand back over pooled sizes (a
// mean's gradient) names them as floor divisions of the symbols, which
// lower to arith.floordivsi.
// CHECK-LABEL: fx.graph @expand_to_window_counts
// CHECK: %[[S1:.+]] = tensor.dim %arg1, %c2
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.addi %[[S1]], %c3
// CHECK-NEXT: %[[H:.+]] = arith.floordivsi %[[SHIFTED]], %c8
// CHECK: %[[S2:.+]] = tensor.dim %arg1, %c3
// CHECK-NEXT: %[[DOUBLED:.+]] = arith.muli %[[S2]], %c2
// CHECK-NEXT: %[[HALVED:.+]] = arith.floordivsi %[[DOUBLED]], %c4
// CHECK-NEXT: %[[W:.+]] = arith.addi %[[HALVED]], %c1
// CHECK: loop.pointwise(%[[H]], %[[W]]) : tensor<8x?x?xf32>
fx.graph @expand_to_window_counts(
    %g: tensor<8x1x1xf32> {fx.guard = #fx.tensor_guard<sizes = [8, 1, 1]>},
    %x: tensor<1x8x?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [1, 8, s1, s2]>})
    -> tensor<8x?x?xf32>
    attributes {symbols = [#fx.symbol<"s1", min = 16>, #fx.symbol<"s2", min = 8>]} {
  %0 = fx.expand %g {size_symbols = ["(s1+3)//8", "(2*s2)//4+1"], implicit = false} : (tensor<8x1x1xf32>) -> tensor<8x?x?xf32>
  fx.output %0 : tensor<8x?x?xf32>
}

// -----

// A product of sizes in `size_symbols`: a loss's total weight expanded over
// the flattened batch and length, B * T and 2 * B * (T - 1) rows.
// CHECK-LABEL: fx.graph @expand_to_products_of_sizes
// CHECK: %[[B:.+]] = tensor.dim %arg1, %c0
// CHECK-NEXT: %[[T:.+]] = tensor.dim %arg1, %c1
// CHECK-NEXT: %[[BT:.+]] = arith.muli %[[B]], %[[T]]
// CHECK: loop.pointwise(%[[BT]]) : tensor<?x1xf32>
// CHECK: %[[B2:.+]] = tensor.dim %arg1, %c0
// CHECK-NEXT: %[[TWICE:.+]] = arith.muli %[[B2]], %c2
// CHECK-NEXT: %[[T2:.+]] = tensor.dim %arg1, %c1
// CHECK-NEXT: %[[SHORTER:.+]] = arith.addi %[[T2]], %c-1
// CHECK-NEXT: %[[ROWS:.+]] = arith.muli %[[TWICE]], %[[SHORTER]]
// CHECK: loop.pointwise(%[[ROWS]]) : tensor<?xf32>
fx.graph @expand_to_products_of_sizes(
    %w: tensor<f32> {fx.guard = #fx.tensor_guard<sizes = []>},
    %x: tensor<?x?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1, 4]>})
    -> (tensor<?x1xf32>, tensor<?xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.expand %w {size_symbols = ["s0*s1"], implicit = false} : (tensor<f32>) -> tensor<?x1xf32>
  %1 = fx.expand %w {size_symbols = ["2*s0*(s1-1)"], implicit = false} : (tensor<f32>) -> tensor<?xf32>
  fx.output %0, %1 : tensor<?x1xf32>, tensor<?xf32>
}

// -----

// A diagonal is index arithmetic: element i reads i + 3 along dim1 (a
// negative offset) and i along dim2; the other dimension comes first.
// CHECK-LABEL: fx.graph @diagonal
// CHECK: %[[C3:.+]] = arith.constant 3 : index
// CHECK: loop.pointwise : tensor<2x3xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[K:.+]] = arith.addi %[[J]], %[[C3]] : index
// CHECK-NEXT: loop.load %{{.+}}[%[[I]], %[[J]], %[[K]]] : tensor<2x5x6xf32>
fx.graph @diagonal(%m: tensor<2x5x6xf32>) -> tensor<2x3xf32> {
  %0 = fx.diagonal %m {offset = -3 : i64, dim1 = 2 : i64, dim2 = 1 : i64} : (tensor<2x5x6xf32>) -> tensor<2x3xf32>
  fx.output %0 : tensor<2x3xf32>
}

// -----

// A diagonal of a dynamic length: what both dimensions have past the
// offset's start (n - 1 rows from row 1, 5 columns), none if negative.
// CHECK-LABEL: fx.graph @dynamic_diagonal
// CHECK-SAME: (%[[M:.+]]: tensor<?x5xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[M]], %c0
// CHECK: %[[ROWS:.+]] = arith.subi %[[N]], %c1
// CHECK: %[[SHORTER:.+]] = arith.minsi %[[ROWS]], %c5
// CHECK: %[[LENGTH:.+]] = arith.maxsi %[[SHORTER]], %c0
// CHECK: loop.pointwise(%[[LENGTH]]) : tensor<?xf32>
fx.graph @dynamic_diagonal(%m: tensor<?x5xf32>) -> tensor<?xf32> {
  %0 = fx.diagonal %m {offset = -1 : i64} : (tensor<?x5xf32>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

// A frozen constant becomes a builtin tensor constant that nodes load.
// CHECK-LABEL: fx.graph @frozen_constant
// CHECK: %[[W:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: loop.load %[[W]]
fx.graph @frozen_constant(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = fx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = fx.mul %x, %w : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  fx.output %0 : tensor<3x2xf32>
}

// -----

// Symbolic bounds are computed at run time: the slice's end from the size
// symbol, wrapped and clamped into the dimension, sizes the node; the
// select's index is wrapped and clamped, then read at; arange's length is
// ceil((end - start) / step), at least 0. A negative static index on a
// dynamic dimension counts from the run-time size.
// CHECK-LABEL: fx.graph @symbolic_bounds
// CHECK: %[[DIM:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[N:.+]] = arith.index_cast %[[DIM]] : index to i64
// CHECK: %[[END:.+]] = arith.index_cast %[[N]] : i64 to index
// CHECK: %[[CLAMPED:.+]] = arith.minsi %{{.+}}, %c512 : index
// CHECK: %[[LEN:.+]] = arith.maxsi %[[CLAMPED]], %c0 : index
// CHECK: loop.pointwise(%[[LEN]]) : tensor<?x64xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: loop.load %arg1[%[[I]], %[[J]]] : tensor<512x64xf32>
// CHECK: %[[LAST:.+]] = arith.subi %[[N]], %c1_i64 : i64
// CHECK: %[[INDEX:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: loop.pointwise : tensor<64xf32> {
// CHECK-NEXT: ^bb0(%[[K:.+]]: index):
// CHECK-NEXT: loop.load %arg0[%[[INDEX]], %[[K]]] : tensor<?x64xf32>
// CHECK: %[[SPAN:.+]] = arith.subi %[[N]], %c1_i64 : i64
// CHECK: %[[STEPS:.+]] = arith.ceildivsi %[[SPAN]], %c2_i64 : i64
// CHECK: %[[COUNT:.+]] = arith.maxsi %[[STEPS]], %c0_i64 : i64
// CHECK: %[[SIZE:.+]] = arith.index_cast %[[COUNT]] : i64 to index
// CHECK: loop.pointwise(%[[SIZE]]) : tensor<?xsi64>
// CHECK: %[[DIM2:.+]] = tensor.dim %arg0, %c0
// CHECK: arith.addi %[[DIM2]], %c-1 : index
// CHECK: loop.pointwise : tensor<64xf32>
// ERROR-NOT: no lowering
fx.graph @symbolic_bounds(
    %x: tensor<?x64xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 64]>},
    %pe: tensor<512x64xf32> {fx.guard = #fx.tensor_guard<sizes = [512, 64]>})
    -> (tensor<?x64xf32>, tensor<64xf32>, tensor<?xsi64>, tensor<64xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2, max = 512>]} {
  %n = fx.symbol_value "s0"
  %0 = fx.slice %pe dynamic_end(%n) {dim = 0 : i64} : (tensor<512x64xf32>, i64) -> tensor<?x64xf32>
  %1 = fx.add %x, %0 : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %c1 = arith.constant 1 : i64
  %last = arith.subi %n, %c1 : i64
  %2 = fx.select %x dynamic_index(%last) {dim = 0 : i64} : (tensor<?x64xf32>, i64) -> tensor<64xf32>
  %3 = fx.arange dynamic_end(%n) {start = 1 : i64, step = 2 : i64} : (i64) -> tensor<?xsi64>
  %4 = fx.select %x {dim = 0 : i64, index = -1 : i64} : (tensor<?x64xf32>) -> tensor<64xf32>
  fx.output %1, %2, %3, %4 : tensor<?x64xf32>, tensor<64xf32>, tensor<?xsi64>, tensor<64xf32>
}

// -----

// A symbolic count is a zero-dim node of the run-time value (the symbol is
// its argument's size), converted to the result's dtype.
// CHECK-LABEL: fx.graph @symbolic_count
// CHECK: %[[DIM:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[N:.+]] = arith.index_cast %[[DIM]] : index to i64
// CHECK: %[[COUNT:.+]] = arith.muli %[[N]], %{{.+}} : i64
// CHECK: loop.pointwise : tensor<f64> {
// CHECK-NEXT: %[[F:.+]] = arith.sitofp %[[COUNT]] : i64 to f64
// CHECK-NEXT: loop.yield %[[F]] : f64
// ERROR-NOT: no lowering
fx.graph @symbolic_count(%g: tensor<?x16xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 16]>})
    -> tensor<?x16xf32> attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %n = fx.symbol_value "s0"
  %c16 = arith.constant 16 : i64
  %count = arith.muli %n, %c16 : i64
  %0 = fx.scalar_tensor dynamic_s(%count) {dtype = f64} : (i64) -> tensor<f64>
  %1 = fx.div %g, %0 : (tensor<?x16xf32>, tensor<f64>) -> tensor<?x16xf32>
  fx.output %1 : tensor<?x16xf32>
}


// -----

// Part of a dynamic dimension, x[1:-1]: both bounds wrap and clamp against
// the run-time size, which gives the result's.
// CHECK-LABEL: fx.graph @part_of_a_dynamic_dimension
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[START:.+]] = arith.minsi %[[N]], %c1 : index
// CHECK: %[[END:.+]] = arith.addi %[[N]], %c-1 : index
// CHECK: %[[SPAN:.+]] = arith.subi %{{.+}}, %[[START]] : index
// CHECK: %[[LEN:.+]] = arith.maxsi %[[SPAN]], %c0 : index
// CHECK: loop.pointwise(%[[LEN]]) : tensor<?x4xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[FROM:.+]] = arith.addi %[[I]], %[[START]] : index
// CHECK-NEXT: loop.load %arg0[%[[FROM]], %[[J]]] : tensor<?x4xf32>
fx.graph @part_of_a_dynamic_dimension(%x: tensor<?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 4]>})
    -> tensor<?x4xf32> attributes {symbols = [#fx.symbol<"s0", min = 4>]} {
  %0 = fx.slice %x {dim = 0 : i64, start = 1 : i64, end = -1 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  fx.output %0 : tensor<?x4xf32>
}

// -----

// An expand that stretches a size-1 dimension to `?` takes the size from
// the symbol its size_symbols names.
// CHECK-LABEL: fx.graph @expand_to_a_named_size
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.pointwise(%[[N]]) : tensor<?x3xf32> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[J:.+]]: index):
// CHECK-NEXT: loop.load %arg1[%c0, %[[J]]] : tensor<1x3xf32>
fx.graph @expand_to_a_named_size(%x: tensor<?x3xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 3]>},
                                 %row: tensor<1x3xf32>) -> tensor<?x3xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %0 = fx.expand %row {size_symbols = ["s0"]} : (tensor<1x3xf32>) -> tensor<?x3xf32>
  fx.output %0 : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: fx.graph @alias(
// Aliases and clones are the value itself (value semantics).
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %arg0 : tensor<4x6xf32>
fx.graph @alias(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>) {
  %r0 = fx.alias %x : tensor<4x6xf32>
  fx.output %r0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: fx.graph @clone(
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %arg0 : tensor<4x6xf32>
fx.graph @clone(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>) {
  %r0 = fx.clone %x : tensor<4x6xf32>
  fx.output %r0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: fx.graph @squeeze(
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: loop.pointwise : tensor<4x6xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: loop.load %arg0[%[[I]], %[[C0]], %[[J]]] : tensor<4x1x6xf32>
fx.graph @squeeze(%x: tensor<4x1x6xf32>) -> (tensor<4x6xf32>) {
  %r0 = fx.squeeze %x {dim = array<i64: 1>} : (tensor<4x1x6xf32>) -> tensor<4x6xf32>
  fx.output %r0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: fx.graph @unsqueeze(
// CHECK: loop.pointwise : tensor<4x1x6xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %{{.+}}: index, %[[K:.+]]: index):
// CHECK-NEXT: loop.load %arg0[%[[I]], %[[K]]] : tensor<4x6xf32>
fx.graph @unsqueeze(%x: tensor<4x6xf32>) -> (tensor<4x1x6xf32>) {
  %r0 = fx.unsqueeze %x {dim = 1 : i64} : (tensor<4x6xf32>) -> tensor<4x1x6xf32>
  fx.output %r0 : tensor<4x1x6xf32>
}

// -----

// CHECK-LABEL: fx.graph @full_like(
// CHECK: %[[FILL:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: loop.pointwise : tensor<4x6xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.yield %[[FILL]] : f32
fx.graph @full_like(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>) {
  %r0 = fx.full_like %x {fill_value = 2.5 : f64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  fx.output %r0 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: fx.graph @reflection_pad2d(
// padding = [left 1, right 2, top 3, bottom 0]: an output row i reads
// row min(|i - 3|, 2 * (4 - 1) - |i - 3|), a column j column
// min(|j - 1|, 2 * (6 - 1) - |j - 1|).
// CHECK-DAG: %[[C10:.+]] = arith.constant 10 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C6:.+]] = arith.constant 6 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: loop.pointwise : tensor<1x2x7x9xf32> {
// CHECK-NEXT: ^bb0(%[[N:.+]]: index, %[[C:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[P:.+]] = arith.subi %[[I]], %[[C3]] : index
// CHECK-NEXT: %[[NP:.+]] = arith.subi %[[C0]], %[[P]] : index
// CHECK-NEXT: %[[A:.+]] = arith.maxsi %[[P]], %[[NP]] : index
// CHECK-NEXT: %[[B:.+]] = arith.subi %[[C6]], %[[A]] : index
// CHECK-NEXT: %[[ROW:.+]] = arith.minsi %[[A]], %[[B]] : index
// CHECK-NEXT: %[[Q:.+]] = arith.subi %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[NQ:.+]] = arith.subi %[[C0]], %[[Q]] : index
// CHECK-NEXT: %[[D:.+]] = arith.maxsi %[[Q]], %[[NQ]] : index
// CHECK-NEXT: %[[E:.+]] = arith.subi %[[C10]], %[[D]] : index
// CHECK-NEXT: %[[COL:.+]] = arith.minsi %[[D]], %[[E]] : index
// CHECK-NEXT: loop.load %arg0[%[[N]], %[[C]], %[[ROW]], %[[COL]]] : tensor<1x2x4x6xf32>
fx.graph @reflection_pad2d(%x: tensor<1x2x4x6xf32>) -> (tensor<1x2x7x9xf32>) {
  %r0 = fx.reflection_pad2d %x {padding = array<i64: 1, 2, 3, 0>} : (tensor<1x2x4x6xf32>) -> tensor<1x2x7x9xf32>
  fx.output %r0 : tensor<1x2x7x9xf32>
}

// -----

// CHECK-LABEL: fx.graph @reflection_pad3d(
// padding = [W 1 1, H 0 2, D 2 0] of an unbatched [C, D, H, W] input.
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C6:.+]] = arith.constant 6 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK: loop.pointwise : tensor<1x5x6x7xf32> {
// CHECK: arith.subi %{{.+}}, %[[C2]] : index
// CHECK: arith.subi %[[C4]], %{{.+}} : index
// CHECK: arith.subi %[[C6]], %{{.+}} : index
// CHECK: arith.subi %[[C8]], %{{.+}} : index
// CHECK: loop.load %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x3x4x5xf32>
fx.graph @reflection_pad3d(%x: tensor<1x3x4x5xf32>) -> (tensor<1x5x6x7xf32>) {
  %r0 = fx.reflection_pad3d %x {padding = array<i64: 1, 1, 0, 2, 2, 0>} : (tensor<1x3x4x5xf32>) -> tensor<1x5x6x7xf32>
  fx.output %r0 : tensor<1x5x6x7xf32>
}

// -----

// CHECK-LABEL: fx.graph @replication_pad3d(
// padding = [W 2 0, H 1 1, D 0 3]: each index clamped into the input.
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: loop.pointwise : tensor<1x6x6x7xf32> {
// CHECK-NEXT: ^bb0(%[[N:.+]]: index, %[[D:.+]]: index, %[[H:.+]]: index, %[[W:.+]]: index):
// CHECK-NEXT: %[[D1:.+]] = arith.minsi %[[D]], %[[C2]] : index
// CHECK-NEXT: %[[D2:.+]] = arith.maxsi %[[D1]], %[[C0]] : index
// CHECK-NEXT: %[[H0:.+]] = arith.subi %[[H]], %[[C1]] : index
// CHECK-NEXT: %[[H1:.+]] = arith.minsi %[[H0]], %[[C3]] : index
// CHECK-NEXT: %[[H2:.+]] = arith.maxsi %[[H1]], %[[C0]] : index
// CHECK-NEXT: %[[W0:.+]] = arith.subi %[[W]], %[[C2]] : index
// CHECK-NEXT: %[[W1:.+]] = arith.minsi %[[W0]], %[[C4]] : index
// CHECK-NEXT: %[[W2:.+]] = arith.maxsi %[[W1]], %[[C0]] : index
// CHECK-NEXT: loop.load %arg0[%[[N]], %[[D2]], %[[H2]], %[[W2]]] : tensor<1x3x4x5xf32>
fx.graph @replication_pad3d(%x: tensor<1x3x4x5xf32>) -> (tensor<1x6x6x7xf32>) {
  %r0 = fx.replication_pad3d %x {padding = array<i64: 2, 0, 1, 1, 0, 3>} : (tensor<1x3x4x5xf32>) -> tensor<1x6x6x7xf32>
  fx.output %r0 : tensor<1x6x6x7xf32>
}

// -----

// An empty tensor's elements are unspecified: Kiln writes zeros, so that no
// run reads garbage.
// CHECK-LABEL: fx.graph @empty_strided(
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: loop.pointwise : tensor<2x3xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.yield %[[ZERO]] : f32
fx.graph @empty_strided() -> tensor<2x3xf32> {
  %0 = fx.empty_strided {stride = array<i64: 3, 1>} : () -> tensor<2x3xf32>
  fx.output %0 : tensor<2x3xf32>
}
