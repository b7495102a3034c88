// silu, a general power (libdevice powf), integer powers, bool not and
// activations with expm1/log1p, creation and logical ops, flip, repeat,
// split, padding, nearest upsampling, the rest of Core ATen's math and
// sibling kernels, complex arithmetic, and upsampling and adaptive pooling
// of dynamic sizes assemble for sm_90a.
// REQUIRES: ptxas
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s

// CHECK: T kiln_forward_run
// RUN: kiln-compile %S/Inputs/cuda-activations.mlir --target=cuda -o %t-activations.so
// RUN: llvm-nm -D %t-activations.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-creation.mlir --target=cuda -o %t-creation.so
// RUN: llvm-nm -D %t-creation.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-views-more.mlir --target=cuda -o %t-views.so
// RUN: llvm-nm -D %t-views.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-pads.mlir --target=cuda -o %t-pads.so
// RUN: llvm-nm -D %t-pads.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-atan2.mlir --target=cuda -o %t-atan2.so
// RUN: llvm-nm -D %t-atan2.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-math.mlir --target=cuda -o %t-math.so
// RUN: llvm-nm -D %t-math.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-siblings.mlir --target=cuda -o %t-siblings.so
// RUN: llvm-nm -D %t-siblings.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-complex.mlir --target=cuda -o %t-complex.so
// RUN: llvm-nm -D %t-complex.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-upsampling-dynamic.mlir --target=cuda -o %t-upsampling.so
// RUN: llvm-nm -D %t-upsampling.so | FileCheck %s
// RUN: kiln-compile %S/Inputs/cuda-adaptive-pool-dynamic.mlir --target=cuda -o %t-adaptive.so
// RUN: llvm-nm -D %t-adaptive.so | FileCheck %s
fx.graph @forward(%x: tensor<4x64xf32>, %i: tensor<4xsi64>, %p: tensor<4xi1>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4xsi64>, tensor<4xi1>) {
  %0 = fx.silu %x : tensor<4x64xf32>
  %1 = fx.pow_tensor_scalar %x {exponent = 1.7 : f64} : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %2 = fx.pow_tensor_scalar %i {exponent = 3 : i64} : (tensor<4xsi64>) -> tensor<4xsi64>
  %3 = fx.bitwise_not %p : tensor<4xi1>
  fx.output %0, %1, %2, %3 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4xsi64>, tensor<4xi1>
}
