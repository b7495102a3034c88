// Frozen constants on the GPU: their bytes are read-only data of the
// artifact, which the CUDA runtime copies to the device at first use.
// RUN: kiln-compile %s --target=cuda -o %t.so
// RUN: llvm-nm -D %t.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: llvm-objdump -s -j .rodata %t.so | FileCheck %s --check-prefix=DATA

// SYMBOLS: U kiln_cuda_constant
// SYMBOLS: U mgpuLaunchKernel
// The scale's floats 1.0, 2.0, 3.0, 4.0 as stored.
// DATA: 0000803f 00000040 00004040 00008040
fx.graph @frozen(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = fx.constant dense_resource<scale> : tensor<4xf32>
  %0 = fx.mul %x, %w : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  fx.output %0 : tensor<3x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      scale: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
