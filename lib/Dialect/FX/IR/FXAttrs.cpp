//===- FXAttrs.cpp - fx dialect attributes: the shape guards --------------===//
//
// Part of Kiln. The syntax and the context-free checks of #fx.symbol and
// #fx.tensor_guard. What needs the graph (argument types, defined symbols)
// is checked by fx.graph's verifier (FXOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXAttrs.h"
#include "kiln/Dialect/FX/IR/FXDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kiln::fx;

/// Whether `name` is an identifier (letters, digits and `_`, not starting
/// with a digit), so that a guard can print it bare.
static bool isSymbolName(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

//===----------------------------------------------------------------------===//
// Custom parameter syntax
//===----------------------------------------------------------------------===//

/// Parses `[s0, 4096]`: static sizes and bare symbol names.
static FailureOr<ArrayAttr> parseGuardSizes(AsmParser &parser) {
  Builder builder(parser.getContext());
  SmallVector<Attribute> sizes;
  auto parseSize = [&]() -> ParseResult {
    int64_t size;
    OptionalParseResult parsed = parser.parseOptionalInteger(size);
    if (parsed.has_value()) {
      if (failed(*parsed))
        return failure();
      sizes.push_back(builder.getI64IntegerAttr(size));
      return success();
    }
    StringRef name;
    if (failed(parser.parseOptionalKeyword(&name)))
      return parser.emitError(parser.getCurrentLocation(),
                              "expected a static size or a size symbol name");
    sizes.push_back(builder.getStringAttr(name));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseSize))
    return failure();
  return builder.getArrayAttr(sizes);
}

static void printGuardSizes(AsmPrinter &printer, ArrayAttr sizes) {
  printer << '[';
  llvm::interleaveComma(sizes, printer, [&](Attribute size) {
    if (auto name = dyn_cast<StringAttr>(size))
      printer << name.getValue();
    else if (auto value = dyn_cast<IntegerAttr>(size))
      printer << value.getInt();
    else
      printer << size;
  });
  printer << ']';
}

/// Parses `[4096, 1]` or `[?, 1]`.
static FailureOr<DenseI64ArrayAttr> parseGuardStrides(AsmParser &parser) {
  SmallVector<int64_t> strides;
  auto parseStride = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalQuestion())) {
      strides.push_back(ShapedType::kDynamic);
      return success();
    }
    return parser.parseInteger(strides.emplace_back());
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseStride))
    return failure();
  return DenseI64ArrayAttr::get(parser.getContext(), strides);
}

static void printGuardStrides(AsmPrinter &printer, DenseI64ArrayAttr strides) {
  printer << '[';
  llvm::interleaveComma(strides.asArrayRef(), printer, [&](int64_t stride) {
    if (ShapedType::isDynamic(stride))
      printer << '?';
    else
      printer << stride;
  });
  printer << ']';
}

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/FX/IR/FXAttrs.cpp.inc"

/// Parses `[scale*] (symbol | '(' factor ')' ['//' divisor]) [+-offset]`
/// from the front of `text`, appending its steps to `factor`; `hasOffset`
/// tells whether it ended with an offset outside parentheses, which a
/// product's factors must not (`s0-1*s1` and `s0*s1-1` are refused,
/// `(s0-1)*s1` is a product).
static bool parseSizeSteps(StringRef &text, SizeExpression::Factor &factor,
                           bool &hasOffset) {
  hasOffset = false;
  SizeExpression::Step affine;
  if (!text.empty() && llvm::isDigit(text.front())) {
    if (text.consumeInteger(10, affine.scale) || affine.scale <= 0 ||
        !text.consume_front("*"))
      return false;
  }
  if (text.consume_front("(")) {
    bool inner;
    if (!parseSizeSteps(text, factor, inner) || !text.consume_front(")"))
      return false;
    if (text.consume_front("//")) {
      SizeExpression::Step division;
      if (text.consumeInteger(10, division.divisor) || division.divisor <= 0)
        return false;
      factor.steps.push_back(division);
    }
  } else {
    size_t end = text.find_first_of("+-*/()");
    StringRef symbol = text.take_front(end);
    if (!factor.symbol.empty() || !isSymbolName(symbol))
      return false;
    factor.symbol = symbol;
    text = text.drop_front(symbol.size());
  }
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    bool negative = text.front() == '-';
    text = text.drop_front();
    uint64_t offset;
    if (text.consumeInteger(10, offset))
      return false;
    affine.offset =
        negative ? -static_cast<int64_t>(offset) : static_cast<int64_t>(offset);
    hasOffset = true;
  }
  if (affine.scale != 1 || affine.offset != 0)
    factor.steps.push_back(affine);
  return true;
}

std::optional<SizeExpression>
mlir::kiln::fx::parseSizeExpression(StringRef text) {
  SizeExpression expression;
  bool anyOffset = false;
  do {
    SizeExpression::Factor &factor = expression.factors.emplace_back();
    bool hasOffset;
    if (!parseSizeSteps(text, factor, hasOffset) || factor.symbol.empty())
      return std::nullopt;
    anyOffset |= hasOffset;
  } while (text.consume_front("*"));
  if (!text.empty() || (anyOffset && expression.factors.size() > 1))
    return std::nullopt;
  return expression;
}

//===----------------------------------------------------------------------===//
// SymbolAttr
//===----------------------------------------------------------------------===//

LogicalResult SymbolAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, int64_t min,
                                 std::optional<int64_t> max,
                                 std::optional<int64_t> divisor, StringRef of,
                                 std::optional<int64_t> scale,
                                 std::optional<int64_t> offset) {
  if (of.empty() && (scale || offset))
    return emitError() << "size symbol '" << name
                       << "' has a scale or an offset but derives from no "
                          "symbol ('of')";
  if (!of.empty()) {
    if (!isSymbolName(of) || of == name)
      return emitError() << "size symbol '" << name << "' derives from '" << of
                         << "', which is not another symbol's name";
    if (scale && *scale < 1)
      return emitError() << "size symbol '" << name
                         << "' has scale = " << *scale
                         << ", but a scale is positive";
  }
  if (!isSymbolName(name))
    return emitError() << "size symbol name '" << name
                       << "' is not an identifier (letters, digits and '_', "
                          "not starting with a digit)";
  if (min < 2)
    return emitError() << "size symbol '" << name << "' has min = " << min
                       << ", but a size symbol is at least 2 (sizes 0 and 1 "
                          "are specialised)";
  if (max && *max < min)
    return emitError() << "size symbol '" << name << "' has max = " << *max
                       << " below its min = " << min;
  if (divisor) {
    if (*divisor < 1)
      return emitError() << "size symbol '" << name
                         << "' has divisor = " << *divisor
                         << ", but a divisor is positive";
    int64_t first = llvm::divideCeil(min, *divisor) * *divisor;
    if (max && first > *max)
      return emitError() << "size symbol '" << name << "' has no multiple of "
                         << *divisor << " in [" << min << ", " << *max << "]";
  }
  return success();
}

bool SymbolAttr::admits(int64_t size) const {
  if (size < getMin() || (getMax() && size > *getMax()))
    return false;
  return !getDivisor() || size % *getDivisor() == 0;
}

//===----------------------------------------------------------------------===//
// TensorGuardAttr
//===----------------------------------------------------------------------===//

/// Whether `device` is "cpu", "cuda" or "cuda:N".
static bool isDeviceName(StringRef device) {
  if (device == "cpu" || device == "cuda")
    return true;
  unsigned index;
  return device.consume_front("cuda:") && !device.empty() &&
         llvm::all_of(device, llvm::isDigit) && !device.getAsInteger(10, index);
}

LogicalResult
TensorGuardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayAttr sizes, DenseI64ArrayAttr strides,
                        std::optional<int64_t> align, StringAttr device) {
  if (!sizes)
    return emitError() << "tensor guard needs 'sizes'";
  for (auto [dim, size] : llvm::enumerate(sizes)) {
    if (auto name = dyn_cast<StringAttr>(size)) {
      if (!isSymbolName(name.getValue()))
        return emitError() << "tensor guard size at dimension " << dim
                           << " names '" << name.getValue()
                           << "', which is not a size symbol name";
      continue;
    }
    auto value = dyn_cast<IntegerAttr>(size);
    if (!value || !value.getType().isSignlessInteger(64))
      return emitError() << "tensor guard size at dimension " << dim
                         << " must be an i64 or a size symbol name, but is "
                         << size;
    if (value.getInt() < 0)
      return emitError() << "tensor guard size at dimension " << dim
                         << " is negative: " << value.getInt();
  }
  if (strides) {
    if (strides.size() != static_cast<int64_t>(sizes.size()))
      return emitError() << "tensor guard has " << strides.size()
                         << " strides for " << sizes.size()
                         << " dimensions; it needs one per dimension";
    for (auto [dim, stride] : llvm::enumerate(strides.asArrayRef()))
      if (!ShapedType::isDynamic(stride) && stride < 0)
        return emitError() << "tensor guard stride at dimension " << dim
                           << " is negative: " << stride;
  }
  if (align && (*align <= 0 || !llvm::isPowerOf2_64(*align)))
    return emitError() << "tensor guard alignment " << *align
                       << " is not a power of two";
  if (device && !isDeviceName(device.getValue()))
    return emitError() << "tensor guard device '" << device.getValue()
                       << "' is not 'cpu', 'cuda' or 'cuda:N'";
  return success();
}

StringAttr TensorGuardAttr::getSizeSymbol(unsigned dim) const {
  return dyn_cast<StringAttr>(getSizes()[dim]);
}

std::optional<int64_t> TensorGuardAttr::getStaticSize(unsigned dim) const {
  if (auto value = dyn_cast<IntegerAttr>(getSizes()[dim]))
    return value.getInt();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Dialect hooks
//===----------------------------------------------------------------------===//

void FXDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/FX/IR/FXAttrs.cpp.inc"
      >();
}

LogicalResult FXDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == kGuardAttrName || name == kMutatedAttrName)
    return op->emitError() << "'" << name
                           << "' is an attribute of an fx.graph argument, "
                              "not of an operation";
  if (name == kAliasesAttrName)
    return op->emitError() << "'" << name
                           << "' is an attribute of an fx.graph result, "
                              "not of an operation";
  return success();
}
