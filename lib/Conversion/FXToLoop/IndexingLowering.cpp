//===- IndexingLowering.cpp - Indexing and concatenation ------------------===//
//
// Part of Kiln. embedding, index_select, gather, index (ATen's advanced
// indexing) and cat: loads at loaded indices, each clamped into its tensor.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// `value` (a loaded index element) as an index clamped to [0, size): an
/// index out of range is an error in PyTorch; here it reads the nearest
/// element instead of memory outside the tensor.
static Value clampIndex(OpBuilder &b, Location loc, Value value, Value size) {
  return clampToRange(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), value),
      size);
}

/// Lowers fx.embedding, fx.index_select and fx.gather: the source read at
/// indices loaded from the index tensor.
template <typename OpTy> struct IndexingLowering : OpRewritePattern<OpTy> {
  IndexingLowering(MLIRContext *ctx, IndexChecks checks)
      : OpRewritePattern<OpTy>(ctx), checks(checks) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Value source, indexTensor;
    int64_t dim = 0;
    if constexpr (std::is_same_v<OpTy, fx::EmbeddingOp>) {
      source = op.getWeight();
      indexTensor = op.getIndices();
    } else {
      source = op.getSelf();
      indexTensor = op.getIndex();
      int64_t rank = cast<RankedTensorType>(source.getType()).getRank();
      // The attribute's getter returns it unsigned.
      dim = static_cast<int64_t>(op.getDim());
      if (dim < 0)
        dim += std::max<int64_t>(rank, 1);
    }
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto indexType = cast<RankedTensorType>(indexTensor.getType());
    if (sourceType.getRank() == 0 ||
        (indexType.getRank() == 0 && !std::is_same_v<OpTy, fx::EmbeddingOp>))
      return rewriter.notifyMatchFailure(op, "scalar operands");
    Value bound = getDimSize(rewriter, loc, source, dim);
    std::string message =
        std::is_same_v<OpTy, fx::GatherOp>
            ? ("RuntimeError: gather(): index out of bounds for dimension " +
               Twine(dim))
                  .str()
            : "IndexError: index out of range in self";
    checks.checkTensor(rewriter, loc, indexTensor, bound, /*negative=*/false,
                       message);
    // The index element loaded at `at`, clamped into the source's dimension.
    auto loadIndex = [&](OpBuilder &b, Location loc, ValueRange at) {
      Value loaded = loop::LoadOp::create(b, loc, indexTensor, at);
      checks.checkElement(b, loc, loaded, bound, /*negative=*/false, message);
      return clampIndex(b, loc, loaded, bound);
    };
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(resultType, [&](int64_t d) -> Value {
          if constexpr (std::is_same_v<OpTy, fx::EmbeddingOp>) {
            if (d < indexType.getRank())
              return getDimSize(rewriter, loc, indexTensor, d);
            return getDimSize(rewriter, loc, source, 1);
          } else if constexpr (std::is_same_v<OpTy, fx::IndexSelectOp>) {
            return d == dim ? getDimSize(rewriter, loc, indexTensor, 0)
                            : getDimSize(rewriter, loc, source, d);
          } else {
            return getDimSize(rewriter, loc, indexTensor, d);
          }
        });
    Value result = buildIndexMapNode(
        rewriter, loc, source, resultType, dynamicSizes,
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          SmallVector<Value> indices;
          if constexpr (std::is_same_v<OpTy, fx::EmbeddingOp>) {
            indices = {loadIndex(b, loc, ivs.take_front(indexType.getRank())),
                       ivs.back()};
          } else if constexpr (std::is_same_v<OpTy, fx::IndexSelectOp>) {
            indices.assign(ivs.begin(), ivs.end());
            indices[dim] = loadIndex(
                b, loc,
                indexType.getRank() == 0 ? ValueRange{} : ivs.slice(dim, 1));
          } else {
            indices.assign(ivs.begin(), ivs.end());
            indices[dim] = loadIndex(b, loc, ivs);
          }
          return indices;
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  IndexChecks checks;
};

/// Lowers fx.index with integer index tensors (ATen's advanced indexing,
/// also what `_unsafe_index` decomposes to): each indexed dimension of
/// `self` is read at the broadcast index tensors' element, negative indices
/// counting from the end. The broadcast dimensions replace the indexed ones
/// where those are adjacent, and lead the result otherwise. Bool masks give
/// data-dependent shapes and are not lowered.
struct IndexLowering : OpRewritePattern<fx::IndexOp> {
  IndexLowering(MLIRContext *ctx, IndexChecks checks)
      : OpRewritePattern(ctx), checks(checks) {}

  LogicalResult matchAndRewrite(fx::IndexOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    FailureOr<AdvancedIndexing> indexing =
        AdvancedIndexing::get(op.getSelf(), op.getIndices(),
                              op.getIndexPositions(), resultType.getShape());
    if (failed(indexing))
      return rewriter.notifyMatchFailure(
          op, "bool masks give data-dependent shapes");
    SmallVector<Value> indexedSizes = indexing->getIndexedSizes(rewriter, loc);
    indexing->checkIndices(rewriter, loc, checks, indexedSizes);
    Value result = buildIndexMapNode(
        rewriter, loc, op.getSelf(), resultType,
        indexing->getDynamicSizes(rewriter, loc),
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          return indexing->getSelfIndices(b, loc, ivs, indexedSizes, checks);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  IndexChecks checks;
};

/// Lowers fx.cat: each element comes from the input whose range along `dim`
/// holds it. Every input is read at an index clamped into its range and the
/// right value selected, so no read leaves its tensor.
struct CatLowering : OpRewritePattern<fx::CatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = resultType.getRank();
    if (rank == 0)
      return rewriter.notifyMatchFailure(op, "cat of scalars");
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    // PyTorch skips 1-D empty tensors in a cat; only inputs of full rank
    // take part.
    SmallVector<Value> inputs;
    for (Value input : op.getTensors())
      if (cast<RankedTensorType>(input.getType()).getRank() == rank)
        inputs.push_back(input);
    if (inputs.empty())
      return rewriter.notifyMatchFailure(op, "no input of the result's rank");
    Type dtype = resultType.getElementType();
    // Complex inputs are copied, not converted.
    if (isa<ComplexType>(dtype) && llvm::any_of(inputs, [&](Value input) {
          return cast<RankedTensorType>(input.getType()).getElementType() !=
                 dtype;
        }))
      return rewriter.notifyMatchFailure(op, "complex cat of other dtypes");
    // Where each input starts along `dim`, and its size there.
    SmallVector<Value> starts, sizes;
    Value offset = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (Value input : inputs) {
      starts.push_back(offset);
      sizes.push_back(getDimSize(rewriter, loc, input, dim));
      offset = arith::AddIOp::create(rewriter, loc, offset, sizes.back());
    }
    SmallVector<Value> dynamicSizes =
        collectDynamicSizes(resultType, [&](int64_t d) -> Value {
          if (d == dim)
            return offset;
          for (Value input : inputs)
            if (cast<RankedTensorType>(input.getType()).isDynamicDim(d))
              return getDimSize(rewriter, loc, input, d);
          return getDimSize(rewriter, loc, inputs.front(), d);
        });

    auto node =
        loop::PointwiseOp::create(rewriter, loc, resultType, dynamicSizes);
    Block *body = rewriter.createBlock(&node.getBody());
    body->addArguments(SmallVector<Type>(rank, rewriter.getIndexType()),
                       SmallVector<Location>(rank, loc));
    Value position = body->getArgument(dim);
    Value selected;
    for (int64_t k = inputs.size() - 1; k >= 0; --k) {
      SmallVector<Value> indices(body->getArguments());
      Value local = arith::SubIOp::create(rewriter, loc, position, starts[k]);
      indices[dim] = clampToRange(rewriter, loc, local, sizes[k]);
      Value element = loop::LoadOp::create(rewriter, loc, inputs[k], indices);
      element = convertScalar(
          rewriter, loc, element,
          cast<RankedTensorType>(inputs[k].getType()).getElementType(), dtype);
      if (!selected) {
        selected = element;
        continue;
      }
      Value before = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, position, starts[k + 1]);
      selected =
          arith::SelectOp::create(rewriter, loc, before, element, selected);
    }
    loop::YieldOp::create(rewriter, loc, selected);
    rewriter.setInsertionPointAfter(node);
    rewriter.replaceOp(op, node.getResult());
    return success();
  }
};
} // namespace

void fxtoloop::populateIndexingLoweringPatterns(
    RewritePatternSet &patterns, const FXToLoopOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<IndexingLowering<fx::EmbeddingOp>,
               IndexingLowering<fx::IndexSelectOp>,
               IndexingLowering<fx::GatherOp>, IndexLowering>(
      ctx, IndexChecks(options));
  patterns.add<CatLowering>(ctx);
}
