// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop))' | FileCheck %s

// Inverse and hyperbolic trigonometry are one math op each, but for asinh,
// acosh and atanh (below); integral inputs compute in the default float.
// CHECK-LABEL: fx.graph @trigonometry
// CHECK: loop.pointwise
// CHECK: math.acos %{{.+}} : f32
// CHECK: loop.pointwise
// CHECK: %[[I:.+]] = loop.load %{{.+}} : tensor<4xsi64>
// CHECK: %[[F:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: math.absf %[[F]] : f32
// CHECK: loop.pointwise
// CHECK: math.tan %{{.+}} : f32
// CHECK: loop.pointwise
// CHECK: math.log10 %{{.+}} : f32
// CHECK: loop.pointwise
// CHECK: math.erfc %{{.+}} : f64
fx.graph @trigonometry(%x: tensor<4xf32>, %i: tensor<4xsi64>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %0 = fx.acos %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.atanh %i : (tensor<4xsi64>) -> tensor<4xf32>
  %2 = fx.tan %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = fx.log10 %x : (tensor<4xf32>) -> tensor<4xf32>
  %4 = fx.erfc %y : (tensor<4xf64>) -> tensor<4xf64>
  fx.output %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// -----

// Rounding is the identity on integers; round is half to even; frac is
// x - trunc(x).
// CHECK-LABEL: fx.graph @rounding
// CHECK: math.roundeven %{{.+}} : f32
// CHECK: %[[INT:.+]] = loop.pointwise
// CHECK-NEXT: ^bb0(%[[J:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %{{.+}}[%[[J]]] : tensor<4xsi32>
// CHECK-NEXT: loop.yield %[[V]] : i32
// CHECK: %[[X:.+]] = loop.load
// CHECK: %[[T:.+]] = math.trunc %[[X]] : f32
// CHECK: arith.subf %[[X]], %[[T]] : f32
fx.graph @rounding(%x: tensor<4xf32>, %i: tensor<4xsi32>) -> (tensor<4xf32>, tensor<4xsi32>, tensor<4xf32>) {
  %0 = fx.round %x : tensor<4xf32>
  %1 = fx.ceil %i : tensor<4xsi32>
  %2 = fx.frac %x : tensor<4xf32>
  fx.output %0, %1, %2 : tensor<4xf32>, tensor<4xsi32>, tensor<4xf32>
}

// -----

// sign is (0 < x) - (x < 0), so NaN gives 0; unsigned integers compare with
// zero only.
// CHECK-LABEL: fx.graph @sign
// CHECK: %[[POS:.+]] = arith.cmpf ogt
// CHECK: %[[NEG:.+]] = arith.cmpf olt
// CHECK: %[[P:.+]] = arith.uitofp %[[POS]] : i1 to f32
// CHECK: %[[N:.+]] = arith.uitofp %[[NEG]] : i1 to f32
// CHECK: arith.subf %[[P]], %[[N]] : f32
// CHECK: loop.pointwise
// CHECK: %[[NZ:.+]] = arith.cmpi ne
// CHECK: arith.extui %[[NZ]] : i1 to i8
fx.graph @sign(%x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui8>) {
  %0 = fx.sign %x : tensor<4xf32>
  %1 = fx.sign %u : tensor<4xui8>
  fx.output %0, %1 : tensor<4xf32>, tensor<4xui8>
}

// -----

// isnan and isinf test the operand in its own dtype and yield bools;
// integers are never either.
// CHECK-LABEL: fx.graph @classify
// CHECK-DAG: %[[FALSE:.+]] = arith.constant false
// CHECK-DAG: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: %[[X:.+]] = loop.load %{{.+}} : tensor<4xbf16>
// CHECK: %[[W:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[W]], %[[W]] : f32
// CHECK: loop.yield %[[NAN]] : i1
// CHECK: %[[A:.+]] = math.absf
// CHECK: arith.cmpf oeq, %[[A]], %[[INF]] : f32
// CHECK: loop.yield %[[FALSE]] : i1
fx.graph @classify(%x: tensor<4xbf16>, %f: tensor<4xf32>, %i: tensor<4xsi64>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = fx.isnan %x : (tensor<4xbf16>) -> tensor<4xi1>
  %1 = fx.isinf %f : (tensor<4xf32>) -> tensor<4xi1>
  %2 = fx.isinf %i : (tensor<4xsi64>) -> tensor<4xi1>
  fx.output %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Integer powers with tensor exponents square and multiply over the
// exponent's bits, unrolled (63 for si64: no loop per element); a negative
// exponent gives 1 for a base of 1, -1 or 1 for -1 (by its parity) and 0
// otherwise, as c10's powi. Unsigned exponents use every bit and are never
// negative.
// CHECK-LABEL: fx.graph @integer_powers
// CHECK: loop.pointwise : tensor<4xsi64>
// CHECK-COUNT-63: arith.select %{{.+}}, %{{.+}}, %{{.+}} : i64
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %{{.+}}, %c0_i64
// CHECK: arith.select %[[NEG]]
// CHECK: loop.pointwise : tensor<4xui8>
// CHECK-COUNT-8: arith.select %{{.+}}, %{{.+}}, %{{.+}} : i8
// CHECK-NOT: arith.cmpi slt
// CHECK: loop.yield
fx.graph @integer_powers(%i: tensor<4xsi64>, %u: tensor<4xui8>) -> (tensor<4xsi64>, tensor<4xui8>) {
  %0 = fx.pow %i, %i : (tensor<4xsi64>, tensor<4xsi64>) -> tensor<4xsi64>
  %1 = fx.pow %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  fx.output %0, %1 : tensor<4xsi64>, tensor<4xui8>
}

// -----

// Powers with a tensor exponent, or with a scalar base, are powf.
// CHECK-LABEL: fx.graph @powers
// CHECK: %[[BASE:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: math.powf %{{.+}}, %{{.+}} : f32
// CHECK: math.powf %[[BASE]], %{{.+}} : f32
fx.graph @powers(%x: tensor<4x3xf32>, %y: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = fx.pow %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = fx.pow_scalar %x {self = 2.500000e+00 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  fx.output %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A tensor clamp reads its bounds broadcast; an absent bound is no bound.
// CHECK-LABEL: fx.graph @clamp_tensor
// CHECK: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[X:.+]] = loop.load %{{.+}}[%[[I]], %[[J]]]
// CHECK: %[[HI:.+]] = loop.load %{{.+}}[%[[J]]]
// CHECK-NOT: arith.maximumf
// CHECK: %[[R:.+]] = arith.minimumf %[[X]], %[[HI]] : f32
// CHECK-NEXT: loop.yield %[[R]]
fx.graph @clamp_tensor(%x: tensor<4x3xf32>, %hi: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = fx.clamp_tensor %x max(%hi) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  fx.output %0 : tensor<4x3xf32>
}

// -----

// lerp picks PyTorch's form by |weight| < 0.5, exact at both ends.
// CHECK-LABEL: fx.graph @lerp
// CHECK: %[[QUARTER:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[D:.+]] = arith.subf %[[END:.+]], %[[SELF:.+]] : f32
// CHECK: %[[A:.+]] = math.absf %[[W:.+]] : f32
// CHECK: %[[SMALL:.+]] = arith.cmpf olt, %[[A]]
// CHECK: %[[FROMSELF:.+]] = arith.addf %[[SELF]]
// CHECK: %[[FROMEND:.+]] = arith.subf %[[END]]
// CHECK: arith.select %[[SMALL]], %[[FROMSELF]], %[[FROMEND]] : f32
// A weight of 0.75 folds to the form from `end`, with 1 - 0.75.
// CHECK: loop.pointwise
// CHECK-NOT: arith.select
// CHECK: arith.mulf %{{.+}}, %[[QUARTER]] : f32
// CHECK-NOT: arith.select
// CHECK: fx.output
fx.graph @lerp(%x: tensor<4xf32>, %y: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fx.lerp %x, %y, %w : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.lerp_scalar %x, %y {weight = 7.500000e-01 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// addcmul scales tensor1 first; addcdiv divides first (a unit value
// folds away); integers use integer arithmetic.
// CHECK-LABEL: fx.graph @addc
// CHECK: %[[V:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[T1:.+]] = loop.load %arg1
// CHECK: %[[T2:.+]] = loop.load %arg1
// CHECK: %[[S:.+]] = arith.mulf %[[T1]], %[[V]] : f32
// CHECK: arith.mulf %[[S]], %[[T2]] : f32
// CHECK: loop.pointwise
// CHECK: %[[Q:.+]] = arith.divf
// CHECK-NEXT: arith.addf %{{.+}}, %[[Q]] : f32
// CHECK: loop.pointwise
// CHECK: arith.muli
// CHECK: arith.muli
// CHECK: arith.addi
fx.graph @addc(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xsi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xsi64>) {
  %0 = fx.addcmul %x, %y, %y {value = 5.000000e-01 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.addcdiv %x, %y, %y : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = fx.addcmul %i, %i, %i {value = 3 : i64} : (tensor<4xsi64>, tensor<4xsi64>, tensor<4xsi64>) -> tensor<4xsi64>
  fx.output %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xsi64>
}

// -----

// erfinv: a polynomial on each of two ranges, ±1 mapped to ±inf.
// CHECK-LABEL: fx.graph @erfinv
// CHECK-NOT: math.erf
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: %[[CENTRE:.+]] = arith.cmpf olt
// CHECK: arith.select %[[CENTRE]]
// CHECK: %[[END:.+]] = arith.cmpf oeq
// CHECK: arith.select %[[END]]
// In f64, two Newton steps on erf refine the polynomial's value.
// CHECK: loop.pointwise : tensor<4xf64>
// CHECK: %[[CENTRE64:.+]] = arith.cmpf olt
// CHECK: arith.select %[[CENTRE64]]
// CHECK-COUNT-2: math.erf
// CHECK: %[[END64:.+]] = arith.cmpf oeq
// CHECK: arith.select %[[END64]]
fx.graph @erfinv(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>) {
  %0 = fx.erfinv %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.erfinv %y : (tensor<4xf64>) -> tensor<4xf64>
  fx.output %0, %1 : tensor<4xf32>, tensor<4xf64>
}

// -----

// elu's gradient from its result: input_scale * (result + alpha * scale)
// at or below zero, scale above.
// CHECK-LABEL: fx.graph @elu_backward
// CHECK: %[[NEG:.+]] = arith.cmpf ole
// CHECK: %[[SLOPE:.+]] = arith.select %[[NEG]]
// CHECK: arith.mulf %{{.+}}, %[[SLOPE]] : f32
fx.graph @elu_backward(%g: tensor<4xf32>, %r: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.elu_backward %g, %r {alpha = 1.000000e+00 : f64, scale = 1.050000e+00 : f64, input_scale = 1.000000e+00 : f64, is_result = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

// asinh, acosh and atanh are written out: log1p forms that keep tiny
// arguments' digits (and acosh's near 1), and log 2 + log x past the point
// where x² + 1 rounds to x² (2^13 for f32, 2^27 for f64), where x² would
// soon overflow.
// CHECK-LABEL: fx.graph @inverse_hyperbolic
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: %[[X:.+]] = loop.load
// CHECK: %[[A:.+]] = math.absf %[[X]] : f32
// CHECK: %[[SQUARE:.+]] = arith.mulf %[[A]], %[[A]]
// CHECK: %[[NEAR:.+]] = math.log1p
// CHECK: %[[FAR:.+]] = arith.cmpf ogt, %[[A]], %{{.+}} : f32
// CHECK: %[[LOG:.+]] = math.log %[[A]]
// CHECK: %[[TWICE:.+]] = arith.addf %[[LOG]], %{{.+}} : f32
// CHECK: %[[R:.+]] = arith.select %[[FAR]], %[[TWICE]], %[[NEAR]]
// CHECK: math.copysign %[[R]], %[[X]] : f32
// CHECK: loop.pointwise : tensor<4xf64>
// CHECK: %[[Y:.+]] = loop.load
// CHECK: %[[T:.+]] = arith.subf %[[Y]], %{{.+}} : f64
// CHECK: math.sqrt
// CHECK: math.log1p
// CHECK: arith.cmpf ogt, %[[Y]], %{{.+}} : f64
// CHECK: math.log %[[Y]]
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: %[[Z:.+]] = loop.load
// CHECK: %[[B:.+]] = math.absf %[[Z]]
// CHECK: %[[TWO_B:.+]] = arith.addf %[[B]], %[[B]]
// CHECK: %[[RATIO:.+]] = arith.divf %[[TWO_B]]
// CHECK: %[[LOG1P:.+]] = math.log1p %[[RATIO]]
// CHECK: %[[HALF:.+]] = arith.mulf %[[LOG1P]], %{{.+}}
// CHECK: math.copysign %[[HALF]], %[[Z]]
// CHECK-NOT: math.asinh
// CHECK-NOT: math.acosh
// CHECK-NOT: math.atanh
fx.graph @inverse_hyperbolic(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) {
  %0 = fx.asinh %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.acosh %y : (tensor<4xf64>) -> tensor<4xf64>
  %2 = fx.atanh %x : (tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1, %2 : tensor<4xf32>, tensor<4xf64>, tensor<4xf32>
}
