// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// Tests scalar overloads: the Scalar attribute becomes a constant of the
// compute dtype, alpha scales it (3 * 2, folded).
// CHECK-LABEL: fx.graph @scalars
// CHECK-DAG: %[[SIX:.+]] = arith.constant 6 : i64
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf %{{.+}}, %[[HALF]] : f32
// CHECK: arith.addi %{{.+}}, %[[SIX]] : i64
fx.graph @scalars(%x: tensor<4xf32>, %i: tensor<4xsi64>) -> (tensor<4xf32>, tensor<4xsi64>) {
  %0 = fx.mul_scalar %x {other = 5.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.add_scalar %i {other = 3 : i64, alpha = 2 : i64} : (tensor<4xsi64>) -> tensor<4xsi64>
  fx.output %0, %1 : tensor<4xf32>, tensor<4xsi64>
}

// -----

// Tests true division of integers: both sides become the default float.
// CHECK-LABEL: fx.graph @int_division
// CHECK: arith.sitofp %{{.+}} : i32 to f32
// CHECK: arith.sitofp %{{.+}} : i32 to f32
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
fx.graph @int_division(%a: tensor<4xsi32>, %b: tensor<4xsi32>) -> tensor<4xf32> {
  %0 = fx.div %a, %b : (tensor<4xsi32>, tensor<4xsi32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

// Tests comparisons: operands compare in their promoted dtype (ordered for
// floats, signed or unsigned for integers), the result is a bool, and where
// selects with it.
// CHECK-LABEL: fx.graph @compare_and_select
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %{{.+}}, %{{.+}} : f32
// CHECK: loop.yield %[[GT]] : i1
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : i8
// CHECK: %[[C:.+]] = loop.load %{{.+}} : tensor<4x8xi1>
// CHECK: arith.select %[[C]], %{{.+}}, %{{.+}} : f32
fx.graph @compare_and_select(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %u: tensor<4xui8>) -> (tensor<4x8xf32>, tensor<4xi1>) {
  %0 = fx.gt %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %1 = fx.lt_scalar %u {other = 7 : i64} : (tensor<4xui8>) -> tensor<4xi1>
  %2 = fx.where %0, %x, %y : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  fx.output %2, %1 : tensor<4x8xf32>, tensor<4xi1>
}

// -----

// Tests math in a floating dtype, bf16 computed in f32, and sigmoid's form.
// CHECK-LABEL: fx.graph @math
// CHECK: math.exp %{{.+}} : f32
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
fx.graph @math(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %0 = fx.exp %x : (tensor<4xbf16>) -> tensor<4xbf16>
  %1 = fx.sigmoid %x : (tensor<4xbf16>) -> tensor<4xbf16>
  fx.output %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// -----

// Tests casts: the element converts straight from the source dtype, and a
// narrowing rounding is marked as the program's own (inlining keeps it).
// CHECK-LABEL: fx.graph @casts
// CHECK: arith.truncf %{{.+}} {loop.explicit_rounding} : f32 to bf16
// CHECK: arith.fptosi %{{.+}} : f32 to i32
fx.graph @casts(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xsi32>) {
  %0 = fx.to_copy %x {dtype = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = fx.to_copy %x {dtype = si32} : (tensor<4xf32>) -> tensor<4xsi32>
  fx.output %0, %1 : tensor<4xbf16>, tensor<4xsi32>
}

// -----

// Tests maximum/minimum: NaN-propagating for floats, unsigned for uint8.
// CHECK-LABEL: fx.graph @extrema
// CHECK: arith.maximumf
// CHECK: arith.minui
fx.graph @extrema(%x: tensor<4xf32>, %y: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui8>) {
  %0 = fx.maximum %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fx.minimum %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  fx.output %0, %1 : tensor<4xf32>, tensor<4xui8>
}

// -----

// silu is x / (1 + exp(-x)); powers PyTorch special-cases are products and
// roots, others powf; integer powers square and multiply.
// CHECK-LABEL: fx.graph @silu_and_powers
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK: arith.mulf %[[X]], %[[X]] : f32
// CHECK: math.powf %{{.+}}, %{{.+}} : f32
// CHECK: %[[I:.+]] = loop.load %arg1
// CHECK: %[[SQ:.+]] = arith.muli %[[I]], %[[I]] : i64
// CHECK: arith.muli %[[I]], %[[SQ]] : i64
fx.graph @silu_and_powers(%x: tensor<4xf32>, %i: tensor<4xsi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xsi64>) {
  %0 = fx.silu %x : tensor<4xf32>
  %1 = fx.pow_tensor_scalar %x {exponent = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = fx.pow_tensor_scalar %x {exponent = 1.7 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = fx.pow_tensor_scalar %i {exponent = 3 : i64} : (tensor<4xsi64>) -> tensor<4xsi64>
  fx.output %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xsi64>
}

// -----

// Bitwise operations on integers and bools; not flips every bit.
// CHECK-LABEL: fx.graph @bitwise
// CHECK-DAG: %[[ONES:.+]] = arith.constant true
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.xori %{{.+}}, %[[ONES]] : i1
fx.graph @bitwise(%x: tensor<4xsi32>, %y: tensor<4xsi32>, %p: tensor<4xi1>) -> (tensor<4xsi32>, tensor<4xsi32>, tensor<4xi1>) {
  %0 = fx.bitwise_and %x, %y : (tensor<4xsi32>, tensor<4xsi32>) -> tensor<4xsi32>
  %1 = fx.bitwise_or_scalar %x {other = 6 : i64} : (tensor<4xsi32>) -> tensor<4xsi32>
  %2 = fx.bitwise_not %p : tensor<4xi1>
  fx.output %0, %1, %2 : tensor<4xsi32>, tensor<4xsi32>, tensor<4xi1>
}


// -----

// Activations: elu's negative side is expm1, hardswish PyTorch's
// min(max(x + 3, 0), 6) / 6 times x, clamp a max then a min (NaN
// propagates).
// CHECK-LABEL: fx.graph @activations
// CHECK: math.expm1
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
fx.graph @activations(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fx.elu %x {alpha = 1.0 : f64, scale = 1.0 : f64, input_scale = 1.0 : f64} : tensor<4xf32>
  %1 = fx.hardswish %x : tensor<4xf32>
  %2 = fx.clamp %x {min = -5.000000e-01 : f64, max = 5.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  fx.output %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Creation ops are nodes that read nothing; arange accumulates in f64 (i64
// for integers) and converts; logical ops compare with zero first.
// CHECK-LABEL: fx.graph @creation
// CHECK: loop.pointwise : tensor<2x4xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.yield %{{.+}} : f32
// CHECK: loop.pointwise : tensor<4xf32> {
// CHECK: arith.index_cast %{{.+}} : index to i64
// CHECK: arith.sitofp %{{.+}} : i64 to f64
// CHECK: arith.mulf %{{.+}} : f64
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: arith.cmpf une
// CHECK: arith.andi
fx.graph @creation(%x: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xi1>) {
  %0 = fx.full {fill_value = 3.0 : f64} : () -> tensor<2x4xf32>
  %1 = fx.arange {start = 5.000000e-01 : f64, end = 2.500000e+00 : f64, step = 5.000000e-01 : f64} : () -> tensor<4xf32>
  %2 = fx.logical_and %x, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  fx.output %0, %1, %2 : tensor<2x4xf32>, tensor<4xf32>, tensor<4xi1>
}

// -----

// CHECK-LABEL: fx.graph @atan2
// CHECK: math.atan2 %{{.+}}, %{{.+}} : f32
fx.graph @atan2(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.atan2 %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}

// -----

// Python's modulus is fmod moved by the divisor where the signs differ;
// integer divisors of 0 and -1 become 1 so that no division traps (a
// constant divisor folds).
// CHECK-LABEL: fx.graph @remainder
// CHECK: loop.pointwise : tensor<8xf32>
// CHECK: %[[MOD:.+]] = arith.remf %[[A:.+]], %[[B:.+]] : f32
// CHECK: %[[MOVED:.+]] = arith.addf %[[MOD]], %[[B]] : f32
// CHECK: arith.select %{{.+}}, %[[MOVED]], %[[MOD]] : f32
// CHECK: loop.pointwise : tensor<8xsi32>
// CHECK: %[[ZERO:.+]] = arith.cmpi eq, %[[D:.+]], %c0_i32
// CHECK: %[[MINUS:.+]] = arith.cmpi eq, %[[D]], %c-1_i32
// CHECK: %[[TRAPS:.+]] = arith.ori %[[ZERO]], %[[MINUS]] : i1
// CHECK: %[[SAFE:.+]] = arith.select %[[TRAPS]], %c1_i32, %[[D]] : i32
// CHECK: arith.remsi %{{.+}}, %[[SAFE]] : i32
// CHECK: loop.pointwise : tensor<8xsi32>
// CHECK: arith.remsi %{{.+}}, %c3_i32 : i32
fx.graph @remainder(%a: tensor<8xf32>, %b: tensor<8xf32>, %i: tensor<8xsi32>, %j: tensor<8xsi32>) -> (tensor<8xf32>, tensor<8xsi32>, tensor<8xsi32>) {
  %0 = fx.remainder %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = fx.fmod %i, %j : (tensor<8xsi32>, tensor<8xsi32>) -> tensor<8xsi32>
  %2 = fx.fmod_scalar %i {other = 3 : i64} : (tensor<8xsi32>) -> tensor<8xsi32>
  fx.output %0, %1, %2 : tensor<8xf32>, tensor<8xsi32>, tensor<8xsi32>
}

// -----

// Rounded divisions: trunc of the quotient for floats; integers divide with
// a trap-free divisor and negate for -1.
// CHECK-LABEL: fx.graph @div_modes
// CHECK: loop.pointwise : tensor<8xf32>
// CHECK: %[[Q:.+]] = arith.divf
// CHECK: math.trunc %[[Q]] : f32
// CHECK: loop.pointwise : tensor<8xsi64>
// CHECK: %[[FLOOR:.+]] = arith.floordivsi %{{.+}}, %{{.+}} : i64
// CHECK: %[[NEG:.+]] = arith.subi %c0_i64, %{{.+}} : i64
// CHECK: arith.select %{{.+}}, %[[NEG]], %[[FLOOR]] : i64
// CHECK: loop.pointwise : tensor<8xf32>
// CHECK: arith.remf
// CHECK: math.floor
// CHECK: math.copysign
fx.graph @div_modes(%a: tensor<8xf32>, %b: tensor<8xf32>, %i: tensor<8xsi64>, %j: tensor<8xsi64>) -> (tensor<8xf32>, tensor<8xsi64>, tensor<8xf32>) {
  %0 = fx.div_mode %a, %b {rounding_mode = "trunc"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = fx.div_mode %i, %j {rounding_mode = "floor"} : (tensor<8xsi64>, tensor<8xsi64>) -> tensor<8xsi64>
  %2 = fx.div_scalar_mode %a {other = 2.5 : f64, rounding_mode = "floor"} : (tensor<8xf32>) -> tensor<8xf32>
  fx.output %0, %1, %2 : tensor<8xf32>, tensor<8xsi64>, tensor<8xf32>
}

// -----

// The gradients of activations in backward graphs: relu's selects zero where
// self <= threshold; silu's is grad * s * (1 + x * (1 - s)).
// CHECK-LABEL: fx.graph @activation_gradients
// CHECK: loop.pointwise : tensor<8x16xf32>
// CHECK: %[[LE:.+]] = arith.cmpf ole, %{{.+}}, %cst
// CHECK: arith.select %[[LE]], %{{.+}}, %{{.+}} : f32
// CHECK: loop.pointwise : tensor<8x16xf32>
// CHECK: math.exp
// CHECK: %[[S:.+]] = arith.divf
// CHECK: arith.subf %{{.+}}, %[[S]]
// CHECK: loop.pointwise : tensor<8x16xbf16>
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
fx.graph @activation_gradients(%g: tensor<8x16xf32>, %x: tensor<8x16xf32>, %gh: tensor<8x16xbf16>, %mask: tensor<8x16xi1>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xbf16>) {
  %0 = fx.threshold_backward %g, %x {threshold = 0.0 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = fx.silu_backward %g, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = fx.native_dropout_backward %gh, %mask {scale = 1.25 : f64} : (tensor<8x16xbf16>, tensor<8x16xi1>) -> tensor<8x16xbf16>
  fx.output %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xbf16>
}
