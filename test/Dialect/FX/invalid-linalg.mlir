// RUN: kiln-opt %s -split-input-file -verify-diagnostics

fx.graph @mm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'fx.mm' op `self` must have rank 2, but is 'tensor<2x3x4xf32>'}}
  %0 = fx.mm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  fx.output
}

// -----

fx.graph @mm_contracting(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+1 {{'fx.mm' op contracting sizes of 'tensor<3x4xf32>' and 'tensor<5x6xf32>' differ}}
  %0 = fx.mm %a, %b : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  fx.output
}

// -----

// Tests that a `?` never joins a size of 1.
fx.graph @mm_dynamic_one(%a: tensor<3x?xf32>, %b: tensor<1x6xf32>) {
  // expected-error @+1 {{'fx.mm' op contracting sizes of 'tensor<3x?xf32>' and 'tensor<1x6xf32>' differ}}
  %0 = fx.mm %a, %b : (tensor<3x?xf32>, tensor<1x6xf32>) -> tensor<3x6xf32>
  fx.output
}

// -----

fx.graph @mm_dtypes(%a: tensor<3x4xf32>, %b: tensor<4x5xf16>) {
  // expected-error @+1 {{'fx.mm' op operands must have the same dtype, but have 'f32' and 'f16'}}
  %0 = fx.mm %a, %b : (tensor<3x4xf32>, tensor<4x5xf16>) -> tensor<3x5xf32>
  fx.output
}

// -----

fx.graph @mm_result(%a: tensor<?x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'fx.mm' op result type 'tensor<3x5xf32>' does not match the inferred type 'tensor<?x5xf32>'}}
  %0 = fx.mm %a, %b : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  fx.output
}

// -----

fx.graph @bmm_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'fx.bmm' op batch sizes of 'tensor<2x3x4xf32>' and 'tensor<3x4x5xf32>' differ}}
  %0 = fx.bmm %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  fx.output
}

// -----

fx.graph @addmm_self(%s: tensor<4xf32>, %a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'fx.addmm' op `self` 'tensor<4xf32>' does not broadcast to the product shape [3, 5]}}
  %0 = fx.addmm %s, %a, %b : (tensor<4xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  fx.output
}

// -----

fx.graph @addmm_float_alpha(%s: tensor<5xsi64>, %a: tensor<3x4xsi64>, %b: tensor<4x5xsi64>) {
  // expected-error @+1 {{'fx.addmm' op floating alpha 5.000000e-01 : f64 cannot be applied to an integral result of dtype 'si64'}}
  %0 = fx.addmm %s, %a, %b {alpha = 0.5} : (tensor<5xsi64>, tensor<3x4xsi64>, tensor<4x5xsi64>) -> tensor<3x5xsi64>
  fx.output
}

// -----

fx.graph @conv_weight_rank(%x: tensor<1x3x8xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `weight` 'tensor<4x3xf32>' must have output and input channel dimensions and at least one spatial dimension}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x3x8xf32>, tensor<4x3xf32>) -> tensor<1x4x8xf32>
  fx.output
}

// -----

fx.graph @conv_input_rank(%x: tensor<3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `input` 'tensor<3x8xf32>' must have rank 4 (or 3 unbatched) for `weight` 'tensor<4x3x3x3xf32>'}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6xf32>
  fx.output
}

// -----

fx.graph @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `input` 'tensor<1x4x8x8xf32>' has 4 channels, but `weight` 'tensor<16x3x3x3xf32>' with 1 groups expects 3}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_transposed_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `input` 'tensor<1x4x8x8xf32>' has 4 channels, but the transposed `weight` 'tensor<3x2x3x3xf32>' expects 3}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = true, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  fx.output
}

// -----

fx.graph @conv_groups_divide(%x: tensor<1x8x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `weight` 'tensor<6x2x3x3xf32>' has 6 output channels, which `groups` 4 does not divide}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 4}
      : (tensor<1x8x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_groups_positive(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `groups` must be positive, but is 0}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 0}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `stride` entries must be positive}}
  %0 = fx.convolution %x, %w {stride = array<i64: 0>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_dilation(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `dilation` entries must be positive}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1, 0>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_param_count(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op `padding` has 3 entries; expected 2 (one per spatial dimension) or 1}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0, 0, 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_kernel_fits(%x: tensor<1x4x2x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op the kernel does not fit: spatial dimension 0 of `input` 'tensor<1x4x2x8xf32>' gives output size 0}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x2x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x0x6xf32>
  fx.output
}

// -----

fx.graph @conv_size_overflows(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op the output size overflows in spatial dimension 0}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 9223372036854775807>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_transposed_size_overflows(%x: tensor<1x4x8x8xf32>, %w: tensor<4x6x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op the output size overflows in spatial dimension 0}}
  %0 = fx.convolution %x, %w {stride = array<i64: 4611686018427387904>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = true, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<4x6x3x3xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'fx.convolution' op `bias` 'tensor<4xf32>' must have shape [6], one per output channel}}
  %0 = fx.convolution %x, %w bias(%b) {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<4xf32>) -> tensor<1x6x6x6xf32>
  fx.output
}

// -----

fx.graph @conv_result(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution' op result type 'tensor<1x6x8x8xf32>' does not match the inferred type 'tensor<1x6x6x6xf32>'}}
  %0 = fx.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1}
      : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  fx.output
}

// -----

fx.graph @conv_backward_grad(%g: tensor<1x6x8x8xf32>, %x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution_backward' op `grad_output` 'tensor<1x6x8x8xf32>' does not have the convolution's output shape [1, 6, 6, 6]}}
  %0:3 = fx.convolution_backward %g, %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1, output_mask = array<i1: true, true, false>}
      : (tensor<1x6x8x8xf32>, tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>)
  fx.output
}

// -----

fx.graph @conv_backward_bias_sizes(%g: tensor<1x6x6x6xf32>, %x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'fx.convolution_backward' op `bias_sizes` [4] must be [6]}}
  %0:3 = fx.convolution_backward %g, %x, %w {bias_sizes = array<i64: 4>, stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1, output_mask = array<i1: true, true, true>}
      : (tensor<1x6x6x6xf32>, tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>)
  fx.output
}

// -----

fx.graph @attention_rank(%q: tensor<12x128x64xf32>) {
  // expected-error @+1 {{'fx.scaled_dot_product_flash_attention_for_cpu' op `query` must have rank 4, but is 'tensor<12x128x64xf32>'}}
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %q, %q
      : (tensor<12x128x64xf32>, tensor<12x128x64xf32>, tensor<12x128x64xf32>) -> (tensor<12x128x64xf32>, tensor<12x128xf32>)
  fx.output
}

// -----

fx.graph @attention_head_dim(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x32xf32>) {
  // expected-error @+1 {{'fx.scaled_dot_product_flash_attention_for_cpu' op head dimensions of 'tensor<1x2x8x64xf32>' and 'tensor<1x2x8x32xf32>' differ}}
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %k
      : (tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>) -> (tensor<1x2x8x32xf32>, tensor<1x2x8xf32>)
  fx.output
}

// -----

fx.graph @attention_logsumexp(%q: tensor<1x2x8x64xbf16>) {
  // expected-error @+1 {{'fx.scaled_dot_product_flash_attention_for_cpu' op result #1 type 'tensor<1x2x8xbf16>' does not match the inferred type 'tensor<1x2x8xf32>'}}
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %q, %q
      : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8xbf16>)
  fx.output
}

// -----

fx.graph @attention_backward_out(%q: tensor<1x2x8x64xf32>, %o: tensor<1x2x8x32xf32>, %l: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'fx.scaled_dot_product_flash_attention_for_cpu_backward' op `out` 'tensor<1x2x8x32xf32>' does not have the attention output shape [1, 2, 8, 64]}}
  %0:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %q, %q, %q, %q, %o, %l {dropout_p = 0.0, is_causal = false}
      : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8xf32>)
      -> (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>)
  fx.output
}

// -----

fx.graph @efficient_attention_philox(%q: tensor<1x2x8x64xf16>) {
  // expected-error @+1 {{'fx.scaled_dot_product_efficient_attention' op result #2 (the philox state) must be an si64 tensor, but is 'tensor<si32>'}}
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %q, %q {compute_log_sumexp = true}
      : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>) -> (tensor<1x2x8x64xf16>, tensor<1x2x32xf32>, tensor<si32>, tensor<si64>)
  fx.output
}

// -----

fx.graph @efficient_attention_backward_mask(%q: tensor<1x2x8x64xf16>, %l: tensor<1x2x32xf32>, %s: tensor<si64>) {
  // expected-error @+1 {{'fx.scaled_dot_product_efficient_attention_backward' op `grad_input_mask` must have 4 entries (query, key, value, bias), but has 3}}
  %0:4 = fx.scaled_dot_product_efficient_attention_backward %q, %q, %q, %q, %q, %l, %s, %s {dropout_p = 0.0, grad_input_mask = array<i1: true, true, true>}
      : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x32xf32>, tensor<si64>, tensor<si64>)
      -> (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<0xf16>)
  fx.output
}

// -----

fx.graph @efficient_attention_backward_bias(%q: tensor<1x2x8x64xf16>, %b: tensor<1x1x8x8xf16>, %l: tensor<1x2x32xf32>, %s: tensor<si64>) {
  // expected-error @+1 {{'fx.scaled_dot_product_efficient_attention_backward' op result #3 type 'tensor<0xf16>' does not match the inferred type 'tensor<1x1x8x8xf16>'}}
  %0:4 = fx.scaled_dot_product_efficient_attention_backward %q, %q, %q, %q attn_bias(%b), %q, %l, %s, %s {dropout_p = 0.0, grad_input_mask = array<i1: false, true, true, true>}
      : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x1x8x8xf16>, tensor<1x2x8x64xf16>, tensor<1x2x32xf32>, tensor<si64>, tensor<si64>)
      -> (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<0xf16>)
  fx.output
}

// -----

fx.graph @efficient_attention_backward_bias_dtype(%q: tensor<1x2x8x64xf16>, %l: tensor<1x2x32xf32>, %s: tensor<si64>) {
  // expected-error @+1 {{'fx.scaled_dot_product_efficient_attention_backward' op result #3 (the bias's gradient) must have the operands' dtype 'f16', but is 'tensor<0xf32>'}}
  %0:4 = fx.scaled_dot_product_efficient_attention_backward %q, %q, %q, %q, %q, %l, %s, %s {dropout_p = 0.0, grad_input_mask = array<i1: true, true, true, false>}
      : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x32xf32>, tensor<si64>, tensor<si64>)
      -> (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<0xf32>)
  fx.output
}

// -----

fx.graph @pdist_p(%x: tensor<5x3xf32>) {
  // expected-error @+1 {{'fx.pdist_forward' op `p` must not be negative}}
  %0 = fx.pdist_forward %x {p = -1.0} : (tensor<5x3xf32>) -> tensor<10xf32>
  fx.output
}

// -----

fx.graph @pdist_pairs(%x: tensor<5x3xf32>) {
  // expected-error @+1 {{'fx.pdist_forward' op result type 'tensor<25xf32>' does not match the inferred type 'tensor<10xf32>'}}
  %0 = fx.pdist_forward %x : (tensor<5x3xf32>) -> tensor<25xf32>
  fx.output
}

// -----

fx.graph @cdist_rank(%a: tensor<3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'fx.cdist_forward' op `x1` 'tensor<3xf32>' and `x2` 'tensor<4x3xf32>' must have rank 2 or more}}
  %0 = fx.cdist_forward %a, %b {p = 2.0} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4xf32>
  fx.output
}

// -----

fx.graph @cdist_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x5x3xf32>) {
  // expected-error @+1 {{'fx.cdist_forward' op batch dimensions are not broadcastable: sizes 2 and 3 at dimension 0 of the broadcast result cannot be broadcast together}}
  %0 = fx.cdist_forward %a, %b {p = 2.0} : (tensor<2x4x3xf32>, tensor<3x5x3xf32>) -> tensor<2x4x5xf32>
  fx.output
}

// -----

fx.graph @fft_no_dim(%x: tensor<8xf32>) {
  // expected-error @+1 {{'fx.fft_r2c' op `dim` must name at least one dimension}}
  %0 = fx.fft_r2c %x {dim = array<i64>, normalization = 0, onesided = true} : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  fx.output
}

// -----

fx.graph @fft_half(%x: tensor<8xf16>) {
  // expected-error @+1 {{'fx.fft_r2c' op a real-to-complex transform needs an f32 or f64 input, but the input is 'tensor<8xf16>'}}
  %0 = fx.fft_r2c %x {dim = array<i64: 0>, normalization = 0, onesided = true} : (tensor<8xf16>) -> tensor<5xcomplex<f32>>
  fx.output
}

// -----

fx.graph @fft_c2r_size(%c: tensor<8x9xcomplex<f64>>) {
  // expected-error @+1 {{'fx.fft_c2r' op result type 'tensor<8x16xf64>' does not match the inferred type 'tensor<8x17xf64>'}}
  %0 = fx.fft_c2r %c {dim = array<i64: 1>, normalization = 0, last_dim_size = 17} : (tensor<8x9xcomplex<f64>>) -> tensor<8x16xf64>
  fx.output
}

// -----

fx.graph @fft_c2c_dtype(%c: tensor<8x9xcomplex<f64>>) {
  // expected-error @+1 {{'fx.fft_c2c' op result type 'tensor<8x9xcomplex<f32>>' does not match the inferred type 'tensor<8x9xcomplex<f64>>'}}
  %0 = fx.fft_c2c %c {dim = array<i64: 1>, normalization = 0, forward = true} : (tensor<8x9xcomplex<f64>>) -> tensor<8x9xcomplex<f32>>
  fx.output
}
