// RUN: kiln-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// Tests the matrix products; a `?` joins a static size.
// CHECK-LABEL: fx.graph @matmul
fx.graph @matmul(%a: tensor<?x64xbf16>, %b: tensor<64x128xbf16>, %bias: tensor<128xbf16>,
                 %q: tensor<12x?x64xf32>, %k: tensor<?x64x?xf32>, %s: tensor<1x1xf32>) {
  // CHECK: fx.mm %{{.*}} : (tensor<?x64xbf16>, tensor<64x128xbf16>) -> tensor<?x128xbf16>
  %0 = fx.mm %a, %b : (tensor<?x64xbf16>, tensor<64x128xbf16>) -> tensor<?x128xbf16>
  // CHECK: fx.bmm %{{.*}} : (tensor<12x?x64xf32>, tensor<?x64x?xf32>) -> tensor<12x?x?xf32>
  %1 = fx.bmm %q, %k : (tensor<12x?x64xf32>, tensor<?x64x?xf32>) -> tensor<12x?x?xf32>
  // CHECK: fx.addmm %{{.*}} : (tensor<128xbf16>, tensor<?x64xbf16>, tensor<64x128xbf16>) -> tensor<?x128xbf16>
  %2 = fx.addmm %bias, %a, %b : (tensor<128xbf16>, tensor<?x64xbf16>, tensor<64x128xbf16>) -> tensor<?x128xbf16>
  // CHECK: fx.addmm %{{.*}} {alpha = 2.000000e+00 : f64, beta = 0 : i64}
  %3 = fx.addmm %bias, %a, %b {beta = 0, alpha = 2.0} : (tensor<128xbf16>, tensor<?x64xbf16>, tensor<64x128xbf16>) -> tensor<?x128xbf16>
  // CHECK: fx.baddbmm %{{.*}} : (tensor<1x1xf32>, tensor<12x?x64xf32>, tensor<?x64x?xf32>) -> tensor<12x?x?xf32>
  %4 = fx.baddbmm %s, %q, %k : (tensor<1x1xf32>, tensor<12x?x64xf32>, tensor<?x64x?xf32>) -> tensor<12x?x?xf32>
  fx.output
}

// -----

// Tests convolutions: strided and padded, grouped (depthwise), transposed,
// 1-d and unbatched, with and without bias, and the backward.
// CHECK-LABEL: fx.graph @convolution
fx.graph @convolution(%x: tensor<?x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>,
                      %dx: tensor<8x32x10x10xf16>, %dw: tensor<32x1x3x3xf16>,
                      %tx: tensor<1x16x5x5xf32>, %tw: tensor<16x8x3x3xf32>,
                      %x1: tensor<4x100xf32>, %w1: tensor<8x4x5xf32>, %g: tensor<?x64x112x112xf32>) {
  // CHECK: fx.convolution %{{.*}}, %{{.*}} bias(%{{.*}}) {dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 3, 3>, stride = array<i64: 2, 2>, transposed = false} : (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<?x64x112x112xf32>
  %0 = fx.convolution %x, %w bias(%b) {stride = array<i64: 2, 2>, padding = array<i64: 3, 3>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1}
      : (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<?x64x112x112xf32>
  // CHECK: fx.convolution %{{.*}}, %{{.*}} {{{.*}}groups = 32 : i64{{.*}}} : (tensor<8x32x10x10xf16>, tensor<32x1x3x3xf16>) -> tensor<8x32x10x10xf16>
  %1 = fx.convolution %dx, %dw {stride = array<i64: 1>, padding = array<i64: 1>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 32}
      : (tensor<8x32x10x10xf16>, tensor<32x1x3x3xf16>) -> tensor<8x32x10x10xf16>
  // Transposed: weight is [C_in, C_out / groups, k...]; output_padding adds.
  // CHECK: fx.convolution %{{.*}}, %{{.*}} {{{.*}}transposed = true} : (tensor<1x16x5x5xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  %2 = fx.convolution %tx, %tw {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 1, 1>, groups = 1}
      : (tensor<1x16x5x5xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  // Unbatched 1-d with dilation.
  // CHECK: fx.convolution %{{.*}}, %{{.*}} {{.*}} : (tensor<4x100xf32>, tensor<8x4x5xf32>) -> tensor<8x92xf32>
  %3 = fx.convolution %x1, %w1 {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 2>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<4x100xf32>, tensor<8x4x5xf32>) -> tensor<8x92xf32>
  // CHECK: fx.convolution_backward %{{.*}} {bias_sizes = array<i64: 64>, {{.*}}output_mask = array<i1: true, true, true>{{.*}}} : (tensor<?x64x112x112xf32>, tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>) -> (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>)
  %4:3 = fx.convolution_backward %g, %x, %w {bias_sizes = array<i64: 64>, stride = array<i64: 2, 2>, padding = array<i64: 3, 3>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, true>}
      : (tensor<?x64x112x112xf32>, tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>)
      -> (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>)
  // Autograd's bias_sizes for a convolution without a bias: [0], with the
  // bias's gradient masked off.
  // CHECK: fx.convolution_backward %{{.*}} {bias_sizes = array<i64: 0>, {{.*}}output_mask = array<i1: true, true, false>{{.*}}}
  %5:3 = fx.convolution_backward %g, %x, %w {bias_sizes = array<i64: 0>, stride = array<i64: 2, 2>, padding = array<i64: 3, 3>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1, output_mask = array<i1: true, true, false>}
      : (tensor<?x64x112x112xf32>, tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>)
      -> (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>)
  fx.output
}

// -----

// Tests scaled dot-product attention: the CPU flash kernel and CUDA's
// memory-efficient kernel, with their gradients.
// CHECK-LABEL: fx.graph @attention
fx.graph @attention(%q: tensor<?x12x128x64xbf16>, %k: tensor<?x12x256x64xbf16>, %v: tensor<?x12x256x32xbf16>,
                    %mask: tensor<128x256xbf16>, %o: tensor<?x12x128x32xbf16>, %lse: tensor<?x12x128xf32>,
                    %seed: tensor<si64>) {
  // CHECK: fx.scaled_dot_product_flash_attention_for_cpu %{{.*}}, %{{.*}}, %{{.*}} {is_causal = true} : (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>) -> (tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>)
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v {is_causal = true}
      : (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>) -> (tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>)
  // CHECK: fx.scaled_dot_product_flash_attention_for_cpu %{{.*}}, %{{.*}}, %{{.*}} attn_mask(%{{.*}}) {scale = 1.250000e-01 : f64}
  %1:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v attn_mask(%mask) {scale = 0.125}
      : (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<128x256xbf16>) -> (tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>)
  // CHECK: fx.scaled_dot_product_flash_attention_for_cpu_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {dropout_p = 0.000000e+00 : f64, is_causal = false} {{.*}} -> (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>)
  %2:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %o, %q, %k, %v, %o, %lse {dropout_p = 0.0, is_causal = false}
      : (tensor<?x12x128x32xbf16>, tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>)
      -> (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>)
  // The log-sum-exp rows are padded to a multiple of 32.
  // CHECK: fx.scaled_dot_product_efficient_attention %{{.*}}, %{{.*}}, %{{.*}} {compute_log_sumexp = true} : {{.*}} -> (tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>, tensor<si64>, tensor<si64>)
  %3:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v {compute_log_sumexp = true}
      : (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>)
      -> (tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>, tensor<si64>, tensor<si64>)
  // CHECK: fx.scaled_dot_product_efficient_attention %{{.*}}, %{{.*}}, %{{.*}} attn_bias(%{{.*}}) {compute_log_sumexp = false} : {{.*}} -> (tensor<?x12x128x32xbf16>, tensor<?x12x0xf32>, tensor<si64>, tensor<si64>)
  %4:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v attn_bias(%mask) {compute_log_sumexp = false}
      : (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<128x256xbf16>)
      -> (tensor<?x12x128x32xbf16>, tensor<?x12x0xf32>, tensor<si64>, tensor<si64>)
  // The memory-efficient kernel's gradient: the bias's is undefined where
  // it is not wanted, and may then have any shape.
  // CHECK: fx.scaled_dot_product_efficient_attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} attn_bias(%{{.*}}), %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {dropout_p = 0.000000e+00 : f64, grad_input_mask = array<i1: true, true, true, false>, is_causal = true} : {{.*}} -> (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<0xbf16>)
  %5:4 = fx.scaled_dot_product_efficient_attention_backward %o, %q, %k, %v attn_bias(%mask), %o, %lse, %seed, %seed {dropout_p = 0.0, grad_input_mask = array<i1: true, true, true, false>, is_causal = true}
      : (tensor<?x12x128x32xbf16>, tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<128x256xbf16>, tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>, tensor<si64>, tensor<si64>)
      -> (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<0xbf16>)
  // CHECK: fx.scaled_dot_product_efficient_attention_backward {{.*}} -> (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<128x256xbf16>)
  %6:4 = fx.scaled_dot_product_efficient_attention_backward %o, %q, %k, %v attn_bias(%mask), %o, %lse, %seed, %seed {dropout_p = 0.0, grad_input_mask = array<i1: true, true, true, true>}
      : (tensor<?x12x128x32xbf16>, tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<128x256xbf16>, tensor<?x12x128x32xbf16>, tensor<?x12x128xf32>, tensor<si64>, tensor<si64>)
      -> (tensor<?x12x128x64xbf16>, tensor<?x12x256x64xbf16>, tensor<?x12x256x32xbf16>, tensor<128x256xbf16>)
  fx.output
}

// -----

// Tests pairwise distances and the real/complex FFTs.
// CHECK-LABEL: fx.graph @distances_fft
fx.graph @distances_fft(%x: tensor<5x3xf32>, %a: tensor<2x1x4x3xf64>, %b: tensor<7x6x3xf64>,
                        %s: tensor<8x16xf32>, %c: tensor<8x9xcomplex<f32>>) {
  // CHECK: fx.pdist_forward %{{.*}} : (tensor<5x3xf32>) -> tensor<10xf32>
  %0 = fx.pdist_forward %x : (tensor<5x3xf32>) -> tensor<10xf32>
  // CHECK: fx.cdist_forward %{{.*}}, %{{.*}} {p = 1.000000e+00 : f64} : (tensor<2x1x4x3xf64>, tensor<7x6x3xf64>) -> tensor<2x7x4x6xf64>
  %1 = fx.cdist_forward %a, %b {p = 1.0} : (tensor<2x1x4x3xf64>, tensor<7x6x3xf64>) -> tensor<2x7x4x6xf64>
  // CHECK: fx.fft_r2c %{{.*}} {dim = array<i64: 1>, normalization = 0 : i64, onesided = true} : (tensor<8x16xf32>) -> tensor<8x9xcomplex<f32>>
  %2 = fx.fft_r2c %s {dim = array<i64: 1>, normalization = 0, onesided = true} : (tensor<8x16xf32>) -> tensor<8x9xcomplex<f32>>
  // CHECK: fx.fft_r2c %{{.*}} {dim = array<i64: 0, 1>, normalization = 2 : i64, onesided = false} : (tensor<8x16xf32>) -> tensor<8x16xcomplex<f32>>
  %3 = fx.fft_r2c %s {dim = array<i64: 0, 1>, normalization = 2, onesided = false} : (tensor<8x16xf32>) -> tensor<8x16xcomplex<f32>>
  // CHECK: fx.fft_c2r %{{.*}} {dim = array<i64: 1>, last_dim_size = 16 : i64, normalization = 0 : i64} : (tensor<8x9xcomplex<f32>>) -> tensor<8x16xf32>
  %4 = fx.fft_c2r %c {dim = array<i64: 1>, normalization = 0, last_dim_size = 16} : (tensor<8x9xcomplex<f32>>) -> tensor<8x16xf32>
  // CHECK: fx.fft_c2c %{{.*}} {dim = array<i64: 0, 1>, forward = false, normalization = 1 : i64} : (tensor<8x9xcomplex<f32>>) -> tensor<8x9xcomplex<f32>>
  %5 = fx.fft_c2c %c {dim = array<i64: 0, 1>, normalization = 1, forward = false} : (tensor<8x9xcomplex<f32>>) -> tensor<8x9xcomplex<f32>>
  fx.output
}
