//===- FXOps.cpp - hand-written fx operations -----------------------------===//
//
// Part of Kiln. The custom C++ of fx.graph and fx.output. The generated
// definitions of all fx ops are compiled in the FXOpDefs<i>.cpp shards; the
// table ops' verifiers are in the *Verifiers.cpp files.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/FXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::kiln::fx;

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

void GraphOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  Region *body = state.addRegion();
  Block *entry = new Block();
  SmallVector<Location> locs(type.getNumInputs(), state.location);
  entry->addArguments(type.getInputs(), locs);
  body->push_back(entry);
}

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void GraphOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult GraphOp::verify() {
  if (getBody().empty())
    return emitOpError("must have a body: a graph is never external");
  for (auto [index, type] : llvm::enumerate(getArgumentTypes())) {
    if (!isa<RankedTensorType>(type))
      return emitOpError("argument #")
             << index << " must be a ranked tensor, but is " << type;
  }
  for (auto [index, type] : llvm::enumerate(getResultTypes())) {
    if (!isa<RankedTensorType>(type))
      return emitOpError("result #")
             << index << " must be a ranked tensor, but is " << type;
  }
  return verifyGuards(*this);
}

//===----------------------------------------------------------------------===//
// GraphOp: shape guards
//===----------------------------------------------------------------------===//

/// Checks argument `index`'s guard against its type `type` and the graph's
/// size symbols `symbols`, counting in `used` the symbols it names.
static LogicalResult verifyArgumentGuard(
    GraphOp graph, unsigned index, RankedTensorType type, TensorGuardAttr guard,
    const llvm::StringMap<SymbolAttr> &symbols, llvm::StringSet<> &used) {
  auto error = [&]() {
    return graph.emitOpError("argument #") << index << " ";
  };
  if (guard.getRank() != type.getRank())
    return error() << "has rank " << type.getRank() << ", but its guard has "
                   << guard.getRank() << " sizes";
  for (unsigned dim = 0, rank = type.getRank(); dim < rank; ++dim) {
    int64_t typeSize = type.getDimSize(dim);
    if (StringAttr name = guard.getSizeSymbol(dim)) {
      if (!ShapedType::isDynamic(typeSize))
        return error() << "guards static dimension " << dim << " (size "
                       << typeSize << ") with size symbol '" << name.getValue()
                       << "'; a symbol is for a '?' size";
      if (!symbols.contains(name.getValue()))
        return error() << "guards dimension " << dim
                       << " with undefined size symbol '" << name.getValue()
                       << "'";
      used.insert(name.getValue());
      continue;
    }
    int64_t guardSize = *guard.getStaticSize(dim);
    if (ShapedType::isDynamic(typeSize))
      return error() << "guards dynamic dimension " << dim
                     << " with static size " << guardSize
                     << "; a '?' size is guarded by a size symbol";
    if (guardSize != typeSize)
      return error() << "guards dimension " << dim << " with size " << guardSize
                     << ", but its type's size is " << typeSize;
  }
  return success();
}

LogicalResult GraphOp::verifyGuards(GraphOp graph) {
  llvm::StringMap<SymbolAttr> symbols;
  if (ArrayAttr symbolList = graph.getSymbolsAttr()) {
    for (auto symbol : symbolList.getAsRange<SymbolAttr>())
      if (!symbols.try_emplace(symbol.getName(), symbol).second)
        return graph.emitOpError("defines size symbol '")
               << symbol.getName() << "' more than once";
  }

  llvm::StringSet<> used;
  ArrayRef<Type> argTypes = graph.getArgumentTypes();
  for (unsigned index = 0, e = argTypes.size(); index < e; ++index) {
    DictionaryAttr attrs = graph.getArgAttrDict(index);
    for (NamedAttribute attr :
         attrs ? attrs.getValue() : ArrayRef<NamedAttribute>()) {
      StringRef name = attr.getName().getValue();
      if (name == FXDialect::kGuardAttrName) {
        auto guard = dyn_cast<TensorGuardAttr>(attr.getValue());
        if (!guard)
          return graph.emitOpError("argument #")
                 << index << " has '" << name
                 << "' that is not a #fx.tensor_guard: " << attr.getValue();
        if (failed(verifyArgumentGuard(graph, index,
                                       cast<RankedTensorType>(argTypes[index]),
                                       guard, symbols, used)))
          return failure();
      } else if (name == FXDialect::kMutatedAttrName) {
        if (!isa<UnitAttr>(attr.getValue()))
          return graph.emitOpError("argument #")
                 << index << " has '" << name
                 << "' with a value; it is a unit attribute";
      } else if (name == FXDialect::kAliasesAttrName) {
        return graph.emitOpError("argument #")
               << index << " has '" << name
               << "', which is an attribute of a result";
      }
    }
  }

  for (unsigned index = 0, e = graph.getNumResults(); index < e; ++index) {
    DictionaryAttr attrs = graph.getResultAttrDict(index);
    for (NamedAttribute attr :
         attrs ? attrs.getValue() : ArrayRef<NamedAttribute>()) {
      StringRef name = attr.getName().getValue();
      if (name == FXDialect::kMutatedAttrName ||
          name == FXDialect::kGuardAttrName)
        return graph.emitOpError("result #")
               << index << " has '" << name
               << "', which is an attribute of an argument";
      if (name != FXDialect::kAliasesAttrName)
        continue;
      auto alias = dyn_cast<IntegerAttr>(attr.getValue());
      if (!alias || !alias.getType().isInteger())
        return graph.emitOpError("result #")
               << index << " has '" << name
               << "' that is not an argument number: " << attr.getValue();
      int64_t argument = alias.getValue().getSExtValue();
      if (argument < 0 || argument >= static_cast<int64_t>(argTypes.size()))
        return graph.emitOpError("result #")
               << index << " aliases argument #" << argument
               << ", but the graph has " << argTypes.size() << " arguments";
      Type resultElement = cast<RankedTensorType>(graph.getResultTypes()[index])
                               .getElementType();
      Type argElement =
          cast<RankedTensorType>(argTypes[argument]).getElementType();
      if (resultElement != argElement)
        return graph.emitOpError("result #")
               << index << " of element type " << resultElement
               << " aliases argument #" << argument << " of element type "
               << argElement << "; aliasing tensors share a dtype";
    }
  }

  if (ArrayAttr symbolList = graph.getSymbolsAttr()) {
    for (auto symbol : symbolList.getAsRange<SymbolAttr>()) {
      if (!used.contains(symbol.getName()))
        return graph.emitOpError("size symbol '")
               << symbol.getName()
               << "' is the size of no guarded argument dimension, so the "
                  "runtime cannot bind it";
      if (!symbol.isDerived())
        continue;
      // Relations go one step, from a symbol that is itself free.
      SymbolAttr base = graph.lookupSizeSymbol(symbol.getOf());
      if (!base || base.isDerived())
        return graph.emitOpError("size symbol '")
               << symbol.getName() << "' derives from '" << symbol.getOf()
               << "', which is not a free size symbol of the graph";
    }
  }
  return success();
}

SymbolAttr GraphOp::lookupSizeSymbol(StringRef name) {
  if (ArrayAttr symbols = getSymbolsAttr())
    for (auto symbol : symbols.getAsRange<SymbolAttr>())
      if (symbol.getName() == name)
        return symbol;
  return {};
}

TensorGuardAttr GraphOp::getArgumentGuard(unsigned index) {
  return getArgAttrOfType<TensorGuardAttr>(index, FXDialect::kGuardAttrName);
}

bool GraphOp::isArgumentMutated(unsigned index) {
  return getArgAttrOfType<UnitAttr>(index, FXDialect::kMutatedAttrName) !=
         nullptr;
}

std::optional<unsigned> GraphOp::getResultAlias(unsigned index) {
  if (auto alias =
          getResultAttrOfType<IntegerAttr>(index, FXDialect::kAliasesAttrName))
    return alias.getValue().getZExtValue();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// OutputOp
//===----------------------------------------------------------------------===//

LogicalResult OutputOp::verify() {
  auto graph = cast<GraphOp>((*this)->getParentOp());
  ArrayRef<Type> expected = graph.getResultTypes();
  if (getResults().size() != expected.size())
    return emitOpError("has ")
           << getResults().size() << " operands, but the enclosing graph @"
           << graph.getSymName() << " returns " << expected.size();
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getResults().getTypes(), expected))) {
    auto [actual, wanted] = pair;
    if (actual != wanted)
      return emitOpError("operand #") << index << " has type " << actual
                                      << ", but the graph returns " << wanted;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult
ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                             ValueRange, DictionaryAttr attributes,
                             OpaqueProperties properties, RegionRange,
                             SmallVectorImpl<Type> &inferredReturnTypes) {
  ConstantOp::Adaptor adaptor(ValueRange{}, attributes, properties);
  auto value = dyn_cast_or_null<ElementsAttr>(adaptor.getValueAttr());
  if (!value)
    return emitOptionalError(location, "fx.constant needs a `value`");
  inferredReturnTypes.push_back(value.getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// SymbolValueOp
//===----------------------------------------------------------------------===//

LogicalResult SymbolValueOp::verify() {
  auto graph = (*this)->getParentOfType<GraphOp>();
  if (!graph)
    return emitOpError("must be inside an fx.graph, whose guards bind '")
           << getSymbol() << "'";
  if (!graph.lookupSizeSymbol(getSymbol()))
    return emitOpError("reads '")
           << getSymbol() << "', which is not a size symbol of the graph";
  return success();
}
