// RUN: kiln-opt %s -split-input-file --kiln-loop-to-gpu='matmul-kernels warpgroup-mma warpgroup-tma choose-products=false' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-gpu-pipeline='matmul-kernels warpgroup-tma choose-products=false format=isa' | FileCheck %s --check-prefix=PTX

// With warpgroup-tma, the host encodes each operand's tensor map (128-byte
// swizzled boxes of 64 elements along K: 128 rows of the lhs, 128 of the
// rhs here) and the launch receives them by value. The kernel is
// persistent: a block per SM (or per tile, where there are fewer) walks the
// tiles a grid apart, counting its steps over all of them. A block is three
// warpgroups: the first's first thread copies each step's tiles with TMA
// into one of six stages of 32 KiB once the stage's "empty" barrier says its
// readers are done with it (a use's parity XOR 1: the first use does not
// wait), expecting the stage's bytes on its "full" barrier; the two others
// take 232 registers each (the producer gives its own back, down to 40),
// wait for the stage's copies, issue the wgmmas of their 64 rows, and
// release the stage of the step before once its wgmmas are done (one
// arrival per warp: 8), and a tile's last before its epilogue, which stores
// as the other kernels' do while the producer copies the next tile's.
// CHECK-LABEL: func.func @linear
// CHECK: %[[LHSMEM:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: %[[RHSMEM:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: call @kiln_cuda_tensor_map(%[[RHSMEM]], %{{.+}}, %c2_i32, %{{.+}}, %{{.+}}, %{{.+}}, %c128_i32, %c64_i32)
// CHECK: %[[LHS:.+]] = llvm.load %[[RHSMEM]] {alignment = 64 : i64} : !llvm.ptr -> !llvm.array<16 x i64>
// CHECK: call @kiln_cuda_tensor_map(%[[LHSMEM]], %{{.+}}, %c2_i32{{.*}}, %{{.+}}, %{{.+}}, %{{.+}}, %c128_i32{{.*}}, %c64_i32{{.*}})
// CHECK: %[[RHS:.+]] = llvm.load %[[LHSMEM]]
// CHECK: %[[SMS:.+]] = call @kiln_cuda_multiprocessors() : () -> i32
// CHECK: %[[SMINDEX:.+]] = arith.index_castui %[[SMS]] : i32 to index
// CHECK: %[[BLOCKS:.+]] = arith.minui %[[TILES:.+]], %[[SMINDEX]] : index
// CHECK: gpu.launch async {{.*}} blocks(%[[BLOCK:.+]], %{{.+}}, %{{.+}}) in (%[[GRID:.+]] = %[[BLOCKS]], {{.*}} threads({{.*}}) in ({{.*}} = %c384{{.*}}) dynamic_shared_memory_size %c197728_i32
// CHECK: %[[LHSCOPY:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i64> {alignment = 64 : i64, kiln.tensor_map}
// CHECK-NEXT: llvm.store %[[LHS]], %[[LHSCOPY]]
// CHECK: %[[RHSCOPY:.+]] = llvm.alloca %{{.+}} x !llvm.array<16 x i64> {alignment = 64 : i64, kiln.tensor_map}
// CHECK-NEXT: llvm.store %[[RHS]], %[[RHSCOPY]]
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32 :
// CHECK: nvvm.mbarrier.init %{{.+}}, %c8_i32 :
// CHECK-COUNT-10: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for %{{.+}} = %[[BLOCK]] to %[[TILES]] step %[[GRID]] iter_args(%{{.+}} = %c0{{.*}}) -> (index)
// CHECK: scf.for
// CHECK: arith.xori %{{.+}}, %c1_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:.+]], %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[LHSCOPY]], %[[FULL]], box[%{{.+}}, %{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[RHSCOPY]], %[[FULL]], box
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister  increase 232
// CHECK: scf.for %{{.+}} = %[[BLOCK]] to %[[TILES]] step %[[GRID]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3>
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3>
// CHECK: vector.store
// CHECK: scf.yield %{{.+}} : index
// CHECK: gpu.terminator
// The kernel reads the maps as grid-constant parameters, and ptxas gets
// its register counts.
// PTX-LABEL: gpu.binary @kiln_matmul
// PTX-SAME: .param .align 64 .b8 kiln_matmul_param_{{[0-9]+}}[128]
// PTX-SAME: .param .align 64 .b8 kiln_matmul_param_{{[0-9]+}}[128]
// PTX-SAME: .maxntid 384, 1, 1
// PTX-SAME: setmaxnreg.inc.sync.aligned.u32 {{[^;]*}}232;
// PTX-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-SAME: setmaxnreg.dec.sync.aligned.u32 {{[^;]*}}40;
// PTX-SAME: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
fx.graph @linear(%x: tensor<?x1024xbf16>, %w: tensor<256x1024xbf16>) -> tensor<?x256xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  %y = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x1024xbf16>, tensor<256x1024xbf16> -> tensor<?x256xbf16>
  fx.output %y : tensor<?x256xbf16>
}

// -----

// Operands stored along M or N are copied as boxes of 64 x 64 (64 rows
// along K of 64 elements), two per 128-wide tile; a result with a wide tile
// for every SM takes 128 x 256 tiles in four stages of 48 KiB, whose rhs is
// four boxes.
// CHECK-LABEL: func.func @along_m_and_n
// CHECK: call @kiln_cuda_tensor_map({{.*}}, %c64_i32, %c64_i32{{.*}})
// CHECK: call @kiln_cuda_tensor_map({{.*}}, %c64_i32{{.*}}, %c64_i32{{.*}})
// CHECK: threads({{.*}}) in ({{.*}} = %c384{{.*}}) dynamic_shared_memory_size %c197696_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c49152_i32
// CHECK-COUNT-6: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: } else {
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
fx.graph @along_m_and_n(%a: tensor<512x2048xbf16>, %b: tensor<512x4096xbf16>) -> tensor<2048x4096xbf16> {
  %y = loop.matmul %a, %b {transpose_lhs} : tensor<512x2048xbf16>, tensor<512x4096xbf16> -> tensor<2048x4096xbf16>
  fx.output %y : tensor<2048x4096xbf16>
}
