//===- Compiler.cpp - The whole compiler, fx graphs to artifacts ----------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Compiler.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln;

/// The names of `options` (which print as `{name=value ...}`).
static SmallVector<std::string>
getOptionNames(const detail::PassOptions &options) {
  std::string printed;
  llvm::raw_string_ostream stream(printed);
  options.print(stream);
  SmallVector<StringRef> entries;
  StringRef(printed).trim("{} ").split(entries, ' ', -1, /*KeepEmpty=*/false);
  return llvm::map_to_vector(
      entries, [](StringRef entry) { return entry.split('=').first.str(); });
}

/// For each name in `text` (`name[=value] ...`) that is not one of `known`
/// but close to one, "; 'name': did you mean 'closest'?".
static std::string suggestOptionNames(StringRef text,
                                      ArrayRef<std::string> known) {
  std::string advice;
  SmallVector<StringRef> given;
  text.split(given, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef entry : given) {
    StringRef name = entry.split('=').first;
    if (llvm::is_contained(known, name))
      continue;
    const std::string *closest = nullptr;
    unsigned best = 0;
    for (const std::string &candidate : known) {
      unsigned distance = name.edit_distance(candidate);
      if (!closest || distance < best) {
        closest = &candidate;
        best = distance;
      }
    }
    if (closest && best <= std::max<size_t>(2, name.size() / 3))
      advice += "; '" + name.str() + "': did you mean '" + *closest + "'?";
  }
  return advice;
}

/// Parses `text` into pipeline options of type `Options`; on failure returns
/// why, naming `pipeline`, its options and the closest to a misspelt one.
template <typename Options>
static LogicalResult parsePipelineOptions(Options &options, StringRef text,
                                          StringRef pipeline,
                                          std::string &error) {
  // Option parsing reports through llvm::cl; keep its message for the caller.
  std::string message;
  llvm::raw_string_ostream messageStream(message);
  if (succeeded(options.parseFromString(text, messageStream)))
    return success();
  SmallVector<std::string> known = getOptionNames(Options());
  error = ("invalid " + pipeline + " options '" + text +
           "': " + StringRef(message).trim() + suggestOptionNames(text, known) +
           "; " + pipeline + " takes: " + llvm::join(known, ", "))
              .str();
  return failure();
}

LogicalResult mlir::kiln::buildCompilePipeline(OpPassManager &pm,
                                               const CompileOptions &options,
                                               std::string &error) {
  if (options.target == CompileTarget::CPU) {
    CPUPipelineOptions cpuOptions;
    if (failed(parsePipelineOptions(cpuOptions, options.pipelineOptions,
                                    "kiln-cpu-pipeline", error)))
      return failure();
    // Vectors as wide as the target computes on, unless the user chose.
    if (!cpuOptions.vectorBytes.hasValue())
      cpuOptions.vectorBytes = getVectorBytes(options.cpu);
    if (!cpuOptions.amx.hasValue())
      cpuOptions.amx = canUseAMX(options.cpu);
    if (options.graphLoweringOnly)
      buildCPUGraphLowering(pm, cpuOptions);
    else
      buildCPUPipeline(pm, cpuOptions);
    return success();
  }
  GPUPipelineOptions gpuOptions;
  if (failed(parsePipelineOptions(gpuOptions, options.pipelineOptions,
                                  "kiln-gpu-pipeline", error)))
    return failure();
  if (options.graphLoweringOnly)
    buildGPUGraphLowering(pm, gpuOptions);
  else
    buildGPUPipeline(pm, gpuOptions);
  return success();
}

LogicalResult mlir::kiln::lowerToLLVM(
    ModuleOp module, const CompileOptions &options,
    llvm::function_ref<LogicalResult(PassManager &)> configure) {
  // An empty input would link into an artifact with no entry points.
  if (module.getOps<fx::GraphOp>().empty())
    return emitError(module.getLoc(),
                     "the module holds no fx.graph to compile");
  PassManager pm(module.getContext());
  std::string error;
  if (failed(buildCompilePipeline(pm, options, error)))
    return module.emitError(error);
  if (configure && failed(configure(pm)))
    return failure();
  if (options.target == CompileTarget::CUDA)
    selectCUDAToolkit(options.cudaPath);
  return pm.run(module);
}

/// Whether `module` holds an op of `dialect`, whose lowering to LLVM IR calls
/// a runtime library.
static bool containsDialect(ModuleOp module, StringRef dialect) {
  return module
      .walk([&](Operation *op) {
        return op->getName().getDialectNamespace() == dialect
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `module` declares a function of Kiln's CUDA runtime (its GEMM),
/// which a graph without kernels calls too.
static bool callsCUDARuntime(ModuleOp module) {
  return module
      .walk([](SymbolOpInterface symbol) {
        return symbol.getName().starts_with("kiln_cuda_")
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The shared libraries that `module`'s code needs at run time, and where
/// they are.
static FailureOr<LinkOptions>
getRuntimeLibraries(ModuleOp module, const CompileOptions &options) {
  LinkOptions link;
  auto need = [&](StringRef library, StringRef fallbackDir) -> LogicalResult {
    std::string dir;
    for (const std::string &candidate : options.runtimeLibraryDirs) {
      SmallString<256> path(candidate);
      llvm::sys::path::append(path, library);
      if (llvm::sys::fs::exists(path)) {
        dir = candidate;
        break;
      }
    }
    if (dir.empty()) {
      // argv[0] is only a fallback for finding the running program.
      FailureOr<std::string> found =
          findRuntimeLibraryDir("", library, fallbackDir);
      if (failed(found))
        return module.emitError("the artifact needs ")
               << library << ", found neither in the runtime library "
               << "directories nor beside the program (../lib)"
               << (fallbackDir.empty() ? "" : " nor in ") << fallbackDir;
      dir = *found;
    }
    if (!llvm::is_contained(link.libraryDirs, dir))
      link.libraryDirs.push_back(dir);
    link.libraries.push_back(library.str());
    return success();
  };
  // omp ops become calls to libomp's __kmpc_* functions, which Kiln's
  // OpenMP layer implements on the process's runtime, and GPU launches
  // calls to the mgpu* functions of Kiln's CUDA runtime, only when
  // translated; GEMMs are calls of the runtime already.
  // The same library asks the OS for AMX tiles (kiln_cpu_request_amx).
  if ((containsDialect(module, "omp") ||
       module.lookupSymbol("kiln_cpu_request_amx")) &&
      failed(need("libkiln_openmp.so", "")))
    return failure();
  if ((containsDialect(module, "gpu") || callsCUDARuntime(module)) &&
      failed(need("libkiln_cuda_runtime.so", "")))
    return failure();
  return link;
}

LogicalResult mlir::kiln::linkArtifact(ModuleOp module,
                                       const CompileOptions &options,
                                       StringRef outputPath) {
  FailureOr<LinkOptions> link = getRuntimeLibraries(module, options);
  if (failed(link))
    return failure();
  SmallString<128> objectPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("kiln", "o", fd, objectPath))
    return module.emitError("cannot create a temporary object file");
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream objectStream(fd, /*shouldClose=*/true);
    if (failed(
            emitCPUCode(module, options.cpu, /*asObject=*/true, objectStream)))
      return failure();
  }
  std::string error;
  if (failed(linkSharedObject(objectPath, outputPath, *link, error)))
    return module.emitError(error);
  return success();
}

LogicalResult mlir::kiln::compileToSharedObject(ModuleOp module,
                                                const CompileOptions &options,
                                                StringRef outputPath) {
  if (failed(lowerToLLVM(module, options)))
    return failure();
  return linkArtifact(module, options, outputPath);
}
