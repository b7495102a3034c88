// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions='min-elements=2000000' | FileCheck %s --check-prefix=LONGER
// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions='max-results=129 partial-results=256' | FileCheck %s --check-prefix=FEWER
// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions='column-chunk=0' | FileCheck %s --check-prefix=NOCOLUMNS

// A whole tensor's sum: 1024 partial sums over chunks of 977 elements (f32,
// the accumulator of bf16), positions past the end adding 0, then their sum.
// CHECK-LABEL: fx.graph @sum
// CHECK-SAME: (%[[X:.+]]: tensor<1000001xbf16>)
// CHECK: %[[P:.+]] = loop.reduce "sum" over [977] : tensor<1024xf32> {
// CHECK-NEXT: ^bb0(%[[C:.+]]: index, %[[K:.+]]: index):
// CHECK: %[[START:.+]] = arith.muli %[[C]], %c977
// CHECK: %[[AT:.+]] = arith.addi %[[START]], %[[K]]
// CHECK: %[[IN:.+]] = arith.cmpi ule, %[[AT]], %c1000000
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[AT]], %c1000000
// CHECK: loop.load %[[X]][%[[CLAMPED]]]
// CHECK: arith.select %[[IN]]
// CHECK: loop.reduce "sum" over [1024] : tensor<bf16> {
// CHECK: loop.load %[[P]][%{{.+}}] : tensor<1024xf32>
// LONGER-LABEL: fx.graph @sum
// LONGER: loop.reduce "sum" over [1000001] : tensor<bf16>
// About 256 partial sums in all: 256 chunks of 3907 elements.
// FEWER-LABEL: fx.graph @sum
// FEWER: loop.reduce "sum" over [3907] : tensor<256xf32>
// FEWER: loop.reduce "sum" over [256] : tensor<bf16>
fx.graph @sum(%x: tensor<1000001xbf16>) -> tensor<bf16> {
  %0 = loop.reduce "sum" over [1000001] : tensor<bf16> {
  ^bb0(%k: index):
    %v = loop.load %x[%k] : tensor<1000001xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<bf16>
}

// -----

// FEWER-LABEL: fx.graph @channel_max
// FEWER: loop.reduce "max" over [8, 32, 32] : tensor<1x8x1x1x32xf32>
// FEWER: loop.reduce "max" over [32] : tensor<1x8x1x1xf32>

// Per-channel maxima over [N, H, W] of 8 channels: 128 chunks each over the
// batch's 256 images (2 each); the result dimension stays first, the
// chunk comes last; past the end max reads the last element again.
// CHECK-LABEL: fx.graph @channel_max
// CHECK: %[[P:.+]] = loop.reduce "max" over [2, 32, 32] : tensor<1x8x1x1x128xf32> {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index, %[[I2:.+]]: index, %[[I3:.+]]: index, %[[C:.+]]: index, %[[R0:.+]]: index, %[[R1:.+]]: index, %[[R2:.+]]: index):
// CHECK-NOT: arith.select
// CHECK: loop.load %{{.+}}[%{{.+}}, %[[I1]], %[[R1]], %[[R2]]]
// CHECK: loop.reduce "max" over [128] : tensor<1x8x1x1xf32>
fx.graph @channel_max(%x: tensor<256x8x32x32xf32>) -> tensor<1x8x1x1xf32> {
  %0 = loop.reduce "max" over [256, 32, 32] : tensor<1x8x1x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index, %r1: index, %r2: index):
    %v = loop.load %x[%r0, %i1, %r1, %r2] : tensor<256x8x32x32xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<1x8x1x1xf32>
}

// -----

// Many results, short rows, dynamic sizes and "welford" stay whole.
// With max-results=129, the 128 rows of 65536 split too, in 2 chunks each
// (about 256 partial results in all).
// FEWER-LABEL: fx.graph @do_not_split
// FEWER: loop.reduce "sum" over [32768] : tensor<128x2xf32>
// FEWER: loop.reduce "sum" over [2] : tensor<128xf32>
// FEWER: loop.reduce "sum"(%{{.+}}) over [100000] : tensor<?xf32>
// CHECK-LABEL: fx.graph @do_not_split
// CHECK: loop.reduce "sum" over [65536] : tensor<128xf32>
// CHECK: loop.reduce "sum"(%{{.+}}) over [100000] : tensor<?xf32>
// CHECK: loop.reduce "welford" over [100000] : tensor<f32>
// CHECK: loop.reduce "sum" over [1000] : tensor<f32>
// CHECK-NOT: loop.reduce
fx.graph @do_not_split(%x: tensor<128x65536xf32>, %y: tensor<?x100000xf32>, %z: tensor<100000xf32>) -> (tensor<128xf32>, tensor<?xf32>, tensor<f32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x100000xf32>
  %0 = loop.reduce "sum" over [65536] : tensor<128xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %x[%i, %k] : tensor<128x65536xf32>
    loop.yield %v : f32
  }
  %1 = loop.reduce "sum"(%n) over [100000] : tensor<?xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %y[%i, %k] : tensor<?x100000xf32>
    loop.yield %v : f32
  }
  %2 = loop.reduce "welford" over [100000] : tensor<f32> {
  ^bb0(%k: index):
    %v = loop.load %z[%k] : tensor<100000xf32>
    loop.yield %v : f32
  }
  %3 = loop.reduce "sum" over [1000] : tensor<f32> {
  ^bb0(%k: index):
    %v = loop.load %z[%k] : tensor<100000xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1, %2, %3 : tensor<128xf32>, tensor<?xf32>, tensor<f32>, tensor<f32>
}

// -----

// A sum down columns (a bias gradient) splits into partial sums over 128
// rows each, the chunk a first result dimension so that each partial still
// reads along its innermost dimension, then the sum of the 32 partials;
// 4096 rows are whole chunks: nothing is clamped.
// CHECK-LABEL: fx.graph @bias_gradient
// CHECK-SAME: (%[[G:.+]]: tensor<4096x768xbf16>)
// CHECK: %[[P:.+]] = loop.reduce "sum" over [128] : tensor<32x768xf32> {
// CHECK-NEXT: ^bb0(%[[C:.+]]: index, %[[J:.+]]: index, %[[K:.+]]: index):
// CHECK: %[[START:.+]] = arith.muli %[[C]], %c128
// CHECK: %[[AT:.+]] = arith.addi %[[START]], %[[K]]
// CHECK-NOT: arith.minui
// CHECK: loop.load %[[G]][%[[AT]], %[[J]]]
// CHECK-NOT: arith.select
// CHECK: loop.reduce "sum" over [32] : tensor<768xbf16> {
// CHECK-NEXT: ^bb0(%[[J2:.+]]: index, %[[R:.+]]: index):
// CHECK: loop.load %[[P]][%[[R]], %[[J2]]] : tensor<32x768xf32>
// NOCOLUMNS-LABEL: fx.graph @bias_gradient
// NOCOLUMNS: loop.reduce "sum" over [4096] : tensor<768xbf16>
// NOCOLUMNS-NOT: loop.reduce
// NOCOLUMNS: fx.output
fx.graph @bias_gradient(%g: tensor<4096x768xbf16>) -> tensor<768xbf16> {
  %0 = loop.reduce "sum" over [4096] : tensor<768xbf16> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<4096x768xbf16>
    %w = arith.extf %v : bf16 to f32
    loop.yield %w : f32
  }
  fx.output %0 : tensor<768xbf16>
}

// -----

// A channels-last image's per-channel sum over N x H x W = 2 x 300 x 300:
// the flattened positions (clamped, the last chunk past the end adding 0)
// are split back into the three indices; the 1407 partials' sum splits
// again, into 11 partials of 128 and their sum.
// CHECK-LABEL: fx.graph @channel_sums
// CHECK: loop.reduce "sum" over [128] : tensor<1407x64xf32> {
// CHECK: %[[IN:.+]] = arith.cmpi ule, %{{.+}}, %c179999
// CHECK: %[[AT:.+]] = arith.minui %{{.+}}, %c179999
// CHECK-DAG: %[[W:.+]] = arith.remui %[[AT]], %c300
// CHECK-DAG: %[[H0:.+]] = arith.divui %[[AT]], %c300
// CHECK-DAG: %[[H:.+]] = arith.remui %[[H0]], %c300
// CHECK-DAG: %[[N:.+]] = arith.divui %[[AT]], %c90000
// CHECK: loop.load %{{.+}}[%[[N]], %[[H]], %[[W]], %{{.+}}] : tensor<2x300x300x64xf32>
// CHECK: arith.select %[[IN]]
// CHECK: loop.reduce "sum" over [128] : tensor<11x64xf32> {
// CHECK: loop.reduce "sum" over [11] : tensor<64xf32> {
fx.graph @channel_sums(%x: tensor<2x300x300x64xf32>) -> tensor<64xf32> {
  %0 = loop.reduce "sum" over [2, 300, 300] : tensor<64xf32> {
  ^bb0(%c: index, %n: index, %h: index, %w: index):
    %v = loop.load %x[%n, %h, %w, %c] : tensor<2x300x300x64xf32>
    loop.yield %v : f32
  }
  fx.output %0 : tensor<64xf32>
}

// -----

// A weight gradient reads a per-row statistic (the same element for every
// result: shared) with the rows it sums: down columns all the same.
// CHECK-LABEL: fx.graph @weight_gradient
// CHECK: loop.reduce "sum" over [128] : tensor<8x256xf32>
// CHECK: loop.reduce "sum" over [8] : tensor<256xf32>
fx.graph @weight_gradient(%g: tensor<1024x256xf32>, %rstd: tensor<1024x1xf32>) -> tensor<256xf32> {
  %c0 = arith.constant 0 : index
  %0 = loop.reduce "sum" over [1024] : tensor<256xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<1024x256xf32>
    %s = loop.load %rstd[%r, %c0] : tensor<1024x1xf32>
    %p = arith.mulf %v, %s : f32
    loop.yield %p : f32
  }
  fx.output %0 : tensor<256xf32>
}

// -----

// Not down columns: a load at a shifted column, and results fewer than a
// warp's lanes; and a reduction of at most two chunks.
// CHECK-LABEL: fx.graph @do_not_split_columns
// CHECK: loop.reduce "sum" over [1024] : tensor<255xf32>
// CHECK: loop.reduce "sum" over [1024] : tensor<16xf32>
// CHECK: loop.reduce "sum" over [256] : tensor<256xf32>
// CHECK-NOT: loop.reduce
fx.graph @do_not_split_columns(%g: tensor<1024x256xf32>) -> (tensor<255xf32>, tensor<16xf32>, tensor<256xf32>) {
  %c1 = arith.constant 1 : index
  %0 = loop.reduce "sum" over [1024] : tensor<255xf32> {
  ^bb0(%j: index, %r: index):
    %k = arith.addi %j, %c1 : index
    %v = loop.load %g[%r, %k] : tensor<1024x256xf32>
    loop.yield %v : f32
  }
  %1 = loop.reduce "sum" over [1024] : tensor<16xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<1024x256xf32>
    loop.yield %v : f32
  }
  %2 = loop.reduce "sum" over [256] : tensor<256xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<1024x256xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1, %2 : tensor<255xf32>, tensor<16xf32>, tensor<256xf32>
}

// -----

// Batch norm's statistics of a channels-last image, kept as [1, C, 1, 1]:
// the unit dimensions go (users read the sum through a tensor.expand_shape)
// and the sum splits down columns; so does the sum of deviations, whose
// mean it reads as [1, C, 1, 1] too. The same statistic of an NCHW image
// reads along rows: it keeps its shape and splits as rows do.
// CHECK-LABEL: fx.graph @keepdim_channel_sums
// CHECK: loop.reduce "sum" over [128] : tensor<1407x64xf32>
// CHECK: loop.reduce "sum" over [128] : tensor<11x64xf32>
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [11] : tensor<64xf32>
// CHECK: %[[MEAN:.+]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1, 2, 3]] output_shape [1, 64, 1, 1]
// CHECK: loop.reduce "sum" over [128] : tensor<1407x64xf32>
// CHECK: loop.load %[[MEAN]][%c0, %{{.+}}, %c0, %c0] : tensor<1x64x1x1xf32>
// CHECK: loop.reduce "sum" over [11] : tensor<64xf32>
// CHECK: tensor.expand_shape
// CHECK: loop.reduce "sum" over [{{.+}}] : tensor<1x64x1x1x{{[0-9]+}}xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: fx.output
// NOCOLUMNS-LABEL: fx.graph @keepdim_channel_sums
// NOCOLUMNS-NOT: tensor.expand_shape
// NOCOLUMNS: fx.output
fx.graph @keepdim_channel_sums(%x: tensor<2x300x300x64xf32>, %y: tensor<2x64x300x300xf32>) -> (tensor<1x64x1x1xf32>, tensor<1x64x1x1xf32>, tensor<1x64x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %0 = loop.reduce "sum" over [2, 300, 300] : tensor<1x64x1x1xf32> {
  ^bb0(%i: index, %c: index, %j: index, %k: index, %n: index, %h: index, %w: index):
    %v = loop.load %x[%n, %h, %w, %c] : tensor<2x300x300x64xf32>
    loop.yield %v : f32
  }
  %1 = loop.reduce "sum" over [2, 300, 300] : tensor<1x64x1x1xf32> {
  ^bb0(%i: index, %c: index, %j: index, %k: index, %n: index, %h: index, %w: index):
    %v = loop.load %x[%n, %h, %w, %c] : tensor<2x300x300x64xf32>
    %m = loop.load %0[%c0, %c, %c0, %c0] : tensor<1x64x1x1xf32>
    %d = arith.subf %v, %m : f32
    loop.yield %d : f32
  }
  %2 = loop.reduce "sum" over [2, 300, 300] : tensor<1x64x1x1xf32> {
  ^bb0(%i: index, %c: index, %j: index, %k: index, %n: index, %h: index, %w: index):
    %v = loop.load %y[%n, %c, %h, %w] : tensor<2x64x300x300xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1, %2 : tensor<1x64x1x1xf32>, tensor<1x64x1x1xf32>, tensor<1x64x1x1xf32>
}
