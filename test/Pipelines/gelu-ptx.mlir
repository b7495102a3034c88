// RUN: kiln-opt %s -split-input-file --kiln-gpu-pipeline='format=isa' | FileCheck %s

// The exact GELU's kernel in PTX: Φ from its upper tail takes one
// approximate reciprocal, one ex2 whose argument is x² times a single
// constant (-0.5 * log2(e) = 0fBF38AA3B), both flushing subnormal results,
// and FMAs; no IEEE division and no libdevice erf (whose polynomials select
// coefficients with selp).
// CHECK-LABEL: gpu.binary @kiln_pointwise
// CHECK-NOT: div.rn.f32
// CHECK: abs.f32
// CHECK: fma.rn.f32 {{.*}}0f3E9BE76D, 0f3F800000
// CHECK: rcp.approx.ftz.f32
// CHECK: mul.f32 {{.*}}0fBF38AA3B
// CHECK: ex2.approx.ftz.f32
// CHECK-NOT: div.rn.f32
// CHECK-NOT: 0f3FB8AA3B
fx.graph @gelu(%x: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = fx.gelu %x : tensor<4096x4096xbf16>
  fx.output %0 : tensor<4096x4096xbf16>
}

// -----

// In f64 the GELU keeps libdevice's erf (inlined: polynomials in f64 FMAs).
// CHECK-LABEL: gpu.binary @kiln_pointwise
// CHECK: fma.rn.f64
// CHECK-NOT: rcp.approx
fx.graph @gelu_f64(%x: tensor<1024xf64>) -> tensor<1024xf64> {
  %0 = fx.gelu %x : tensor<1024xf64>
  fx.output %0 : tensor<1024xf64>
}
