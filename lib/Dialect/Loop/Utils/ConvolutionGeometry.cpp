//===- ConvolutionGeometry.cpp - Convolutions as products -----------------===//
//
// Part of Kiln. The im2col builders of ConvolutionGeometry.h: a convolution's
// patches, its weights and output side grouped for a product, the image that
// col2im sums from patches, and direct window sums for filters that read few
// inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Loop/Utils/ConvolutionGeometry.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::loop;

/// The element of `input` that kernel position `kernel` (one index per
/// spatial dimension) of output position `out` reads in image `batch` and
/// channel `channel`: input[batch, channel, o*s + k*d - p], 0 outside the
/// image.
static Value buildWindowElement(OpBuilder &b, Location loc, Value input,
                                const ConvolutionGeometry &g, Value batch,
                                Value channel, ValueRange out,
                                ValueRange kernel) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  SmallVector<Value> indices = {batch, channel};
  Value inside;
  for (int64_t dim = 0; dim < g.spatial; ++dim) {
    Value position = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, out[dim], index(g.stride[dim])),
        arith::MulIOp::create(b, loc, kernel[dim], index(g.dilation[dim])));
    position = arith::SubIOp::create(b, loc, position, index(g.padding[dim]));
    auto [clamped, inRange] =
        clampAndTest(b, loc, position, g.getExtent(b, loc, dim));
    inside = inside ? arith::AndIOp::create(b, loc, inside, inRange).getResult()
                    : inRange;
    indices.push_back(clamped);
  }
  Value element = loop::LoadOp::create(b, loc, input, indices);
  Type scalar = loop::getScalarType(
      cast<RankedTensorType>(input.getType()).getElementType());
  Value padding =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(scalar, 0.0));
  return arith::SelectOp::create(b, loc, inside, element, padding);
}

Value loop::buildConvolutionPatches(OpBuilder &b, Location loc, Value input,
                                    const ConvolutionGeometry &g,
                                    int64_t columns, ValueRange columnSizes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto patchesType = RankedTensorType::get({g.groups, g.depth, columns},
                                           inputType.getElementType());
  auto patches = loop::PointwiseOp::create(b, loc, patchesType, columnSizes);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&patches.getBody(), {},
                              SmallVector<Type>(3, b.getIndexType()),
                              SmallVector<Location>(3, loc));
  Value group = body->getArgument(0);
  SmallVector<Value> row =
      delinearizeIndex(b, loc, body->getArgument(1), g.getRowDigits());
  SmallVector<Value> column = delinearizeBySizes(b, loc, body->getArgument(2),
                                                 g.getColumnDigits(b, loc));
  Value channel = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, group,
          arith::ConstantIndexOp::create(b, loc, g.groupChannels)),
      row[0]);
  loop::YieldOp::create(b, loc,
                        buildWindowElement(b, loc, input, g, column[0], channel,
                                           ArrayRef<Value>(column).drop_front(),
                                           ArrayRef<Value>(row).drop_front()));
  return patches.getResult();
}

/// The type a direct convolution's sums of `resultType` accumulate in: f32
/// for 16-bit results (as a product's sums), else the result's.
static Type getDirectAccumulator(RankedTensorType resultType) {
  Type element = resultType.getElementType();
  if (element.isF16() || element.isBF16())
    return Float32Type::get(element.getContext());
  return element;
}

/// `lhs` * `rhs`, two elements of dtype `dtype`, in `accumulator`.
static Value multiplyIn(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        Type dtype, Type accumulator) {
  return arith::MulFOp::create(b, loc,
                               convertScalar(b, loc, lhs, dtype, accumulator),
                               convertScalar(b, loc, rhs, dtype, accumulator));
}

Value loop::buildDirectConvolution(OpBuilder &b, Location loc, Value input,
                                   Value weight, RankedTensorType resultType,
                                   ValueRange sizes,
                                   const ConvolutionGeometry &g) {
  Type dtype = cast<RankedTensorType>(input.getType()).getElementType();
  Type accumulator = getDirectAccumulator(resultType);
  return buildSum(
      b, loc, resultType, sizes, g.getRowDigits(), {},
      [&](OpBuilder &b, Location loc, ValueRange out,
          ValueRange window) -> Value {
        Value filter = out[1];
        Value groupChannel = window.front();
        ValueRange kernel = window.drop_front();
        Value element =
            buildWindowElement(b, loc, input, g, out[0],
                               g.getInputChannel(b, loc, filter, groupChannel),
                               out.drop_front(2), kernel);
        SmallVector<Value> weightIndices = {filter, groupChannel};
        llvm::append_range(weightIndices, kernel);
        Value filterElement =
            loop::LoadOp::create(b, loc, weight, weightIndices);
        return multiplyIn(b, loc, element, filterElement, dtype, accumulator);
      });
}

Value loop::buildDirectImageGradient(OpBuilder &b, Location loc, Value gradOut,
                                     Value weight, RankedTensorType resultType,
                                     ValueRange sizes,
                                     const ConvolutionGeometry &g) {
  Type dtype = cast<RankedTensorType>(gradOut.getType()).getElementType();
  Type accumulator = getDirectAccumulator(resultType);
  SmallVector<int64_t> window = {g.groupFilters};
  llvm::append_range(window, g.kernel);
  return buildSum(
      b, loc, resultType, sizes, window, {},
      [&](OpBuilder &b, Location loc, ValueRange in,
          ValueRange terms) -> Value {
        auto index = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(b, loc, value);
        };
        Value perGroup = index(g.groupChannels);
        Value group = arith::DivUIOp::create(b, loc, in[1], perGroup);
        Value groupChannel = arith::RemUIOp::create(b, loc, in[1], perGroup);
        Value filter = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, group, index(g.groupFilters)),
            terms.front());
        ValueRange kernel = terms.drop_front();
        SmallVector<Value> gradIndices = {in[0], filter};
        Value valid;
        for (int64_t dim = 0; dim < g.spatial; ++dim) {
          auto [out, fits] = getWindowAt(
              b, loc, in[2 + dim], kernel[dim], g.padding[dim], g.dilation[dim],
              g.stride[dim], g.getOutExtent(b, loc, dim));
          valid = valid ? arith::AndIOp::create(b, loc, valid, fits).getResult()
                        : fits;
          gradIndices.push_back(out);
        }
        Value element = loop::LoadOp::create(b, loc, gradOut, gradIndices);
        SmallVector<Value> weightIndices = {filter, groupChannel};
        llvm::append_range(weightIndices, kernel);
        Value filterElement =
            loop::LoadOp::create(b, loc, weight, weightIndices);
        Value product =
            multiplyIn(b, loc, element, filterElement, dtype, accumulator);
        return arith::SelectOp::create(b, loc, valid, product,
                                       makeFloat(b, loc, accumulator, 0.0));
      });
}

Value loop::buildDirectWeightGradient(OpBuilder &b, Location loc,
                                      Value outputSide, Value image,
                                      RankedTensorType resultType,
                                      const ConvolutionGeometry &g) {
  auto sideType = cast<RankedTensorType>(outputSide.getType());
  Type dtype = sideType.getElementType();
  Type accumulator = getDirectAccumulator(resultType);
  // Summed over [N, O...], whose dynamic sizes are the output side's.
  SmallVector<int64_t> reductionShape = {sideType.getDimSize(0)};
  llvm::append_range(reductionShape, g.outExtent);
  SmallVector<Value> reductionSizes;
  for (auto [dim, size] : llvm::enumerate(reductionShape))
    if (ShapedType::isDynamic(size))
      reductionSizes.push_back(
          dim == 0 ? getDimSize(b, loc, outputSide, 0)
                   : g.getOutExtent(b, loc, static_cast<int64_t>(dim) - 1));
  return buildSum(
      b, loc, resultType, {}, reductionShape, reductionSizes,
      [&](OpBuilder &b, Location loc, ValueRange entry,
          ValueRange position) -> Value {
        Value filter = entry[0];
        ValueRange kernel = entry.drop_front(2);
        Value batch = position.front();
        ValueRange out = position.drop_front();
        Value element = buildWindowElement(
            b, loc, image, g, batch,
            g.getInputChannel(b, loc, filter, entry[1]), out, kernel);
        SmallVector<Value> sideIndices = {batch, filter};
        llvm::append_range(sideIndices, out);
        Value sideElement =
            loop::LoadOp::create(b, loc, outputSide, sideIndices);
        return multiplyIn(b, loc, sideElement, element, dtype, accumulator);
      });
}

Value loop::buildGroupedWeights(OpBuilder &b, Location loc, Value weight,
                                const ConvolutionGeometry &g) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  auto type = RankedTensorType::get({g.groups, g.groupFilters, g.depth},
                                    weightType.getElementType());
  return buildIndexMapNode(
      b, loc, weight, type, {},
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        Value filter = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, ivs[0],
                arith::ConstantIndexOp::create(b, loc, g.groupFilters)),
            ivs[1]);
        SmallVector<Value> indices = {filter};
        llvm::append_range(indices,
                           delinearizeIndex(b, loc, ivs[2], g.getRowDigits()));
        return indices;
      });
}

SmallVector<Value> loop::getProductIndices(OpBuilder &b, Location loc,
                                           ValueRange ivs,
                                           const ConvolutionGeometry &g) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value column = ivs[0];
  for (int64_t dim = 0; dim < g.spatial; ++dim)
    column = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, column, g.getOutExtent(b, loc, dim)),
        ivs[dim + 2]);
  Value perGroup = index(g.groupFilters);
  return {arith::DivUIOp::create(b, loc, ivs[1], perGroup),
          arith::RemUIOp::create(b, loc, ivs[1], perGroup), column};
}

Value loop::buildGroupedColumns(OpBuilder &b, Location loc, Value value,
                                const ConvolutionGeometry &g, int64_t columns,
                                ValueRange columnSizes) {
  auto type = cast<RankedTensorType>(value.getType());
  return buildIndexMapNode(
      b, loc, value,
      RankedTensorType::get({g.groups, g.groupFilters, columns},
                            type.getElementType()),
      columnSizes, [&](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> column =
            delinearizeBySizes(b, loc, ivs[2], g.getColumnDigits(b, loc));
        Value channel = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, ivs[0],
                arith::ConstantIndexOp::create(b, loc, g.groupFilters)),
            ivs[1]);
        SmallVector<Value> indices = {column[0], channel};
        indices.append(column.begin() + 1, column.end());
        return indices;
      });
}

Value loop::buildImageFromPatches(OpBuilder &b, Location loc, Value patches,
                                  const ConvolutionGeometry &g,
                                  RankedTensorType type, ValueRange sizes) {
  int64_t rank = type.getRank();
  Type dtype = cast<RankedTensorType>(patches.getType()).getElementType();
  // Terms [N, C, X..., K...], zero where no output position's window puts
  // kernel position k at x.
  SmallVector<int64_t> termsShape(type.getShape());
  termsShape.append(g.kernel);
  Value terms = buildGeneratorNode(
      b, loc, RankedTensorType::get(termsShape, dtype), sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) -> Value {
        auto index = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(b, loc, value);
        };
        Value perGroup = index(g.groupChannels);
        Value group = arith::DivUIOp::create(b, loc, ivs[1], perGroup);
        Value row = arith::RemUIOp::create(b, loc, ivs[1], perGroup);
        Value column = ivs[0];
        Value valid;
        for (int64_t dim = 0; dim < g.spatial; ++dim) {
          Value k = ivs[rank + dim];
          row = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, row, index(g.kernel[dim])),
              k);
          auto [out, fits] = getWindowAt(
              b, loc, ivs[2 + dim], k, g.padding[dim], g.dilation[dim],
              g.stride[dim], g.getOutExtent(b, loc, dim));
          valid = valid ? arith::AndIOp::create(b, loc, valid, fits).getResult()
                        : fits;
          column = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, column,
                                    g.getOutExtent(b, loc, dim)),
              out);
        }
        Value element = loop::LoadOp::create(b, loc, patches,
                                             ValueRange{group, row, column});
        return arith::SelectOp::create(b, loc, valid, element,
                                       makeFloat(b, loc, dtype, 0.0))
            .getResult();
      });
  SmallVector<int64_t> kernelDims;
  for (int64_t dim = 0; dim < g.spatial; ++dim)
    kernelDims.push_back(rank + dim);
  return buildReduction(b, loc, terms, kernelDims, /*keepdim=*/false,
                        CombiningKind::sum, type);
}
