//===- ReductionLowering.cpp - Reductions ---------------------------------===//
//
// Part of Kiln. Sums, means, extrema and their indices, products, any and
// all, each a loop.reduce over the reduced dimensions (zero-dim operands as
// one-element vectors); cdist's and pdist's p-norm distances as reductions of
// powered differences.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseLowering.h"
#include "Lowerings.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

namespace {

/// Reduces a zero-dim tensor as a one-element vector (fx.unsqueeze), over
/// its dimension, keeping none: the reductions' lowerings need a dimension
/// to reduce, and dims 0 and -1 (all PyTorch allows on a zero-dim tensor)
/// name the vector's.
template <typename OpTy> struct ZeroDimReduction : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value self = op->getOperand(0);
    auto type = cast<RankedTensorType>(self.getType());
    if (type.getRank() != 0)
      return rewriter.notifyMatchFailure(op, "not a zero-dim operand");
    Value vector = fx::UnsqueezeOp::create(
        rewriter, op.getLoc(),
        TypeRange{RankedTensorType::get({1}, type.getElementType())},
        ValueRange{self},
        {rewriter.getNamedAttr("dim", rewriter.getI64IntegerAttr(0))});
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperand(0, vector);
      if (op->hasAttr("keepdim"))
        op->setAttr("keepdim", rewriter.getBoolAttr(false));
    });
    return success();
  }
};

/// The number of elements of `input` a reduction over `dims` (all
/// dimensions when empty) combines into each result element, as a float
/// of `dtype`.
static Value getAveragedCount(OpBuilder &b, Location loc, Value input,
                              ArrayRef<int64_t> dims, Type dtype) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<bool> reduced(rank, dims.empty());
  for (int64_t dim : dims)
    reduced[normalizeDim(dim, rank)] = true;
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (reduced[dim])
      count =
          arith::MulIOp::create(b, loc, count, getDimSize(b, loc, input, dim));
  }
  return sizeToFloat(b, loc, count, dtype);
}

/// Lowers fx.sum, fx.amax and fx.amin.
template <typename OpTy> struct ReductionLowering : OpRewritePattern<OpTy> {
  ReductionLowering(MLIRContext *ctx, CombiningKind combiner)
      : OpRewritePattern<OpTy>(ctx), combiner(combiner) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    auto inputType = cast<RankedTensorType>(op.getSelf().getType());
    if (inputType.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "nothing to reduce");
    SmallVector<int64_t> dims;
    if constexpr (std::is_same_v<OpTy, fx::SumOp> ||
                  std::is_same_v<OpTy, fx::MeanOp>) {
      if (std::optional<ArrayRef<int64_t>> dim = op.getDim())
        dims.assign(dim->begin(), dim->end());
    } else {
      dims.assign(op.getDim().begin(), op.getDim().end());
    }
    if (isa<ComplexType>(resultType.getElementType()) ||
        isa<ComplexType>(inputType.getElementType())) {
      if (combiner != CombiningKind::sum ||
          inputType.getElementType() != resultType.getElementType())
        return rewriter.notifyMatchFailure(op, "complex dtypes");
      rewriter.replaceOp(op,
                         buildComplexSum(rewriter, op.getLoc(), op.getSelf(),
                                         dims, op.getKeepdim(), resultType,
                                         std::is_same_v<OpTy, fx::MeanOp>));
      return success();
    }
    if constexpr (std::is_same_v<OpTy, fx::MeanOp>) {
      rewriter.replaceOp(op, buildMean(rewriter, op.getLoc(), op.getSelf(),
                                       dims, op.getKeepdim(), resultType));
      return success();
    }
    Value result = buildReduction(rewriter, op.getLoc(), op.getSelf(), dims,
                                  op.getKeepdim(), combiner, resultType);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// The sum (or with `mean` the mean) of complex numbers: each part
  /// summed on its own, then a node that pairs (and divides) the sums.
  static Value buildComplexSum(OpBuilder &b, Location loc, Value input,
                               ArrayRef<int64_t> dims, bool keepdim,
                               RankedTensorType resultType, bool mean) {
    auto complexType = cast<ComplexType>(resultType.getElementType());
    Type part = complexType.getElementType();
    auto sumPart = [&](bool imaginary) {
      return buildReduction(
          b, loc, input, dims, keepdim, CombiningKind::sum,
          resultType.clone(part),
          [&](OpBuilder &b, Location loc, ValueRange indices,
              ValueRange) -> Value {
            Value number = loop::LoadOp::create(b, loc, input, indices);
            return imaginary
                       ? complex::ImOp::create(b, loc, number).getResult()
                       : complex::ReOp::create(b, loc, number).getResult();
          });
    };
    Value re = sumPart(false), im = sumPart(true);
    Value scale = mean ? getAveragedCount(b, loc, input, dims, part) : Value();
    return buildGeneratorNode(
        b, loc, resultType,
        collectDynamicSizes(
            resultType,
            [&](int64_t dim) { return getDimSize(b, loc, re, dim); }),
        [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
          Value real = loop::LoadOp::create(b, loc, re, ivs);
          Value imaginary = loop::LoadOp::create(b, loc, im, ivs);
          if (scale) {
            real = arith::DivFOp::create(b, loc, real, scale);
            imaginary = arith::DivFOp::create(b, loc, imaginary, scale);
          }
          return complex::CreateOp::create(b, loc, complexType, real,
                                           imaginary);
        });
  }

  /// A mean: the sum (in f32 for f16/bf16, so that it is not rounded before
  /// the division), then a pointwise division by the element count.
  static Value buildMean(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> dims, bool keepdim,
                         RankedTensorType resultType) {
    Type dtype = resultType.getElementType();
    Type sumDtype = (dtype.isF16() || dtype.isBF16()) ? b.getF32Type() : dtype;
    auto sumType = RankedTensorType::get(resultType.getShape(), sumDtype);
    Value sum = buildReduction(b, loc, input, dims, keepdim, CombiningKind::sum,
                               sumType);

    Value countF = getAveragedCount(b, loc, input, dims, sumDtype);
    return buildBroadcastPointwise(
        b, loc, resultType, ValueRange{sum}, TypeRange{sumDtype}, sumDtype,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange elements) {
          return arith::DivFOp::create(nested, nestedLoc, elements[0], countF)
              .getResult();
        });
  }

  CombiningKind combiner;
};

/// The dimensions an fx reduction reduces: its `dim` attribute, one or a
/// list; none (all of them) without it.
static SmallVector<int64_t> getReducedDims(Operation *op) {
  Attribute dim = op->getAttr("dim");
  if (auto list = dyn_cast_or_null<DenseI64ArrayAttr>(dim))
    return llvm::to_vector(list.asArrayRef());
  if (auto single = dyn_cast_or_null<IntegerAttr>(dim))
    return {single.getInt()};
  return {};
}

/// Whether an fx reduction keeps the reduced dimensions (with size 1).
static bool getKeepdim(Operation *op) {
  auto keepdim = op->getAttrOfType<BoolAttr>("keepdim");
  return keepdim && keepdim.getValue();
}

/// Lowers fx.prod and fx.prod_dim_int to a "prod" reduction in the
/// result's dtype (f32 for f16/bf16).
template <typename OpTy> struct ProdLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    auto inputType = cast<RankedTensorType>(op.getSelf().getType());
    if (isa<ComplexType>(resultType.getElementType()) ||
        isa<ComplexType>(inputType.getElementType()) ||
        inputType.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "complex or rank-0 product");
    rewriter.replaceOp(op, buildReduction(rewriter, op.getLoc(), op.getSelf(),
                                          getReducedDims(op), getKeepdim(op),
                                          CombiningKind::prod, resultType));
    return success();
  }
};

/// Lowers fx.any* and fx.all*: whether elements are non-zero (as PyTorch
/// casts to bool, so NaN counts), combined by or ("max" of bools) or and
/// ("min"), into bool (or uint8 for uint8 inputs, as 0 and 1).
template <typename OpTy> struct AnyAllLowering : OpRewritePattern<OpTy> {
  AnyAllLowering(MLIRContext *ctx, CombiningKind combiner)
      : OpRewritePattern<OpTy>(ctx), combiner(combiner) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    auto inputType = cast<RankedTensorType>(op.getSelf().getType());
    Type dtype = inputType.getElementType();
    if (isa<ComplexType>(dtype) || inputType.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "complex or rank-0 input");
    Location loc = op.getLoc();
    Type boolType = rewriter.getI1Type();
    Value nonZero = buildBroadcastPointwise(
        rewriter, loc, inputType.clone(boolType), op.getSelf(), dtype, boolType,
        [&](OpBuilder &b, Location loc, ValueRange elements) {
          return convertScalar(b, loc, elements[0], dtype, boolType);
        });
    rewriter.replaceOp(op, buildReduction(rewriter, loc, nonZero,
                                          getReducedDims(op), getKeepdim(op),
                                          combiner, resultType));
    return success();
  }

  CombiningKind combiner;
};

/// The first extremum of each row of `input` (along `dims`, or all of it
/// when empty), as two reductions, which row fusion runs as one kernel: the
/// extremum (NaN if the row has one, as PyTorch's max and min give it),
/// then the smallest index of an element equal to it (NaN equal to NaN),
/// counting the reduced elements in row-major order. Returns the extremum,
/// with the reduced dimensions kept (16-bit floats widened to f32), and the
/// indices, of `indicesType`.
static std::pair<Value, Value>
buildArgExtremum(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> dims, bool keepdim, CombiningKind combiner,
                 RankedTensorType indicesType) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type dtype = inputType.getElementType();
  int64_t rank = inputType.getRank();
  SmallVector<bool> reduced(rank, dims.empty());
  for (int64_t dim : dims)
    reduced[dim < 0 ? dim + rank : dim] = true;

  Type compareType = (dtype.isF16() || dtype.isBF16())
                         ? Type(b.getF32Type())
                         : loop::getScalarType(dtype);
  Type extremumDtype = isa<FloatType>(compareType) ? compareType : dtype;
  SmallVector<int64_t> keptShape(inputType.getShape());
  for (int64_t dim = 0; dim < rank; ++dim)
    if (reduced[dim])
      keptShape[dim] = 1;
  Value extremum =
      buildReduction(b, loc, input, dims, /*keepdim=*/true, combiner,
                     RankedTensorType::get(keptShape, extremumDtype));

  SmallVector<Value> reductionSizes;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (reduced[dim])
      reductionSizes.push_back(getDimSize(b, loc, input, dim));
  Value indices = buildReduction(
      b, loc, input, dims, keepdim, CombiningKind::min, indicesType,
      [&](OpBuilder &b, Location loc, ValueRange indices,
          ValueRange reductionIndices) -> Value {
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value linear = zero;
        for (auto [index, size] : llvm::zip(reductionIndices, reductionSizes))
          linear = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, linear, size), index);
        SmallVector<Value> rowIndices(indices);
        for (int64_t dim = 0; dim < rank; ++dim)
          if (reduced[dim])
            rowIndices[dim] = zero;
        Value element =
            convertScalar(b, loc, loop::LoadOp::create(b, loc, input, indices),
                          dtype, extremumDtype);
        Value best = loop::LoadOp::create(b, loc, extremum, rowIndices);
        Type i64 = b.getI64Type();
        return arith::SelectOp::create(
            b, loc, emitSameValue(b, loc, element, best),
            arith::IndexCastOp::create(b, loc, i64, linear),
            makeInteger(b, loc, i64, std::numeric_limits<int64_t>::max()));
      });
  return {extremum, indices};
}

/// Lowers fx.argmax and fx.argmin (buildArgExtremum); without `dim`,
/// indices count all of the input's elements.
template <typename OpTy> struct ArgExtremumLowering : OpRewritePattern<OpTy> {
  ArgExtremumLowering(MLIRContext *ctx, CombiningKind combiner)
      : OpRewritePattern<OpTy>(ctx), combiner(combiner) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(op.getSelf().getType());
    if (inputType.getRank() == 0 || inputType.getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(op, "rank-0 or bool input");
    SmallVector<int64_t> dims;
    if (std::optional<int64_t> dim = op.getDim())
      dims.push_back(*dim);
    rewriter.replaceOp(op,
                       buildArgExtremum(rewriter, op.getLoc(), op.getSelf(),
                                        dims, op.getKeepdim(), combiner,
                                        cast<RankedTensorType>(op.getType()))
                           .second);
    return success();
  }

  CombiningKind combiner;
};

/// Lowers fx.max_dim and fx.min_dim: the values are the extremum that
/// buildArgExtremum computes for the indices, read back in the input's
/// dtype.
template <typename OpTy> struct ExtremumDimLowering : OpRewritePattern<OpTy> {
  ExtremumDimLowering(MLIRContext *ctx, CombiningKind combiner)
      : OpRewritePattern<OpTy>(ctx), combiner(combiner) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(op.getSelf().getType());
    int64_t rank = inputType.getRank();
    if (rank == 0 || inputType.getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(op, "rank-0 or bool input");
    // I64Attr's getter returns the bits unsigned.
    int64_t dim = static_cast<int64_t>(op.getDim());
    if (dim < 0)
      dim += rank;
    auto valuesType = cast<RankedTensorType>(op.getValues().getType());
    auto [extremum, indices] = buildArgExtremum(
        rewriter, loc, op.getSelf(), {dim}, op.getKeepdim(), combiner,
        cast<RankedTensorType>(op.getIndices().getType()));
    Type extremumDtype =
        cast<RankedTensorType>(extremum.getType()).getElementType();
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < valuesType.getRank(); ++d)
      if (valuesType.isDynamicDim(d))
        dynamicSizes.push_back(
            getDimSize(rewriter, loc, op.getSelf(),
                       op.getKeepdim() || d < dim ? d : d + 1));
    auto values =
        loop::PointwiseOp::create(rewriter, loc, valuesType, dynamicSizes);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = rewriter.createBlock(
          &values.getBody(), {},
          SmallVector<Type>(valuesType.getRank(), rewriter.getIndexType()),
          SmallVector<Location>(valuesType.getRank(), loc));
      SmallVector<Value> rowIndices(ValueRange(body->getArguments()));
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      if (op.getKeepdim())
        rowIndices[dim] = zero;
      else
        rowIndices.insert(rowIndices.begin() + dim, zero);
      Value element = loop::LoadOp::create(rewriter, loc, extremum, rowIndices);
      loop::YieldOp::create(rewriter, loc,
                            convertScalar(rewriter, loc, element, extremumDtype,
                                          valuesType.getElementType()));
    }
    rewriter.replaceOp(op, {values.getResult(), indices});
    return success();
  }

  CombiningKind combiner;
};
} // namespace

//===----------------------------------------------------------------------===//
// Distances
//===----------------------------------------------------------------------===//

namespace {

/// The elements of a pair of rows, at the indices of a distance (`ivs`) and
/// a position `m` along the rows, in the compute dtype.
using RowPairFn = function_ref<std::pair<Value, Value>(
    OpBuilder &, Location, ValueRange ivs, Value m)>;

/// p-norm distances of `resultType` between pairs of rows of `columns`
/// elements, (Σ_m |a_m - b_m|^p)^(1/p), with PyTorch's special norms: p = 0
/// counts the differing elements, p = ∞ takes the largest difference. A
/// node of the powered differences (one more dimension, m), which inlining
/// folds into the reduction over m, then the root.
static Value buildPairwiseDistances(OpBuilder &b, Location loc,
                                    RankedTensorType resultType,
                                    int64_t columns, double norm, Type dtype,
                                    RowPairFn rows) {
  bool isInf = std::isinf(norm);
  SmallVector<int64_t> shape(resultType.getShape());
  shape.push_back(columns);
  int64_t last = resultType.getRank();
  Value differences = buildGeneratorNode(
      b, loc, RankedTensorType::get(shape, dtype), {},
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        auto [lhs, rhs] = rows(b, loc, ivs.drop_back(), ivs.back());
        Value difference = math::AbsFOp::create(
            b, loc, arith::SubFOp::create(b, loc, lhs, rhs));
        if (norm == 0.0)
          return arith::UIToFPOp::create(
              b, loc, dtype,
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                    difference, makeFloat(b, loc, dtype, 0)));
        if (norm == 1.0 || isInf)
          return difference;
        if (norm == 2.0)
          return arith::MulFOp::create(b, loc, difference, difference);
        return math::PowFOp::create(b, loc, difference,
                                    makeFloat(b, loc, dtype, norm));
      });
  Value sums = buildReduction(b, loc, differences, {last}, /*keepdim=*/false,
                              isInf ? CombiningKind::max : CombiningKind::sum,
                              resultType.clone(dtype));
  return buildBroadcastPointwise(
      b, loc, resultType, ValueRange{sums}, TypeRange{dtype}, dtype,
      [&](OpBuilder &b, Location loc, ValueRange e) -> Value {
        if (norm == 0.0 || norm == 1.0 || isInf)
          return e[0];
        if (norm == 2.0)
          return math::SqrtOp::create(b, loc, e[0]);
        return math::PowFOp::create(b, loc, e[0],
                                    makeFloat(b, loc, dtype, 1.0 / norm));
      });
}

/// Lowers fx.cdist_forward: the distances between the rows p of x1
/// [*, P, M] and r of x2 [*, R, M] (buildPairwiseDistances).
struct CdistLowering : OpRewritePattern<fx::CdistForwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::CdistForwardOp op,
                                PatternRewriter &rewriter) const override {
    Value x1 = op.getX1(), x2 = op.getX2();
    auto type1 = cast<RankedTensorType>(x1.getType());
    auto type2 = cast<RankedTensorType>(x2.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = type1.getRank();
    double norm = op.getP().convertToDouble();
    if (!type1.hasStaticShape() || !type2.hasStaticShape() ||
        type2.getRank() != rank || norm < 0)
      return rewriter.notifyMatchFailure(op, "dynamic, broadcast or negative");
    Type dtype = getNormalizationDtype(rewriter, resultType.getElementType());
    rewriter.replaceOp(
        op,
        buildPairwiseDistances(
            rewriter, op.getLoc(), resultType, type1.getDimSize(rank - 1), norm,
            dtype, [&](OpBuilder &b, Location loc, ValueRange ivs, Value m) {
              // ivs: batches..., p, r.
              SmallVector<Value> at1(ivs.drop_back(2)), at2(at1);
              at1.append({ivs[rank - 2], m});
              at2.append({ivs[rank - 1], m});
              auto load = [&](Value x, ArrayRef<Value> at) {
                return convertScalar(
                    b, loc, loop::LoadOp::create(b, loc, x, at),
                    cast<RankedTensorType>(x.getType()).getElementType(),
                    dtype);
              };
              return std::make_pair(load(x1, at1), load(x2, at2));
            }));
    return success();
  }
};

/// Lowers fx.pdist_forward: the distances between rows i < j of [N, M], in
/// row-major order of the pairs (buildPairwiseDistances). Pair k's row i is
/// the largest with i·(2N - i - 1)/2 <= k (from the quadratic's root,
/// corrected by one either way), and j = k - i·(2N - i - 1)/2 + i + 1.
struct PdistLowering : OpRewritePattern<fx::PdistForwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(fx::PdistForwardOp op,
                                PatternRewriter &rewriter) const override {
    Value self = op.getSelf();
    auto type = cast<RankedTensorType>(self.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    double norm = op.getP().convertToDouble();
    if (!type.hasStaticShape() || type.getRank() != 2 || norm < 0 ||
        resultType.getNumElements() == 0)
      return rewriter.notifyMatchFailure(op, "dynamic, empty or negative");
    int64_t rows = type.getDimSize(0);
    Type dtype = getNormalizationDtype(rewriter, resultType.getElementType());
    rewriter.replaceOp(
        op,
        buildPairwiseDistances(
            rewriter, op.getLoc(), resultType, type.getDimSize(1), norm, dtype,
            [&](OpBuilder &b, Location loc, ValueRange ivs, Value m) {
              Value k = ivs[0];
              auto index = [&](int64_t value) -> Value {
                return arith::ConstantIndexOp::create(b, loc, value);
              };
              // i·(2N - i - 1)/2, the first pair of row i.
              auto firstPair = [&](Value i) -> Value {
                return arith::DivUIOp::create(
                    b, loc,
                    arith::MulIOp::create(
                        b, loc, i,
                        arith::SubIOp::create(b, loc, index(2 * rows - 1), i)),
                    index(2));
              };
              Type f64 = b.getF64Type();
              Value kf = sizeToFloat(b, loc, k, f64);
              double twoNMinusOne = 2.0 * rows - 1.0;
              Value root = math::SqrtOp::create(
                  b, loc,
                  arith::SubFOp::create(
                      b, loc,
                      makeFloat(b, loc, f64, twoNMinusOne * twoNMinusOne),
                      arith::MulFOp::create(b, loc, kf,
                                            makeFloat(b, loc, f64, 8.0))));
              Value estimate = arith::MulFOp::create(
                  b, loc,
                  arith::SubFOp::create(
                      b, loc, makeFloat(b, loc, f64, twoNMinusOne), root),
                  makeFloat(b, loc, f64, 0.5));
              Value i = arith::IndexCastUIOp::create(
                  b, loc, b.getIndexType(),
                  arith::FPToUIOp::create(
                      b, loc, b.getI64Type(),
                      arith::MaximumFOp::create(
                          b, loc, math::FloorOp::create(b, loc, estimate),
                          makeFloat(b, loc, f64, 0.0))));
              // Rounding may put the estimate one row off either way.
              Value next = arith::AddIOp::create(b, loc, i, index(1));
              i = arith::SelectOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                        firstPair(next), k),
                  next, i);
              Value previous = arith::SubIOp::create(b, loc, i, index(1));
              i = arith::SelectOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        firstPair(i), k),
                  previous, i);
              Value j = arith::AddIOp::create(
                  b, loc, arith::SubIOp::create(b, loc, k, firstPair(i)),
                  arith::AddIOp::create(b, loc, i, index(1)));
              auto load = [&](Value row) {
                return convertScalar(
                    b, loc,
                    loop::LoadOp::create(b, loc, self, ValueRange{row, m}),
                    type.getElementType(), dtype);
              };
              return std::make_pair(load(i), load(j));
            }));
    return success();
  }
};
} // namespace

void fxtoloop::populateReductionLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<ZeroDimReduction<fx::SumOp>, ZeroDimReduction<fx::MeanOp>,
           ZeroDimReduction<fx::AmaxOp>, ZeroDimReduction<fx::AminOp>,
           ZeroDimReduction<fx::ProdOp>, ZeroDimReduction<fx::ProdDimIntOp>,
           ZeroDimReduction<fx::ArgmaxOp>, ZeroDimReduction<fx::ArgminOp>,
           ZeroDimReduction<fx::MaxDimOp>, ZeroDimReduction<fx::MinDimOp>,
           ZeroDimReduction<fx::AnyOp>, ZeroDimReduction<fx::AnyDimOp>,
           ZeroDimReduction<fx::AnyDimsOp>, ZeroDimReduction<fx::AllOp>,
           ZeroDimReduction<fx::AllDimOp>, ZeroDimReduction<fx::VarOp>,
           ZeroDimReduction<fx::VarMeanOp>, ZeroDimReduction<fx::LogsumexpOp>>(
          ctx);
  patterns.add<ReductionLowering<fx::SumOp>>(ctx, CombiningKind::sum);
  patterns.add<ReductionLowering<fx::AmaxOp>>(ctx, CombiningKind::max);
  patterns.add<ArgExtremumLowering<fx::ArgmaxOp>>(ctx, CombiningKind::max);
  patterns.add<ArgExtremumLowering<fx::ArgminOp>>(ctx, CombiningKind::min);
  patterns.add<ExtremumDimLowering<fx::MaxDimOp>>(ctx, CombiningKind::max);
  patterns.add<ExtremumDimLowering<fx::MinDimOp>>(ctx, CombiningKind::min);
  patterns.add<ReductionLowering<fx::AminOp>>(ctx, CombiningKind::min);
  patterns.add<ReductionLowering<fx::MeanOp>>(ctx, CombiningKind::sum);
  patterns.add<ProdLowering<fx::ProdOp>, ProdLowering<fx::ProdDimIntOp>>(ctx);
  patterns.add<AnyAllLowering<fx::AnyOp>, AnyAllLowering<fx::AnyDimOp>,
               AnyAllLowering<fx::AnyDimsOp>>(ctx, CombiningKind::max);
  patterns.add<AnyAllLowering<fx::AllOp>, AnyAllLowering<fx::AllDimOp>>(
      ctx, CombiningKind::min);
  patterns.add<CdistLowering, PdistLowering>(ctx);
}
