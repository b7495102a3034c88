// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf --canonicalize | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='vector-bytes=64 parallel=false' --canonicalize | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='vector-bytes=64 parallel=false amx=true' --canonicalize | FileCheck %s --check-prefix=AMX
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-scf='amx=true' --canonicalize | FileCheck %s --check-prefix=AMX-NARROW

// A linear layer's product on the CPU: the [N, K] weight is packed into
// panels of 16 f32 columns (two AVX2 vectors), then each 6 x 16 tile of the
// result accumulates six vectors over K and is stored once, rounded to bf16,
// masked where the panel passes N. A task takes a panel and a block of 16
// tiles, which read the panel in turn. That is for more than 16 rows:
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: memref<?x64xbf16>, %[[W:.+]]: memref<100x64xbf16>, %[[Y:.+]]: memref<?x100xbf16>)
// CHECK: %[[M:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[M]], %c6
// Up to 16 rows, dot products along K (4 columns a task, 8 lanes at a
// time) read the weight as it is stored, without packing it.
// CHECK: %[[FEW:.+]] = arith.cmpi ule, %[[M]], %c16
// CHECK: scf.if %[[FEW]] {
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%c25)
// CHECK: scf.for %[[ROW:.+]] = %c0 to %[[M]] step %c1 {
// CHECK: scf.for %[[STEP:.+]] = %c0 to %c64 step %c8 iter_args
// CHECK: vector.load %[[X]][%[[ROW]], %[[STEP]]] : memref<?x64xbf16>, vector<8xbf16>
// CHECK-COUNT-4: vector.fma
// CHECK: vector.reduction <add>
// CHECK: memref.store %{{.+}}, %[[Y]][%[[ROW]], %{{.+}}] : memref<?x100xbf16>
// CHECK: } else {
// CHECK: %[[PACKED:.+]] = memref.alloc() {alignment = 64 : i64} : memref<7x64x16xf32>
// CHECK: scf.parallel (%[[P:.+]]) = (%c0) to (%c7)
// CHECK: scf.for %[[K:.+]] = %c0 to %c64
// CHECK-COUNT-16: memref.load %[[W]][%{{.+}}, %[[K]]] : memref<100x64xbf16>
// CHECK: vector.from_elements {{.+}} : vector<16xf32>
// CHECK: vector.store %{{.+}}, %[[PACKED]][%[[P]], %[[K]], %c0]
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[TILES]], %c16
// CHECK: scf.parallel (%[[T:.+]], %[[Q:.+]]) = (%c0, %c0) to (%[[BLOCKS]], %c7)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1 {
// CHECK: scf.for {{.+}} = %c0 to %c64 step %c1 iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.load %[[PACKED]][%[[Q]], %{{.+}}, %c0] : memref<7x64x16xf32>, vector<16xf32>
// CHECK-COUNT-6: vector.fma
// CHECK: scf.if
// CHECK: arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.+}}, %[[Y]]
// CHECK: vector.maskedstore %[[Y]]
// CHECK: memref.dealloc %[[PACKED]]
// WIDE-LABEL: func.func @linear
// WIDE: memref.alloc() {alignment = 64 : i64} : memref<4x64x32xf32>
// WIDE-NOT: scf.parallel
// WIDE: vector.fma {{.+}} : vector<32xf32>
// With `amx` (and 64-byte vectors), more than 16 rows run on AMX tiles:
// the runtime asks the OS for them, both operands are packed (x into rows
// of whole 32-step chunks, the weight into panels of 32 columns, its pairs
// of steps adjacent: a whole panel's step transposes its columns' 16 pairs
// in registers, two 16 x 16 blocks of 32-bit pairs, the last panel goes
// column by column), and each 32 x 32 block of the result sums over K in
// four tiles, stored through a buffer and rounded row by row.
// AMX-LABEL: func.func @linear
// AMX: vector.fma
// AMX: } else {
// AMX: func.call @kiln_cpu_request_amx() : () -> ()
// AMX: %[[A:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x64xbf16>
// AMX: %[[B:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x32x64xbf16>
// AMX: vector.load %{{.+}} : memref<?x64xbf16>, vector<32xbf16>
// AMX: vector.store %{{.+}}, %[[A]]
// AMX: vector.load %{{.+}} : memref<100x64xbf16>, vector<32xbf16>
// AMX: vector.bitcast %{{.+}} : vector<32xbf16> to vector<16xi32>
// AMX-COUNT-144: vector.shuffle
// AMX: vector.bitcast %{{.+}} : vector<32xi32> to vector<64xbf16>
// AMX: vector.store %{{.+}}, %[[B]]
// AMX: } else {
// AMX: vector.load %{{.+}} : memref<100x64xbf16>, vector<32xbf16>
// AMX-COUNT-16: vector.extract_strided_slice
// AMX: amx.tile_zero : !amx.tile<16x16xf32>
// AMX: scf.for {{.+}} = %c0 to %c2 step %c1 iter_args({{.+}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// AMX-COUNT-2: amx.tile_load %{{.+}} : memref<?x?xbf16> into !amx.tile<16x32xbf16>
// AMX-COUNT-2: amx.tile_load %{{.+}} : memref<?x?x64xbf16> into !amx.tile<16x32xbf16>
// AMX-COUNT-4: amx.tile_mulf
// AMX: %[[BLOCK:.+]] = memref.alloca() {alignment = 64 : i64} : memref<32x32xf32>
// AMX-COUNT-4: amx.tile_store %[[BLOCK]]
// AMX: vector.load %[[BLOCK]][%{{.+}}, %c0] : memref<32x32xf32>, vector<32xf32>
// AMX: arith.truncf %{{.+}} : vector<32xf32> to vector<32xbf16>
// AMX: memref.dealloc %[[A]]
// AMX: memref.dealloc %[[B]]
// Panels of 16 f32 (32-byte vectors) do not match the tiles: no AMX.
// AMX-NARROW-LABEL: func.func @linear
// AMX-NARROW-NOT: amx.
// AMX-NARROW: vector.fma {{.+}} : vector<16xf32>
// AMX-NARROW-NOT: amx.
fx.graph @linear(%x: tensor<?x64xbf16>, %w: tensor<100x64xbf16>) -> tensor<?x100xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %y = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x64xbf16>, tensor<100x64xbf16> -> tensor<?x100xbf16>
  fx.output %y : tensor<?x100xbf16>
}

// -----

// Batched, with the lhs stored transposed: every batch index is a parallel
// dimension of both phases (canonicalization drops the single tile and
// panel); f64 accumulates in f64.
// CHECK-LABEL: func.func @batched
// CHECK: %[[PACKED:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x1x5x8xf64>
// CHECK: scf.parallel (%[[B:.+]]) = (%c0) to (%c3)
// CHECK: vector.store %{{.+}}, %[[PACKED]][%[[B]], %c0, %{{.+}}, %c0]
// CHECK: scf.parallel (%[[B2:.+]]) = (%c0) to (%c3)
// CHECK: scf.for %[[K:.+]] = %c0 to %c5
// CHECK: memref.load %arg0[%[[B2]], %[[K]], %c0] : memref<3x5x4xf64>
// CHECK: vector.fma {{.+}} : vector<8xf64>
fx.graph @batched(%a: tensor<3x5x4xf64>, %b: tensor<3x5x7xf64>) -> tensor<3x4x7xf64> {
  %y = loop.matmul %a, %b {transpose_lhs} : tensor<3x5x4xf64>, tensor<3x5x7xf64> -> tensor<3x4x7xf64>
  fx.output %y : tensor<3x4x7xf64>
}

// -----

// Where a row's panel lies inside N, the epilogue runs on the vector of its
// sums (its reads contiguous vector loads) and the row is stored as a
// vector. At N's edge it runs on each lane, at a column clamped to N (lanes
// past N are computed in bounds and never stored), and the row is stored
// through a mask.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%{{.+}}: memref<8x64xf32>, %{{.+}}: memref<64x20xf32>, %[[BIAS:.+]]: memref<20xf32>, %[[OUT:.+]]: memref<8x20xbf16>)
// CHECK: %[[SUMS:.+]]:6 = scf.for
// CHECK: scf.if
// CHECK: scf.if
// CHECK: %[[BV:.+]] = vector.load %[[BIAS]][%[[COL:.+]]] : memref<20xf32>, vector<16xf32>
// CHECK: %[[ADDED:.+]] = arith.addf %[[SUMS]]#0, %[[BV]] : vector<16xf32>
// CHECK: %[[ROUNDED:.+]] = arith.truncf %[[ADDED]] : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %[[ROUNDED]], %[[OUT]][%{{.+}}, %[[COL]]]
// CHECK: } else {
// CHECK: %[[LANE:.+]] = arith.minui %[[COL]], %c19 : index
// CHECK: %[[SUM:.+]] = vector.extract %[[SUMS]]#0[0] : f32 from vector<16xf32>
// CHECK: %[[B:.+]] = memref.load %[[BIAS]][%[[LANE]]]
// CHECK: arith.addf %[[SUM]], %[[B]] : f32
// CHECK-COUNT-15: memref.load %[[BIAS]]
// CHECK: vector.from_elements {{.+}} : vector<16xbf16>
// CHECK: vector.maskedstore %[[OUT]]
// f32 operands stay on vector FMAs.
// AMX-LABEL: func.func @epilogue
// AMX-NOT: amx.
// AMX: vector.fma
// AMX-NOT: amx.
fx.graph @epilogue(%x: tensor<8x64xf32>, %w: tensor<64x20xf32>, %bias: tensor<20xf32>) -> tensor<8x20xbf16> {
  %y = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x20xf32> -> tensor<8x20xbf16> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %b = loop.load %bias[%j] : tensor<20xf32>
    %s = arith.addf %sum, %b : f32
    %r = arith.truncf %s : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<8x20xbf16>
}

// -----

// A collapsed input is a collapsed buffer; its merged size is the product
// of the input's sizes, also for the result sizes.
// CHECK-LABEL: func.func @collapsed_rows
// CHECK: %[[X:.+]] = memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<2x?x64xf32> into memref<?x64xf32>
// CHECK: memref.load %[[X]]
// CHECK-LABEL: func.func @collapsed_rows_result_sizes
// CHECK: %[[D:.+]] = memref.dim %arg0, %c1
// CHECK: %[[M:.+]] = arith.muli %[[D]], %c2
// CHECK: return %[[M]]
fx.graph @collapsed_rows(%x: tensor<2x?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %r = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x?x64xf32> into tensor<?x64xf32>
  %m = tensor.dim %r, %c0 : tensor<?x64xf32>
  %y = loop.matmul(%m) %r, %w : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  fx.output %y : tensor<?x32xf32>
}

// -----

// A row-major rhs packs a whole panel with one vector load per step (bf16
// widened to f32), and column by column only at N's edge.
// CHECK-LABEL: func.func @row_major_rhs
// CHECK: %[[FULL:.+]] = arith.cmpi ule
// CHECK: scf.if %[[FULL]] {
// CHECK: %[[ROW:.+]] = vector.load %arg1[%{{.+}}, %{{.+}}] : memref<64x40xbf16>, vector<16xbf16>
// CHECK: arith.extf %[[ROW]] : vector<16xbf16> to vector<16xf32>
// CHECK: } else {
// CHECK: vector.from_elements
// A weight stored [K, N] packs two rows at a time, interleaved.
// AMX-LABEL: func.func @row_major_rhs
// AMX: vector.interleave %{{.+}}, %{{.+}} : vector<32xbf16> -> vector<64xbf16>
// AMX: amx.tile_mulf
fx.graph @row_major_rhs(%x: tensor<8x64xbf16>, %w: tensor<64x40xbf16>) -> tensor<8x40xbf16> {
  %y = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x40xbf16> -> tensor<8x40xbf16>
  fx.output %y : tensor<8x40xbf16>
}

// -----

// A product returned only reshaped (a language model's [B*S, V] logits
// returned as [B, S, V]) is stored straight into the caller's buffer, seen
// through the inverse reshape: no temporary, no copy.
// CHECK-LABEL: func.func @reshaped_result
// CHECK: %[[OUT:.+]] = memref.collapse_shape %arg2 {{\[}}[0, 1], [2]] : memref<2x4x32xf32> into memref<8x32xf32>
// CHECK-NOT: memref.copy
// CHECK: vector.store %{{.+}}, %[[OUT]]
// CHECK-NOT: memref.copy
// CHECK: return
fx.graph @reshaped_result(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<2x4x32xf32> {
  %y = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %r = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 4, 32] : tensor<8x32xf32> into tensor<2x4x32xf32>
  fx.output %r : tensor<2x4x32xf32>
}

// -----

// Merged the other way, the caller's buffer is expanded.
// CHECK-LABEL: func.func @collapsed_result
// CHECK: %[[OUT:.+]] = memref.expand_shape %arg2 {{\[}}[0, 1], [2]] output_shape [2, 4, 32] : memref<8x32xf32> into memref<2x4x32xf32>
// CHECK-NOT: memref.copy
// CHECK: return
fx.graph @collapsed_result(%x: tensor<2x4x64xf32>, %w: tensor<2x64x32xf32>) -> tensor<8x32xf32> {
  %y = loop.matmul %x, %w : tensor<2x4x64xf32>, tensor<2x64x32xf32> -> tensor<2x4x32xf32>
  %r = tensor.collapse_shape %y [[0, 1], [2]] : tensor<2x4x32xf32> into tensor<8x32xf32>
  fx.output %r : tensor<8x32xf32>
}

// -----

// A product returned both as it is and reshaped is stored once, into the
// first result's buffer; the reshaped result is a copy of it.
// CHECK-LABEL: func.func @returned_twice
// CHECK-NOT: memref.collapse_shape %arg3
// CHECK: vector.store %{{.+}}, %arg2
// CHECK: %[[VIEW:.+]] = memref.expand_shape %arg2
// CHECK: memref.copy %[[VIEW]], %arg3
fx.graph @returned_twice(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> (tensor<8x32xf32>, tensor<2x4x32xf32>) {
  %y = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %r = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 4, 32] : tensor<8x32xf32> into tensor<2x4x32xf32>
  fx.output %y, %r : tensor<8x32xf32>, tensor<2x4x32xf32>
}

// -----

// A frozen weight is packed when the graph compiles, into a global of
// panels (here [N/NR = 1, K = 2, NR = 16], zero past N), not at every run:
// the product reads the panels and packs nothing.
// CHECK-DAG: memref.global "private" constant @[[PANELS:kiln_constant[_0-9]*]] : memref<1x2x16xf32> = dense_resource<kiln_packed>
// CHECK-LABEL: func.func @prepacked_weight
// CHECK-NOT: memref.alloc
// CHECK: %[[P:.+]] = memref.get_global @[[PANELS]] : memref<1x2x16xf32>
// CHECK-NOT: vector.from_elements
// CHECK: vector.load %[[P]]
// CHECK-NOT: memref.dealloc
// CHECK: return
fx.graph @prepacked_weight(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = loop.matmul %x, %w {transpose_rhs} : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  fx.output %y : tensor<4x3xf32>
}

// -----

// An f16 weight is widened to the f32 panels as it is packed.
// CHECK-LABEL: func.func @prepacked_f16_weight
// CHECK: kiln_packed{{(_[0-9]+)?}}: "0x040000000000803F{{(0000000000){12}()}}00000040{{(0000000000){12}()}}"
fx.graph @prepacked_f16_weight(%x: tensor<4x2xf16>) -> tensor<4x1xf16> {
  %w = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf16>
  %y = loop.matmul %x, %w : tensor<4x2xf16>, tensor<2x1xf16> -> tensor<4x1xf16>
  fx.output %y : tensor<4x1xf16>
}

// -----

// Over K = 600, the block's tiles take 256 steps at a time (the panel's
// part in L1), their sums saved in the task's buffer between blocks of
// steps: the first block starts from zero, the last one stores the result.
// CHECK-LABEL: func.func @long_k
// CHECK: scf.parallel
// CHECK: %[[SAVED:.+]] = memref.alloca() {alignment = 64 : i64} : memref<16x6x16xf32>
// CHECK: scf.for %[[BLOCK:.+]] = %c0 to %c3 step %c1 {
// CHECK: %[[FIRST:.+]] = arith.muli %[[BLOCK]], %c256
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %c600
// CHECK: scf.for %[[TILE:.+]] =
// CHECK: scf.if %{{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: } else {
// CHECK: vector.load %[[SAVED]]
// CHECK: scf.for %{{.+}} = %[[FIRST]] to %[[END]] step %c1 iter_args
// CHECK: scf.if %{{.+}} {
// CHECK: vector.store %{{.+}}, %arg2
// CHECK: } else {
// CHECK-COUNT-6: vector.store %{{.+}}, %[[SAVED]]
fx.graph @long_k(%a: tensor<8x600xf32>, %b: tensor<600x40xf32>) -> tensor<8x40xf32> {
  %y = loop.matmul %a, %b : tensor<8x600xf32>, tensor<600x40xf32> -> tensor<8x40xf32>
  fx.output %y : tensor<8x40xf32>
}

// -----

// With `amx`, a left-hand side stored [K, M] (a weight gradient's) packs
// whole 32 x 32 blocks by loading 32 vectors along M and transposing them
// in registers (five rounds of 32 shuffles), then storing along K; blocks
// that overrun M or K go by element.
// AMX-LABEL: func.func @transposed_lhs
// AMX: scf.if
// AMX-COUNT-32: vector.load %{{.+}} : memref<96x80xbf16>, vector<32xbf16>
// AMX-COUNT-160: vector.shuffle
// AMX-COUNT-32: vector.store %{{.+}} : memref<96x96xbf16>, vector<32xbf16>
// AMX: } else {
// AMX: memref.load %{{.+}} : memref<96x80xbf16>
// AMX: amx.tile_mulf
fx.graph @transposed_lhs(%a: tensor<96x80xbf16>, %b: tensor<96x64xbf16>) -> tensor<80x64xbf16> {
  %y = loop.matmul %a, %b {transpose_lhs} : tensor<96x80xbf16>, tensor<96x64xbf16> -> tensor<80x64xbf16>
  fx.output %y : tensor<80x64xbf16>
}
