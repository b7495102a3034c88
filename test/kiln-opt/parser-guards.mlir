// Tests that input MLIR's parser would crash on (a dense array of index) is
// refused with a located diagnostic and a non-zero exit, by both tools; in
// strings and comments it is harmless: array<index: 0>.
// RUN: not kiln-opt %s 2>&1 | FileCheck %s
// RUN: not kiln-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not kiln-compile %s --emit=mlir -o - 2>&1 | FileCheck %s

fx.graph @index_array(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: parser-guards.mlir:[[@LINE+1]]:25: error: dense arrays of `index` are not supported: use `array<i64: ...>`
  %0 = fx.sum %x {dim = array< index: 1>, note = "array<index: 1>"} : (tensor<4x8xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}
// CHECK-NOT: error
