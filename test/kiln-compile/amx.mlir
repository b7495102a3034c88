// Tests that bf16 products run on AMX tiles where the target CPU has
// AMX-BF16 (a named CPU: its features; the host's: its features and the
// OS's leave, which kiln-compile asks for), unless the pipeline options say
// otherwise, and that the tiles reach LLVM's AMX intrinsics.
// RUN: kiln-compile %s --emit=mlir --mcpu=sapphirerapids | FileCheck %s --check-prefix=AMX
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64-v4 --pipeline-options='amx=true' | FileCheck %s --check-prefix=AMX
// RUN: kiln-compile %s --emit=mlir --mcpu=x86-64-v4 | FileCheck %s --check-prefix=FMA
// RUN: kiln-compile %s --emit=mlir --mcpu=sapphirerapids --pipeline-options='amx=false' | FileCheck %s --check-prefix=FMA
// AMX: llvm.func @kiln_cpu_request_amx()
// AMX-LABEL: llvm.func internal @forward(
// AMX: llvm.call @kiln_cpu_request_amx()
// AMX: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// FMA-LABEL: llvm.func internal @forward(
// FMA-NOT: kiln_cpu_request_amx
// FMA-NOT: llvm.x86.tdpbf16ps
// FMA: llvm.intr.fmuladd
// FMA-NOT: llvm.x86.tdpbf16ps
fx.graph @forward(%x: tensor<64x96xbf16>, %w: tensor<96x80xbf16>) -> tensor<64x80xbf16> {
  %0 = fx.mm %x, %w : (tensor<64x96xbf16>, tensor<96x80xbf16>) -> tensor<64x80xbf16>
  fx.output %0 : tensor<64x80xbf16>
}
