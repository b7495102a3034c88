// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s

// Tests the comparisons and the bitwise and logical ops that other files
// leave out: the predicate (ordered or not, signed or not), the dtype
// they compare in, and the operands.

// CHECK-LABEL: fx.graph @bitwise_or(
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[R:.+]] = arith.ori %[[X]], %[[Y]] : i32
// CHECK-NEXT: loop.yield %[[R]] : i32
fx.graph @bitwise_or(%x: tensor<8xsi32>, %y: tensor<8xsi32>) -> (tensor<8xsi32>) {
  %r0 = fx.bitwise_or %x, %y : (tensor<8xsi32>, tensor<8xsi32>) -> tensor<8xsi32>
  fx.output %r0 : tensor<8xsi32>
}

// -----

// CHECK-LABEL: fx.graph @bitwise_xor(
// On bools, xor.
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[R:.+]] = arith.xori %[[X]], %[[Y]] : i1
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @bitwise_xor(%x: tensor<8xi1>, %y: tensor<8xi1>) -> (tensor<8xi1>) {
  %r0 = fx.bitwise_xor %x, %y : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @bitwise_and_scalar(
// CHECK: %[[C:.+]] = arith.constant 12 : i32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[R:.+]] = arith.andi %[[X]], %[[C]] : i32
// CHECK-NEXT: loop.yield %[[R]] : i32
fx.graph @bitwise_and_scalar(%x: tensor<8xsi32>) -> (tensor<8xsi32>) {
  %r0 = fx.bitwise_and_scalar %x {other = 12 : i64} : (tensor<8xsi32>) -> tensor<8xsi32>
  fx.output %r0 : tensor<8xsi32>
}

// -----

// CHECK-LABEL: fx.graph @bitwise_xor_scalar(
// CHECK: %[[C:.+]] = arith.constant -1 : i32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[R:.+]] = arith.xori %[[X]], %[[C]] : i32
// CHECK-NEXT: loop.yield %[[R]] : i32
fx.graph @bitwise_xor_scalar(%x: tensor<8xsi32>) -> (tensor<8xsi32>) {
  %r0 = fx.bitwise_xor_scalar %x {other = -1 : i64} : (tensor<8xsi32>) -> tensor<8xsi32>
  fx.output %r0 : tensor<8xsi32>
}

// -----

// CHECK-LABEL: fx.graph @logical_or(
// Each operand is true where it is not zero (NaN is true).
// CHECK-DAG: %[[IZERO:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[FZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[A:.+]] = arith.cmpf une, %[[X]], %[[FZERO]] : f32
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi ne, %[[Y]], %[[IZERO]] : i32
// CHECK-NEXT: %[[R:.+]] = arith.ori %[[A]], %[[B]] : i1
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @logical_or(%x: tensor<8xf32>, %y: tensor<8xsi32>) -> (tensor<8xi1>) {
  %r0 = fx.logical_or %x, %y : (tensor<8xf32>, tensor<8xsi32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @logical_xor(
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[A:.+]] = arith.cmpf une, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[B:.+]] = arith.cmpf une, %[[Y]], %[[ZERO]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.xori %[[A]], %[[B]] : i1
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @logical_xor(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xi1>) {
  %r0 = fx.logical_xor %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @ge(
// Ordered: NaN compares false.
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[R:.+]] = arith.cmpf oge, %[[X]], %[[Y]] : f32
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @ge(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xi1>) {
  %r0 = fx.ge %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @le(
// Signed integers.
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[R:.+]] = arith.cmpi sle, %[[X]], %[[Y]] : i32
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @le(%x: tensor<8xsi32>, %y: tensor<8xsi32>) -> (tensor<8xi1>) {
  %r0 = fx.le %x, %y : (tensor<8xsi32>, tensor<8xsi32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @lt(
// Unsigned integers.
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[R:.+]] = arith.cmpi ult, %[[X]], %[[Y]] : i8
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @lt(%x: tensor<8xui8>, %y: tensor<8xui8>) -> (tensor<8xi1>) {
  %r0 = fx.lt %x, %y : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @ne(
// Unordered: NaN is unequal to everything.
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = loop.load %arg1
// CHECK-NEXT: %[[R:.+]] = arith.cmpf une, %[[X]], %[[Y]] : f32
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @ne(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xi1>) {
  %r0 = fx.ne %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @eq_scalar(
// CHECK: %[[C:.+]] = arith.constant 3 : i32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[R:.+]] = arith.cmpi eq, %[[X]], %[[C]] : i32
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @eq_scalar(%x: tensor<8xsi32>) -> (tensor<8xi1>) {
  %r0 = fx.eq_scalar %x {other = 3 : i64} : (tensor<8xsi32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @ge_scalar(
// CHECK: %[[C:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[R:.+]] = arith.cmpf oge, %[[X]], %[[C]] : f32
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @ge_scalar(%x: tensor<8xf32>) -> (tensor<8xi1>) {
  %r0 = fx.ge_scalar %x {other = 0.5 : f64} : (tensor<8xf32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @gt_scalar(
// An integer tensor against a float Scalar compares in the default float dtype.
// CHECK: %[[C:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[F:.+]] = arith.sitofp %[[X]] : i32 to f32
// CHECK-NEXT: %[[R:.+]] = arith.cmpf ogt, %[[F]], %[[C]] : f32
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @gt_scalar(%x: tensor<8xsi32>) -> (tensor<8xi1>) {
  %r0 = fx.gt_scalar %x {other = 2.5 : f64} : (tensor<8xsi32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}

// -----

// CHECK-LABEL: fx.graph @le_scalar(
// CHECK: %[[C:.+]] = arith.constant 7 : i8
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[R:.+]] = arith.cmpi ule, %[[X]], %[[C]] : i8
// CHECK-NEXT: loop.yield %[[R]] : i1
fx.graph @le_scalar(%x: tensor<8xui8>) -> (tensor<8xi1>) {
  %r0 = fx.le_scalar %x {other = 7 : i64} : (tensor<8xui8>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}
