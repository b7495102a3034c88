// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s
// RUN: not kiln-opt %s -split-input-file --kiln-fx-to-loop=fail-on-unsupported 2>&1 | FileCheck %s --check-prefix=ERROR

// Max pooling is a window reduction: positions outside the input give -inf;
// the window's position is o * stride + k * dilation - padding.
// CHECK-LABEL: fx.graph @max_pool
// CHECK-DAG: %[[INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.reduce "max"(%[[N]]) over [3, 3] : tensor<?x4x5x5xf32> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[OH:.+]]: index, %{{.+}}: index, %[[KH:.+]]: index, %{{.+}}: index):
// CHECK: arith.muli %[[OH]], %c2
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: %[[V:.+]] = loop.load %arg0
// CHECK: %[[R:.+]] = arith.select %{{.+}}, %[[V]], %[[INF]] : f32
// CHECK: loop.yield %[[R]] : f32
fx.graph @max_pool(%x: tensor<?x4x9x10xf32>) -> tensor<?x4x5x5xf32> {
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x4x9x10xf32>) -> (tensor<?x4x5x5xf32>, tensor<?x4x5x5xsi64>)
  fx.output %0#0 : tensor<?x4x5x5xf32>
}

// -----

// Average pooling sums the window in f32 (for bf16) and divides by its size.
// CHECK-LABEL: fx.graph @avg_pool
// CHECK: %[[S:.+]] = loop.reduce "sum" over [3, 3] : tensor<2x3x4x4xf32>
// CHECK: loop.pointwise : tensor<2x3x4x4xbf16>
// CHECK: %[[V:.+]] = loop.load %[[S]]
// CHECK: %[[C:.+]] = arith.sitofp %{{.+}} : i64 to f32
// CHECK: %[[A:.+]] = arith.divf %[[V]], %[[C]] : f32
// CHECK: arith.truncf %[[A]] : f32 to bf16
fx.graph @avg_pool(%x: tensor<2x3x7x7xbf16>) -> tensor<2x3x4x4xbf16> {
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false} : (tensor<2x3x7x7xbf16>) -> tensor<2x3x4x4xbf16>
  fx.output %0 : tensor<2x3x4x4xbf16>
}

// -----

// Images of any size: each window count is (In + 2p - d(k - 1) - 1) / s + 1
// of the run-time extent; windows stop at the run-time extents, and the
// indices flatten positions by the run-time width.
// CHECK-LABEL: fx.graph @dynamic_max_pool
// CHECK-DAG: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK-DAG: %[[W:.+]] = tensor.dim %arg0, %c3
// CHECK: %[[HS:.+]] = arith.addi %{{.+}}, %c-1 : index
// CHECK: %[[HQ:.+]] = arith.divsi %[[HS]], %c2 : index
// CHECK: %[[OH:.+]] = arith.addi %[[HQ]], %c1 : index
// CHECK: %[[WS:.+]] = arith.addi %{{.+}}, %c-1 : index
// CHECK: %[[WQ:.+]] = arith.divsi %[[WS]], %c2 : index
// CHECK: %[[OW:.+]] = arith.addi %[[WQ]], %c1 : index
// CHECK: loop.reduce "max"(%{{.+}}, %[[OH]], %[[OW]]) over [3, 3] : tensor<?x4x?x?xf32>
// CHECK: arith.cmpi slt, %{{.+}}, %[[H]] : index
// CHECK: loop.reduce "min"(%{{.+}}, %[[OH]], %[[OW]]) over [3, 3] : tensor<?x4x?x?xi64>
// CHECK: arith.muli %{{.+}}, %[[W]] : index
fx.graph @dynamic_max_pool(%x: tensor<?x4x?x?xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x?xsi64>) {
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x4x?x?xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x?xsi64>)
  fx.output %0#0, %0#1 : tensor<?x4x?x?xf32>, tensor<?x4x?x?xsi64>
}

// -----

// With ceil_mode the count rounds up, (In + 1) / 2 + 1 here, less one where
// the last window would start in the right padding: at (count - 1) * 2 >=
// In + 1. Without count_include_pad the divisor clips each window to the
// input.
// CHECK-LABEL: fx.graph @dynamic_avg_pool_ceil_mode
// CHECK: %[[Q:.+]] = arith.divsi %[[H:.+]], %c2 : index
// CHECK: %[[UP:.+]] = arith.addi %[[Q]], %c1 : index
// CHECK: %[[START:.+]] = arith.muli %[[Q]], %c2 : index
// CHECK: %[[EDGE:.+]] = arith.addi %[[H]], %c1 : index
// CHECK: %[[PAST:.+]] = arith.cmpi sge, %[[START]], %[[EDGE]] : index
// CHECK: %[[OH:.+]] = arith.select %[[PAST]], %[[Q]], %[[UP]] : index
// CHECK: loop.reduce "sum"(%[[OH]]) over [3, 3] : tensor<2x3x?x4xf32>
// CHECK: loop.pointwise(%{{.+}}) : tensor<2x3x?x4xf32>
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.divf
fx.graph @dynamic_avg_pool_ceil_mode(%x: tensor<2x3x?x7xf32>) -> tensor<2x3x?x4xf32> {
  %0 = fx.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false} : (tensor<2x3x?x7xf32>) -> tensor<2x3x?x4xf32>
  fx.output %0 : tensor<2x3x?x4xf32>
}

// -----

// The gradients of pooling images of any size gather over the outputs that
// may cover each input position (2 x 2 of a 3 x 3 window at stride 2), up to the run-time output extents; the
// max pooling gradient matches indices by the run-time width; adaptive
// pooling over a run-time extent tries every output (3 by 1 here).
// CHECK-LABEL: fx.graph @dynamic_pooling_gradients
// CHECK: %[[W:.+]] = tensor.dim %arg1, %c3
// CHECK: %[[OH:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[N:.+]] = tensor.dim %arg1, %c0
// CHECK: %[[H:.+]] = tensor.dim %arg1, %c2
// CHECK: %[[W2:.+]] = tensor.dim %arg1, %c3
// CHECK: loop.reduce "sum"(%[[N]], %[[H]], %[[W2]]) over [2, 2] : tensor<?x2x?x?xf32>
// CHECK: arith.cmpi slt, %{{.+}}, %[[OH]] : index
// CHECK: arith.muli %{{.+}}, %[[W]] : index
// CHECK: loop.reduce "sum"(%{{.+}}, %{{.+}}, %{{.+}}) over [2, 2] : tensor<?x2x?x?xf32>
// CHECK: arith.divf
// CHECK: loop.reduce "sum"(%{{.+}}, %{{.+}}, %{{.+}}) over [3, 1] : tensor<?x2x?x?xf32>
// CHECK: arith.divui
fx.graph @dynamic_pooling_gradients(%g: tensor<?x2x?x?xf32>, %x: tensor<?x2x?x?xf32>, %i: tensor<?x2x?x?xsi64>, %ga: tensor<?x2x3x1xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) {
  %0 = fx.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xsi64>) -> tensor<?x2x?x?xf32>
  %1 = fx.avg_pool2d_backward %g, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %2 = fx.adaptive_avg_pool2d_backward %ga, %x : (tensor<?x2x3x1xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  fx.output %0, %1, %2 : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>
}

// -----

// Adaptive pooling windows [floor(o In / Out), ceil((o + 1) In / Out)) are
// at most 3 wide for 7 inputs and 3 or 5 outputs.
// CHECK-LABEL: fx.graph @adaptive_avg_pool
// CHECK: loop.reduce "sum" over [3, 3] : tensor<2x3x3x5xf32>
// CHECK: arith.ceildivui
// CHECK: arith.cmpi ult
// CHECK: loop.pointwise : tensor<2x3x3x5xf32>
// CHECK: arith.divf
fx.graph @adaptive_avg_pool(%x: tensor<2x3x7x7xf32>) -> tensor<2x3x3x5xf32> {
  %0 = fx.adaptive_avg_pool2d %x : (tensor<2x3x7x7xf32>) -> tensor<2x3x3x5xf32>
  fx.output %0 : tensor<2x3x3x5xf32>
}

// -----

// A dynamic input height bounds its windows at run time by ceil(In / 3) + 1
// and clamps reads to the run-time last row; the static width keeps its
// window of 3.
// CHECK-LABEL: fx.graph @adaptive_avg_pool_of_a_dynamic_extent
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[CEIL:.+]] = arith.ceildivui %[[H]], %c3
// CHECK: %[[WINDOW:.+]] = arith.addi %[[CEIL]], %c1
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.reduce "sum"(%[[N]]) over [%[[WINDOW]], 3] : tensor<?x3x3x5xf32>
// CHECK: arith.muli %{{.+}}, %[[H]]
// CHECK: arith.cmpi ult
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x3x3x5xf32>
fx.graph @adaptive_avg_pool_of_a_dynamic_extent(%x: tensor<?x3x?x7xf32>) -> tensor<?x3x3x5xf32> {
  %0 = fx.adaptive_avg_pool2d %x : (tensor<?x3x?x7xf32>) -> tensor<?x3x3x5xf32>
  fx.output %0 : tensor<?x3x3x5xf32>
}

// -----

// The indices of the maxima: a second window reduction of h * W + w where
// the element equals the maximum, negated where the maximum is NaN (the last
// NaN wins, as in PyTorch), then negated back.
// CHECK-LABEL: fx.graph @max_pool_indices
// CHECK: %[[MAX:.+]] = loop.reduce "max" over [2, 2] : tensor<1x2x2x2xf32>
// CHECK: loop.reduce "min" over [2, 2] : tensor<1x2x2x2xi64>
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK: %[[M:.+]] = loop.load %[[MAX]]
// CHECK: %[[ROW:.+]] = arith.muli %{{.+}}, %c4
// CHECK: %[[PLANE:.+]] = arith.addi %[[ROW]], %{{.+}}
// CHECK: %[[I:.+]] = arith.index_cast %[[PLANE]] : index to i64
// CHECK: arith.cmpf uno, %[[M]], %[[M]]
// CHECK: arith.cmpf oeq, %[[X]], %[[M]]
// CHECK: arith.subi %c0_i64, %[[I]]
// CHECK: loop.pointwise : tensor<1x2x2x2xsi64>
// CHECK: arith.cmpi slt
fx.graph @max_pool_indices(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xsi64> {
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xsi64>)
  fx.output %0#1 : tensor<1x2x2x2xsi64>
}

// -----

// Integer pooling has no lowering yet.
// ERROR: error: kiln-fx-to-loop: no lowering for 'fx.max_pool2d_with_indices' with these operand types
fx.graph @integer_max_pool(%x: tensor<1x2x4x4xsi32>) -> tensor<1x2x2x2xsi32> {
  %0:2 = fx.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>} : (tensor<1x2x4x4xsi32>) -> (tensor<1x2x2x2xsi32>, tensor<1x2x2x2xsi64>)
  fx.output %0#0 : tensor<1x2x2x2xsi32>
}

// -----

// max pooling's gradient gathers: input (h, w) sums, over the window
// elements k that may cover it (k = (h + padding) mod stride + j stride,
// 2 of the 3 per dimension at stride 2), the gradient of output
// (h + padding) div stride - j where that lands among the outputs and
// names (h, w).
// CHECK-LABEL: fx.graph @max_pool_backward
// CHECK: loop.reduce "sum" over [2, 2] : tensor<1x2x5x5xf32>
// CHECK: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[H:.+]]: index, %[[W:.+]]: index, %[[JH:.+]]: index, %[[JW:.+]]: index):
// CHECK: %[[P:.+]] = arith.addi %[[H]], %c1
// CHECK: %[[K0:.+]] = arith.remui %[[P]], %c2
// CHECK: %[[STEP:.+]] = arith.muli %[[JH]], %c2
// CHECK: %[[K:.+]] = arith.addi %[[K0]], %[[STEP]]
// CHECK: %[[O0:.+]] = arith.divui %[[P]], %c2
// CHECK: %[[OH:.+]] = arith.subi %[[O0]], %[[JH]]
// CHECK: arith.cmpi slt, %[[K]], %c3
// CHECK: arith.cmpi sge, %[[OH]], %c0
// CHECK: %[[PLANE:.+]] = arith.addi %{{.+}}, %[[W]]
// CHECK: %[[INDEX:.+]] = loop.load %arg2
// CHECK: %[[POS:.+]] = arith.index_cast %[[PLANE]] : index to i64
// CHECK: arith.cmpi eq, %[[INDEX]], %[[POS]]
// CHECK: loop.load %arg0
fx.graph @max_pool_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>, %i: tensor<1x2x3x3xsi64>) -> tensor<1x2x5x5xf32> {
  %0 = fx.max_pool2d_with_indices_backward %g, %x, %i {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>, tensor<1x2x3x3xsi64>) -> tensor<1x2x5x5xf32>
  fx.output %0 : tensor<1x2x5x5xf32>
}

// -----

// adaptive average pooling's gradient gathers from output floor(h Out / In)
// and the next (7 inputs, 3 outputs: a position is in at most 2 windows),
// each gradient divided by its window's size.
// CHECK-LABEL: fx.graph @adaptive_avg_pool_backward
// CHECK: loop.reduce "sum" over [2, 2] : tensor<2x3x7x7xf32>
// CHECK: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[H:.+]]: index, %{{.+}}: index, %[[R:.+]]: index, %{{.+}}: index):
// CHECK: %[[SCALED:.+]] = arith.muli %[[H]], %c3
// CHECK: %[[FIRST:.+]] = arith.divui %[[SCALED]], %c7
// CHECK: arith.addi %[[FIRST]], %[[R]]
// CHECK: arith.divf
fx.graph @adaptive_avg_pool_backward(%g: tensor<2x3x3x3xf32>, %x: tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32> {
  %0 = fx.adaptive_avg_pool2d_backward %g, %x : (tensor<2x3x3x3xf32>, tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32>
  fx.output %0 : tensor<2x3x7x7xf32>
}

// -----

// avg_pool2d's gradient gathers too: input position h receives, for each
// window element k that may cover it, the gradient of output
// (h + padding - k) / stride over that output's divisor (here the window
// clipped to the input, without the padding).
// CHECK-LABEL: fx.graph @avg_pool_backward
// CHECK: loop.reduce "sum" over [2, 2] : tensor<1x2x5x5xf32>
// CHECK: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[H:.+]]: index, %[[W:.+]]: index, %[[JH:.+]]: index, %[[JW:.+]]: index):
// CHECK: arith.remui %{{.+}}, %c2
// CHECK: arith.divui %{{.+}}, %c2
// CHECK: %[[GRAD:.+]] = loop.load %arg0
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[COUNT:.+]] = arith.muli
// CHECK: %[[DIVISOR:.+]] = arith.sitofp
// CHECK: arith.divf %[[GRAD]], %[[DIVISOR]]
fx.graph @avg_pool_backward(%g: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %0 = fx.avg_pool2d_backward %g, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  fx.output %0 : tensor<1x2x5x5xf32>
}

// -----

// 3-d pooling: windows over three spatial dimensions (adaptive ones as wide
// as the widest window), then a division by each window's size.
// CHECK-LABEL: fx.graph @avg_pool3d
// CHECK: loop.reduce "sum" over [3, 3, 3] : tensor<2x3x3x4x3xf32>
// CHECK: loop.pointwise : tensor<2x3x3x4x3xf32>
// CHECK: arith.divf
// CHECK: loop.reduce "sum" over [3, 3, 2] : tensor<2x3x2x3x4xf32>
// CHECK: loop.pointwise : tensor<2x3x2x3x4xf32>
// CHECK: arith.divf
fx.graph @avg_pool3d(%x: tensor<2x3x5x7x6xf32>) -> (tensor<2x3x3x4x3xf32>, tensor<2x3x2x3x4xf32>) {
  %0 = fx.avg_pool3d %x {kernel_size = array<i64: 3>, stride = array<i64: 2>, padding = array<i64: 1>, count_include_pad = false} : (tensor<2x3x5x7x6xf32>) -> tensor<2x3x3x4x3xf32>
  %1 = fx.adaptive_avg_pool3d %x : (tensor<2x3x5x7x6xf32>) -> tensor<2x3x2x3x4xf32>
  fx.output %0, %1 : tensor<2x3x3x4x3xf32>, tensor<2x3x2x3x4xf32>
}

// -----

// 3-d max pooling: a window of three dimensions; indices count positions in
// the input volume, (d * H + h) * W + w.
// CHECK-LABEL: fx.graph @max_pool3d
// CHECK: loop.reduce "max" over [2, 2, 2] : tensor<1x1x1x1x2xf32>
// CHECK: loop.reduce "min" over [2, 2, 2] : tensor<1x1x1x1x2xi64>
// CHECK: arith.muli %{{.+}}, %c3
// CHECK: arith.muli %{{.+}}, %c4
fx.graph @max_pool3d(%x: tensor<1x1x2x3x4xf32>) -> (tensor<1x1x1x1x2xf32>, tensor<1x1x1x1x2xsi64>) {
  %0:2 = fx.max_pool3d_with_indices %x {kernel_size = array<i64: 2, 2, 2>, stride = array<i64: 2, 2, 2>} : (tensor<1x1x2x3x4xf32>) -> (tensor<1x1x1x1x2xf32>, tensor<1x1x1x1x2xsi64>)
  fx.output %0#0, %0#1 : tensor<1x1x1x1x2xf32>, tensor<1x1x1x1x2xsi64>
}

// -----

// col2im (fold): a node of the kernel positions' terms, zero where no block
// puts one at the pixel, summed over the kernel.
// CHECK-LABEL: fx.graph @col2im
// CHECK: loop.pointwise : tensor<1x2x4x4x2x2xf32>
// CHECK: arith.remsi
// CHECK: arith.select
// CHECK: loop.reduce "sum" over [2, 2] : tensor<1x2x4x4xf32>
fx.graph @col2im(%x: tensor<1x8x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = fx.col2im %x {kernel_size = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x4xf32>) -> tensor<1x2x4x4xf32>
  fx.output %0 : tensor<1x2x4x4xf32>
}
