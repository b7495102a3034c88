// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-lower-to-loop | FileCheck %s --check-prefix=FUSED

// Softmax in f32 for a bf16 input: the row's maximum, the sum of shifted
// exponentials, then the quotient rounded to bf16.
// CHECK-LABEL: fx.graph @softmax
// CHECK: %[[MAX:.+]] = loop.reduce "max" over [64] : tensor<8x1xf32>
// CHECK: %[[EXP:.+]] = loop.pointwise : tensor<8x64xf32>
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [64] : tensor<8x1xf32>
// CHECK: loop.load %[[EXP]]
// CHECK: loop.pointwise : tensor<8x64xbf16>
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// FUSED-LABEL: fx.graph @softmax
// FUSED: loop.kernel rows(1) -> tensor<8x64xbf16>
// FUSED-COUNT-2: loop.reduce
// FUSED: loop.kernel_yield
fx.graph @softmax(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
  %0 = fx.softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  fx.output %0 : tensor<8x64xbf16>
}

// -----

// Log-softmax: x - max - log(sum).
// CHECK-LABEL: fx.graph @log_softmax_middle
// CHECK: loop.reduce "max" over [5] : tensor<3x1x7xf32>
// CHECK: loop.reduce "sum" over [5] : tensor<3x1x7xf32>
// CHECK: math.log
fx.graph @log_softmax_middle(%x: tensor<3x5x7xf32>) -> tensor<3x5x7xf32> {
  %0 = fx.log_softmax %x {dim = 1 : i64, half_to_float = false} : (tensor<3x5x7xf32>) -> tensor<3x5x7xf32>
  fx.output %0 : tensor<3x5x7xf32>
}

// -----

// LayerNorm: mean, mean squared deviation, rsqrt(var + eps), then the affine
// normalization; the statistics are returned in the dtype the op declares.
// CHECK-LABEL: fx.graph @layer_norm
// CHECK: loop.reduce "sum"(%{{.+}}) over [4096] : tensor<?x1xf32>
// CHECK: loop.reduce "sum"(%{{.+}}) over [4096] : tensor<?x1xf32>
// CHECK: math.rsqrt
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x4096xbf16>
// FUSED-LABEL: fx.graph @layer_norm
// FUSED: %[[K:.+]]:3 = loop.kernel rows(1)
// FUSED: fx.output %[[K]]#
fx.graph @layer_norm(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %out, %mean, %rstd = fx.native_layer_norm %x weight(%w) bias(%b) {eps = 1.0e-05 : f64, normalized_shape = array<i64: 4096>} : (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>)
  fx.output %out, %mean, %rstd : tensor<?x4096xbf16>, tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// Variance: the rounded mean m, then over the deviations d = x - m both
// sum(d) and sum(d^2); the squared deviations from the mean are
// sum(d^2) - sum(d)^2 / n (never below 0), exact for any m, and the mean is
// m + sum(d) / n. Then a division by max(count - correction, 0) into the
// reduced shape (read at index 0 of the kept dimension).
// CHECK-LABEL: fx.graph @var_mean
// CHECK-SAME: (%[[X:.+]]: tensor<6x50xf32>)
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [50] : tensor<6x1xf32>
// CHECK: %[[ROUGH:.+]] = loop.pointwise : tensor<6x1xf32>
// CHECK: loop.load %[[SUM]]
// CHECK: %[[DEV:.+]] = loop.pointwise : tensor<6x50xf32>
// CHECK: %[[XV:.+]] = loop.load %[[X]]
// CHECK: %[[MV:.+]] = loop.load %[[ROUGH]]
// CHECK: arith.subf %[[XV]], %[[MV]] : f32
// CHECK: %[[DSUM:.+]] = loop.reduce "sum" over [50] : tensor<6x1xf32>
// CHECK: loop.load %[[DEV]]
// CHECK: %[[SQUARES:.+]] = loop.pointwise : tensor<6x50xf32>
// CHECK: %[[D:.+]] = loop.load %[[DEV]]
// CHECK: arith.mulf %[[D]], %[[D]] : f32
// CHECK: %[[SQ:.+]] = loop.reduce "sum" over [50] : tensor<6x1xf32>
// CHECK: loop.load %[[SQUARES]]
// CHECK: %[[MEAN:.+]] = loop.pointwise : tensor<6x1xf32>
// CHECK: %[[M:.+]] = loop.load %[[ROUGH]]
// CHECK: %[[S:.+]] = loop.load %[[DSUM]]
// CHECK: %[[SHIFT:.+]] = arith.divf %[[S]], %{{.+}} : f32
// CHECK: arith.addf %[[M]], %[[SHIFT]] : f32
// CHECK: %[[M2:.+]] = loop.pointwise : tensor<6x1xf32>
// CHECK: %[[Q:.+]] = loop.load %[[SQ]]
// CHECK: %[[S2:.+]] = loop.load %[[DSUM]]
// CHECK: %[[SS:.+]] = arith.mulf %[[S2]], %[[S2]] : f32
// CHECK: %[[OFFSET:.+]] = arith.divf %[[SS]], %{{.+}} : f32
// CHECK: %[[EXACT:.+]] = arith.subf %[[Q]], %[[OFFSET]] : f32
// CHECK: arith.maximumf %[[EXACT]], %{{.+}} : f32
// CHECK: loop.pointwise : tensor<6xf32>
// CHECK: loop.load %[[M2]][%{{.+}}, %c0{{.*}}] : tensor<6x1xf32>
// CHECK: arith.divf
// CHECK: loop.pointwise : tensor<6xf32>
// CHECK: loop.load %[[MEAN]]
// The mean, a row value, is stored as the kernel computes it, [6, 1], into
// the result's buffer.
// FUSED-LABEL: fx.graph @var_mean
// FUSED: %[[K:[0-9]+]]:2 = loop.kernel rows(1) -> tensor<6x1xf32>, tensor<6xf32>
// FUSED: %[[MEAN:.+]] = tensor.collapse_shape %[[K]]#0 {{\[}}[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
// FUSED: fx.output %[[K]]#1, %[[MEAN]]
fx.graph @var_mean(%x: tensor<6x50xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %v, %m = fx.var_mean %x {dim = array<i64: 1>, correction = 0 : i64} : (tensor<6x50xf32>) -> (tensor<6xf32>, tensor<6xf32>)
  fx.output %v, %m : tensor<6xf32>, tensor<6xf32>
}

// -----

// logsumexp: the maximum (0 where infinite) shifts the exponentials; the
// result drops the reduced dimension.
// CHECK-LABEL: fx.graph @logsumexp
// CHECK: %[[M:.+]] = loop.reduce "max" over [33] : tensor<4x1xf32>
// CHECK: %[[S:.+]] = loop.pointwise : tensor<4x1xf32>
// CHECK: math.absf
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: %[[E:.+]] = loop.pointwise : tensor<4x33xf32>
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = loop.reduce "sum" over [33] : tensor<4x1xf32>
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: math.log
// CHECK: arith.addf
fx.graph @logsumexp(%x: tensor<4x33xf32>) -> tensor<4xf32> {
  %0 = fx.logsumexp %x {dim = array<i64: 1>} : (tensor<4x33xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

// Group norm: the input viewed as [N, G, C/G * HW], LayerNorm's moments
// over the last dimension, each element normalized by its group's.
// CHECK-LABEL: fx.graph @group_norm
// CHECK: %[[G:.+]] = loop.pointwise : tensor<2x4x50xf32>
// CHECK: loop.reduce "sum" over [50] : tensor<2x4x1xf32>
// CHECK: math.rsqrt
// CHECK: loop.pointwise : tensor<2x8x5x5xf32>
// CHECK: arith.divui %{{.+}}, %c2
// CHECK: loop.pointwise : tensor<2x4xf32>
fx.graph @group_norm(%x: tensor<2x8x5x5xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0:3 = fx.native_group_norm %x weight(%w) bias(%b) {group = 4 : i64, eps = 1.0e-05 : f64} : (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<2x8x5x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Images of any size: the view keeps the dynamic extent, [N, G, C/G, H, W],
// and the moments reduce over its last three dimensions.
// CHECK-LABEL: fx.graph @group_norm_of_a_dynamic_extent
// CHECK-DAG: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK-DAG: %[[W:.+]] = tensor.dim %arg0, %c3
// CHECK: %[[G:.+]] = loop.pointwise(%[[N]], %[[H]], %[[W]]) : tensor<?x2x2x?x?xf32>
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index, %[[I2:.+]]: index, %[[I3:.+]]: index, %[[I4:.+]]: index):
// CHECK: %[[C:.+]] = arith.addi %{{.+}}, %[[I2]]
// CHECK: loop.load %arg0[%[[I0]], %[[C]], %[[I3]], %[[I4]]]
// CHECK: loop.reduce "sum"(%[[N]]) over [2, %[[H]], %[[W]]] : tensor<?x2x1x1x1xf32>
// CHECK: math.rsqrt
// CHECK: loop.pointwise(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x4x?x?xf32>
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x2xf32>
fx.graph @group_norm_of_a_dynamic_extent(%x: tensor<?x4x?x?xf32>, %w: tensor<4xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x2xf32>) {
  %0:3 = fx.native_group_norm %x weight(%w) {group = 2 : i64, eps = 1.0e-05 : f64} : (tensor<?x4x?x?xf32>, tensor<4xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
  fx.output %0#0, %0#1 : tensor<?x4x?x?xf32>, tensor<?x2xf32>
}

// -----

// softmax's gradient: y * (g - sum(g * y)); log-softmax's: g - exp(y) *
// sum(g); each one row sum and one pointwise node.
// CHECK-LABEL: fx.graph @softmax_backward
// CHECK-SAME: (%[[G:.+]]: tensor<4x33xf32>, %[[Y:.+]]: tensor<4x33xf32>)
// CHECK: %[[GY:.+]] = loop.pointwise : tensor<4x33xf32>
// CHECK: arith.mulf
// CHECK: %[[S:.+]] = loop.reduce "sum" over [33] : tensor<4x1xf32>
// CHECK: loop.load %[[GY]]
// CHECK: loop.pointwise : tensor<4x33xf32>
// CHECK: %[[RS:.+]] = loop.load %[[S]]
// CHECK: %[[D:.+]] = arith.subf %{{.+}}, %[[RS]] : f32
// CHECK: arith.mulf %{{.+}}, %[[D]] : f32
// CHECK: %[[S2:.+]] = loop.reduce "sum" over [33] : tensor<4x1xf32>
// CHECK: loop.load %[[G]]
// CHECK: loop.pointwise : tensor<4x33xf32>
// CHECK: math.exp
// CHECK: arith.subf
fx.graph @softmax_backward(%g: tensor<4x33xf32>, %y: tensor<4x33xf32>) -> (tensor<4x33xf32>, tensor<4x33xf32>) {
  %0 = fx.softmax_backward_data %g, %y {dim = 1 : i64, input_dtype = f32} : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  %1 = fx.log_softmax_backward_data %g, %y {dim = -1 : i64, input_dtype = f32} : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  fx.output %0, %1 : tensor<4x33xf32>, tensor<4x33xf32>
}

// -----

// Evaluation mode reads the running statistics: no reduction; the saved
// statistics are empty.
// CHECK-LABEL: fx.graph @batch_norm_evaluation
// CHECK-NOT: loop.reduce
// CHECK: math.rsqrt
// CHECK: loop.pointwise : tensor<2x4x3xf32>
// CHECK: loop.pointwise : tensor<0xf32>
// CHECK-NOT: loop.reduce
// CHECK: fx.output
fx.graph @batch_norm_evaluation(%x: tensor<2x4x3xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<0xf32>) {
  %0:3 = fx.native_batch_norm_legit_no_training %x, %rm, %rv {momentum = 0.1, eps = 1.0e-05} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<0xf32>, tensor<0xf32>)
  fx.output %0#0, %0#1 : tensor<2x4x3xf32>, tensor<0xf32>
}

// -----

// Training mode: the batch's mean and squared deviations per channel (over
// N and the extent), and the running variance updated with the unbiased
// variance, n / (n - 1) with n = 2 * 3.
// CHECK-LABEL: fx.graph @batch_norm_training
// CHECK-DAG: %[[N:.+]] = arith.constant 6.000000e+00 : f32
// CHECK: loop.reduce "sum" over [2, 3] : tensor<1x4x1xf32>
// CHECK: loop.reduce "sum" over [2, 3] : tensor<1x4x1xf32>
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: arith.mulf %{{.+}}, %[[N]]
fx.graph @batch_norm_training(%x: tensor<2x4x3xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>) {
  %0:5 = fx.native_batch_norm_legit_functional %x, %rm, %rv {training = true, momentum = 0.1, eps = 1.0e-05} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  fx.output %0#0, %0#4 : tensor<2x4x3xf32>, tensor<4xf32>
}

// -----

// batch norm's gradient in evaluation mode: dy * rsqrt(running_var + eps) *
// w, no reduction; masked-off results are zeros.
// CHECK-LABEL: fx.graph @batch_norm_backward_evaluation
// CHECK: math.rsqrt
// CHECK: loop.pointwise : tensor<2x4x3xf32>
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK-NOT: loop.load
// CHECK: loop.yield
// CHECK: fx.output
fx.graph @batch_norm_backward_evaluation(%dy: tensor<2x4x3xf32>, %x: tensor<2x4x3xf32>, %w: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>) {
  %0:3 = fx.native_batch_norm_backward %dy, %x weight(%w) running_mean(%rm) running_var(%rv) {train = false, eps = 1.0e-05, output_mask = array<i1: true, false, false>} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  fx.output %0#0, %0#1 : tensor<2x4x3xf32>, tensor<4xf32>
}

// -----

// layer norm's gradient: two row sums (of g and g * xhat) for the input,
// sums over the rows for the weight and bias.
// CHECK-LABEL: fx.graph @layer_norm_backward
// CHECK-COUNT-2: loop.reduce "sum" over [8] : tensor<3x1xf32>
// CHECK: loop.pointwise : tensor<3x8xf32>
// CHECK: loop.reduce "sum" over [3] : tensor<8xf32>
// CHECK: loop.reduce "sum" over [3] : tensor<8xf32>
fx.graph @layer_norm_backward(%dy: tensor<3x8xf32>, %x: tensor<3x8xf32>, %m: tensor<3x1xf32>, %r: tensor<3x1xf32>, %w: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0:3 = fx.native_layer_norm_backward %dy, %x, %m, %r weight(%w) {normalized_shape = array<i64: 8>, output_mask = array<i1: true, true, true>} : (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xf32>, tensor<8xf32>) -> (tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// group norm's gradient: sums over the extent per sample and channel, then
// over each group's channels (weighted), then c2, c3 per group.
// CHECK-LABEL: fx.graph @group_norm_backward
// CHECK: loop.reduce "sum" over [3] : tensor<2x4xf32>
// CHECK: loop.reduce "sum" over [3] : tensor<2x4xf32>
// CHECK: loop.reduce "sum" over [2] : tensor<2x2xf32>
// CHECK: loop.reduce "sum" over [2] : tensor<2x2xf32>
// CHECK: loop.pointwise : tensor<2x2xf32>
// CHECK: loop.pointwise : tensor<2x2xf32>
// CHECK: loop.pointwise : tensor<2x4x3xf32>
// CHECK: arith.divui
fx.graph @group_norm_backward(%dy: tensor<2x4x3xf32>, %x: tensor<2x4x3xf32>, %m: tensor<2x2xf32>, %r: tensor<2x2xf32>) -> tensor<2x4x3xf32> {
  %0:3 = fx.native_group_norm_backward %dy, %x, %m, %r {group = 2 : i64, output_mask = array<i1: true, false, false>} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  fx.output %0#0 : tensor<2x4x3xf32>
}

// -----

// A dynamic batch and extent: the nodes take the batch's run-time size, and
// each group counts 2 channels times the extent's run-time size.
// CHECK-LABEL: fx.graph @dynamic_group_norm_backward
// CHECK-SAME: (%[[DY:.+]]: tensor<?x4x?xf32>, %[[X:.+]]: tensor<?x4x?xf32>
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: loop.reduce "sum"(%{{.+}}) over [%{{.+}}] : tensor<?x4xf32>
// CHECK: loop.reduce "sum"(%{{.+}}) over [%{{.+}}] : tensor<?x4xf32>
// CHECK: %[[EXTENT:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[WIDE:.+]] = arith.index_castui %[[EXTENT]]
// CHECK: %[[COUNT:.+]] = arith.uitofp %[[WIDE]]
// CHECK: %[[GROUP:.+]] = arith.mulf %[[COUNT]], %cst
// CHECK: loop.pointwise(%[[N]]) : tensor<?x2x2xf32>
// CHECK: loop.reduce "sum"(%[[N]]) over [2] : tensor<?x2xf32>
// CHECK: arith.divf %{{.+}}, %[[GROUP]]
// CHECK: loop.pointwise(%{{.+}}, %{{.+}}) : tensor<?x4x?xf32>
// CHECK: loop.pointwise(%[[N]]) : tensor<?x4xf32>
// CHECK: loop.reduce "sum" over [%[[N]]] : tensor<4xf32>
fx.graph @dynamic_group_norm_backward(%dy: tensor<?x4x?xf32>, %x: tensor<?x4x?xf32>, %m: tensor<?x2xf32>, %r: tensor<?x2xf32>, %w: tensor<4xf32>) -> (tensor<?x4x?xf32>, tensor<4xf32>) {
  %0:3 = fx.native_group_norm_backward %dy, %x, %m, %r weight(%w) {group = 2 : i64, output_mask = array<i1: true, true, false>} : (tensor<?x4x?xf32>, tensor<?x4x?xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<4xf32>) -> (tensor<?x4x?xf32>, tensor<4xf32>, tensor<4xf32>)
  fx.output %0#0, %0#1 : tensor<?x4x?xf32>, tensor<4xf32>
}
