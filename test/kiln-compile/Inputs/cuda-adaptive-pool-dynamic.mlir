// Adaptive average pooling of a dynamic height to a fixed output: windows
// bounded at run time.
fx.graph @forward(%x: tensor<?x3x?x7xf32>) -> tensor<?x3x3x5xf32> {
  %0 = fx.adaptive_avg_pool2d %x : (tensor<?x3x?x7xf32>) -> tensor<?x3x3x5xf32>
  fx.output %0 : tensor<?x3x3x5xf32>
}
