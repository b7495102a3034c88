//===- FXToLoop.cpp - Lowering fx ops to loop nodes -----------------------===//
//
// Part of Kiln. Each fx op becomes a loop node that computes its result tensor
// element by element; broadcasting becomes index arithmetic, dtype promotion
// becomes scalar casts inside the body. The lowerings live in one file per op
// family (Lowerings.h); this file assembles them into kiln-fx-to-loop.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/FXToLoop/FXToLoop.h"
#include "Lowerings.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTFXTOLOOPPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Makes the flag of each loop.check in `graph` a result of the graph, after
/// its own, with the checks' messages appended to its `kiln.checks`.
static void exposeChecks(fx::GraphOp graph) {
  Block &body = graph.getBody().front();
  auto checks = llvm::to_vector(body.getOps<loop::CheckOp>());
  if (checks.empty())
    return;
  MLIRContext *ctx = graph.getContext();
  auto output = cast<fx::OutputOp>(body.getTerminator());
  SmallVector<Value> results(output->getOperands());
  SmallVector<Attribute> messages;
  if (auto known = graph->getAttrOfType<ArrayAttr>(loop::kChecksAttrName))
    llvm::append_range(messages, known.getValue());
  for (loop::CheckOp check : checks) {
    results.push_back(check.getFlag());
    messages.push_back(check.getMessageAttr());
    check->erase();
  }
  if (ArrayAttr resultAttrs = graph.getResAttrsAttr()) {
    SmallVector<Attribute> attrs(resultAttrs.getValue());
    attrs.resize(results.size(), DictionaryAttr::get(ctx));
    graph.setResAttrsAttr(ArrayAttr::get(ctx, attrs));
  }
  output->setOperands(results);
  graph.setFunctionType(FunctionType::get(ctx, graph.getArgumentTypes(),
                                          ValueRange(results).getTypes()));
  graph->setAttr(loop::kChecksAttrName, ArrayAttr::get(ctx, messages));
}

/// Names each fx op's location after the op (`loc("native_layer_norm"(...))`),
/// so that the loop nodes it lowers to, and the kernels they become, carry
/// the name: GPU kernels are named after it (`kiln_rows_native_layer_norm`)
/// and profiles tell them apart. Diagnostics still point at the file.
static void nameLocations(fx::GraphOp graph) {
  graph.walk([](Operation *op) {
    if (isa<fx::GraphOp, fx::OutputOp>(op) ||
        !isa<fx::FXDialect>(op->getDialect()) || isa<NameLoc>(op->getLoc()))
      return;
    op->setLoc(NameLoc::get(
        StringAttr::get(op->getContext(), op->getName().stripDialect()),
        op->getLoc()));
  });
}

namespace {

struct ConvertFXToLoopPass
    : kiln::impl::ConvertFXToLoopPassBase<ConvertFXToLoopPass> {
  using Base::Base;

  void runOnOperation() override {
    nameLocations(getOperation());
    FXToLoopOptions options;
    options.computeInF32 = computeInF32;
    options.welford = welford;
    options.normalCdfFromTail = normalCdfFromTail;
    options.directConvolutionDepth = directConvolutionDepth;
    options.runtimeChecks = runtimeChecks;
    options.deviceAsserts = deviceAsserts;
    // Matrix products first, while their operands are still fx views whose
    // transposes and merged batches they can read through.
    RewritePatternSet matmulPatterns(&getContext());
    populateFXToLoopMatmulPatterns(matmulPatterns, options);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(matmulPatterns))))
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    populateFXToLoopPatterns(patterns, options);
    // Top-down, so that producers are nodes by the time their readers lower.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    exposeChecks(getOperation());

    if (!failOnUnsupported)
      return;
    WalkResult result = getOperation().walk([](Operation *op) {
      if (isa<fx::GraphOp, fx::OutputOp>(op) ||
          !isa<fx::FXDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("kiln-fx-to-loop: no lowering for '")
          << op->getName() << "' with these operand types";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::kiln::populateFXToLoopPatterns(RewritePatternSet &patterns,
                                          const FXToLoopOptions &options) {
  // The patterns of one op are tried in the order they are added: the
  // reductions' rewrite of zero-dim operands comes before the lowerings of
  // var and logsumexp (normalizations).
  populateElementwiseLoweringPatterns(patterns, options);
  populateReductionLoweringPatterns(patterns);
  populateIndexingLoweringPatterns(patterns, options);
  populateViewLoweringPatterns(patterns);
  populateNormalizationLoweringPatterns(patterns, options);
  populatePoolingLoweringPatterns(patterns);
  populateCreationLoweringPatterns(patterns);
  populateMathLoweringPatterns(patterns, options);
  populateComplexLoweringPatterns(patterns);
  populateComplexMathLoweringPatterns(patterns);
  populateFFTLoweringPatterns(patterns);
  populateInterpolationLoweringPatterns(patterns);
  populateRandomLoweringPatterns(patterns);
  populateViewScatterLoweringPatterns(patterns);
  populateScatterLoweringPatterns(patterns, options);
  populateScanLoweringPatterns(patterns);
  populateSymbolicBoundsLoweringPatterns(patterns);
  populateAttentionLoweringPatterns(patterns);
  populateFXToLoopMatmulPatterns(patterns, options);
}

void mlir::kiln::populateFXToLoopMatmulPatterns(
    RewritePatternSet &patterns, const FXToLoopOptions &options) {
  populateMatmulLoweringPatterns(patterns, options);
  populateConvolutionLoweringPatterns(patterns, options);
}
