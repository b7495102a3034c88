//===- NodeBuilders.cpp - Building loop nodes -----------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Utils/NodeBuilders.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

Value loop::convertScalar(OpBuilder &b, Location loc, Value value, Type from,
                          Type to) {
  if (from == to)
    return value;
  Type target = loop::getScalarType(to);
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() == toFloat.getWidth()) {
      // f16 <-> bf16 has no direct cast; go through f32.
      Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      return arith::TruncFOp::create(b, loc, target, wide);
    }
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, target, value);
    return arith::TruncFOp::create(b, loc, target, value);
  }
  if (toFloat) {
    if (isUnsignedOrBool(from))
      return arith::UIToFPOp::create(b, loc, target, value);
    return arith::SIToFPOp::create(b, loc, target, value);
  }
  if (to.isInteger(1)) {
    if (fromFloat) {
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0.0));
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zero);
    }
    Value zero = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(loop::getScalarType(from), 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value, zero);
  }
  if (fromFloat) {
    if (isUnsignedOrBool(to))
      return arith::FPToUIOp::create(b, loc, target, value);
    return arith::FPToSIOp::create(b, loc, target, value);
  }
  unsigned fromWidth = cast<IntegerType>(from).getWidth();
  unsigned toWidth = cast<IntegerType>(to).getWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, target, value);
  if (fromWidth == toWidth)
    return value;
  if (isUnsignedOrBool(from))
    return arith::ExtUIOp::create(b, loc, target, value);
  return arith::ExtSIOp::create(b, loc, target, value);
}

// Sizes of loop node results come from the node's own size operands, so that
// reading a size never keeps a producer alive.
Value loop::getDimSize(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  if (auto node = tensor.getDefiningOp<loop::LoopNodeOpInterface>())
    return node.getDynamicSizes()[type.getDynamicDimIndex(dim)];
  return tensor::DimOp::create(b, loc, tensor, dim);
}

Value loop::buildGeneratorNode(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes,
    function_ref<Value(OpBuilder &, Location, ValueRange)> elementFn) {
  auto node = loop::PointwiseOp::create(b, loc, type, dynamicSizes);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&node.getBody());
  body->addArguments(SmallVector<Type>(type.getRank(), b.getIndexType()),
                     SmallVector<Location>(type.getRank(), loc));
  loop::YieldOp::create(b, loc, elementFn(b, loc, body->getArguments()));
  return node.getResult();
}

SmallVector<Value> loop::delinearizeBySizes(OpBuilder &b, Location loc,
                                            Value value,
                                            ArrayRef<Value> sizes) {
  SmallVector<Value> digits(sizes.size());
  if (sizes.empty())
    return digits;
  for (int64_t dim = sizes.size() - 1; dim > 0; --dim) {
    digits[dim] = arith::RemUIOp::create(b, loc, value, sizes[dim]);
    value = arith::DivUIOp::create(b, loc, value, sizes[dim]);
  }
  digits.front() = value;
  return digits;
}

Value loop::buildSum(OpBuilder &b, Location loc, RankedTensorType resultType,
                     ValueRange dynamicSizes, ArrayRef<int64_t> reductionShape,
                     ValueRange reductionSizes,
                     function_ref<Value(OpBuilder &, Location, ValueRange out,
                                        ValueRange reduction)>
                         term) {
  auto node = loop::ReduceOp::create(
      b, loc, resultType,
      b.getAttr<loop::CombiningKindAttr>(CombiningKind::sum), dynamicSizes,
      reductionSizes, b.getDenseI64ArrayAttr(reductionShape));
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&node.getBody());
  int64_t numArgs = resultType.getRank() + reductionShape.size();
  body->addArguments(SmallVector<Type>(numArgs, b.getIndexType()),
                     SmallVector<Location>(numArgs, loc));
  ValueRange args = body->getArguments();
  loop::YieldOp::create(b, loc,
                        term(b, loc, args.take_front(resultType.getRank()),
                             args.drop_front(resultType.getRank())));
  return node.getResult();
}

SmallVector<Value> loop::delinearizeIndex(OpBuilder &b, Location loc,
                                          Value value,
                                          ArrayRef<int64_t> sizes) {
  SmallVector<Value> digits(sizes.size());
  if (sizes.empty())
    return digits;
  for (int64_t dim = sizes.size() - 1; dim > 0; --dim) {
    Value size = arith::ConstantIndexOp::create(b, loc, sizes[dim]);
    digits[dim] = arith::RemUIOp::create(b, loc, value, size);
    value = arith::DivUIOp::create(b, loc, value, size);
  }
  digits.front() = value;
  return digits;
}

Value loop::makeFloat(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value loop::buildReduction(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> dims, bool keepdim,
                           CombiningKind combiner, RankedTensorType resultType,
                           ReductionValueFn value) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<bool> reduced(rank, dims.empty());
  for (int64_t dim : dims)
    reduced[dim < 0 ? dim + rank : dim] = true;

  SmallVector<Value> dynamicSizes, reductionDynamicSizes;
  SmallVector<int64_t> reductionShape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    bool dynamic = inputType.isDynamicDim(dim);
    if (reduced[dim]) {
      reductionShape.push_back(inputType.getDimSize(dim));
      if (dynamic)
        reductionDynamicSizes.push_back(getDimSize(b, loc, input, dim));
    } else if (dynamic) {
      dynamicSizes.push_back(getDimSize(b, loc, input, dim));
    }
  }
  Type dtype = resultType.getElementType();
  Type accumulator = (dtype.isF16() || dtype.isBF16())
                         ? Type(b.getF32Type())
                         : loop::getScalarType(dtype);
  Type accumulatorDtype = isa<FloatType>(accumulator) ? accumulator : dtype;

  auto node = loop::ReduceOp::create(
      b, loc, resultType, b.getAttr<loop::CombiningKindAttr>(combiner),
      dynamicSizes, reductionDynamicSizes,
      b.getDenseI64ArrayAttr(reductionShape));
  Block *body = b.createBlock(&node.getBody());
  int64_t numArgs = resultType.getRank() + reductionShape.size();
  body->addArguments(SmallVector<Type>(numArgs, b.getIndexType()),
                     SmallVector<Location>(numArgs, loc));
  // The input's index of each dimension: a reduction argument for reduced
  // ones, else the result's argument (skipping the kept size-1 dimensions).
  SmallVector<Value> indices;
  int64_t nextResult = 0, nextReduction = resultType.getRank();
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (reduced[dim]) {
      indices.push_back(body->getArgument(nextReduction++));
      if (keepdim)
        ++nextResult;
    } else {
      indices.push_back(body->getArgument(nextResult++));
    }
  }
  if (value) {
    loop::YieldOp::create(
        b, loc,
        value(b, loc, indices,
              body->getArguments().drop_front(resultType.getRank())));
  } else {
    Value element = loop::LoadOp::create(b, loc, input, indices);
    loop::YieldOp::create(b, loc,
                          convertScalar(b, loc, element,
                                        inputType.getElementType(),
                                        accumulatorDtype));
  }
  b.setInsertionPointAfter(node);
  return node.getResult();
}

Value loop::buildIndexMapNode(OpBuilder &b, Location loc, Value source,
                              RankedTensorType resultType,
                              ValueRange dynamicSizes, IndexMapFn indexMap) {
  auto node = loop::PointwiseOp::create(b, loc, resultType, dynamicSizes);
  Block *body = b.createBlock(&node.getBody());
  int64_t rank = resultType.getRank();
  body->addArguments(SmallVector<Type>(rank, b.getIndexType()),
                     SmallVector<Location>(rank, loc));
  SmallVector<Value> indices = indexMap(b, loc, body->getArguments());
  Value element = loop::LoadOp::create(b, loc, source, indices);
  loop::YieldOp::create(b, loc, element);
  b.setInsertionPointAfter(node);
  return node.getResult();
}

std::pair<Value, Value> loop::clampAndTest(OpBuilder &b, Location loc,
                                           Value index, Value size) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::SubIOp::create(b, loc, size,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value inRange = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, index, last));
  return {clampToRange(b, loc, index, size), inRange};
}

int64_t loop::getSpatialAttr(ArrayRef<int64_t> values, int64_t dim) {
  return values.size() == 1 ? values.front() : values[dim];
}

std::pair<Value, Value> loop::getWindowAt(OpBuilder &b, Location loc, Value x,
                                          Value k, int64_t padding,
                                          int64_t dilation, int64_t stride,
                                          Value outputs) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value shifted = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, x, index(padding)),
      arith::MulIOp::create(b, loc, k, index(dilation)));
  Value out = arith::DivSIOp::create(b, loc, shifted, index(stride));
  Value fits = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, shifted,
                                index(0)),
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq,
              arith::RemSIOp::create(b, loc, shifted, index(stride)),
              index(0))),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, out, outputs));
  return {clampToRange(b, loc, out, outputs), fits};
}

std::pair<Value, Value> loop::getWindowAt(OpBuilder &b, Location loc, Value x,
                                          Value k, int64_t padding,
                                          int64_t dilation, int64_t stride,
                                          int64_t outputs) {
  return getWindowAt(b, loc, x, k, padding, dilation, stride,
                     arith::ConstantIndexOp::create(b, loc, outputs));
}

SmallVector<Value> loop::getSizesLike(OpBuilder &b, Location loc,
                                      RankedTensorType type, Value source) {
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(getDimSize(b, loc, source, dim));
  return sizes;
}

Value loop::buildMatmulNode(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            RankedTensorType resultType, bool transposeLhs,
                            bool transposeRhs) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    if (dim == rank - 2)
      dynamicSizes.push_back(
          getDimSize(b, loc, lhs, transposeLhs ? rank - 1 : rank - 2));
    else if (dim == rank - 1)
      dynamicSizes.push_back(
          getDimSize(b, loc, rhs, transposeRhs ? rank - 2 : rank - 1));
    else
      dynamicSizes.push_back(getDimSize(b, loc, lhs, dim));
  }
  auto matmul = MatmulOp::create(b, loc, resultType, lhs, rhs, dynamicSizes);
  if (transposeLhs)
    matmul.setTransposeLhs(true);
  if (transposeRhs)
    matmul.setTransposeRhs(true);
  return matmul.getResult();
}

Value loop::clampToRange(OpBuilder &b, Location loc, Value index, Value size) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::SubIOp::create(b, loc, size,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, index, zero), last);
}
