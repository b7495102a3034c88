// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// slice_scatter: index j of dim 1 is in the view when j - 2 >= 0, divides by
// the step 3, and the quotient is below the source's size 3; the source is
// read at the clamped quotient.
// CHECK-LABEL: fx.graph @slice_scatter
// CHECK-SAME: (%[[SELF:.+]]: tensor<5x10xf32>, %[[SRC:.+]]: tensor<5x3xf32>)
// CHECK: loop.pointwise : tensor<5x10xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[OFFSET:.+]] = arith.subi %[[J]], %c2
// CHECK: %[[AFTER:.+]] = arith.cmpi sge, %[[OFFSET]], %c0
// CHECK: %[[POS:.+]] = arith.select %[[AFTER]], %[[OFFSET]], %c0
// CHECK: %[[K:.+]] = arith.divui %[[POS]], %c3
// CHECK: arith.remui %[[POS]], %c3
// CHECK: arith.cmpi ult, %[[K]], %c3
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[K]], %c2
// CHECK: %[[NEW:.+]] = loop.load %[[SRC]][%[[I]], %[[CLAMPED]]]
// CHECK: %[[OLD:.+]] = loop.load %[[SELF]][%[[I]], %[[J]]]
// CHECK: arith.select %{{.+}}, %[[NEW]], %[[OLD]] : f32
fx.graph @slice_scatter(%x: tensor<5x10xf32>, %y: tensor<5x3xf32>) -> tensor<5x10xf32> {
  %0 = fx.slice_scatter %x, %y {dim = 1, start = 2, end = 9, step = 3} : (tensor<5x10xf32>, tensor<5x3xf32>) -> tensor<5x10xf32>
  fx.output %0 : tensor<5x10xf32>
}

// -----

// A negative index counts from the end; the source has no dimension `dim`,
// and converts to self's dtype.
// CHECK-LABEL: fx.graph @select_scatter
// CHECK-SAME: (%[[SELF:.+]]: tensor<?x4xbf16>, %[[SRC:.+]]: tensor<?xf32>)
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x4xbf16> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[HIT:.+]] = arith.cmpi eq, %[[J]], %c3
// CHECK: %[[NEW:.+]] = loop.load %[[SRC]][%[[I]]]
// CHECK: %[[CAST:.+]] = arith.truncf %[[NEW]] : f32 to bf16
// CHECK: %[[OLD:.+]] = loop.load %[[SELF]][%[[I]], %[[J]]]
// CHECK: arith.select %[[HIT]], %[[CAST]], %[[OLD]] : bf16
fx.graph @select_scatter(%x: tensor<?x4xbf16>, %y: tensor<?xf32>) -> tensor<?x4xbf16> {
  %0 = fx.select_scatter %x, %y {dim = -1, index = -1} : (tensor<?x4xbf16>, tensor<?xf32>) -> tensor<?x4xbf16>
  fx.output %0 : tensor<?x4xbf16>
}

// -----

// Over a dynamic dimension the start is placed at run time: a negative one
// counts back from the size (0 when it is longer), a positive one is at most
// the size; the source's run-time size bounds the view.
// CHECK-LABEL: fx.graph @dynamic_slice_scatter
// CHECK-SAME: (%[[SELF:.+]]: tensor<?xf32>, %[[SRC:.+]]: tensor<?xf32>)
// CHECK-DAG: %[[SIZE:.+]] = tensor.dim %[[SELF]], %c0
// CHECK-DAG: %[[FITS:.+]] = arith.cmpi uge, %[[SIZE]], %c3
// CHECK-DAG: %[[BACK:.+]] = arith.subi %[[SIZE]], %c3
// CHECK: %[[START:.+]] = arith.select %[[FITS]], %[[BACK]], %c0
// CHECK: %[[SRCSIZE:.+]] = tensor.dim %[[SRC]], %c0
// CHECK: loop.pointwise(%{{.+}}) : tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index):
// CHECK: arith.subi %[[I]], %[[START]]
// CHECK: arith.cmpi ult, %{{.+}}, %[[SRCSIZE]]
// CHECK: loop.load %[[SRC]]
// CHECK: loop.load %[[SELF]][%[[I]]]
fx.graph @dynamic_slice_scatter(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = fx.slice_scatter %x, %y {dim = 0, start = -3} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  fx.output %0 : tensor<?xf32>
}

// -----

// CHECK-LABEL: fx.graph @dynamic_slice_scatter_from_one
// CHECK: %[[SIZE:.+]] = tensor.dim %{{.+}}, %c1
// CHECK: %[[START:.+]] = arith.minui %[[SIZE]], %c1
// CHECK: loop.pointwise
// CHECK: arith.subi %{{.+}}, %[[START]]
fx.graph @dynamic_slice_scatter_from_one(%x: tensor<2x?xf32>, %y: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = fx.slice_scatter %x, %y {dim = 1, start = 1} : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  fx.output %0 : tensor<2x?xf32>
}

// -----

// A negative index into a dynamic dimension counts back from its run-time
// size.
// CHECK-LABEL: fx.graph @dynamic_select_scatter
// CHECK-SAME: (%[[SELF:.+]]: tensor<3x?xf32>, %[[SRC:.+]]: tensor<3xf32>)
// CHECK: %[[SIZE:.+]] = tensor.dim %[[SELF]], %c1
// CHECK: %[[FITS:.+]] = arith.cmpi uge, %[[SIZE]], %c1
// CHECK: %[[BACK:.+]] = arith.subi %[[SIZE]], %c1
// CHECK: %[[LAST:.+]] = arith.select %[[FITS]], %[[BACK]], %c0
// CHECK: loop.pointwise
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: arith.cmpi eq, %[[J]], %[[LAST]]
fx.graph @dynamic_select_scatter(%x: tensor<3x?xf32>, %y: tensor<3xf32>) -> tensor<3x?xf32> {
  %0 = fx.select_scatter %x, %y {dim = 1, index = -1} : (tensor<3x?xf32>, tensor<3xf32>) -> tensor<3x?xf32>
  fx.output %0 : tensor<3x?xf32>
}

// -----

// An empty slice changes nothing.
// CHECK-LABEL: fx.graph @empty_slice_scatter
// CHECK-SAME: (%[[SELF:.+]]: tensor<6x4xf32>
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[SELF]]
fx.graph @empty_slice_scatter(%x: tensor<6x4xf32>, %e: tensor<6x0xf32>) -> tensor<6x4xf32> {
  %0 = fx.slice_scatter %x, %e {dim = 1, start = 4, end = 4} : (tensor<6x4xf32>, tensor<6x0xf32>) -> tensor<6x4xf32>
  fx.output %0 : tensor<6x4xf32>
}

// -----

// copy: src broadcast to self's shape and converted to its dtype; self's
// values are not read.
// CHECK-LABEL: fx.graph @copy
// CHECK-SAME: (%[[SELF:.+]]: tensor<3x4xf16>, %[[SRC:.+]]: tensor<4xf32>)
// CHECK: loop.pointwise : tensor<3x4xf16> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %[[SRC]][%[[J]]]
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[V]] : f32 to f16
// CHECK-NEXT: loop.yield %[[H]]
fx.graph @copy(%x: tensor<3x4xf16>, %y: tensor<4xf32>) -> tensor<3x4xf16> {
  %0 = fx.copy %x, %y : (tensor<3x4xf16>, tensor<4xf32>) -> tensor<3x4xf16>
  fx.output %0 : tensor<3x4xf16>
}
