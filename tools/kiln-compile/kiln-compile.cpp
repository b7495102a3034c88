//===- kiln-compile.cpp - Compiling graphs into shared objects ------------===//
//
// Part of Kiln. Compiles an fx graph into a shared object exposing Kiln's C
// entry points (docs/ABI.md), in one process up to the object file:
//
//   kiln-compile graph.mlir -o graph.so
//
//===----------------------------------------------------------------------===//

#include "kiln/InitKiln.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Target/CPU/CPUTarget.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;

namespace {
enum class EmitKind { SharedObject, Object, LLVMIR, MLIR };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input .mlir>"),
                                   cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::SharedObject),
    cl::values(clEnumValN(EmitKind::SharedObject, "so", "a shared object"),
               clEnumValN(EmitKind::Object, "obj", "an object file"),
               clEnumValN(EmitKind::LLVMIR, "llvm", "optimized LLVM IR"),
               clEnumValN(EmitKind::MLIR, "mlir",
                          "the module in the LLVM dialect")));
cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    cl::desc("Options of kiln-cpu-pipeline, e.g. 'openmp=false inline=false'"),
    cl::init(""));
cl::opt<std::string> cpu("mcpu", cl::desc("Target CPU (default: the host's)"),
                         cl::init("native"));
cl::opt<std::string> features("mattr", cl::desc("Extra LLVM target features"),
                              cl::init(""));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::init(3), cl::Prefix);
} // namespace

/// Emits the object code of `module` to a temporary file and links it.
static LogicalResult buildSharedObject(ModuleOp module,
                                       const CPUTargetOptions &target,
                                       bool openmp, const char *argv0) {
  if (outputFilename == "-")
    return module.emitError("a shared object needs an output file (-o)");
  SmallString<128> objectPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("kiln", "o", fd, objectPath))
    return module.emitError("cannot create a temporary object file");
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream objectStream(fd, /*shouldClose=*/true);
    if (failed(emitCPUCode(module, target, /*asObject=*/true, objectStream)))
      return failure();
  }
  LinkOptions link;
  if (openmp) {
    FailureOr<std::string> ompDir = findOpenMPRuntimeDir(argv0);
    if (failed(ompDir))
      return module.emitError("OpenMP code needs libomp.so.5, found neither "
                              "next to kiln-compile nor in LLVM 22");
    link.libraryDirs.push_back(*ompDir);
    link.libraries.push_back("libomp.so.5");
  }
  std::string error;
  if (failed(linkSharedObject(objectPath, outputFilename, link, error)))
    return module.emitError(error);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln compiler: fx graph -> shared object\n");

  std::unique_ptr<CPUPipelineOptions> options =
      CPUPipelineOptions::createFromString(pipelineOptions);
  if (!options) {
    llvm::errs() << "kiln-compile: invalid --pipeline-options '"
                 << pipelineOptions << "'\n";
    return 1;
  }

  DialectRegistry registry;
  registerAllKilnDialects(registry);
  registerCPUTranslations(registry);
  MLIRContext context(registry);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "kiln-compile: " << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  buildCPUPipeline(pm, *options);
  if (failed(pm.run(*module)))
    return 1;

  CPUTargetOptions target;
  target.cpu = cpu;
  target.features = features;
  target.optLevel = optLevel;
  if (emitKind == EmitKind::SharedObject)
    return failed(buildSharedObject(*module, target, options->openmp, argv[0]));

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "kiln-compile: " << errorMessage << "\n";
    return 1;
  }
  if (emitKind == EmitKind::MLIR) {
    module->print(output->os());
  } else if (failed(emitCPUCode(*module, target, emitKind == EmitKind::Object,
                                output->os()))) {
    return 1;
  }
  output->keep();
  return 0;
}
