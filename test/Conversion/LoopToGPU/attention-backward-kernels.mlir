// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu="warpgroup-mma" -verify-diagnostics | FileCheck %s --check-prefix=WGMMA

// Attention's gradients as two kernels of 128 threads. The keys' kernel:
// a block of 64 keys and values ((64 + 8) x 2 x 64 x 2 bytes) and two stages
// of 64 queries, dO, logsumexp and delta ((2 x 64 x 72 + 256) x 2 x 2
// bytes); causal blocks start at their first key's block of queries. The
// statistics are copied 4 bytes a thread; X = k·qᵀ and Y = v·dOᵀ on tensor
// cores; the scores region at the clamped (query, key); p = exp2(...), 0
// where hidden; dV += p·dO and dK += dS·q, the columns read transposed;
// dK scaled by 0.125 when stored. The queries' kernel (55296 bytes: no
// statistics in its stages) stops at its last query's key block.
// CHECK-LABEL: func.func @gradients
// CHECK: gpu.launch async {{.*}} dynamic_shared_memory_size %c56320_i32
// CHECK: arith.divui %{{.+}}, %c64
// CHECK: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 4, cache = ca
// CHECK: scf.for
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: llvm.load %{{.+}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: memref.load %{{.+}} : memref<2x4x100x100xf32>
// CHECK: math.exp2
// CHECK: arith.cmpi ugt
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: scf.yield
// CHECK: arith.constant 1.250000e-01 : f32
// CHECK: vector.store %{{.+}} : memref<2x4x100x64xbf16>, vector<2xbf16>
// CHECK: gpu.launch async {{.*}} dynamic_shared_memory_size %c55296_i32
// CHECK: arith.minui
// CHECK: memref.load %{{.+}} : memref<2x4x100xf32>
// CHECK: scf.for
// CHECK: math.exp2
// With warpgroup MMA, one kernel takes 128 keys in two warpgroups (256
// threads) over swizzled tiles, between a kernel that zeros f32 sums of dQ
// and one that rounds them (4 elements a thread): 2 x 128 x 64 keys and values, two stages of
// 2 x 64 x 64 queries and dO with their statistics, each rounded up to
// 1024 bytes, a 128 x 64 tile of dS, two stages of two 64 x (32 + 8) f32
// tiles of sums,
// 1024 bytes to align (125952 bytes). Each block first waits for the bulk
// reductions of the block before the previous one to have read their sums.
// The tiles' addresses are taken again
// in each block (an opaque move), so that their descriptors are not
// hoisted out of the loop. X and Y: wgmma m64n64 of K-major
// tiles. dS goes to its tile before a fence of the async proxy and a
// barrier; dV and dK: wgmma with their lhs in registers; dQ: each
// warpgroup's half of the head (m64n32) over all 128 keys, dS and the keys
// read transposed; its products go to the warpgroup's tile and, a row per
// thread, into the sums by bulk reductions of 128 bytes; every thread
// closes a group of them.
// WGMMA-LABEL: func.func @gradients
// WGMMA: gpu.alloc async {{.*}} () : memref<2x4x100x64xf32>
// WGMMA: gpu.launch async
// WGMMA: vector.store %{{.+}} : memref<2x4x100x64xf32>, vector<4xf32>
// WGMMA: gpu.launch async {{.*}} threads({{.*}}) in (%{{.+}} = %c256{{.*}} dynamic_shared_memory_size %c125952_i32
// WGMMA: scf.for
// WGMMA: nvvm.cp.async.bulk.wait_group 1 {read}
// WGMMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// WGMMA: gpu.barrier
// WGMMA: llvm.inline_asm has_side_effects asm_dialect = att "mov.b64 $0, $1;", "=l,l"
// WGMMA-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// WGMMA: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA: math.exp2
// WGMMA: llvm.store %{{.+}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<3>
// WGMMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// WGMMA-NEXT: gpu.barrier
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// WGMMA: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA: llvm.store %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// WGMMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// WGMMA-NEXT: gpu.barrier
// WGMMA: scf.if
// WGMMA: llvm.inline_asm has_side_effects {{.*}}"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], 128;", "l,l"
// WGMMA-NEXT: }
// WGMMA-NEXT: nvvm.cp.async.bulk.commit.group
// WGMMA: scf.yield
// WGMMA: nvvm.cp.async.bulk.wait_group 0
// WGMMA-NOT: {read}
// WGMMA: vector.store %{{.+}} : memref<2x4x100x64xbf16>, vector<2xbf16>
// WGMMA: gpu.launch async
// WGMMA: vector.load %{{.+}} : memref<2x4x100x64xf32>, vector<4xf32>
// WGMMA: arith.mulf %{{.+}}, %{{.+}} : vector<4xf32>
// WGMMA: arith.truncf %{{.+}} : vector<4xf32> to vector<4xbf16>
// WGMMA: vector.store %{{.+}} : memref<2x4x100x64xbf16>, vector<4xbf16>
// WGMMA: gpu.dealloc async
fx.graph @gradients(%q: tensor<2x4x100x64xbf16>, %do: tensor<2x4x100x64xbf16>, %lse: tensor<2x4x100xf32>, %delta: tensor<2x4x100xf32>, %mask: tensor<2x4x100x100xf32>) -> (tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>) {
  %g:3 = loop.attention_backward %q, %q, %q, %do, %lse, %delta {scale = 0.125 : f64, causal} : tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100xf32>, tensor<2x4x100xf32> -> tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16> scores {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %score: f32):
    %m = loop.load %mask[%i0, %i1, %i2, %i3] : tensor<2x4x100x100xf32>
    %s = arith.addf %score, %m : f32
    loop.yield %s : f32
  }
  fx.output %g#0, %g#1, %g#2 : tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>
}

// -----

// Heads under 64: two kernels, no sums. The keys' kernel ((40 x 64 x 2 +
// 2 x (2 x 64 x 40 + 256)) x 2 bytes) stores dK and dV; the queries' kernel
// (40 x 64 x 6 x 2 bytes: no statistics in its stages) loads its rows'
// statistics once, stops at its last query's key block and stores dQ.
// CHECK-LABEL: func.func @small_head_gradients
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch async {{.*}} dynamic_shared_memory_size %c31744_i32
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK-NOT: llvm.atomicrmw
// CHECK: scf.yield
// CHECK: vector.store %{{.+}} : memref<3x100x32xf16>, vector<2xf16>
// CHECK: gpu.launch async {{.*}} dynamic_shared_memory_size %c30720_i32
// CHECK: arith.minui
// CHECK: memref.load %{{.+}} : memref<3x100xf32>
// CHECK: scf.for
// CHECK: math.exp2
// CHECK: scf.yield
// CHECK: vector.store %{{.+}} : memref<3x100x32xf16>, vector<2xf16>
// CHECK-NOT: gpu.launch
fx.graph @small_head_gradients(%q: tensor<3x100x32xf16>, %lse: tensor<3x100xf32>) -> (tensor<3x100x32xf16>, tensor<3x100x32xf16>, tensor<3x100x32xf16>) {
  %g:3 = loop.attention_backward %q, %q, %q, %q, %lse, %lse {scale = 0.25 : f64, causal} : tensor<3x100x32xf16>, tensor<3x100x32xf16>, tensor<3x100x32xf16>, tensor<3x100x32xf16>, tensor<3x100xf32>, tensor<3x100xf32> -> tensor<3x100x32xf16>, tensor<3x100x32xf16>, tensor<3x100x32xf16>
  fx.output %g#0, %g#1, %g#2 : tensor<3x100x32xf16>, tensor<3x100x32xf16>, tensor<3x100x32xf16>
}

// -----

// Heads of 128 with warpgroup MMA (224256 bytes of workgroup memory): X
// and Y over two 64-element blocks of the head, dV and dK as m64n128
// products, and each warpgroup's half of dQ over all 128 keys. Without
// it, mma.sync in two kernels, no sums.
// WGMMA-LABEL: func.func @warpgroup_gradients
// WGMMA: dynamic_shared_memory_size %c224256_i32
// WGMMA-COUNT-16: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// WGMMA: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// WGMMA-COUNT-8: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// WGMMA: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], 256;
// CHECK-LABEL: func.func @warpgroup_gradients
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch async {{.*}} dynamic_shared_memory_size %c105472_i32
// CHECK-NOT: wgmma
// CHECK: nvvm.mma.sync
// CHECK: gpu.launch async {{.*}} dynamic_shared_memory_size %c104448_i32
// CHECK-NOT: wgmma
fx.graph @warpgroup_gradients(%q: tensor<1x100x128xf16>, %lse: tensor<1x100xf32>) -> (tensor<1x100x128xf16>, tensor<1x100x128xf16>, tensor<1x100x128xf16>) {
  %g:3 = loop.attention_backward %q, %q, %q, %q, %lse, %lse {scale = 0.125 : f64} : tensor<1x100x128xf16>, tensor<1x100x128xf16>, tensor<1x100x128xf16>, tensor<1x100x128xf16>, tensor<1x100xf32>, tensor<1x100xf32> -> tensor<1x100x128xf16>, tensor<1x100x128xf16>, tensor<1x100x128xf16>
  fx.output %g#0, %g#1, %g#2 : tensor<1x100x128xf16>, tensor<1x100x128xf16>, tensor<1x100x128xf16>
}

// -----

// What the kernels do not compute is an error here:
// kiln-loop-expand-attention writes it out first.
fx.graph @f32_gradients(%q: tensor<2x8x16xf32>, %lse: tensor<2x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{kiln-loop-to-gpu: no kernel computes these attention gradients (f16 or bf16 operands with equal head sizes, a multiple of 16 up to 128): kiln-loop-expand-attention writes them out}}
  %g:3 = loop.attention_backward %q, %q, %q, %q, %lse, %lse {scale = 0.25 : f64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
  fx.output %g#0 : tensor<2x8x16xf32>
}
