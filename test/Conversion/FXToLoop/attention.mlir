// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' -o /dev/null

// The CPU's flash attention whose logsumexp is read: loop.attention with
// its logsumexp, which has the op's type here (f32 for bf16 operands).
// CHECK-LABEL: fx.graph @causal_attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x16xbf16>, %[[K:.+]]: tensor<2x4x8x16xbf16>, %[[V:.+]]: tensor<2x4x8x16xbf16>)
// CHECK: %[[O:.+]]:2 = loop.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 2.500000e-01 : f64} : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16> -> tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
// CHECK-NOT: loop.matmul
// CHECK: fx.output %[[O]]#0, %[[O]]#1
fx.graph @causal_attention(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>, %v: tensor<2x4x8x16xbf16>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>) {
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v {is_causal = true} : (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  fx.output %0#0, %0#1 : tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
}

// -----

// Dropout draws would need the op's own generator.
// CHECK-LABEL: fx.graph @attention_with_dropout
fx.graph @attention_with_dropout(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.scaled_dot_product_flash_attention_for_cpu' with these operand types}}
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %q, %q {dropout_p = 0.1 : f64} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4xf32>)
  fx.output %0#0 : tensor<1x1x4x8xf32>
}

// -----

// The gradient is loop.attention_backward, after delta = Σ dO·O per query
// (a reduction of the product over the head).
// CHECK-LABEL: fx.graph @attention_backward
// CHECK-SAME: (%[[DO:[^:]+]]: tensor<1x2x4x8xf32>, %[[Q:[^:]+]]: tensor<1x2x4x8xf32>, %[[K:[^:]+]]: tensor<1x2x6x8xf32>, %[[V:[^:]+]]: tensor<1x2x6x8xf32>, %[[O:[^:]+]]: tensor<1x2x4x8xf32>, %[[LSE:[^:]+]]: tensor<1x2x4xf32>)
// CHECK: %[[DELTA:.+]] = loop.reduce "sum" over [8] : tensor<1x2x4xf32>
// CHECK: loop.load %[[DO]]
// CHECK: loop.load %[[O]]
// CHECK: arith.mulf
// CHECK: %[[G:.+]]:3 = loop.attention_backward %[[Q]], %[[K]], %[[V]], %[[DO]], %[[LSE]], %[[DELTA]] {scale = 0.35355339059327373 : f64} : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32> -> tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>
// CHECK-NOT: scores
// CHECK: fx.output %[[G]]#0, %[[G]]#1, %[[G]]#2
fx.graph @attention_backward(%do: tensor<1x2x4x8xf32>, %q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %o: tensor<1x2x4x8xf32>, %lse: tensor<1x2x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) {
  %0:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %v, %o, %lse {dropout_p = 0.0 : f64, is_causal = false} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>)
  fx.output %0#0, %0#1, %0#2 : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>
}

// -----

// A bf16 gradient with a mask: the logsumexp, saved in bf16 here, converts
// to f32 for the node, and the mask is added in its scores region.
// CHECK-LABEL: fx.graph @masked_attention_backward
// CHECK-SAME: %[[LSE:[^:]+]]: tensor<1x2x4xbf16>, %[[MASK:[^:]+]]: tensor<4x6xbf16>)
// CHECK: %[[F32:.+]] = loop.pointwise : tensor<1x2x4xf32>
// CHECK: loop.load %[[LSE]]
// CHECK: arith.extf
// CHECK: loop.attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F32]], %{{.+}} {causal, scale = 5.000000e-01 : f64}
// CHECK-SAME: scores {
// CHECK: loop.load %[[MASK]]
// CHECK: arith.addf
fx.graph @masked_attention_backward(%do: tensor<1x2x4x8xbf16>, %q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x6x8xbf16>, %v: tensor<1x2x6x8xbf16>, %o: tensor<1x2x4x8xbf16>, %lse: tensor<1x2x4xbf16>, %mask: tensor<4x6xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>) {
  %0:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %v, %o, %lse attn_mask(%mask) {dropout_p = 0.0 : f64, is_causal = true, scale = 0.5 : f64} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4xbf16>, tensor<4x6xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>)
  fx.output %0#0, %0#1, %0#2 : tensor<1x2x4x8xbf16>, tensor<1x2x6x8xbf16>, tensor<1x2x6x8xbf16>
}

// -----

// CUDA's memory-efficient kernel: loop.attention with its logsumexp, whose
// rows the op pads to 32 (+inf past the 40 queries); its Philox state is
// zero without dropout.
// CHECK-LABEL: fx.graph @efficient_attention
// CHECK-DAG: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[LAST:.+]] = arith.constant 39 : index
// CHECK: %[[O:.+]]:2 = loop.attention %{{.+}} -> tensor<2x4x40x16xf16>, tensor<2x4x40xf32> scores {
// CHECK: %[[PADDED:.+]] = loop.pointwise : tensor<2x4x64xf32>
// CHECK: %[[ROW:.+]] = arith.minui %{{.*}}, %[[LAST]]
// CHECK: loop.load %[[O]]#1[%{{.+}}, %{{.+}}, %[[ROW]]]
// CHECK: arith.cmpi ugt, %{{.*}}, %[[LAST]]
// CHECK: arith.select %{{.*}}, %[[INF]]
// CHECK: loop.pointwise : tensor<si64>
// CHECK-NOT: loop.matmul
fx.graph @efficient_attention(%q: tensor<2x4x40x16xf16>, %k: tensor<2x4x24x16xf16>, %v: tensor<2x4x24x16xf16>, %bias: tensor<2x4x40x24xf16>) -> (tensor<2x4x40x16xf16>, tensor<2x4x64xf32>, tensor<si64>, tensor<si64>) {
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v attn_bias(%bias) {compute_log_sumexp = true} : (tensor<2x4x40x16xf16>, tensor<2x4x24x16xf16>, tensor<2x4x24x16xf16>, tensor<2x4x40x24xf16>) -> (tensor<2x4x40x16xf16>, tensor<2x4x64xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0, %0#1, %0#2, %0#3 : tensor<2x4x40x16xf16>, tensor<2x4x64xf32>, tensor<si64>, tensor<si64>
}

// -----

// Without compute_log_sumexp the logsumexp is empty, and without a mask
// the node is loop.attention (kiln-loop-expand-attention writes it out for
// targets without a kernel).
// CHECK-LABEL: fx.graph @efficient_attention_without_logsumexp
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x8x16xbf16>)
// CHECK-NOT: loop.matmul
// CHECK-DAG: %[[O:.+]] = loop.attention %[[Q]], %[[Q]], %[[Q]] {causal, scale = 2.500000e-01 : f64} : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
// CHECK-DAG: %[[LSE:.+]] = loop.pointwise : tensor<1x2x0xf32>
// CHECK: fx.output %[[O]], %[[LSE]]
fx.graph @efficient_attention_without_logsumexp(%q: tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x0xf32>) {
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %q, %q {compute_log_sumexp = false, is_causal = true} : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x0xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0, %0#1 : tensor<1x2x8x16xbf16>, tensor<1x2x0xf32>
}

// -----

// A bias whose logsumexp nothing reads is added in the node's scores
// region, broadcast from its trailing dimensions (size 1 reads index 0),
// converted to f32.
// CHECK-LABEL: fx.graph @efficient_attention_with_bias
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x40x16xbf16>, %[[BIAS:.+]]: tensor<2x1x40x40xbf16>)
// CHECK-NOT: loop.matmul
// CHECK: loop.attention %[[Q]], %[[Q]], %[[Q]] {scale = 2.500000e-01 : f64} : tensor<2x4x40x16xbf16>, tensor<2x4x40x16xbf16>, tensor<2x4x40x16xbf16> -> tensor<2x4x40x16xbf16> scores {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %{{.+}}: index, %[[I2:.+]]: index, %[[I3:.+]]: index, %[[SCORE:.+]]: f32):
// CHECK: %[[B:.+]] = loop.load %[[BIAS]][%[[I0]], %{{.+}}, %[[I2]], %[[I3]]] : tensor<2x1x40x40xbf16>
// CHECK: %[[F:.+]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[S:.+]] = arith.addf %[[SCORE]], %[[F]] : f32
// CHECK: loop.yield %[[S]] : f32
fx.graph @efficient_attention_with_bias(%q: tensor<2x4x40x16xbf16>, %bias: tensor<2x1x40x40xbf16>) -> tensor<2x4x40x16xbf16> {
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %q, %q attn_bias(%bias) {compute_log_sumexp = false} : (tensor<2x4x40x16xbf16>, tensor<2x4x40x16xbf16>, tensor<2x4x40x16xbf16>, tensor<2x1x40x40xbf16>) -> (tensor<2x4x40x16xbf16>, tensor<2x4x0xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0 : tensor<2x4x40x16xbf16>
}

// -----

// The CPU's flash attention whose logsumexp nothing reads is loop.attention
// too; dynamic sizes come from the queries.
// CHECK-LABEL: fx.graph @flash_attention_output_only
// CHECK-SAME: (%[[Q:.+]]: tensor<?x2x?x32xf32>, %[[K:.+]]: tensor<?x2x?x32xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG: %[[L:.+]] = tensor.dim %[[Q]], %[[C2]]
// CHECK: loop.attention(%[[B]], %[[L]]) %[[Q]], %[[K]], %[[K]] {scale = 5.000000e-01 : f64} : tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x2x?x32xf32>
// CHECK-NOT: loop.matmul
fx.graph @flash_attention_output_only(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>) -> tensor<?x2x?x32xf32> {
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %k {scale = 0.5 : f64} : (tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>) -> (tensor<?x2x?x32xf32>, tensor<?x2x?xf32>)
  fx.output %0#0 : tensor<?x2x?x32xf32>
}

// -----

// CHECK-LABEL: fx.graph @efficient_attention_with_dropout
fx.graph @efficient_attention_with_dropout(%q: tensor<1x1x4x8xf16>) -> tensor<1x1x4x8xf16> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.scaled_dot_product_efficient_attention' with these operand types}}
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %q, %q {compute_log_sumexp = true, dropout_p = 0.1 : f64} : (tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>) -> (tensor<1x1x4x8xf16>, tensor<1x1x32xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0 : tensor<1x1x4x8xf16>
}

// -----

// Dynamic batches and sequence lengths (the head size stays static): the
// nodes take their dynamic sizes from the queries, and the logsumexp's
// rows, where dynamic, are the queries' count (the CPU's kernel: the
// node's own) or that count rounded up to 32 (CUDA's), the padding found
// at run time.
// CHECK-LABEL: fx.graph @dynamic_attention
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x?x16xf32>, %[[K:.+]]: tensor<?x4x?x16xf32>, %[[V:.+]]: tensor<?x4x?x16xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK: %[[L:.+]] = tensor.dim %[[Q]], %[[C2]]
// CHECK: %[[A:.+]]:2 = loop.attention(%[[B]], %[[L]]) %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x4x?xf32>
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %{{.+}}, %[[C32]] : index
// CHECK: %[[PADDED:.+]] = arith.muli %[[BLOCKS]], %[[C32]] : index
// CHECK: %[[E:.+]]:2 = loop.attention
// CHECK: loop.pointwise(%{{.+}}, %[[PADDED]]) : tensor<?x4x?xf32>
// CHECK: arith.minui
// CHECK: arith.cmpi ugt
// CHECK: fx.output %[[A]]#0, %[[A]]#1, %[[E]]#0
fx.graph @dynamic_attention(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?xf32>) {
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?xf32>)
  %1:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v {compute_log_sumexp = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0, %0#1, %1#0, %1#1 : tensor<?x4x?x16xf32>, tensor<?x4x?xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?xf32>
}

// -----

// A dynamic head size has no static scale or inner product size.
// CHECK-LABEL: fx.graph @dynamic_head_size
fx.graph @dynamic_head_size(%q: tensor<1x2x4x?xf32>) -> tensor<1x2x4x?xf32> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.scaled_dot_product_flash_attention_for_cpu' with these operand types}}
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %q, %q : (tensor<1x2x4x?xf32>, tensor<1x2x4x?xf32>, tensor<1x2x4x?xf32>) -> (tensor<1x2x4x?xf32>, tensor<1x2x4xf32>)
  fx.output %0#0 : tensor<1x2x4x?xf32>
}

// -----

// CUDA's memory-efficient kernel's gradient: the saved logsumexp's rows,
// padded to 64, are cut to the 40 queries; the bias is added in the node's
// scores region, and the bias's gradient, not wanted, is undefined (NaN).
// CHECK-LABEL: fx.graph @efficient_attention_backward
// CHECK-SAME: (%[[DO:[^:]+]]: tensor<2x4x40x16xf16>, %[[Q:[^:]+]]: tensor<2x4x40x16xf16>, %[[K:[^:]+]]: tensor<2x4x24x16xf16>, %[[V:[^:]+]]: tensor<2x4x24x16xf16>, %[[BIAS:[^:]+]]: tensor<2x1x40x24xf16>, %[[O:[^:]+]]: tensor<2x4x40x16xf16>, %[[LSE:[^:]+]]: tensor<2x4x64xf32>
// CHECK: %[[NAN:.+]] = arith.constant 0x7E00 : f16
// CHECK: %[[ROWS:.+]] = loop.pointwise : tensor<2x4x40xf32>
// CHECK: loop.load %[[LSE]]
// CHECK: %[[DELTA:.+]] = loop.reduce "sum" over [16] : tensor<2x4x40xf32>
// CHECK: %[[G:.+]]:3 = loop.attention_backward %[[Q]], %[[K]], %[[V]], %[[DO]], %[[ROWS]], %[[DELTA]] {causal, scale = 2.500000e-01 : f64} : {{.*}} scores {
// CHECK: loop.load %[[BIAS]]
// CHECK: arith.addf
// CHECK: %[[UNDEFINED:.+]] = loop.pointwise : tensor<0xf16>
// CHECK: loop.yield %[[NAN]] : f16
// CHECK: fx.output %[[G]]#0, %[[G]]#1, %[[G]]#2, %[[UNDEFINED]]
fx.graph @efficient_attention_backward(%do: tensor<2x4x40x16xf16>, %q: tensor<2x4x40x16xf16>, %k: tensor<2x4x24x16xf16>, %v: tensor<2x4x24x16xf16>, %bias: tensor<2x1x40x24xf16>, %o: tensor<2x4x40x16xf16>, %lse: tensor<2x4x64xf32>, %seed: tensor<si64>) -> (tensor<2x4x40x16xf16>, tensor<2x4x24x16xf16>, tensor<2x4x24x16xf16>, tensor<0xf16>) {
  %0:4 = fx.scaled_dot_product_efficient_attention_backward %do, %q, %k, %v attn_bias(%bias), %o, %lse, %seed, %seed {dropout_p = 0.0 : f64, grad_input_mask = array<i1: true, true, true, false>, is_causal = true} : (tensor<2x4x40x16xf16>, tensor<2x4x40x16xf16>, tensor<2x4x24x16xf16>, tensor<2x4x24x16xf16>, tensor<2x1x40x24xf16>, tensor<2x4x40x16xf16>, tensor<2x4x64xf32>, tensor<si64>, tensor<si64>) -> (tensor<2x4x40x16xf16>, tensor<2x4x24x16xf16>, tensor<2x4x24x16xf16>, tensor<0xf16>)
  fx.output %0#0, %0#1, %0#2, %0#3 : tensor<2x4x40x16xf16>, tensor<2x4x24x16xf16>, tensor<2x4x24x16xf16>, tensor<0xf16>
}

// -----

// Dynamic query counts: the logsumexp's rows may be padded although the
// types match, so they are cut to the queries' count all the same.
// CHECK-LABEL: fx.graph @dynamic_efficient_attention_backward
// CHECK-SAME: (%[[DO:[^:]+]]: tensor<?x4x?x16xbf16>, %[[Q:[^:]+]]: tensor<?x4x?x16xbf16>, %{{[^:]+}}: tensor<?x4x?x16xbf16>, %{{[^:]+}}: tensor<?x4x?x16xbf16>, %{{[^:]+}}: tensor<?x4x?x16xbf16>, %[[LSE:[^:]+]]: tensor<?x4x?xf32>
// CHECK: %[[ROWS:.+]] = loop.pointwise(%{{.+}}, %{{.+}}) : tensor<?x4x?xf32>
// CHECK: loop.load %[[LSE]]
// CHECK: loop.attention_backward query_sizes(%{{.+}}, %{{.+}}) key_sizes(%{{.+}}, %{{.+}}) %[[Q]], %{{.+}}, %{{.+}}, %[[DO]], %[[ROWS]], %{{.+}} {scale = 2.500000e-01 : f64}
// CHECK-NOT: scores
fx.graph @dynamic_efficient_attention_backward(%do: tensor<?x4x?x16xbf16>, %q: tensor<?x4x?x16xbf16>, %k: tensor<?x4x?x16xbf16>, %v: tensor<?x4x?x16xbf16>, %o: tensor<?x4x?x16xbf16>, %lse: tensor<?x4x?xf32>, %seed: tensor<si64>) -> (tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>) {
  %0:4 = fx.scaled_dot_product_efficient_attention_backward %do, %q, %k, %v, %o, %lse, %seed, %seed {dropout_p = 0.0 : f64, grad_input_mask = array<i1: true, true, true, false>} : (tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?xf32>, tensor<si64>, tensor<si64>) -> (tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<0xbf16>)
  fx.output %0#0, %0#1, %0#2 : tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>, tensor<?x4x?x16xbf16>
}

// -----

// The bias's gradient would need the scores' gradients in memory.
// CHECK-LABEL: fx.graph @efficient_attention_bias_gradient
fx.graph @efficient_attention_bias_gradient(%q: tensor<1x1x8x16xf16>, %bias: tensor<1x1x8x8xf16>, %lse: tensor<1x1x32xf32>, %seed: tensor<si64>) -> tensor<1x1x8x8xf16> {
  // expected-error @+1 {{kiln-fx-to-loop: no lowering for 'fx.scaled_dot_product_efficient_attention_backward' with these operand types}}
  %0:4 = fx.scaled_dot_product_efficient_attention_backward %q, %q, %q, %q attn_bias(%bias), %q, %lse, %seed, %seed {dropout_p = 0.0 : f64, grad_input_mask = array<i1: true, true, true, true>} : (tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x8xf16>, tensor<1x1x8x16xf16>, tensor<1x1x32xf32>, tensor<si64>, tensor<si64>) -> (tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x8xf16>)
  fx.output %0#3 : tensor<1x1x8x8xf16>
}
