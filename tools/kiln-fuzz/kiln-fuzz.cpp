//===- kiln-fuzz.cpp - libFuzzer target: the parser and the pipelines -----===//
//
// Part of Kiln. Each input goes to MLIR's parser with Kiln's dialects and,
// where it parses and verifies, through one of Kiln's pipelines, chosen by
// the input's length (so that mutations move inputs between them).
// Diagnostics are the expected answer to bad input; a crash, a sanitizer's
// report or a run past libFuzzer's timeout is a bug. Built only with
// KILN_FUZZER (utils/build.sh --fuzz); how to run it: docs/Testing.md.
//
//===----------------------------------------------------------------------===//

#include "kiln/InitKiln.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Support/ParserGuards.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <iterator>

using namespace mlir;

/// The pipelines utils/fuzz.py runs through kiln-opt; the GPU one stops at
/// PTX text (ptxas is not fuzzed).
static const char *const kPipelines[] = {
    "builtin.module(kiln-lower-to-loop)",
    "builtin.module(kiln-cpu-pipeline)",
    "builtin.module(kiln-gpu-pipeline{format=isa})",
    "builtin.module(kiln-lower-to-loop,kiln-loop-to-scf-cpu)",
};

static const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry();
    kiln::registerAllKilnDialects(*result);
    kiln::registerAllKilnTranslations(*result);
    return result;
  }();
  return *registry;
}

/// LLVM's allocators poison their free space in instrumented code only: with
/// LLVM's own libraries uninstrumented, user poisoning would flag every slab
/// they fill (as utils/asan-check.sh says too). Leaks are MLIR's uniqued
/// storage, kept for the process by design.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  kiln::registerAllKilnPasses();
  // The GPU pipeline links libdevice from the CUDA toolkit.
  kiln::selectCUDAToolkit();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(text, "input");
  if (failed(kiln::checkParserGuards(buffer->getMemBufferRef(), &context)))
    return 0;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || failed(verify(*module)))
    return 0;
  PassManager pm(&context);
  const char *pipeline = kPipelines[size % std::size(kPipelines)];
  if (failed(parsePassPipeline(pipeline, pm))) {
    llvm::errs() << "kiln-fuzz: cannot build " << pipeline << "\n";
    std::abort();
  }
  (void)pm.run(*module);
  return 0;
}
