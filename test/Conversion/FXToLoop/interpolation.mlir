// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop))' | FileCheck %s

// Bilinear upsampling without aligned corners: the source position is
// scale * (o + 0.5) - 0.5, clamped at 0, with scale = in / out; the upper
// neighbour is clamped to the last row or column; four loads blend.
// CHECK-LABEL: fx.graph @bilinear
// CHECK-DAG: arith.constant 5.000000e-01 : f32
// CHECK-DAG: arith.constant 0.444444{{[0-9]+}} : f32
// CHECK: loop.pointwise : tensor<1x2x6x9xf32> {
// CHECK-NEXT: ^bb0(%[[N:.+]]: index, %[[C:.+]]: index, %[[H:.+]]: index, %[[W:.+]]: index):
// CHECK: %[[SRC:.+]] = arith.maximumf
// CHECK: %[[LOW:.+]] = arith.fptoui %[[SRC]] : f32 to i64
// CHECK: arith.minui %{{.+}}, %{{.+}} : index
// CHECK-COUNT-4: loop.load %{{.+}}[%[[N]], %[[C]], %{{.+}}, %{{.+}}] : tensor<1x2x3x4xf32>
// CHECK: loop.yield
fx.graph @bilinear(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x9xf32> {
  %0 = fx.upsample_bilinear2d %x {align_corners = false} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x9xf32>
  fx.output %0 : tensor<1x2x6x9xf32>
}

// -----

// With aligned corners the position is (in - 1) / (out - 1) * o, never
// clamped; bf16 blends in f32 and rounds once.
// CHECK-LABEL: fx.graph @bilinear_aligned_bf16
// CHECK: arith.constant 0.428571{{[0-9]+}} : f32
// CHECK: ^bb0
// CHECK-NOT: arith.maximumf
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[R:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT: loop.yield %[[R]] : bf16
fx.graph @bilinear_aligned_bf16(%x: tensor<1x2x4x4xbf16>) -> tensor<1x2x8x8xbf16> {
  %0 = fx.upsample_bilinear2d %x {align_corners = true, scale_factors = array<f64: 2.0, 2.0>} : (tensor<1x2x4x4xbf16>) -> tensor<1x2x8x8xbf16>
  fx.output %0 : tensor<1x2x8x8xbf16>
}

// -----

// Linear resampling of one spatial dimension blends two loads; trilinear
// blends eight, the depth's taps outermost, with one weight per dimension.
// CHECK-LABEL: fx.graph @linear_and_trilinear
// CHECK: loop.pointwise : tensor<2x3x7xf32> {
// CHECK-NEXT: ^bb0(%[[N:.+]]: index, %[[C:.+]]: index, %[[W:.+]]: index):
// CHECK: arith.maximumf
// CHECK-COUNT-2: loop.load %arg0[%[[N]], %[[C]], %{{.+}}] : tensor<2x3x4xf32>
// CHECK-NOT: loop.load
// CHECK: loop.yield
// CHECK: loop.pointwise : tensor<1x2x4x6x8xf64> {
// CHECK-COUNT-3: arith.fptoui %{{.+}} : f64 to i64
// CHECK-COUNT-8: loop.load %arg1
// CHECK-NOT: loop.load
// CHECK: loop.yield
fx.graph @linear_and_trilinear(%x: tensor<2x3x4xf32>, %v: tensor<1x2x2x3x4xf64>) -> (tensor<2x3x7xf32>, tensor<1x2x4x6x8xf64>) {
  %0 = fx.upsample_linear1d %x {align_corners = false} : (tensor<2x3x4xf32>) -> tensor<2x3x7xf32>
  %1 = fx.upsample_trilinear3d %v {align_corners = true, scale_factors = array<f64: 2.0, 2.0, 2.0>} : (tensor<1x2x2x3x4xf64>) -> tensor<1x2x4x6x8xf64>
  fx.output %0, %1 : tensor<2x3x7xf32>, tensor<1x2x4x6x8xf64>
}

// -----

// A dimension whose size the resampling keeps reads each position in place
// (weights 1 and 0), whatever the scale factor: a constant choice for
// static sizes, a select on the run-time sizes for dynamic ones.
// CHECK-LABEL: fx.graph @linear_of_unchanged_sizes
// CHECK: loop.pointwise : tensor<2x3x4xf32> {
// CHECK-NEXT: ^bb0(%[[N:.+]]: index, %[[C:.+]]: index, %[[W:.+]]: index):
// CHECK-COUNT-2: loop.load %arg0[%[[N]], %[[C]], %[[W]]] : tensor<2x3x4xf32>
// CHECK: %[[IN:.+]] = tensor.dim %arg1, %c2
// CHECK: loop.pointwise(%[[OUT:.+]]) : tensor<2x3x?xf32> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[O:.+]]: index):
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[IN]], %[[OUT]] : index
// CHECK: arith.select %[[SAME]], %[[O]], %{{.+}} : index
// CHECK: arith.select %[[SAME]], %[[O]], %{{.+}} : index
// CHECK: arith.select %[[SAME]], %{{.+}}, %{{.+}} : f32
fx.graph @linear_of_unchanged_sizes(%x: tensor<2x3x4xf32>, %d: tensor<2x3x?xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x?xf32>) {
  %0 = fx.upsample_linear1d %x {align_corners = false, scale_factors = array<f64: 1.2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = fx.upsample_linear1d %d {align_corners = false, scale_factors = array<f64: 1.1>} : (tensor<2x3x?xf32>) -> tensor<2x3x?xf32>
  fx.output %0, %1 : tensor<2x3x4xf32>, tensor<2x3x?xf32>
}

// -----

// Bicubic resampling: the source coordinate is not clamped at 0; its floor
// (signed, -1 near the top edge) gives four taps per dimension, each
// clamped into the input; sixteen loads weighted by Keys' kernel.
// CHECK-LABEL: fx.graph @bicubic
// CHECK-DAG: arith.constant -6.000000e+00 : f32
// CHECK-DAG: arith.constant 2.250000e+00 : f32
// CHECK: loop.pointwise : tensor<1x2x8x10xf16> {
// CHECK-NOT: arith.maximumf
// CHECK: %[[FLOOR:.+]] = math.floor %{{.+}} : f32
// CHECK: arith.fptosi %[[FLOOR]] : f32 to i64
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK-COUNT-16: loop.load %arg0
// CHECK-NOT: loop.load
// CHECK: arith.truncf %{{.+}} : f32 to f16
fx.graph @bicubic(%x: tensor<1x2x4x5xf16>) -> tensor<1x2x8x10xf16> {
  %0 = fx.upsample_bicubic2d %x {align_corners = false, scale_factors = array<f64: 2.0, 2.0>} : (tensor<1x2x4x5xf16>) -> tensor<1x2x8x10xf16>
  fx.output %0 : tensor<1x2x8x10xf16>
}

// -----

// Nearest resampling over one and three spatial dimensions maps each
// output index to floor(o * scale), clamped: a view, not arithmetic on
// values, so integers resample too.
// CHECK-LABEL: fx.graph @nearest_ranks
// CHECK: loop.pointwise : tensor<2x3x10xsi32>
// CHECK: arith.minui
// CHECK: loop.load %arg0[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x3x4xsi32>
// CHECK: loop.pointwise : tensor<1x1x4x6x3xf32>
// CHECK-COUNT-3: arith.minui
// CHECK: loop.load %arg1
fx.graph @nearest_ranks(%x: tensor<2x3x4xsi32>, %v: tensor<1x1x2x3x4xf32>) -> (tensor<2x3x10xsi32>, tensor<1x1x4x6x3xf32>) {
  %0 = fx.upsample_nearest1d %x {scale_factors = array<f64: 2.5>} : (tensor<2x3x4xsi32>) -> tensor<2x3x10xsi32>
  %1 = fx.upsample_nearest3d %v : (tensor<1x1x2x3x4xf32>) -> tensor<1x1x4x6x3xf32>
  fx.output %0, %1 : tensor<2x3x10xsi32>, tensor<1x1x4x6x3xf32>
}

// -----

// Grid sampling, bilinear with zeros padding: four taps, each read at a
// clamped position and replaced by zero outside the input.
// CHECK-LABEL: fx.graph @grid_sampler
// CHECK: loop.pointwise : tensor<1x2x3x3xf32>
// CHECK: math.floor
// CHECK: math.floor
// CHECK-COUNT-4: arith.select
// CHECK: loop.yield
fx.graph @grid_sampler(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64, align_corners = false} : (tensor<1x2x4x5xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  fx.output %0 : tensor<1x2x3x3xf32>
}

// -----

// A dynamic batch (from the input) and grid sizes (from the grid) size the
// node; the input's static height and width fold into constants.
// CHECK-LABEL: fx.graph @dynamic_grid_sampler
// CHECK-SAME: (%[[X:.+]]: tensor<?x2x4x5xf32>, %[[G:.+]]: tensor<?x?x3x2xf32>)
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[H:.+]] = tensor.dim %[[G]], %c1
// CHECK: loop.pointwise(%[[N]], %[[H]]) : tensor<?x2x?x3xf32>
// CHECK: loop.yield
fx.graph @dynamic_grid_sampler(%x: tensor<?x2x4x5xf32>, %g: tensor<?x?x3x2xf32>) -> tensor<?x2x?x3xf32> {
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64, align_corners = false} : (tensor<?x2x4x5xf32>, tensor<?x?x3x2xf32>) -> tensor<?x2x?x3xf32>
  fx.output %0 : tensor<?x2x?x3xf32>
}

// -----

// An input whose width is known only at run time: the coordinate maths
// takes it as a float, W - 1 the last coordinate and the reflection span
// (aligned corners), and an empty span reflects to 0.
// CHECK-LABEL: fx.graph @dynamic_width_grid_sampler
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x?xf32>
// CHECK: %[[W:.+]] = tensor.dim %[[X]], %c3
// CHECK: loop.pointwise : tensor<1x2x3x3xf32>
// CHECK: %[[WI:.+]] = arith.index_castui %[[W]] : index to i64
// CHECK: %[[WF:.+]] = arith.uitofp %[[WI]] : i64 to f32
// CHECK: %[[LAST:.+]] = arith.subf %[[WF]], %{{.+}} : f32
// CHECK: arith.remf %{{.+}}, %[[LAST]] : f32
// CHECK: arith.cmpf oeq, %[[LAST]]
// CHECK: loop.yield
fx.graph @dynamic_width_grid_sampler(%x: tensor<1x2x4x?xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 0 : i64, padding_mode = 2 : i64, align_corners = true} : (tensor<1x2x4x?xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  fx.output %0 : tensor<1x2x3x3xf32>
}

// -----

// Reflection padding folds the coordinate back about the input's edges
// (here its outer edges, -0.5 and 4.5 for width 5: |x + 0.5| mod 5 and the
// parity of the number of folds), then clamps it.
// CHECK-LABEL: fx.graph @grid_sampler_reflection
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[SPAN:.+]] = arith.constant 5.000000e+00 : f32
// CHECK: loop.pointwise : tensor<1x2x3x3xf32>
// CHECK: math.absf
// CHECK: arith.remf %{{.+}}, %[[SPAN]]
// CHECK: math.floor
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: arith.minimumf
fx.graph @grid_sampler_reflection(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 0 : i64, padding_mode = 2 : i64, align_corners = false} : (tensor<1x2x4x5xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  fx.output %0 : tensor<1x2x3x3xf32>
}

// -----

// Bicubic sampling convolves 4x4 taps: 16 loads of the input, weighted by
// Keys' cubic kernel (A = -0.75: 8A = -6, 4A = -3, A + 3 = 2.25).
// CHECK-LABEL: fx.graph @grid_sampler_bicubic
// CHECK-DAG: arith.constant -6.000000e+00 : f32
// CHECK-DAG: arith.constant -3.000000e+00 : f32
// CHECK-DAG: arith.constant 2.250000e+00 : f32
// CHECK: loop.pointwise : tensor<1x2x3x3xbf16>
// CHECK-COUNT-16: loop.load %arg0
// CHECK: arith.truncf
fx.graph @grid_sampler_bicubic(%x: tensor<1x2x4x5xbf16>, %g: tensor<1x3x3x2xbf16>) -> tensor<1x2x3x3xbf16> {
  %0 = fx.grid_sampler_2d %x, %g {interpolation_mode = 2 : i64, padding_mode = 1 : i64, align_corners = true} : (tensor<1x2x4x5xbf16>, tensor<1x3x3x2xbf16>) -> tensor<1x2x3x3xbf16>
  fx.output %0 : tensor<1x2x3x3xbf16>
}

// -----

// Images of any size: a dynamic result size is the input's times the scale
// factor, floored; aligned corners take their scale from the run-time
// sizes, (in - 1) / (out - 1), or 0 for one output; the upper neighbour is
// clamped to the run-time last row. Nearest reads min(floor(o / 2), in - 1).
// CHECK-LABEL: fx.graph @dynamic_upsampling
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.000000e+00 : f64
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[HF:.+]] = arith.uitofp %{{.+}} : i64 to f64
// CHECK: %[[SCALED:.+]] = arith.mulf %[[HF]], %[[TWO]] : f64
// CHECK: %[[FLOOR:.+]] = math.floor %[[SCALED]]
// CHECK: %[[OUTI:.+]] = arith.fptoui %[[FLOOR]]
// CHECK: %[[OUT:.+]] = arith.index_castui %[[OUTI]] : i64 to index
// CHECK: %[[RATIO:.+]] = arith.divf
// CHECK: %[[SEVERAL:.+]] = arith.cmpi ugt, %[[OUT]], %c1
// CHECK: %[[SCALE:.+]] = arith.select %[[SEVERAL]], %[[RATIO]], %[[ZERO]]
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: loop.pointwise(%[[N]], %[[OUT]], %{{.+}}) : tensor<?x2x?x?xf32>
// CHECK: arith.mulf %[[SCALE]]
// CHECK: %[[LAST:.+]] = arith.subi %[[H]], %c1
// CHECK: arith.minui %{{.+}}, %[[LAST]]
// CHECK: loop.pointwise(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x2x?x?xf32>
// CHECK: arith.mulf %{{.+}}, %cst{{.*}} : f32
// CHECK: arith.minui
fx.graph @dynamic_upsampling(%x: tensor<?x2x?x?xf32>) -> (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) {
  %0 = fx.upsample_bilinear2d %x {align_corners = true, scale_factors = array<f64: 2.0, 3.0>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %1 = fx.upsample_nearest2d %x {scale_factors = array<f64: 2.0, 2.0>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  fx.output %0, %1 : tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>
}

// -----

// Resampling to another tensor's size (a feature pyramid's): the size
// symbols that `size_symbols` names size the result, and the scale is
// in / out of the run-time sizes.
// CHECK-LABEL: fx.graph @upsampling_to_named_sizes
// CHECK: %[[IN:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[OUT:.+]] = tensor.dim %arg1, %c2
// CHECK: %[[INF:.+]] = arith.uitofp %{{.+}} : i64 to f32
// CHECK: %[[OUTF:.+]] = arith.uitofp %{{.+}} : i64 to f32
// CHECK: %[[SCALE:.+]] = arith.divf %[[INF]], %[[OUTF]] : f32
// CHECK: loop.pointwise(%[[OUT]]) : tensor<1x2x?x4xf32>
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
fx.graph @upsampling_to_named_sizes(
    %x: tensor<1x2x?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [1, 2, s0, 4]>},
    %y: tensor<1x2x?x4xf32> {fx.guard = #fx.tensor_guard<sizes = [1, 2, s1, 4]>})
    -> tensor<1x2x?x4xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.upsample_nearest2d %x {size_symbols = ["s1"]} : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  fx.output %0 : tensor<1x2x?x4xf32>
}

// -----

// A dynamic result size without a scale factor or a name has nothing to
// give it.
// CHECK-LABEL: fx.graph @do_not_lower_dynamic_upsampling_without_factors
// CHECK: fx.upsample_nearest2d
// CHECK: fx.upsample_bilinear2d
// CHECK: fx.upsample_bicubic2d
fx.graph @do_not_lower_dynamic_upsampling_without_factors(%x: tensor<1x2x?x4xf32>) -> (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) {
  %0 = fx.upsample_nearest2d %x : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x8xf32>
  %1 = fx.upsample_bilinear2d %x {align_corners = false} : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x8xf32>
  %2 = fx.upsample_bicubic2d %x {align_corners = false} : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x8xf32>
  fx.output %0, %1, %2 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}
