// RUN: kiln-opt %s -split-input-file --kiln-gpu-merge-kernels | FileCheck %s

// Tests that launches of kernels alike but for their names launch the first
// of them, whose module alone stays; a kernel that differs (a constant, a
// launch bound) keeps its own module.
// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch_func @kiln_pointwise::@kiln_pointwise blocks in ({{.+}}) threads in ({{.+}}) args(%{{.+}} : memref<64xf32>, %[[A:.+]] : memref<64xf32>)
// CHECK: gpu.launch_func @kiln_pointwise::@kiln_pointwise blocks in ({{.+}}) threads in ({{.+}}) args(%[[A]] : memref<64xf32>, %{{.+}} : memref<64xf32>)
// CHECK: gpu.launch_func @kiln_pointwise_1::@kiln_pointwise_1
// CHECK: gpu.launch_func @kiln_pointwise_2::@kiln_pointwise_2
// CHECK: gpu.module @kiln_pointwise {
// CHECK-NOT: gpu.module @kiln_pointwise_0
// CHECK: gpu.module @kiln_pointwise_1 {
// CHECK: arith.constant 3.0
// CHECK: gpu.module @kiln_pointwise_2 {
// CHECK: known_block_size = array<i32: 128, 1, 1>
module attributes {gpu.container_module} {
  func.func @forward(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kiln_pointwise::@kiln_pointwise blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>, %b : memref<64xf32>)
    gpu.launch_func @kiln_pointwise_0::@kiln_pointwise_0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%b : memref<64xf32>, %c : memref<64xf32>)
    gpu.launch_func @kiln_pointwise_1::@kiln_pointwise_1 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%c : memref<64xf32>, %a : memref<64xf32>)
    gpu.launch_func @kiln_pointwise_2::@kiln_pointwise_2 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%c : memref<64xf32>, %a : memref<64xf32>)
    return
  }
  gpu.module @kiln_pointwise {
    gpu.func @kiln_pointwise(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @kiln_pointwise_0 {
    gpu.func @kiln_pointwise_0(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @kiln_pointwise_1 {
    gpu.func @kiln_pointwise_1(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %three = arith.constant 3.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %three : f32
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @kiln_pointwise_2 {
    gpu.func @kiln_pointwise_2(%x: memref<64xf32>, %y: memref<64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<64xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
}
