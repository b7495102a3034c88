// scatter_reduce: atomic maxima and minima of f32, bf16 and si32, a mean, and
// products (compare-and-swap loops on the elements' bits) of si32, si64, and
// of f32 and bf16 along more than 4096 elements (shorter float ones gather).
fx.graph @forward(%x: tensor<8x5xf32>, %i: tensor<8x3xsi64>, %s: tensor<8x3xf32>, %h: tensor<8x5xbf16>, %hs: tensor<8x3xbf16>, %n: tensor<8x5xsi32>, %ns: tensor<8x3xsi32>, %li: tensor<5000xsi64>, %ls: tensor<5000xf32>, %lh: tensor<5000xbf16>) -> (tensor<8x5xf32>, tensor<8x5xbf16>, tensor<8x5xsi32>, tensor<8x5xf32>, tensor<8x5xsi32>, tensor<8x3xsi64>, tensor<5000xf32>, tensor<5000xbf16>) {
  %0 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "amax", include_self = false} : (tensor<8x5xf32>, tensor<8x3xsi64>, tensor<8x3xf32>) -> tensor<8x5xf32>
  %1 = fx.scatter_reduce %h, %i, %hs {dim = 1 : i64, reduce = "amin"} : (tensor<8x5xbf16>, tensor<8x3xsi64>, tensor<8x3xbf16>) -> tensor<8x5xbf16>
  %2 = fx.scatter_reduce %n, %i, %ns {dim = 1 : i64, reduce = "amin"} : (tensor<8x5xsi32>, tensor<8x3xsi64>, tensor<8x3xsi32>) -> tensor<8x5xsi32>
  %3 = fx.scatter_reduce %x, %i, %s {dim = 1 : i64, reduce = "mean", include_self = false} : (tensor<8x5xf32>, tensor<8x3xsi64>, tensor<8x3xf32>) -> tensor<8x5xf32>
  %4 = fx.scatter_reduce %n, %i, %ns {dim = 1 : i64, reduce = "prod"} : (tensor<8x5xsi32>, tensor<8x3xsi64>, tensor<8x3xsi32>) -> tensor<8x5xsi32>
  %5 = fx.scatter_reduce %i, %i, %i {dim = 0 : i64, reduce = "prod", include_self = false} : (tensor<8x3xsi64>, tensor<8x3xsi64>, tensor<8x3xsi64>) -> tensor<8x3xsi64>
  %6 = fx.scatter_reduce %ls, %li, %ls {dim = 0 : i64, reduce = "prod"} : (tensor<5000xf32>, tensor<5000xsi64>, tensor<5000xf32>) -> tensor<5000xf32>
  %7 = fx.scatter_reduce %lh, %li, %lh {dim = 0 : i64, reduce = "prod", include_self = false} : (tensor<5000xbf16>, tensor<5000xsi64>, tensor<5000xbf16>) -> tensor<5000xbf16>
  fx.output %0, %1, %2, %3, %4, %5, %6, %7 : tensor<8x5xf32>, tensor<8x5xbf16>, tensor<8x5xsi32>, tensor<8x5xf32>, tensor<8x5xsi32>, tensor<8x3xsi64>, tensor<5000xf32>, tensor<5000xbf16>
}
