// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests creation ops: the shape is the result's, the dtype `dtype` or ATen's
// default (full follows its fill value, the others the default float).
// CHECK-LABEL: fx.graph @creation
fx.graph @creation(%x: tensor<?x8xbf16>) {
  // CHECK: fx.full {fill_value = 1.000000e+00 : f64} : () -> tensor<2x3xf32>
  %0 = fx.full {fill_value = 1.0} : () -> tensor<2x3xf32>
  // CHECK: fx.full {fill_value = 7 : i64} : () -> tensor<?xsi64>
  %1 = fx.full {fill_value = 7} : () -> tensor<?xsi64>
  // CHECK: fx.full {fill_value = false} : () -> tensor<4xi1>
  %2 = fx.full {fill_value = false} : () -> tensor<4xi1>
  // CHECK: fx.full {dtype = f16, fill_value = 0 : i64} : () -> tensor<4xf16>
  %3 = fx.full {fill_value = 0, dtype = f16} : () -> tensor<4xf16>
  // CHECK: fx.full_like %{{.*}} {fill_value = -1.000000e+04 : f64} : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %4 = fx.full_like %x {fill_value = -1.0e4} : (tensor<?x8xbf16>) -> tensor<?x8xbf16>
  // CHECK: fx.full_like %{{.*}} {dtype = i1, fill_value = true} : (tensor<?x8xbf16>) -> tensor<?x8xi1>
  %5 = fx.full_like %x {fill_value = true, dtype = i1} : (tensor<?x8xbf16>) -> tensor<?x8xi1>
  // CHECK: fx.empty : () -> tensor<16x16xf32>
  %6 = fx.empty : () -> tensor<16x16xf32>
  // CHECK: fx.empty {dtype = si32} : () -> tensor<?x16xsi32>
  %7 = fx.empty {dtype = si32} : () -> tensor<?x16xsi32>
  // CHECK: fx.empty_strided {dtype = bf16, stride = array<i64: 1, 4>} : () -> tensor<4x3xbf16>
  %8 = fx.empty_strided {stride = array<i64: 1, 4>, dtype = bf16} : () -> tensor<4x3xbf16>
  // CHECK: fx.scalar_tensor {s = 3 : i64} : () -> tensor<f32>
  %9 = fx.scalar_tensor {s = 3} : () -> tensor<f32>
  // CHECK: fx.scalar_tensor {dtype = si64, s = 0 : i64} : () -> tensor<si64>
  %10 = fx.scalar_tensor {s = 0, dtype = si64} : () -> tensor<si64>
  fx.output
}

// -----

// Tests arange: its length and dtype come from its bounds.
// CHECK-LABEL: fx.graph @arange
fx.graph @arange() {
  // CHECK: fx.arange {end = 128 : i64, start = 0 : i64} : () -> tensor<128xsi64>
  %0 = fx.arange {start = 0, end = 128} : () -> tensor<128xsi64>
  // CHECK: fx.arange {end = 1.000000e+00 : f64, start = 0 : i64, step = 3.000000e-01 : f64} : () -> tensor<4xf32>
  %1 = fx.arange {start = 0, end = 1.0, step = 0.3} : () -> tensor<4xf32>
  // CHECK: fx.arange {dtype = si32, end = 0 : i64, start = 10 : i64, step = -3 : i64} : () -> tensor<4xsi32>
  %2 = fx.arange {start = 10, end = 0, step = -3, dtype = si32} : () -> tensor<4xsi32>
  fx.output
}

// -----

// Tests the random ops: their values are a function of the run-time `seed`,
// the stream `offset` and the element's index.
// CHECK-LABEL: fx.graph @random
fx.graph @random(%x: tensor<?x768xf16>, %seed: tensor<si64>, %p: tensor<2x?xf32>) {
  // CHECK: fx.rand %{{.*}} {offset = 0 : i64} : (tensor<si64>) -> tensor<2x3xf32>
  %0 = fx.rand %seed {offset = 0} : (tensor<si64>) -> tensor<2x3xf32>
  // CHECK: fx.randn %{{.*}} {dtype = f16, offset = 6 : i64} : (tensor<si64>) -> tensor<?x4xf16>
  %1 = fx.randn %seed {dtype = f16, offset = 6} : (tensor<si64>) -> tensor<?x4xf16>
  // CHECK: fx.randperm %{{.*}} {offset = 0 : i64} : (tensor<si64>) -> tensor<?xsi64>
  %3 = fx.randperm %seed {offset = 0} : (tensor<si64>) -> tensor<?xsi64>
  // CHECK: fx.native_dropout %{{.*}}, %{{.*}} {offset = 0 : i64, p = 1.000000e-01 : f64, train = true} : (tensor<?x768xf16>, tensor<si64>) -> (tensor<?x768xf16>, tensor<?x768xi1>)
  %2:2 = fx.native_dropout %x, %seed {p = 0.1, train = true, offset = 0} : (tensor<?x768xf16>, tensor<si64>) -> (tensor<?x768xf16>, tensor<?x768xi1>)
  // CHECK: fx.bernoulli_p %{{.*}}, %{{.*}} {offset = 1 : i64, p = 3.000000e-01 : f64} : (tensor<2x?xf32>, tensor<si64>) -> tensor<2x?xf32>
  %4 = fx.bernoulli_p %p, %seed {p = 0.3, offset = 1} : (tensor<2x?xf32>, tensor<si64>) -> tensor<2x?xf32>
  // ATen's default p = 0.5 is left out.
  // CHECK: fx.bernoulli_p %{{.*}}, %{{.*}} {offset = 2 : i64} : (tensor<2x?xf32>, tensor<si64>) -> tensor<2x?xf32>
  %5 = fx.bernoulli_p %p, %seed {p = 0.5, offset = 2} : (tensor<2x?xf32>, tensor<si64>) -> tensor<2x?xf32>
  fx.output
}

// -----

// A frozen parameter: its value is a dense_resource blob of the module's
// resources section, or dense; the result type is the value's.
// CHECK-LABEL: fx.graph @frozen_constants
// CHECK: %[[W:.+]] = fx.constant dense_resource<fc_weight> : tensor<2x3xf32>
// CHECK: %[[I:.+]] = fx.constant dense<[2, 0]> : tensor<2xsi64>
// CHECK: fx.add %arg0, %[[W]]
fx.graph @frozen_constants(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xsi64>) {
  %w = fx.constant dense_resource<fc_weight> : tensor<2x3xf32>
  %i = fx.constant dense<[2, 0]> : tensor<2xsi64>
  %0 = fx.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  fx.output %0, %i : tensor<2x3xf32>, tensor<2xsi64>
}
{-#
  dialect_resources: {
    builtin: {
      fc_weight: "0x04000000000000000000803F0000004000004040000080400000A040"
    }
  }
#-}
