// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu -verify-diagnostics | FileCheck %s

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

// What the kernels do not compute is an error here:
// kiln-loop-expand-attention writes it out first.
fx.graph @f32_gradients(%q: tensor<2x8x16xf32>, %lse: tensor<2x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{kiln-loop-to-gpu: no kernel computes these attention gradients (f16 or bf16 operands with equal head sizes, a multiple of 16 up to 128): kiln-loop-expand-attention writes them out}}
  %g:3 = loop.attention_backward %q, %q, %q, %q, %lse, %lse {scale = 0.25 : f64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
  fx.output %g#0 : tensor<2x8x16xf32>
}
