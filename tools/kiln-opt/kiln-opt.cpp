//===- kiln-opt.cpp - Kiln's optimizer driver -----------------------------===//
//
// Part of Kiln. Runs Kiln's passes and pipelines on .mlir files, like mlir-opt,
// knowing exactly the dialects and passes that Kiln uses.
//
//===----------------------------------------------------------------------===//

#include "kiln/InitKiln.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/PrettyStackTrace.h"

int main(int argc, char **argv) {
  llvm::setBugReportMsg("kiln-opt crashed: this is a bug in Kiln. Please "
                        "report it with the input file and the command line, "
                        "and the stack dump below.\n");
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "Kiln version " KILN_VERSION "\n"; });
  mlir::DialectRegistry registry;
  mlir::kiln::registerAllKilnDialects(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::kiln::registerAllKilnTranslations(registry);
  mlir::kiln::registerAllKilnPasses();
  // GPU pipelines link libdevice from the CUDA toolkit.
  mlir::kiln::selectCUDAToolkit();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
