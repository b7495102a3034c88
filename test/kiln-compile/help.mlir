// Tests that kiln-compile's --help lists its own options and MLIR's, not
// LLVM's hundreds, and that MLIR's pass timing works.
// RUN: kiln-compile --help | FileCheck %s
// CHECK: OVERVIEW: Kiln compiler
// CHECK: Kiln options:
// CHECK-DAG: --emit=<value>
// CHECK-DAG: --pipeline-options=<string>
// CHECK-DAG: --target=<value>
// CHECK: MLIR options
// CHECK-DAG: --mlir-print-ir-after-all
// CHECK-DAG: --mlir-timing
// RUN: kiln-compile --help | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE-NOT: --aarch64-neon-syntax
// NEGATIVE-NOT: --polly
// LLVM's options are still taken.
// RUN: kiln-compile %s --emit=mlir --x86-asm-syntax=intel -o /dev/null
// RUN: kiln-compile %s --emit=mlir -o /dev/null --mlir-timing 2>&1 | FileCheck %s --check-prefix=TIMING
// TIMING: Execution time report
// TIMING: ConvertFXToLoopPass
// TIMING: ConvertFuncToLLVMPass

fx.graph @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = fx.relu %x : tensor<8xf32>
  fx.output %0 : tensor<8xf32>
}
