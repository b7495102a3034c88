// Tests that kiln-compile refuses bad input and bad options with a located
// diagnostic or a clear message, and a non-zero exit.
// RUN: split-file %s %t
// RUN: not kiln-compile %t/unsupported.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=NOLOWERING
// RUN: not kiln-compile %t/malformed.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not kiln-compile %t/ok.mlir --pipeline-options='no-such-option=1' -o %t.so 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not kiln-compile %t/ok.mlir --pipeline-options='openmp=false vectr-bytes=32' -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSPELT
// RUN: not kiln-compile %t/ok.mlir --target=cuda --pipeline-options='blok-size=128' -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSPELT-GPU
// RUN: kiln-compile --check-options --target=cuda --pipeline-options='block-size=128' %t/malformed.mlir 2>&1 | count 0
// RUN: not kiln-compile --check-options --pipeline-options='block-size=128' 2>&1 | FileCheck %s --check-prefix=CHECK-ONLY
// RUN: not kiln-compile %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=NOOUTPUT
// RUN: not kiln-compile %t/malformed.mlir 2>&1 | FileCheck %s --check-prefix=NOOUTPUT
// RUN: not kiln-compile %t/missing.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-compile %t/ok.mlir -o '' 2>&1 | FileCheck %s --check-prefix=EMPTYOUT
// RUN: cp %t/ok.mlir %t/same.mlir
// RUN: not kiln-compile %t/same.mlir -o %t/same.mlir 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: FileCheck %s --check-prefix=UNTOUCHED --input-file=%t/same.mlir
// RUN: not kiln-compile %t/empty.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not kiln-compile %t/ok.mlir --mcpu=bogus -o %t.so 2>&1 | FileCheck %s --check-prefix=MCPU
// RUN: not kiln-compile %t/ok.mlir -O7 -o %t.so 2>&1 | FileCheck %s --check-prefix=OPT

// NOLOWERING: unsupported.mlir:2:8: error: kiln-fx-to-loop: no lowering for 'fx.fft_r2c' with these operand types
// MALFORMED: malformed.mlir:2:18: error: expected ':'
// An unknown pipeline option is named with the pipeline's options; a
// misspelt one with the closest of them.
// OPTIONS: kiln-compile: invalid kiln-cpu-pipeline options 'no-such-option=1': <Pass-Options-Parser>: no such option no-such-option; kiln-cpu-pipeline takes: amx, channels-last, compute-in-f32, {{.*}}, openmp, {{.*}}, vector-bytes, welford
// OPTIONS-NOT: did you mean
// MISSPELT: invalid kiln-cpu-pipeline options 'openmp=false vectr-bytes=32': {{.*}}; 'vectr-bytes': did you mean 'vector-bytes'?; kiln-cpu-pipeline takes:
// MISSPELT-GPU: invalid kiln-gpu-pipeline options 'blok-size=128': {{.*}}; 'blok-size': did you mean 'block-size'?; kiln-gpu-pipeline takes: attention-kernels, block-size,
// --check-options checks the options alone (the malformed input is never
// read, no -o is needed): block-size is the GPU pipeline's, not the CPU's.
// CHECK-ONLY: kiln-compile: invalid kiln-cpu-pipeline options 'block-size=128': <Pass-Options-Parser>: no such option block-size
// A missing -o is found before the input is read or compiled (the
// malformed input is never parsed), without the module as a note.
// NOOUTPUT: kiln-compile: a shared object needs an output file (-o); --emit=llvm or --emit=mlir print to stdout
// NOOUTPUT-NOT: error: expected
// NOOUTPUT-NOT: see current operation
// MISSING: kiln-compile: cannot open input file '{{.*}}missing.mlir'
// EMPTYOUT: kiln-compile: -o needs a file name
// SAME: kiln-compile: the output '{{.*}}same.mlir' is the input file
// UNTOUCHED: fx.graph @forward
// EMPTY: empty.mlir:0:0: error: the module holds no fx.graph to compile
// EMPTY-NOT: see current operation
// MCPU: kiln-compile: unknown CPU 'bogus' for x86_64
// MCPU-NOT: LLVM ERROR
// OPT: kiln-compile: optimization level 7 is not one of 0-3

//--- unsupported.mlir
fx.graph @forward(%x: tensor<8388610xf32>) -> tensor<4194306xcomplex<f32>> {
  %0 = fx.fft_r2c %x {dim = array<i64: 0>, normalization = 0, onesided = true} : (tensor<8388610xf32>) -> tensor<4194306xcomplex<f32>>
  fx.output %0 : tensor<4194306xcomplex<f32>>
}
//--- malformed.mlir
fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fx.relu %x
}
//--- ok.mlir
fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  fx.output %x : tensor<4xf32>
}
//--- empty.mlir
