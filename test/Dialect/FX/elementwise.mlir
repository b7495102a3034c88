// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests the unary ops whose result has the operand's type, in the compact
// syntax, with their attributes (defaults are elided when printing).
// CHECK-LABEL: fx.graph @same_type_unary
fx.graph @same_type_unary(%x: tensor<2x?xf32>, %i: tensor<4xsi32>, %p: tensor<4xi1>) {
  // CHECK: fx.neg %{{.*}} : tensor<2x?xf32>
  %0 = fx.neg %x : tensor<2x?xf32>
  // CHECK: fx.relu %{{.*}} : tensor<4xsi32>
  %1 = fx.relu %i : tensor<4xsi32>
  // CHECK: fx.sign %{{.*}} : tensor<4xi1>
  %2 = fx.sign %p : tensor<4xi1>
  // CHECK: fx.floor %{{.*}} : tensor<2x?xf32>
  %3 = fx.floor %x : tensor<2x?xf32>
  // CHECK: fx.ceil %{{.*}} : tensor<4xsi32>
  %4 = fx.ceil %i : tensor<4xsi32>
  // CHECK: fx.round %{{.*}} : tensor<2x?xf32>
  %5 = fx.round %x : tensor<2x?xf32>
  // CHECK: fx.trunc %{{.*}} : tensor<2x?xf32>
  %6 = fx.trunc %x : tensor<2x?xf32>
  // CHECK: fx.frac %{{.*}} : tensor<2x?xf32>
  %7 = fx.frac %x : tensor<2x?xf32>
  // CHECK: fx.bitwise_not %{{.*}} : tensor<4xsi32>
  %8 = fx.bitwise_not %i : tensor<4xsi32>
  // CHECK: fx.bitwise_not %{{.*}} : tensor<4xi1>
  %9 = fx.bitwise_not %p : tensor<4xi1>
  // CHECK: fx.gelu %{{.*}} : tensor<2x?xf32>
  %10 = fx.gelu %x {approximate = "none"} : tensor<2x?xf32>
  // CHECK: fx.gelu %{{.*}} {approximate = "tanh"} : tensor<2x?xf32>
  %11 = fx.gelu %x {approximate = "tanh"} : tensor<2x?xf32>
  // CHECK: fx.silu %{{.*}} : tensor<2x?xf32>
  %12 = fx.silu %x : tensor<2x?xf32>
  // CHECK: fx.hardsigmoid %{{.*}} : tensor<2x?xf32>
  %13 = fx.hardsigmoid %x : tensor<2x?xf32>
  // CHECK: fx.hardswish %{{.*}} : tensor<2x?xf32>
  %14 = fx.hardswish %x : tensor<2x?xf32>
  // CHECK: fx.mish %{{.*}} : tensor<2x?xf32>
  %15 = fx.mish %x : tensor<2x?xf32>
  // CHECK: fx.elu %{{.*}} {alpha = 2.000000e+00 : f64} : tensor<2x?xf32>
  %16 = fx.elu %x {alpha = 2.0} : tensor<2x?xf32>
  // CHECK: fx.leaky_relu %{{.*}} {negative_slope = 2.000000e-01 : f64} : tensor<2x?xf32>
  %17 = fx.leaky_relu %x {negative_slope = 0.2} : tensor<2x?xf32>
  // CHECK: fx.hardtanh %{{.*}} {max_val = 6.000000e+00 : f64, min_val = 0.000000e+00 : f64} : tensor<4xsi32>
  %18 = fx.hardtanh %i {min_val = 0.0, max_val = 6.0} : tensor<4xsi32>
  // CHECK: fx.softplus %{{.*}} {beta = 2.000000e+00 : f64} : tensor<2x?xf32>
  %19 = fx.softplus %x {beta = 2.0} : tensor<2x?xf32>
  // CHECK: fx.clone %{{.*}} : tensor<4xi1>
  %20 = fx.clone %p : tensor<4xi1>
  // CHECK: fx.alias %{{.*}} : tensor<2x?xf32>
  %21 = fx.alias %x : tensor<2x?xf32>
  // CHECK: fx.lift_fresh_copy %{{.*}} : tensor<4xsi32>
  %22 = fx.lift_fresh_copy %i : tensor<4xsi32>
  // CHECK: fx.fill_scalar %{{.*}} {value = 1.500000e+00 : f64} : tensor<4xsi32>
  %23 = fx.fill_scalar %i {value = 1.5} : tensor<4xsi32>
  fx.output
}

// -----

// Tests that unary math computes integral inputs in f32 (INT_TO_FLOAT) and
// keeps floating and complex dtypes.
// CHECK-LABEL: fx.graph @int_to_float
fx.graph @int_to_float(%i: tensor<4xsi64>, %h: tensor<4xf16>, %p: tensor<4xi1>,
                       %c: tensor<4xcomplex<f32>>, %d: tensor<f64>) {
  // CHECK: fx.exp %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %0 = fx.exp %i : (tensor<4xsi64>) -> tensor<4xf32>
  // CHECK: fx.exp2 %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %1 = fx.exp2 %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.expm1 %{{.*}} : (tensor<f64>) -> tensor<f64>
  %2 = fx.expm1 %d : (tensor<f64>) -> tensor<f64>
  // CHECK: fx.log %{{.*}} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %3 = fx.log %c : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  // CHECK: fx.log2 %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %4 = fx.log2 %i : (tensor<4xsi64>) -> tensor<4xf32>
  // CHECK: fx.log10 %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %5 = fx.log10 %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.log1p %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %6 = fx.log1p %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.sqrt %{{.*}} : (tensor<4xi1>) -> tensor<4xf32>
  %7 = fx.sqrt %p : (tensor<4xi1>) -> tensor<4xf32>
  // CHECK: fx.rsqrt %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %8 = fx.rsqrt %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.sin %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %9 = fx.sin %i : (tensor<4xsi64>) -> tensor<4xf32>
  // CHECK: fx.cos %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %10 = fx.cos %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.tan %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %11 = fx.tan %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.asin %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %12 = fx.asin %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.acos %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %13 = fx.acos %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.atan %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %14 = fx.atan %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.sinh %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %15 = fx.sinh %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.cosh %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %16 = fx.cosh %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.tanh %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %17 = fx.tanh %i : (tensor<4xsi64>) -> tensor<4xf32>
  // CHECK: fx.asinh %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %18 = fx.asinh %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.acosh %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %19 = fx.acosh %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.atanh %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %20 = fx.atanh %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.erf %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %21 = fx.erf %i : (tensor<4xsi64>) -> tensor<4xf32>
  // CHECK: fx.erfinv %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %22 = fx.erfinv %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.erfc %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %erfc = fx.erfc %i : (tensor<4xsi64>) -> tensor<4xf32>
  // CHECK: fx.sigmoid %{{.*}} : (tensor<4xi1>) -> tensor<4xf32>
  %23 = fx.sigmoid %p : (tensor<4xi1>) -> tensor<4xf32>
  // CHECK: fx.reciprocal %{{.*}} : (tensor<4xsi64>) -> tensor<4xf32>
  %24 = fx.reciprocal %i : (tensor<4xsi64>) -> tensor<4xf32>
  fx.output
}

// -----

// Tests abs (complex to real), the bool-valued tests, clamp's promotion with
// scalar and tensor bounds, and casts.
// CHECK-LABEL: fx.graph @other_unary
fx.graph @other_unary(%c: tensor<4xcomplex<f64>>, %b: tensor<4xsi8>, %x: tensor<3x4xf32>,
                      %i: tensor<3x4xsi32>, %lo: tensor<4xf32>, %hi: tensor<3x1xf64>) {
  // CHECK: fx.abs %{{.*}} : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  %0 = fx.abs %c : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  // CHECK: fx.abs %{{.*}} : (tensor<4xsi8>) -> tensor<4xsi8>
  %1 = fx.abs %b : (tensor<4xsi8>) -> tensor<4xsi8>
  // CHECK: fx.logical_not %{{.*}} : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %2 = fx.logical_not %x : (tensor<3x4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.isnan %{{.*}} : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %3 = fx.isnan %x : (tensor<3x4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.isinf %{{.*}} : (tensor<4xcomplex<f64>>) -> tensor<4xi1>
  %4 = fx.isinf %c : (tensor<4xcomplex<f64>>) -> tensor<4xi1>
  // A float bound makes an integral clamp f32; an int bound changes nothing.
  // CHECK: fx.clamp %{{.*}} {min = 5.000000e-01 : f64} : (tensor<3x4xsi32>) -> tensor<3x4xf32>
  %5 = fx.clamp %i {min = 0.5} : (tensor<3x4xsi32>) -> tensor<3x4xf32>
  // CHECK: fx.clamp %{{.*}} {max = 6 : i64, min = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %6 = fx.clamp %x {min = 0, max = 6} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: fx.clamp_tensor %{{.*}} min(%{{.*}}) max(%{{.*}}) : (tensor<3x4xf32>, tensor<4xf32>, tensor<3x1xf64>) -> tensor<3x4xf64>
  %7 = fx.clamp_tensor %x min(%lo) max(%hi) : (tensor<3x4xf32>, tensor<4xf32>, tensor<3x1xf64>) -> tensor<3x4xf64>
  // CHECK: fx.clamp_tensor %{{.*}} max(%{{.*}}) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %8 = fx.clamp_tensor %x max(%lo) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: fx.to_copy %{{.*}} {dtype = bf16} : (tensor<3x4xf32>) -> tensor<3x4xbf16>
  %9 = fx.to_copy %x {dtype = bf16} : (tensor<3x4xf32>) -> tensor<3x4xbf16>
  // CHECK: fx.to_copy %{{.*}} : (tensor<3x4xsi32>) -> tensor<3x4xsi32>
  %10 = fx.to_copy %i : (tensor<3x4xsi32>) -> tensor<3x4xsi32>
  fx.output
}

// -----

// Tests the binary ops on tensors: broadcasting and their dtype rules.
// CHECK-LABEL: fx.graph @binary
fx.graph @binary(%x: tensor<3x4xf32>, %y: tensor<4xf32>, %i: tensor<3x4xsi32>,
                 %j: tensor<4xsi64>, %p: tensor<3x4xi1>, %u: tensor<4xui8>) {
  // CHECK: fx.div %{{.*}} : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xf32>
  %0 = fx.div %i, %j : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xf32>
  // CHECK: fx.div_mode %{{.*}} {rounding_mode = "floor"} : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xsi64>
  %1 = fx.div_mode %i, %j {rounding_mode = "floor"} : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xsi64>
  // bool ** bool is si64.
  // CHECK: fx.pow %{{.*}} : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xsi64>
  %2 = fx.pow %p, %p : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xsi64>
  // CHECK: fx.remainder %{{.*}} : (tensor<3x4xsi32>, tensor<4xf32>) -> tensor<3x4xf32>
  %3 = fx.remainder %i, %y : (tensor<3x4xsi32>, tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: fx.fmod %{{.*}} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %4 = fx.fmod %x, %y : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: fx.maximum %{{.*}} : (tensor<3x4xsi32>, tensor<4xui8>) -> tensor<3x4xsi32>
  %5 = fx.maximum %i, %u : (tensor<3x4xsi32>, tensor<4xui8>) -> tensor<3x4xsi32>
  // CHECK: fx.minimum %{{.*}} : (tensor<3x4xi1>, tensor<4xui8>) -> tensor<3x4xui8>
  %6 = fx.minimum %p, %u : (tensor<3x4xi1>, tensor<4xui8>) -> tensor<3x4xui8>
  // CHECK: fx.atan2 %{{.*}} : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xf32>
  %7 = fx.atan2 %i, %j : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xf32>
  // CHECK: fx.bitwise_and %{{.*}} : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %8 = fx.bitwise_and %p, %p : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  // CHECK: fx.bitwise_or %{{.*}} : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xsi64>
  %9 = fx.bitwise_or %i, %j : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xsi64>
  // CHECK: fx.bitwise_xor %{{.*}} : (tensor<4xui8>, tensor<4xsi64>) -> tensor<4xsi64>
  %10 = fx.bitwise_xor %u, %j : (tensor<4xui8>, tensor<4xsi64>) -> tensor<4xsi64>
  // CHECK: fx.logical_and %{{.*}} : (tensor<3x4xf32>, tensor<3x4xsi32>) -> tensor<3x4xi1>
  %11 = fx.logical_and %x, %i : (tensor<3x4xf32>, tensor<3x4xsi32>) -> tensor<3x4xi1>
  // CHECK: fx.logical_or %{{.*}} : (tensor<3x4xi1>, tensor<4xf32>) -> tensor<3x4xi1>
  %12 = fx.logical_or %p, %y : (tensor<3x4xi1>, tensor<4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.logical_xor %{{.*}} : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  %13 = fx.logical_xor %p, %p : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>
  // CHECK: fx.eq %{{.*}} : (tensor<3x4xf32>, tensor<4xsi64>) -> tensor<3x4xi1>
  %14 = fx.eq %x, %j : (tensor<3x4xf32>, tensor<4xsi64>) -> tensor<3x4xi1>
  // CHECK: fx.ne %{{.*}} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>
  %15 = fx.ne %x, %y : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.lt %{{.*}} : (tensor<3x4xsi32>, tensor<4xf32>) -> tensor<3x4xi1>
  %16 = fx.lt %i, %y : (tensor<3x4xsi32>, tensor<4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.le %{{.*}} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>
  %17 = fx.le %x, %y : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.gt %{{.*}} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>
  %18 = fx.gt %x, %y : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>
  // CHECK: fx.ge %{{.*}} : (tensor<4xui8>, tensor<4xsi64>) -> tensor<4xi1>
  %19 = fx.ge %u, %j : (tensor<4xui8>, tensor<4xsi64>) -> tensor<4xi1>
  fx.output
}

// -----

// Tests the Scalar overloads: a scalar is a wrapped number, so a float scalar
// makes an integral tensor f32, an int scalar never changes a floating
// tensor, and a bool tensor with an int scalar becomes si64.
// CHECK-LABEL: fx.graph @binary_scalar
fx.graph @binary_scalar(%x: tensor<4xf16>, %i: tensor<4xsi32>, %p: tensor<4xi1>) {
  // CHECK: fx.add_scalar %{{.*}} {other = 2.500000e+00 : f64} : (tensor<4xsi32>) -> tensor<4xf32>
  %0 = fx.add_scalar %i {other = 2.5} : (tensor<4xsi32>) -> tensor<4xf32>
  // CHECK: fx.add_scalar %{{.*}} {alpha = 2 : i64, other = 3 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  %1 = fx.add_scalar %x {other = 3, alpha = 2} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.add_scalar %{{.*}} {other = 1 : i64} : (tensor<4xi1>) -> tensor<4xsi64>
  %2 = fx.add_scalar %p {other = 1} : (tensor<4xi1>) -> tensor<4xsi64>
  // CHECK: fx.add_scalar %{{.*}} {other = true} : (tensor<4xsi32>) -> tensor<4xsi32>
  %3 = fx.add_scalar %i {other = true} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.sub_scalar %{{.*}} {other = 1 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %4 = fx.sub_scalar %i {other = 1} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.mul_scalar %{{.*}} {other = 1.250000e-01 : f64} : (tensor<4xf16>) -> tensor<4xf16>
  %5 = fx.mul_scalar %x {other = 0.125} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.div_scalar %{{.*}} {other = 2 : i64} : (tensor<4xsi32>) -> tensor<4xf32>
  %6 = fx.div_scalar %i {other = 2} : (tensor<4xsi32>) -> tensor<4xf32>
  // CHECK: fx.div_scalar_mode %{{.*}} {other = 2 : i64, rounding_mode = "trunc"} : (tensor<4xsi32>) -> tensor<4xsi32>
  %7 = fx.div_scalar_mode %i {other = 2, rounding_mode = "trunc"} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.pow_tensor_scalar %{{.*}} {exponent = 2 : i64} : (tensor<4xi1>) -> tensor<4xsi64>
  %8 = fx.pow_tensor_scalar %p {exponent = 2} : (tensor<4xi1>) -> tensor<4xsi64>
  // CHECK: fx.pow_tensor_scalar %{{.*}} {exponent = 5.000000e-01 : f64} : (tensor<4xf16>) -> tensor<4xf16>
  %9 = fx.pow_tensor_scalar %x {exponent = 0.5} : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: fx.pow_scalar %{{.*}} {self = 2.000000e+00 : f64} : (tensor<4xsi32>) -> tensor<4xf32>
  %10 = fx.pow_scalar %i {self = 2.0} : (tensor<4xsi32>) -> tensor<4xf32>
  // CHECK: fx.remainder_scalar %{{.*}} {other = 3 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %11 = fx.remainder_scalar %i {other = 3} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.fmod_scalar %{{.*}} {other = 7 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %12 = fx.fmod_scalar %i {other = 7} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.bitwise_and_scalar %{{.*}} {other = 255 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %13 = fx.bitwise_and_scalar %i {other = 255} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.bitwise_or_scalar %{{.*}} {other = true} : (tensor<4xi1>) -> tensor<4xi1>
  %14 = fx.bitwise_or_scalar %p {other = true} : (tensor<4xi1>) -> tensor<4xi1>
  // CHECK: fx.bitwise_xor_scalar %{{.*}} {other = 1 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %15 = fx.bitwise_xor_scalar %i {other = 1} : (tensor<4xsi32>) -> tensor<4xsi32>
  // CHECK: fx.eq_scalar %{{.*}} {other = 0 : i64} : (tensor<4xsi32>) -> tensor<4xi1>
  %16 = fx.eq_scalar %i {other = 0} : (tensor<4xsi32>) -> tensor<4xi1>
  // CHECK: fx.ne_scalar %{{.*}} {other = 0.000000e+00 : f64} : (tensor<4xf16>) -> tensor<4xi1>
  %17 = fx.ne_scalar %x {other = 0.0} : (tensor<4xf16>) -> tensor<4xi1>
  // CHECK: fx.lt_scalar %{{.*}} {other = 1.500000e+00 : f64} : (tensor<4xsi32>) -> tensor<4xi1>
  %18 = fx.lt_scalar %i {other = 1.5} : (tensor<4xsi32>) -> tensor<4xi1>
  // CHECK: fx.le_scalar %{{.*}} {other = 0 : i64} : (tensor<4xf16>) -> tensor<4xi1>
  %19 = fx.le_scalar %x {other = 0} : (tensor<4xf16>) -> tensor<4xi1>
  // CHECK: fx.gt_scalar %{{.*}} {other = 0 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  %20 = fx.gt_scalar %p {other = 0} : (tensor<4xi1>) -> tensor<4xi1>
  // CHECK: fx.ge_scalar %{{.*}} {other = -1 : i64} : (tensor<4xsi32>) -> tensor<4xi1>
  %21 = fx.ge_scalar %i {other = -1} : (tensor<4xsi32>) -> tensor<4xi1>
  fx.output
}

// -----

// Tests where (the condition takes no part in promotion), addcmul, addcdiv
// and lerp.
// CHECK-LABEL: fx.graph @ternary
fx.graph @ternary(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %s: tensor<f64>,
                  %i: tensor<3xsi64>, %h: tensor<2x3xf16>) {
  // CHECK: fx.where %{{.*}} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f64>) -> tensor<2x3xf32>
  %0 = fx.where %c, %x, %s : (tensor<2x1xi1>, tensor<3xf32>, tensor<f64>) -> tensor<2x3xf32>
  // CHECK: fx.where %{{.*}} : (tensor<2x1xi1>, tensor<3xsi64>, tensor<3xsi64>) -> tensor<2x3xsi64>
  %1 = fx.where %c, %i, %i : (tensor<2x1xi1>, tensor<3xsi64>, tensor<3xsi64>) -> tensor<2x3xsi64>
  // CHECK: fx.addcmul %{{.*}} {value = 5.000000e-01 : f64} : (tensor<2x3xf16>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = fx.addcmul %h, %x, %x {value = 0.5} : (tensor<2x3xf16>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: fx.addcmul %{{.*}} {value = 2 : i64} : (tensor<3xsi64>, tensor<3xsi64>, tensor<3xsi64>) -> tensor<3xsi64>
  %3 = fx.addcmul %i, %i, %i {value = 2} : (tensor<3xsi64>, tensor<3xsi64>, tensor<3xsi64>) -> tensor<3xsi64>
  // CHECK: fx.addcdiv %{{.*}} : (tensor<2x3xf16>, tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %4 = fx.addcdiv %h, %h, %h : (tensor<2x3xf16>, tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  // CHECK: fx.lerp_scalar %{{.*}} {weight = 2.500000e-01 : f64} : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %5 = fx.lerp_scalar %h, %h {weight = 0.25} : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  // CHECK: fx.lerp %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = fx.lerp %x, %0, %x : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  fx.output
}

// -----

// Tests the pointwise backward ops of training graphs.
// CHECK-LABEL: fx.graph @backward
fx.graph @backward(%g: tensor<8x?xf32>, %x: tensor<8x?xf32>, %m: tensor<8x?xi1>,
                   %gh: tensor<8x1xf16>) {
  // CHECK: fx.threshold_backward %{{.*}} {threshold = 0 : i64} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  %0 = fx.threshold_backward %g, %x {threshold = 0} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.sigmoid_backward %{{.*}} : (tensor<8x1xf16>, tensor<8x?xf32>) -> tensor<8x?xf32>
  %1 = fx.sigmoid_backward %gh, %x : (tensor<8x1xf16>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.tanh_backward %{{.*}} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  %2 = fx.tanh_backward %g, %x : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.gelu_backward %{{.*}} {approximate = "tanh"} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  %3 = fx.gelu_backward %g, %x {approximate = "tanh"} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.silu_backward %{{.*}} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  %4 = fx.silu_backward %g, %x : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.hardtanh_backward %{{.*}} {max_val = 6.000000e+00 : f64, min_val = 0.000000e+00 : f64}
  %5 = fx.hardtanh_backward %g, %x {min_val = 0.0, max_val = 6.0} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.leaky_relu_backward %{{.*}} {negative_slope = 1.000000e-02 : f64, self_is_result = false}
  %6 = fx.leaky_relu_backward %g, %x {negative_slope = 0.01, self_is_result = false} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.elu_backward %{{.*}} {alpha = 1.000000e+00 : f64, input_scale = 1.000000e+00 : f64, is_result = true, scale = 1.000000e+00 : f64}
  %7 = fx.elu_backward %g, %x {alpha = 1.0, scale = 1.0, input_scale = 1.0, is_result = true} : (tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<8x?xf32>
  // CHECK: fx.native_dropout_backward %{{.*}} {scale = 2.000000e+00 : f64} : (tensor<8x?xf32>, tensor<8x?xi1>) -> tensor<8x?xf32>
  %8 = fx.native_dropout_backward %g, %m {scale = 2.0} : (tensor<8x?xf32>, tensor<8x?xi1>) -> tensor<8x?xf32>
  fx.output
}

// -----

// Shifts promote as the other binary integer ops.
// CHECK-LABEL: fx.graph @shifts
fx.graph @shifts(%i: tensor<3x4xsi32>, %j: tensor<4xsi64>, %u: tensor<4xui8>) -> (tensor<3x4xsi64>, tensor<4xui8>, tensor<4xui8>, tensor<3x4xsi32>) {
  // CHECK: fx.bitwise_left_shift %{{.*}} : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xsi64>
  %0 = fx.bitwise_left_shift %i, %j : (tensor<3x4xsi32>, tensor<4xsi64>) -> tensor<3x4xsi64>
  // CHECK: fx.bitwise_right_shift %{{.*}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = fx.bitwise_right_shift %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  // CHECK: fx.bitwise_left_shift_scalar %{{.*}} {other = 4 : i64} : (tensor<4xui8>) -> tensor<4xui8>
  %2 = fx.bitwise_left_shift_scalar %u {other = 4} : (tensor<4xui8>) -> tensor<4xui8>
  // CHECK: fx.bitwise_right_shift_scalar %{{.*}} {other = 2 : i64} : (tensor<3x4xsi32>) -> tensor<3x4xsi32>
  %3 = fx.bitwise_right_shift_scalar %i {other = 2} : (tensor<3x4xsi32>) -> tensor<3x4xsi32>
  fx.output %0, %1, %2, %3 : tensor<3x4xsi64>, tensor<4xui8>, tensor<4xui8>, tensor<3x4xsi32>
}

// -----

// Tests the complex ops: conjugates, numbers from parts or polar
// coordinates, and arguments.
// CHECK-LABEL: fx.graph @complex_numbers
fx.graph @complex_numbers(%z: tensor<4xcomplex<f64>>, %a: tensor<4xf32>, %b: tensor<1xf32>, %x: tensor<4xbf16>) {
  // CHECK: fx.conj %{{.*}} : tensor<4xcomplex<f64>>
  %0 = fx.conj %z : tensor<4xcomplex<f64>>
  // CHECK: fx.complex %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>
  %1 = fx.complex %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>
  // CHECK: fx.polar %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>
  %2 = fx.polar %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>
  // CHECK: fx.angle %{{.*}} : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  %3 = fx.angle %z : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
  // CHECK: fx.angle %{{.*}} : (tensor<4xbf16>) -> tensor<4xbf16>
  %4 = fx.angle %x : (tensor<4xbf16>) -> tensor<4xbf16>
  fx.output
}
