// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu --canonicalize -verify-diagnostics | FileCheck %s

// A product on the GPU is a host call of the runtime's GEMM on the graph's
// stream, after the kernel that feeds it and before the one that reads it.
// CHECK-LABEL: func.func private @kiln_cuda_gemm(i32, i32, i64, i64, i64, i64, !llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @linear_relu
// CHECK-SAME: (%[[X:.+]]: memref<?x64xbf16>, %[[W:.+]]: memref<128x64xbf16>, %[[OUT:.+]]: memref<?x128xbf16>, %[[STREAM:.+]]: !llvm.ptr)
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[N:.+]] = arith.constant 128 : i64
// CHECK-DAG: %[[K:.+]] = arith.constant 64 : i64
// CHECK-DAG: %[[YES:.+]] = arith.constant 1 : i32
// CHECK-DAG: %[[NO:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[BF16:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[M:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[XS:[^,]+]], %{{.+}} = gpu.alloc async
// CHECK: gpu.launch async
// CHECK: %[[P:[^,]+]], %{{.+}} = gpu.alloc async
// CHECK: %[[MI:.+]] = arith.index_cast %[[M]] : index to i64
// CHECK: memref.extract_aligned_pointer_as_index %[[XS]]
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: memref.extract_aligned_pointer_as_index %[[P]]
// CHECK: call @kiln_cuda_gemm(%[[BF16]], %[[BF16]], %[[ONE]], %[[MI]], %[[N]], %[[K]], %{{.+}}, %[[NO]], %{{.+}}, %[[YES]], %[[NULL]], %[[NO]], %{{.+}}, %[[STREAM]])
// The scaled input goes once the product has read it (stream-ordered).
// CHECK-NEXT: gpu.dealloc async [%{{.+}}] %[[XS]] :
// CHECK: gpu.launch async
fx.graph @linear_relu(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<?x128xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %s = loop.pointwise(%n) : tensor<?x64xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : tensor<?x64xbf16>
    %d = arith.addf %v, %v : bf16
    loop.yield %d : bf16
  }
  %y = loop.matmul(%n) %s, %w {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16>
  %r = loop.pointwise(%n) : tensor<?x128xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %y[%i, %j] : tensor<?x128xbf16>
    %z = arith.constant 0.0 : bf16
    %m = arith.maximumf %v, %z : bf16
    loop.yield %m : bf16
  }
  fx.output %r : tensor<?x128xbf16>
}

// -----

// Batches multiply into one count; the transposes are flags.
// CHECK-LABEL: func.func @scores
// CHECK-DAG: %[[F32:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-DAG: %[[BATCH:.+]] = arith.constant 24 : i64
// CHECK: call @kiln_cuda_gemm(%[[F32]], %[[F32]], %[[BATCH]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]],
fx.graph @scores(%q: tensor<2x12x16x8xf32>, %k: tensor<2x12x16x8xf32>) -> tensor<2x12x16x16xf32> {
  %y = loop.matmul %q, %k {transpose_rhs} : tensor<2x12x16x8xf32>, tensor<2x12x16x8xf32> -> tensor<2x12x16x16xf32>
  fx.output %y : tensor<2x12x16x16xf32>
}

// -----

fx.graph @f64(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>) -> tensor<4x4xf64> {
  // expected-error @+1 {{'loop.matmul' op multiplies 'f64' matrices, which have no GPU GEMM (f32, f16 and bf16 do)}}
  %y = loop.matmul %a, %b : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  fx.output %y : tensor<4x4xf64>
}

// -----

// Epilogues the library applies: a bias along the columns and relu, in f32
// before the rounding; an unrounded f32 product of bf16 operands.
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%{{.+}}: memref<8x64xbf16>, %{{.+}}: memref<64x32xbf16>, %[[BIAS:.+]]: memref<32xbf16>, %{{.+}}: memref<8x32xbf16>, %{{.+}}: memref<8x32xf32>, %{{.+}}: !llvm.ptr)
// CHECK-DAG: %[[RELU:.+]] = arith.constant 1 : i32
// CHECK-DAG: %[[F32:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[BF16:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[B:.+]] = memref.extract_aligned_pointer_as_index %[[BIAS]]
// CHECK: %[[BI:.+]] = arith.index_cast %[[B]]
// CHECK: %[[BP:.+]] = llvm.inttoptr %[[BI]]
// CHECK: call @kiln_cuda_gemm(%[[BF16]], %[[BF16]], {{.+}}, %[[BP]], %[[RELU]],
// CHECK: call @kiln_cuda_gemm(%[[BF16]], %[[F32]], {{.+}}, %[[NULL]], %[[F32]],
fx.graph @bias_relu(%x: tensor<8x64xbf16>, %w: tensor<64x32xbf16>, %bias: tensor<32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xf32>) {
  %y = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xbf16> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %b = loop.load %bias[%j] : tensor<32xbf16>
    %e = arith.extf %b : bf16 to f32
    %s = arith.addf %e, %sum : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    %t = arith.truncf %r : f32 to bf16
    loop.yield %t : bf16
  }
  %p = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xf32>
  fx.output %y, %p : tensor<8x32xbf16>, tensor<8x32xf32>
}

// -----

fx.graph @general_epilogue(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'loop.matmul' op has an epilogue that the GPU GEMM cannot apply (it adds a bias along the columns, then relu, and rounds)}}
  %y = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %e = math.exp %sum : f32
    loop.yield %e : f32
  }
  fx.output %y : tensor<8x32xf32>
}

// -----

// A frozen constant is a read-only host global whose device copy the
// runtime makes at its first use; kernels read the copy.
// CHECK-LABEL: func.func @frozen_constant_on_gpu
// CHECK: %[[HOST:.+]] = memref.get_global @kiln_constant : memref<2xf32>
// CHECK: %[[COPY:.+]] = call @kiln_cuda_constant(%{{.+}}, %c8_i64, %arg2) : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK: %[[BUFFER:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<2xf32>
// CHECK: gpu.launch
// CHECK: memref.assume_alignment %[[BUFFER]], 16
fx.graph @frozen_constant_on_gpu(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = loop.pointwise : tensor<2xf32> {
  ^bb0(%i0: index):
    %a = loop.load %x[%i0] : tensor<2xf32>
    %b = loop.load %w[%i0] : tensor<2xf32>
    %c = arith.mulf %a, %b : f32
    loop.yield %c : f32
  }
  fx.output %0 : tensor<2xf32>
}
