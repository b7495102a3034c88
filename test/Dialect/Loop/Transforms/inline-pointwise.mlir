// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-inline))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-inline{max-reads=8}))' | FileCheck %s --check-prefix=READS
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-inline{max-ops=1}))' | FileCheck %s --check-prefix=OPS
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-inline{max-consumer-reads=1}))' | FileCheck %s --check-prefix=CONSUMER
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-inline{max-consumer-ops=4}))' | FileCheck %s --check-prefix=CONSUMER-OPS
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-loop-inline{keep-f32-intermediates=false}))' | FileCheck %s --check-prefix=ROUND

// Tests that a chain of single-reader producers collapses into its last node,
// with the producer evaluated at the indices its reader loads (here, a
// broadcast row read at [%i1]).
// CHECK-LABEL: fx.graph @inline_chain
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[NODE:.+]] = loop.pointwise : tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index):
// CHECK-DAG: %[[LX:.+]] = loop.load %[[X]][%[[I0]], %[[I1]]]
// CHECK-DAG: %[[LB:.+]] = loop.load %[[B]][%[[I1]]]
// CHECK: %[[NB:.+]] = arith.negf %[[LB]]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[LX]], %[[NB]]
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[S]], %[[S]]
// CHECK-NEXT: loop.yield %[[M]]
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[NODE]]
// A producer that one node alone reads moves whole, whatever the reads the
// consumer then holds.
// CONSUMER-LABEL: fx.graph @inline_chain
// CONSUMER-COUNT-1: loop.pointwise
// CONSUMER-NOT: loop.pointwise
// CONSUMER: fx.output
// With at most 4 ops a body, the sum absorbs the negation (4 ops), but the
// square (2 ops) can't take the sum too.
// CONSUMER-OPS-LABEL: fx.graph @inline_chain
// CONSUMER-OPS: %[[SUM:.+]] = loop.pointwise : tensor<4x8xf32>
// CONSUMER-OPS: arith.negf
// CONSUMER-OPS: arith.addf
// CONSUMER-OPS: loop.pointwise : tensor<4x8xf32>
// CONSUMER-OPS: loop.load %[[SUM]]
// CONSUMER-OPS-NEXT: arith.mulf
// CONSUMER-OPS-NOT: loop.pointwise
// CONSUMER-OPS: fx.output
fx.graph @inline_chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = loop.pointwise : tensor<8xf32> {
  ^bb0(%i: index):
    %v = loop.load %b[%i] : tensor<8xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  %1 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<4x8xf32>
    %w = loop.load %0[%j] : tensor<8xf32>
    %s = arith.addf %v, %w : f32
    loop.yield %s : f32
  }
  %2 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %1[%i, %j] : tensor<4x8xf32>
    %m = arith.mulf %v, %v : f32
    loop.yield %m : f32
  }
  fx.output %2 : tensor<4x8xf32>
}

// -----

// Tests that a light producer with two readers is recomputed in both, unless
// max-ops says its two ops are too many.
// OPS-LABEL: fx.graph @inline_shared_light_producer
// OPS-COUNT-3: loop.pointwise
// CHECK-LABEL: fx.graph @inline_shared_light_producer
// CHECK-COUNT-2: arith.negf
// CHECK-NOT: loop.load %{{[0-9]+}}[
fx.graph @inline_shared_light_producer(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %2 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %e = math.sin %v : f32
    loop.yield %e : f32
  }
  fx.output %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a shared producer is recomputed in a consumer only while the
// consumer holds at most max-consumer-reads loads.
// CHECK-LABEL: fx.graph @consumer_reads_bound_recomputation
// CHECK-COUNT-2: loop.pointwise
// CHECK-NOT: loop.pointwise
// CHECK: fx.output
// CONSUMER-LABEL: fx.graph @consumer_reads_bound_recomputation
// CONSUMER-COUNT-3: loop.pointwise
fx.graph @consumer_reads_bound_recomputation(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %w = loop.load %y[%i] : tensor<4xf32>
    %s = arith.addf %v, %w : f32
    loop.yield %s : f32
  }
  %2 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %w = loop.load %y[%i] : tensor<4xf32>
    %s = arith.mulf %v, %w : f32
    loop.yield %s : f32
  }
  fx.output %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that reads of the same tensor at the same indices count once: a
// shared producer that loads one element five times has one read, not more
// than max-reads, and is recomputed in both readers.
// CHECK-LABEL: fx.graph @repeated_reads_count_once
// CHECK-COUNT-2: loop.pointwise
// CHECK-NOT: loop.pointwise
// CHECK: fx.output
fx.graph @repeated_reads_count_once(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %a = loop.load %x[%i] : tensor<4xf32>
    %b = loop.load %x[%i] : tensor<4xf32>
    %c = loop.load %x[%i] : tensor<4xf32>
    %d = loop.load %x[%i] : tensor<4xf32>
    %e = loop.load %x[%i] : tensor<4xf32>
    %s0 = arith.addf %a, %b : f32
    %s1 = arith.mulf %s0, %c : f32
    %s2 = arith.subf %s1, %d : f32
    %s3 = arith.divf %s2, %e : f32
    loop.yield %s3 : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  %2 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  fx.output %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a producer with two readers and more than max-reads loads is
// realised, unless max-reads raises the limit.
// CHECK-LABEL: fx.graph @do_not_inline_heavy_shared_producer
// CHECK: %[[P:.+]] = loop.pointwise
// CHECK: loop.load %[[P]]
// CHECK: loop.load %[[P]]
// READS-LABEL: fx.graph @do_not_inline_heavy_shared_producer
// READS-COUNT-2: loop.pointwise
// READS-NOT: loop.pointwise
// READS: fx.output
fx.graph @do_not_inline_heavy_shared_producer(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %va = loop.load %a[%i] : tensor<4xf32>
    %vb = loop.load %b[%i] : tensor<4xf32>
    %vc = loop.load %c[%i] : tensor<4xf32>
    %vd = loop.load %d[%i] : tensor<4xf32>
    %ve = loop.load %e[%i] : tensor<4xf32>
    %s0 = arith.addf %va, %vb : f32
    %s1 = arith.addf %s0, %vc : f32
    %s2 = arith.addf %s1, %vd : f32
    %s3 = arith.addf %s2, %ve : f32
    loop.yield %s3 : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  %2 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %m = arith.mulf %v, %v : f32
    loop.yield %m : f32
  }
  fx.output %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a producer the graph returns is read, not recomputed.
// CHECK-LABEL: fx.graph @do_not_inline_returned_producer
// CHECK: %[[P:.+]] = loop.pointwise
// CHECK: %[[Q:.+]] = loop.pointwise
// CHECK: loop.load %[[P]]
// CHECK: fx.output %[[P]], %[[Q]]
fx.graph @do_not_inline_returned_producer(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  fx.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a bf16 intermediate stays in f32 inside the fused body, unless
// keep-f32-intermediates=false asks for eager's rounding at every op.
// CHECK-LABEL: fx.graph @bf16_intermediate
// CHECK: %[[W:.+]] = arith.extf
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[W]] : f32
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[N]], %[[N]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT: loop.yield %[[R]]
// ROUND-LABEL: fx.graph @bf16_intermediate
// ROUND: arith.negf
// ROUND-NEXT: arith.truncf
// ROUND-NEXT: arith.extf
// ROUND-NEXT: arith.mulf
fx.graph @bf16_intermediate(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = loop.pointwise : tensor<4xbf16> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xbf16>
    %w = arith.extf %v : bf16 to f32
    %n = arith.negf %w : f32
    %r = arith.truncf %n : f32 to bf16
    loop.yield %r : bf16
  }
  %1 = loop.pointwise : tensor<4xbf16> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xbf16>
    %w = arith.extf %v : bf16 to f32
    %m = arith.mulf %w, %w : f32
    %r = arith.truncf %m : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %1 : tensor<4xbf16>
}

// -----

// Tests that a rounding the program asked for (an explicit cast to bf16,
// marked) stays when its producer is inlined.
// CHECK-LABEL: fx.graph @explicit_rounding
// CHECK: %[[R:.+]] = arith.truncf %{{.+}} {loop.explicit_rounding} : f32 to bf16
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[R]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[W]], %[[W]] : f32
fx.graph @explicit_rounding(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loop.pointwise : tensor<4xbf16> {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : tensor<4xf32>
    %r = arith.truncf %v {loop.explicit_rounding} : f32 to bf16
    loop.yield %r : bf16
  }
  %1 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %0[%i] : tensor<4xbf16>
    %w = arith.extf %v : bf16 to f32
    %m = arith.mulf %w, %w : f32
    loop.yield %m : f32
  }
  fx.output %1 : tensor<4xf32>
}

// -----

// Tests that a pointwise producer is inlined into a reduction's body, and
// that the reduction itself is never inlined into its reader.
// CHECK-LABEL: fx.graph @inline_into_reduction
// CHECK: %[[R:.+]] = loop.reduce "sum" over [8]
// CHECK: math.exp
// CHECK: loop.pointwise
// CHECK: loop.load %[[R]]
fx.graph @inline_into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = loop.pointwise : tensor<4x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<4x8xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  %1 = loop.reduce "sum" over [8] : tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %v = loop.load %0[%i, %k] : tensor<4x8xf32>
    loop.yield %v : f32
  }
  %2 = loop.pointwise : tensor<4xf32> {
  ^bb0(%i: index):
    %v = loop.load %1[%i] : tensor<4xf32>
    %n = arith.negf %v : f32
    loop.yield %n : f32
  }
  fx.output %2 : tensor<4xf32>
}
