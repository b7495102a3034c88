// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// view_as_complex pairs the last dimension's two elements; view_as_real
// picks the real part at index 0 and the imaginary part at index 1.
// CHECK-LABEL: fx.graph @complex_views
// CHECK-SAME: (%[[X:.+]]: tensor<?x8x2xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[Z:.+]] = loop.pointwise(%[[N]]) : tensor<?x8xcomplex<f32>> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-DAG: %[[RE:.+]] = loop.load %[[X]][%[[I]], %[[J]], %c0]
// CHECK-DAG: %[[IM:.+]] = loop.load %[[X]][%[[I]], %[[J]], %c1]
// CHECK: %[[C:.+]] = complex.create %[[RE]], %[[IM]] : complex<f32>
// CHECK: loop.yield %[[C]] : complex<f32>
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x8x2xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: index, %[[B:.+]]: index, %[[K:.+]]: index):
// CHECK: %[[V:.+]] = loop.load %[[Z]][%[[A]], %[[B]]] : tensor<?x8xcomplex<f32>>
// CHECK: %[[ISRE:.+]] = arith.cmpi eq, %[[K]], %c0
// CHECK-DAG: %[[R:.+]] = complex.re %[[V]]
// CHECK-DAG: %[[M:.+]] = complex.im %[[V]]
// CHECK: arith.select %[[ISRE]], %[[R]], %[[M]] : f32
fx.graph @complex_views(%x: tensor<?x8x2xf32>) -> tensor<?x8x2xf32> {
  %0 = fx.view_as_complex %x : (tensor<?x8x2xf32>) -> tensor<?x8xcomplex<f32>>
  %1 = fx.view_as_real %0 : (tensor<?x8xcomplex<f32>>) -> tensor<?x8x2xf32>
  fx.output %1 : tensor<?x8x2xf32>
}

// -----

// A complex product from four real ones: (ac - bd) + (ad + bc)i.
// CHECK-LABEL: fx.graph @complex_product
// CHECK: loop.pointwise : tensor<4x8xcomplex<f32>> {
// CHECK-DAG: %[[A:.+]] = complex.re %[[L:[^ ]+]] : complex<f32>
// CHECK-DAG: %[[B:.+]] = complex.im %[[L]] : complex<f32>
// CHECK-DAG: %[[C:.+]] = complex.re %[[R:[^ ]+]] : complex<f32>
// CHECK-DAG: %[[D:.+]] = complex.im %[[R]] : complex<f32>
// CHECK-DAG: %[[AC:.+]] = arith.mulf %[[A]], %[[C]]
// CHECK-DAG: %[[BD:.+]] = arith.mulf %[[B]], %[[D]]
// CHECK-DAG: %[[RE:.+]] = arith.subf %[[AC]], %[[BD]]
// CHECK-DAG: %[[AD:.+]] = arith.mulf %[[A]], %[[D]]
// CHECK-DAG: %[[BC:.+]] = arith.mulf %[[B]], %[[C]]
// CHECK-DAG: %[[IM:.+]] = arith.addf %[[AD]], %[[BC]]
// CHECK: complex.create %[[RE]], %[[IM]] : complex<f32>
fx.graph @complex_product(%x: tensor<4x8xcomplex<f32>>, %f: tensor<1x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  %0 = fx.mul %x, %f : (tensor<4x8xcomplex<f32>>, tensor<1x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  fx.output %0 : tensor<4x8xcomplex<f32>>
}

// -----

// A real operand is a complex number with imaginary part 0, converted to
// the parts' type; alpha scales both parts of `other`.
// CHECK-LABEL: fx.graph @mixed_complex_sum
// CHECK: loop.pointwise : tensor<3xcomplex<f64>> {
// CHECK: %[[R:.+]] = loop.load %{{.+}}[%{{.+}}] : tensor<3xf32>
// CHECK: %[[WIDE:.+]] = arith.extf %[[R]] : f32 to f64
// CHECK: arith.mulf %[[WIDE]], %cst
// CHECK: complex.create %{{.+}}, %{{.+}} : complex<f64>
fx.graph @mixed_complex_sum(%z: tensor<3xcomplex<f64>>, %r: tensor<3xf32>) -> tensor<3xcomplex<f64>> {
  %0 = fx.add %z, %r {alpha = 2 : i64} : (tensor<3xcomplex<f64>>, tensor<3xf32>) -> tensor<3xcomplex<f64>>
  fx.output %0 : tensor<3xcomplex<f64>>
}

// -----

// Quotients by Smith's method: the divisor's larger part (by magnitude)
// scales the smaller; a zero divisor divides each part by zero.
// CHECK-LABEL: fx.graph @complex_quotient
// CHECK: loop.pointwise : tensor<4xcomplex<f32>> {
// CHECK: %[[ABSC:.+]] = math.absf
// CHECK: %[[ABSD:.+]] = math.absf
// CHECK: %[[BYREAL:.+]] = arith.cmpf oge, %[[ABSC]], %[[ABSD]]
// CHECK: %[[ZERO:.+]] = arith.andi
// CHECK: %[[INNER:.+]] = arith.select %[[BYREAL]]
// CHECK: arith.select %[[ZERO]], %{{.+}}, %[[INNER]]
// CHECK: complex.create
fx.graph @complex_quotient(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = fx.div %x, %y : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0 : tensor<4xcomplex<f32>>
}

// -----

// Scalar forms: `other` is real.
// CHECK-LABEL: fx.graph @complex_scalars
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: arith.mulf %{{.+}}, %cst
// CHECK: arith.negf
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
fx.graph @complex_scalars(%x: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.mul_scalar %x {other = 2.5 : f64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.neg %0 : tensor<4xcomplex<f32>>
  %2 = fx.sub_scalar %x {other = 1 : i64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %1, %2 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// conj negates the imaginary part; complex pairs broadcast real parts;
// polar turns (r, θ) into (r cos θ, r sin θ).
// CHECK-LABEL: fx.graph @complex_from_parts
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>> {
// CHECK: %[[IM:.+]] = complex.im
// CHECK: %[[NEG:.+]] = arith.negf %[[IM]]
// CHECK: complex.create %{{.+}}, %[[NEG]] : complex<f32>
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>> {
// CHECK: %[[RE:.+]] = loop.load %{{.+}}[%{{.+}}, %{{.+}}] : tensor<4x3xf32>
// CHECK: %[[IMAG:.+]] = loop.load %{{.+}}[%{{.+}}] : tensor<3xf32>
// CHECK: complex.create %[[RE]], %[[IMAG]] : complex<f32>
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>> {
// CHECK: %[[R:.+]] = loop.load
// CHECK: %[[T:.+]] = loop.load
// CHECK-DAG: %[[COS:.+]] = math.cos %[[T]]
// CHECK-DAG: %[[SIN:.+]] = math.sin %[[T]]
// CHECK-DAG: %[[Y:.+]] = arith.mulf %[[R]], %[[SIN]]
// CHECK-DAG: %[[X:.+]] = arith.mulf %[[R]], %[[COS]]
// CHECK: complex.create %[[X]], %[[Y]] : complex<f32>
fx.graph @complex_from_parts(%z: tensor<4x3xcomplex<f32>>, %a: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>) {
  %0 = fx.conj %z : tensor<4x3xcomplex<f32>>
  %1 = fx.complex %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xcomplex<f32>>
  %2 = fx.polar %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xcomplex<f32>>
  fx.output %0, %1, %2 : tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>
}

// -----

// abs of complex numbers is a scaled hypot; angle is atan2(im, re), and of
// reals pi, 0 or NaN.
// CHECK-LABEL: fx.graph @complex_to_real
// CHECK: loop.pointwise : tensor<4xf64> {
// CHECK: %[[HIGH:.+]] = arith.maximumf
// CHECK: %[[LOW:.+]] = arith.minimumf
// CHECK: math.sqrt
// CHECK: arith.select %{{.+}}, %cst{{.*}}, %{{.+}} : f64
// CHECK: loop.pointwise : tensor<4xf64> {
// CHECK: %[[RE:.+]] = complex.re
// CHECK: %[[IM:.+]] = complex.im
// CHECK: math.atan2 %[[IM]], %[[RE]] : f64
// CHECK: loop.pointwise : tensor<4xbf16> {
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf uno
// CHECK: arith.truncf %{{.+}} : f32 to bf16
fx.graph @complex_to_real(%z: tensor<4xcomplex<f64>>, %x: tensor<4xbf16>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xbf16>) {
  %0 = fx.abs %z : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  %1 = fx.angle %z : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  %2 = fx.angle %x : (tensor<4xbf16>) -> tensor<4xbf16>
  fx.output %0, %1, %2 : tensor<4xf64>, tensor<4xf64>, tensor<4xbf16>
}

// -----

// A complex product of matrices: the operands' parts (nodes), four real
// products, and a node that combines them as (rr - ii) + i (ri + ir).
// CHECK-LABEL: fx.graph @complex_matmul
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xcomplex<f32>>, %[[B:.+]]: tensor<2x4x5xcomplex<f32>>)
// CHECK: %[[AR:.+]] = loop.pointwise : tensor<2x3x4xf32>
// CHECK: complex.re
// CHECK: %[[AI:.+]] = loop.pointwise : tensor<2x3x4xf32>
// CHECK: complex.im
// CHECK: %[[BR:.+]] = loop.pointwise : tensor<2x4x5xf32>
// CHECK: %[[BI:.+]] = loop.pointwise : tensor<2x4x5xf32>
// CHECK-DAG: %[[RR:.+]] = loop.matmul %[[AR]], %[[BR]]
// CHECK-DAG: %[[II:.+]] = loop.matmul %[[AI]], %[[BI]]
// CHECK-DAG: %[[RI:.+]] = loop.matmul %[[AR]], %[[BI]]
// CHECK-DAG: %[[IR:.+]] = loop.matmul %[[AI]], %[[BR]]
// CHECK: loop.pointwise : tensor<2x3x5xcomplex<f32>>
// CHECK-DAG: loop.load %[[RR]]
// CHECK-DAG: loop.load %[[II]]
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: complex.create
fx.graph @complex_matmul(%a: tensor<2x3x4xcomplex<f32>>, %b: tensor<2x4x5xcomplex<f32>>) -> tensor<2x3x5xcomplex<f32>> {
  %0 = fx.bmm %a, %b : (tensor<2x3x4xcomplex<f32>>, tensor<2x4x5xcomplex<f32>>) -> tensor<2x3x5xcomplex<f32>>
  fx.output %0 : tensor<2x3x5xcomplex<f32>>
}

// -----

// A complex fill: the scalar is the real part.
// CHECK-LABEL: fx.graph @complex_full
// CHECK: loop.pointwise : tensor<2x3xcomplex<f64>>
// CHECK: %[[C:.+]] = complex.create %cst{{.*}}, %cst{{.*}} : complex<f64>
// CHECK: loop.yield %[[C]]
fx.graph @complex_full() -> tensor<2x3xcomplex<f64>> {
  %0 = fx.full {dtype = complex<f64>, fill_value = 1.5 : f64} : () -> tensor<2x3xcomplex<f64>>
  fx.output %0 : tensor<2x3xcomplex<f64>>
}

// -----

// exp(a + ib) = e^a (cos b + i sin b); a zero sin b stays the imaginary
// part where e^a overflows.
// CHECK-LABEL: fx.graph @complex_exp
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: %[[M:.+]] = math.exp %[[A]]
// CHECK-DAG: %[[COS:.+]] = math.cos %[[B]]
// CHECK-DAG: %[[SIN:.+]] = math.sin %[[B]]
// CHECK-DAG: %[[ZERO:.+]] = arith.cmpf oeq, %[[SIN]]
// CHECK-DAG: %[[RE:.+]] = arith.mulf %[[M]], %[[COS]]
// CHECK-DAG: %[[PRODUCT:.+]] = arith.mulf %[[M]], %[[SIN]]
// CHECK: %[[IM:.+]] = arith.select %[[ZERO]], %[[SIN]], %[[PRODUCT]]
// CHECK: complex.create %[[RE]], %[[IM]]
fx.graph @complex_exp(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = fx.exp %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0 : tensor<4xcomplex<f32>>
}

// -----

// log(z) = log|z| + i atan2(b, a), with |z| the scaled hypot of abs.
// CHECK-LABEL: fx.graph @complex_log
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: math.sqrt
// CHECK: %[[R:.+]] = arith.select
// CHECK: %[[L:.+]] = math.log %[[R]]
// CHECK: %[[T:.+]] = math.atan2 %[[B]], %[[A]]
// CHECK: complex.create %[[L]], %[[T]]
fx.graph @complex_log(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = fx.log %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0 : tensor<4xcomplex<f32>>
}

// -----

// sqrt(a + ib) takes t = sqrt(|a| / 2 + |z| / 2); for a >= 0 it is
// t + i b / 2t, else |b| / 2t + i copysign(t, b); zero for z = 0.
// CHECK-LABEL: fx.graph @complex_sqrt
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: %[[B:.+]] = complex.im
// CHECK: math.sqrt
// CHECK: %[[T:.+]] = math.sqrt %{{.+}} : f64
// CHECK-NEXT: %[[ZERO:.+]] = arith.cmpf oeq, %[[T]]
// CHECK: %[[NONNEG:.+]] = arith.cmpf oge
// CHECK: %[[RE:.+]] = arith.select %[[NONNEG]], %[[T]], %{{.+}}
// CHECK: %[[SIGNED:.+]] = math.copysign %[[T]], %[[B]]
// CHECK: %[[IM:.+]] = arith.select %[[NONNEG]], %{{.+}}, %[[SIGNED]]
// CHECK: %[[RE0:.+]] = arith.select %[[ZERO]], %{{.+}}, %[[RE]]
// CHECK: %[[IM0:.+]] = arith.select %[[ZERO]], %[[B]], %[[IM]]
// CHECK: complex.create %[[RE0]], %[[IM0]]
fx.graph @complex_sqrt(%z: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %0 = fx.sqrt %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  fx.output %0 : tensor<4xcomplex<f64>>
}

// -----

// sin(a + ib) = sin a cosh b + i cos a sinh b; cosh(a + ib) = cos b cosh a
// + i sin b sinh a. A zero sine or cosine gives a signed zero, not 0 * inf.
// CHECK-LABEL: fx.graph @complex_sin_and_cosh
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: %[[SIN:.+]] = math.sin %[[A]]
// CHECK: %[[COS:.+]] = math.cos %[[A]]
// CHECK: %[[SINH:.+]] = math.sinh %[[B]]
// CHECK: %[[COSH:.+]] = math.cosh %[[B]]
// CHECK: %[[SINZERO:.+]] = arith.cmpf oeq, %[[SIN]]
// CHECK: %[[SIGN:.+]] = math.copysign %{{.+}}, %[[COSH]]
// CHECK: %[[SIGNED:.+]] = arith.mulf %[[SIN]], %[[SIGN]]
// CHECK: %[[PRODUCT:.+]] = arith.mulf %[[SIN]], %[[COSH]]
// CHECK: %[[RE:.+]] = arith.select %[[SINZERO]], %[[SIGNED]], %[[PRODUCT]]
// CHECK: arith.mulf %[[COS]], %[[SINH]]
// CHECK: %[[IM:.+]] = arith.select
// CHECK: complex.create %[[RE]], %[[IM]]
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A2:.+]] = complex.re
// CHECK: %[[B2:.+]] = complex.im
// CHECK: %[[SIN2:.+]] = math.sin %[[B2]]
// CHECK: %[[COS2:.+]] = math.cos %[[B2]]
// CHECK: %[[SINH2:.+]] = math.sinh %[[A2]]
// CHECK: %[[COSH2:.+]] = math.cosh %[[A2]]
// CHECK: arith.mulf %[[COS2]], %[[COSH2]]
// CHECK: %[[RE2:.+]] = arith.select
// CHECK: arith.mulf %[[SIN2]], %[[SINH2]]
// CHECK: %[[IM2:.+]] = arith.select
// CHECK: complex.create %[[RE2]], %[[IM2]]
fx.graph @complex_sin_and_cosh(%z: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.sin %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.cosh %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// tanh(a + ib) = (sinh a cosh a + i sin b cos b) / (sinh^2 a + cos^2 b)
// while |a| <= 127 log(2) / 2 (f32's largest exponent); past it, where
// sinh^2 a would overflow, copysign(1, a) + i 4 sin b cos b e^(-2|a|).
// CHECK-LABEL: fx.graph @complex_tanh
// CHECK-DAG: %[[LIMIT:.+]] = arith.constant 44.0148468 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: %[[SIN:.+]] = math.sin %[[B]]
// CHECK: %[[COS:.+]] = math.cos %[[B]]
// CHECK: %[[SINH:.+]] = math.sinh %[[A]]
// CHECK: %[[COSH:.+]] = math.cosh %[[A]]
// CHECK: %[[SINCOS:.+]] = arith.mulf %[[SIN]], %[[COS]]
// CHECK: %[[SQUARE:.+]] = arith.mulf %[[SINH]], %[[SINH]]
// CHECK: %[[COS2:.+]] = arith.mulf %[[COS]], %[[COS]]
// CHECK: %[[DEN:.+]] = arith.addf %[[SQUARE]], %[[COS2]]
// CHECK: %[[PRODUCT:.+]] = arith.mulf %[[SINH]], %[[COSH]]
// CHECK: %[[RE:.+]] = arith.divf %[[PRODUCT]], %[[DEN]]
// CHECK: %[[IM:.+]] = arith.divf %[[SINCOS]], %[[DEN]]
// CHECK: %[[ABS:.+]] = math.absf %[[A]]
// CHECK: %[[SIGN:.+]] = math.copysign %[[ONE]], %[[A]]
// CHECK: %[[DECAY:.+]] = math.exp
// CHECK: %[[FARIM:.+]] = arith.mulf %{{.+}}, %[[DECAY]]
// CHECK: %[[FAR:.+]] = arith.cmpf ogt, %[[ABS]], %[[LIMIT]]
// CHECK: %[[R:.+]] = arith.select %[[FAR]], %[[SIGN]], %[[RE]]
// CHECK: %[[I:.+]] = arith.select %[[FAR]], %[[FARIM]], %[[IM]]
// CHECK: complex.create %[[R]], %[[I]]
fx.graph @complex_tanh(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = fx.tanh %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0 : tensor<4xcomplex<f32>>
}

// -----

// tan z = -i tanh(iz): tanh of -b + ia, whose parts u + iv give v - iu;
// f64's limit is 1023 log(2) / 2.
// CHECK-LABEL: fx.graph @complex_tan
// CHECK-DAG: arith.constant 354.54478285641204 : f64
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: %[[NEGB:.+]] = arith.negf %[[B]]
// CHECK: math.sin %[[A]]
// CHECK: math.sinh %[[NEGB]]
// CHECK: %[[U:.+]] = arith.select
// CHECK: %[[V:.+]] = arith.select
// CHECK: %[[NEGU:.+]] = arith.negf %[[U]]
// CHECK: complex.create %[[V]], %[[NEGU]]
fx.graph @complex_tan(%z: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %0 = fx.tan %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  fx.output %0 : tensor<4xcomplex<f64>>
}

// -----

// sigmoid z = 1 / (1 + e^-z): e^-z from its parts, then Smith's quotient.
// CHECK-LABEL: fx.graph @complex_sigmoid
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[NEGA:.+]] = arith.negf
// CHECK: %[[NEGB:.+]] = arith.negf
// CHECK: %[[E:.+]] = math.exp %[[NEGA]]
// CHECK-DAG: math.cos %[[NEGB]]
// CHECK-DAG: math.sin %[[NEGB]]
// CHECK: arith.cmpf oge
// CHECK: complex.create
fx.graph @complex_sigmoid(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = fx.sigmoid %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0 : tensor<4xcomplex<f32>>
}

// -----

// A complex cumsum is a real one over both parts (view_as_real, cumsum
// along the same dimension, view_as_complex); a number scans as itself.
// CHECK-LABEL: fx.graph @complex_cumsum
// CHECK: %[[PARTS:.+]] = loop.pointwise(%{{.+}}) : tensor<?x5x2xf32>
// CHECK: complex.re
// CHECK: complex.im
// CHECK: %[[SUMS:.+]] = loop.reduce "sum"(%{{.+}}) over [5] : tensor<?x5x2xf32>
// CHECK: loop.load %[[PARTS]][%{{.+}}, %[[R:.+]], %{{.+}}]
// CHECK: arith.cmpi ule, %[[R]]
// CHECK: %[[Z:.+]] = loop.pointwise(%{{.+}}) : tensor<?x5xcomplex<f32>>
// CHECK: loop.load %[[SUMS]]
// CHECK: complex.create
// CHECK: fx.output %[[Z]], %arg1
fx.graph @complex_cumsum(%x: tensor<?x5xcomplex<f32>>, %s: tensor<complex<f64>>) -> (tensor<?x5xcomplex<f32>>, tensor<complex<f64>>) {
  %0 = fx.cumsum %x {dim = -1 : i64} : (tensor<?x5xcomplex<f32>>) -> tensor<?x5xcomplex<f32>>
  %1 = fx.cumsum %s {dim = 0 : i64} : (tensor<complex<f64>>) -> tensor<complex<f64>>
  fx.output %0, %1 : tensor<?x5xcomplex<f32>>, tensor<complex<f64>>
}

// -----

// Powers with a scalar exponent: 2 is a complex product (no logarithm), 0.5
// a square root, -1 a quotient; other exponents are e^(e log z), 0 for z = 0.
// CHECK-LABEL: fx.graph @complex_scalar_powers
// CHECK: loop.pointwise
// CHECK-NOT: math.log
// CHECK: arith.mulf
// CHECK: complex.create
// CHECK: loop.pointwise
// CHECK-NOT: math.log
// CHECK: math.copysign
// CHECK: complex.create
// CHECK: loop.pointwise
// CHECK-NOT: math.log
// CHECK: arith.divf
// CHECK: complex.create
// CHECK: loop.pointwise
// CHECK: math.log
// CHECK: math.atan2
// CHECK: math.exp
// CHECK: %[[BASE_IS_ZERO:.+]] = arith.andi
// CHECK: arith.select %[[BASE_IS_ZERO]]
// CHECK: complex.create
fx.graph @complex_scalar_powers(%z: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.pow_tensor_scalar %z {exponent = 2 : i64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.pow_tensor_scalar %z {exponent = 5.000000e-01 : f64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %2 = fx.pow_tensor_scalar %z {exponent = -1 : i64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %3 = fx.pow_tensor_scalar %z {exponent = 1.500000e+00 : f64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0, %1, %2, %3 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// Complex exponents: z ** w with a real base tensor (whose angle is
// atan2(0, x)) or a real scalar base (whose logarithm folds: log 2).
// CHECK-LABEL: fx.graph @complex_tensor_powers
// CHECK: %[[LOG2:.+]] = arith.constant 0.693147182 : f32
// CHECK: loop.pointwise : tensor<2x4xcomplex<f32>>
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK: math.log
// CHECK: math.atan2 %{{.+}}, %[[X]]
// CHECK: math.exp
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[RE:.+]] = complex.re
// CHECK: arith.mulf %[[RE]], %[[LOG2]]
// CHECK: math.exp
fx.graph @complex_tensor_powers(%x: tensor<2x1xf32>, %w: tensor<4xcomplex<f32>>) -> (tensor<2x4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.pow %x, %w : (tensor<2x1xf32>, tensor<4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  %1 = fx.pow_scalar %w {self = 2.000000e+00 : f64} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0, %1 : tensor<2x4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// Complex numbers are equal when both parts are; ne is its negation (NaN
// parts are unequal).
// CHECK-LABEL: fx.graph @complex_equality
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: %[[RE:.+]] = arith.cmpf oeq
// CHECK: %[[IM:.+]] = arith.cmpf oeq
// CHECK: arith.andi %[[RE]], %[[IM]]
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: %[[RE2:.+]] = arith.cmpf une,
// CHECK: %[[IM2:.+]] = arith.cmpf une, %{{.+}}, %{{.+}} : f64
// CHECK: arith.ori %[[RE2]], %[[IM2]]
fx.graph @complex_equality(%z: tensor<4xcomplex<f32>>, %w: tensor<4xcomplex<f32>>, %u: tensor<4xcomplex<f64>>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = fx.eq %z, %w : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
  %1 = fx.ne_scalar %u {other = 1.000000e+00 : f64} : (tensor<4xcomplex<f64>>) -> tensor<4xi1>
  fx.output %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// Complex sums and means sum each part on its own; a mean divides both by
// the count. where chooses each part; cat and constant padding copy.
// CHECK-LABEL: fx.graph @complex_sums_and_copies
// CHECK: %[[RE:.+]] = loop.reduce "sum" over [6] : tensor<4xf32>
// CHECK: complex.re
// CHECK: %[[IM:.+]] = loop.reduce "sum" over [6] : tensor<4xf32>
// CHECK: complex.im
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: loop.load %[[RE]]
// CHECK: loop.load %[[IM]]
// CHECK: complex.create
// CHECK: loop.reduce "sum" over [4, 6] : tensor<f32>
// CHECK: loop.reduce "sum" over [4, 6] : tensor<f32>
// CHECK: loop.pointwise : tensor<complex<f32>>
// CHECK: arith.divf %{{.+}}, %cst
// CHECK: arith.divf %{{.+}}, %cst
// CHECK: loop.pointwise : tensor<4x6xcomplex<f32>>
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: loop.pointwise : tensor<8x6xcomplex<f32>>
// CHECK: loop.pointwise : tensor<4x9xcomplex<f32>>
fx.graph @complex_sums_and_copies(%z: tensor<4x6xcomplex<f32>>, %m: tensor<4x6xi1>, %r: tensor<6xf32>) -> (tensor<4xcomplex<f32>>, tensor<complex<f32>>, tensor<4x6xcomplex<f32>>, tensor<8x6xcomplex<f32>>, tensor<4x9xcomplex<f32>>) {
  %0 = fx.sum %z {dim = array<i64: 1>} : (tensor<4x6xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.mean %z : (tensor<4x6xcomplex<f32>>) -> tensor<complex<f32>>
  %2 = fx.where %m, %z, %r : (tensor<4x6xi1>, tensor<4x6xcomplex<f32>>, tensor<6xf32>) -> tensor<4x6xcomplex<f32>>
  %3 = fx.cat %z, %z {dim = 0 : i64} : (tensor<4x6xcomplex<f32>>, tensor<4x6xcomplex<f32>>) -> tensor<8x6xcomplex<f32>>
  %4 = fx.constant_pad_nd %z {pad = array<i64: 1, 2>} : (tensor<4x6xcomplex<f32>>) -> tensor<4x9xcomplex<f32>>
  fx.output %0, %1, %2, %3, %4 : tensor<4xcomplex<f32>>, tensor<complex<f32>>, tensor<4x6xcomplex<f32>>, tensor<8x6xcomplex<f32>>, tensor<4x9xcomplex<f32>>
}

// -----

// A complex product is a tree of pairwise products, halving the reduced
// dimension per node (5 -> 3 -> 2 -> 1; an odd last element passes through),
// then a view without it; a complex cumprod is a scan of nodes whose
// element i takes in element i - k for k = 1, 2, 4; a number scans as
// itself.
// CHECK-LABEL: fx.graph @complex_products
// CHECK: %[[L1:.+]] = loop.pointwise : tensor<3x3xcomplex<f32>>
// CHECK: arith.minui %{{.+}}, %c4
// CHECK: arith.cmpi ult, %{{.+}}, %c5
// CHECK: %[[L2:.+]] = loop.pointwise : tensor<3x2xcomplex<f32>>
// CHECK: loop.load %[[L1]]
// CHECK: %[[L3:.+]] = loop.pointwise : tensor<3x1xcomplex<f32>>
// CHECK: loop.load %[[L2]]
// CHECK-NOT: arith.select
// CHECK: %[[P:.+]] = loop.pointwise : tensor<3xcomplex<f32>>
// CHECK: loop.load %[[L3]][%{{.+}}, %c0]
// CHECK: %[[S1:.+]] = loop.pointwise : tensor<3x5xcomplex<f32>>
// CHECK: arith.maxui %{{.+}}, %c1
// CHECK: %[[S2:.+]] = loop.pointwise : tensor<3x5xcomplex<f32>>
// CHECK: arith.maxui %{{.+}}, %c2
// CHECK: loop.load %[[S1]]
// CHECK: %[[S4:.+]] = loop.pointwise : tensor<3x5xcomplex<f32>>
// CHECK: arith.maxui %{{.+}}, %c4
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[P]], %[[S4]], %arg1
fx.graph @complex_products(%x: tensor<3x5xcomplex<f32>>, %s: tensor<complex<f32>>) -> (tensor<3xcomplex<f32>>, tensor<3x5xcomplex<f32>>, tensor<complex<f32>>) {
  %0 = fx.prod_dim_int %x {dim = -1 : i64, keepdim = false} : (tensor<3x5xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %1 = fx.cumprod %x {dim = 1 : i64} : (tensor<3x5xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>
  %2 = fx.cumprod %s {dim = 0 : i64} : (tensor<complex<f32>>) -> tensor<complex<f32>>
  fx.output %0, %1, %2 : tensor<3xcomplex<f32>>, tensor<3x5xcomplex<f32>>, tensor<complex<f32>>
}

// -----

// The product of every element reduces each dimension in turn; an empty
// dimension's product is 1, and keepdim keeps the size-1 dimensions.
// CHECK-LABEL: fx.graph @complex_product_of_all
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[A:.+]] = loop.pointwise : tensor<1x2xcomplex<f64>>
// CHECK: %[[B:.+]] = loop.pointwise : tensor<1x1xcomplex<f64>>
// CHECK: %[[C:.+]] = loop.pointwise : tensor<complex<f64>>
// CHECK: loop.load %[[B]][%c0, %c0]
// CHECK: %[[EMPTY:.+]] = loop.pointwise : tensor<2x1xcomplex<f64>>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: complex.create %[[ONE]], %[[ZERO]]
// CHECK: %[[E:.+]] = loop.pointwise : tensor<1x1xcomplex<f64>>
// CHECK: loop.load %[[EMPTY]]
// CHECK: fx.output %[[C]], %[[E]]
fx.graph @complex_product_of_all(%x: tensor<1x3xcomplex<f64>>, %e: tensor<2x0xcomplex<f64>>) -> (tensor<complex<f64>>, tensor<1x1xcomplex<f64>>) {
  %0 = fx.prod %x : (tensor<1x3xcomplex<f64>>) -> tensor<complex<f64>>
  %1 = fx.prod_dim_int %e {dim = 1 : i64, keepdim = true} : (tensor<2x0xcomplex<f64>>) -> tensor<2x1xcomplex<f64>>
  %2 = fx.prod_dim_int %1 {dim = 0 : i64, keepdim = true} : (tensor<2x1xcomplex<f64>>) -> tensor<1x1xcomplex<f64>>
  fx.output %0, %2 : tensor<complex<f64>>, tensor<1x1xcomplex<f64>>
}

// -----

// A dtype argument converts the numbers first, then multiplies in it.
// CHECK-LABEL: fx.graph @complex_products_in_another_dtype
// CHECK: %[[WIDE:.+]] = loop.pointwise : tensor<2x3xcomplex<f64>>
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: %[[HALF:.+]] = loop.pointwise : tensor<2x2xcomplex<f64>>
// CHECK: loop.load %[[WIDE]]
// CHECK: %[[WIDE2:.+]] = loop.pointwise : tensor<2x3xcomplex<f64>>
// CHECK: %[[SCAN:.+]] = loop.pointwise : tensor<2x3xcomplex<f64>>
// CHECK: loop.load %[[WIDE2]]
fx.graph @complex_products_in_another_dtype(%z: tensor<2x3xcomplex<f32>>) -> (tensor<2xcomplex<f64>>, tensor<2x3xcomplex<f64>>) {
  %0 = fx.prod_dim_int %z {dim = 1 : i64, dtype = complex<f64>} : (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f64>>
  %1 = fx.cumprod %z {dim = 0 : i64, dtype = complex<f64>} : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xcomplex<f64>>
  fx.output %0, %1 : tensor<2xcomplex<f64>>, tensor<2x3xcomplex<f64>>
}

// -----

// Kahan's inverse sine and cosine: s = √(1 - z) and t = √(1 + z) (1 - z
// negates b, so that a zero b keeps its sign on the branch cuts); asin z =
// atan2(a, Re(s t)) + i asinh(Im(conj(s) t)), acos z = 2 atan2(Re s, Re t) +
// i asinh(Im(conj(t) s)), asinh written out (no math.asinh). Past |z| =
// 2^13 (f32; 2^27 for f64), where Kahan's products would meet 0 · inf for
// an infinite part, the asymptotic forms: asin z = -i asinh(iz) with asinh
// w = ±log(±2w), acos z = ∓i log 2z.
// CHECK-LABEL: fx.graph @complex_asin_and_acos
// CHECK-DAG: %[[BOUND:.+]] = arith.constant 8.192000e+03 : f32
// CHECK-DAG: %[[BOUND64:.+]] = arith.constant 0x41A0000000000000 : f64
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: %[[ONE_MINUS_A:.+]] = arith.subf %{{.+}}, %[[A]] : f32
// CHECK: %[[NEG_B:.+]] = arith.negf %[[B]] : f32
// CHECK: %[[ONE_PLUS_A:.+]] = arith.addf %[[A]], %{{.+}} : f32
// CHECK: %[[NEAR_RE:.+]] = math.atan2 %[[A]], %{{.+}} : f32
// CHECK: math.log1p
// CHECK: %[[NEAR_IM:.+]] = math.copysign
// CHECK: %[[FAR:.+]] = arith.cmpf ogt, %{{.+}}, %[[BOUND]] : f32
// CHECK: %[[RE:.+]] = arith.select %[[FAR]], %{{.+}}, %[[NEAR_RE]] : f32
// CHECK: %[[IM:.+]] = arith.select %[[FAR]], %{{.+}}, %[[NEAR_IM]] : f32
// CHECK: complex.create %[[RE]], %[[IM]] : complex<f32>
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: %[[ANGLE:.+]] = math.atan2 %{{.+}}, %{{.+}} : f64
// CHECK: %[[TWICE:.+]] = arith.mulf %[[ANGLE]], %{{.+}} : f64
// CHECK: math.log1p
// CHECK: %[[IM2:.+]] = math.copysign
// CHECK: %[[FAR64:.+]] = arith.cmpf ogt, %{{.+}}, %[[BOUND64]] : f64
// CHECK: %[[RE3:.+]] = arith.select %[[FAR64]], %{{.+}}, %[[TWICE]] : f64
// CHECK: %[[IM3:.+]] = arith.select %[[FAR64]], %{{.+}}, %[[IM2]] : f64
// CHECK: complex.create %[[RE3]], %[[IM3]] : complex<f64>
// CHECK-NOT: math.asinh
fx.graph @complex_asin_and_acos(%z: tensor<4xcomplex<f32>>, %w: tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f64>>) {
  %0 = fx.asin %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.acos %w : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  fx.output %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f64>>
}

// -----

// asinh z = -i asin(iz) and atan z = -i atanh(iz): the function of -b + ia,
// whose parts u + iv give v - iu.
// CHECK-LABEL: fx.graph @complex_asinh_and_atan
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[A:.+]] = complex.re
// CHECK: %[[B:.+]] = complex.im
// CHECK: %[[NEG_B:.+]] = arith.negf %[[B]] : f32
// CHECK: arith.subf %{{.+}}, %[[NEG_B]] : f32
// CHECK: math.atan2 %[[NEG_B]], %{{.+}} : f32
// CHECK: arith.cmpf ogt
// CHECK: arith.negf
// CHECK: complex.create %{{.+}}, %{{.+}} : complex<f32>
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[IM:.+]] = complex.im
// CHECK: %[[NEG_IM:.+]] = arith.negf %[[IM]] : f32
// CHECK: math.log1p
// CHECK: %[[NEG_U2:.+]] = arith.negf %{{.+}} : f32
// CHECK: complex.create %{{.+}}, %[[NEG_U2]] : complex<f32>
fx.graph @complex_asinh_and_atan(%z: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.asinh %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.atan %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// atanh z: ¼ log1p(4a / |1 - z|²) where that fraction is at most ½, else
// ½ (log |1 + z| - log |1 - z|); the angle ½ atan2(2b, (1 - a)(1 + a) - b²);
// past 2^62 (f32), where b² would soon overflow, 1/z + i copysign(π/2, b).
// acosh z = asinh(Re(conj(√(z - 1)) √(z + 1))) + 2i atan2(Im √(z - 1),
// Re √(z + 1)).
// CHECK-LABEL: fx.graph @complex_atanh_and_acosh
// CHECK-DAG: %[[HALF_PI:.+]] = arith.constant 1.57079637 : f32
// CHECK-DAG: %[[BOUND:.+]] = arith.constant 4.61168602E+18 : f32
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[FRACTION:.+]] = arith.divf
// CHECK: %[[SMALL:.+]] = arith.cmpf ole
// CHECK: %[[LOG1P:.+]] = math.log1p %[[FRACTION]]
// CHECK: %[[NEAR_RE:.+]] = arith.select %[[SMALL]]
// CHECK: %[[FAR_IM:.+]] = math.copysign %[[HALF_PI]]
// CHECK: %[[FAR:.+]] = arith.cmpf ogt, %{{.+}}, %[[BOUND]] : f32
// CHECK: %[[RE:.+]] = arith.select %[[FAR]], %{{.+}}, %[[NEAR_RE]]
// CHECK: %[[IM:.+]] = arith.select %[[FAR]], %[[FAR_IM]], %{{.+}}
// CHECK: complex.create %[[RE]], %[[IM]]
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[ANGLE:.+]] = math.atan2
// CHECK: %[[TWICE:.+]] = arith.mulf %[[ANGLE]]
// CHECK: arith.select %{{.+}}, %{{.+}}, %[[TWICE]]
// CHECK: complex.create
fx.graph @complex_atanh_and_acosh(%z: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.atanh %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.acosh %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// log2 and log10 divide both parts of log z by log 2 and log 10; 2^z = e^(z log 2); log1p and
// expm1 as PyTorch computes them (½ log1p(a (2 + a) + b²) near 0, where
// |z| < ½; expm1(a) cos b - 2 sin²(b/2)); reciprocal and rsqrt are
// quotients of 1.
// CHECK-LABEL: fx.graph @complex_logarithms_and_exponentials
// CHECK-DAG: %[[LN2:.+]] = arith.constant 0.69314718055994529 : f64
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: %[[ANGLE:.+]] = math.atan2
// CHECK: %[[RE:.+]] = arith.divf %{{.+}}, %[[LN2]] : f64
// CHECK: %[[IM:.+]] = arith.divf %[[ANGLE]], %[[LN2]] : f64
// CHECK: complex.create %[[RE]], %[[IM]]
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: arith.mulf %{{.+}}, %[[LN2]] : f64
// CHECK: arith.mulf %{{.+}}, %[[LN2]] : f64
// CHECK: math.exp
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: %[[LOG1P:.+]] = math.log1p %[[SUM:.+]] : f64
// CHECK: arith.cmpf olt
// CHECK: math.atan2
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: math.sin
// CHECK: math.expm1
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: complex.create
fx.graph @complex_logarithms_and_exponentials(%z: tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) {
  %0 = fx.log2 %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %1 = fx.exp2 %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %2 = fx.log1p %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %3 = fx.expm1 %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %4 = fx.rsqrt %z : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  fx.output %0, %1, %2, %3, %4 : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
}

// -----

// tanh's and sigmoid's gradients of complex numbers: grad conj(1 - y²) and
// grad conj((1 - y) y).
// CHECK-LABEL: fx.graph @complex_activation_gradients
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: %[[CONJUGATE:.+]] = arith.negf %{{.+}} : f32
// CHECK: arith.mulf %{{.+}}, %[[CONJUGATE]] : f32
// CHECK: complex.create
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: arith.negf
// CHECK: complex.create
fx.graph @complex_activation_gradients(%g: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = fx.tanh_backward %g, %y : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %1 = fx.sigmoid_backward %g, %y : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  fx.output %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}

// -----

// Scatters that add complex numbers run on each part: index_put with
// accumulate (and scatter_add) twice, on nodes that take the parts of their
// complex operands (the indices stay), and a node pairs the two results.
// Scatters that replace numbers (scatter, masked_scatter) move them whole,
// so that duplicate indices pick one update for both parts.
// CHECK-LABEL: fx.graph @complex_moves_by_parts
// CHECK: %[[SELF_RE:.+]] = loop.pointwise : tensor<4x3xf32>
// CHECK: complex.re
// CHECK: %[[VALUES_RE:.+]] = loop.pointwise : tensor<2x3xf32>
// CHECK: complex.re
// CHECK: %[[PUT_RE:.+]] = loop.scatter "sum" %[[SELF_RE]] over [2, 3] : tensor<4x3xf32>
// CHECK: loop.load %[[VALUES_RE]]
// CHECK: %[[SELF_IM:.+]] = loop.pointwise : tensor<4x3xf32>
// CHECK: complex.im
// CHECK: %[[VALUES_IM:.+]] = loop.pointwise : tensor<2x3xf32>
// CHECK: complex.im
// CHECK: %[[PUT_IM:.+]] = loop.scatter "sum" %[[SELF_IM]] over [2, 3] : tensor<4x3xf32>
// CHECK: loop.load %[[VALUES_IM]]
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>>
// CHECK: %[[RE:.+]] = loop.load %[[PUT_RE]]
// CHECK: %[[IM:.+]] = loop.load %[[PUT_IM]]
// CHECK: complex.create %[[RE]], %[[IM]]
// CHECK: loop.scatter "assign" %{{.+}} over [4, 3] : tensor<4x3xcomplex<f32>> -> tensor<4x3xcomplex<f32>>
// CHECK: loop.scatter_yield %{{.+}} at [%{{.+}}, %{{.+}}] : complex<f32>
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>>
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : complex<f32>
// CHECK-NOT: fx.index_put
// CHECK-NOT: fx.scatter
// CHECK-NOT: fx.masked_scatter
fx.graph @complex_moves_by_parts(%z: tensor<4x3xcomplex<f32>>, %i: tensor<2xsi64>, %v: tensor<2x3xcomplex<f32>>, %j: tensor<4x3xsi64>, %m: tensor<4x3xi1>) -> (tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>) {
  %0 = fx.index_put %z, %i, %v {accumulate = true} : (tensor<4x3xcomplex<f32>>, tensor<2xsi64>, tensor<2x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
  %1 = fx.scatter %z, %j, %z {dim = 1 : i64} : (tensor<4x3xcomplex<f32>>, tensor<4x3xsi64>, tensor<4x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
  %2 = fx.masked_scatter %z, %m, %z : (tensor<4x3xcomplex<f32>>, tensor<4x3xi1>, tensor<4x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
  fx.output %0, %1, %2 : tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>
}

// -----

// The variance of complex numbers is the sum of their parts' variances; the
// mean of var_mean is the pair of the parts' means.
// CHECK-LABEL: fx.graph @complex_variance
// CHECK: loop.pointwise : tensor<4x6xf64>
// CHECK: complex.re
// CHECK: loop.pointwise : tensor<4x6xf64>
// CHECK: complex.im
// CHECK: loop.pointwise : tensor<4xf64>
// CHECK: arith.addf
// CHECK: loop.pointwise : tensor<6xcomplex<f64>>
// CHECK: complex.create
fx.graph @complex_variance(%z: tensor<4x6xcomplex<f64>>) -> (tensor<4xf64>, tensor<6xf64>, tensor<6xcomplex<f64>>) {
  %0 = fx.var %z {dim = array<i64: 1>, correction = 1 : i64} : (tensor<4x6xcomplex<f64>>) -> tensor<4xf64>
  %1:2 = fx.var_mean %z {dim = array<i64: 0>, correction = 0 : i64} : (tensor<4x6xcomplex<f64>>) -> (tensor<6xf64>, tensor<6xcomplex<f64>>)
  fx.output %0, %1#0, %1#1 : tensor<4xf64>, tensor<6xf64>, tensor<6xcomplex<f64>>
}

// -----

// Casts to, from and between complex dtypes convert the parts: a real
// number gets imaginary part 0, a complex one cast to a real dtype keeps
// its real part, to bool says whether it is nonzero; isnan and isinf ask
// of either part.
// CHECK-LABEL: fx.graph @complex_casts_and_classes
// CHECK: loop.pointwise : tensor<4xcomplex<f64>>
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: loop.pointwise : tensor<4xcomplex<f32>>
// CHECK: arith.sitofp
// CHECK: loop.pointwise : tensor<4xbf16>
// CHECK: %[[RE:.+]] = complex.re
// CHECK: arith.truncf %[[RE]] {loop.explicit_rounding} : f32 to bf16
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: arith.cmpf une
// CHECK: arith.cmpf une
// CHECK: arith.ori
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf uno
// CHECK: arith.ori
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: math.absf
// CHECK: arith.cmpf oeq
fx.graph @complex_casts_and_classes(%z: tensor<4xcomplex<f32>>, %i: tensor<4xsi64>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>, tensor<4xbf16>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = fx.to_copy %z {dtype = complex<f64>} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f64>>
  %1 = fx.to_copy %i {dtype = complex<f32>} : (tensor<4xsi64>) -> tensor<4xcomplex<f32>>
  %2 = fx.to_copy %z {dtype = bf16} : (tensor<4xcomplex<f32>>) -> tensor<4xbf16>
  %3 = fx.to_copy %z {dtype = i1} : (tensor<4xcomplex<f32>>) -> tensor<4xi1>
  %4 = fx.isnan %z : (tensor<4xcomplex<f32>>) -> tensor<4xi1>
  %5 = fx.isinf %z : (tensor<4xcomplex<f32>>) -> tensor<4xi1>
  fx.output %0, %1, %2, %3, %4, %5 : tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>, tensor<4xbf16>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// A complex sum into a wider dtype casts first; complex addmm is the
// complex product (four real ones) and beta self + alpha product on the
// parts.
// CHECK-LABEL: fx.graph @complex_sum_in_dtype_and_addmm
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[WIDE:.+]] = loop.pointwise : tensor<4x6xcomplex<f64>>
// CHECK: loop.reduce
// CHECK-COUNT-4: loop.matmul
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>>
// CHECK: loop.pointwise : tensor<4x3xcomplex<f32>>
// CHECK-DAG: arith.mulf %{{.+}}, %[[TWO]] : f32
// CHECK-DAG: arith.mulf %{{.+}}, %[[HALF]] : f32
// CHECK: complex.create
// CHECK-NOT: fx.addmm
fx.graph @complex_sum_in_dtype_and_addmm(%z: tensor<4x6xcomplex<f32>>, %w: tensor<6x3xcomplex<f32>>, %b: tensor<3xcomplex<f32>>) -> (tensor<4xcomplex<f64>>, tensor<4x3xcomplex<f32>>) {
  %0 = fx.sum %z {dim = array<i64: 1>, dtype = complex<f64>} : (tensor<4x6xcomplex<f32>>) -> tensor<4xcomplex<f64>>
  %1 = fx.addmm %b, %z, %w {beta = 0.5 : f64, alpha = 2 : i64} : (tensor<3xcomplex<f32>>, tensor<4x6xcomplex<f32>>, tensor<6x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
  fx.output %0, %1 : tensor<4xcomplex<f64>>, tensor<4x3xcomplex<f32>>
}

// -----

// A complex product along a dynamic dimension: eight nodes, each
// multiplying chunks of 32 numbers in turn (masked past the end), ⌈n / 32⌉
// chunks each; the last one's size 1 is static. A static dimension beside
// it stays a tree.
// CHECK-LABEL: fx.graph @complex_prod_of_a_dynamic_size
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xcomplex<f32>>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[CHUNKS:.+]] = arith.ceildivui %[[N]], %c32
// CHECK: %[[FIRST:.+]] = loop.pointwise(%[[CHUNKS]]) : tensor<?x4xcomplex<f32>>
// CHECK: loop.load %[[X]]
// CHECK-COUNT-31: arith.subf
// CHECK: loop.yield
// CHECK-COUNT-6: loop.pointwise(%{{.+}}) : tensor<?x4xcomplex<f32>>
// CHECK: loop.pointwise : tensor<1x4xcomplex<f32>>
// CHECK: loop.pointwise : tensor<1x2xcomplex<f32>>
// CHECK: %[[ONE:.+]] = loop.pointwise : tensor<1x1xcomplex<f32>>
// CHECK: loop.pointwise : tensor<complex<f32>>
// CHECK: loop.load %[[ONE]][%c0, %c0]
fx.graph @complex_prod_of_a_dynamic_size(%x: tensor<?x4xcomplex<f32>>) -> tensor<complex<f32>> {
  %0 = fx.prod %x : (tensor<?x4xcomplex<f32>>) -> tensor<complex<f32>>
  fx.output %0 : tensor<complex<f32>>
}

// -----

// A complex cumulative product along a dynamic dimension: each element's
// product from its chunk of 32's start (up to 31 masked products), the
// chunks' products (each chunk's last), their cumulative product one level
// deeper (eight levels; the deepest is one chunk), and each element's
// product times the chunks' before it.
// CHECK-LABEL: fx.graph @complex_cumprod_of_a_dynamic_size
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xcomplex<f32>>)
// CHECK: %[[WITHIN:.+]] = loop.pointwise(%{{.+}}) : tensor<?x4xcomplex<f32>>
// CHECK: arith.divui %{{.+}}, %c32
// CHECK-COUNT-31: arith.cmpi ule
// CHECK: loop.yield
// CHECK: %[[CHUNKS:.+]] = arith.ceildivui %{{.+}}, %c32
// CHECK: %[[TOTALS:.+]] = loop.pointwise(%[[CHUNKS]]) : tensor<?x4xcomplex<f32>>
// CHECK: loop.load %[[WITHIN]]
// CHECK-COUNT-19: loop.pointwise
// CHECK: %[[RESULT:.+]] = loop.pointwise(%{{.+}}) : tensor<?x4xcomplex<f32>>
// CHECK-DAG: loop.load %[[WITHIN]]
// CHECK-DAG: arith.cmpi eq
// CHECK: fx.output %[[RESULT]]
fx.graph @complex_cumprod_of_a_dynamic_size(%x: tensor<?x4xcomplex<f32>>) -> tensor<?x4xcomplex<f32>> {
  %0 = fx.cumprod %x {dim = 0 : i64} : (tensor<?x4xcomplex<f32>>) -> tensor<?x4xcomplex<f32>>
  fx.output %0 : tensor<?x4xcomplex<f32>>
}
