// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='matmul-kernels choose-products=false' -verify-diagnostics | FileCheck %s

// With matmul-kernels, a product of bf16 matrices whose rows hold a multiple
// of 8 elements is Kiln's own tensor-core kernel: 128 threads per block, a
// block per 128x128 tile, four stages of both operands' tiles (rows of 32 +
// 8 padding elements: 4 x 2 x 128 x 40 x 2 bytes) in dynamic workgroup
// memory, copied with cp.async (three steps ahead: the prologue's three
// groups, then one per step) and read with ldmatrix; mma.sync m16n8k16 on
// bf16 accumulates f32 sums, which go through the epilogue (a bias, a
// GELU-like chain) to the result.
// CHECK-LABEL: func.func @linear_gelu
// CHECK-NOT: kiln_cuda_gemm
// CHECK: gpu.launch async {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size %c81920_i32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg, %{{.+}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<256xbf16>
// CHECK: math.tanh
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x256xbf16>
// CHECK: gpu.terminator
fx.graph @linear_gelu(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %bias: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %y = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x64xbf16>, tensor<256x64xbf16> -> tensor<?x256xbf16> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %b = loop.load %bias[%j] : tensor<256xbf16>
    %bf = arith.extf %b : bf16 to f32
    %s = arith.addf %sum, %bf : f32
    %t = math.tanh %s : f32
    %g = arith.mulf %s, %t : f32
    %r = arith.truncf %g : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<?x256xbf16>
}

// -----

// Operands stored along K (a transposed lhs, an rhs stored [K, N]) are
// tiles of 32 rows of 128 + 8 elements (4 x 2 x 32 x 136 x 2 bytes), read
// by transposing ldmatrix; f16 fragments are pairs of halves; batches are
// blocks; a product without an epilogue rounds its sums.
// CHECK-LABEL: func.func @batched_along_k
// CHECK: dynamic_shared_memory_size %c69632_i32
// CHECK: nvvm.ldmatrix %{{.+}} {{{.*}}layout = #nvvm.mma_layout<col>
// CHECK: llvm.bitcast %{{.+}} : i32 to vector<2xf16>
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<4x72x136xf16>
fx.graph @batched_along_k(%a: tensor<4x48x72xf16>, %b: tensor<4x48x136xf16>) -> tensor<4x72x136xf16> {
  %y = loop.matmul %a, %b {transpose_lhs} : tensor<4x48x72xf16>, tensor<4x48x136xf16> -> tensor<4x72x136xf16>
  fx.output %y : tensor<4x72x136xf16>
}

// -----

// Rows of 4 elements do not copy in 16-byte pieces, and f32 has no such
// kernel: both stay GEMM library calls.
// CHECK-LABEL: func.func @library_products
// CHECK-NOT: nvvm.mma.sync
// CHECK: call @kiln_cuda_gemm
// CHECK: call @kiln_cuda_gemm
fx.graph @library_products(%a: tensor<16x32xbf16>, %b: tensor<32x4xbf16>, %c: tensor<16x32xf32>, %d: tensor<32x64xf32>) -> (tensor<16x4xbf16>, tensor<16x64xf32>) {
  %y = loop.matmul %a, %b : tensor<16x32xbf16>, tensor<32x4xbf16> -> tensor<16x4xbf16>
  %z = loop.matmul %c, %d : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  fx.output %y, %z : tensor<16x4xbf16>, tensor<16x64xf32>
}

// -----

// An epilogue that the library cannot apply, on a product the kernels do
// not compute, is an error.
fx.graph @unaligned_epilogue(%a: tensor<16x32xbf16>, %b: tensor<32x4xbf16>) -> tensor<16x4xbf16> {
  // expected-error @+1 {{'loop.matmul' op has an epilogue that the GPU GEMM cannot apply}}
  %y = loop.matmul %a, %b : tensor<16x32xbf16>, tensor<32x4xbf16> -> tensor<16x4xbf16> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %t = math.tanh %sum : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<16x4xbf16>
}
