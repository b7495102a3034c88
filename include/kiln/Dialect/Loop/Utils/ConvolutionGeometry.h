//===- ConvolutionGeometry.h - Convolutions as products ---------*- C++ -*-===//
//
// Part of Kiln. The shapes of a convolution as its im2col lowerings see them,
// and the builders of its patches, grouped weights and columns, images from
// patches and direct window sums, which the lowerings of fx.convolution and
// its gradients and kiln-loop-expand-convolutions share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_UTILS_CONVOLUTIONGEOMETRY_H
#define KILN_DIALECT_LOOP_UTILS_CONVOLUTIONGEOMETRY_H

#include "kiln/Dialect/Loop/Utils/NodeBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::kiln::loop {

/// The shapes of a (not transposed, batched) convolution, as its im2col
/// lowerings see them: G groups of Cg channels and Fg filters, `kernel`
/// over input `extent` giving `outExtent`, patch depth Cg·|kernel|. Spatial
/// sizes may be dynamic (kDynamic): bind them before building.
struct ConvolutionGeometry {
  int64_t spatial, groups, groupChannels, groupFilters, depth;
  SmallVector<int64_t> kernel, extent, outExtent, stride, padding, dilation;
  /// The run-time sizes of the dynamic entries of `extent` and `outExtent`
  /// (null for static ones).
  SmallVector<Value> extentSizes, outExtentSizes;

  /// The geometry, or failure for what the lowerings do not handle: other
  /// than floats, unbatched, or dynamic channels.
  static FailureOr<ConvolutionGeometry>
  get(RankedTensorType input, RankedTensorType weight, RankedTensorType output,
      ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
      ArrayRef<int64_t> dilation, int64_t groups) {
    int64_t rank = input.getRank();
    if (!isa<FloatType>(output.getElementType()) || rank != weight.getRank() ||
        rank < 3 || !weight.hasStaticShape() || input.isDynamicDim(1) ||
        output.isDynamicDim(1))
      return failure();
    ConvolutionGeometry g;
    g.spatial = rank - 2;
    g.groups = groups;
    g.groupChannels = input.getDimSize(1) / groups;
    g.groupFilters = weight.getDimSize(0) / groups;
    g.kernel.assign(weight.getShape().drop_front(2).begin(),
                    weight.getShape().end());
    g.extent.assign(input.getShape().drop_front(2).begin(),
                    input.getShape().end());
    g.outExtent.assign(output.getShape().drop_front(2).begin(),
                       output.getShape().end());
    g.depth = g.groupChannels;
    for (int64_t size : g.kernel)
      g.depth *= size;
    for (int64_t dim = 0; dim < g.spatial; ++dim) {
      g.stride.push_back(getSpatialAttr(stride, dim));
      g.padding.push_back(getSpatialAttr(padding, dim));
      g.dilation.push_back(getSpatialAttr(dilation, dim));
    }
    g.extentSizes.resize(g.spatial);
    g.outExtentSizes.resize(g.spatial);
    return g;
  }

  /// Whether the convolution is computed directly, as each output's sum over
  /// its window: its filters read at most `directDepth` inputs (channels per
  /// group times kernel positions), a window a thread sums on its own, and
  /// its patches would be at least as large as its result (depth / Fg times
  /// it), so a product would not pay for them. Its weight gradient, whose
  /// product would be [Fg x columns] x [columns x depth], is direct alike.
  bool isDirect(int64_t directDepth) const {
    return depth <= directDepth && groupFilters <= depth;
  }
  /// The same for its transposed convolution (the input gradient), whose
  /// outputs each sum over the group's filters times the kernel positions,
  /// and whose product would be only Fg deep.
  bool isDirectTransposed(int64_t directDepth) const {
    int64_t transposedDepth = groupFilters;
    for (int64_t size : kernel)
      transposedDepth *= size;
    return transposedDepth <= directDepth && groupChannels <= transposedDepth;
  }

  /// The input channel that channel `groupChannel` of filter `filter`'s
  /// group reads: (f / Fg)·Cg + c.
  Value getInputChannel(OpBuilder &b, Location loc, Value filter,
                        Value groupChannel) const {
    Value group =
        arith::DivUIOp::create(b, loc, filter, constant(b, loc, groupFilters));
    return arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, group, constant(b, loc, groupChannels)),
        groupChannel);
  }

  /// Binds the dynamic entries of `extent` (`outExtent` with `outputSide`)
  /// to the run-time sizes of `tensor`'s spatial dimensions.
  void bindSizes(OpBuilder &b, Location loc, Value tensor, bool outputSide) {
    SmallVector<Value> &sizes = outputSide ? outExtentSizes : extentSizes;
    ArrayRef<int64_t> shape = outputSide ? outExtent : extent;
    for (int64_t dim = 0; dim < spatial; ++dim)
      if (ShapedType::isDynamic(shape[dim]))
        sizes[dim] = getDimSize(b, loc, tensor, dim + 2);
  }
  /// Binds the dynamic entries of `outExtent` to the sizes the convolution
  /// computes from `extent`: (x + 2p - d(k - 1) - 1) / s + 1.
  void computeOutExtent(OpBuilder &b, Location loc) {
    for (int64_t dim = 0; dim < spatial; ++dim) {
      if (!ShapedType::isDynamic(outExtent[dim]))
        continue;
      int64_t reach = 2 * padding[dim] - dilation[dim] * (kernel[dim] - 1) - 1;
      Value size = arith::AddIOp::create(b, loc, getExtent(b, loc, dim),
                                         constant(b, loc, reach));
      size =
          arith::DivSIOp::create(b, loc, size, constant(b, loc, stride[dim]));
      outExtentSizes[dim] =
          arith::AddIOp::create(b, loc, size, constant(b, loc, 1));
    }
  }
  /// Binds the dynamic entries of `extent` to the sizes of the transposed
  /// convolution whose input is `outExtent` wide: (o - 1)s - 2p + d(k - 1)
  /// + outputPadding + 1.
  void computeTransposedExtent(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> outputPadding) {
    for (int64_t dim = 0; dim < spatial; ++dim) {
      if (!ShapedType::isDynamic(extent[dim]))
        continue;
      int64_t added = -stride[dim] - 2 * padding[dim] +
                      dilation[dim] * (kernel[dim] - 1) +
                      getSpatialAttr(outputPadding, dim) + 1;
      Value size = arith::MulIOp::create(b, loc, getOutExtent(b, loc, dim),
                                         constant(b, loc, stride[dim]));
      extentSizes[dim] =
          arith::AddIOp::create(b, loc, size, constant(b, loc, added));
    }
  }

  Value getExtent(OpBuilder &b, Location loc, int64_t dim) const {
    return extentSizes[dim] ? extentSizes[dim] : constant(b, loc, extent[dim]);
  }
  Value getOutExtent(OpBuilder &b, Location loc, int64_t dim) const {
    return outExtentSizes[dim] ? outExtentSizes[dim]
                               : constant(b, loc, outExtent[dim]);
  }
  /// The output positions per image: static, or kDynamic.
  int64_t getPositions() const {
    int64_t positions = 1;
    for (int64_t size : outExtent) {
      if (ShapedType::isDynamic(size))
        return ShapedType::kDynamic;
      positions *= size;
    }
    return positions;
  }
  /// The patch columns of `batch` images (`batchSize` its run-time size
  /// when dynamic): static, or kDynamic with its run-time size appended to
  /// `sizes`.
  int64_t getColumns(OpBuilder &b, Location loc, int64_t batch, Value batchSize,
                     SmallVectorImpl<Value> &sizes) const {
    int64_t positions = getPositions();
    if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(positions))
      return batch * positions;
    Value columns = batchSize ? batchSize : constant(b, loc, batch);
    if (!ShapedType::isDynamic(positions)) {
      columns =
          arith::MulIOp::create(b, loc, columns, constant(b, loc, positions));
    } else {
      for (int64_t dim = 0; dim < spatial; ++dim)
        columns =
            arith::MulIOp::create(b, loc, columns, getOutExtent(b, loc, dim));
    }
    sizes.push_back(columns);
    return ShapedType::kDynamic;
  }
  /// The run-time sizes of a tensor of `type` on the `outputSide` (with
  /// outExtent) or the input side: its dynamic batch `batchSize`, then its
  /// dynamic spatial sizes.
  SmallVector<Value> getDynamicSizes(RankedTensorType type, Value batchSize,
                                     bool outputSide) const {
    SmallVector<Value> sizes;
    if (type.isDynamicDim(0))
      sizes.push_back(batchSize);
    for (int64_t dim = 0; dim < spatial; ++dim)
      if (type.isDynamicDim(dim + 2))
        sizes.push_back(outputSide ? outExtentSizes[dim] : extentSizes[dim]);
    return sizes;
  }

  /// The sizes a patch row (Cg, kernel...) delinearizes into.
  SmallVector<int64_t> getRowDigits() const {
    SmallVector<int64_t> digits = {groupChannels};
    llvm::append_range(digits, kernel);
    return digits;
  }
  /// The sizes a patch column (batch, outExtent...) delinearizes into; the
  /// batch is the quotient left over.
  SmallVector<Value> getColumnDigits(OpBuilder &b, Location loc) const {
    SmallVector<Value> digits = {Value()};
    for (int64_t dim = 0; dim < spatial; ++dim)
      digits.push_back(getOutExtent(b, loc, dim));
    return digits;
  }

private:
  static Value constant(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
};

/// The input's patches (im2col) [G, depth, columns], columns being every
/// batch's output positions one after another:
///   patches[g, (c, k...), (n, o...)] = input[n, g*Cg + c, o*s + k*d - p]
/// (0 outside the input).
Value buildConvolutionPatches(OpBuilder &b, Location loc, Value input,
                              const ConvolutionGeometry &g, int64_t columns,
                              ValueRange columnSizes);

/// A convolution of `input` by `weight` as each output's sum over its
/// window:
///   result[n, f, o...] = Σ_{c, k...} input[n, (f / Fg)*Cg + c, o*s + k*d - p]
///                                    * weight[f, c, k...]
/// summed in f32 for 16-bit results (as a product's sums), else in the
/// result's dtype; `sizes` are the result's dynamic sizes. For filters that
/// read few inputs (depthwise ones) the patches would be the image as many
/// times over as a window holds, for a product too shallow to pay for them.
Value buildDirectConvolution(OpBuilder &b, Location loc, Value input,
                             Value weight, RankedTensorType resultType,
                             ValueRange sizes, const ConvolutionGeometry &g);

/// The input gradient of a convolution (a transposed convolution of the
/// output's gradient `gradOut`) as each input element's sum over the
/// outputs whose windows read it:
///   result[n, g*Cg + c, x...] = Σ_{f, k...} gradOut[n, g*Fg + f, o...]
///                                           * weight[g*Fg + f, c, k...]
/// with o = (x + p - k*d) / s where that divides and is an output position
/// (else no term). `sizes` are the result's dynamic sizes. In place of
/// col2im, whose patch gradients would come from a product Fg deep.
Value buildDirectImageGradient(OpBuilder &b, Location loc, Value gradOut,
                               Value weight, RankedTensorType resultType,
                               ValueRange sizes, const ConvolutionGeometry &g);

/// The weight gradient of a convolution whose output side is `outputSide`
/// (the output's gradient; a transposed convolution's input) and whose
/// input side is `image`, as each filter element's sum over the batch and
/// the output positions:
///   result[f, c, k...] = Σ_{n, o...} outputSide[n, f, o...]
///                          * image[n, (f / Fg)*Cg + c, o*s + k*d - p]
/// In place of a product [Fg x columns] x [columns x depth], which is
/// shallow on both sides for the filters isDirect takes.
Value buildDirectWeightGradient(OpBuilder &b, Location loc, Value outputSide,
                                Value image, RankedTensorType resultType,
                                const ConvolutionGeometry &g);

/// The weights per group, [G, Fg, depth]: weight[g*Fg + f, (c, k...)].
Value buildGroupedWeights(OpBuilder &b, Location loc, Value weight,
                          const ConvolutionGeometry &g);

/// Where element `ivs` ([n, g*Fg + f, o...]) of a convolution's output side
/// lies among the columns of its im2col product: [g, f, (n, o...)].
SmallVector<Value> getProductIndices(OpBuilder &b, Location loc, ValueRange ivs,
                                     const ConvolutionGeometry &g);

/// `value` ([N, G*Fg, o...], on a convolution's output side) regrouped as
/// the columns of its im2col product: [G, Fg, (n, o...)].
Value buildGroupedColumns(OpBuilder &b, Location loc, Value value,
                          const ConvolutionGeometry &g, int64_t columns,
                          ValueRange columnSizes);

/// The image of `type` ([N, C, X...], on a convolution's input side) whose
/// elements sum the entries of `patches` ([G, depth, columns]) that stand
/// for them (col2im): kernel position k of output position o = (x + p -
/// k*d) / s stands for x when that divides and o is an output position.
/// `sizes` holds the image's dynamic sizes.
Value buildImageFromPatches(OpBuilder &b, Location loc, Value patches,
                            const ConvolutionGeometry &g, RankedTensorType type,
                            ValueRange sizes);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_UTILS_CONVOLUTIONGEOMETRY_H
