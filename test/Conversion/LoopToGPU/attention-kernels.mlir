// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu=warpgroup-mma -verify-diagnostics | FileCheck %s --check-prefix=WGMMA

// Attention as one kernel: 128 threads per block of 128 queries, the
// queries (128 rows of 64 + 8 padding elements) and two stages of 64 keys
// and values each in dynamic workgroup memory ((128 + 4 x 64) x 72 x 2
// bytes), copied with cp.async; causal blocks take the longest rows first
// and stop at their last query's key. Each block of keys: the copies of the
// next one, the scores on tensor cores (ldmatrix of the keys as stored),
// masks only where a block crosses the keys' end or the diagonal, the
// rows' maxima across the 4 lanes of a row, the probabilities as one FMA
// and one exp2, their product with the values (read transposed). The sums
// over the rows' totals are stored two bf16 at a time.
// CHECK-LABEL: func.func @causal
// CHECK-NOT: kiln_cuda_gemm
// CHECK: arith.ceildivui
// CHECK: gpu.launch async {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size %c55296_i32
// CHECK: arith.subi
// CHECK: arith.minui
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg, %{{.+}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: scf.if %{{.+}} -> (f32
// CHECK: arith.cmpi uge
// CHECK: arith.cmpi ugt
// CHECK: arith.select
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: math.fma
// CHECK: math.exp2
// CHECK: arith.truncf %{{.+}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: gpu.shuffle xor
// CHECK: arith.divf
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x4x?x64xbf16>, vector<2xbf16>
// CHECK: gpu.terminator
// With warpgroup-mma (sm_90a), heads of a multiple of 64 multiply with
// wgmma: two warpgroups of 64 queries, blocks of 64 keys for a head of 64,
// the tiles swizzled ((128 + 4 x 64) x 64 x 2 bytes of queries and two
// stages of keys and values, and 1 KiB to align them). After cp.async, a
// proxy fence; the scores are wgmma m64n64k16 from both tiles'
// descriptors, the probabilities' product wgmma m64n64k16 with its lhs in
// registers. Heads of 128 take blocks of 128 keys.
// WGMMA-LABEL: func.func @causal
// WGMMA: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c50176_i32
// WGMMA: scf.for
// WGMMA: nvvm.cp.async.wait.group 0
// WGMMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGMMA-NEXT: gpu.barrier
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA: math.exp2
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-4: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA: scf.yield
fx.graph @causal(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %l = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %o = loop.attention(%n, %l) %q, %k, %v {scale = 0.125 : f64, causal} : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
  fx.output %o : tensor<?x4x?x64xbf16>
}

// -----

// Above a head size of 64, key blocks are 32 keys ((128 + 4 x 32) x 136 x 2
// bytes) and the queries' fragments are read from workgroup memory for each
// block; f16 fragments are pairs of halves. Without `causal` no key is
// hidden but past the keys' end; a scale of 0 scales the scores before
// their maxima.
// CHECK-LABEL: func.func @wide_heads
// CHECK: dynamic_shared_memory_size %c69632_i32
// CHECK-NOT: arith.minui
// CHECK: scf.for
// CHECK: nvvm.ldmatrix
// CHECK: llvm.bitcast %{{.+}} : i32 to vector<2xf16>
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK: arith.mulf
// CHECK: arith.cmpi ugt
// CHECK: scf.if %{{.+}} -> (f32
// CHECK: arith.cmpi uge
// CHECK-NOT: arith.ori
// CHECK: scf.yield
// WGMMA-LABEL: func.func @wide_heads
// WGMMA-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>
// WGMMA-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
fx.graph @wide_heads(%q: tensor<2x300x128xf16>, %k: tensor<2x70x128xf16>) -> tensor<2x300x128xf16> {
  %o = loop.attention %q, %k, %k {scale = 0.0 : f64} : tensor<2x300x128xf16>, tensor<2x70x128xf16>, tensor<2x70x128xf16> -> tensor<2x300x128xf16>
  fx.output %o : tensor<2x300x128xf16>
}

// -----

// A scores region runs in registers on each scaled score of a block, its
// loads at the score's batch indices and its query and key clamped to the
// last ones, its functions approximate (afn); the scores are then brought
// to base 2 and the softmax's FMA multiplies by 1.
// CHECK-LABEL: func.func @soft_capped
// CHECK-SAME: (%{{.+}}: memref<2x4x100x64xbf16>, %[[MASK:.+]]: memref<2x100x100xf32>
// CHECK: gpu.launch
// CHECK: %[[VIEW:.+]] = memref.assume_alignment %[[MASK]]
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: %[[ROW:.+]] = arith.minui
// CHECK: arith.minui
// CHECK: %[[KEY:.+]] = arith.minui
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: %[[D:.+]] = arith.divf %[[SCALED]], %{{.+}} fastmath<afn> : f32
// CHECK: math.tanh %[[D]] fastmath<afn>
// CHECK: memref.load %[[VIEW]][%{{.+}}, %[[ROW]], %[[KEY]]] : memref<2x100x100xf32>
// CHECK: %[[S:.+]] = arith.addf
// CHECK: arith.mulf %[[S]], %{{.+}} : f32
// CHECK: scf.if %{{.+}} -> (f32
// CHECK: math.fma
// CHECK: math.exp2
// WGMMA-LABEL: func.func @soft_capped
// WGMMA: nvvm.wgmma.mma_async
// WGMMA: math.tanh
// WGMMA: memref.load
fx.graph @soft_capped(%q: tensor<2x4x100x64xbf16>, %mask: tensor<2x100x100xf32>) -> tensor<2x4x100x64xbf16> {
  %cap = arith.constant 20.0 : f32
  %o = loop.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16> -> tensor<2x4x100x64xbf16> scores {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %score: f32):
    %d = arith.divf %score, %cap : f32
    %t = math.tanh %d : f32
    %c = arith.mulf %t, %cap : f32
    %m = loop.load %mask[%i0, %i2, %i3] : tensor<2x100x100xf32>
    %s = arith.addf %c, %m : f32
    loop.yield %s : f32
  }
  fx.output %o : tensor<2x4x100x64xbf16>
}

// -----

// The logsumexp, where asked for: the first lane of each row's quad stores
// (max · scale + log2(total)) · ln 2, +inf for a row without keys.
// CHECK-LABEL: func.func @logsumexp
// CHECK-SAME: (%{{.+}}: memref<2x4x100x64xbf16>, %{{.+}}: memref<2x4x100x64xbf16>, %[[LSE:.+]]: memref<2x4x100xf32>
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: %[[LSEVIEW:.+]] = memref.assume_alignment %[[LSE]]
// CHECK: math.log2
// CHECK: arith.cmpf ogt
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[LSEVIEW]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<2x4x100xf32>
// WGMMA-LABEL: func.func @logsumexp
// WGMMA: nvvm.wgmma.mma_async
// WGMMA: math.log2
// WGMMA: memref.store {{.*}} : memref<2x4x100xf32>
fx.graph @logsumexp(%q: tensor<2x4x100x64xbf16>) -> (tensor<2x4x100x64xbf16>, tensor<2x4x100xf32>) {
  %o:2 = loop.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16> -> tensor<2x4x100x64xbf16>, tensor<2x4x100xf32>
  fx.output %o#0, %o#1 : tensor<2x4x100x64xbf16>, tensor<2x4x100xf32>
}

// -----

// What the kernel does not compute is an error here:
// kiln-loop-expand-attention writes it out first.
fx.graph @f32_attention(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{kiln-loop-to-gpu: no kernel computes this attention (f16 or bf16 operands with equal head sizes, a multiple of 16 up to 128): kiln-loop-expand-attention writes it out}}
  %o = loop.attention %q, %q, %q {scale = 0.25 : f64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  fx.output %o : tensor<2x8x16xf32>
}
