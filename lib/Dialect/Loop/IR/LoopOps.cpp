//===- LoopOps.cpp - loop dialect operations ------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/IR/LoopOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::kiln::loop;

//===----------------------------------------------------------------------===//
// Combining kinds
//===----------------------------------------------------------------------===//

/// The combiners of loop.reduce and of loop.scatter.
static constexpr CombiningKind kReduceKinds[] = {
    CombiningKind::sum, CombiningKind::prod, CombiningKind::max,
    CombiningKind::min, CombiningKind::welford};
static constexpr CombiningKind kScatterKinds[] = {
    CombiningKind::sum, CombiningKind::prod, CombiningKind::max,
    CombiningKind::min, CombiningKind::assign};

/// "combiner must be "a", "b" or "c", not "<name>"".
static std::string describeCombinerError(ArrayRef<CombiningKind> allowed,
                                         StringRef name) {
  std::string message = "combiner must be ";
  for (auto [i, kind] : llvm::enumerate(allowed)) {
    if (i > 0)
      message += i + 1 == allowed.size() ? " or " : ", ";
    message += ("\"" + stringifyCombiningKind(kind) + "\"").str();
  }
  return message + (", not \"" + name + "\"").str();
}

/// Parses a combiner written as a string ("sum") into `kind`; names other
/// than those `allowed` for `opName` are errors.
static ParseResult parseCombiningKind(OpAsmParser &parser,
                                      CombiningKindAttr &kind, StringRef opName,
                                      ArrayRef<CombiningKind> allowed) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseString(&name))
    return failure();
  std::optional<CombiningKind> parsed = symbolizeCombiningKind(name);
  if (!parsed || !llvm::is_contained(allowed, *parsed))
    return parser.emitError(loc)
           << "'" << opName << "' op " << describeCombinerError(allowed, name);
  kind = CombiningKindAttr::get(parser.getContext(), *parsed);
  return success();
}

static ParseResult parseReduceCombiningKind(OpAsmParser &parser,
                                            CombiningKindAttr &kind) {
  return parseCombiningKind(parser, kind, "loop.reduce", kReduceKinds);
}

static ParseResult parseScatterCombiningKind(OpAsmParser &parser,
                                             CombiningKindAttr &kind) {
  return parseCombiningKind(parser, kind, "loop.scatter", kScatterKinds);
}

/// Prints a combiner as the string it is written as.
static void printCombiningKind(OpAsmPrinter &printer, CombiningKindAttr kind) {
  printer << '"' << stringifyCombiningKind(kind.getValue()) << '"';
}

static void printReduceCombiningKind(OpAsmPrinter &printer, Operation *,
                                     CombiningKindAttr kind) {
  printCombiningKind(printer, kind);
}

static void printScatterCombiningKind(OpAsmPrinter &printer, Operation *,
                                      CombiningKindAttr kind) {
  printCombiningKind(printer, kind);
}

//===----------------------------------------------------------------------===//
// PointwiseOp
//===----------------------------------------------------------------------===//

YieldOp PointwiseOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

void PointwiseOp::getAsmBlockArgumentNames(Region &region,
                                           OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : region.getArguments())
    setNameFn(arg, "i" + std::to_string(arg.getArgNumber()));
}

LogicalResult PointwiseOp::verify() {
  int64_t numDynamic = getResultType().getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << getResultType() << " has " << numDynamic << " dynamic dimensions";
  return success();
}

LogicalResult PointwiseOp::verifyRegions() {
  Block &body = getBody().front();
  int64_t rank = getResultType().getRank();
  if (static_cast<int64_t>(body.getNumArguments()) != rank)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, but the index space of "
           << getResultType() << " has " << rank << " dimensions";
  for (BlockArgument arg : body.getArguments()) {
    if (!arg.getType().isIndex())
      return emitOpError("body argument #")
             << arg.getArgNumber() << " must be an index, but is "
             << arg.getType();
  }
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError("body must end with loop.yield");
  Type expected = getScalarType(getResultType().getElementType());
  Type yielded = getYield().getValue().getType();
  if (yielded != expected)
    return getYield().emitOpError("yields ")
           << yielded << ", but the elements of " << getResultType()
           << " are computed as " << expected;
  return success();
}

/// Checks a node's extra iteration extents (`what`, e.g. "reduction"): each
/// static one at least 0, and as many dynamic ones (`?`) as `numOperands`
/// sizes give; the lowerings take both for granted.
static LogicalResult verifyExtents(Operation *op, ArrayRef<int64_t> extents,
                                   size_t numOperands, StringRef what) {
  size_t numDynamic = llvm::count_if(extents, ShapedType::isDynamic);
  if (numDynamic != numOperands)
    return op->emitOpError("has ")
           << numOperands << " dynamic " << what << " sizes, but " << numDynamic
           << " dynamic " << what << " extents";
  for (int64_t extent : extents)
    if (!ShapedType::isDynamic(extent) && extent < 0)
      return op->emitOpError(what) << " extent " << extent << " is negative";
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

YieldOp ReduceOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

void ReduceOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  int64_t rank = getResultType().getRank();
  for (BlockArgument arg : region.getArguments()) {
    int64_t number = arg.getArgNumber();
    setNameFn(arg, number < rank ? "i" + std::to_string(number)
                                 : "r" + std::to_string(number - rank));
  }
}

SmallVector<int64_t> ReduceOp::getIndexSpaceShape() {
  SmallVector<int64_t> shape = llvm::to_vector(getResultType().getShape());
  llvm::append_range(shape, getReductionShape());
  return shape;
}

LogicalResult ReduceOp::verify() {
  if (!llvm::is_contained(kReduceKinds, getKind()))
    return emitOpError(
        describeCombinerError(kReduceKinds, stringifyCombiningKind(getKind())));
  if (getKind() == CombiningKind::welford &&
      !isa<FloatType>(getResultType().getElementType()))
    return emitOpError("\"welford\" reduces floats, not ")
           << getResultType().getElementType();
  int64_t numDynamic = getResultType().getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << getResultType() << " has " << numDynamic << " dynamic dimensions";
  if (getReductionShape().empty())
    return emitOpError("needs at least one reduction dimension");
  return verifyExtents(*this, getReductionShape(),
                       getReductionDynamicSizes().size(), "reduction");
}

LogicalResult ReduceOp::verifyRegions() {
  Block &body = getBody().front();
  int64_t rank = getResultType().getRank() + getReductionShape().size();
  if (static_cast<int64_t>(body.getNumArguments()) != rank)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, but the result "
           << getResultType() << " and the reduction space have " << rank
           << " dimensions";
  for (BlockArgument arg : body.getArguments()) {
    if (!arg.getType().isIndex())
      return emitOpError("body argument #")
             << arg.getArgNumber() << " must be an index, but is "
             << arg.getType();
  }
  Type element = getScalarType(getResultType().getElementType());
  Type yielded = getYield().getValue().getType();
  bool widened = (element.isF16() || element.isBF16()) && yielded.isF32();
  if (yielded != element && !widened)
    return getYield().emitOpError("yields ")
           << yielded << ", but the elements of " << getResultType()
           << " accumulate as " << element
           << (element.isF16() || element.isBF16() ? " or f32" : "");
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterOp
//===----------------------------------------------------------------------===//

ScatterYieldOp ScatterOp::getYield() {
  return cast<ScatterYieldOp>(getBody().front().getTerminator());
}

void ScatterOp::getAsmBlockArgumentNames(Region &region,
                                         OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : region.getArguments())
    setNameFn(arg, "u" + std::to_string(arg.getArgNumber()));
}

LogicalResult ScatterOp::verify() {
  if (!llvm::is_contained(kScatterKinds, getKind()))
    return emitOpError(describeCombinerError(
        kScatterKinds, stringifyCombiningKind(getKind())));
  if (getInit().getType() != getResultType())
    return emitOpError("starts from ")
           << getInit().getType() << ", but defines " << getResultType();
  Type element = getResultType().getElementType();
  if (getKind() != CombiningKind::assign && !isa<FloatType>(element) &&
      !(isa<IntegerType>(element) && !element.isInteger(1)))
    return emitOpError("combines floats or integers, not ") << element;
  int64_t numDynamic = getResultType().getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << getResultType() << " has " << numDynamic << " dynamic dimensions";
  if (getUpdateShape().empty())
    return emitOpError("needs at least one update dimension");
  return verifyExtents(*this, getUpdateShape(), getUpdateDynamicSizes().size(),
                       "update");
}

LogicalResult ScatterOp::verifyRegions() {
  Block &body = getBody().front();
  int64_t rank = getUpdateShape().size();
  if (static_cast<int64_t>(body.getNumArguments()) != rank)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, but the update space has "
           << rank << " dimensions";
  for (BlockArgument arg : body.getArguments()) {
    if (!arg.getType().isIndex())
      return emitOpError("body argument #")
             << arg.getArgNumber() << " must be an index, but is "
             << arg.getType();
  }
  ScatterYieldOp yield = getYield();
  if (static_cast<int64_t>(yield.getIndices().size()) !=
      getResultType().getRank())
    return yield.emitOpError("yields ")
           << yield.getIndices().size() << " indices into " << getResultType();
  Type element = getScalarType(getResultType().getElementType());
  if (yield.getValue().getType() != element)
    return yield.emitOpError("yields ")
           << yield.getValue().getType() << ", but the elements of "
           << getResultType() << " are " << element;
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

KernelYieldOp KernelOp::getYield() {
  return cast<KernelYieldOp>(getBody().front().getTerminator());
}

bool mlir::kiln::loop::isRowValue(Value tensor, int64_t rows) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return type.getRank() >= rows &&
         llvm::all_of(type.getShape().drop_front(rows),
                      [](int64_t size) { return size == 1; });
}

/// Whether `index` is 0 wherever a node body evaluates it: the constant 0,
/// or an induction variable of a size-1 dimension.
static bool isAlwaysZero(Value index) {
  if (matchPattern(index, m_Zero()))
    return true;
  auto arg = dyn_cast<BlockArgument>(index);
  if (!arg)
    return false;
  Operation *node = arg.getOwner()->getParentOp();
  if (!isNode(node))
    return false;
  SmallVector<int64_t> space =
      cast<LoopNodeOpInterface>(node).getIndexSpaceShape();
  int64_t position = arg.getArgNumber();
  return position < static_cast<int64_t>(space.size()) && space[position] == 1;
}

bool mlir::kiln::loop::isRowAlignedLoad(LoadOp load, int64_t rows) {
  Block *body = load->getBlock();
  if (static_cast<int64_t>(body->getNumArguments()) < rows)
    return false;
  ArrayRef<int64_t> shape = load.getSource().getType().getShape();
  for (auto [dim, index] : llvm::enumerate(load.getIndices())) {
    if (static_cast<int64_t>(dim) < rows) {
      // 0 in a row dimension of size 1 is the row's own index there too.
      if (index != body->getArgument(dim) &&
          !(shape[dim] == 1 && isAlwaysZero(index)))
        return false;
      continue;
    }
    if (!isAlwaysZero(index))
      return false;
  }
  return true;
}

LogicalResult KernelOp::verifyRegions() {
  int64_t rows = getRows();
  KernelYieldOp yield = getYield();
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError("yields ")
           << yield.getValues().getTypes() << ", but the kernel returns "
           << getResultTypes();
  if (getNodes().empty())
    return emitOpError("has no nodes");
  std::optional<ArrayRef<int64_t>> rowShape;
  for (Operation &op : getNodes()) {
    if (!isNode(&op))
      return op.emitOpError("cannot be part of a kernel: only loop nodes "
                            "are");
    auto type = cast<RankedTensorType>(op.getResult(0).getType());
    if (type.getRank() < rows)
      return op.emitOpError("has rank ")
             << type.getRank() << ", fewer than the kernel's " << rows
             << " row dimensions";
    if (isa<ReduceOp>(op) && !isRowValue(op.getResult(0), rows))
      return op.emitOpError("reduces into ")
             << type << ", which has more than the kernel's " << rows
             << " row dimensions (besides size-1 ones)";
    ArrayRef<int64_t> shape = type.getShape().take_front(rows);
    if (!rowShape)
      rowShape = shape;
    else if (!llvm::all_of(llvm::zip(shape, *rowShape), [](auto pair) {
               auto [a, b] = pair;
               return a == b || ShapedType::isDynamic(a) ||
                      ShapedType::isDynamic(b);
             }))
      return op.emitOpError("has rows [")
             << shape << "], but the kernel's first node has [" << *rowShape
             << "]";
    bool yielded = llvm::is_contained(yield.getValues(), op.getResult(0));
    if (!yielded && !isRowValue(op.getResult(0), rows))
      return op.emitOpError("has columns, so the kernel must yield it");
    for (OpOperand &use : op.getResult(0).getUses()) {
      if (use.getOwner() == yield)
        continue;
      auto load = dyn_cast<LoadOp>(use.getOwner());
      if (!load || !isRowValue(op.getResult(0), rows) ||
          !isRowAlignedLoad(load, rows))
        return use.getOwner()->emitOpError(
            "reads a value of its kernel other than at its own row; "
            "only row values (one element per row) can be read "
            "inside a kernel");
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

/// Whether static or dynamic sizes `a` and `b` can be equal.
static bool isCompatibleSize(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

/// Names the arguments of a body that takes `rank` indices and then a
/// value: i0, i1, ..., then `valueName`.
static void nameIndicesAndValue(Region &region, unsigned rank,
                                StringRef valueName,
                                OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : region.getArguments()) {
    unsigned number = arg.getArgNumber();
    setNameFn(arg, number < rank ? "i" + std::to_string(number) : valueName);
  }
}

/// Verifies that `op`'s `body` (its `regionName`) takes `rank` indices and
/// the `valueName` of type `valueType`, and ends with loop.yield.
static LogicalResult verifyIndicesAndValueBody(Operation *op, Block &body,
                                               int64_t rank, Type valueType,
                                               StringRef regionName,
                                               StringRef valueName) {
  SmallVector<Type> expected(rank, IndexType::get(op->getContext()));
  expected.push_back(valueType);
  if (body.getArgumentTypes() != TypeRange(expected))
    return op->emitOpError()
           << regionName << " takes " << body.getArgumentTypes()
           << ", but must take " << rank << " indices and the " << valueType
           << " " << valueName;
  if (body.empty() || !isa<YieldOp>(body.back()))
    return op->emitOpError() << regionName << " must end with loop.yield";
  return success();
}

FloatType MatmulOp::getAccumulatorType() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  Builder b(getContext());
  return lhs.getElementType().isF64() ? b.getF64Type() : b.getF32Type();
}

YieldOp MatmulOp::getEpilogueYield() {
  return cast<YieldOp>(getEpilogue().front().getTerminator());
}

void MatmulOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  nameIndicesAndValue(region, getResultType().getRank(), "sum", setNameFn);
}

LogicalResult ConvolutionOp::verify() {
  RankedTensorType result = getResultType();
  auto input = cast<RankedTensorType>(getInput().getType());
  auto weight = cast<RankedTensorType>(getWeight().getType());
  int64_t rank = result.getRank();
  if (rank < 3 || input.getRank() != rank || weight.getRank() != rank)
    return emitOpError("convolves ")
           << input << " with " << weight << " into " << result
           << ": all three must have the same rank, at least 3";
  Type element = input.getElementType();
  if (!isa<FloatType>(element) || weight.getElementType() != element)
    return emitOpError("convolves ")
           << element << " with " << weight.getElementType()
           << " elements; both must be the same floating-point type";
  Type resultElement = result.getElementType();
  if (resultElement != element &&
      !(resultElement.isF32() && element.getIntOrFloatBitWidth() == 16))
    return emitOpError("holds ")
           << element << " sums in " << resultElement << "; the result must be "
           << element
           << (element.getIntOrFloatBitWidth() == 16 ? " or f32" : "");
  if (!weight.hasStaticShape())
    return emitOpError("needs static filters, not ") << weight;
  int64_t channelDim = getChannelDim();
  if (input.isDynamicDim(channelDim) || result.isDynamicDim(channelDim))
    return emitOpError("has a dynamic number of channels; only the batch and "
                       "spatial sizes may be dynamic");
  if (getDynamicSizes().size() != result.getNumDynamicDims())
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << result << " has " << result.getNumDynamicDims()
           << " dynamic dimensions";
  if (!isCompatibleSize(input.getDimSize(0), result.getDimSize(0)))
    return emitOpError("has batch sizes ")
           << input.getDimSize(0) << " and " << result.getDimSize(0)
           << " in input and result; they must be equal";
  int64_t spatial = rank - 2;
  for (auto [name, values] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"stride", getStride()},
        {"padding", getPadding()},
        {"dilation", getDilation()}})
    if (static_cast<int64_t>(values.size()) != spatial)
      return emitOpError("has ")
             << values.size() << " `" << name << "` entries for " << spatial
             << " spatial dimensions";
  int64_t groups = static_cast<int64_t>(getGroups());
  int64_t channels = input.getDimSize(channelDim),
          filters = weight.getDimSize(0);
  if (groups < 1 || channels % groups || filters % groups ||
      weight.getDimSize(channelDim) * groups != channels ||
      result.getDimSize(channelDim) != filters)
    return emitOpError("convolves ")
           << channels << " channels with " << weight << " in " << groups
           << " groups into " << result.getDimSize(channelDim)
           << " channels: channels and filters must split into the groups, "
              "each filter reading its group's channels";
  for (int64_t index = 0; index < spatial; ++index) {
    int64_t dim = getSpatialDim(index);
    int64_t stride = getStride()[index], dilation = getDilation()[index];
    if (stride < 1 || dilation < 1 || getPadding()[index] < 0)
      return emitOpError("needs positive strides and dilations and "
                         "non-negative padding");
    if (input.isDynamicDim(dim) || result.isDynamicDim(dim)) {
      if (input.isDynamicDim(dim) != result.isDynamicDim(dim))
        return emitOpError("has a dynamic size in spatial dimension ")
               << index << " of only one of its input and result";
      continue;
    }
    int64_t span = dilation * (weight.getDimSize(dim) - 1) + 1;
    int64_t reach = input.getDimSize(dim) + 2 * getPadding()[index];
    int64_t outputs = reach < span ? 0 : (reach - span) / stride + 1;
    if (result.getDimSize(dim) != outputs)
      return emitOpError("has ")
             << result.getDimSize(dim) << " outputs in spatial dimension "
             << index << ", but its input, filters and attributes give "
             << outputs;
  }
  return success();
}

LogicalResult MatmulOp::verify() {
  RankedTensorType result = getResultType();
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (result.getRank() < 2 || lhs.getRank() != result.getRank() ||
      rhs.getRank() != result.getRank())
    return emitOpError("multiplies ")
           << lhs << " by " << rhs << " into " << result
           << ": all three must have the same rank, at least 2";
  Type element = lhs.getElementType();
  if (!isa<FloatType>(element))
    return emitOpError("multiplies ")
           << element << " elements; only floating-point ones are supported";
  if (rhs.getElementType() != element)
    return emitOpError("multiplies ")
           << element << " by " << rhs.getElementType()
           << ": the element types must be equal";
  // Without an epilogue, the result is the sums, rounded or (for 16-bit
  // floats) kept in f32; an epilogue yields whatever the result holds.
  Type resultElement = result.getElementType();
  if (!hasEpilogue() && resultElement != element &&
      !(resultElement == getAccumulatorType() &&
        element.getIntOrFloatBitWidth() == 16))
    return emitOpError("multiplies ")
           << element << " matrices into " << resultElement
           << " elements without an epilogue: the result must be " << element
           << (element.getIntOrFloatBitWidth() == 16 ? " or f32" : "");
  int64_t numDynamic = result.getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << result << " has " << numDynamic << " dynamic dimensions";

  int64_t rank = result.getRank();
  for (int64_t dim = 0; dim < rank - 2; ++dim) {
    if (!isCompatibleSize(lhs.getDimSize(dim), result.getDimSize(dim)) ||
        !isCompatibleSize(rhs.getDimSize(dim), result.getDimSize(dim)))
      return emitOpError("has batch dimension ")
             << dim << " of sizes " << lhs.getDimSize(dim) << ", "
             << rhs.getDimSize(dim) << " and " << result.getDimSize(dim)
             << " in lhs, rhs and result; they must be equal";
  }
  // [M, K] x [K, N] -> [M, N], reading the stored operands transposed where
  // the attributes say so.
  int64_t lhsM = lhs.getDimSize(rank - (getTransposeLhs() ? 1 : 2));
  int64_t lhsK = lhs.getDimSize(rank - (getTransposeLhs() ? 2 : 1));
  int64_t rhsK = rhs.getDimSize(rank - (getTransposeRhs() ? 1 : 2));
  int64_t rhsN = rhs.getDimSize(rank - (getTransposeRhs() ? 2 : 1));
  if (!isCompatibleSize(lhsK, rhsK))
    return emitOpError("contracts K = ")
           << lhsK << " of the lhs with K = " << rhsK << " of the rhs";
  if (!isCompatibleSize(lhsM, result.getDimSize(rank - 2)) ||
      !isCompatibleSize(rhsN, result.getDimSize(rank - 1)))
    return emitOpError("computes an M x N = ")
           << lhsM << " x " << rhsN << " product into " << result;
  return success();
}

LogicalResult MatmulOp::verifyRegions() {
  if (!hasEpilogue())
    return success();
  if (failed(verifyIndicesAndValueBody(
          *this, getEpilogue().front(), getResultType().getRank(),
          getAccumulatorType(), "epilogue", "sum")))
    return failure();
  Type yielded = getEpilogueYield().getValue().getType();
  Type elementType = getScalarType(getResultType().getElementType());
  if (yielded != elementType)
    return getEpilogueYield().emitOpError("yields ")
           << yielded << ", but the elements of " << getResultType()
           << " are computed as " << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp and AttentionBackwardOp
//===----------------------------------------------------------------------===//

/// f64 for f64 queries, else f32.
static FloatType getAttentionAccumulatorType(Value query) {
  auto type = cast<RankedTensorType>(query.getType());
  Builder b(query.getContext());
  return type.getElementType().isF64() ? b.getF64Type() : b.getF32Type();
}

/// Verifies an attention node's scores region: `rank` indices and the
/// score in `accumulator`, yielding a score.
static LogicalResult verifyScoresRegion(Operation *op, Region &scores,
                                        int64_t rank, Type accumulator) {
  if (scores.empty())
    return success();
  if (failed(verifyIndicesAndValueBody(op, scores.front(), rank, accumulator,
                                       "scores region", "score")))
    return failure();
  auto yield = cast<YieldOp>(scores.front().getTerminator());
  Type yielded = yield.getValue().getType();
  if (yielded != accumulator)
    return yield.emitOpError("yields ")
           << yielded << ", but scores are " << accumulator;
  return success();
}

/// Verifies attention's query, key and value against `result` ([b..., L,
/// Ev]: the forward's result, the backward's `grad`): one rank, one
/// floating-point element type, static head sizes, equal batches.
static LogicalResult verifyAttentionOperands(Operation *op, Value queryValue,
                                             Value keyValue, Value valueValue,
                                             RankedTensorType result) {
  auto query = cast<RankedTensorType>(queryValue.getType());
  auto key = cast<RankedTensorType>(keyValue.getType());
  auto value = cast<RankedTensorType>(valueValue.getType());
  int64_t rank = result.getRank();
  if (rank < 2 || query.getRank() != rank || key.getRank() != rank ||
      value.getRank() != rank)
    return op->emitOpError("attends with ")
           << query << ", " << key << " and " << value << " into " << result
           << ": all four must have the same rank, at least 2";
  Type element = query.getElementType();
  if (!isa<FloatType>(element))
    return op->emitOpError("attends with ")
           << element << " elements; only floating-point ones are supported";
  if (key.getElementType() != element || value.getElementType() != element ||
      result.getElementType() != element)
    return op->emitOpError("attends with ")
           << element << " queries, " << key.getElementType() << " keys and "
           << value.getElementType() << " values into "
           << result.getElementType()
           << " elements: the element types must be equal";
  if (query.isDynamicDim(rank - 1) || key.isDynamicDim(rank - 1) ||
      value.isDynamicDim(rank - 1))
    return op->emitOpError("has dynamic head sizes; they must be static");
  for (int64_t dim = 0; dim < rank - 2; ++dim) {
    int64_t size = result.getDimSize(dim);
    if (!isCompatibleSize(query.getDimSize(dim), size) ||
        !isCompatibleSize(key.getDimSize(dim), size) ||
        !isCompatibleSize(value.getDimSize(dim), size))
      return op->emitOpError("has batch dimension ")
             << dim << " of sizes " << query.getDimSize(dim) << ", "
             << key.getDimSize(dim) << ", " << value.getDimSize(dim) << " and "
             << size << " in query, key, value and result; they must be equal";
  }
  if (query.getDimSize(rank - 1) != key.getDimSize(rank - 1))
    return op->emitOpError("scores queries of ")
           << query.getDimSize(rank - 1) << " elements against keys of "
           << key.getDimSize(rank - 1) << "; they must be equal";
  if (!isCompatibleSize(key.getDimSize(rank - 2), value.getDimSize(rank - 2)))
    return op->emitOpError("has ") << key.getDimSize(rank - 2) << " keys but "
                                   << value.getDimSize(rank - 2) << " values";
  if (!isCompatibleSize(query.getDimSize(rank - 2),
                        result.getDimSize(rank - 2)) ||
      value.getDimSize(rank - 1) != result.getDimSize(rank - 1))
    return op->emitOpError("computes ")
           << query.getDimSize(rank - 2) << " queries' sums of "
           << value.getDimSize(rank - 1) << " values into " << result;
  return success();
}

/// Verifies that `statistics` (the `name`) is one `accumulator` per query
/// of `result` ([b..., L, Ev]): [b..., L], its dimensions dynamic exactly
/// where the result's are, so that the two share their dynamic sizes.
static LogicalResult verifyRowStatistics(Operation *op, Type statistics,
                                         RankedTensorType result,
                                         Type accumulator, StringRef name) {
  auto expected =
      RankedTensorType::get(result.getShape().drop_back(), accumulator);
  if (statistics != expected)
    return op->emitOpError("has ")
           << name << " " << statistics << ", but its queries' rows need "
           << expected;
  return success();
}

/// Whether `value` is computed from `score` in the scores region.
static bool dependsOnScore(Value value, Value score) {
  if (value == score)
    return true;
  Operation *def = value.getDefiningOp();
  return def && llvm::any_of(def->getOperands(), [&](Value operand) {
           return dependsOnScore(operand, score);
         });
}

/// Whether `value`'s derivative with respect to `score` is 1 wherever it is
/// finite: the score plus or minus values that do not depend on it, or a
/// select of it and -inf under a condition that does not depend on it.
static bool passesScoreGradient(Value value, Value score) {
  if (value == score)
    return true;
  Operation *def = value.getDefiningOp();
  if (auto add = dyn_cast_or_null<arith::AddFOp>(def)) {
    bool lhs = dependsOnScore(add.getLhs(), score);
    bool rhs = dependsOnScore(add.getRhs(), score);
    return lhs != rhs &&
           passesScoreGradient(lhs ? add.getLhs() : add.getRhs(), score);
  }
  if (auto sub = dyn_cast_or_null<arith::SubFOp>(def))
    return !dependsOnScore(sub.getRhs(), score) &&
           passesScoreGradient(sub.getLhs(), score);
  if (auto select = dyn_cast_or_null<arith::SelectOp>(def)) {
    if (dependsOnScore(select.getCondition(), score))
      return false;
    auto passesOrHides = [&](Value branch) {
      FloatAttr constant;
      if (matchPattern(branch, m_Constant(&constant)))
        return constant.getValue().isInfinity() &&
               constant.getValue().isNegative();
      return passesScoreGradient(branch, score);
    };
    return passesOrHides(select.getTrueValue()) &&
           passesOrHides(select.getFalseValue());
  }
  return false;
}

FloatType AttentionOp::getAccumulatorType() {
  return getAttentionAccumulatorType(getQuery());
}

YieldOp AttentionOp::getScoresYield() {
  return cast<YieldOp>(getScores().front().getTerminator());
}

void AttentionOp::getAsmBlockArgumentNames(Region &region,
                                           OpAsmSetValueNameFn setNameFn) {
  nameIndicesAndValue(region, getResultType().getRank(), "score", setNameFn);
}

LogicalResult AttentionOp::verifyRegions() {
  return verifyScoresRegion(*this, getScores(), getResultType().getRank(),
                            getAccumulatorType());
}

LogicalResult AttentionOp::verify() {
  RankedTensorType result = getResultType();
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     result)))
    return failure();
  int64_t numDynamic = result.getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes, but its result "
           << result << " has " << numDynamic << " dynamic dimensions";
  if (Value logsumexp = getLogsumexp())
    return verifyRowStatistics(*this, logsumexp.getType(), result,
                               getAccumulatorType(), "logsumexp");
  return success();
}

FloatType AttentionBackwardOp::getAccumulatorType() {
  return getAttentionAccumulatorType(getQuery());
}

YieldOp AttentionBackwardOp::getScoresYield() {
  return cast<YieldOp>(getScores().front().getTerminator());
}

// The node interface's result is the query's gradient.
RankedTensorType AttentionBackwardOp::getResultType() {
  return cast<RankedTensorType>(getGradQuery().getType());
}

ValueRange AttentionBackwardOp::getDynamicSizes() { return getQuerySizes(); }

SmallVector<int64_t> AttentionBackwardOp::getIndexSpaceShape() {
  return to_vector(getResultType().getShape());
}

ValueRange AttentionBackwardOp::getResultDynamicSizes(unsigned index) {
  return index == 0 ? getQuerySizes() : getKeySizes();
}

void AttentionBackwardOp::getAsmBlockArgumentNames(
    Region &region, OpAsmSetValueNameFn setNameFn) {
  nameIndicesAndValue(region, getResultType().getRank(), "score", setNameFn);
}

LogicalResult AttentionBackwardOp::verifyRegions() {
  if (failed(verifyScoresRegion(*this, getScores(), getResultType().getRank(),
                                getAccumulatorType())))
    return failure();
  if (hasScoreModifier() &&
      !passesScoreGradient(getScoresYield().getValue(),
                           getScores().front().getArguments().back()))
    return getScoresYield().emitOpError(
        "yields a score whose gradient is not the score's: the backward "
        "scores region may only add values that do not depend on the score, "
        "or hide it with -inf");
  return success();
}

LogicalResult AttentionBackwardOp::verify() {
  auto grad = cast<RankedTensorType>(getGrad().getType());
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     grad)))
    return failure();
  FloatType accumulator = getAccumulatorType();
  if (failed(verifyRowStatistics(*this, getLogsumexp().getType(), grad,
                                 accumulator, "logsumexp")) ||
      failed(verifyRowStatistics(*this, getDelta().getType(), grad, accumulator,
                                 "delta")))
    return failure();
  Value operands[] = {getQuery(), getKey(), getValue()};
  StringRef names[] = {"query", "key", "value"};
  for (auto [operand, result, name] :
       llvm::zip_equal(operands, getResults(), names)) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    auto resultType = cast<RankedTensorType>(result.getType());
    if (resultType.getElementType() != operandType.getElementType() ||
        failed(verifyCompatibleShape(resultType, operandType)))
      return emitOpError("computes the ")
             << name << "'s gradient as " << resultType << ", but the " << name
             << " is " << operandType;
  }
  auto checkSizes = [&](ValueRange sizes, Value result,
                        StringRef name) -> LogicalResult {
    int64_t numDynamic =
        cast<RankedTensorType>(result.getType()).getNumDynamicDims();
    if (static_cast<int64_t>(sizes.size()) == numDynamic)
      return success();
    return emitOpError("has ")
           << sizes.size() << " " << name << " sizes, but its gradient "
           << result.getType() << " has " << numDynamic
           << " dynamic dimensions";
  };
  if (failed(checkSizes(getQuerySizes(), getGradQuery(), "query")) ||
      failed(checkSizes(getKeySizes(), getGradKey(), "key")))
    return failure();
  auto gradKey = cast<RankedTensorType>(getGradKey().getType());
  auto gradValue = cast<RankedTensorType>(getGradValue().getType());
  for (int64_t dim = 0; dim + 1 < gradKey.getRank(); ++dim)
    if (gradKey.isDynamicDim(dim) != gradValue.isDynamicDim(dim))
      return emitOpError("has key and value gradients ")
             << gradKey << " and " << gradValue
             << " whose dimensions are dynamic in different places; they "
                "share key_sizes";
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  if (operands.empty())
    return failure();
  auto source = dyn_cast<RankedTensorType>(operands.front().getType());
  if (!source)
    return failure();
  inferredReturnTypes.push_back(getScalarType(source.getElementType()));
  return success();
}

/// The static extent of `index` where it is an induction variable of the
/// pointwise or reduce node whose body holds it (a result dimension's size,
/// or a reduction dimension's), else nullopt.
static std::optional<int64_t> getStaticInductionExtent(Value index) {
  auto argument = dyn_cast<BlockArgument>(index);
  if (!argument)
    return std::nullopt;
  Operation *node = argument.getOwner()->getParentOp();
  if (!isNode(node))
    return std::nullopt;
  SmallVector<int64_t> space =
      cast<LoopNodeOpInterface>(node).getIndexSpaceShape();
  int64_t number = argument.getArgNumber();
  // (A body with more arguments than its node has dimensions is the node's
  // verifier's to report.)
  if (number >= static_cast<int64_t>(space.size()) ||
      ShapedType::isDynamic(space[number]))
    return std::nullopt;
  return space[number];
}

LogicalResult LoadOp::verify() {
  RankedTensorType sourceType = getSource().getType();
  int64_t rank = sourceType.getRank();
  if (static_cast<int64_t>(getIndices().size()) != rank)
    return emitOpError("has ")
           << getIndices().size() << " indices, but its source " << sourceType
           << " has rank " << rank;
  // Loads are pure and run at every index of their node: an induction
  // variable that outruns the dimension it indexes reads past the source
  // (a broadcast lowered without reading index 0, say).
  for (auto [dim, index] : llvm::enumerate(getIndices())) {
    std::optional<int64_t> extent = getStaticInductionExtent(index);
    int64_t size = sourceType.getDimSize(dim);
    if (extent && !ShapedType::isDynamic(size) && *extent > size)
      return emitOpError("reads dimension ")
             << dim << " of its source (size " << size
             << ") at an induction variable that runs to " << *extent - 1;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CheckOp
//===----------------------------------------------------------------------===//

void CheckOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // What the run reports: no pass may drop the check as unused.
  effects.emplace_back(MemoryEffects::Write::get(),
                       SideEffects::DefaultResource::get());
}

#include "kiln/Dialect/Loop/IR/LoopInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Loop/IR/LoopOps.cpp.inc"
