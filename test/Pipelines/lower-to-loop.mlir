// RUN: kiln-opt %s --kiln-lower-to-loop | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-to-loop='inline=false' | FileCheck %s --check-prefix=NOINLINE
// RUN: kiln-opt %s --kiln-lower-to-loop='compute-in-f32=false' | FileCheck %s --check-prefix=NATIVE

// Tests that the graph-level pipeline turns a chain of elementwise ops into
// one node reading each input once.
// CHECK-LABEL: fx.graph @residual_relu
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xbf16>, %[[B:.+]]: tensor<64xbf16>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]]
// CHECK: %[[NODE:.+]] = loop.pointwise(%[[N]]) : tensor<?x64xbf16>
// CHECK: loop.load %[[X]]
// CHECK: loop.load %[[B]]
// CHECK-NOT: loop.load
// CHECK: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: loop.yield
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[NODE]]
// NOINLINE-LABEL: fx.graph @residual_relu
// NOINLINE-COUNT-3: loop.pointwise
// NATIVE-LABEL: fx.graph @residual_relu
// NATIVE-NOT: arith.extf
// NATIVE: arith.addf %{{.+}}, %{{.+}} : bf16
fx.graph @residual_relu(%x: tensor<?x64xbf16>, %b: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %0 = fx.add %x, %b : (tensor<?x64xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16>
  %1 = fx.relu %0 : tensor<?x64xbf16>
  %2 = fx.add %1, %x : (tensor<?x64xbf16>, tensor<?x64xbf16>) -> tensor<?x64xbf16>
  fx.output %2 : tensor<?x64xbf16>
}
