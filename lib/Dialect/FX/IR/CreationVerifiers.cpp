//===- CreationVerifiers.cpp - tensor creation and random op verifiers ----===//
//
// Part of Kiln. Creation ops take their shape from the result type (ATen's
// `size`); their dtype is the `dtype` attribute or ATen's default for the
// op: the default float dtype (f32), or the fill value's kind for `full`.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// The `dtype` attribute, or `defaultDtype`.
static Type getDtypeOr(Operation *op, Type defaultDtype) {
  Type dtype = getDtypeAttr(op);
  return dtype ? dtype : defaultDtype;
}

/// A number as `4` or `0.5`, for messages.
static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%g", value);
  return text;
}

/// arange's length, or kAnySize when it cannot be computed.
static FailureOr<int64_t> getArangeLength(Operation *op) {
  auto toDouble = [](Attribute attr) -> std::optional<double> {
    if (auto intAttr = dyn_cast_or_null<IntegerAttr>(attr))
      return static_cast<double>(intAttr.getInt());
    if (auto floatAttr = dyn_cast_or_null<FloatAttr>(attr))
      return floatAttr.getValueAsDouble();
    return std::nullopt;
  };
  std::optional<double> start = toDouble(op->getAttr("start"));
  std::optional<double> end = toDouble(op->getAttr("end"));
  std::optional<double> step = toDouble(op->getAttr("step"));
  if (!step)
    step = 1.0;
  if (!start || !end)
    return kAnySize;
  if (*step == 0.0)
    return op->emitOpError("`step` must not be zero");
  if ((*end - *start) * *step < 0)
    return op->emitOpError("the range from `start` ")
           << formatNumber(*start) << " to `end` " << formatNumber(*end)
           << " is inconsistent with the sign of `step` "
           << formatNumber(*step);
  return static_cast<int64_t>(std::ceil((*end - *start) / *step));
}

LogicalResult mlir::kiln::fx::verifyCreationOp(Operation *op, CreationKind kind,
                                               OperandGroups groups) {
  MLIRContext *ctx = op->getContext();
  Type defaultFloat = getDefaultFloatDtype(ctx);
  auto result = getTensorType(op->getResult(0));
  ArrayRef<int64_t> shape = result.getShape();
  if (failed(verifySizeSymbols(op, result)))
    return failure();

  switch (kind) {
  case CreationKind::Full: {
    // full infers bool, si64 or f32 from the fill value.
    Type inferred = getScalarDtype(op->getAttr("fill_value"));
    return verifyResult(op, 0, shape, getDtypeOr(op, inferred));
  }
  case CreationKind::Empty:
    return verifyResult(op, 0, shape, getDtypeOr(op, defaultFloat));
  case CreationKind::Random: {
    Type dtype = getDtypeOr(op, defaultFloat);
    if (!isa<FloatType>(dtype))
      return op->emitOpError("random values need a floating dtype, not ")
             << dtype;
    return verifyResult(op, 0, shape, dtype);
  }
  case CreationKind::EmptyStrided: {
    SmallVector<int64_t> stride = getI64Array(op, "stride");
    if (static_cast<int64_t>(stride.size()) != result.getRank())
      return op->emitOpError("`stride` has ")
             << stride.size() << " entries, but the result " << result
             << " has rank " << result.getRank();
    return verifyResult(op, 0, shape, getDtypeOr(op, defaultFloat));
  }
  case CreationKind::FullLike: {
    auto self = getTensorType(op->getOperand(0));
    return verifyResult(op, 0, self.getShape(),
                        getDtypeOr(op, self.getElementType()));
  }
  case CreationKind::ScalarTensor:
    // The value is the attribute `s` or a symbolic one, the operand
    // `dynamic_s`.
    if (groups(0).empty() == !op->getAttr("s"))
      return op->emitOpError("needs exactly one of `s` and `dynamic_s`");
    return verifyResult(op, 0, {}, getDtypeOr(op, defaultFloat));
  case CreationKind::Arange: {
    // The end is the attribute `end` or a symbolic one, the operand
    // `dynamic_end` (of integral bounds: the length is then computed at run
    // time).
    bool symbolicEnd = !groups(0).empty();
    if (symbolicEnd == static_cast<bool>(op->getAttr("end")))
      return op->emitOpError("needs exactly one of `end` and `dynamic_end`");
    if (symbolicEnd) {
      for (StringRef name : {"start", "step"})
        if (isa_and_nonnull<FloatAttr>(op->getAttr(name)))
          return op->emitOpError("with `dynamic_end` needs an integral `")
                 << name << "`";
      if (getOptionalI64(op, "step").value_or(1) == 0)
        return op->emitOpError("`step` must not be zero");
    }
    FailureOr<int64_t> length = getArangeLength(op);
    if (failed(length))
      return failure();
    // Integer bounds give si64; any float bound gives the default dtype.
    Type inferred = getIndexDtype(ctx);
    for (StringRef name : {"start", "end", "step"}) {
      if (isa_and_nonnull<FloatAttr>(op->getAttr(name)))
        inferred = defaultFloat;
    }
    return verifyResult(op, 0, {*length}, getDtypeOr(op, inferred));
  }
  case CreationKind::Randperm:
    return verifyResult(op, 0, {kAnySize}, getDtypeOr(op, getIndexDtype(ctx)));
  case CreationKind::NativeDropout:
  case CreationKind::Bernoulli: {
    auto input = getTensorType(op->getOperand(0));
    double p = getOptionalF64(op, "p").value_or(0.5);
    if (p < 0.0 || p > 1.0)
      return op->emitOpError()
             << (kind == CreationKind::NativeDropout ? "dropout " : "")
             << "probability `p` must be in [0, 1], but is " << formatNumber(p);
    if (failed(verifyResult(op, 0, input)))
      return failure();
    if (kind == CreationKind::Bernoulli)
      return success();
    return verifyResult(op, 1, input.getShape(), IntegerType::get(ctx, 1));
  }
  }
  llvm_unreachable("unknown creation kind");
}
