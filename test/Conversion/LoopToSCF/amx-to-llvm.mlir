// RUN: kiln-opt %s -split-input-file --kiln-amx-to-llvm | FileCheck %s

// Tiles that a loop carries become x86_amx values, and the tile ops LLVM's
// AMX intrinsics; the memrefs they read stay memrefs (as descriptors
// through casts, for the later conversions).
// CHECK-LABEL: func.func @sums_over_k
// CHECK: %[[ZERO:.+]] = llvm.call_intrinsic "llvm.x86.tilezero.internal"
// CHECK: scf.for {{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (!llvm.x86_amx) {
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// CHECK: %[[NEXT:.+]] = llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"({{.+}}, %[[ACC]], {{.+}})
// CHECK: scf.yield %[[NEXT]] : !llvm.x86_amx
// CHECK: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// CHECK-NOT: amx.
func.func @sums_over_k(%a: memref<16x64xbf16>, %b: memref<32x32xbf16>, %c: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = amx.tile_zero : !amx.tile<16x16xf32>
  %sums = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (!amx.tile<16x16xf32>) {
    %k = arith.muli %i, %c32 : index
    %p = arith.muli %i, %c16 : index
    %ta = amx.tile_load %a[%c0, %k] : memref<16x64xbf16> into !amx.tile<16x32xbf16>
    %tb = amx.tile_load %b[%p, %c0] : memref<32x32xbf16> into !amx.tile<16x32xbf16>
    %next = amx.tile_mulf %ta, %tb, %acc : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
    scf.yield %next : !amx.tile<16x16xf32>
  }
  amx.tile_store %c[%c0, %c0], %sums : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

// Everything else is left alone: vectors, loops without tiles.
// CHECK-LABEL: func.func @no_tiles
// CHECK: scf.for {{.+}} -> (vector<4xf32>)
// CHECK: arith.addf {{.+}} : vector<4xf32>
func.func @no_tiles(%v: vector<4xf32>, %n: index) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %v) -> (vector<4xf32>) {
    %s = arith.addf %acc, %v : vector<4xf32>
    scf.yield %s : vector<4xf32>
  }
  return %r : vector<4xf32>
}
