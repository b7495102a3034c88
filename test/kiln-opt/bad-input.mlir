// Tests kiln-opt's answers to bad input: every one is a located error and a
// non-zero exit, never a crash.
// RUN: split-file %s %t
// RUN: not kiln-opt %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kiln-opt %t/invalid.mlir 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: not kiln-opt %t/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not kiln-opt %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-opt %t/invalid.mlir --kiln-lower-to-loop 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: not kiln-opt %t/invalid.mlir --kiln-no-such-pass 2>&1 | FileCheck %s --check-prefix=NOPASS
// RUN: not kiln-opt %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=BINARY
// RUN: kiln-opt %t/valid.mlir --emit-bytecode -o %t/valid.mlirbc
// RUN: head -c 40 %t/valid.mlirbc > %t/truncated.mlirbc
// RUN: not kiln-opt %t/truncated.mlirbc 2>&1 | FileCheck %s --check-prefix=BYTECODE

// UNKNOWN: unknown-op.mlir:2:8: error: custom op 'fx.frobnicate' is unknown
// INVALID: invalid.mlir:2:8: error: 'fx.add' op operands 'tensor<3xf32>' and 'tensor<4xf32>' are not broadcastable
// TRUNCATED: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error: expected
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// NOPASS: Unknown command line argument '--kiln-no-such-pass'
// BINARY: binary.mlir:1:3: error: unexpected character
// BYTECODE: truncated.mlirbc{{.*}}error:

//--- unknown-op.mlir
fx.graph @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.frobnicate %x : tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}
//--- invalid.mlir
fx.graph @g(%x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.add %x, %y : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}
//--- truncated.mlir
fx.graph @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.relu %x : tensor<4xf32>
//--- valid.mlir
fx.graph @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.relu %x : tensor<4xf32>
  fx.output %0 : tensor<4xf32>
}
//--- binary.mlir
MLïR
