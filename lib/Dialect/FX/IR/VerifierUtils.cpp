//===- VerifierUtils.cpp - helpers shared by the fx family verifiers ------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

RankedTensorType verifier::getTensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value verifier::getOptionalOperand(OperandGroups groups, unsigned index) {
  OperandRange group = groups(index);
  return group.empty() ? Value() : group.front();
}

std::string verifier::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os,
                        [&](int64_t size) { os << formatSize(size); });
  os << ']';
  return text;
}

std::string verifier::formatSize(int64_t size) {
  if (size == kAnySize || ShapedType::isDynamic(size))
    return "?";
  return std::to_string(size);
}

bool verifier::shapesJoin(ArrayRef<int64_t> actual,
                          ArrayRef<int64_t> expected) {
  if (actual.size() != expected.size())
    return false;
  for (auto [a, e] : llvm::zip(actual, expected)) {
    if (e != kAnySize && !joinSizes(a, e))
      return false;
  }
  return true;
}

LogicalResult verifier::verifyResult(Operation *op, unsigned index,
                                     ArrayRef<int64_t> shape, Type dtype) {
  auto actual = cast<RankedTensorType>(op->getResult(index).getType());
  bool matches = actual.getElementType() == dtype &&
                 actual.getRank() == static_cast<int64_t>(shape.size());
  for (auto [actualSize, size] : llvm::zip(actual.getShape(), shape)) {
    if (matches && size != kAnySize && actualSize != size)
      matches = false;
  }
  if (matches)
    return success();
  SmallVector<int64_t> printable(shape);
  for (int64_t &size : printable) {
    if (size == kAnySize)
      size = ShapedType::kDynamic;
  }
  auto expected = RankedTensorType::get(printable, dtype);
  InFlightDiagnostic diag = op->emitOpError("result ");
  if (op->getNumResults() > 1)
    diag << "#" << index << " ";
  diag << "type " << actual << " does not match the inferred type " << expected;
  return diag;
}

LogicalResult verifier::verifyResult(Operation *op, unsigned index,
                                     RankedTensorType expected) {
  return verifyResult(op, index, expected.getShape(),
                      expected.getElementType());
}

FailureOr<int64_t> verifier::wrapDimOrError(Operation *op, StringRef name,
                                            int64_t dim, int64_t rank) {
  std::optional<int64_t> wrapped = wrapDim(dim, rank);
  if (!wrapped) {
    int64_t bound = std::max<int64_t>(rank, 1);
    return op->emitOpError("`")
           << name << "` " << dim << " is out of range for a tensor of rank "
           << rank << " (expected [" << -bound << ", " << bound - 1 << "])";
  }
  return *wrapped;
}

FailureOr<SmallVector<int64_t>>
verifier::wrapDimsOrError(Operation *op, StringRef name, ArrayRef<int64_t> dims,
                          int64_t rank) {
  SmallVector<int64_t> wrapped;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t dim : dims) {
    FailureOr<int64_t> d = wrapDimOrError(op, name, dim, rank);
    if (failed(d))
      return failure();
    if (!seen.insert(*d).second)
      return op->emitOpError("`")
             << name << "` names dimension " << *d << " more than once";
    wrapped.push_back(*d);
  }
  return wrapped;
}

FailureOr<SmallVector<int64_t>> verifier::expandParam(Operation *op,
                                                      StringRef name,
                                                      ArrayRef<int64_t> values,
                                                      int64_t count) {
  if (static_cast<int64_t>(values.size()) == count)
    return SmallVector<int64_t>(values);
  if (values.size() == 1)
    return SmallVector<int64_t>(count, values.front());
  return op->emitOpError("`")
         << name << "` has " << values.size() << " entries; expected " << count
         << " (one per spatial dimension) or 1";
}

std::optional<int64_t> verifier::getOptionalI64(Operation *op, StringRef name) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(op->getAttr(name)))
    return attr.getInt();
  return std::nullopt;
}

int64_t verifier::getI64(Operation *op, StringRef name, int64_t defaultValue) {
  return getOptionalI64(op, name).value_or(defaultValue);
}

std::optional<double> verifier::getOptionalF64(Operation *op, StringRef name) {
  if (auto attr = dyn_cast_or_null<FloatAttr>(op->getAttr(name)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

bool verifier::getBool(Operation *op, StringRef name, bool defaultValue) {
  if (auto attr = dyn_cast_or_null<BoolAttr>(op->getAttr(name)))
    return attr.getValue();
  return defaultValue;
}

std::optional<SmallVector<int64_t>>
verifier::getOptionalI64Array(Operation *op, StringRef name) {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(op->getAttr(name)))
    return SmallVector<int64_t>(attr.asArrayRef());
  return std::nullopt;
}

SmallVector<int64_t> verifier::getI64Array(Operation *op, StringRef name) {
  return getOptionalI64Array(op, name).value_or(SmallVector<int64_t>());
}

std::optional<SmallVector<double>>
verifier::getOptionalF64Array(Operation *op, StringRef name) {
  if (auto attr = dyn_cast_or_null<DenseF64ArrayAttr>(op->getAttr(name)))
    return SmallVector<double>(attr.asArrayRef());
  return std::nullopt;
}

Type verifier::getDtypeAttr(Operation *op) {
  if (auto attr = dyn_cast_or_null<TypeAttr>(op->getAttr("dtype")))
    return attr.getValue();
  return Type();
}

LogicalResult verifier::verifySizeSymbols(Operation *op,
                                          RankedTensorType result) {
  auto symbols = op->getAttrOfType<ArrayAttr>("size_symbols");
  if (!symbols)
    return success();
  if (symbols.size() != result.getNumDynamicDims())
    return op->emitOpError("`size_symbols` names ")
           << symbols.size() << " sizes, but the result " << result << " has "
           << result.getNumDynamicDims() << " dynamic dimensions";
  auto graph = op->getParentOfType<GraphOp>();
  for (auto text : symbols.getAsValueRange<StringAttr>()) {
    std::optional<SizeExpression> size = parseSizeExpression(text);
    if (!size)
      return op->emitOpError("`size_symbols` entry '")
             << text
             << "' is not a size expression of size symbols ('s0', "
                "'3*s0', 's0-1', '(s0+1)//2', 's0*(s1-1)')";
    for (const SizeExpression::Factor &factor : size->factors)
      if (graph && !graph.lookupSizeSymbol(factor.symbol))
        return op->emitOpError("`size_symbols` names '")
               << factor.symbol << "', which is not a size symbol of the graph";
  }
  return success();
}
