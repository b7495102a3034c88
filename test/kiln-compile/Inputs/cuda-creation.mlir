fx.graph @forward(%x: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xsi64>) {
  %0 = fx.full {fill_value = 3.0 : f64} : () -> tensor<2x4xf32>
  %1 = fx.arange {start = 5.000000e-01 : f64, end = 2.500000e+00 : f64, step = 5.000000e-01 : f64} : () -> tensor<4xf32>
  %2 = fx.logical_and %x, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = fx.arange {start = 0 : i64, end = 8 : i64, step = 2 : i64} : () -> tensor<4xsi64>
  fx.output %0, %1, %2, %3 : tensor<2x4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xsi64>
}
