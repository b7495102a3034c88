// RUN: kiln-opt %s -split-input-file --kiln-loop-fuse-siblings | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-fuse-siblings='min-row-bytes=4096' | FileCheck %s --check-prefix=WIDE

// Two nodes that read %x become one kernel over their rows; the third reads
// only %y and stays outside.
// CHECK-LABEL: fx.graph @siblings
// CHECK: %[[K:.+]]:2 = loop.kernel rows(1) -> tensor<8x512xf32>, tensor<8x512xf32> {
// CHECK: %[[A:.+]] = loop.pointwise : tensor<8x512xf32>
// CHECK: %[[B:.+]] = loop.pointwise : tensor<8x512xf32>
// CHECK: loop.kernel_yield %[[A]], %[[B]]
// CHECK: %[[C:.+]] = loop.pointwise : tensor<8x512xf32>
// CHECK: fx.output %[[K]]#0, %[[K]]#1, %[[C]]
// Rows of 512 f32 are 2 KiB: below a 4 KiB minimum nothing fuses.
// WIDE-LABEL: fx.graph @siblings
// WIDE-NOT: loop.kernel
// WIDE: fx.output
fx.graph @siblings(%x: tensor<8x512xf32>, %y: tensor<8x512xf32>) -> (tensor<8x512xf32>, tensor<8x512xf32>, tensor<8x512xf32>) {
  %a = loop.pointwise : tensor<8x512xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x512xf32>
    %r = arith.addf %v, %v : f32
    loop.yield %r : f32
  }
  %b = loop.pointwise : tensor<8x512xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x512xf32>
    %w = loop.load %y[%i, %j] : tensor<8x512xf32>
    %r = arith.mulf %v, %w : f32
    loop.yield %r : f32
  }
  %c = loop.pointwise : tensor<8x512xf32> {
  ^bb0(%i: index, %j: index):
    %w = loop.load %y[%i, %j] : tensor<8x512xf32>
    %r = arith.subf %w, %w : f32
    loop.yield %r : f32
  }
  fx.output %a, %b, %c : tensor<8x512xf32>, tensor<8x512xf32>, tensor<8x512xf32>
}

// -----

// A node that reads its sibling is its consumer, not a sibling; nodes of
// another shape, of rank 1, or with short rows stay apart.
// CHECK-LABEL: fx.graph @do_not_fuse_readers_or_other_shapes
// CHECK-NOT: loop.kernel
// CHECK: fx.output
fx.graph @do_not_fuse_readers_or_other_shapes(%x: tensor<8x512xf32>, %v: tensor<4096xf32>, %n: tensor<64x8xf32>) -> (tensor<8x512xf32>, tensor<8x512xf32>, tensor<8x256xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<64x8xf32>, tensor<64x8xf32>) {
  %a = loop.pointwise : tensor<8x512xf32> {
  ^bb0(%i: index, %j: index):
    %e = loop.load %x[%i, %j] : tensor<8x512xf32>
    loop.yield %e : f32
  }
  %b = loop.pointwise : tensor<8x512xf32> {
  ^bb0(%i: index, %j: index):
    %e = loop.load %x[%i, %j] : tensor<8x512xf32>
    %f = loop.load %a[%i, %j] : tensor<8x512xf32>
    %r = arith.addf %e, %f : f32
    loop.yield %r : f32
  }
  %c = loop.pointwise : tensor<8x256xf32> {
  ^bb0(%i: index, %j: index):
    %e = loop.load %x[%i, %j] : tensor<8x512xf32>
    loop.yield %e : f32
  }
  %d = loop.pointwise : tensor<4096xf32> {
  ^bb0(%i: index):
    %e = loop.load %v[%i] : tensor<4096xf32>
    loop.yield %e : f32
  }
  %f = loop.pointwise : tensor<4096xf32> {
  ^bb0(%i: index):
    %e = loop.load %v[%i] : tensor<4096xf32>
    %r = arith.addf %e, %e : f32
    loop.yield %r : f32
  }
  %g = loop.pointwise : tensor<64x8xf32> {
  ^bb0(%i: index, %j: index):
    %e = loop.load %n[%i, %j] : tensor<64x8xf32>
    loop.yield %e : f32
  }
  %h = loop.pointwise : tensor<64x8xf32> {
  ^bb0(%i: index, %j: index):
    %e = loop.load %n[%i, %j] : tensor<64x8xf32>
    %r = arith.addf %e, %e : f32
    loop.yield %r : f32
  }
  fx.output %a, %b, %c, %d, %f, %g, %h : tensor<8x512xf32>, tensor<8x512xf32>, tensor<8x256xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<64x8xf32>, tensor<64x8xf32>
}

// -----

// Reductions of one result type and reduction shape that read a common
// tensor and none of each other (a layer norm's weight and bias gradients,
// both summing the output's gradient) become one kernel whose every node
// is a row value, yielding both.
// CHECK-LABEL: fx.graph @sibling_reductions
// CHECK: %[[K:[0-9]+]]:2 = loop.kernel rows(1) -> tensor<64xf32>, tensor<64xf32> {
// CHECK: loop.reduce "sum" over [512]
// CHECK: loop.reduce "sum" over [512]
// CHECK: loop.kernel_yield
// CHECK: fx.output %[[K]]#0, %[[K]]#1
fx.graph @sibling_reductions(%g: tensor<512x64xf32>, %x: tensor<512x64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = loop.reduce "sum" over [512] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<512x64xf32>
    %w = loop.load %x[%r, %j] : tensor<512x64xf32>
    %p = arith.mulf %v, %w : f32
    loop.yield %p : f32
  }
  %1 = loop.reduce "sum" over [512] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<512x64xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Not siblings: another reduction shape, a reduction that reads the other,
// and one that reads nothing in common.
// CHECK-LABEL: fx.graph @do_not_fuse_unlike_reductions
// CHECK-NOT: loop.kernel
// CHECK: fx.output
fx.graph @do_not_fuse_unlike_reductions(%g: tensor<512x64xf32>, %x: tensor<256x64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = loop.reduce "sum" over [512] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<512x64xf32>
    loop.yield %v : f32
  }
  %1 = loop.reduce "max" over [256] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<512x64xf32>
    loop.yield %v : f32
  }
  %2 = loop.reduce "sum" over [512] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %g[%r, %j] : tensor<512x64xf32>
    %s = loop.load %0[%j] : tensor<64xf32>
    %d = arith.subf %v, %s : f32
    loop.yield %d : f32
  }
  %3 = loop.reduce "sum" over [256] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %x[%r, %j] : tensor<256x64xf32>
    loop.yield %v : f32
  }
  fx.output %0, %1, %2, %3 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// A variance's two sums of deviations from a mean (split partials, say),
// with the reduction of the first's partials between them: the second moves
// up to the first, and the kernel comes before that reader. A sibling that
// reads the mean's reader cannot move up and stays outside.
// CHECK-LABEL: fx.graph @siblings_move_up_past_readers
// CHECK: %[[K:[0-9]+]]:2 = loop.kernel rows(2) -> tensor<8x64xf32>, tensor<8x64xf32> {
// CHECK: loop.kernel_yield
// CHECK: loop.reduce "sum" over [8] : tensor<64xf32>
// CHECK-SAME: {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.load %[[K]]#0
// CHECK-NOT: loop.kernel
// CHECK: fx.output
fx.graph @siblings_move_up_past_readers(%x: tensor<1024x64xf32>, %mean: tensor<64xf32>) -> (tensor<64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = loop.reduce "sum" over [128] : tensor<8x64xf32> {
  ^bb0(%c: index, %j: index, %r: index):
    %c128 = arith.constant 128 : index
    %s = arith.muli %c, %c128 : index
    %k = arith.addi %s, %r : index
    %v = loop.load %x[%k, %j] : tensor<1024x64xf32>
    %m = loop.load %mean[%j] : tensor<64xf32>
    %d = arith.subf %v, %m : f32
    loop.yield %d : f32
  }
  %1 = loop.reduce "sum" over [8] : tensor<64xf32> {
  ^bb0(%j: index, %r: index):
    %v = loop.load %0[%r, %j] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %2 = loop.reduce "sum" over [128] : tensor<8x64xf32> {
  ^bb0(%c: index, %j: index, %r: index):
    %c128 = arith.constant 128 : index
    %s = arith.muli %c, %c128 : index
    %k = arith.addi %s, %r : index
    %v = loop.load %x[%k, %j] : tensor<1024x64xf32>
    %m = loop.load %mean[%j] : tensor<64xf32>
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    loop.yield %q : f32
  }
  %3 = loop.reduce "sum" over [128] : tensor<8x64xf32> {
  ^bb0(%c: index, %j: index, %r: index):
    %c128 = arith.constant 128 : index
    %s = arith.muli %c, %c128 : index
    %k = arith.addi %s, %r : index
    %v = loop.load %x[%k, %j] : tensor<1024x64xf32>
    %m = loop.load %1[%j] : tensor<64xf32>
    %d = arith.subf %v, %m : f32
    loop.yield %d : f32
  }
  fx.output %1, %2, %3 : tensor<64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
