// RUN: kiln-opt %s -split-input-file --kiln-fx-to-loop | FileCheck %s

// Tests the arithmetic of the elementwise ops that other files leave out:
// each body computes what PyTorch's op computes, operand by operand.

// CHECK-LABEL: fx.graph @cos(
// CHECK: %[[X:.+]] = loop.load %arg0[%{{.+}}] : tensor<8xf32>
// CHECK-NEXT: %[[Y:.+]] = math.cos %[[X]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @cos(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.cos %x : (tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @erf(
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = math.erf %[[X]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @erf(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.erf %x : (tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @floor(
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = math.floor %[[X]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @floor(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.floor %x : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @trunc(
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = math.trunc %[[X]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @trunc(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.trunc %x : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @sinh(
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = math.sinh %[[X]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @sinh(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.sinh %x : (tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @reciprocal(
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = arith.divf %[[ONE]], %[[X]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @reciprocal(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.reciprocal %x : (tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @mish(
// x * tanh(log1p(exp(x)))
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[E:.+]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[S:.+]] = math.log1p %[[E]] : f32
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[X]], %[[T]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @mish(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.mish %x : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @softplus(
// x where beta * x > threshold, else log1p(exp(beta * x)) / beta
// CHECK-DAG: %[[THRESHOLD:.+]] = arith.constant 1.000000e+01 : f32
// CHECK-DAG: %[[BETA:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[BX:.+]] = arith.mulf %[[X]], %[[BETA]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[BX]] : f32
// CHECK-NEXT: %[[L:.+]] = math.log1p %[[E]] : f32
// CHECK-NEXT: %[[S:.+]] = arith.divf %[[L]], %[[BETA]] : f32
// CHECK-NEXT: %[[LINEAR:.+]] = arith.cmpf ogt, %[[BX]], %[[THRESHOLD]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[LINEAR]], %[[X]], %[[S]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @softplus(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.softplus %x {beta = 2.0 : f64, threshold = 10.0 : f64} : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @hardsigmoid(
// clamp(x + 3, 0, 6) / 6
// CHECK-DAG: %[[SIX:.+]] = arith.constant 6.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[THREE:.+]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[X]], %[[THREE]] : f32
// CHECK-NEXT: %[[LO:.+]] = arith.maximumf %[[A]], %[[ZERO]] : f32
// CHECK-NEXT: %[[HI:.+]] = arith.minimumf %[[LO]], %[[SIX]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.divf %[[HI]], %[[SIX]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @hardsigmoid(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.hardsigmoid %x : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @hardtanh(
// CHECK-DAG: %[[MAX:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[MIN:.+]] = arith.constant -2.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[LO:.+]] = arith.maximumf %[[X]], %[[MIN]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.minimumf %[[LO]], %[[MAX]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @hardtanh(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.hardtanh %x {min_val = -2.0 : f64, max_val = 3.0 : f64} : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @hardtanh_backward(
// The gradient passes strictly inside (min, max), else 0.
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[MAX:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[MIN:.+]] = arith.constant -2.000000e+00 : f32
// CHECK: %[[G:.+]] = loop.load %arg0
// CHECK-NEXT: %[[X:.+]] = loop.load %arg1
// CHECK-NEXT: %[[BELOW:.+]] = arith.cmpf ole, %[[X]], %[[MIN]] : f32
// CHECK-NEXT: %[[ABOVE:.+]] = arith.cmpf oge, %[[X]], %[[MAX]] : f32
// CHECK-NEXT: %[[OUT:.+]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[OUT]], %[[ZERO]], %[[G]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @hardtanh_backward(%g: tensor<8xf32>, %x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.hardtanh_backward %g, %x {min_val = -2.0 : f64, max_val = 3.0 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @leaky_relu(
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SLOPE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[X]], %[[SLOPE]] : f32
// CHECK-NEXT: %[[POS:.+]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[POS]], %[[X]], %[[S]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @leaky_relu(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.leaky_relu %x {negative_slope = 0.25 : f64} : tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @leaky_relu_backward(
// CHECK-DAG: %[[SLOPE:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[G:.+]] = loop.load %arg0
// CHECK-NEXT: %[[X:.+]] = loop.load %arg1
// CHECK-NEXT: %[[POS:.+]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[G]], %[[SLOPE]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[POS]], %[[G]], %[[S]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @leaky_relu_backward(%g: tensor<8xf32>, %x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.leaky_relu_backward %g, %x {negative_slope = 0.25 : f64, self_is_result = false} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @div_scalar(
// CHECK: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[Y:.+]] = arith.divf %[[X]], %[[FOUR]] : f32
// CHECK-NEXT: loop.yield %[[Y]] : f32
fx.graph @div_scalar(%x: tensor<8xf32>) -> (tensor<8xf32>) {
  %r0 = fx.div_scalar %x {other = 4.0 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  fx.output %r0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: fx.graph @logical_not(
// not (x != 0): NaN is true, so its negation is false, as in eager.
// CHECK-DAG: %[[TRUE:.+]] = arith.constant true
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: loop.pointwise : tensor<8xi1>
// CHECK: %[[X:.+]] = loop.load %arg0
// CHECK-NEXT: %[[NZ:.+]] = arith.cmpf une, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.xori %[[NZ]], %[[TRUE]] : i1
// CHECK-NEXT: loop.yield %[[Y]] : i1
fx.graph @logical_not(%x: tensor<8xf32>) -> (tensor<8xi1>) {
  %r0 = fx.logical_not %x : (tensor<8xf32>) -> tensor<8xi1>
  fx.output %r0 : tensor<8xi1>
}
