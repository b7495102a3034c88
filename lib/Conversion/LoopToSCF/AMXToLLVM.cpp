//===- AMXToLLVM.cpp - AMX tiles, loop-carried too, to LLVM ---------------===//
//
// Part of Kiln. The AMX dialect's own lowering (in vector-to-llvm) turns its
// ops into LLVM's AMX intrinsics, but a tile that a loop carries (a
// product's sums over K) stays an `!amx.tile` block argument that no later
// conversion knows. This pass lowers the ops and the structured loops'
// tile types together, before the rest of the CPU pipeline's conversions.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/AMX/Transforms.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_CONVERTAMXTOLLVMPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct ConvertAMXToLLVMPass
    : kiln::impl::ConvertAMXToLLVMPassBase<ConvertAMXToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // The ops' patterns read memrefs as LLVM descriptors; the loops change
    // only the types of the tiles they carry.
    LLVMTypeConverter llvmTypes(context);
    TypeConverter tileTypes;
    tileTypes.addConversion([](Type type) { return type; });
    tileTypes.addConversion([context](amx::TileType) -> Type {
      return LLVM::LLVMX86AMXType::get(context);
    });
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                   Location loc) -> Value {
      return UnrealizedConversionCastOp::create(b, loc, type, inputs)
          .getResult(0);
    };
    tileTypes.addSourceMaterialization(cast);
    tileTypes.addTargetMaterialization(cast);

    RewritePatternSet patterns(context);
    LLVMConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    populateAMXLegalizeForLLVMExportPatterns(llvmTypes, patterns);
    configureAMXLegalizeForExportTarget(target);
    scf::populateSCFStructuralTypeConversionsAndLegality(tileTypes, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
