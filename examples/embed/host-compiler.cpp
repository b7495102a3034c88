//===- host-compiler.cpp - A compiler that embeds Kiln --------------------===//
//
// Part of Kiln's embedding example. A host compiler with its own dialect
// hands its tensor functions to Kiln: host ops -> fx graphs (its pass), then
// Kiln's CPU pipeline and linker, then it loads the artifact and runs it.
//
//   host-compiler program.mlir artifact.so
//
//===----------------------------------------------------------------------===//

#include "HostDialect.h"
#include "Passes.h"

#include "kiln/Compiler/Compiler.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/InitKiln.h"
#include "kiln/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <vector>

using namespace mlir;

namespace {
/// What running a graph needs to know of it, read before Kiln lowers it.
struct GraphInfo {
  std::string name;
  std::vector<int64_t> inputSizes;
  std::vector<int64_t> resultSizes;
};
} // namespace

/// The element counts of `types`, which must be static f32 tensors: the only
/// ones this example feeds.
static LogicalResult getSizes(Operation *op, TypeRange types,
                              std::vector<int64_t> &sizes) {
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32())
      return op->emitError("the example runs static f32 tensors only, not ")
             << type;
    sizes.push_back(tensor.getNumElements());
  }
  return success();
}

/// Runs graph `info` of the loaded artifact on inputs 0.5 * (i + 1) * (j - 2)
/// (argument i, element j) and prints its signature and results.
static LogicalResult runGraph(llvm::sys::DynamicLibrary &library,
                              const GraphInfo &info) {
  // Kiln's C entry points (docs/ABI.md).
  using RunFn =
      int32_t (*)(void *const *, void *const *, const int64_t *, void *);
  auto *signature = static_cast<const char *>(
      library.getAddressOfSymbol(("kiln_" + info.name + "_signature").c_str()));
  auto run = reinterpret_cast<RunFn>(
      library.getAddressOfSymbol(("kiln_" + info.name + "_run").c_str()));
  if (!signature || !run) {
    llvm::errs() << "host-compiler: the artifact lacks @" << info.name << "\n";
    return failure();
  }
  // malloc's 16-byte alignment is what the ABI asks of every buffer.
  std::vector<std::vector<float>> inputs, results;
  std::vector<void *> inputPointers, resultPointers;
  for (auto [index, size] : llvm::enumerate(info.inputSizes)) {
    auto i = static_cast<int64_t>(index);
    std::vector<float> &input = inputs.emplace_back(size);
    for (int64_t j = 0; j < size; ++j)
      input[j] = 0.5f * static_cast<float>((i + 1) * (j - 2));
    inputPointers.push_back(input.data());
  }
  for (int64_t size : info.resultSizes) {
    results.emplace_back(size, -7.0f);
    resultPointers.push_back(results.back().data());
  }
  llvm::outs() << "== run @" << info.name << "\nsignature: " << signature
               << "\n";
  if (run(inputPointers.data(), resultPointers.data(), nullptr, nullptr) != 0) {
    llvm::errs() << "host-compiler: @" << info.name << " failed\n";
    return failure();
  }
  for (auto [index, result] : llvm::enumerate(results)) {
    llvm::outs() << "result " << index << ":";
    for (float value : result)
      llvm::outs() << llvm::format(" %g", value);
    llvm::outs() << "\n";
  }
  return success();
}

static LogicalResult compileAndRun(StringRef inputPath, StringRef artifact) {
  // Only what this compiler uses: its dialect, Kiln's, and the translations
  // of CPU code to LLVM IR. Kiln's pipeline loads the rest as it runs.
  DialectRegistry registry;
  registry.insert<host::HostDialect>();
  kiln::registerAllKilnDialects(registry);
  kiln::registerKilnCPUTranslations(registry);
  MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputPath, sourceMgr, &context);
  if (!module)
    return failure();

  // The host compiler's own lowering, into Kiln's input.
  PassManager toFX(&context);
  toFX.addPass(host::createHostToFXPass());
  if (failed(toFX.run(*module)))
    return failure();
  llvm::outs() << "== fx graphs\n" << *module << "\n";

  std::vector<GraphInfo> graphs;
  for (auto graph : module->getOps<kiln::fx::GraphOp>()) {
    GraphInfo &info = graphs.emplace_back();
    info.name = graph.getSymName().str();
    if (failed(getSizes(graph, graph.getArgumentTypes(), info.inputSizes)) ||
        failed(getSizes(graph, graph.getResultTypes(), info.resultSizes)))
      return failure();
  }

  // Kiln's CPU pipeline, a stage at a time as any compiler would embed it,
  // then its object code generation and linker.
  PassManager toLLVM(&context);
  kiln::CPUPipelineOptions pipelineOptions;
  kiln::buildCPUPipeline(toLLVM, pipelineOptions);
  if (failed(toLLVM.run(*module)))
    return failure();
  kiln::CompileOptions compileOptions;
  compileOptions.runtimeLibraryDirs.push_back(KILN_LIBRARY_DIR);
  if (failed(kiln::linkArtifact(*module, compileOptions, artifact)))
    return failure();

  std::string error;
  llvm::sys::DynamicLibrary library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(artifact.str().c_str(),
                                                     &error);
  if (!library.isValid()) {
    llvm::errs() << "host-compiler: " << error << "\n";
    return failure();
  }
  for (const GraphInfo &info : graphs) {
    if (failed(runGraph(library, info)))
      return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: host-compiler program.mlir artifact.so\n";
    return 2;
  }
  return failed(compileAndRun(argv[1], argv[2])) ? 1 : 0;
}
