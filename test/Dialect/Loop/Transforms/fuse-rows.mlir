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

// A reader that cannot join (another row count) runs after the kernel;
// a later reader that needs nothing after the kernel moves up and joins.
// CHECK-LABEL: fx.graph @readers_past_a_foreign_reader_move_up
// CHECK: %[[K:.+]]:3 = loop.kernel rows(1)
// CHECK: loop.pointwise : tensor<8x1xf32>
// CHECK: loop.pointwise : tensor<8x64xf32>
// CHECK: loop.kernel_yield
// CHECK: loop.pointwise : tensor<2x8xf32>
// CHECK: loop.load %[[K]]#0
// CHECK-NOT: loop.kernel
fx.graph @readers_past_a_foreign_reader_move_up(%x: tensor<8x64xf32>) -> (tensor<8x1xf32>, tensor<2x8xf32>, tensor<8x64xf32>) {
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

// -----

// A matrix product that takes a member as its operand ends the group as a
// reader that cannot join does: the normalization before it is one kernel,
// and the node after the product that reads the statistic stays apart.
// CHECK-LABEL: fx.graph @rows_end_at_a_product
// CHECK: %[[K:[0-9]+]]:2 = loop.kernel rows(1) -> tensor<8x1xf32>, tensor<8x64xf32> {
// CHECK: loop.reduce "sum"
// CHECK: loop.pointwise : tensor<8x64xf32>
// CHECK: loop.matmul %[[K]]#1
// CHECK: loop.pointwise : tensor<8x64xf32>
// CHECK: loop.load %[[K]]#0
fx.graph @rows_end_at_a_product(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %s = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %m = loop.load %s[%i, %c0] : tensor<8x1xf32>
    %d = arith.subf %v, %m : f32
    loop.yield %d : f32
  }
  %p = loop.matmul %y, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %z = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<8x64xf32>
    %m = loop.load %s[%i, %c0] : tensor<8x1xf32>
    %d = arith.mulf %v, %m : f32
    loop.yield %d : f32
  }
  fx.output %y, %z : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// A reduction over the same rows that a member reads joins the group even
// though it reads no member (a layer norm gradient's two row sums): one
// kernel computes both sums and the node that reads them.
// CHECK-LABEL: fx.graph @sibling_row_sums
// CHECK: %[[K:.+]] = loop.kernel rows(1) -> tensor<8x64xf32> {
// CHECK: %[[A:.+]] = loop.reduce "sum"
// CHECK: %[[B:.+]] = loop.reduce "sum"
// CHECK: loop.pointwise : tensor<8x64xf32>
// CHECK-DAG: loop.load %[[A]]
// CHECK-DAG: loop.load %[[B]]
// CHECK: loop.kernel_yield
// CHECK-NOT: loop.reduce
// CHECK: fx.output %[[K]]
fx.graph @sibling_row_sums(%x: tensor<8x64xf32>, %g: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %a = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %g[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %b = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %g[%i, %r] : tensor<8x64xf32>
    %w = loop.load %x[%i, %r] : tensor<8x64xf32>
    %p = arith.mulf %v, %w : f32
    loop.yield %p : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %sa = loop.load %a[%i, %c0] : tensor<8x1xf32>
    %sb = loop.load %b[%i, %c0] : tensor<8x1xf32>
    %p = arith.mulf %v, %sb : f32
    %d = arith.subf %p, %sa : f32
    loop.yield %d : f32
  }
  fx.output %y : tensor<8x64xf32>
}

// -----

// A sibling reduction that a node before the group's end also reads cannot
// move into the group's kernel: it makes a kernel of its own with that
// reader, whose sum the group reads.
// CHECK-LABEL: fx.graph @do_not_move_a_sibling_read_earlier
// CHECK: %[[B:[0-9]+]]:2 = loop.kernel rows(1) -> tensor<8x1xf32>, tensor<8x64xf32> {
// CHECK: loop.load %arg0[%{{.+}}, %{{.+}}]
// CHECK: loop.load %arg2
// CHECK: loop.kernel_yield
// CHECK: loop.kernel rows(1) -> tensor<8x64xf32> {
// CHECK: loop.load %arg1
// CHECK: loop.load %[[B]]#0
fx.graph @do_not_move_a_sibling_read_earlier(%x: tensor<8x64xf32>, %g: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %a = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %g[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %b = loop.reduce "sum" over [64] : tensor<8x1xf32> {
  ^bb0(%i: index, %u: index, %r: index):
    %v = loop.load %x[%i, %r] : tensor<8x64xf32>
    loop.yield %v : f32
  }
  %e = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %w[%i, %j] : tensor<64x64xf32>
    %sb = loop.load %b[%i, %c0] : tensor<8x1xf32>
    %d = arith.mulf %v, %sb : f32
    loop.yield %d : f32
  }
  %y = loop.pointwise : tensor<8x64xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<8x64xf32>
    %sa = loop.load %a[%i, %c0] : tensor<8x1xf32>
    %sb = loop.load %b[%i, %c0] : tensor<8x1xf32>
    %p = arith.mulf %v, %sb : f32
    %d = arith.subf %p, %sa : f32
    loop.yield %d : f32
  }
  fx.output %y, %e : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// A reader that also reads what a foreign reader made stays after both.
// CHECK-LABEL: fx.graph @readers_of_a_foreign_reader_stay
// CHECK: %[[K:.+]]:2 = loop.kernel rows(1)
// CHECK: loop.kernel_yield
// CHECK: %[[B:.+]] = loop.pointwise : tensor<2x8xf32>
// CHECK: loop.pointwise : tensor<8x64xf32>
// CHECK: loop.load %[[B]]
// CHECK-NOT: loop.kernel
fx.graph @readers_of_a_foreign_reader_stay(%x: tensor<8x64xf32>) -> (tensor<8x1xf32>, tensor<8x64xf32>) {
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
    %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
    %bv = loop.load %b[%c0, %i] : tensor<2x8xf32>
    %d = arith.subf %bv, %mx : f32
    loop.yield %d : f32
  }
  fx.output %h, %y : tensor<8x1xf32>, tensor<8x64xf32>
}

// -----

// The merges of two column passes' partial sums (batch norm's gradient
// sums, split) run in one kernel with what reads them per channel, though
// the second pass comes after the first merge: the first merge moves down.
// A reader with other rows ([1, 8]) runs after the kernel.
// CHECK-LABEL: fx.graph @sibling_merges_join
// CHECK: %[[P:.+]] = loop.reduce "sum" over [16] : tensor<4x8xf32>
// CHECK: %[[Q:.+]] = loop.reduce "sum" over [16] : tensor<4x8xf32>
// CHECK: loop.kernel rows(1) -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK: loop.reduce "sum" over [4] : tensor<8xf32>
// CHECK: loop.load %[[P]]
// CHECK: loop.reduce "sum" over [4] : tensor<8xf32>
// CHECK: loop.load %[[Q]]
// CHECK: loop.pointwise : tensor<8xf32>
// CHECK: loop.kernel_yield
// CHECK: loop.pointwise : tensor<1x8xf32>
// CHECK-NOT: loop.kernel
fx.graph @sibling_merges_join(%x: tensor<64x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %p = loop.reduce "sum" over [16] : tensor<4x8xf32> {
  ^bb0(%b: index, %c: index, %r: index):
    %o = arith.muli %b, %c16 : index
    %row = arith.addi %o, %r : index
    %v = loop.load %x[%row, %c] : tensor<64x8xf32>
    loop.yield %v : f32
  }
  %s = loop.reduce "sum" over [4] : tensor<8xf32> {
  ^bb0(%c: index, %r: index):
    %v = loop.load %p[%r, %c] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  %q = loop.reduce "sum" over [16] : tensor<4x8xf32> {
  ^bb0(%b: index, %c: index, %r: index):
    %o = arith.muli %b, %c16 : index
    %row = arith.addi %o, %r : index
    %v = loop.load %x[%row, %c] : tensor<64x8xf32>
    %sq = arith.mulf %v, %v : f32
    loop.yield %sq : f32
  }
  %t = loop.reduce "sum" over [4] : tensor<8xf32> {
  ^bb0(%c: index, %r: index):
    %v = loop.load %q[%r, %c] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  %both = loop.pointwise : tensor<8xf32> {
  ^bb0(%c: index):
    %a = loop.load %s[%c] : tensor<8xf32>
    %b = loop.load %t[%c] : tensor<8xf32>
    %d = arith.subf %b, %a : f32
    loop.yield %d : f32
  }
  %kept = loop.pointwise : tensor<1x8xf32> {
  ^bb0(%u: index, %c: index):
    %a = loop.load %s[%c] : tensor<8xf32>
    loop.yield %a : f32
  }
  fx.output %s, %t, %both, %kept : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>
}
