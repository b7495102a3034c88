//===- Compiler.cpp - Running Kiln's compiler, C API ----------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln-c/Compiler.h"

#include "kiln/Compiler/Compiler.h"
#include "kiln/Support/ParserGuards.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

MlirLogicalResult kilnRunPipeline(MlirModule module, MlirStringRef pipeline) {
  ModuleOp moduleOp = unwrap(module);
  StringRef text = unwrap(pipeline);
  PassManager pm(moduleOp.getContext());
  // Parse errors go to a string, then to the context's handlers like any
  // other diagnostic.
  std::string message;
  llvm::raw_string_ostream messageStream(message);
  LogicalResult parsed = failure();
  if (text.starts_with(ModuleOp::getOperationName().str() + "(")) {
    FailureOr<OpPassManager> anchored = parsePassPipeline(text, messageStream);
    if (succeeded(anchored)) {
      static_cast<OpPassManager &>(pm) = std::move(*anchored);
      parsed = success();
    }
  } else {
    parsed = parsePassPipeline(text, pm, messageStream);
  }
  if (failed(parsed))
    return wrap(moduleOp.emitError("invalid pass pipeline '")
                << text << "': " << StringRef(message).trim());
  return wrap(pm.run(moduleOp));
}

MlirLogicalResult kilnParseAndRunPipeline(MlirContext context,
                                          MlirStringRef source,
                                          MlirStringRef pipeline,
                                          MlirModule *result) {
  *result = MlirModule{nullptr};
  if (failed(kiln::checkParserGuards(
          llvm::MemoryBufferRef(unwrap(source), /*Identifier=*/""),
          unwrap(context))))
    return mlirLogicalResultFailure();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(unwrap(source), unwrap(context));
  if (!module)
    return mlirLogicalResultFailure();
  if (mlirLogicalResultIsFailure(kilnRunPipeline(wrap(*module), pipeline)))
    return mlirLogicalResultFailure();
  *result = wrap(module.release());
  return mlirLogicalResultSuccess();
}

MlirLogicalResult kilnCompileToSharedObject(MlirModule module,
                                            MlirStringRef target,
                                            MlirStringRef pipelineOptions,
                                            MlirStringRef runtimeLibraryDir,
                                            MlirStringRef outputPath) {
  ModuleOp moduleOp = unwrap(module);
  kiln::CompileOptions options;
  StringRef targetName = unwrap(target);
  if (targetName == "cuda") {
    options.target = kiln::CompileTarget::CUDA;
  } else if (targetName != "cpu") {
    return wrap(moduleOp.emitError("unknown target '")
                << targetName << "'; expected 'cpu' or 'cuda'");
  }
  options.pipelineOptions = unwrap(pipelineOptions).str();
  if (runtimeLibraryDir.length)
    options.runtimeLibraryDirs.push_back(unwrap(runtimeLibraryDir).str());
  return wrap(
      kiln::compileToSharedObject(moduleOp, options, unwrap(outputPath)));
}
