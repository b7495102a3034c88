// RUN: kiln-opt %s --kiln-fx-to-loop=runtime-checks=true --kiln-loop-to-scf --kiln-emit-entry-points | FileCheck %s

// Tests that a graph with run-time checks exports their messages, one a
// line, beside its signature, whose last result is the check's flag.
// CHECK-LABEL: func.func private @forward
// CHECK-SAME: kiln.checks = ["RuntimeError: ZeroDivisionError"]
// CHECK: llvm.mlir.global external constant @kiln_forward_signature("(tensor<8xsi64>, tensor<8xsi64>) -> (tensor<8xsi64>, tensor<si32>)\00")
// CHECK: llvm.mlir.global external constant @kiln_forward_checks("RuntimeError: ZeroDivisionError\00")
fx.graph @forward(%x: tensor<8xsi64>, %y: tensor<8xsi64>) -> tensor<8xsi64> {
  %0 = fx.div_mode %x, %y {rounding_mode = "floor"} : (tensor<8xsi64>, tensor<8xsi64>) -> tensor<8xsi64>
  fx.output %0 : tensor<8xsi64>
}
