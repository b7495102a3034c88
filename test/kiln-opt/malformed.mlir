// Tests that malformed input gives a located diagnostic and a non-zero exit.
// RUN: not kiln-opt %s 2>&1 | FileCheck %s

fx.graph @missing_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: malformed.mlir:[[@LINE+1]]:{{[0-9]+}}: error: expected ':'
  %0 = fx.relu %x
  fx.output %0 : tensor<4xf32>
}
