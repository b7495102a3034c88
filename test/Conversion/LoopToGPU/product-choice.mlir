// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='matmul-kernels warpgroup-mma' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='matmul-kernels warpgroup-mma choose-products=false' | FileCheck %s --check-prefix=KERNEL
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='matmul-kernels' | FileCheck %s --check-prefix=SYNC

// A product that the GEMM library computes too (no epilogue, or a bias and
// relu) runs as the faster of Kiln's kernel and the library's: the runtime
// names its choice for the shape (kiln_cuda_product_choice, at a site of
// its own), or -1 when it has none; then three runs of each candidate,
// each between marks (candidate 0 the library's, 1 the kernel), queue
// before kiln_cuda_product_decide keeps the faster. The work after the
// choice depends on the stream as before it.
// CHECK: llvm.mlir.global internal @kiln_product_site_{{[0-9]+}}(0 : i8)
// CHECK-LABEL: func.func @plain
// CHECK: %[[SITEPTR:[^ ]+]] = llvm.mlir.addressof @kiln_product_site_{{[0-9]+}} : !llvm.ptr
// CHECK: %[[CHOICE:[^ ]+]] = call @kiln_cuda_product_choice(%[[SITEPTR]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[STREAM:[^ ]+]]) : (!llvm.ptr, i64, i64, i64, i64, !llvm.ptr) -> i32
// CHECK: %[[UNDECIDED:[^ ]+]] = arith.cmpi slt, %[[CHOICE]], %{{.+}} : i32
// CHECK: scf.if %[[UNDECIDED]] {
// CHECK: scf.for %{{.+}} = %{{.+}} to %c3{{[_0-9]*}} step
// CHECK: func.call @kiln_cuda_product_mark(%[[SITEPTR]], %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %[[STREAM]])
// CHECK: func.call @kiln_cuda_gemm(
// CHECK: func.call @kiln_cuda_product_mark(%[[SITEPTR]], %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %[[STREAM]])
// CHECK: func.call @kiln_cuda_product_mark(%[[SITEPTR]], %c1_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %[[STREAM]])
// CHECK: gpu.launch async [%[[TOKEN:[a-zA-Z0-9_]+]]] {{.*}} function(@kiln_matmul)
// CHECK: nvvm.wgmma.mma_async
// CHECK: func.call @kiln_cuda_product_mark(%[[SITEPTR]], %c1_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %[[STREAM]])
// CHECK: call @kiln_cuda_product_decide(%[[SITEPTR]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[STREAM]])
// CHECK: } else {
// CHECK: %[[PICKED:[^ ]+]] = arith.cmpi eq, %[[CHOICE]], %{{.+}} : i32
// CHECK: scf.if %[[PICKED]] {
// CHECK: gpu.launch async [%[[TOKEN]]] {{.*}} function(@kiln_matmul)
// CHECK: } else {
// CHECK: func.call @kiln_cuda_gemm(
// CHECK: gpu.launch async [%[[TOKEN]]] {{.*}} function(@kiln_pointwise
// KERNEL-LABEL: func.func @plain
// KERNEL-NOT: kiln_cuda_
// KERNEL: nvvm.wgmma.mma_async
// KERNEL-NOT: kiln_cuda_
// SYNC-LABEL: func.func @plain
// SYNC: call @kiln_cuda_product_choice
// SYNC: nvvm.mma.sync
fx.graph @plain(%a: tensor<72x48xbf16>, %b: tensor<136x48xbf16>) -> tensor<72x136xbf16> {
  %y = loop.matmul %a, %b {transpose_rhs} : tensor<72x48xbf16>, tensor<136x48xbf16> -> tensor<72x136xbf16>
  %z = loop.pointwise : tensor<72x136xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %y[%i, %j] : tensor<72x136xbf16>
    %w = arith.addf %v, %v : bf16
    loop.yield %w : bf16
  }
  fx.output %z : tensor<72x136xbf16>
}

// -----

// Each product has a site of its own. A product whose epilogue the library
// cannot apply (other than a bias and relu) weighs the kernel, which fuses
// it, against the library's product into a temporary, rounded to bf16 as
// eager's is (result dtype 2, no bias, no activation), followed by a kernel
// that applies the epilogue to it, a thread per element.
// CHECK-LABEL: func.func @two_products
// CHECK: llvm.mlir.addressof @[[FIRST:kiln_product_site_[0-9]+]] :
// CHECK: call @kiln_cuda_product_choice
// CHECK: llvm.mlir.addressof
// CHECK-NOT: @[[FIRST]]
// CHECK-SAME: : !llvm.ptr
// CHECK: call @kiln_cuda_product_choice
// CHECK-LABEL: func.func @tanh_epilogue
// CHECK: call @kiln_cuda_product_choice
// CHECK: scf.for
// CHECK: %[[SUMS:[^ ]+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<72x136xbf16>
// CHECK: %[[SUMSPTR:[^ ]+]] = memref.extract_aligned_pointer_as_index %[[SUMS]]
// CHECK: func.call @kiln_cuda_gemm(%c2_i32{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, {{.*}}, %c0_i32{{[_0-9]*}}, %{{.+}}, %{{.+}}) :
// CHECK: gpu.launch async {{.*}} function(@kiln_epilogue)
// CHECK: %[[ROUNDED:[^ ]+]] = memref.load %[[SUMS]][%{{.+}}, %{{.+}}] : memref<72x136xbf16>
// CHECK: arith.extf %[[ROUNDED]] : bf16 to f32
// CHECK: math.tanh
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<72x136xbf16>
// CHECK: gpu.dealloc async [%{{.+}}] %[[SUMS]] : memref<72x136xbf16>
// CHECK: gpu.launch async {{.*}} function(@kiln_matmul)
// CHECK: nvvm.wgmma.mma_async
// CHECK: call @kiln_cuda_product_decide
// KERNEL-LABEL: func.func @tanh_epilogue
// KERNEL-NOT: kiln_cuda_
// KERNEL: nvvm.wgmma.mma_async
// KERNEL-NOT: kiln_cuda_
fx.graph @two_products(%a: tensor<72x48xbf16>, %b: tensor<136x48xbf16>) -> (tensor<72x136xbf16>, tensor<72x136xbf16>) {
  %y = loop.matmul %a, %b {transpose_rhs} : tensor<72x48xbf16>, tensor<136x48xbf16> -> tensor<72x136xbf16>
  %z = loop.matmul %a, %b {transpose_rhs} : tensor<72x48xbf16>, tensor<136x48xbf16> -> tensor<72x136xbf16>
  fx.output %y, %z : tensor<72x136xbf16>, tensor<72x136xbf16>
}

fx.graph @tanh_epilogue(%a: tensor<72x48xbf16>, %b: tensor<136x48xbf16>) -> tensor<72x136xbf16> {
  %y = loop.matmul %a, %b {transpose_rhs} : tensor<72x48xbf16>, tensor<136x48xbf16> -> tensor<72x136xbf16> epilogue {
  ^bb0(%i: index, %j: index, %sum: f32):
    %t = math.tanh %sum : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<72x136xbf16>
}
