//===- LoweringUtils.cpp - Shared fx-to-loop helpers ----------------------===//
//
// Part of Kiln. The scalar and node builders that the lowerings of
// kiln-fx-to-loop share (LoweringUtils.h).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "ElementwiseLowering.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

Value fxtoloop::buildBroadcastPointwise(OpBuilder &b, Location loc,
                                        RankedTensorType resultType,
                                        ValueRange inputs,
                                        TypeRange inputDtypes, Type bodyDtype,
                                        ScalarBodyFn bodyFn) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dynamicSizes =
      getBroadcastDynamicSizes(b, loc, resultType, inputs);
  auto node = loop::PointwiseOp::create(b, loc, resultType, dynamicSizes);
  Block *body = b.createBlock(&node.getBody());
  SmallVector<Location> argLocs(rank, loc);
  body->addArguments(SmallVector<Type>(rank, b.getIndexType()), argLocs);

  Value zeroIndex;
  SmallVector<Value> elements;
  for (auto [input, inputDtype] : llvm::zip(inputs, inputDtypes)) {
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t offset = rank - inputType.getRank();
    SmallVector<Value> indices;
    for (int64_t dim = 0; dim < inputType.getRank(); ++dim) {
      bool broadcast = inputType.getDimSize(dim) == 1 &&
                       resultType.getDimSize(dim + offset) != 1;
      if (broadcast && !zeroIndex)
        zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
      indices.push_back(broadcast ? zeroIndex
                                  : body->getArgument(dim + offset));
    }
    Value element = loop::LoadOp::create(b, loc, input, indices);
    elements.push_back(
        convertScalar(b, loc, element, inputType.getElementType(), inputDtype));
  }
  Value computed = bodyFn(b, loc, elements);
  Value result =
      convertScalar(b, loc, computed, bodyDtype, resultType.getElementType());
  loop::YieldOp::create(b, loc, result);
  b.setInsertionPointAfter(node);
  return node.getResult();
}

Value fxtoloop::getSizeSymbolValue(OpBuilder &b, Location loc, Operation *op,
                                   StringRef name) {
  auto graph = op->getParentOfType<fx::GraphOp>();
  if (!graph)
    return {};
  for (unsigned index = 0, e = graph.getNumArguments(); index < e; ++index) {
    fx::TensorGuardAttr guard = graph.getArgumentGuard(index);
    if (!guard)
      continue;
    for (auto [dim, size] : llvm::enumerate(guard.getSizes()))
      if (auto symbol = dyn_cast<StringAttr>(size);
          symbol && symbol.getValue() == name)
        return getDimSize(b, loc, graph.getArgument(index), dim);
  }
  return {};
}

Value fxtoloop::getSizeExpressionValue(OpBuilder &b, Location loc,
                                       Operation *op, StringRef text) {
  std::optional<fx::SizeExpression> expression = fx::parseSizeExpression(text);
  if (!expression)
    return {};
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value product;
  for (const fx::SizeExpression::Factor &factor : expression->factors) {
    Value size = getSizeSymbolValue(b, loc, op, factor.symbol);
    if (!size)
      return {};
    for (const fx::SizeExpression::Step &step : factor.steps) {
      if (step.divisor) {
        size =
            arith::FloorDivSIOp::create(b, loc, size, constant(step.divisor));
        continue;
      }
      if (step.scale != 1)
        size = arith::MulIOp::create(b, loc, size, constant(step.scale));
      if (step.offset != 0)
        size = arith::AddIOp::create(b, loc, size, constant(step.offset));
    }
    product = product ? arith::MulIOp::create(b, loc, product, size) : size;
  }
  return product;
}

FailureOr<SmallVector<Value>>
fxtoloop::getNamedDynamicSizes(OpBuilder &b, Location loc, Operation *op,
                               RankedTensorType type) {
  SmallVector<Value> sizes;
  if (type.hasStaticShape())
    return sizes;
  auto symbols = op->getAttrOfType<ArrayAttr>("size_symbols");
  if (!symbols)
    return failure();
  for (StringRef text : symbols.getAsValueRange<StringAttr>()) {
    Value size = getSizeExpressionValue(b, loc, op, text);
    if (!size)
      return failure();
    sizes.push_back(size);
  }
  return sizes;
}

SmallVector<Value>
fxtoloop::collectDynamicSizes(RankedTensorType type,
                              function_ref<Value(int64_t)> sizeOf) {
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(sizeOf(dim));
  return sizes;
}

Value fxtoloop::makeScalar(OpBuilder &b, Location loc, Attribute scalar,
                           Type dtype) {
  // A complex number with the (real) scalar as its real part, created from
  // its parts (which later passes handle as any float constants).
  if (auto complexType = dyn_cast<ComplexType>(dtype)) {
    Type part = complexType.getElementType();
    return complex::CreateOp::create(b, loc, complexType,
                                     makeScalar(b, loc, scalar, part),
                                     makeFloat(b, loc, part, 0.0));
  }
  Type scalarType = loop::getScalarType(dtype);
  double asDouble = 0.0;
  int64_t asInt = 0;
  if (auto boolAttr = dyn_cast<BoolAttr>(scalar)) {
    asDouble = asInt = boolAttr.getValue();
  } else if (auto intAttr = dyn_cast<IntegerAttr>(scalar)) {
    asInt = intAttr.getInt();
    asDouble = static_cast<double>(asInt);
  } else {
    asDouble = cast<FloatAttr>(scalar).getValueAsDouble();
    // Toward zero, saturating (NaN is 0): a cast of an infinite or huge
    // double to an integer would be undefined.
    constexpr double kLimit = 9223372036854775808.0; // 2^63
    if (std::isnan(asDouble))
      asInt = 0;
    else if (asDouble >= kLimit)
      asInt = std::numeric_limits<int64_t>::max();
    else if (asDouble < -kLimit)
      asInt = std::numeric_limits<int64_t>::min();
    else
      asInt = static_cast<int64_t>(asDouble);
  }
  if (isa<FloatType>(scalarType))
    return arith::ConstantOp::create(b, loc,
                                     b.getFloatAttr(scalarType, asDouble));
  if (scalarType.isInteger(1))
    return arith::ConstantOp::create(b, loc,
                                     b.getBoolAttr(asInt != 0 || asDouble));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(scalarType, asInt));
}

Value fxtoloop::wrapAndClampIndex(OpBuilder &b, Location loc, Value value,
                                  Value size) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, index, size), index);
  Value last = arith::SubIOp::create(b, loc, size,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, wrapped, zero), last);
}

Value fxtoloop::linearizeBySizes(OpBuilder &b, Location loc, ValueRange indices,
                                 ArrayRef<Value> sizes) {
  Value flat = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [index, size] : llvm::zip_equal(indices, sizes))
    flat = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, flat, size), index);
  return flat;
}

SmallVector<Value>
fxtoloop::getBroadcastDynamicSizes(OpBuilder &b, Location loc,
                                   RankedTensorType resultType,
                                   ValueRange inputs) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    // A dynamic result dimension comes from some input's dynamic dimension
    // (a `?` broadcast against a static size other than 1 is that size).
    for (Value input : inputs) {
      auto inputType = cast<RankedTensorType>(input.getType());
      int64_t inputDim = dim - (rank - inputType.getRank());
      if (inputDim >= 0 && inputType.isDynamicDim(inputDim)) {
        dynamicSizes.push_back(getDimSize(b, loc, input, inputDim));
        break;
      }
    }
  }
  assert(dynamicSizes.size() == resultType.getNumDynamicDims() &&
         "verified broadcast has a source for every dynamic dimension");
  return dynamicSizes;
}

Value fxtoloop::buildStridedPosition(OpBuilder &b, Location loc, ValueRange ivs,
                                     ArrayRef<int64_t> strides,
                                     int64_t offset) {
  Value position = arith::ConstantIndexOp::create(b, loc, offset);
  for (auto [iv, stride] : llvm::zip_equal(ivs, strides))
    position = arith::AddIOp::create(
        b, loc, position,
        arith::MulIOp::create(b, loc, iv,
                              arith::ConstantIndexOp::create(b, loc, stride)));
  return position;
}

bool fxtoloop::isStridedViewWithin(ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> strides, int64_t offset,
                                   int64_t elements) {
  if (offset < 0 || shape.size() != strides.size())
    return false;
  int64_t last = offset, count = 1;
  for (auto [size, stride] : llvm::zip_equal(shape, strides)) {
    if (stride < 0)
      return false;
    last += size == 0 ? 0 : (size - 1) * stride;
    count *= size;
  }
  return count == 0 || last < elements;
}

bool fxtoloop::hasStaticSpatialSizes(RankedTensorType input,
                                     RankedTensorType result, int64_t spatial) {
  for (int64_t dim = input.getRank() - spatial; dim < input.getRank(); ++dim)
    if (input.isDynamicDim(dim) || result.isDynamicDim(dim))
      return false;
  return true;
}

Value fxtoloop::sizeToFloat(OpBuilder &b, Location loc, Value size, Type type) {
  return arith::UIToFPOp::create(
      b, loc, type, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), size));
}

Value fxtoloop::makeInteger(OpBuilder &b, Location loc, Type type,
                            int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value fxtoloop::emitClamp(OpBuilder &b, Location loc, Value x, Value lower,
                          Value upper, Type dtype) {
  bool isFloat = isa<FloatType>(dtype);
  bool isUnsigned = isUnsignedOrBool(dtype);
  if (lower)
    x = isFloat      ? arith::MaximumFOp::create(b, loc, x, lower).getResult()
        : isUnsigned ? arith::MaxUIOp::create(b, loc, x, lower).getResult()
                     : arith::MaxSIOp::create(b, loc, x, lower).getResult();
  if (upper)
    x = isFloat      ? arith::MinimumFOp::create(b, loc, x, upper).getResult()
        : isUnsigned ? arith::MinUIOp::create(b, loc, x, upper).getResult()
                     : arith::MinSIOp::create(b, loc, x, upper).getResult();
  return x;
}

std::pair<double, bool> fxtoloop::getScalarValue(Attribute scalar) {
  if (auto boolAttr = dyn_cast<BoolAttr>(scalar))
    return {boolAttr.getValue() ? 1.0 : 0.0, true};
  if (auto floatAttr = dyn_cast<FloatAttr>(scalar))
    return {floatAttr.getValueAsDouble(), false};
  return {static_cast<double>(cast<IntegerAttr>(scalar).getInt()), true};
}

void fxtoloop::buildRuntimeCheck(OpBuilder &b, Location loc, Value tensor,
                                 CheckFn fails, StringRef message) {
  auto flagType = RankedTensorType::get(
      {}, IntegerType::get(b.getContext(), 32, IntegerType::Signed));
  Value flag = buildReduction(
      b, loc, tensor, /*dims=*/{}, /*keepdim=*/false, CombiningKind::max,
      flagType,
      [&](OpBuilder &b, Location loc, ValueRange indices, ValueRange) {
        Value element = loop::LoadOp::create(b, loc, tensor, indices);
        return arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                      fails(b, loc, element));
      });
  loop::CheckOp::create(b, loc, flag, b.getStringAttr(message));
}

/// What eager's CPU kernels raise for an integer division by zero.
static constexpr llvm::StringLiteral kZeroDivision =
    "RuntimeError: ZeroDivisionError";

void fxtoloop::checkDivisor(OpBuilder &b, Location loc, Value divisor,
                            Type dtype) {
  if (!isa<IntegerType>(dtype))
    return;
  buildRuntimeCheck(
      b, loc, divisor,
      [](OpBuilder &b, Location loc, Value element) -> Value {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, element,
                                     makeInteger(b, loc, element.getType(), 0));
      },
      kZeroDivision);
}

void fxtoloop::checkDivisor(OpBuilder &b, Location loc, Value dividend,
                            Attribute divisor, Type dtype) {
  if (!isa<IntegerType>(dtype) || !isZeroScalar(divisor))
    return;
  buildRuntimeCheck(
      b, loc, dividend,
      [](OpBuilder &b, Location loc, Value) -> Value {
        return arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      },
      kZeroDivision);
}

/// Whether `element`, an index tensor's element, lies outside [-size, size)
/// (`negative`) or [0, size): an i1.
static Value isIndexOutOfRange(OpBuilder &b, Location loc, Value element,
                               Value size, bool negative) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value lower =
      negative ? Value(arith::SubIOp::create(b, loc, zero, size)) : zero;
  return arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, lower),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index, size));
}

void IndexChecks::checkTensor(OpBuilder &b, Location loc, Value indices,
                              Value size, bool negative,
                              StringRef message) const {
  if (!flags)
    return;
  buildRuntimeCheck(
      b, loc, indices,
      [&](OpBuilder &b, Location loc, Value element) {
        return isIndexOutOfRange(b, loc, element, size, negative);
      },
      message);
}

void IndexChecks::checkElement(OpBuilder &b, Location loc, Value element,
                               Value size, bool negative,
                               StringRef message) const {
  if (!asserts)
    return;
  Value outside = isIndexOutOfRange(b, loc, element, size, negative);
  Value inside = arith::XOrIOp::create(
      b, loc, outside, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  cf::AssertOp::create(b, loc, inside, message);
}

Value fxtoloop::emitSameValue(OpBuilder &b, Location loc, Value lhs,
                              Value rhs) {
  if (!isa<FloatType>(lhs.getType()))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
  Value equal =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs);
  Value bothNaN = arith::AndIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, lhs, lhs),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, rhs, rhs));
  return arith::OrIOp::create(b, loc, equal, bothNaN);
}

Type fxtoloop::getNormalizationDtype(OpBuilder &b, Type dtype) {
  return getComputeDtype(dtype, /*computeInF32=*/true);
}

RankedTensorType fxtoloop::getStatisticsType(RankedTensorType type,
                                             ArrayRef<int64_t> dims,
                                             Type dtype) {
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t dim : dims)
    shape[dim] = 1;
  return RankedTensorType::get(shape, dtype);
}

bool fxtoloop::isZeroScalar(std::optional<Attribute> scalar) {
  return scalar && getScalarValue(*scalar).first == 0.0;
}
