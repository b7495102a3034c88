//===- kiln-opt.cpp - Kiln's optimizer driver -----------------------------===//
//
// Part of Kiln. Runs Kiln's passes and pipelines on .mlir files, like mlir-opt,
// knowing exactly the dialects and passes that Kiln uses.
//
//===----------------------------------------------------------------------===//

#include "kiln/InitKiln.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Support/ParserGuards.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

int main(int argc, char **argv) {
  llvm::setBugReportMsg("kiln-opt crashed: this is a bug in Kiln. Please "
                        "report it with the input file and the command line, "
                        "and the stack dump below.\n");
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "Kiln version " KILN_VERSION "\n"; });
  DialectRegistry registry;
  kiln::registerAllKilnDialects(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  kiln::registerAllKilnTranslations(registry);
  kiln::registerAllKilnPasses();
  // GPU pipelines link libdevice from the CUDA toolkit.
  kiln::selectCUDAToolkit();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "Kiln optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "kiln-opt: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  // What MLIR's parser would crash on is refused here, with its location.
  {
    MLIRContext context(MLIRContext::Threading::DISABLED);
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    if (failed(kiln::checkParserGuards(*input, &context)))
      return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "kiln-opt: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
