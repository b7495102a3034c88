// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{compute-in-f32=false}))' | FileCheck %s --check-prefix=NATIVE

// Tests broadcasting: a missing leading dimension is dropped, a size-1
// dimension is read at index 0, and the dynamic size comes from the operand.
// CHECK-LABEL: fx.graph @add_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<64xf32>, %[[S:.+]]: tensor<?x1xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[ADD:.+]] = loop.pointwise(%[[N]]) : tensor<?x64xf32> {
// CHECK-NEXT: ^bb0(%[[I0:.+]]: index, %[[I1:.+]]: index):
// CHECK-NEXT: %[[LX:.+]] = loop.load %[[X]][%[[I0]], %[[I1]]]
// CHECK-NEXT: %[[LB:.+]] = loop.load %[[B]][%[[I1]]]
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[LX]], %[[LB]] : f32
// CHECK-NEXT: loop.yield %[[SUM]] : f32
// CHECK: loop.pointwise(%[[N]]) : tensor<?x64xf32> {
// CHECK: loop.load %[[ADD]][%[[I0:.+]], %[[I1:.+]]]
// CHECK: loop.load %[[S]][%[[I0]], %[[C0]]]
// CHECK: arith.mulf
fx.graph @add_broadcast(%x: tensor<?x64xf32>, %b: tensor<64xf32>, %s: tensor<?x1xf32>) -> tensor<?x64xf32> {
  %0 = fx.add %x, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = fx.mul %0, %s : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  fx.output %1 : tensor<?x64xf32>
}

// -----

// Tests that bf16 math runs in f32 by default and natively on request.
// CHECK-LABEL: fx.graph @bf16_relu
// CHECK: %[[V:.+]] = loop.load %{{.+}}[%{{.+}}] : tensor<8xbf16>
// CHECK: %[[W:.+]] = arith.extf %[[V]] : bf16 to f32
// CHECK: %[[R:.+]] = arith.maximumf %[[W]], %{{.+}} : f32
// CHECK: %[[T:.+]] = arith.truncf %[[R]] : f32 to bf16
// CHECK: loop.yield %[[T]] : bf16
// NATIVE-LABEL: fx.graph @bf16_relu
// NATIVE-NOT: arith.extf
// NATIVE: arith.maximumf %{{.+}}, %{{.+}} : bf16
// NATIVE-NOT: arith.truncf
fx.graph @bf16_relu(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = fx.relu %x : tensor<8xbf16>
  fx.output %0 : tensor<8xbf16>
}

// -----

// Tests type promotion inside the body: int32 * float16 converts the integer
// with sitofp, float16 + bfloat16 meets in f32.
// CHECK-LABEL: fx.graph @promote
// CHECK: loop.pointwise : tensor<4xf16>
// CHECK: %[[I:.+]] = loop.load %{{.+}} : tensor<4xsi32>
// CHECK: arith.sitofp %[[I]] : i32 to f32
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: loop.pointwise : tensor<4xf32>
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.addf {{.*}} : f32
// CHECK-NOT: arith.truncf
// CHECK: loop.yield
fx.graph @promote(%i: tensor<4xsi32>, %h: tensor<4xf16>, %bh: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xf32>) {
  %0 = fx.mul %i, %h : (tensor<4xsi32>, tensor<4xf16>) -> tensor<4xf16>
  %1 = fx.add %h, %bh : (tensor<4xf16>, tensor<4xbf16>) -> tensor<4xf32>
  fx.output %0, %1 : tensor<4xf16>, tensor<4xf32>
}

// -----

// Tests integer semantics: uint8 widens with extui, alpha multiplies, neg
// subtracts from zero, relu of a signed integer is a signed max and of uint8
// the identity.
// CHECK-LABEL: fx.graph @integers
// CHECK: %[[THREE:.+]] = arith.constant 3 : i32
// CHECK: loop.pointwise : tensor<4xsi32>
// CHECK-DAG: %[[A:.+]] = loop.load %{{.+}} : tensor<4xsi32>
// CHECK-DAG: %[[U:.+]] = loop.load %{{.+}} : tensor<4xui8>
// CHECK: %[[W:.+]] = arith.extui %[[U]] : i8 to i32
// CHECK: %[[M:.+]] = arith.muli %[[W]], %[[THREE]] : i32
// CHECK: arith.addi %[[A]], %[[M]] : i32
// CHECK: loop.pointwise : tensor<4xsi32>
// CHECK: arith.subi %{{.+}}, %{{.+}} : i32
// CHECK: loop.pointwise : tensor<4xsi32>
// CHECK: arith.maxsi
// CHECK: loop.pointwise : tensor<4xui8>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %{{.+}}[%[[I]]] : tensor<4xui8>
// CHECK-NEXT: loop.yield %[[V]] : i8
fx.graph @integers(%a: tensor<4xsi32>, %u: tensor<4xui8>) -> (tensor<4xsi32>, tensor<4xui8>) {
  %0 = fx.add %a, %u {alpha = 3 : i64} : (tensor<4xsi32>, tensor<4xui8>) -> tensor<4xsi32>
  %1 = fx.neg %0 : tensor<4xsi32>
  %2 = fx.relu %1 : tensor<4xsi32>
  %3 = fx.relu %u : tensor<4xui8>
  fx.output %2, %3 : tensor<4xsi32>, tensor<4xui8>
}

// -----

// Tests bool semantics: add is logical or, mul is logical and, and a bool
// promoted to float converts as unsigned.
// CHECK-LABEL: fx.graph @bools
// CHECK: arith.ori %{{.+}}, %{{.+}} : i1
// CHECK: arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: arith.uitofp %{{.+}} : i1 to f32
fx.graph @bools(%p: tensor<4xi1>, %q: tensor<4xi1>, %x: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>) {
  %0 = fx.add %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = fx.mul %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = fx.mul %x, %p : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  fx.output %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>
}

// -----

// Tests that a float alpha scales the second operand of sub.
// CHECK-LABEL: fx.graph @sub_alpha
// CHECK: %[[HALF:.+]] = arith.constant 5.000000e-01 : f64
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[HALF]] : f64
// CHECK: arith.subf %{{.+}}, %[[SCALED]] : f64
fx.graph @sub_alpha(%x: tensor<3xf64>, %y: tensor<3xf64>) -> tensor<3xf64> {
  %0 = fx.sub %x, %y {alpha = 0.5 : f64} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  fx.output %0 : tensor<3xf64>
}

// -----

// Tests that ops without a lowering stay as they are.
// CHECK-LABEL: fx.graph @do_not_lower_long_fourier_transforms
// CHECK: fx.fft_r2c
// CHECK-NOT: loop.
fx.graph @do_not_lower_long_fourier_transforms(%x: tensor<8388610xf32>) -> tensor<4194306xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 0>, normalization = 0, onesided = true} : (tensor<8388610xf32>) -> tensor<4194306xcomplex<f32>>
  fx.output %0 : tensor<4194306xcomplex<f32>>
}

// -----

// Shifts: a left shift by an amount outside [0, 32) (negative ones compare
// unsigned as huge) is 0; a signed right shift is arithmetic, by at most
// 31; an unsigned one is logical, 0 past 7.
// CHECK-LABEL: fx.graph @shifts
// CHECK: loop.pointwise : tensor<4xsi32>
// CHECK: %[[L:.+]] = arith.shli %[[A:.+]], %[[B:.+]] : i32
// CHECK: arith.select %{{.+}}, %[[L]], %{{.+}} : i32
// CHECK: loop.pointwise : tensor<4xsi32>
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[AMOUNT:.+]], %[[LAST:.+]] : i32
// CHECK: %[[BY:.+]] = arith.select %[[IN]], %[[AMOUNT]], %[[LAST]] : i32
// CHECK: arith.shrsi %{{.+}}, %[[BY]] : i32
// A constant amount folds the range check: by 4, a logical shift; by 9, 0.
// CHECK: loop.pointwise : tensor<4xui8>
// CHECK: arith.shrui %{{.+}}, %c4_i8 : i8
// CHECK-NEXT: loop.yield
// CHECK: loop.pointwise : tensor<4xui8>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loop.yield %c0_i8 : i8
fx.graph @shifts(%i: tensor<4xsi32>, %j: tensor<4xsi32>, %u: tensor<4xui8>) -> (tensor<4xsi32>, tensor<4xsi32>, tensor<4xui8>, tensor<4xui8>) {
  %0 = fx.bitwise_left_shift %i, %j : (tensor<4xsi32>, tensor<4xsi32>) -> tensor<4xsi32>
  %1 = fx.bitwise_right_shift %i, %j : (tensor<4xsi32>, tensor<4xsi32>) -> tensor<4xsi32>
  %2 = fx.bitwise_right_shift_scalar %u {other = 4} : (tensor<4xui8>) -> tensor<4xui8>
  %3 = fx.bitwise_left_shift_scalar %u {other = 9} : (tensor<4xui8>) -> tensor<4xui8>
  fx.output %0, %1, %2, %3 : tensor<4xsi32>, tensor<4xsi32>, tensor<4xui8>, tensor<4xui8>
}
