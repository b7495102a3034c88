//===- FusionReportPass.cpp - The kiln-fusion-report pass -----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Transforms/FusionReport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_FUSIONREPORTPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln::loop;

/// Prints where a node comes from: the op's name, if its location has one
/// (kiln-fx-to-loop names them), and its file position.
static void printSource(raw_ostream &os, Location source) {
  if (auto named = dyn_cast<NameLoc>(source)) {
    os << named.getName().getValue();
    if (isa<UnknownLoc>(named.getChildLoc()))
      return;
    os << " at ";
    source = named.getChildLoc();
  }
  if (auto file = dyn_cast<FileLineColLoc>(source))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    source.print(os);
}

static void printBytes(raw_ostream &os, std::optional<int64_t> bytes) {
  if (bytes)
    os << *bytes;
  else
    os << "?";
}

static void printReport(raw_ostream &os, Operation *graph,
                        const FusionReport &report) {
  os << "fusion report for ";
  if (auto symbol = SymbolTable::getSymbolName(graph))
    os << "@" << symbol.getValue();
  else
    os << "'" << graph->getName() << "'";
  os << ": " << report.kernels.size()
     << (report.kernels.size() == 1 ? " kernel, " : " kernels, ");
  printBytes(os, report.bytesMoved);
  os << " bytes moved, ideal ";
  printBytes(os, report.idealBytes);
  if (report.bytesMoved && report.idealBytes && *report.idealBytes > 0)
    os << " ("
       << llvm::format("%.2f",
                       double(*report.bytesMoved) / double(*report.idealBytes))
       << "x)";
  os << "\n";
  for (auto [index, kernel] : llvm::enumerate(report.kernels)) {
    os << "  kernel " << index << ": " << kernel.op->getName() << ", "
       << kernel.numNodes << (kernel.numNodes == 1 ? " node" : " nodes") << " ("
       << kernel.numReductions
       << (kernel.numReductions == 1 ? " reduction" : " reductions")
       << "), reads ";
    printBytes(os, kernel.bytesRead);
    os << ", writes ";
    printBytes(os, kernel.bytesWritten);
    os << "\n    from ";
    llvm::interleaveComma(kernel.sources, os,
                          [&](Location source) { printSource(os, source); });
    os << "\n";
  }
}

namespace {
struct FusionReportPass
    : kiln::loop::impl::FusionReportPassBase<FusionReportPass> {
  using Base::Base;

  void runOnOperation() override {
    // The blocks that hold nodes or kernels directly: graph bodies.
    llvm::SetVector<Block *> bodies;
    getOperation()->walk([&](Operation *op) {
      if ((isa<LoopNodeOpInterface>(op) && !op->getParentOfType<KernelOp>()) ||
          isa<KernelOp>(op))
        bodies.insert(op->getBlock());
    });
    for (Block *body : bodies)
      printReport(llvm::outs(), body->getParentOp(),
                  computeFusionReport(*body));
    markAllAnalysesPreserved();
  }
};
} // namespace
