// The input of host-compiler: a program in the host compiler's dialect.
// Arguments are filled with 0.5 * (i + 1) * (j - 2) for argument i, element
// j: %x = [-1, -0.5, 0, 0.5, 1, 1.5], %w = [-2, -1, 0, 1, 2, 3],
// %s = [-3, -1.5, 0, 1.5, 3, 4.5].
// utils/test-embedding.sh checks its output against the lines below.

// CHECK-LABEL: == fx graphs
// CHECK: fx.graph @mlp(%[[X:[a-z0-9]+]]: tensor<2x3xf32>, %[[W:[a-z0-9]+]]: tensor<2x3xf32>, %[[S:[a-z0-9]+]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[SUM:.+]] = fx.add %[[X]], %[[W]]
// CHECK-NEXT: %[[RELU:.+]] = fx.relu %[[SUM]]
// CHECK-NEXT: %[[PROD:.+]] = fx.mul %[[RELU]], %[[S]]
// CHECK-NEXT: %[[OUT:.+]] = fx.add %[[PROD]], %[[X]]
// CHECK-NEXT: fx.output %[[OUT]]
// CHECK-NOT: host.
// CHECK-LABEL: == run @mlp
// CHECK-NEXT: signature: (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: result 0: -1 -0.5 0 2.75 10 21.75
host.func @mlp(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>, %s: tensor<2x3xf32>)
    -> tensor<2x3xf32> {
  %0 = host.add %x, %w : tensor<2x3xf32>
  %1 = host.relu %0 : tensor<2x3xf32>
  %2 = host.mul %1, %s : tensor<2x3xf32>
  %3 = host.add %2, %x : tensor<2x3xf32>
  host.return %3 : tensor<2x3xf32>
}
