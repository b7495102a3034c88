//===- CPUTarget.h - Objects and shared objects for x86 CPUs ----*- C++ -*-===//
//
// Part of Kiln. The last steps of the CPU compiler: LLVM dialect -> LLVM IR
// -> optimized object file -> shared object with Kiln's entry points.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_CPUTARGET_H
#define KILN_TARGET_CPU_CPUTARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace llvm {
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
class ModuleOp;
namespace kiln {

struct CPUTargetOptions {
  /// The CPU to generate code for; "native" is the host's CPU and features.
  std::string cpu = "native";
  /// Extra LLVM target features, e.g. "+avx512f,-avx512bw".
  std::string features;
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 3;
};

/// Whether LLVM can generate code for `options` (a CPU it knows, an
/// optimization level of 0-3); if not, says why in `error`.
LogicalResult verifyCPUTargetOptions(const CPUTargetOptions &options,
                                     std::string &error);

/// Translates `module`, which must be fully in the LLVM dialect, to LLVM IR,
/// optimizes it and writes it to `os` as an object file (`asObject`) or as
/// LLVM IR text.
LogicalResult emitCPUCode(ModuleOp module, const CPUTargetOptions &options,
                          bool asObject, llvm::raw_pwrite_stream &os);

/// The widest vector, in bytes, that the CPU of `options` computes on: 64
/// with AVX-512F, 32 with AVX, else 16 (SSE2, every x86-64, and the answer
/// when LLVM has no machine for the CPU: emitting code then says why). The
/// CPU pipeline's `vector-bytes` when the user does not choose one.
int64_t getVectorBytes(const CPUTargetOptions &options);

/// Whether bf16 products should run on AMX tiles: the CPU of `options` has
/// AMX-BF16, and for the host's CPU the OS lets this process use the tiles
/// (Linux asks each process to request them; an artifact for the host runs
/// on it). The CPU pipeline's `amx` when the user does not choose.
bool canUseAMX(const CPUTargetOptions &options);

struct LinkOptions {
  /// Directories holding shared libraries that the object needs at run time;
  /// each becomes a -L and a RUNPATH entry.
  llvm::SmallVector<std::string> libraryDirs;
  /// Shared libraries to record as needed, by file name (e.g.
  /// libkiln_openmp.so).
  llvm::SmallVector<std::string> libraries;
};

/// Links `objectPath` into the shared object `outputPath` with the first
/// linker found (ld.lld from LLVM 22, ld.lld, ld). On failure returns the
/// reason in `error`.
LogicalResult linkSharedObject(StringRef objectPath, StringRef outputPath,
                               const LinkOptions &options, std::string &error);

/// Finds the shared library `fileName` that artifacts need at run time: next
/// to the running tool (bin/../lib, as in Kiln's build tree and bundle), else
/// in `fallbackDir`. Returns its directory.
FailureOr<std::string> findRuntimeLibraryDir(const char *argv0,
                                             StringRef fileName,
                                             StringRef fallbackDir = "");

} // namespace kiln
} // namespace mlir

#endif // KILN_TARGET_CPU_CPUTARGET_H
