// Graphs over a batch of 0 compile for both targets: their temporaries of
// zero bytes (the product's, the sum's operand) live in a workspace too.
// RUN: kiln-compile %s -o %t.so && llvm-nm -D --defined-only %t.so | FileCheck %s
// RUN: %if ptxas %{ kiln-compile %s --target=cuda -o %t-cuda.so && llvm-nm -D --defined-only %t-cuda.so | FileCheck %s %}

// CHECK: kiln_forward_run
fx.graph @forward(%x: tensor<0x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %mm = fx.mm %x, %w : (tensor<0x16xf32>, tensor<16x8xf32>) -> tensor<0x8xf32>
  %add = fx.add %mm, %b : (tensor<0x8xf32>, tensor<8xf32>) -> tensor<0x8xf32>
  %relu = fx.relu %add : tensor<0x8xf32>
  %sum = fx.sum %relu {dim = array<i64: 0>} : (tensor<0x8xf32>) -> tensor<8xf32>
  fx.output %sum : tensor<8xf32>
}
