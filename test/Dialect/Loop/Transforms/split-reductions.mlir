// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions='min-elements=2000000' | FileCheck %s --check-prefix=LONGER
// RUN: kiln-opt %s -split-input-file --kiln-loop-split-reductions='max-results=129 partial-results=256' | FileCheck %s --check-prefix=FEWER

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
