//===- kiln-compile.cpp - Compiling graphs into shared objects ------------===//
//
// Part of Kiln. Compiles an fx graph into a shared object exposing Kiln's C
// entry points (docs/ABI.md), in one process up to the object file:
//
//   kiln-compile graph.mlir -o graph.so                 # for this CPU
//   kiln-compile graph.mlir --target=cuda -o graph.so   # for NVIDIA GPUs
//   kiln-compile graph.mlir --emit=loop                 # the fused graph
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Compiler.h"
#include "kiln/InitKiln.h"
#include "kiln/Support/ParserGuards.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;

namespace {
enum class EmitKind { SharedObject, Object, LLVMIR, MLIR, Loop };
enum class Target { CPU, CUDA };

// --help lists these two; LLVM's own options, still taken, are not listed.
cl::OptionCategory kilnCategory("Kiln options");
cl::OptionCategory mlirCategory("MLIR options (diagnostics, IR printing, "
                                "pass timing)");

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input .mlir>"),
                                   cl::init("-"), cl::cat(kilnCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(kilnCategory));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::SharedObject),
    cl::values(clEnumValN(EmitKind::SharedObject, "so", "a shared object"),
               clEnumValN(EmitKind::Object, "obj", "an object file"),
               clEnumValN(EmitKind::LLVMIR, "llvm", "optimized LLVM IR"),
               clEnumValN(EmitKind::MLIR, "mlir",
                          "the module in the LLVM dialect"),
               clEnumValN(EmitKind::Loop, "loop",
                          "the graphs in the loop dialect, after fusion")),
    cl::cat(kilnCategory));
cl::opt<Target> target(
    "target", cl::desc("Where the graph runs"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "x86 CPUs (kiln-cpu-pipeline)"),
               clEnumValN(Target::CUDA, "cuda",
                          "NVIDIA GPUs (kiln-gpu-pipeline)")),
    cl::cat(kilnCategory));
cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    cl::desc("Options of the target's pipeline, e.g. 'openmp=false' for the "
             "CPU, 'chip=sm_80 block-size=128' for CUDA"),
    cl::init(""), cl::cat(kilnCategory));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA toolkit whose ptxas builds kernels (default: $CUDA_ROOT, "
             "$CUDA_HOME, $CUDA_PATH, then /usr/local/cuda)"),
    cl::init(""), cl::cat(kilnCategory));
cl::opt<std::string> cpu("mcpu", cl::desc("Target CPU (default: the host's)"),
                         cl::init("native"), cl::cat(kilnCategory));
cl::opt<std::string> features("mattr", cl::desc("Extra LLVM target features"),
                              cl::init(""), cl::cat(kilnCategory));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::init(3), cl::Prefix, cl::cat(kilnCategory));
cl::opt<bool> checkOptions(
    "check-options",
    cl::desc("Check the target, pipeline and CPU options, then exit without "
             "reading the input"),
    cl::init(false), cl::cat(kilnCategory));
cl::opt<bool> printPipeline(
    "print-pipeline",
    cl::desc("Print the target's pass pipeline with the value of every "
             "option (defaults, or --pipeline-options'), then exit without "
             "reading the input"),
    cl::init(false), cl::cat(kilnCategory));
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::setBugReportMsg("kiln-compile crashed: this is a bug in Kiln. Please "
                        "report it with the input file and the command line, "
                        "and the stack dump below.\n");
  cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << "Kiln version " KILN_VERSION "\n"; });
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  for (auto &[name, option] : cl::getRegisteredOptions()) {
    if (name.starts_with("mlir-"))
      option->addCategory(mlirCategory);
  }
  cl::HideUnrelatedOptions({&kilnCategory, &mlirCategory});
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln compiler: fx graph -> shared object\n");

  CompileOptions options;
  options.target =
      target == Target::CUDA ? CompileTarget::CUDA : CompileTarget::CPU;
  options.pipelineOptions = pipelineOptions;
  options.cudaPath = cudaPath;
  // Host code, and all of a CPU graph, is compiled for this machine's CPU.
  options.cpu.cpu = cpu;
  options.cpu.features = features;
  options.cpu.optLevel = optLevel;
  options.graphLoweringOnly = emitKind == EmitKind::Loop;

  // Bad options are reported before the input is read.
  bool readsInput = !checkOptions && !printPipeline;
  if (outputFilename.empty() && readsInput) {
    llvm::errs() << "kiln-compile: -o needs a file name\n";
    return 1;
  }
  if (emitKind == EmitKind::SharedObject && outputFilename == "-" &&
      readsInput) {
    llvm::errs() << "kiln-compile: a shared object needs an output file "
                    "(-o); --emit=llvm or --emit=mlir print to stdout\n";
    return 1;
  }
  if (outputFilename != "-" && inputFilename != "-" &&
      (outputFilename == inputFilename ||
       llvm::sys::fs::equivalent(outputFilename, inputFilename))) {
    llvm::errs() << "kiln-compile: the output '" << outputFilename
                 << "' is the input file\n";
    return 1;
  }
  if (std::string error; failed(verifyCPUTargetOptions(options.cpu, error))) {
    llvm::errs() << "kiln-compile: " << error << "\n";
    return 1;
  }
  {
    OpPassManager scratch(ModuleOp::getOperationName());
    std::string error;
    if (failed(buildCompilePipeline(scratch, options, error))) {
      llvm::errs() << "kiln-compile: " << error << "\n";
      return 1;
    }
    if (printPipeline) {
      scratch.printAsTextualPipeline(llvm::outs());
      llvm::outs() << "\n";
    }
  }
  if (!readsInput)
    return 0;

  DialectRegistry registry;
  registerAllKilnDialects(registry);
  registerAllKilnTranslations(registry);
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
  if (failed(checkParserGuards(
          sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
              ->getMemBufferRef(),
          &context)))
    return 1;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  if (failed(lowerToLLVM(*module, options, [](PassManager &pm) {
        applyDefaultTimingPassManagerCLOptions(pm);
        return applyPassManagerCLOptions(pm);
      })))
    return 1;

  if (emitKind == EmitKind::SharedObject)
    return failed(linkArtifact(*module, options, outputFilename));

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "kiln-compile: " << errorMessage << "\n";
    return 1;
  }
  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::Loop) {
    module->print(output->os());
  } else if (failed(emitCPUCode(*module, options.cpu,
                                emitKind == EmitKind::Object, output->os()))) {
    return 1;
  }
  output->keep();
  return 0;
}
