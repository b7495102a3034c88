//===- FusionReport.h - What each kernel of a graph moves -------*- C++ -*-===//
//
// Part of Kiln. The analysis behind the kiln-fusion-report pass: the kernels
// a lowered graph will run, and the bytes each reads and writes, next to the
// least any code could move (each input read once, each output written once).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_FUSIONREPORT_H
#define KILN_DIALECT_LOOP_TRANSFORMS_FUSIONREPORT_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir {
class Block;
class Operation;
namespace kiln::loop {

/// One kernel: a loop.kernel or a node outside kernels.
struct KernelReport {
  Operation *op;
  unsigned numNodes = 0;
  unsigned numReductions = 0;
  /// Bytes of the tensors read from outside the kernel (each once) and of
  /// the tensors it stores; none when a size is dynamic.
  std::optional<int64_t> bytesRead, bytesWritten;
  /// The distinct locations of the nodes and of the ops inlined into them:
  /// where in the user's program the kernel's work comes from.
  SmallVector<Location> sources;
};

struct FusionReport {
  SmallVector<KernelReport> kernels;
  /// What all kernels move, and the least any code could: every input the
  /// graph uses read once, every output written once. None when dynamic.
  std::optional<int64_t> bytesMoved, idealBytes;
};

/// Reports on the kernels of `body`, a lowered graph's block: its arguments
/// are the inputs, its terminator's operands the outputs.
FusionReport computeFusionReport(Block &body);

/// The bytes of a tensor of `type`, if static (a bool takes a byte).
std::optional<int64_t> getTensorBytes(Type type);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_FUSIONREPORT_H
