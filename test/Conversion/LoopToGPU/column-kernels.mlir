// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='column-kernels=false' | FileCheck %s --check-prefix=ROWS

// Tests that a reduction down columns runs as a column kernel: blocks of 8
// warps, a block per 32 consecutive results (a lane each, the last lanes of
// the last block clamped), each warp summing every 8th of the 128 rows
// (16 steps, unrolled, their loads first in flight together), the warps'
// partials through workgroup memory, combined in order by every thread;
// the first warp stores the results in range.
// CHECK-LABEL: func.func @partial_sums
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %c32
// CHECK: gpu.launch async [%{{.+}}] blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}}, %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256, %{{.+}}, %{{.+}}) workgroup(%[[SCRATCH:.+]] : memref<8x32xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[LANE:.+]] = arith.remui %[[TX]], %c32
// CHECK: %[[WARP:.+]] = arith.divui %[[TX]], %c32
// CHECK: %[[RESULT:.+]] = arith.addi %{{.+}}, %[[LANE]]
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[RESULT]], %{{.+}}
// CHECK-NOT: scf.for
// CHECK-COUNT-16: memref.load %{{.+}} : memref<4096x768xbf16>
// CHECK-NOT: memref.load %{{.+}} : memref<4096x768xbf16>
// CHECK: memref.store %{{.+}}, %[[SCRATCH]][%[[WARP]], %[[LANE]]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SCRATCH]]
// CHECK: scf.if
// CHECK: memref.store %{{.+}} : memref<32x768xf32>
// ROWS-LABEL: func.func @partial_sums
// ROWS-NOT: memref<8x32xf32, #gpu.address_space<workgroup>>
// ROWS: gpu.shuffle
fx.graph @partial_sums(%x: tensor<4096x768xbf16>) -> tensor<32x768xf32> {
  %c128 = arith.constant 128 : index
  %0 = loop.reduce "sum" over [128] : tensor<32x768xf32> {
  ^bb0(%i0: index, %i1: index, %r0: index):
    %s = arith.muli %i0, %c128 : index
    %p = arith.addi %s, %r0 : index
    %v = loop.load %x[%p, %i1] : tensor<4096x768xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<32x768xf32>
}

// -----

// A long reduction loops (every 8th position per warp); a node that reads
// the total at its own result joins the kernel and is computed from the
// total every thread holds.
// CHECK-LABEL: func.func @long_columns_and_a_reader
// CHECK: workgroup(%[[SCRATCH:.+]] : memref<8x32xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c8
// CHECK: gpu.barrier
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: memref.store %{{.+}} : memref<64xbf16>
fx.graph @long_columns_and_a_reader(%x: tensor<1000x64xf32>) -> tensor<64xbf16> {
  %k = loop.kernel rows(1) -> tensor<64xbf16> {
    %0 = loop.reduce "sum" over [1000] : tensor<64xf32> {
    ^bb0(%i: index, %r: index):
      %v = loop.load %x[%r, %i] : tensor<1000x64xf32>
      loop.yield %v : f32
    }
    %1 = loop.pointwise : tensor<64xbf16> {
    ^bb0(%i: index):
      %t = loop.load %0[%i] : tensor<64xf32>
      %h = arith.mulf %t, %t : f32
      %b = arith.truncf %h : f32 to bf16
      loop.yield %b : bf16
    }
    loop.kernel_yield %1 : tensor<64xbf16>
  }
  fx.output %k : tensor<64xbf16>
}

// -----

// Reductions that are not down columns, or too short to gain, stay row
// kernels: a row sum, a column sum read at a shifted column, and 32 rows.
// CHECK-LABEL: func.func @do_not_use_columns
// CHECK-NOT: memref<8x32xf32, #gpu.address_space<workgroup>>
// CHECK: return
fx.graph @do_not_use_columns(%x: tensor<256x64xf32>) -> (tensor<256xf32>, tensor<63xf32>, tensor<64xf32>) {
  %c1 = arith.constant 1 : index
  %0 = loop.reduce "sum" over [64] : tensor<256xf32> {
  ^bb0(%i: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<256x64xf32>
    loop.yield %v : f32
  }
  %1 = loop.reduce "sum" over [256] : tensor<63xf32> {
  ^bb0(%i: index, %r: index):
    %j = arith.addi %i, %c1 : index
    %v = loop.load %x[%r, %j] : tensor<256x64xf32>
    loop.yield %v : f32
  }
  %2 = loop.reduce "sum" over [32] : tensor<64xf32> {
  ^bb0(%i: index, %r: index):
    %v = loop.load %x[%r, %i] : tensor<256x64xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1, %2 : tensor<256xf32>, tensor<63xf32>, tensor<64xf32>
}

// -----

// Two reductions of a kernel (siblings that read a common tensor) each get
// their own workgroup memory for the warps' partials and their own barrier;
// both results are stored.
// CHECK-LABEL: func.func @two_sums
// CHECK: workgroup(%[[FIRST:.+]] : memref<8x32xf32, #gpu.address_space<workgroup>>, %[[SECOND:.+]] : memref<8x32xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %{{.+}}, %[[FIRST]]
// CHECK: gpu.barrier
// CHECK: %[[OUT0:.+]] = memref.assume_alignment %arg2
// CHECK: memref.store %{{.+}}, %[[OUT0]]
// CHECK: memref.store %{{.+}}, %[[SECOND]]
// CHECK: gpu.barrier
// CHECK: %[[OUT1:.+]] = memref.assume_alignment %arg3
// CHECK: memref.store %{{.+}}, %[[OUT1]]
fx.graph @two_sums(%g: tensor<256x64xf32>, %x: tensor<256x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %k:2 = loop.kernel rows(1) -> tensor<64xf32>, tensor<64xf32> {
    %0 = loop.reduce "sum" over [256] : tensor<64xf32> {
    ^bb0(%j: index, %r: index):
      %v = loop.load %g[%r, %j] : tensor<256x64xf32>
      %w = loop.load %x[%r, %j] : tensor<256x64xf32>
      %p = arith.mulf %v, %w : f32
      loop.yield %p : f32
    }
    %1 = loop.reduce "sum" over [256] : tensor<64xf32> {
    ^bb0(%j: index, %r: index):
      %v = loop.load %g[%r, %j] : tensor<256x64xf32>
      loop.yield %v : f32
    }
    loop.kernel_yield %0, %1 : tensor<64xf32>, tensor<64xf32>
  }
  fx.output %k#0, %k#1 : tensor<64xf32>, tensor<64xf32>
}
