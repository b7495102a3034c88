//===- HostToFX.cpp - Lowering host functions to fx graphs ----------------===//
//
// Part of Kiln's embedding example. The one place where the host compiler
// meets Kiln: its ops become fx ops, which Kiln's pipelines compile.
//
//===----------------------------------------------------------------------===//

#include "HostDialect.h"
#include "Passes.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace host {
#define GEN_PASS_DEF_HOSTTOFXPASS
#include "Passes.h.inc"
} // namespace host

using namespace mlir;
namespace fx = mlir::kiln::fx;

namespace {
struct HostToFXPass : host::impl::HostToFXPassBase<HostToFXPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto func :
         llvm::make_early_inc_range(getOperation().getOps<host::FuncOp>())) {
      // The graph takes over the function's body, block arguments included.
      rewriter.setInsertionPoint(func);
      auto graph = fx::GraphOp::create(
          rewriter, func.getLoc(), func.getSymName(), func.getFunctionType(),
          /*sym_visibility=*/nullptr, func.getArgAttrsAttr(),
          func.getResAttrsAttr(), /*symbols=*/nullptr);
      rewriter.inlineRegionBefore(func.getBody(), graph.getBody(),
                                  graph.getBody().end());
      rewriter.eraseOp(func);
      graph.walk([&](Operation *op) { lowerOp(rewriter, op); });
    }
  }

  /// Replaces a host op by the fx op of the same meaning.
  static void lowerOp(IRRewriter &rewriter, Operation *op) {
    rewriter.setInsertionPoint(op);
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](host::AddOp add) {
          rewriter.replaceOpWithNewOp<fx::AddOp>(add, add.getType(),
                                                 add.getLhs(), add.getRhs(),
                                                 /*alpha=*/nullptr);
        })
        .Case([&](host::MulOp mul) {
          rewriter.replaceOpWithNewOp<fx::MulOp>(mul, mul.getType(),
                                                 mul.getLhs(), mul.getRhs());
        })
        .Case([&](host::ReluOp relu) {
          rewriter.replaceOpWithNewOp<fx::ReluOp>(relu, relu.getType(),
                                                  relu.getInput());
        })
        .Case([&](host::ReturnOp ret) {
          rewriter.replaceOpWithNewOp<fx::OutputOp>(ret, ret.getOperands());
        });
  }
};
} // namespace
