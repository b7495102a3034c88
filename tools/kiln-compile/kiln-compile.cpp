//===- kiln-compile.cpp - Compiling graphs into shared objects ------------===//
//
// Part of Kiln. Compiles an fx graph into a shared object exposing Kiln's C
// entry points (docs/ABI.md), in one process up to the object file:
//
//   kiln-compile graph.mlir -o graph.so                 # for this CPU
//   kiln-compile graph.mlir --target=cuda -o graph.so   # for NVIDIA GPUs
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
#include <cstdlib>
#include <functional>

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;

namespace {
enum class EmitKind { SharedObject, Object, LLVMIR, MLIR };
enum class Target { CPU, CUDA };

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
cl::opt<Target> target(
    "target", cl::desc("Where the graph runs"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "x86 CPUs (kiln-cpu-pipeline)"),
               clEnumValN(Target::CUDA, "cuda",
                          "NVIDIA GPUs (kiln-gpu-pipeline)")));
cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    cl::desc("Options of the target's pipeline, e.g. 'openmp=false' for the "
             "CPU, 'chip=sm_80 block-size=128' for CUDA"),
    cl::init(""));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA toolkit whose ptxas builds kernels (default: $CUDA_ROOT, "
             "$CUDA_HOME, $CUDA_PATH, then /usr/local/cuda)"),
    cl::init(""));
cl::opt<std::string> cpu("mcpu", cl::desc("Target CPU (default: the host's)"),
                         cl::init("native"));
cl::opt<std::string> features("mattr", cl::desc("Extra LLVM target features"),
                              cl::init(""));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::init(3), cl::Prefix);
} // namespace

/// Points the NVVM target's toolkit search (CUDA_ROOT first) at the toolkit
/// to use: --cuda-path, else the environment's, else /usr/local/cuda.
static void selectCUDAToolkit() {
  if (!cudaPath.empty()) {
    setenv("CUDA_ROOT", cudaPath.c_str(), /*overwrite=*/1);
    return;
  }
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"}) {
    if (getenv(variable))
      return;
  }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    setenv("CUDA_ROOT", "/usr/local/cuda", /*overwrite=*/0);
}

/// The shared libraries an artifact needs at run time, and where they are.
static FailureOr<LinkOptions> getRuntimeLibraries(ModuleOp module, bool openmp,
                                                  const char *argv0) {
  LinkOptions link;
  auto need = [&](StringRef library, StringRef fallbackDir) -> LogicalResult {
    FailureOr<std::string> dir =
        findRuntimeLibraryDir(argv0, library, fallbackDir);
    if (failed(dir))
      return module.emitError("the artifact needs ")
             << library << ", found neither next to kiln-compile (../lib)"
             << (fallbackDir.empty() ? "" : " nor in ") << fallbackDir;
    if (!llvm::is_contained(link.libraryDirs, *dir))
      link.libraryDirs.push_back(*dir);
    link.libraries.push_back(library.str());
    return success();
  };
  if (openmp && failed(need("libomp.so.5", "/usr/lib/llvm-22/lib")))
    return failure();
  if (target == Target::CUDA && failed(need("libkiln_cuda_runtime.so", "")))
    return failure();
  return link;
}

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
  FailureOr<LinkOptions> link = getRuntimeLibraries(module, openmp, argv0);
  if (failed(link))
    return failure();
  std::string error;
  if (failed(linkSharedObject(objectPath, outputFilename, *link, error)))
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

  // The pipeline of the target, configured by --pipeline-options.
  std::function<void(OpPassManager &)> buildPipeline;
  bool openmp = false;
  if (target == Target::CPU) {
    std::unique_ptr<CPUPipelineOptions> options =
        CPUPipelineOptions::createFromString(pipelineOptions);
    if (options) {
      openmp = options->openmp;
      buildPipeline =
          [opts = std::shared_ptr<CPUPipelineOptions>(std::move(options))](
              OpPassManager &pm) { buildCPUPipeline(pm, *opts); };
    }
  } else {
    std::unique_ptr<GPUPipelineOptions> options =
        GPUPipelineOptions::createFromString(pipelineOptions);
    if (options) {
      buildPipeline =
          [opts = std::shared_ptr<GPUPipelineOptions>(std::move(options))](
              OpPassManager &pm) { buildGPUPipeline(pm, *opts); };
    }
  }
  if (!buildPipeline) {
    llvm::errs() << "kiln-compile: invalid --pipeline-options '"
                 << pipelineOptions << "'\n";
    return 1;
  }

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
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  if (target == Target::CUDA)
    selectCUDAToolkit();

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  buildPipeline(pm);
  if (failed(pm.run(*module)))
    return 1;

  // Host code, and all of a CPU graph, is compiled for this machine's CPU.
  CPUTargetOptions cpuTarget;
  cpuTarget.cpu = cpu;
  cpuTarget.features = features;
  cpuTarget.optLevel = optLevel;
  if (emitKind == EmitKind::SharedObject)
    return failed(buildSharedObject(*module, cpuTarget, openmp, argv[0]));

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "kiln-compile: " << errorMessage << "\n";
    return 1;
  }
  if (emitKind == EmitKind::MLIR) {
    module->print(output->os());
  } else if (failed(emitCPUCode(*module, cpuTarget,
                                emitKind == EmitKind::Object, output->os()))) {
    return 1;
  }
  output->keep();
  return 0;
}
