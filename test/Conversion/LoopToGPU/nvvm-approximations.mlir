// RUN: kiln-opt %s -split-input-file --kiln-nvvm-approximations | FileCheck %s

// Tests that f32 exp2 and reciprocals marked afn in kernels become the
// flush-to-zero NVVM approximations, vectors element by element, and that
// nothing else changes.
// CHECK-LABEL: llvm.func @kernel
// CHECK: gpu.launch
// CHECK: %[[E:.+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X:.+]]) : (f32) -> f32
// CHECK: %[[R:.+]] = nvvm.rcp.approx.ftz.f %[[X]] : f32
// CHECK: %[[V0:.+]] = vector.extract %[[V:.+]][0] : f32 from vector<2xf32>
// CHECK: %[[E0:.+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[V0]])
// CHECK: %[[V1:.+]] = vector.extract %[[V]][1] : f32 from vector<2xf32>
// CHECK: %[[E1:.+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[V1]])
// CHECK: vector.from_elements %[[E0]], %[[E1]] : vector<2xf32>
// CHECK: %[[W0:.+]] = vector.extract %[[V]][0] : f32 from vector<2xf32>
// CHECK: nvvm.rcp.approx.ftz.f %[[W0]] : f32
// CHECK: %[[W1:.+]] = vector.extract %[[V]][1] : f32 from vector<2xf32>
// CHECK: nvvm.rcp.approx.ftz.f %[[W1]] : f32
// CHECK: vector.from_elements
// Division without afn, of something other than 1, and f64 stay.
// CHECK: arith.divf %{{.+}}, %[[X]] : f32
// CHECK: arith.divf %[[X]], %[[X]] fastmath<afn> : f32
// CHECK: math.exp2 %{{.+}} : f64
// CHECK: gpu.terminator
// Outside kernels nothing changes.
// CHECK: math.exp2 %{{.+}} : f32
// CHECK-NOT: nvvm.
llvm.func @kernel(%x: f32, %v: vector<2xf32>, %d: f64) -> f32 {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %ones = arith.constant dense<1.0> : vector<2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %e = math.exp2 %x : f32
    %r = arith.divf %one, %x fastmath<afn> : f32
    %ev = math.exp2 %v : vector<2xf32>
    %rv = arith.divf %ones, %v fastmath<afn> : vector<2xf32>
    %exact = arith.divf %one, %x : f32
    %other = arith.divf %x, %x fastmath<afn> : f32
    %e64 = math.exp2 %d : f64
    gpu.terminator
  }
  %outside = math.exp2 %x : f32
  llvm.return %outside : f32
}

// -----

// Marked afn (the attention kernel's scores region): f32 tanh is LLVM's
// tanh with afn (tanh.approx.f32 in PTX), and a division by a finite,
// nonzero constant a product with its reciprocal. Without afn, of f64, or
// by 0 or a variable, they stay.
// CHECK-LABEL: llvm.func @scores
// CHECK: gpu.launch
// CHECK-DAG: %[[INVERSE:.+]] = arith.constant 2.000000e-02 : f32
// CHECK: %[[D:.+]] = arith.mulf %[[X:.+]], %[[INVERSE]] fastmath<afn> : f32
// CHECK: llvm.intr.tanh(%[[D]]) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK: math.tanh %[[X]] : f32
// CHECK: math.tanh %{{.+}} fastmath<afn> : f64
// CHECK: arith.divf %[[X]], %{{.+}} fastmath<afn> : f32
// CHECK: arith.divf %[[X]], %[[X]] fastmath<afn> : f32
// CHECK: gpu.terminator
llvm.func @scores(%x: f32, %d: f64) {
  %c1 = arith.constant 1 : index
  %cap = arith.constant 50.0 : f32
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %q = arith.divf %x, %cap fastmath<afn> : f32
    %t = math.tanh %q fastmath<afn> : f32
    %exact = math.tanh %x : f32
    %t64 = math.tanh %d fastmath<afn> : f64
    %byzero = arith.divf %x, %zero fastmath<afn> : f32
    %byself = arith.divf %x, %x fastmath<afn> : f32
    gpu.terminator
  }
  llvm.return
}
