// RUN: kiln-opt %s -split-input-file --kiln-loop-fuse-epilogues | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-loop-fuse-epilogues=library-only | FileCheck %s --check-prefix=LIBRARY
// RUN: kiln-opt %s -split-input-file --kiln-loop-fuse-epilogues='library-only tensor-core-products' | FileCheck %s --check-prefix=TENSOR

// A linear layer's bias and GELU: the reader's body becomes the epilogue,
// and the f32 product is never stored.
// CHECK-LABEL: fx.graph @bias_gelu
// CHECK: %[[Y:.+]] = loop.matmul(%{{.+}}) %arg0, %arg1 {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16> epilogue {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[SUM:.+]]: f32):
// CHECK-NEXT: %[[B:.+]] = loop.load %arg2[%[[J]]] : tensor<128xbf16>
// CHECK-NEXT: %[[BF:.+]] = arith.extf %[[B]]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[BF]], %[[SUM]] : f32
// CHECK-NEXT: math.erf
// CHECK: loop.yield
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[Y]]
// A library cannot apply GELU: it adds the bias and rounds to bf16, as
// eager's addmm does, and the reader applies the rest to that. Kiln's
// tensor-core kernels apply any epilogue to such a product.
// TENSOR-LABEL: fx.graph @bias_gelu
// TENSOR: loop.matmul(%{{.+}}) %arg0, %arg1 {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16> epilogue {
// TENSOR: math.erf
// TENSOR-NOT: loop.pointwise
// TENSOR: fx.output
// LIBRARY-LABEL: fx.graph @bias_gelu
// LIBRARY: %[[P:.+]] = loop.matmul(%{{.+}}) %arg0, %arg1 {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16> epilogue {
// LIBRARY-NEXT: ^bb0(%{{.+}}: index, %[[J:.+]]: index, %[[SUM:.+]]: f32):
// LIBRARY-NEXT: %[[B:.+]] = loop.load %arg2[%[[J]]] : tensor<128xbf16>
// LIBRARY-NEXT: %[[BF:.+]] = arith.extf %[[B]] : bf16 to f32
// LIBRARY-NEXT: %[[S:.+]] = arith.addf %[[BF]], %[[SUM]] : f32
// LIBRARY-NEXT: %[[R:.+]] = arith.truncf %[[S]] : f32 to bf16
// LIBRARY-NEXT: loop.yield %[[R]] : bf16
// LIBRARY: loop.pointwise(%{{.+}}) : tensor<?x128xbf16>
// LIBRARY-NEXT: ^bb0(%[[I:.+]]: index, %[[J2:.+]]: index):
// LIBRARY-NEXT: %[[V:.+]] = loop.load %[[P]][%[[I]], %[[J2]]] : tensor<?x128xbf16>
// LIBRARY-NEXT: %[[W:.+]] = arith.extf %[[V]] : bf16 to f32
// LIBRARY-NEXT: math.erf %[[W]]
// LIBRARY-NOT: %arg2
fx.graph @bias_gelu(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %b: tensor<128xbf16>) -> tensor<?x128xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %p = loop.matmul(%n) %x, %w {transpose_rhs} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xf32>
  %y = loop.pointwise(%n) : tensor<?x128xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<?x128xf32>
    %bv = loop.load %b[%j] : tensor<128xbf16>
    %be = arith.extf %bv : bf16 to f32
    %s = arith.addf %be, %v : f32
    %e = math.erf %s : f32
    %g = arith.mulf %s, %e : f32
    %r = arith.truncf %g : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<?x128xbf16>
}

// -----

// Bias and relu are what a library applies: fused in both modes.
// CHECK-LABEL: fx.graph @bias_relu
// CHECK: loop.matmul %arg0, %arg1 : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32> epilogue
// LIBRARY-LABEL: fx.graph @bias_relu
// LIBRARY: loop.matmul %arg0, %arg1 : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32> epilogue
// LIBRARY: arith.maximumf
// LIBRARY-NOT: loop.pointwise
// LIBRARY: fx.output
fx.graph @bias_relu(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %p = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %y = loop.pointwise : tensor<8x32xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<8x32xf32>
    %bv = loop.load %b[%j] : tensor<32xf32>
    %s = arith.addf %v, %bv : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    loop.yield %r : f32
  }
  fx.output %y : tensor<8x32xf32>
}

// -----

// A product stored rounded is read rounded: the epilogue rounds the sum
// first, as the reader saw it.
// CHECK-LABEL: fx.graph @rounded_product
// CHECK: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[SUM:.+]]: f32):
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: arith.extf %[[R]] : bf16 to f32
fx.graph @rounded_product(%x: tensor<8x64xbf16>, %w: tensor<64x32xbf16>) -> tensor<8x32xbf16> {
  %p = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xbf16>
  %y = loop.pointwise : tensor<8x32xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<8x32xbf16>
    %e = arith.extf %v : bf16 to f32
    %t = math.tanh %e : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<8x32xbf16>
}

// -----

// A reader that views the product with its rows split ([4 * 6, 32] as
// [4, 6, 32], a Linear on a batch of sequences) and adds a bias first: on
// library targets, the library adds the bias and rounds to bf16, as eager's
// addmm does, and the reader reads that where it read the sum.
// LIBRARY-LABEL: fx.graph @split_rows_bias_tanh
// LIBRARY: %[[P:.+]] = loop.matmul %arg0, %arg1 : tensor<24x64xbf16>, tensor<64x32xbf16> -> tensor<24x32xbf16> epilogue
// LIBRARY: ^bb0(%{{.+}}: index, %[[J:.+]]: index, %[[SUM:.+]]: f32):
// LIBRARY: %[[B:.+]] = loop.load %arg2[%[[J]]] : tensor<32xbf16>
// LIBRARY: arith.truncf
// LIBRARY: loop.pointwise : tensor<4x6x32xbf16>
// LIBRARY-NEXT: ^bb0(%[[I:.+]]: index, %[[K:.+]]: index, %[[C:.+]]: index):
// LIBRARY: %[[ROW:.+]] = arith.addi
// LIBRARY: loop.load %[[P]][%[[ROW]], %[[C]]] : tensor<24x32xbf16>
// LIBRARY-NOT: loop.load %arg2
// LIBRARY: math.tanh
// Elsewhere the whole reader is the epilogue: it takes the product's shape,
// recovers the reader's indices from the product's, and the product is
// expanded to the reader's shape.
// CHECK-LABEL: fx.graph @split_rows_bias_tanh
// CHECK: %[[P:.+]] = loop.matmul %arg0, %arg1 : tensor<24x64xbf16>, tensor<64x32xbf16> -> tensor<24x32xbf16> epilogue {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[J:.+]]: index, %[[SUM:.+]]: f32):
// CHECK-NEXT: %[[B:.+]] = loop.load %arg2[%[[J]]] : tensor<32xbf16>
// CHECK-NEXT: %[[BF:.+]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[SUM]], %[[BF]] : f32
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT: loop.yield %[[R]] : bf16
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [4, 6, 32] : tensor<24x32xbf16> into tensor<4x6x32xbf16>
// CHECK-NOT: loop.pointwise
// CHECK: fx.output %[[Y]]
// TENSOR-LABEL: fx.graph @split_rows_bias_tanh
// TENSOR: loop.matmul %arg0, %arg1 : tensor<24x64xbf16>, tensor<64x32xbf16> -> tensor<24x32xbf16> epilogue {
// TENSOR: math.tanh
// TENSOR: tensor.expand_shape
fx.graph @split_rows_bias_tanh(%x: tensor<24x64xbf16>, %w: tensor<64x32xbf16>, %b: tensor<32xbf16>) -> tensor<4x6x32xbf16> {
  %p = loop.matmul %x, %w : tensor<24x64xbf16>, tensor<64x32xbf16> -> tensor<24x32xf32>
  %y = loop.pointwise : tensor<4x6x32xbf16> {
  ^bb0(%i: index, %k: index, %j: index):
    %c6 = arith.constant 6 : index
    %s = arith.muli %i, %c6 : index
    %row = arith.addi %s, %k : index
    %v = loop.load %p[%row, %j] : tensor<24x32xf32>
    %bv = loop.load %b[%j] : tensor<32xbf16>
    %be = arith.extf %bv : bf16 to f32
    %sum = arith.addf %v, %be : f32
    %t = math.tanh %sum : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<4x6x32xbf16>
}

// -----

// Two readers of column ranges (q and k of one product), each adding the
// bias at the column it reads: one biased, rounded product serves both.
// LIBRARY-LABEL: fx.graph @readers_of_column_ranges
// CHECK-LABEL: fx.graph @readers_of_column_ranges
// LIBRARY: %[[P:.+]] = loop.matmul %arg0, %arg1 : tensor<24x64xbf16>, tensor<64x32xbf16> -> tensor<24x32xbf16> epilogue
// LIBRARY-COUNT-2: loop.load %[[P]]
// LIBRARY-NOT: loop.load %arg2
// LIBRARY: fx.output
fx.graph @readers_of_column_ranges(%x: tensor<24x64xbf16>, %w: tensor<64x32xbf16>, %b: tensor<32xbf16>) -> (tensor<24x16xbf16>, tensor<24x16xbf16>) {
  %p = loop.matmul %x, %w : tensor<24x64xbf16>, tensor<64x32xbf16> -> tensor<24x32xf32>
  %q = loop.pointwise : tensor<24x16xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<24x32xf32>
    %bv = loop.load %b[%j] : tensor<32xbf16>
    %be = arith.extf %bv : bf16 to f32
    %sum = arith.addf %v, %be : f32
    %r = arith.truncf %sum : f32 to bf16
    loop.yield %r : bf16
  }
  %k = loop.pointwise : tensor<24x16xbf16> {
  ^bb0(%i: index, %j: index):
    %c16 = arith.constant 16 : index
    %col = arith.addi %j, %c16 : index
    %v = loop.load %p[%i, %col] : tensor<24x32xf32>
    %bv = loop.load %b[%col] : tensor<32xbf16>
    %be = arith.extf %bv : bf16 to f32
    %sum = arith.addf %be, %v : f32
    %t = math.tanh %sum : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %q, %k : tensor<24x16xbf16>, tensor<24x16xbf16>
}

// -----

// The "bias" is added along the rows, not the columns: nothing changes.
// LIBRARY-LABEL: fx.graph @do_not_split_row_bias
// CHECK-LABEL: fx.graph @do_not_split_row_bias
// LIBRARY: loop.matmul %arg0, %arg1 : tensor<24x64xbf16>, tensor<64x24xbf16> -> tensor<24x24xf32>
// LIBRARY-NOT: epilogue
fx.graph @do_not_split_row_bias(%x: tensor<24x64xbf16>, %w: tensor<64x24xbf16>, %b: tensor<24xbf16>) -> tensor<24x24xbf16> {
  %p = loop.matmul %x, %w : tensor<24x64xbf16>, tensor<64x24xbf16> -> tensor<24x24xf32>
  %y = loop.pointwise : tensor<24x24xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<24x24xf32>
    %bv = loop.load %b[%i] : tensor<24xbf16>
    %be = arith.extf %bv : bf16 to f32
    %sum = arith.addf %v, %be : f32
    %t = math.tanh %sum : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<24x24xbf16>
}

// -----

// The product has another reader: it must be stored anyway.
// CHECK-LABEL: fx.graph @do_not_fuse_two_readers
// CHECK: loop.matmul %arg0, %arg1 : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
// CHECK-NOT: epilogue
// CHECK: loop.pointwise
fx.graph @do_not_fuse_two_readers(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %p = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %y = loop.pointwise : tensor<8x32xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<8x32xf32>
    %e = math.exp %v : f32
    loop.yield %e : f32
  }
  fx.output %y, %p : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// The reader needs other elements than its own (a transpose).
// CHECK-LABEL: fx.graph @do_not_fuse_transposed_read
// CHECK: loop.matmul %arg0, %arg1 : tensor<8x64xf32>, tensor<64x8xf32> -> tensor<8x8xf32>
// CHECK-NOT: epilogue
// CHECK: loop.pointwise
fx.graph @do_not_fuse_transposed_read(%x: tensor<8x64xf32>, %w: tensor<64x8xf32>) -> tensor<8x8xf32> {
  %p = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x8xf32> -> tensor<8x8xf32>
  %y = loop.pointwise : tensor<8x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%j, %i] : tensor<8x8xf32>
    loop.yield %v : f32
  }
  fx.output %y : tensor<8x8xf32>
}

// -----

// Bool results stay a separate node.
// CHECK-LABEL: fx.graph @do_not_fuse_bool_result
// CHECK: loop.matmul %arg0, %arg1 : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
// CHECK-NOT: epilogue
// CHECK: loop.pointwise : tensor<8x32xi1>
fx.graph @do_not_fuse_bool_result(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xi1> {
  %p = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %y = loop.pointwise : tensor<8x32xi1> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<8x32xf32>
    %z = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %v, %z : f32
    loop.yield %c : i1
  }
  fx.output %y : tensor<8x32xi1>
}

// -----

// Without 16-bit operands there is no rounding to split off: an f32 product
// keeps its reader whole.
// LIBRARY-LABEL: fx.graph @do_not_split_f32
// LIBRARY: loop.matmul %arg0, %arg1 : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
// LIBRARY-NOT: epilogue
// LIBRARY: loop.pointwise
fx.graph @do_not_split_f32(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %p = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  %y = loop.pointwise : tensor<8x32xf32> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<8x32xf32>
    %bv = loop.load %b[%j] : tensor<32xf32>
    %s = arith.addf %bv, %v : f32
    %e = math.exp %s : f32
    loop.yield %e : f32
  }
  fx.output %y : tensor<8x32xf32>
}

// -----

// Rows of 4 elements are not the tensor-core kernels': their product keeps
// only what the library applies (the bias), and the reader the rest.
// TENSOR-LABEL: fx.graph @narrow_bias_tanh
// TENSOR: %[[P:.+]] = loop.matmul %arg0, %arg1 : tensor<16x32xbf16>, tensor<32x4xbf16> -> tensor<16x4xbf16> epilogue
// TENSOR-NOT: math.tanh
// TENSOR: loop.pointwise : tensor<16x4xbf16>
// TENSOR: loop.load %[[P]]
// TENSOR: math.tanh
fx.graph @narrow_bias_tanh(%x: tensor<16x32xbf16>, %w: tensor<32x4xbf16>, %b: tensor<4xbf16>) -> tensor<16x4xbf16> {
  %p = loop.matmul %x, %w : tensor<16x32xbf16>, tensor<32x4xbf16> -> tensor<16x4xf32>
  %y = loop.pointwise : tensor<16x4xbf16> {
  ^bb0(%i: index, %j: index):
    %v = loop.load %p[%i, %j] : tensor<16x4xf32>
    %bv = loop.load %b[%j] : tensor<4xbf16>
    %be = arith.extf %bv : bf16 to f32
    %s = arith.addf %be, %v : f32
    %t = math.tanh %s : f32
    %r = arith.truncf %t : f32 to bf16
    loop.yield %r : bf16
  }
  fx.output %y : tensor<16x4xbf16>
}

// -----

// A reader that uses its split row indices (a residual over [2, 3, 16])
// gets them back from the product's row: its own row is (row / 3, row % 3).
// CHECK-LABEL: fx.graph @split_rows_residual
// CHECK: %[[P:.+]] = loop.matmul %arg0, %arg1 : tensor<6x64xf32>, tensor<64x16xf32> -> tensor<6x16xf32> epilogue {
// CHECK-NEXT: ^bb0(%[[ROW:.+]]: index, %[[J:.+]]: index, %[[SUM:.+]]: f32):
// CHECK-DAG: %[[K:.+]] = arith.remui %[[ROW]], %[[C3:.+]] : index
// CHECK-DAG: %[[I:.+]] = arith.divui %[[ROW]], %[[C3]] : index
// CHECK: %[[R:.+]] = loop.load %arg2[%[[I]], %[[K]], %[[J]]] : tensor<2x3x16xf32>
// CHECK: arith.addf %[[SUM]], %[[R]] : f32
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 3, 16]
// LIBRARY-LABEL: fx.graph @split_rows_residual
// LIBRARY-NOT: epilogue
// LIBRARY: loop.pointwise : tensor<2x3x16xf32>
fx.graph @split_rows_residual(%x: tensor<6x64xf32>, %w: tensor<64x16xf32>, %r: tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  %p = loop.matmul %x, %w : tensor<6x64xf32>, tensor<64x16xf32> -> tensor<6x16xf32>
  %y = loop.pointwise : tensor<2x3x16xf32> {
  ^bb0(%i: index, %k: index, %j: index):
    %c3 = arith.constant 3 : index
    %s = arith.muli %c3, %i : index
    %row = arith.addi %k, %s : index
    %v = loop.load %p[%row, %j] : tensor<6x16xf32>
    %rv = loop.load %r[%i, %k, %j] : tensor<2x3x16xf32>
    %sum = arith.addf %v, %rv : f32
    loop.yield %sum : f32
  }
  fx.output %y : tensor<2x3x16xf32>
}

// -----

// A reader whose rows are not the product's linearized ([2, 3] read at
// 2 * i + k, which is not i * 3 + k) stays apart.
// CHECK-LABEL: fx.graph @do_not_fuse_misread_rows
// CHECK: loop.matmul %arg0, %arg1 : tensor<6x64xf32>, tensor<64x16xf32> -> tensor<6x16xf32>
// CHECK-NOT: epilogue
// CHECK: loop.pointwise : tensor<2x3x16xf32>
fx.graph @do_not_fuse_misread_rows(%x: tensor<6x64xf32>, %w: tensor<64x16xf32>) -> tensor<2x3x16xf32> {
  %p = loop.matmul %x, %w : tensor<6x64xf32>, tensor<64x16xf32> -> tensor<6x16xf32>
  %y = loop.pointwise : tensor<2x3x16xf32> {
  ^bb0(%i: index, %k: index, %j: index):
    %c2 = arith.constant 2 : index
    %s = arith.muli %i, %c2 : index
    %row = arith.addi %s, %k : index
    %v = loop.load %p[%row, %j] : tensor<6x16xf32>
    loop.yield %v : f32
  }
  fx.output %y : tensor<2x3x16xf32>
}

// -----

// Split rows of a dynamic size cannot be recovered from the product's row
// by constants: the reader stays apart.
// CHECK-LABEL: fx.graph @do_not_fuse_dynamic_split_rows
// CHECK-NOT: epilogue
// CHECK: loop.pointwise(%{{.+}}) : tensor<?x3x16xf32>
fx.graph @do_not_fuse_dynamic_split_rows(%x: tensor<?x64xf32>, %w: tensor<64x16xf32>) -> tensor<?x3x16xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %n = arith.divui %m, %c3 : index
  %p = loop.matmul(%m) %x, %w : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  %y = loop.pointwise(%n) : tensor<?x3x16xf32> {
  ^bb0(%i: index, %k: index, %j: index):
    %s = arith.muli %i, %c3 : index
    %row = arith.addi %s, %k : index
    %v = loop.load %p[%row, %j] : tensor<?x16xf32>
    loop.yield %v : f32
  }
  fx.output %y : tensor<?x3x16xf32>
}

// -----

// A batch of one sequence: its row is 0 * 4 + k.
// CHECK-LABEL: fx.graph @one_sequence
// CHECK: %[[P:.+]] = loop.matmul %arg0, %arg1 : tensor<4x64xf32>, tensor<64x16xf32> -> tensor<4x16xf32> epilogue {
// CHECK: math.tanh
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [1, 4, 16]
// CHECK-NOT: loop.pointwise
fx.graph @one_sequence(%x: tensor<4x64xf32>, %w: tensor<64x16xf32>) -> tensor<1x4x16xf32> {
  %p = loop.matmul %x, %w : tensor<4x64xf32>, tensor<64x16xf32> -> tensor<4x16xf32>
  %y = loop.pointwise : tensor<1x4x16xf32> {
  ^bb0(%i: index, %k: index, %j: index):
    %c4 = arith.constant 4 : index
    %s = arith.muli %i, %c4 : index
    %row = arith.addi %s, %k : index
    %v = loop.load %p[%row, %j] : tensor<4x16xf32>
    %t = math.tanh %v : f32
    loop.yield %t : f32
  }
  fx.output %y : tensor<1x4x16xf32>
}
