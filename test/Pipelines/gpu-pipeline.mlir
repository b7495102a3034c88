// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa' | FileCheck %s --check-prefix=ONLY-LLVM
// RUN: kiln-opt %s --kiln-gpu-pipeline='format=isa chip=sm_80 features=+ptx75 block-size=512' | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-llvm-gpu='format=isa' | FileCheck %s
// RUN: kiln-opt %s --kiln-lower-to-loop --kiln-loop-to-llvm-gpu='format=isa chip=sm_80 features=+ptx75 block-size=512' | FileCheck %s --check-prefix=SM80

// Tests that the GPU pipeline leaves host code in the LLVM dialect that
// launches one fused kernel on the caller's stream (named for its kind and
// the op its node comes from, `kiln_pointwise_relu`, so that profiles tell
// kernels apart), with the kernel compiled for the requested chip (PTX text
// here, so ptxas is not needed).
// ONLY-LLVM-NOT: fx.{{[a-z_]+}}
// ONLY-LLVM-NOT: loop.{{[a-z_]+}}
// ONLY-LLVM-NOT: memref.
// CHECK-LABEL: llvm.func internal @forward
// CHECK-SAME: %[[STREAM:arg[0-9]+]]: !llvm.ptr)
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @kiln_pointwise_relu::@kiln_pointwise_relu
// CHECK-SAME: threads in (%{{.+}}, %{{.+}}, %{{.+}}) : i64
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.binary @kiln_pointwise_relu [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}.target sm_90a
// CHECK-LABEL: llvm.func @kiln_forward_run
// CHECK: llvm.mlir.global external constant @kiln_forward_device("cuda\00")
// SM80: gpu.binary @kiln_pointwise_relu [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx75">, {{.*}}.maxntid 512, 1, 1
fx.graph @forward(%x: tensor<1024x64xbf16>, %b: tensor<64xbf16>) -> tensor<1024x64xbf16> {
  %0 = fx.add %x, %b : (tensor<1024x64xbf16>, tensor<64xbf16>) -> tensor<1024x64xbf16>
  %1 = fx.relu %0 : tensor<1024x64xbf16>
  fx.output %1 : tensor<1024x64xbf16>
}
