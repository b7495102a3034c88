//===- EpilogueFusion.cpp - Pointwise readers into matrix products --------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Transforms/EpilogueFusion.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/NodeBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

/// `value` without a rounding to a narrower float and back (extf(truncf(x))
/// of x's type); used only where the rounding commutes with what follows.
static Value skipRoundTrip(Value value) {
  auto ext = value.getDefiningOp<arith::ExtFOp>();
  if (!ext)
    return value;
  auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
  if (!trunc || trunc.getIn().getType() != value.getType())
    return value;
  return trunc.getIn();
}

/// Matches `value` = max(x, 0) in either order; returns x.
static Value matchRelu(Value value) {
  auto max = value.getDefiningOp<arith::MaximumFOp>();
  if (!max)
    return {};
  if (matchPattern(max.getRhs(), m_AnyZeroFloat()))
    return max.getLhs();
  if (matchPattern(max.getLhs(), m_AnyZeroFloat()))
    return max.getRhs();
  return {};
}

/// Matches `value` as a load of a vector of N elements of `elementType` at
/// the column index `column`, widened to the sum's type if needed; returns
/// the vector.
static Value matchBiasLoad(Value value, Value column, Type elementType) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    value = ext.getIn();
  auto load = value.getDefiningOp<LoadOp>();
  if (!load || load.getIndices().size() != 1 ||
      load.getIndices().front() != column)
    return {};
  auto type = cast<RankedTensorType>(load.getSource().getType());
  if (type.getElementType() != elementType)
    return {};
  return load.getSource();
}

std::optional<LibraryEpilogue>
mlir::kiln::loop::matchLibraryEpilogue(MatmulOp matmul) {
  Type operandElement =
      cast<RankedTensorType>(matmul.getLhs().getType()).getElementType();
  Type resultElement = matmul.getResultType().getElementType();
  FloatType accumulatorType = matmul.getAccumulatorType();
  if (resultElement != operandElement && resultElement != accumulatorType)
    return std::nullopt;
  LibraryEpilogue epilogue;
  if (!matmul.hasEpilogue())
    return epilogue;

  Block &body = matmul.getEpilogue().front();
  Value sum = body.getArguments().back();
  Value column = body.getArgument(body.getNumArguments() - 2);
  Value value = matmul.getEpilogueYield().getValue();
  if (resultElement != accumulatorType) {
    auto trunc = value.getDefiningOp<arith::TruncFOp>();
    if (!trunc || trunc.getIn().getType() != accumulatorType)
      return std::nullopt;
    value = trunc.getIn();
  }
  // relu commutes with rounding (monotone, and 0 stays 0), so a rounding
  // between the bias and relu changes nothing.
  if (Value input = matchRelu(value)) {
    epilogue.activation = LibraryEpilogue::Activation::Relu;
    value = skipRoundTrip(input);
  }
  if (value == sum)
    return epilogue;
  auto add = value.getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value other = add.getLhs() == sum   ? add.getRhs()
                : add.getRhs() == sum ? add.getLhs()
                                      : Value();
  if (!other)
    return std::nullopt;
  epilogue.bias = matchBiasLoad(other, column, resultElement);
  if (!epilogue.bias)
    return std::nullopt;
  return epilogue;
}

/// Whether `index` is the row-major linearization of `ivs` over `sizes`
/// (static; the first is never multiplied): `(ivs[0] * sizes[1] + ivs[1]) *
/// sizes[2] + ...`, as a view that collapses dimensions reads them.
static bool isLinearized(Value index, ArrayRef<BlockArgument> ivs,
                         ArrayRef<int64_t> sizes) {
  if (ivs.size() == 1)
    return index == ivs.front();
  auto add = index.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  Value last = ivs.back();
  Value rest = add.getLhs() == last   ? add.getRhs()
               : add.getRhs() == last ? add.getLhs()
                                      : Value();
  auto mul = rest ? rest.getDefiningOp<arith::MulIOp>() : nullptr;
  if (!mul)
    return false;
  APInt factor;
  Value outer =
      matchPattern(mul.getRhs(), m_ConstantInt(&factor))   ? mul.getLhs()
      : matchPattern(mul.getLhs(), m_ConstantInt(&factor)) ? mul.getRhs()
                                                           : Value();
  return outer && factor.getSExtValue() == sizes.back() &&
         isLinearized(outer, ivs.drop_back(), sizes.drop_back());
}

/// How `reader` reads `product`: the groups of its dimensions that each of
/// the product's dimensions is (the identity where it reads the product at
/// its own index, or a collapse of its leading dimensions where it reads a
/// Linear's product over [batch * tokens, features] as [batch, tokens,
/// features]), if every read of the product is a load in its body at the
/// linearized index of each group; dimensions grouped with others must
/// have static sizes.
static std::optional<SmallVector<ReassociationIndices>>
getReadGroups(PointwiseOp reader, Value product) {
  auto readerType = reader.getResultType();
  auto productType = cast<RankedTensorType>(product.getType());
  std::optional<SmallVector<ReassociationIndices>> groups;
  if (readerType.getShape() == productType.getShape()) {
    groups.emplace();
    for (int64_t dim = 0; dim < readerType.getRank(); ++dim)
      groups->push_back({dim});
  } else {
    groups = getReassociationIndicesForCollapse(readerType.getShape(),
                                                productType.getShape());
  }
  if (!groups)
    return std::nullopt;
  for (const ReassociationIndices &group : *groups)
    if (group.size() > 1 && llvm::any_of(group, [&](int64_t dim) {
          return readerType.isDynamicDim(dim);
        }))
      return std::nullopt;

  Block &body = reader.getBody().front();
  for (OpOperand &use : product.getUses()) {
    auto load = dyn_cast<LoadOp>(use.getOwner());
    if (!load || load->getBlock() != &body)
      return std::nullopt;
    for (auto [index, group] : llvm::zip(load.getIndices(), *groups)) {
      SmallVector<BlockArgument> ivs;
      SmallVector<int64_t> sizes;
      for (int64_t dim : group) {
        ivs.push_back(body.getArgument(dim));
        sizes.push_back(readerType.getDimSize(dim));
      }
      if (!isLinearized(index, ivs, sizes))
        return std::nullopt;
    }
  }
  return groups;
}

/// Builds, before `reader`, a copy of `matmul` whose epilogue is
/// `reader`'s body, which reads `matmul` by `groups` (getReadGroups): the
/// copy has `matmul`'s shape and `reader`'s element type, its epilogue
/// recovering the reader's indices from its own. `reader` and `matmul`
/// stay.
static MatmulOp buildFused(RewriterBase &rewriter, MatmulOp matmul,
                           PointwiseOp reader,
                           ArrayRef<ReassociationIndices> groups) {
  Location loc = matmul.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(reader);
  bool sameShape = llvm::all_of(
      groups, [](const ReassociationIndices &g) { return g.size() == 1; });
  auto fused = MatmulOp::create(
      rewriter, loc,
      matmul.getResultType().clone(reader.getResultType().getElementType()),
      matmul.getLhs(), matmul.getRhs(),
      sameShape ? reader.getDynamicSizes() : matmul.getDynamicSizes(),
      matmul.getTransposeLhsAttr(), matmul.getTransposeRhsAttr());
  SmallVector<Type> argTypes(groups.size(), rewriter.getIndexType());
  argTypes.push_back(matmul.getAccumulatorType());
  SmallVector<Location> argLocs(argTypes.size(), loc);
  Block *body =
      rewriter.createBlock(&fused.getEpilogue(), {}, argTypes, argLocs);

  // The reader's indices: each group's, delinearized from the product's
  // index.
  Block &readerBody = reader.getBody().front();
  auto readerType = reader.getResultType();
  IRMapping mapping;
  for (auto [group, index] : llvm::zip(groups, body->getArguments())) {
    SmallVector<int64_t> sizes = llvm::map_to_vector(
        group, [&](int64_t dim) { return readerType.getDimSize(dim); });
    for (auto [dim, digit] :
         llvm::zip_equal(group, delinearizeIndex(rewriter, loc, index, sizes)))
      mapping.map(readerBody.getArgument(dim), digit);
  }

  // The product, as the reader saw it: the sum, rounded where the product
  // was stored rounded.
  Value sum = body->getArguments().back();
  Type productElement = matmul.getResultType().getElementType();
  Value product = sum;
  if (productElement != sum.getType())
    product = arith::TruncFOp::create(rewriter, loc, productElement, sum);
  for (Operation &op : readerBody) {
    auto load = dyn_cast<LoadOp>(op);
    if (load && load.getSource() == matmul.getResult()) {
      mapping.map(load.getResult(), product);
      continue;
    }
    rewriter.clone(op, mapping);
  }
  // The index arithmetic that only the product's loads read.
  SmallVector<Operation *> cloned = llvm::map_to_vector(
      body->without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(cloned))
    if (isOpTriviallyDead(op))
      rewriter.eraseOp(op);
  return fused;
}

/// On targets whose products are library calls, when the readers of the
/// f32 sums of 16-bit operands do more than a library applies, but each
/// reads a sum only to add a bias along the columns (a Linear whose result
/// is viewed, split into q, k and v, ...): the library adds the bias and
/// rounds to the operands' type, as eager's addmm does, and the readers read
/// that. Fails (changing nothing) when a read is not so.
static LogicalResult splitBiasEpilogue(RewriterBase &rewriter,
                                       MatmulOp matmul) {
  Type operandElement =
      cast<RankedTensorType>(matmul.getLhs().getType()).getElementType();
  FloatType accumulatorType = matmul.getAccumulatorType();
  if (operandElement.getIntOrFloatBitWidth() != 16 ||
      matmul.getResultType().getElementType() != accumulatorType ||
      matmul->use_empty())
    return failure();
  // Each read: the load of a sum, the addition of the bias to it, and the
  // bias's element it adds.
  struct Read {
    LoadOp load;
    arith::AddFOp add;
    Value biasElement;
  };
  SmallVector<Read> reads;
  Value bias;
  for (Operation *user : matmul->getUsers()) {
    auto load = dyn_cast<LoadOp>(user);
    if (!load || !load->hasOneUse())
      return failure();
    auto add = dyn_cast<arith::AddFOp>(*load->getUsers().begin());
    if (!add)
      return failure();
    Value other =
        add.getLhs() == load.getResult() ? add.getRhs() : add.getLhs();
    Value readBias =
        matchBiasLoad(other, load.getIndices().back(), operandElement);
    if (!readBias || (bias && readBias != bias))
      return failure();
    bias = readBias;
    reads.push_back({load, add, other});
  }

  // The library's product: round(bias + sum), in the operands' type.
  Location loc = matmul.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(matmul);
  auto biased = MatmulOp::create(
      rewriter, loc, matmul.getResultType().clone(operandElement),
      matmul.getLhs(), matmul.getRhs(), matmul.getDynamicSizes(),
      matmul.getTransposeLhsAttr(), matmul.getTransposeRhsAttr());
  int64_t rank = matmul.getResultType().getRank();
  SmallVector<Type> argTypes(rank, rewriter.getIndexType());
  argTypes.push_back(accumulatorType);
  Block *epilogue =
      rewriter.createBlock(&biased.getEpilogue(), {}, argTypes,
                           SmallVector<Location>(argTypes.size(), loc));
  Value column = epilogue->getArgument(rank - 1);
  Value element = LoadOp::create(rewriter, loc, bias, column);
  Value widened =
      arith::ExtFOp::create(rewriter, loc, accumulatorType, element);
  Value sum = arith::AddFOp::create(rewriter, loc, widened,
                                    epilogue->getArguments().back());
  Value rounded = arith::TruncFOp::create(rewriter, loc, operandElement, sum);
  YieldOp::create(rewriter, loc, rounded);

  // Each reader reads the rounded, biased product where it added the bias.
  for (auto [load, add, biasElement] : reads) {
    rewriter.setInsertionPoint(add);
    Value product =
        LoadOp::create(rewriter, loc, biased.getResult(), load.getIndices());
    rewriter.replaceOp(
        add, arith::ExtFOp::create(rewriter, loc, accumulatorType, product));
    rewriter.eraseOp(load);
    if (Operation *biasOp = biasElement.getDefiningOp();
        biasOp && biasOp->use_empty()) {
      Operation *source = biasOp->getOperand(0).getDefiningOp();
      rewriter.eraseOp(biasOp);
      if (source && isa<LoadOp>(source) && source->use_empty())
        rewriter.eraseOp(source);
    }
  }
  rewriter.eraseOp(matmul);
  return success();
}

bool mlir::kiln::loop::isTensorCoreProduct(MatmulOp matmul) {
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  if (!lhs.getElementType().isF16() && !lhs.getElementType().isBF16())
    return false;
  auto rowsCopyWhole = [](RankedTensorType type) {
    int64_t row = type.getShape().back();
    return !ShapedType::isDynamic(row) && row % 8 == 0;
  };
  return rowsCopyWhole(lhs) && rowsCopyWhole(rhs);
}

/// Whether `options` allow `matmul`'s epilogue.
static bool isAllowed(MatmulOp matmul, const EpilogueFusionOptions &options) {
  if (!options.libraryOnly)
    return true;
  return (options.tensorCoreProducts && isTensorCoreProduct(matmul)) ||
         matchLibraryEpilogue(matmul);
}

/// Fuses `matmul`'s only reader into it, when that reads it at its own
/// index or through collapsed dimensions (getReadGroups) and `options` allow
/// the epilogue it makes.
static LogicalResult fuseReader(RewriterBase &rewriter, MatmulOp matmul,
                                Block &block,
                                const EpilogueFusionOptions &options) {
  if (!matmul->hasOneUse())
    return failure();
  Operation *user = *matmul->getUsers().begin();
  auto reader = dyn_cast<PointwiseOp>(user->getParentOp());
  // Bool results would need bit-packed vectors on the CPU.
  if (!reader || reader->getBlock() != &block ||
      !isa<FloatType>(reader.getResultType().getElementType()))
    return failure();
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReadGroups(reader, matmul.getResult());
  if (!groups)
    return failure();
  // Building the candidate is the simplest way to match it.
  MatmulOp candidate = buildFused(rewriter, matmul, reader, *groups);
  if (!isAllowed(candidate, options)) {
    rewriter.eraseOp(candidate);
    return failure();
  }
  Value result = candidate.getResult();
  if (result.getType() != reader.getResultType()) {
    rewriter.setInsertionPoint(reader);
    result = tensor::ExpandShapeOp::create(
        rewriter, reader.getLoc(), reader.getResultType(), result, *groups);
  }
  rewriter.replaceOp(reader, result);
  rewriter.eraseOp(matmul);
  return success();
}

unsigned mlir::kiln::loop::fuseEpilogues(RewriterBase &rewriter, Block &block,
                                         const EpilogueFusionOptions &options) {
  SmallVector<MatmulOp> candidates;
  for (auto matmul : block.getOps<MatmulOp>())
    if (!matmul.hasEpilogue())
      candidates.push_back(matmul);
  unsigned fused = 0;
  for (MatmulOp matmul : candidates) {
    if (succeeded(fuseReader(rewriter, matmul, block, options)) ||
        (options.libraryOnly && succeeded(splitBiasEpilogue(rewriter, matmul))))
      ++fused;
  }
  return fused;
}
