// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='transpose-tiles=false' | FileCheck %s --check-prefix=FLAT

// Tests that a node reading its source transposed runs in 32x32 tiles: a
// block of 256 threads per tile; the transposed load staged through a padded
// tile of workgroup memory, read along the source's rows (lane = thread mod
// 32) in four passes of eight columns; then, after a barrier, each thread
// computes four consecutive elements of a result row as one vector, the
// staged values gathered across the tile and the coalesced load read as a
// vector.
// CHECK-LABEL: func.func @transpose
// CHECK-DAG: %[[ACROSS:.+]] = arith.ceildivui %c64, %c32
// CHECK-DAG: %[[ALONG:.+]] = arith.ceildivui %c48, %c32
// CHECK: %[[BLOCKS:.+]] = arith.muli %[[ACROSS]], %[[ALONG]]
// CHECK: gpu.launch async [%{{.+}}] blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}}, %{{.+}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256, %{{.+}}, %{{.+}}) workgroup(%[[TILE:.+]] : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: %[[X:.+]] = memref.assume_alignment %arg0, 16
// CHECK-DAG: %[[Y:.+]] = memref.assume_alignment %arg1, 16
// CHECK-DAG: %[[OUT:.+]] = memref.assume_alignment %arg2, 16
// CHECK: %[[LANE:.+]] = arith.remui %[[T]], %{{.+}}
// CHECK: %[[COLUMN:.+]] = arith.divui %[[T]], %{{.+}}
// CHECK: scf.if
// CHECK: %[[STAGED:.+]] = memref.load %[[X]][%{{.+}}, %{{.+}}] : memref<48x64xf32>
// CHECK: memref.store %[[STAGED]], %[[TILE]][%[[COLUMN]], %[[LANE]]]
// CHECK-COUNT-3: memref.store %{{.+}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-4: memref.load %[[TILE]]
// CHECK: %[[A:.+]] = vector.from_elements %{{.+}} : vector<4xf32>
// CHECK: %[[B:.+]] = vector.load %[[Y]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<64x48xf32>, vector<4xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[A]], %[[B]] : vector<4xf32>
// CHECK: vector.store %[[SUM]], %[[OUT]]
// CHECK-NOT: vector.store
// CHECK: gpu.terminator
// FLAT-LABEL: func.func @transpose
// FLAT-NOT: workgroup
// FLAT-NOT: gpu.barrier
// FLAT: return
fx.graph @transpose(%x: tensor<48x64xf32>, %y: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %0 = loop.pointwise : tensor<64x48xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%j, %i] : tensor<48x64xf32>
    %b = loop.load %y[%i, %j] : tensor<64x48xf32>
    %s = arith.addf %a, %b : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<64x48xf32>
}

// -----

// Tests channels to last (NCHW read as NHWC): the tiles cover W (the
// dimension the source's rows follow) and C; a block per (n, h) and tile
// pair. Indices the staged load computes (here an offset) are recomputed at
// the staging position.
// CHECK-LABEL: func.func @channels_last
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[TILE:.+]] : memref<32x33xbf16, #gpu.address_space<workgroup>>)
// CHECK: %[[SHIFTED:.+]] = arith.addi %{{.+}}, %c1
// CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %[[SHIFTED]]] : memref<2x40x7x10xbf16>
// CHECK: gpu.barrier
// CHECK: memref.load %[[TILE]]
// CHECK: vector.from_elements %{{.+}} : vector<4xbf16>
// CHECK: arith.extf %{{.+}} : vector<4xbf16> to vector<4xf32>
fx.graph @channels_last(%x: tensor<2x40x7x10xbf16>) -> tensor<2x7x9x40xf32> {
  %c1 = arith.constant 1 : index
  %0 = loop.pointwise : tensor<2x7x9x40xf32> {
  ^bb0(%n: index, %h: index, %w: index, %c: index):
    %w1 = arith.addi %w, %c1 : index
    %a = loop.load %x[%n, %c, %h, %w1] : tensor<2x40x7x10xbf16>
    %e = arith.extf %a : bf16 to f32
    loop.yield %e : f32
  }
  fx.output %0 : tensor<2x7x9x40xf32>
}

// -----

// Tests that a staged load may take an index from outside the node (a
// selected plane): staging reads it as the node does.
// CHECK-LABEL: func.func @selected_plane
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[TILE:.+]] : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.load %{{.+}}[%{{.+}}, %c2, %{{.+}}] : memref<40x3x48xf32>
// CHECK: gpu.barrier
// CHECK: memref.load %[[TILE]]
fx.graph @selected_plane(%x: tensor<40x3x48xf32>) -> tensor<48x40xf32> {
  %c2 = arith.constant 2 : index
  %0 = loop.pointwise : tensor<48x40xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%j, %c2, %i] : tensor<40x3x48xf32>
    loop.yield %a : f32
  }
  fx.output %0 : tensor<48x40xf32>
}

// -----

// Tests that dynamic sizes tile too: the tile counts come from the sizes;
// rows of unknown length are computed an element per thread, in four passes.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.+]] = memref.dim %arg0, %c0
// CHECK: arith.ceildivui %[[N]], %c32
// CHECK: gpu.launch
// CHECK-SAME: workgroup
// CHECK: gpu.barrier
// CHECK-NOT: vector.
// CHECK-COUNT-4: memref.store %{{.+}}, %{{.+}} : memref<128x?xf16>
fx.graph @dynamic(%x: tensor<?x128xf16>) -> tensor<128x?xf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x128xf16>
  %0 = loop.pointwise(%n) : tensor<128x?xf16> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%j, %i] : tensor<?x128xf16>
    loop.yield %a : f16
  }
  fx.output %0 : tensor<128x?xf16>
}

// -----

// Tests that nodes whose loads are coalesced in the result's order keep the
// flat launch: a row-wise read and a broadcast column.
// CHECK-LABEL: func.func @do_not_tile_coalesced
// CHECK-NOT: workgroup
// CHECK-NOT: gpu.barrier
// CHECK: return
fx.graph @do_not_tile_coalesced(%x: tensor<64x48xf32>, %y: tensor<64xf32>) -> tensor<64x48xf32> {
  %0 = loop.pointwise : tensor<64x48xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%i, %j] : tensor<64x48xf32>
    %b = loop.load %y[%i] : tensor<64xf32>
    %s = arith.addf %a, %b : f32
    loop.yield %s : f32
  }
  fx.output %0 : tensor<64x48xf32>
}

// -----

// Tests that short transposed dimensions (a 4-wide result row, sources of
// 4-element rows) keep the flat launch: tiles would stay mostly empty.
// CHECK-LABEL: func.func @do_not_tile_short
// CHECK-NOT: workgroup
// CHECK: return
fx.graph @do_not_tile_short(%x: tensor<4x64xf32>, %y: tensor<64x4xf32>) -> (tensor<64x4xf32>, tensor<4x64xf32>) {
  %0 = loop.pointwise : tensor<64x4xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %x[%j, %i] : tensor<4x64xf32>
    loop.yield %a : f32
  }
  %1 = loop.pointwise : tensor<4x64xf32> {
  ^bb0(%i: index, %j: index):
    %a = loop.load %y[%j, %i] : tensor<64x4xf32>
    loop.yield %a : f32
  }
  fx.output %0, %1 : tensor<64x4xf32>, tensor<4x64xf32>
}

// -----

// Tests that a gather (an index read from another tensor) is not staged: its
// position depends on a loaded value.
// CHECK-LABEL: func.func @do_not_tile_gathers
// CHECK-NOT: workgroup
// CHECK: return
fx.graph @do_not_tile_gathers(%x: tensor<48x64xf32>, %idx: tensor<64xsi64>) -> tensor<64x48xf32> {
  %0 = loop.pointwise : tensor<64x48xf32> {
  ^bb0(%i: index, %j: index):
    %k = loop.load %idx[%i] : tensor<64xsi64>
    %ki = arith.index_cast %k : i64 to index
    %a = loop.load %x[%j, %ki] : tensor<48x64xf32>
    loop.yield %a : f32
  }
  fx.output %0 : tensor<64x48xf32>
}
