// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='block-size=32' | FileCheck %s --check-prefix=WARP
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='row-cache=false' | FileCheck %s --check-prefix=NOCACHE
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='row-lane-vectors=8 short-row-block-size=64' | FileCheck %s --check-prefix=LANES

// Tests that a reduction over long rows runs with a block of 128 threads
// per row: each thread reads 16-byte vectors of the row (four steps,
// unrolled, all their loads first so that they are in flight together),
// warps combine with shuffles,
// then the warps' totals go through workgroup memory; thread 0 stores the
// row's result.
// CHECK-LABEL: func.func @long_row_sums
// CHECK: gpu.launch async [%{{.+}}] blocks(%[[ROW:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %{{.+}}, %{{.+}}, %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128, %{{.+}}, %{{.+}}) workgroup(%[[SCRATCH:.+]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.for
// CHECK: %[[FIRST:.+]] = arith.muli %[[TX]], %c8
// CHECK: %[[SECOND:.+]] = arith.addi %{{.+}}, %c1024
// CHECK: arith.addi %{{.+}}, %c2048
// CHECK: arith.addi %{{.+}}, %c3072
// CHECK: vector.load %{{.+}}[%[[ROW]], %[[FIRST]]] {alignment = 16 : i64} : memref<64x4096xbf16>, vector<8xbf16>
// CHECK-NEXT: vector.load %{{.+}}[%[[ROW]], %[[SECOND]]]
// CHECK-NEXT: vector.load
// CHECK-NEXT: vector.load
// CHECK-NOT: vector.load
// CHECK: arith.extf
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32, %c32_i32 : f32
// CHECK: memref.store %{{.+}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
// CHECK: gpu.shuffle xor
// CHECK: %[[ROUNDED:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK: scf.if
// CHECK: memref.store %[[ROUNDED]], %{{.+}}[%[[ROW]]] : memref<64xbf16>
// WARP-LABEL: func.func @long_row_sums
// WARP-NOT: workgroup
// WARP-NOT: gpu.barrier
// WARP: gpu.terminator
fx.graph @long_row_sums(%x: tensor<64x4096xbf16>) -> tensor<64xbf16> {
  %0 = loop.reduce "sum" over [4096] : tensor<64xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<64x4096xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<64xbf16>
}

// -----

// Tests that short rows get a warp each, a block of 32 threads each (blocks
// of one warp retire as soon as their row is done): no barrier, no bounds
// check.
// CHECK-LABEL: func.func @short_row_sums
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %c1
// CHECK: gpu.launch async [%{{.+}}] blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}}, %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c32,
// CHECK-NOT: workgroup
// CHECK-NOT: scf.if
// CHECK-NOT: gpu.barrier
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32, %c32_i32
// CHECK: gpu.terminator
// With 8 vectors a lane, half a warp takes each row, and a block of 64
// threads four rows.
// LANES-LABEL: func.func @short_row_sums
// LANES: %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %c4
// LANES: gpu.launch async [%{{.+}}] blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}}, %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c64,
// LANES: arith.remui %[[TX]], %c16
// LANES-COUNT-8: vector.load
// LANES-NOT: %c16_i32
// LANES: gpu.shuffle xor %{{.+}}, %c8_i32, %c32_i32
// LANES: gpu.terminator
fx.graph @short_row_sums(%x: tensor<100x1024xbf16>) -> tensor<100xbf16> {
  %0 = loop.reduce "sum" over [1024] : tensor<100xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<100x1024xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<100xbf16>
}

// -----

// Tests that rows of a few vectors per lane share a warp: 8 lanes a row (4
// vectors each), 4 rows to a block of 32 threads; the shuffles stay within
// each row's lanes.
// CHECK-LABEL: func.func @sub_warp_rows
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %c4
// CHECK: gpu.launch async [%{{.+}}] blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}}, %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c32{{(_[0-9]+)?}},
// CHECK: arith.remui %[[TX]], %c8
// CHECK-COUNT-4: vector.load
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.shuffle xor %{{.+}}, %c4_i32, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.shuffle xor %{{.+}}, %c2_i32, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.shuffle xor %{{.+}}, %c1_i32, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.terminator
fx.graph @sub_warp_rows(%x: tensor<64x256xbf16>) -> tensor<64xbf16> {
  %0 = loop.reduce "sum" over [256] : tensor<64xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<64x256xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<64xbf16>
}

// -----

// Tests that rows that would share warps take a whole warp each when their
// count is not a multiple of the rows per warp: a warp's shuffles need all
// its lanes, and lanes past the last row would skip them.
// CHECK-LABEL: func.func @do_not_share_warps_between_ragged_rows
// CHECK: arith.ceildivui %{{.+}}, %c1
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32, %c32_i32
fx.graph @do_not_share_warps_between_ragged_rows(%x: tensor<50x256xbf16>) -> tensor<50xbf16> {
  %0 = loop.reduce "sum" over [256] : tensor<50xbf16> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<50x256xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<50xbf16>
}

// -----

// Tests that tiny rows (a 3x3 pooling window) get a thread each, 256 rows to
// a block: the window is unrolled in the thread, nothing is shuffled.
// CHECK-LABEL: func.func @window_maxima
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %c256
// CHECK: gpu.launch async [%{{.+}}] blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}}, %{{.+}}) threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c256
// CHECK-NOT: workgroup
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-9: memref.load %{{.+}} : memref<8x30x30xf32>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.terminator
fx.graph @window_maxima(%x: tensor<8x30x30xf32>) -> tensor<8x10x10xf32> {
  %0 = loop.reduce "max" over [3, 3] : tensor<8x10x10xf32> {
  ^bb0(%n: index, %i: index, %j: index, %r: index, %s: index):
    %c3 = arith.constant 3 : index
    %i3 = arith.muli %i, %c3 : index
    %j3 = arith.muli %j, %c3 : index
    %y = arith.addi %i3, %r : index
    %x2 = arith.addi %j3, %s : index
    %v = loop.load %x[%n, %y, %x2] : tensor<8x30x30xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<8x10x10xf32>
}

// -----

// Tests that 64-bit values are shuffled in two 32-bit halves.
// CHECK-LABEL: func.func @int64_sums
// CHECK: arith.trunci %{{.+}} : i64 to i32
// CHECK: gpu.shuffle xor %{{.+}} : i32
// CHECK: arith.shrui
// CHECK: gpu.shuffle xor %{{.+}} : i32
// CHECK: arith.shli
// CHECK: arith.ori
fx.graph @int64_sums(%x: tensor<4x100xsi64>) -> tensor<4xsi64> {
  %0 = loop.reduce "sum" over [100] : tensor<4xsi64> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<4x100xsi64>
    loop.yield %v : i64
  }
  fx.output %0 : tensor<4xsi64>
}

// -----

// Tests that a kernel is one launch: the row's maximum stays in registers for
// the node after it, which stores its columns; only yielded values are
// stored.
// CHECK-LABEL: func.func @kernel
// CHECK-COUNT-1: gpu.launch
// CHECK: %[[MAX:.+]] = arith.maximumf
// CHECK-NOT: memref.store %{{.+}}, %{{.+}} : memref<8x1xf32>
// CHECK: arith.subf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: vector.store
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
fx.graph @kernel(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %k = loop.kernel rows(1) -> tensor<8x64xf32> {
    %m = loop.reduce "max" over [64] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x64xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x64xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %mx : f32
      loop.yield %d : f32
    }
    loop.kernel_yield %y : tensor<8x64xf32>
  }
  fx.output %k : tensor<8x64xf32>
}

// -----

// Tests that a long row's elements are loaded once, all eight steps first,
// and stay in registers for the node after the reduction; what every row
// reads (%w) is loaded where each step uses it. With row-cache=false the
// node after the barrier loads the row again.
// CHECK-LABEL: func.func @row_cache
// CHECK: %[[X:.+]] = memref.assume_alignment %arg0
// CHECK: %[[W:.+]] = memref.assume_alignment %arg1
// CHECK-COUNT-8: vector.load %[[X]][
// CHECK: gpu.barrier
// CHECK-NOT: vector.load %[[X]][
// CHECK: %[[G:.+]] = vector.load %[[W]][
// CHECK: arith.mulf %{{.+}}, %[[G]] : vector<4xf32>
// CHECK: vector.store
// CHECK: vector.load %[[W]][
// CHECK-NOT: vector.load %[[X]][
// CHECK: gpu.terminator
// NOCACHE-LABEL: func.func @row_cache
// NOCACHE: %[[X:.+]] = memref.assume_alignment %arg0
// NOCACHE-COUNT-8: vector.load %[[X]][
// NOCACHE: gpu.barrier
// NOCACHE-COUNT-8: vector.load %[[X]][
// NOCACHE: vector.store
fx.graph @row_cache(%x: tensor<8x4096xf32>, %w: tensor<4096xf32>) -> tensor<8x4096xf32> {
  %c0 = arith.constant 0 : index
  %k = loop.kernel rows(1) -> tensor<8x4096xf32> {
    %s = loop.reduce "sum" over [4096] : tensor<8x1xf32> {
    ^bb0(%i: index, %u: index, %r: index):
      %v = loop.load %x[%i, %r] : tensor<8x4096xf32>
      loop.yield %v : f32
    }
    %y = loop.pointwise : tensor<8x4096xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x4096xf32>
      %g = loop.load %w[%j] : tensor<4096xf32>
      %t = loop.load %s[%i, %c0] : tensor<8x1xf32>
      %d = arith.subf %v, %t : f32
      %e = arith.mulf %d, %g : f32
      loop.yield %e : f32
    }
    loop.kernel_yield %y : tensor<8x4096xf32>
  }
  fx.output %k : tensor<8x4096xf32>
}
