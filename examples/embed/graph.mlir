// The input of c-api-compiler: relu(x) * y + x on 2x3 tensors, with
// x = [-1, -0.5, 0, 0.5, 1, 1.5] and y = [-2, -1, 0, 1, 2, 3].
// utils/test-embedding.sh checks its output against the lines below.

// CHECK-LABEL: == loop nodes
// CHECK: fx.graph @scale_shift
// CHECK: loop.pointwise
// CHECK-NOT: loop.pointwise
// CHECK: fx.output
// CHECK-LABEL: == run @scale_shift
// CHECK-NEXT: signature: (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: result 0: -1 -0.5 0 1 3 6
fx.graph @scale_shift(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>)
    -> tensor<2x3xf32> {
  %0 = fx.relu %x : tensor<2x3xf32>
  %1 = fx.mul %0, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = fx.add %1, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  fx.output %2 : tensor<2x3xf32>
}
