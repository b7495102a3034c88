// RUN: kiln-opt %s -split-input-file -cse | FileCheck %s

// Tests that fx ops are Pure, so that CSE merges equal ones, and keeps ops
// that differ in an operand or an attribute.
// CHECK-LABEL: fx.graph @cse_merges_equal_ops
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[R:.+]] = fx.relu %[[X]]
// CHECK-NEXT: %[[S:.+]] = fx.relu %[[Y]]
// CHECK-NEXT: %[[A:.+]] = fx.add_scalar %[[X]] {other = 1.000000e+00 : f64}
// CHECK-NEXT: %[[B:.+]] = fx.add_scalar %[[X]] {other = 2.000000e+00 : f64}
// CHECK-NEXT: fx.output %[[R]], %[[R]], %[[S]], %[[A]], %[[A]], %[[B]] :
fx.graph @cse_merges_equal_ops(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fx.relu %x : tensor<4xf32>
  %1 = fx.relu %x : tensor<4xf32>
  %2 = fx.relu %y : tensor<4xf32>
  %3 = fx.add_scalar %x {other = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = fx.add_scalar %x {other = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = fx.add_scalar %x {other = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Equal frozen constants are one.
// CHECK-LABEL: fx.graph @cse_merges_equal_constants
// CHECK-COUNT-1: fx.constant
// CHECK-NOT: fx.constant
fx.graph @cse_merges_equal_constants(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = fx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = fx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = fx.add %x, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = fx.add %0, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  fx.output %1 : tensor<2xf32>
}
