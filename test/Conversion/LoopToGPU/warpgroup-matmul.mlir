// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='choose-products=false matmul-kernels warpgroup-mma' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='choose-products=false matmul-kernels' | FileCheck %s --check-prefix=SYNC
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='choose-products=false matmul-kernels warpgroup-mma warpgroup-tile-n=256' | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='choose-products=false matmul-kernels warpgroup-mma warpgroup-tile-n=128' | FileCheck %s --check-prefix=NARROW

// With warpgroup-mma, a 16-bit product is sm_90a's warpgroup kernel: one
// warpgroup per 128x128 tile, three stages of both operands' 128 x 64 tiles
// (3 x 32 KiB, and 1 KiB to start them at a multiple of 1024 bytes) in
// dynamic workgroup memory, copied with cp.async two steps ahead into
// 128-byte swizzled rows (a piece's place: its index XOR its row's modulo
// 8), operands stored along K (an lhs [M, K], an rhs [N, K]) as they are
// stored; each step waits for its copies, fences them for the async proxy,
// issues 8 wgmma m64n128k16 (descriptors: 128-byte swizzle, 1024 bytes
// between groups of 8 rows) and waits only for the step before; the
// epilogue applies to the f32 sums (at clamped indices, so that its loads
// stay inside at the edges) and a thread's neighbouring pair of results is
// one store where both are inside and rows hold an even number of elements.
// Without the option it is mma.sync's.
// CHECK-LABEL: func.func @linear_gelu
// CHECK-NOT: kiln_cuda_gemm
// CHECK: gpu.launch async {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size %c99328_i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: llvm.ptrtoint %{{.+}} : !llvm.ptr<3> to i64
// CHECK: arith.andi %{{.+}}, %c-1024_i64 : i64
// CHECK: arith.xori
// CHECK: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg, %{{.+}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.ori %{{.+}}, %c4611686293305360384_i64{{[_0-9]*}} : i64
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.extractvalue
// CHECK: arith.minui
// CHECK: math.tanh
// CHECK: llvm.extractvalue
// CHECK: math.tanh
// CHECK: scf.if
// CHECK: vector.from_elements %{{.+}}, %{{.+}} : vector<2xbf16>
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x256xbf16>, vector<2xbf16>
// CHECK: } else {
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x256xbf16>
// CHECK: gpu.terminator
// SYNC-LABEL: func.func @linear_gelu
// SYNC-NOT: wgmma
// SYNC: nvvm.mma.sync
fx.graph @linear_gelu(%x: tensor<?x1024xbf16>, %w: tensor<256x1024xbf16>, %bias: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  %y = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x1024xbf16>, tensor<256x1024xbf16> -> tensor<?x256xbf16> epilogue {
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

// f16 batches: a block per tile of each batch's product.
// CHECK-LABEL: func.func @batched_f16
// CHECK: nvvm.wgmma.mma_async {{.*}}, A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<4x72x136xf16>
fx.graph @batched_f16(%a: tensor<4x72x48xf16>, %b: tensor<4x136x48xf16>) -> tensor<4x72x136xf16> {
  %y = loop.matmul %a, %b {transpose_rhs} : tensor<4x72x48xf16>, tensor<4x136x48xf16> -> tensor<4x72x136xf16>
  fx.output %y : tensor<4x72x136xf16>
}

// -----

// Operands stored along M or N (a transposed lhs, an rhs stored [K, N])
// are blocks of 64 rows along K of 64 elements, 8 KiB apart (the leading
// byte offset of their descriptors), which wgmma reads transposed.
// CHECK-LABEL: func.func @rhs_along_n
// CHECK: arith.ori %{{.+}}, %c4611686293305360384_i64{{[_0-9]*}} : i64
// CHECK: arith.ori %{{.+}}, %c4611686293338849280_i64{{[_0-9]*}} : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-LABEL: func.func @lhs_along_m
// CHECK: nvvm.wgmma.mma_async {{.*}}, A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
fx.graph @rhs_along_n(%a: tensor<72x48xbf16>, %b: tensor<48x136xbf16>) -> tensor<72x136xbf16> {
  %y = loop.matmul %a, %b : tensor<72x48xbf16>, tensor<48x136xbf16> -> tensor<72x136xbf16>
  fx.output %y : tensor<72x136xbf16>
}

fx.graph @lhs_along_m(%a: tensor<48x72xbf16>, %b: tensor<136x48xbf16>) -> tensor<72x136xbf16> {
  %y = loop.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<48x72xbf16>, tensor<136x48xbf16> -> tensor<72x136xbf16>
  fx.output %y : tensor<72x136xbf16>
}

// -----

// A result of known sizes with a tile of 128 x 256 for every SM of an H100
// (16 x 16 of them here) takes two warpgroups per block: 256 threads, four
// stages of a 128 x 64 lhs tile and a 256 x 64 rhs tile (4 x 48 KiB and
// 1 KiB), each warpgroup issuing wgmma m64n256k16 for its half of 64 rows
// (the lhs descriptors start 8 KiB apart per warpgroup). Copies run two
// steps ahead, into the stage of the step two before: a warpgroup waits
// for its own wgmmas only, so the other may still read the stage of the
// step before until the next barrier. With warpgroup-tile-n=128 the tiles
// stay 128 x 128.
// CHECK-LABEL: func.func @wide_tiles
// CHECK: gpu.launch async {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c197632_i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: arith.divui %{{.+}}, %c128{{[_0-9]*}} : index
// CHECK: arith.muli %{{.+}}, %c8192{{[_0-9]*}} : index
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c2{{[_0-9]*}} : index
// CHECK: arith.remui %[[AHEAD]], %c4{{[_0-9]*}} : index
// CHECK: arith.muli %{{.+}}, %c49152{{[_0-9]*}} : index
// NARROW-LABEL: func.func @wide_tiles
// NARROW: dynamic_shared_memory_size %c99328_i32
// NARROW: <m = 64, n = 128, k = 16>
// NARROW-NOT: n = 256
fx.graph @wide_tiles(%a: tensor<2048x512xbf16>, %b: tensor<4096x512xbf16>) -> tensor<2048x4096xbf16> {
  %y = loop.matmul %a, %b {transpose_rhs} : tensor<2048x512xbf16>, tensor<4096x512xbf16> -> tensor<2048x4096xbf16>
  fx.output %y : tensor<2048x4096xbf16>
}

// -----

// Wide tiles where asked for: a tile of 128 x 256 over a result of 72 x 136
// keeps its stores inside, and an rhs stored along N is four blocks of 64
// elements.
// WIDE-LABEL: func.func @forced_wide_tiles
// WIDE: threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c197632_i32
// WIDE: arith.ori %{{.+}}, %c4611686293338849280_i64{{[_0-9]*}} : i64
// WIDE: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// WIDE: arith.cmpi ult
// WIDE: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<72x136xbf16>
fx.graph @forced_wide_tiles(%a: tensor<72x48xbf16>, %b: tensor<48x136xbf16>) -> tensor<72x136xbf16> {
  %y = loop.matmul %a, %b : tensor<72x48xbf16>, tensor<48x136xbf16> -> tensor<72x136xbf16>
  fx.output %y : tensor<72x136xbf16>
}
