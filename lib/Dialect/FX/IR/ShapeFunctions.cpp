//===- ShapeFunctions.cpp - PyTorch broadcasting and type promotion -------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln::fx;

DtypeCategory mlir::kiln::fx::getDtypeCategory(Type dtype) {
  if (dtype.isInteger(1))
    return DtypeCategory::Bool;
  if (isa<IntegerType>(dtype))
    return DtypeCategory::Integer;
  if (isa<FloatType>(dtype))
    return DtypeCategory::Floating;
  assert(isa<ComplexType>(dtype) && "not a PyTorch dtype");
  return DtypeCategory::Complex;
}

/// Promotes two integer dtypes. Mixing uint8 with a signed type needs a signed
/// type wide enough for both, as torch.promote_types does.
static Type promoteIntegers(IntegerType lhs, IntegerType rhs) {
  if (lhs.isUnsigned() == rhs.isUnsigned())
    return lhs.getWidth() >= rhs.getWidth() ? lhs : rhs;
  IntegerType sint = lhs.isUnsigned() ? rhs : lhs;
  IntegerType uint = lhs.isUnsigned() ? lhs : rhs;
  if (sint.getWidth() > uint.getWidth())
    return sint;
  return IntegerType::get(lhs.getContext(), uint.getWidth() * 2,
                          IntegerType::Signed);
}

/// Promotes two floating dtypes: the wider one, except that float16 and
/// bfloat16 have no common 16-bit type and meet at float32.
static Type promoteFloats(FloatType lhs, FloatType rhs) {
  if (lhs == rhs)
    return lhs;
  if (lhs.getWidth() == rhs.getWidth())
    return Float32Type::get(lhs.getContext());
  return lhs.getWidth() > rhs.getWidth() ? lhs : rhs;
}

/// The complex dtype whose parts have at least `floatType`'s precision.
static Type toComplex(Type floatType) {
  MLIRContext *ctx = floatType.getContext();
  if (isa<Float64Type>(floatType))
    return ComplexType::get(Float64Type::get(ctx));
  return ComplexType::get(Float32Type::get(ctx));
}

Type mlir::kiln::fx::promoteDtypes(Type lhs, Type rhs) {
  if (lhs == rhs)
    return lhs;
  DtypeCategory lhsCat = getDtypeCategory(lhs);
  DtypeCategory rhsCat = getDtypeCategory(rhs);
  if (lhsCat != rhsCat) {
    // Order the pair so that `high` has the higher category.
    Type high = lhsCat > rhsCat ? lhs : rhs;
    Type low = lhsCat > rhsCat ? rhs : lhs;
    DtypeCategory highCat = std::max(lhsCat, rhsCat);
    if (highCat == DtypeCategory::Complex && isa<FloatType>(low))
      return promoteDtypes(high, toComplex(low));
    return high;
  }
  switch (lhsCat) {
  case DtypeCategory::Bool:
    return lhs;
  case DtypeCategory::Integer:
    return promoteIntegers(cast<IntegerType>(lhs), cast<IntegerType>(rhs));
  case DtypeCategory::Floating:
    return promoteFloats(cast<FloatType>(lhs), cast<FloatType>(rhs));
  case DtypeCategory::Complex: {
    auto lhsElt = cast<FloatType>(cast<ComplexType>(lhs).getElementType());
    auto rhsElt = cast<FloatType>(cast<ComplexType>(rhs).getElementType());
    return lhsElt.getWidth() >= rhsElt.getWidth() ? lhs : rhs;
  }
  }
  llvm_unreachable("unknown dtype category");
}

/// Combines the dtypes of two priority tiers (c10's combine_categories):
/// `higher` comes from the higher tier and wins unless `lower` belongs to a
/// higher category.
static Type combineTiers(Type higher, Type lower) {
  if (!higher)
    return lower;
  if (!lower)
    return higher;
  DtypeCategory highCat = getDtypeCategory(higher);
  DtypeCategory lowCat = getDtypeCategory(lower);
  if (highCat == DtypeCategory::Complex)
    return higher;
  if (lowCat == DtypeCategory::Complex)
    return highCat == DtypeCategory::Floating ? toComplex(higher) : lower;
  if (highCat == DtypeCategory::Floating)
    return higher;
  if (highCat == DtypeCategory::Bool || lowCat == DtypeCategory::Floating)
    return promoteDtypes(higher, lower);
  return higher;
}

Type mlir::kiln::fx::getResultDtype(TypeRange operandTypes) {
  return getResultDtype(operandTypes, /*scalars=*/{});
}

Type mlir::kiln::fx::getScalarDtype(Attribute scalar) {
  MLIRContext *ctx = scalar.getContext();
  if (auto intAttr = dyn_cast<IntegerAttr>(scalar)) {
    if (intAttr.getType().isInteger(1))
      return IntegerType::get(ctx, 1);
    return getIndexDtype(ctx);
  }
  assert(isa<FloatAttr>(scalar) && "not a PyTorch scalar");
  return getDefaultFloatDtype(ctx);
}

Type mlir::kiln::fx::getResultDtype(TypeRange operandTypes,
                                    ArrayRef<Attribute> scalars) {
  // c10's three tiers: dimensioned tensors, zero-dim tensors, wrapped numbers.
  Type dimResult, zeroDimResult, wrappedResult;
  for (Type type : operandTypes) {
    auto tensor = cast<RankedTensorType>(type);
    Type &tier = tensor.getRank() > 0 ? dimResult : zeroDimResult;
    tier = tier ? promoteDtypes(tier, tensor.getElementType())
                : tensor.getElementType();
  }
  for (Attribute scalar : scalars) {
    Type dtype = getScalarDtype(scalar);
    wrappedResult = wrappedResult ? promoteDtypes(wrappedResult, dtype) : dtype;
  }
  return combineTiers(dimResult, combineTiers(zeroDimResult, wrappedResult));
}

Type mlir::kiln::fx::getDefaultFloatDtype(MLIRContext *ctx) {
  return Float32Type::get(ctx);
}

Type mlir::kiln::fx::getIndexDtype(MLIRContext *ctx) {
  return IntegerType::get(ctx, 64, IntegerType::Signed);
}

Type mlir::kiln::fx::toRealDtype(Type dtype) {
  if (auto complex = dyn_cast<ComplexType>(dtype))
    return complex.getElementType();
  return dtype;
}

Type mlir::kiln::fx::getComputeDtype(Type dtype) {
  if (dtype.isF16() || dtype.isBF16())
    return Float32Type::get(dtype.getContext());
  return dtype;
}

bool mlir::kiln::fx::isIntegralOrBool(Type dtype) {
  return isa<IntegerType>(dtype);
}

FailureOr<SmallVector<int64_t>>
mlir::kiln::fx::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                std::string &reason) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align trailing dimensions; missing leading dimensions act as 1.
    int64_t l = i + lhs.size() >= rank ? lhs[i + lhs.size() - rank] : 1;
    int64_t r = i + rhs.size() >= rank ? rhs[i + rhs.size() - rank] : 1;
    if (l == 1) {
      result[i] = r;
    } else if (r == 1 || l == r) {
      result[i] = l;
    } else if (ShapedType::isDynamic(l)) {
      result[i] = r;
    } else if (ShapedType::isDynamic(r)) {
      result[i] = l;
    } else {
      llvm::raw_string_ostream os(reason);
      os << "sizes " << l << " and " << r << " at dimension " << i
         << " of the broadcast result cannot be broadcast together";
      return failure();
    }
  }
  return result;
}

std::optional<int64_t> mlir::kiln::fx::joinSizes(int64_t lhs, int64_t rhs) {
  if (lhs == rhs)
    return lhs;
  if (ShapedType::isDynamic(lhs) && rhs != 1)
    return rhs;
  if (ShapedType::isDynamic(rhs) && lhs != 1)
    return lhs;
  return std::nullopt;
}

std::optional<int64_t> mlir::kiln::fx::wrapDim(int64_t dim, int64_t rank) {
  // A zero-dim tensor accepts the dimensions of a one-dim tensor.
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    return std::nullopt;
  return dim < 0 ? dim + bound : dim;
}

/// Floor division, as PyTorch's div_rtn.
static int64_t floorDiv(int64_t lhs, int64_t rhs) {
  int64_t quotient = lhs / rhs;
  if ((lhs % rhs != 0) && ((lhs < 0) != (rhs < 0)))
    --quotient;
  return quotient;
}

/// a + b, a - b and a * b, or nullopt where the result overflows int64.
static std::optional<int64_t> add(std::optional<int64_t> a,
                                  std::optional<int64_t> b) {
  return a && b ? llvm::checkedAdd(*a, *b) : std::nullopt;
}
static std::optional<int64_t> sub(std::optional<int64_t> a,
                                  std::optional<int64_t> b) {
  return a && b ? llvm::checkedSub(*a, *b) : std::nullopt;
}
static std::optional<int64_t> mul(std::optional<int64_t> a,
                                  std::optional<int64_t> b) {
  return a && b ? llvm::checkedMul(*a, *b) : std::nullopt;
}

std::optional<int64_t>
mlir::kiln::fx::getWindowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                    int64_t padding, int64_t dilation,
                                    bool ceilMode) {
  if (ShapedType::isDynamic(in))
    return ShapedType::kDynamic;
  if (stride < 1)
    return std::nullopt;
  std::optional<int64_t> span =
      sub(add(in, mul(2, padding)), add(mul(dilation, sub(kernel, 1)), 1));
  std::optional<int64_t> rounded = add(span, ceilMode ? stride - 1 : 0);
  if (!rounded)
    return std::nullopt;
  int64_t out = floorDiv(*rounded, stride) + 1;
  // With ceil_mode the last window must start inside the input or the left
  // padding.
  std::optional<int64_t> lastStart = mul(out - 1, stride);
  std::optional<int64_t> limit = add(in, padding);
  if (!lastStart || !limit)
    return std::nullopt;
  if (ceilMode && *lastStart >= *limit)
    --out;
  return out;
}

std::optional<int64_t> mlir::kiln::fx::getTransposedWindowOutputSize(
    int64_t in, int64_t kernel, int64_t stride, int64_t padding,
    int64_t dilation, int64_t outputPadding) {
  if (ShapedType::isDynamic(in))
    return ShapedType::kDynamic;
  return add(add(sub(mul(sub(in, 1), stride), mul(2, padding)),
                 mul(dilation, sub(kernel, 1))),
             add(outputPadding, 1));
}
