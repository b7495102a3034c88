// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-form-attention))' | FileCheck %s

// Soft-capped, masked attention written out (bf16 scores widened, scaled
// by 1/8, capped at 30 by tanh, plus a mask broadcast over the heads) is
// one loop.attention: the product's factor becomes its scale, the rest of
// the work on the scores its scores region, at the node's indices.
// CHECK-LABEL: fx.graph @soft_capped
// CHECK-SAME: (%[[Q:[^:]+]]: {{.+}}, %[[K:[^:]+]]: {{.+}}, %[[V:[^:]+]]: {{.+}}, %[[MASK:[^:]+]]: tensor<2x1x64x64xbf16>)
// CHECK-DAG: %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NOT: loop.matmul
// CHECK-NOT: loop.reduce
// CHECK: %[[O:.+]] = loop.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16> scores {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %{{.+}}: index, %[[I2:.+]]: index, %[[I3:.+]]: index, %[[SCORE:.+]]: f32):
// CHECK-NEXT: %[[D:.+]] = arith.divf %[[SCORE]], %[[CAP]] : f32
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[D]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.mulf %[[T]], %[[CAP]] : f32
// CHECK-NEXT: %[[M:.+]] = loop.load %[[MASK]][%[[I0]], %[[C0]], %[[I2]], %[[I3]]] : tensor<2x1x64x64xbf16>
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[M]] : bf16 to f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[C]], %[[W]] : f32
// CHECK-NEXT: loop.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: fx.output %[[O]]
fx.graph @soft_capped(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// A mask's causal term (-inf where the key comes after the query) becomes
// the node's `causal`; the mask's other term stays in the region.
// CHECK-LABEL: fx.graph @causal_mask
// CHECK: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 1.250000e-01 : f64}
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.ori
// CHECK: %[[HIDDEN:.+]] = arith.cmpf oeq
// CHECK-NEXT: %[[S:.+]] = arith.select %[[HIDDEN]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: loop.yield %[[S]] : f32
fx.graph @causal_mask(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %i3, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// Scaled scores under a causal mask alone: the node is causal, without a
// region.
// CHECK-LABEL: fx.graph @plain_causal
// CHECK: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 1.250000e-01 : f64} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
// CHECK-NOT: scores
// CHECK: fx.output
fx.graph @plain_causal(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %10 = arith.addf %7, %zero : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %13 = arith.select %later, %ninf, %7 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %10 = arith.addf %7, %zero : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %13 = arith.select %later, %ninf, %7 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %10 = arith.addf %7, %zero : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %i3, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %13 = arith.select %later, %ninf, %7 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// A causal term inside an `andi` that selects -inf hides only where both
// hold: no causal form, the region keeps it.
// CHECK-LABEL: fx.graph @causal_term_in_and
// CHECK: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.250000e-01 : f64}
// CHECK: arith.cmpi ugt
// CHECK: arith.andi
fx.graph @causal_term_in_and(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.andi %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.andi %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %i3, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.andi %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// A -inf that the soft cap then turns finite (tanh(-inf) * 30) hides
// nothing: no causal form.
// CHECK-LABEL: fx.graph @hidden_then_capped
// CHECK: loop.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.250000e-01 : f64}
// CHECK: arith.cmpi ugt
// CHECK: math.tanh
fx.graph @hidden_then_capped(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %later2 = arith.cmpi ugt, %r0, %i2 : index
    %sel = arith.select %later2, %ninf, %7 : f32
    %8 = arith.divf %sel, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.addf %10, %12 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %later2 = arith.cmpi ugt, %r0, %i2 : index
    %sel = arith.select %later2, %ninf, %7 : f32
    %8 = arith.divf %sel, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %later2 = arith.cmpi ugt, %i3, %i2 : index
    %sel = arith.select %later2, %ninf, %7 : f32
    %8 = arith.divf %sel, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %i3, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// A sum over fewer keys than the scores have is no softmax of them.
// CHECK-LABEL: fx.graph @partial_sum
// CHECK-NOT: loop.attention
// CHECK: loop.reduce "sum" over [32]
fx.graph @partial_sum(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [32] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %r0, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %later = arith.cmpi ugt, %i3, %i2 : index
    %hidden = arith.cmpf oeq, %12, %ninf : f32
    %either = arith.ori %later, %hidden : i1
    %13 = arith.select %either, %ninf, %10 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// f32 sums (no widening), a scale written as a division, probabilities as
// e / sum: one node of scale 1/8, without a region.
// CHECK-LABEL: fx.graph @f32_sums_divided
// CHECK-SAME: (%[[Q:[^:]+]]: {{.+}}, %[[K:[^:]+]]: {{.+}}, %[[V:[^:]+]]: {{.+}})
// CHECK-NOT: loop.matmul
// CHECK: %[[O:.+]] = loop.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64} : tensor<2x64x32xf16>, tensor<2x64x32xf16>, tensor<2x64x32xf16> -> tensor<2x64x32xf16>
// CHECK-NEXT: fx.output %[[O]]
fx.graph @f32_sums_divided(%q: tensor<2x64x32xf16>, %k: tensor<2x64x32xf16>, %v: tensor<2x64x32xf16>) -> tensor<2x64x32xf16> {
  %c0 = arith.constant 0 : index
  %eight = arith.constant 8.0 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x64x32xf16>, tensor<2x64x32xf16> -> tensor<2x64x64xf32>
  %1 = loop.reduce "max" over [64] : tensor<2x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %r0] : tensor<2x64x64xf32>
    %6 = arith.divf %5, %eight : f32
    loop.yield %6 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %r0] : tensor<2x64x64xf32>
    %6 = arith.divf %5, %eight : f32
    %7 = loop.load %1[%i0, %i1, %c0] : tensor<2x64x1xf32>
    %8 = arith.subf %6, %7 : f32
    %9 = math.exp %8 : f32
    loop.yield %9 : f32
  }
  %3 = loop.pointwise : tensor<2x64x64xf16> {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %5 = loop.load %0[%i0, %i1, %i2] : tensor<2x64x64xf32>
    %6 = arith.divf %5, %eight : f32
    %7 = loop.load %1[%i0, %i1, %c0] : tensor<2x64x1xf32>
    %8 = arith.subf %6, %7 : f32
    %9 = math.exp %8 : f32
    %10 = loop.load %2[%i0, %i1, %c0] : tensor<2x64x1xf32>
    %11 = arith.divf %9, %10 : f32
    %12 = arith.truncf %11 : f32 to f16
    loop.yield %12 : f16
  }
  %4 = loop.matmul %3, %v : tensor<2x64x64xf16>, tensor<2x64x32xf16> -> tensor<2x64x32xf16>
  fx.output %4 : tensor<2x64x32xf16>
}

// -----

// The sum's exponentials of other values than the probabilities' (no
// scale there) are no softmax of them.
// CHECK-LABEL: fx.graph @other_sum
// CHECK-NOT: loop.attention
fx.graph @other_sum(%q: tensor<2x64x32xf16>, %k: tensor<2x64x32xf16>, %v: tensor<2x64x32xf16>) -> tensor<2x64x32xf16> {
  %c0 = arith.constant 0 : index
  %eight = arith.constant 8.0 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x64x32xf16>, tensor<2x64x32xf16> -> tensor<2x64x64xf32>
  %1 = loop.reduce "max" over [64] : tensor<2x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %r0] : tensor<2x64x64xf32>
    %6 = arith.divf %5, %eight : f32
    loop.yield %6 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %r0] : tensor<2x64x64xf32>
    %7 = loop.load %1[%i0, %i1, %c0] : tensor<2x64x1xf32>
    %8 = arith.subf %5, %7 : f32
    %9 = math.exp %8 : f32
    loop.yield %9 : f32
  }
  %3 = loop.pointwise : tensor<2x64x64xf16> {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %5 = loop.load %0[%i0, %i1, %i2] : tensor<2x64x64xf32>
    %6 = arith.divf %5, %eight : f32
    %7 = loop.load %1[%i0, %i1, %c0] : tensor<2x64x1xf32>
    %8 = arith.subf %6, %7 : f32
    %9 = math.exp %8 : f32
    %10 = loop.load %2[%i0, %i1, %c0] : tensor<2x64x1xf32>
    %11 = arith.divf %9, %10 : f32
    %12 = arith.truncf %11 : f32 to f16
    loop.yield %12 : f16
  }
  %4 = loop.matmul %3, %v : tensor<2x64x64xf16>, tensor<2x64x32xf16> -> tensor<2x64x32xf16>
  fx.output %4 : tensor<2x64x32xf16>
}

// -----

// Probabilities that a backward pass keeps (another reader) stay written
// out.
// CHECK-LABEL: fx.graph @probabilities_kept
// CHECK-NOT: loop.attention
// CHECK: loop.reduce "max"
fx.graph @probabilities_kept(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>, tensor<2x4x64x64xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4, %3 : tensor<2x4x64x32xbf16>, tensor<2x4x64x64xbf16>
}

// -----

// A maximum over other values than the probabilities' is no softmax of
// them (here without the mask).
// CHECK-LABEL: fx.graph @other_maximum
// CHECK-NOT: loop.attention
fx.graph @other_maximum(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>, %v: tensor<2x4x64x32xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x32xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    loop.yield %10 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  fx.output %4 : tensor<2x4x64x32xbf16>
}

// -----

// Heads of 8 are no shape the kernel computes: the chain stays.
// CHECK-LABEL: fx.graph @narrow_heads
// CHECK-NOT: loop.attention
// CHECK: loop.matmul
fx.graph @narrow_heads(%q: tensor<2x4x64x8xbf16>, %k: tensor<2x4x64x8xbf16>, %v: tensor<2x4x64x8xbf16>, %mask: tensor<2x1x64x64xbf16>) -> (tensor<2x4x64x8xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 3.000000e+01 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %0 = loop.matmul %q, %k {transpose_rhs} : tensor<2x4x64x8xbf16>, tensor<2x4x64x8xbf16> -> tensor<2x4x64x64xbf16>
  %1 = loop.reduce "max" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    loop.yield %13 : f32
  }
  %2 = loop.reduce "sum" over [64] : tensor<2x4x64x1xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %r0: index):
    %5 = loop.load %0[%i0, %i1, %i2, %r0] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %r0] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    loop.yield %16 : f32
  }
  %3 = loop.pointwise : tensor<2x4x64x64xbf16> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %5 = loop.load %0[%i0, %i1, %i2, %i3] : tensor<2x4x64x64xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = arith.mulf %6, %cst_1 : f32
    %8 = arith.divf %7, %cst_0 : f32
    %9 = math.tanh %8 : f32
    %10 = arith.mulf %9, %cst_0 : f32
    %11 = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x64x64xbf16>
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.addf %10, %12 : f32
    %14 = loop.load %1[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %15 = arith.subf %13, %14 : f32
    %16 = math.exp %15 : f32
    %17 = loop.load %2[%i0, %i1, %i2, %c0] : tensor<2x4x64x1xf32>
    %18 = arith.divf %cst, %17 : f32
    %19 = arith.mulf %16, %18 : f32
    %20 = arith.truncf %19 : f32 to bf16
    loop.yield %20 : bf16
  }
  %4 = loop.matmul %3, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x8xbf16> -> tensor<2x4x64x8xbf16>
  fx.output %4 : tensor<2x4x64x8xbf16>
}
