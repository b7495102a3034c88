//===- FusionReport.cpp - What each kernel of a graph moves ---------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/FusionReport.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

std::optional<int64_t> mlir::kiln::loop::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  int64_t bits = getElementBitWidth(tensor.getElementType());
  return tensor.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

/// Adds `bytes` to `total`, which stays unknown once anything is.
static void accumulate(std::optional<int64_t> &total,
                       std::optional<int64_t> bytes) {
  total =
      total && bytes ? std::optional<int64_t>(*total + *bytes) : std::nullopt;
}

/// The sum of the sizes of `values`.
static std::optional<int64_t> sumBytes(ValueRange values) {
  std::optional<int64_t> total = 0;
  for (Value value : values)
    accumulate(total, getTensorBytes(value.getType()));
  return total;
}

FusionReport mlir::kiln::loop::computeFusionReport(Block &body) {
  FusionReport report;
  report.bytesMoved = 0;
  for (Operation &op : body) {
    if (!isa<LoopNodeOpInterface, KernelOp>(op))
      continue;
    KernelReport kernel;
    kernel.op = &op;
    llvm::SetVector<Value> reads;
    llvm::SetVector<Location> sources;
    op.walk([&](Operation *inner) {
      if (isa<LoopNodeOpInterface>(inner)) {
        ++kernel.numNodes;
        kernel.numReductions += isa<ReduceOp>(inner);
      }
      if (auto matmul = dyn_cast<MatmulOp>(inner)) {
        reads.insert(matmul.getLhs());
        reads.insert(matmul.getRhs());
      }
      if (auto convolution = dyn_cast<ConvolutionOp>(inner)) {
        reads.insert(convolution.getInput());
        reads.insert(convolution.getWeight());
      }
      if (auto scatter = dyn_cast<ScatterOp>(inner))
        reads.insert(scatter.getInit());
      if (!isa<YieldOp, KernelYieldOp>(inner))
        sources.insert(inner->getLoc());
      if (auto load = dyn_cast<LoadOp>(inner)) {
        // Values of the kernel itself stay in registers.
        Operation *source = load.getSource().getDefiningOp();
        if (!source || !op.isAncestor(source))
          reads.insert(load.getSource());
      }
    });
    kernel.sources.assign(sources.begin(), sources.end());
    kernel.bytesRead = sumBytes(reads.getArrayRef());
    kernel.bytesWritten = sumBytes(op.getResults());
    accumulate(report.bytesMoved, kernel.bytesRead);
    accumulate(report.bytesMoved, kernel.bytesWritten);
    report.kernels.push_back(std::move(kernel));
  }
  llvm::SetVector<Value> inputs, outputs;
  for (BlockArgument arg : body.getArguments())
    if (!arg.use_empty())
      inputs.insert(arg);
  if (!body.empty())
    for (Value value : body.getTerminator()->getOperands())
      outputs.insert(value);
  report.idealBytes = sumBytes(inputs.getArrayRef());
  accumulate(report.idealBytes, sumBytes(outputs.getArrayRef()));
  return report;
}
