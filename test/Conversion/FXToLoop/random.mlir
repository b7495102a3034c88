// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// rand: the element's row-major index and the offset are Philox4x32-10's
// counter, the seed its key; ten rounds of two 32x32->64-bit products; the
// first word's top 24 bits are the f32 sample.
// CHECK-LABEL: fx.graph @rand
// CHECK-SAME: %[[SEED:.+]]: tensor<si64>
// CHECK: loop.pointwise : tensor<3x5xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[ROW:.+]] = arith.muli %[[I]], %c5
// CHECK: %[[LINEAR:.+]] = arith.addi %[[ROW]], %[[J]]
// CHECK: arith.index_castui %[[LINEAR]] : index to i64
// CHECK: loop.load %[[SEED]][] : tensor<si64>
// CHECK-COUNT-18: arith.muli %{{.+}}, %c{{3528531795|3449720151}}_i64 : i64
// CHECK: arith.shrui %{{.+}}, %c8_i32 : i32
// CHECK: arith.uitofp %{{.+}} : i32 to f32
// CHECK: arith.mulf %{{.+}}, %cst{{.*}} : f32
// CHECK: loop.yield
fx.graph @rand(%seed: tensor<si64>) -> tensor<3x5xf32> {
  %0 = fx.rand %seed {offset = 0} : (tensor<si64>) -> tensor<3x5xf32>
  fx.output %0 : tensor<3x5xf32>
}

// -----

// bf16 samples take the top 8 bits, exact in bf16.
// CHECK-LABEL: fx.graph @rand_bf16_offset
// CHECK: loop.pointwise : tensor<16xbf16>
// CHECK: arith.shrui %{{.+}}, %c24_i32 : i32
// CHECK: arith.mulf %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
fx.graph @rand_bf16_offset(%seed: tensor<si64>) -> tensor<16xbf16> {
  %0 = fx.rand %seed {dtype = bf16, offset = 7} : (tensor<si64>) -> tensor<16xbf16>
  fx.output %0 : tensor<16xbf16>
}

// -----

// randn: Box-Muller on two words.
// CHECK-LABEL: fx.graph @randn
// CHECK: loop.pointwise : tensor<8xf32>
// CHECK: arith.subf
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.cos
fx.graph @randn(%seed: tensor<si64>) -> tensor<8xf32> {
  %0 = fx.randn %seed {offset = 0} : (tensor<si64>) -> tensor<8xf32>
  fx.output %0 : tensor<8xf32>
}

// -----

// bernoulli_p reads only self's sizes.
// CHECK-LABEL: fx.graph @bernoulli
// CHECK: %[[N:.+]] = tensor.dim %{{.+}}, %c1
// CHECK: loop.pointwise(%[[N]]) : tensor<2x?xf16>
// CHECK-NOT: loop.load %arg0
// CHECK: arith.cmpf olt, %{{.+}}, %cst{{.*}} : f32
// CHECK: arith.select %{{.+}} : f16
fx.graph @bernoulli(%x: tensor<2x?xf16>, %seed: tensor<si64>) -> tensor<2x?xf16> {
  %0 = fx.bernoulli_p %x, %seed {p = 0.3, offset = 2} : (tensor<2x?xf16>, tensor<si64>) -> tensor<2x?xf16>
  fx.output %0 : tensor<2x?xf16>
}

// -----

// native_dropout: the mask keeps draws below 1 - p; the output is
// input * mask * 1/(1 - p), in f32 for bf16, from the same draw made again
// (so that it need not read the mask back).
// CHECK-LABEL: fx.graph @dropout
// CHECK-DAG: %[[KEEP:.+]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.33333337 : f32
// CHECK: %[[MASK:.+]] = loop.pointwise : tensor<4x8xi1>
// CHECK: arith.cmpf olt, %{{.+}}, %[[KEEP]] : f32
// CHECK: %[[OUT:.+]] = loop.pointwise : tensor<4x8xbf16>
// CHECK-NOT: loop.load %[[MASK]]
// CHECK: %[[DRAW:.+]] = arith.cmpf olt, %{{.+}}, %[[KEEP]] : f32
// CHECK: loop.load %arg0
// CHECK: arith.select %[[DRAW]]
// CHECK: arith.mulf
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: fx.output %[[OUT]], %[[MASK]]
fx.graph @dropout(%x: tensor<4x8xbf16>, %seed: tensor<si64>) -> (tensor<4x8xbf16>, tensor<4x8xi1>) {
  %0:2 = fx.native_dropout %x, %seed {p = 0.25, train = true, offset = 0} : (tensor<4x8xbf16>, tensor<si64>) -> (tensor<4x8xbf16>, tensor<4x8xi1>)
  fx.output %0#0, %0#1 : tensor<4x8xbf16>, tensor<4x8xi1>
}

// -----

// Not training: the input passes, the mask is all true, nothing is drawn.
// CHECK-LABEL: fx.graph @dropout_eval
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: %[[MASK:.+]] = loop.pointwise : tensor<4xi1>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.yield %[[TRUE]]
// CHECK-NOT: loop.load
// CHECK: fx.output %[[X]], %[[MASK]]
fx.graph @dropout_eval(%x: tensor<4xf32>, %seed: tensor<si64>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0:2 = fx.native_dropout %x, %seed {p = 0.25, train = false, offset = 0} : (tensor<4xf32>, tensor<si64>) -> (tensor<4xf32>, tensor<4xi1>)
  fx.output %0#0, %0#1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// p = 1 drops everything (1 / (1 - p) would be infinite).
// CHECK-LABEL: fx.graph @dropout_all
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[FALSE:.+]] = arith.constant false
// CHECK: loop.pointwise : tensor<4xi1>
// CHECK: loop.yield %[[FALSE]]
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: loop.yield %[[ZERO]]
fx.graph @dropout_all(%x: tensor<4xf32>, %seed: tensor<si64>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0:2 = fx.native_dropout %x, %seed {p = 1.0, train = true, offset = 0} : (tensor<4xf32>, tensor<si64>) -> (tensor<4xf32>, tensor<4xi1>)
  fx.output %0#0, %0#1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// empty is any value: zero. fill_scalar keeps self's sizes; lift_fresh_copy
// is its operand (values are immutable).
// CHECK-LABEL: fx.graph @empty_fill_and_copy
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f16
// CHECK: loop.pointwise : tensor<2x3xf16>
// CHECK: loop.yield %[[ZERO]]
// CHECK: loop.pointwise(%{{.+}}) : tensor<?xsi32>
// CHECK: loop.yield %[[ONE]]
// CHECK: fx.output %{{.+}}, %{{.+}}, %arg1
fx.graph @empty_fill_and_copy(%i: tensor<?xsi32>, %c: tensor<4xf32>) -> (tensor<2x3xf16>, tensor<?xsi32>, tensor<4xf32>) {
  %0 = fx.empty {dtype = f16} : () -> tensor<2x3xf16>
  %1 = fx.fill_scalar %i {value = 1.5} : tensor<?xsi32>
  %2 = fx.lift_fresh_copy %c : tensor<4xf32>
  fx.output %0, %1, %2 : tensor<2x3xf16>, tensor<?xsi32>, tensor<4xf32>
}

// -----

// Creation ops with dynamic sizes name their symbols; the sizes are the
// guarded arguments' dimensions, and rand's linear index uses them.
// CHECK-LABEL: fx.graph @named_sizes
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>
// CHECK-DAG: %[[S0:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[S1:.+]] = tensor.dim %[[X]], %c1
// CHECK: loop.pointwise(%[[S1]], %[[S0]]) : tensor<?x?xf32>
// CHECK: %[[S0AGAIN:.+]] = tensor.dim %[[X]], %c0
// CHECK: loop.pointwise(%[[S0AGAIN]]) : tensor<?x3xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[ROW:.+]] = arith.muli %[[I]], %c3
fx.graph @named_sizes(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1]>},
    %seed: tensor<si64> {fx.guard = #fx.tensor_guard<sizes = []>})
    -> (tensor<?x?xf32>, tensor<?x3xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.full {fill_value = 1.5 : f64, size_symbols = ["s1", "s0"]} : () -> tensor<?x?xf32>
  %1 = fx.rand %seed {offset = 0, size_symbols = ["s0"]} : (tensor<si64>) -> tensor<?x3xf32>
  fx.output %0, %1 : tensor<?x?xf32>, tensor<?x3xf32>
}

// -----

// randperm: the indices that sort f64 draws of its seed and stream.
// CHECK-LABEL: fx.graph @randperm
// CHECK-NOT: fx.randperm
// CHECK: loop.reduce "sum" over [10] : tensor<10xsi64>
// CHECK: loop.scatter "assign"
fx.graph @randperm(%seed: tensor<si64>) -> tensor<10xsi32> {
  %0 = fx.randperm %seed {dtype = si32, offset = 3 : i64} : (tensor<si64>) -> tensor<10xsi32>
  fx.output %0 : tensor<10xsi32>
}
