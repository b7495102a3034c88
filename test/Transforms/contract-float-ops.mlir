// RUN: kiln-opt %s -split-input-file --kiln-contract-float-ops | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-gpu-pipeline='format=isa' | FileCheck %s --check-prefix=PTX
// RUN: kiln-opt %s -split-input-file --kiln-gpu-pipeline='format=isa fp-contract=false' | FileCheck %s --check-prefix=NOFMA

// Tests that float multiplies and adds become contractable, keeping the
// flags they had, and that integer ops, casts and math functions stay as
// they are: a round trip through bf16 must still round (the canonicalizer
// folds extf(truncf(x)) when both may contract). In the kernel a multiply
// and the add of its product become one FMA; without the option,
// separately rounded instructions.
// CHECK-LABEL: fx.graph @scale_shift
// CHECK: arith.muli %{{.*}}, %{{.*}} : index
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<nnan,contract> : f32
// CHECK: math.sqrt %{{[a-z0-9_]+}} : f32
// CHECK: arith.truncf %{{[a-z0-9_]+}} : f32 to bf16
// CHECK: arith.extf %{{[a-z0-9_]+}} : bf16 to f32
// CHECK: arith.subf %{{.*}}, %{{.*}} fastmath<contract> : f32
// PTX-LABEL: .entry kiln_pointwise
// PTX: fma.rn.f32
// PTX: cvt.rn.bf16.f32
// PTX-NOT: mul.rn.f32
// NOFMA-LABEL: .entry kiln_pointwise
// NOFMA-NOT: fma.rn.f32
// NOFMA: mul.rn.f32
// NOFMA: add.rn.f32
fx.graph @scale_shift(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loop.pointwise : tensor<64xf32> {
  ^bb0(%i: index):
    %c2 = arith.constant 2 : index
    %j = arith.muli %i, %c2 : index
    %a = loop.load %x[%i] : tensor<64xf32>
    %b = loop.load %y[%i] : tensor<64xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %b fastmath<nnan> : f32
    %r = math.sqrt %s : f32
    %t = arith.truncf %r : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    %d = arith.subf %e, %a : f32
    loop.yield %d : f32
  }
  fx.output %0 : tensor<64xf32>
}
