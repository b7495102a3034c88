// RUN: kiln-opt %s -split-input-file --kiln-approximate-math | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-approximate-math=fast-exp=true | FileCheck %s --check-prefix=FAST
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-llvm-cpu | FileCheck %s --check-prefix=LLVM
// RUN: kiln-opt %s -split-input-file --kiln-approximate-math=libm-erf=true | FileCheck %s --check-prefix=LIBM

// Tests that erf becomes a rational polynomial wherever it is, here a node
// body, and that the CPU pipeline leaves no call for it.
// CHECK-LABEL: fx.graph @normal_cdf
// CHECK-NOT: math.erf
// CHECK: arith.cmpf olt
// CHECK: arith.divf
// CHECK-NOT: math.erf
// CHECK: loop.yield
// LLVM-NOT: erf
// LLVM: llvm.func @kiln_normal_cdf_run
// LLVM-NOT: erf
fx.graph @normal_cdf(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.erf %v : f32
    loop.yield %e : f32
  }
  fx.output %0 : tensor<64xf32>
}

// -----

// By default f32 exp becomes a polynomial; with fast-exp (GPUs), exp2 of a
// product. f64 stays.
// FAST-LABEL: fx.graph @exps
// FAST: %[[P:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// FAST: math.exp2 %[[P]] : f32
// FAST: math.exp %{{.+}} : f64
// CHECK-LABEL: fx.graph @exps
// CHECK-NOT: math.exp %{{.+}} : f32
// CHECK: math.exp %{{.+}} : f64
fx.graph @exps(%x: tensor<64xf32>, %y: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<64xf64>
    %e = math.exp %v : f64
    loop.yield %e : f64
  }
  fx.output %0, %1 : tensor<64xf32>, tensor<64xf64>
}

// -----

// With fast-exp, exp of a product by a constant (on either side) takes
// log2(e) into the constant: one multiply. (Vector bodies, whose constants
// are splats or broadcasts, are checked in Pipelines/gelu-ptx.mlir.) -0.5 * log2(e) = -0.72134752.
// FAST-LABEL: fx.graph @exp_of_scaled
// FAST: %[[C:.+]] = arith.constant -0.72134751 : f32
// FAST: %[[A:.+]] = loop.load
// FAST: %[[P:.+]] = arith.mulf %[[A]], %[[C]] : f32
// FAST: math.exp2 %[[P]] : f32
// FAST: %[[Q:.+]] = arith.mulf %[[A]], %[[C]] : f32
// FAST: math.exp2 %[[Q]] : f32
fx.graph @exp_of_scaled(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %a = loop.load %x[%i] : tensor<64xf32>
    %c = arith.constant -0.5 : f32
    %m0 = arith.mulf %a, %c : f32
    %e0 = math.exp %m0 : f32
    %m1 = arith.mulf %c, %a : f32
    %e1 = math.exp %m1 : f32
    %t = arith.addf %e0, %e1 : f32
    loop.yield %t : f32
  }
  fx.output %0 : tensor<64xf32>
}

// -----

// A product by a value that is not constant keeps its multiply by log2(e).
// FAST-LABEL: fx.graph @exp_of_product
// FAST: %[[L:.+]] = arith.constant 1.44269502 : f32
// FAST: %[[M:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// FAST: %[[P:.+]] = arith.mulf %[[M]], %[[L]] : f32
// FAST: math.exp2 %[[P]] : f32
fx.graph @exp_of_product(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %a = loop.load %x[%i] : tensor<64xf32>
    %b = loop.load %y[%i] : tensor<64xf32>
    %m = arith.mulf %a, %b : f32
    %e = math.exp %m : f32
    loop.yield %e : f32
  }
  fx.output %0 : tensor<64xf32>
}

// -----

// A constant whose product with log2(e) overflows f32 stays a multiply of
// its own (exp(0 * c) must stay 1, not exp2(0 * inf)).
// FAST-LABEL: fx.graph @exp_of_huge_scale
// FAST: %[[M:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// FAST: %[[P:.+]] = arith.mulf %[[M]], %{{.+}} : f32
// FAST: math.exp2 %[[P]] : f32
fx.graph @exp_of_huge_scale(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %a = loop.load %x[%i] : tensor<64xf32>
    %c = arith.constant 3.0e+38 : f32
    %m = arith.mulf %a, %c : f32
    %e = math.exp %m : f32
    loop.yield %e : f32
  }
  fx.output %0 : tensor<64xf32>
}

// -----

// f64 erf has no polynomial here: it stays, or with libm-erf (the CPU
// pipeline) becomes calls to libm's erf, one per vector lane.
// CHECK-LABEL: fx.graph @f64_erf
// CHECK: math.erf %{{.+}} : f64
// LIBM: func.func private @erf(f64) -> f64
// LIBM-LABEL: fx.graph @f64_erf
// LIBM: func.call @erf(%{{.+}}) : (f64) -> f64
// LIBM-NOT: math.erf
// LLVM: llvm.func @erf(f64) -> f64
// LLVM: llvm.func @kiln_f64_erf_run
fx.graph @f64_erf(%x: tensor<64xf64>) -> tensor<64xf64> {
  %0 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf64>
    %e = math.erf %v : f64
    loop.yield %e : f64
  }
  fx.output %0 : tensor<64xf64>
}

// -----

// f64 log1p and expm1 (no polynomial here) become Kahan's ratios: log(u) x
// / (u - 1) for u = 1 + x, (u - 1) x / log u for u = e^x, with x itself
// where u rounds to 1, and u where it overflows. With fast-exp (GPUs, which
// have libdevice) both stay.
// CHECK-LABEL: fx.graph @f64_log1p_and_expm1
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-DAG: %[[INF:.+]] = arith.constant 0x7FF0000000000000 : f64
// CHECK: %[[X:.+]] = loop.load
// CHECK: %[[U:.+]] = arith.addf %[[X]], %[[ONE]] : f64
// CHECK: %[[LOG:.+]] = math.log %[[U]] : f64
// CHECK: %[[DENOMINATOR:.+]] = arith.subf %[[U]], %[[ONE]] : f64
// CHECK: %[[QUOTIENT:.+]] = arith.divf %[[X]], %[[DENOMINATOR]] : f64
// CHECK: %[[RATIO:.+]] = arith.mulf %[[LOG]], %[[QUOTIENT]] : f64
// CHECK: %[[IS_INF:.+]] = arith.cmpf oeq, %[[U]], %[[INF]] : f64
// CHECK: %[[FINITE:.+]] = arith.select %[[IS_INF]], %[[U]], %[[RATIO]] : f64
// CHECK: %[[IS_ONE:.+]] = arith.cmpf oeq, %[[U]], %[[ONE]] : f64
// CHECK: arith.select %[[IS_ONE]], %[[X]], %[[FINITE]] : f64
// CHECK: %[[E:.+]] = math.exp %{{.+}} : f64
// CHECK: %[[E_MINUS_ONE:.+]] = arith.subf %[[E]], %[[ONE]] : f64
// CHECK: math.log %[[E]] : f64
// CHECK: arith.cmpf oeq, %[[E_MINUS_ONE]], %{{.+}} : f64
// CHECK-NOT: math.log1p
// CHECK-NOT: math.expm1
// FAST-LABEL: fx.graph @f64_log1p_and_expm1
// FAST: math.log1p %{{.+}} : f64
// FAST: math.expm1 %{{.+}} : f64
fx.graph @f64_log1p_and_expm1(%x: tensor<64xf64>, %y: tensor<64xf64>) -> (tensor<64xf64>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf64>
    %e = math.log1p %v : f64
    loop.yield %e : f64
  }
  %1 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<64xf64>
    %e = math.expm1 %v : f64
    loop.yield %e : f64
  }
  fx.output %0, %1 : tensor<64xf64>, tensor<64xf64>
}

// -----

// f32 sin and cos: j = round(2x/π) and x - jπ/2 in f64 (π/2 in three parts),
// the polynomials in f32, the quadrant j mod 4 (cos one further) picking
// ±sin y or ±cos y, and the result held in [-1, 1]. f64 stays; with fast-exp
// (GPUs) f32 stays too.
// CHECK-LABEL: fx.graph @sin_and_cos
// CHECK-DAG: %[[TWO_OVER_PI:.+]] = arith.constant 0.63661977236758138 : f64
// CHECK-DAG: %[[HALF_PI_HIGH:.+]] = arith.constant 1.5707963705062866 : f64
// CHECK: %[[X:.+]] = loop.load
// CHECK: %[[WIDE:.+]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[SCALED:.+]] = arith.mulf %[[WIDE]], %[[TWO_OVER_PI]] : f64
// CHECK: %[[J:.+]] = math.roundeven %[[SCALED]] : f64
// CHECK: %[[HIGH:.+]] = arith.mulf %[[J]], %[[HALF_PI_HIGH]] : f64
// CHECK: arith.subf %[[WIDE]], %[[HIGH]] : f64
// CHECK: %[[Y:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[Z:.+]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK: math.floor %{{.+}} : f64
// CHECK: arith.cmpf oeq, %{{.+}} : f64
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: loop.yield
// CHECK: arith.addf %[[J2:.+]], %{{.+}} : f64
// CHECK: math.floor
// CHECK: loop.yield
// CHECK: math.sin %{{.+}} : f64
// CHECK-NOT: math.sin %{{.+}} : f32
// CHECK-NOT: math.cos %{{.+}} : f32
// FAST-LABEL: fx.graph @sin_and_cos
// FAST: math.sin %{{.+}} : f32
// FAST: math.cos %{{.+}} : f32
fx.graph @sin_and_cos(%x: tensor<64xf32>, %y: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.sin %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.cos %v : f32
    loop.yield %e : f32
  }
  %2 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<64xf64>
    %e = math.sin %v : f64
    loop.yield %e : f64
  }
  fx.output %0, %1, %2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf64>
}

// -----

// f32 log and log2 scale a subnormal argument by 2^24 and take 24 log 2 (24)
// off; f32 tanh keeps the polynomial below |x| = 0.625 and is (1 - e) / (1 +
// e), e = e^-2|x|, beyond (exactly ±1 far out); f64 tanh is -t / (t + 2),
// t = expm1(-2|x|) (itself Kahan's ratio of e^-2|x| and its log).
// CHECK-LABEL: fx.graph @logs_and_tanhs
// CHECK-DAG: %[[MIN_NORMAL:.+]] = arith.constant 1.17549435E-38 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0x4B800000 : f32
// CHECK-DAG: %[[SHIFT:.+]] = arith.constant 16.6355324 : f32
// CHECK-DAG: %[[NEAR:.+]] = arith.constant 6.250000e-01 : f32
// CHECK: %[[X:.+]] = loop.load
// CHECK: %[[SUBNORMAL:.+]] = arith.cmpf olt, %[[X]], %[[MIN_NORMAL]] : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK: arith.select %[[SUBNORMAL]], %[[SCALED]], %[[X]] : f32
// CHECK: %[[SHIFTED:.+]] = arith.subf %{{.+}}, %[[SHIFT]] : f32
// CHECK: arith.select %[[SUBNORMAL]], %[[SHIFTED]], %{{.+}} : f32
// CHECK: loop.yield
// CHECK: %[[Y:.+]] = loop.load
// CHECK: %[[IS_NEAR:.+]] = arith.cmpf olt, %{{.+}}, %[[NEAR]] : f32
// CHECK: arith.select %[[IS_NEAR]], %{{.+}}, %{{.+}} : f32
// CHECK: loop.yield
// CHECK: %[[Z:.+]] = loop.load
// CHECK: math.exp %{{.+}} : f64
// CHECK: math.log %{{.+}} : f64
// CHECK: math.copysign %{{.+}}, %[[Z]] : f64
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log %{{.+}} : f32
fx.graph @logs_and_tanhs(%x: tensor<64xf32>, %z: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.log %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.tanh %v : f32
    loop.yield %e : f32
  }
  %2 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %z[%i] : tensor<64xf64>
    %e = math.tanh %v : f64
    loop.yield %e : f64
  }
  fx.output %0, %1, %2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf64>
}

// -----

// erfc: f32 takes upstream's polynomial (no 1 - erf, which would lose the
// tail); f64 stays, or with libm-erf (the CPU pipeline) calls libm's erfc.
// CHECK-LABEL: fx.graph @complementary_error_function
// CHECK-NOT: math.erfc %{{.+}} : f32
// CHECK: math.erfc %{{.+}} : f64
// LIBM: func.func private @erfc(f64) -> f64
// LIBM-LABEL: fx.graph @complementary_error_function
// LIBM-NOT: math.erfc %{{.+}} : f32
// LIBM: func.call @erfc(%{{.+}}) : (f64) -> f64
// LIBM-NOT: math.erfc
fx.graph @complementary_error_function(%x: tensor<64xf32>, %y: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<64xf32>
    %e = math.erfc %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %v = loop.load %y[%i] : tensor<64xf64>
    %e = math.erfc %v : f64
    loop.yield %e : f64
  }
  fx.output %0, %1 : tensor<64xf32>, tensor<64xf64>
}

// -----

// f32 powf: e^(y ln|x|) in f64, ln|x| from the exponent bits and a series
// in the mantissa, e^t as 2^n (exponent bits) times a polynomial, signs and
// NaN for negative bases chosen last, then rounded once to f32. f64 stays
// (the CPU pipeline calls libm's pow); with fast-exp (GPUs) f32 stays too.
// CHECK-LABEL: fx.graph @powers
// CHECK-NOT: math.powf %{{.+}} : f32
// CHECK: %[[X:.+]] = arith.extf %{{.+}} : f32 to f64
// CHECK: %[[Y:.+]] = arith.extf %{{.+}} : f32 to f64
// CHECK: %[[ABS:.+]] = math.absf %[[X]] : f64
// CHECK: arith.bitcast %[[ABS]] : f64 to i64
// CHECK: arith.shrui
// CHECK: arith.divf
// CHECK: arith.mulf %[[Y]], %{{.+}} : f64
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: math.roundeven %{{.+}} : f64
// CHECK: arith.fptosi %{{.+}} : f64 to i64
// CHECK: arith.shli
// CHECK: math.floor %[[Y]] : f64
// CHECK: arith.negf
// CHECK: %[[POWER:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: loop.yield %[[POWER]] : f32
// CHECK: math.powf %{{.+}} : f64
// FAST-LABEL: fx.graph @powers
// FAST: math.powf %{{.+}} : f32
// LLVM-LABEL: llvm.func internal @powers(
// LLVM-NOT: llvm.intr.pow({{.*}}f32
// LLVM: llvm.intr.pow(%{{.+}}) : (vector<{{[0-9]+}}xf64>, vector<{{[0-9]+}}xf64>) -> vector<{{[0-9]+}}xf64>
// LLVM-LABEL: llvm.func internal @powers_result_sizes
fx.graph @powers(%x: tensor<64xf32>, %y: tensor<64xf32>, %z: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf64>) {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %u = loop.load %x[%i] : tensor<64xf32>
    %v = loop.load %y[%i] : tensor<64xf32>
    %e = math.powf %u, %v : f32
    loop.yield %e : f32
  }
  %1 = loop.pointwise : tensor<64xf64> {
  ^bb0(%i: index):
    %u = loop.load %z[%i] : tensor<64xf64>
    %e = math.powf %u, %u : f64
    loop.yield %e : f64
  }
  fx.output %0, %1 : tensor<64xf32>, tensor<64xf64>
}
