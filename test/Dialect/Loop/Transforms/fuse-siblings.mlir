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
