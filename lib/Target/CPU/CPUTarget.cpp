//===- CPUTarget.cpp - Object files for x86 CPUs --------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/CPUTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::kiln;

/// The host's features as an LLVM feature string ("+avx2,-avx512f,...").
static std::string getHostFeatures() {
  std::string features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty())
      features += ",";
    features += (feature.second ? "+" : "-") + feature.first().str();
  }
  return features;
}

/// Creates the target machine for `options`, or says in `error` why it
/// cannot.
static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CPUTargetOptions &options, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + lookupError;
    return nullptr;
  }
  bool native = options.cpu == "native";
  std::string cpu = native ? llvm::sys::getHostCPUName().str() : options.cpu;
  // LLVM only warns of an unknown CPU, then generates code for a subtarget
  // without 64-bit mode and aborts.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu)) {
    error = "unknown CPU '" + cpu + "' for " + triple.str() +
            " (LLVM's x86 CPU names, e.g. x86-64, x86-64-v3, sapphirerapids)";
    return nullptr;
  }
  std::string features = native ? getHostFeatures() : std::string();
  if (!options.features.empty())
    features += (features.empty() ? "" : ",") + options.features;
  auto level = options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
               : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                                       : llvm::CodeGenOptLevel::Default;
  llvm::TargetOptions targetOptions;
  // Constructors (GPU artifacts load their kernels in one) must go to
  // .init_array: the dynamic loader does not run the legacy .ctors section.
  targetOptions.UseInitArray = true;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, targetOptions,
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    error = "cannot create an LLVM target machine for CPU '" + cpu + "'";
  return machine;
}

LogicalResult
mlir::kiln::verifyCPUTargetOptions(const CPUTargetOptions &options,
                                   std::string &error) {
  if (options.optLevel > 3) {
    error = "optimization level " + std::to_string(options.optLevel) +
            " is not one of 0-3";
    return failure();
  }
  return success(createTargetMachine(options, error) != nullptr);
}

int64_t mlir::kiln::getVectorBytes(const CPUTargetOptions &options) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return 16;
  const llvm::MCSubtargetInfo *subtarget = machine->getMCSubtargetInfo();
  if (subtarget->checkFeatures("+avx512f"))
    return 64;
  if (subtarget->checkFeatures("+avx"))
    return 32;
  return 16;
}

bool mlir::kiln::canUseAMX(const CPUTargetOptions &options) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine ||
      !machine->getMCSubtargetInfo()->checkFeatures("+amx-bf16,+amx-tile"))
    return false;
  if (options.cpu != "native")
    return true;
  // Linux 5.16 and later grant the tiles (XFEATURE_XTILEDATA, which no
  // header names) on request.
  constexpr long kTileData = 18;
  return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, kTileData) == 0;
}

/// LLVM's default pipeline at `optLevel` (O0 to O3), but for
/// CalledValuePropagation: it only annotates indirect calls, which Kiln's
/// artifacts do not make, and its time grows with the square of a
/// function's calls (16 of 20 s for a graph of 1333 layers).
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned optLevel) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) {
        return pass != "CalledValuePropagationPass";
      });
  llvm::PassBuilder builder(&machine, llvm::PipelineTuningOptions(),
                            std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(levels[std::min(optLevel, 3u)]);
  pipeline.run(module, modules);
}

LogicalResult mlir::kiln::emitCPUCode(ModuleOp module,
                                      const CPUTargetOptions &options,
                                      bool asObject,
                                      llvm::raw_pwrite_stream &os) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return module.emitError(error);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "kiln");
  if (!llvmModule)
    return module.emitError("cannot translate the module to LLVM IR");
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());

  optimizeModule(*llvmModule, *machine, options.optLevel);

  if (!asObject) {
    llvmModule->print(os, /*AAW=*/nullptr);
    return success();
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, /*DwoOut=*/nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("the LLVM target cannot emit object files");
  codegen.run(*llvmModule);
  return success();
}
