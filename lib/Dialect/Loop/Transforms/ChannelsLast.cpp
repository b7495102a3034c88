//===- ChannelsLast.cpp - Image nodes stored channels-last ----------------===//
//
// Part of Kiln. kiln-loop-channels-last: around a convolution library's
// channels-last convolutions, every 4-d pointwise node that only loop bodies
// read computes and stores its image as [N, H, W, C] instead of [N, C, H,
// W]: its index space is permuted, and each load of it reads the permuted
// position. The transposes that feed the library then copy a tensor already
// in its layout and fold away, and the nodes between two convolutions read
// and write the library's layout; only the graph's inputs and results, and
// what other ops read, keep PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/Passes.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln::loop {
#define GEN_PASS_DEF_CHANNELSLASTPASS
#include "kiln/Dialect/Loop/Transforms/Passes.h.inc"
} // namespace mlir::kiln::loop

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

/// Dimension i of a channels-last image is dimension kToLast[i] of the
/// PyTorch one; dimension d of the PyTorch one is kToFirst[d] of it.
static constexpr int64_t kToLast[] = {0, 2, 3, 1};
static constexpr int64_t kToFirst[] = {0, 3, 1, 2};

/// Whether `node` (a pointwise or reduce node) can be stored channels-last:
/// a 4-d node whose every use is a load inside a loop body or a constant
/// `tensor.dim`.
static bool isMovableImage(Operation *node) {
  if (cast<LoopNodeOpInterface>(node).getResultType().getRank() != 4)
    return false;
  return llvm::all_of(node->getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (isa<LoadOp>(user))
      return use.getOperandNumber() == 0;
    if (auto dim = dyn_cast<tensor::DimOp>(user))
      return dim.getConstantIndex().has_value();
    return false;
  });
}

/// Whether `node`'s body reads channels-last images: it loads a 4-d
/// tensor, and each 4-d tensor it loads (but at constant positions) it
/// reads at its channel index last, past unit dimensions (an NHWC image, a
/// per-channel statistic kept as [1, C, 1, 1]).
static bool readsChannelsLast(Operation *node) {
  Value channel = node->getRegion(0).front().getArgument(1);
  bool reads = false;
  WalkResult walk = node->walk([&](LoadOp load) {
    auto type = cast<RankedTensorType>(load.getSource().getType());
    if (type.getRank() != 4)
      return WalkResult::advance();
    int64_t innermost = 3;
    while (innermost > 0 && type.getDimSize(innermost) == 1)
      --innermost;
    Value index = load.getIndices()[innermost];
    if (index == channel) {
      reads = true;
      return WalkResult::advance();
    }
    return index.getDefiningOp<arith::ConstantOp>() ? WalkResult::advance()
                                                    : WalkResult::interrupt();
  });
  return reads && !walk.wasInterrupted();
}

/// `node` (a pointwise or reduce node) stored channels-last: a node over
/// the permuted result index space with the same body (a reduction's
/// dimensions stay after the result's), each load and size query of it
/// permuted.
static void storeChannelsLast(RewriterBase &rewriter, Operation *node) {
  RankedTensorType type = cast<LoopNodeOpInterface>(node).getResultType();
  ValueRange dynamicSizes = cast<LoopNodeOpInterface>(node).getDynamicSizes();
  SmallVector<int64_t> shape;
  SmallVector<Value> sizes;
  for (int64_t dim : kToLast) {
    shape.push_back(type.getDimSize(dim));
    if (type.isDynamicDim(dim))
      sizes.push_back(dynamicSizes[type.getDynamicDimIndex(dim)]);
  }
  rewriter.setInsertionPoint(node);
  Operation *moved = rewriter.clone(*node);
  moved->getResult(0).setType(
      RankedTensorType::get(shape, type.getElementType(), type.getEncoding()));
  if (auto pointwise = dyn_cast<PointwiseOp>(moved))
    pointwise.getDynamicSizesMutable().assign(sizes);
  else
    cast<ReduceOp>(moved).getDynamicSizesMutable().assign(sizes);
  // The result's induction variables, in the new order of dimensions, ahead
  // of the old ones, which they replace.
  Block &body = moved->getRegion(0).front();
  for (int64_t dim = 0; dim < 4; ++dim)
    body.insertArgument(dim, rewriter.getIndexType(),
                        body.getArgument(2 * dim).getLoc());
  for (int64_t dim = 0; dim < 4; ++dim)
    rewriter.replaceAllUsesWith(body.getArgument(4 + dim),
                                body.getArgument(kToFirst[dim]));
  body.eraseArguments(4, 4);

  for (OpOperand &use : llvm::make_early_inc_range(node->getUses())) {
    Operation *user = use.getOwner();
    rewriter.setInsertionPoint(user);
    if (auto load = dyn_cast<LoadOp>(user)) {
      SmallVector<Value> indices;
      for (int64_t dim : kToLast)
        indices.push_back(load.getIndices()[dim]);
      rewriter.replaceOpWithNewOp<LoadOp>(load, moved->getResult(0), indices);
      continue;
    }
    auto dim = cast<tensor::DimOp>(user);
    rewriter.replaceOpWithNewOp<tensor::DimOp>(
        dim, moved->getResult(0), kToFirst[*dim.getConstantIndex()]);
  }
  rewriter.eraseOp(node);
}

/// Whether `size` is the size of dimension `dim` of `tensor`: its node's
/// size operand, or a `tensor.dim` of it.
static bool isSizeOf(Value size, Value tensor, int64_t dim) {
  if (auto query = size.getDefiningOp<tensor::DimOp>();
      query && query.getSource() == tensor && query.getConstantIndex() == dim)
    return true;
  auto node = tensor.getDefiningOp<LoopNodeOpInterface>();
  RankedTensorType type = node ? node.getResultType() : RankedTensorType();
  return node && type.isDynamicDim(dim) &&
         node.getDynamicSizes()[type.getDynamicDimIndex(dim)] == size;
}

/// The tensor `node` copies whole and unchanged (its body yields the load
/// of a tensor of its own type at its induction variables, in order, over
/// the same sizes), or null.
static Value getCopiedTensor(PointwiseOp node) {
  Block &body = node.getBody().front();
  if (body.getOperations().size() != 2)
    return {};
  auto load = dyn_cast<LoadOp>(body.front());
  if (!load || node.getYield()->getOperand(0) != load.getResult() ||
      load.getSource().getType() != node.getResultType() ||
      load.getIndices() != ValueRange(body.getArguments()))
    return {};
  Value source = load.getSource();
  RankedTensorType type = node.getResultType();
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim) &&
        !isSizeOf(node.getDynamicSizes()[type.getDynamicDimIndex(dim)], source,
                  dim))
      return {};
  return source;
}

namespace {
struct ChannelsLastPass
    : kiln::loop::impl::ChannelsLastPassBase<ChannelsLastPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // The graphs' bodies: the blocks that hold nodes, outside any node.
    llvm::SetVector<Block *> graphs;
    getOperation()->walk([&](PointwiseOp node) {
      Block *block = node->getBlock();
      if (!isa<LoopDialect>(block->getParentOp()->getDialect()))
        graphs.insert(block);
    });
    for (Block *graph : graphs) {
      Block &block = *graph;
      bool hasLibraryConvolution =
          llvm::any_of(block.getOps<ConvolutionOp>(),
                       [](ConvolutionOp op) { return op.getChannelsLast(); });
      bool everyImage = allGraphs || hasLibraryConvolution;
      // Readers come after their producers: a node and its readers move in
      // one sweep, each load permuted as its source moves (so that a reader
      // of a moved node then reads channels-last). In every graph, pointwise
      // and reduce nodes that read channels-last images move (the gradient
      // of a max pooling of NHWC images, say).
      SmallVector<Operation *> nodes;
      for (Operation &op : block)
        if (isa<PointwiseOp, ReduceOp>(op))
          nodes.push_back(&op);
      for (Operation *node : nodes) {
        if (!isMovableImage(node))
          continue;
        if ((everyImage && isa<PointwiseOp>(node)) || readsChannelsLast(node))
          storeChannelsLast(rewriter, node);
      }
      // The library's transposes now copy tensors already in its layout.
      for (auto node : llvm::make_early_inc_range(block.getOps<PointwiseOp>()))
        if (Value copied = getCopiedTensor(node)) {
          rewriter.replaceAllUsesWith(node.getResult(), copied);
          rewriter.eraseOp(node);
        }
    }
  }
};
} // namespace
