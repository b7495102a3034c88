// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='tf32-products' | FileCheck %s --check-prefix=TF32

// f32 products call the GEMM with dtype 0 (f32 multiplies), or with
// tf32-products 3 (TF32 multiplies, as PyTorch's allow_tf32); the result
// stays f32 (0) either way.
// CHECK-LABEL: func.func @f32_product
// CHECK: call @kiln_cuda_gemm(%c0_i32, %c0_i32{{.*}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i32
// TF32-LABEL: func.func @f32_product
// TF32: call @kiln_cuda_gemm(%c3_i32, %c0_i32, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i32
fx.graph @f32_product(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %y = loop.matmul %a, %b : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  fx.output %y : tensor<64x16xf32>
}

// -----

// 16-bit products are unchanged.
// TF32-LABEL: func.func @bf16_product
// TF32: call @kiln_cuda_gemm(%c2_i32, %c2_i32
fx.graph @bf16_product(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<64x16xbf16> {
  %y = loop.matmul %a, %b : tensor<64x32xbf16>, tensor<32x16xbf16> -> tensor<64x16xbf16>
  fx.output %y : tensor<64x16xbf16>
}
