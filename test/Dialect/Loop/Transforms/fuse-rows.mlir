// RUN: kiln-opt %s -split-input-file --kiln-loop-fuse-rows | FileCheck %s

// Softmax's three nodes: the maximum, the sum of exponentials (which reads
// the maximum at its row) and the division become one kernel that yields
// only the result.
// CHECK-LABEL: fx.graph @softmax
// CHECK: %[[K:.+]] = loop.kernel rows(1) -> tensor<8x64xf32> {
// CHECK: %[[MAX:.+]] = loop.reduce "max"
// CHECK: %[[SUM:.+]] = loop.reduce "sum"
// CHECK: loop.load %[[MAX]]
// CHECK: %[[Y:.+]] = loop.pointwise : tensor<8x64xf32>
// CHECK: loop.kernel_yield %[[Y]] : tensor<8x64xf32>
// CHECK: fx.output %[[K]]
fx.graph @softmax(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %m = loop.reduce "max" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %s = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<8x64xf32>
    %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    loop.yield %e : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
    %sm = loop.load %s[%i, %c0] : tensor<8x1xf32>
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %sm : f32
    loop.yield %q : f32
  }
  fx.output %y : tensor<8x64xf32>
}

// -----

// A row value the graph also returns is a result of the kernel.
// CHECK-LABEL: fx.graph @returned_statistic
// CHECK: %[[K:.+]]:2 = loop.kernel rows(1) -> tensor<8x1xf32>, tensor<8x64xf32>
// CHECK: fx.output %[[K]]#1, %[[K]]#0
fx.graph @returned_statistic(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x1xf32>) {
  %c0 = arith.constant 0 : index
  %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
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
  fx.output %y, %m : tensor<8x64xf32>, tensor<8x1xf32>
}

// -----

// A reader that takes another row's value (here, row 0's) cannot join; a
// lone reduction stays a node.
// CHECK-LABEL: fx.graph @do_not_fuse_other_rows
// CHECK-NOT: loop.kernel
fx.graph @do_not_fuse_other_rows(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %mx = loop.load %m[%c0, %c0] : tensor<8x1xf32>
    %d = arith.subf %v, %mx : f32
    loop.yield %d : f32
  }
  fx.output %y : tensor<8x64xf32>
}

// -----

// A reduction over the leading dimension has columns for rows: its readers
// would need all rows first.
// CHECK-LABEL: fx.graph @do_not_fuse_column_sums
// CHECK-NOT: loop.kernel
fx.graph @do_not_fuse_column_sums(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %m = loop.reduce "sum" over [8] : tensor<1x64xf32> {
  ^bb0(%u: index, %j: index, %r: index):
    %v = loop.load %x[%r, %j] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %mx = loop.load %m[%c0, %j] : tensor<1x64xf32>
    %d = arith.subf %v, %mx : f32
    loop.yield %d : f32
  }
  fx.output %y : tensor<8x64xf32>
}

// -----

// A reader that cannot join (another row count) ends the group; the kernel
// holds what came before it and runs first.
// CHECK-LABEL: fx.graph @do_not_fuse_past_a_foreign_reader
// CHECK: %[[K:.+]]:2 = loop.kernel rows(1)
// CHECK: loop.pointwise : tensor<8x1xf32>
// CHECK: loop.kernel_yield
// CHECK: loop.pointwise : tensor<2x8xf32>
// CHECK: loop.load %[[K]]
// CHECK-NOT: loop.kernel
fx.graph @do_not_fuse_past_a_foreign_reader(%x: tensor<8x64xf32>) -> (tensor<8x1xf32>, tensor<2x8xf32>, tensor<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %m = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %h = loop.pointwise : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index):
    %s = loop.load %m[%i, %c0] : tensor<8x1xf32>
    %d = arith.mulf %s, %s : f32
    loop.yield %d : f32
  }
  %b = loop.pointwise : tensor<2x8xf32> {
  ^bb0(%i: index, %j: index):
    %s = loop.load %m[%j, %c0] : tensor<8x1xf32>
    loop.yield %s : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
    %d = arith.subf %v, %mx : f32
    loop.yield %d : f32
  }
  fx.output %h, %b, %y : tensor<8x1xf32>, tensor<2x8xf32>, tensor<8x64xf32>
}
