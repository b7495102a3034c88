//===- LoweringUtils.h - Shared fx-to-loop helpers --------------*- C++ -*-===//
//
// Part of Kiln. The lowerings of kiln-fx-to-loop live in several files; these
// are the scalar and node builders they share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_FXTOLOOP_LOWERINGUTILS_H
#define KILN_LIB_CONVERSION_FXTOLOOP_LOWERINGUTILS_H

#include "kiln/Conversion/FXToLoop/FXToLoop.h"
#include "kiln/Dialect/Loop/IR/LoopAttrs.h"
#include "kiln/Dialect/Loop/Utils/NodeBuilders.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
namespace fxtoloop {

using loop::CombiningKind;
// The node builders this library shares with the loop dialect's rewrites.
using loop::buildGeneratorNode;
using loop::buildIndexMapNode;
using loop::buildMatmulNode;
using loop::buildReduction;
using loop::buildSum;
using loop::clampAndTest;
using loop::clampToRange;
using loop::convertScalar;
using loop::delinearizeBySizes;
using loop::delinearizeIndex;
using loop::getDimSize;
using loop::getSizesLike;
using loop::getSpatialAttr;
using loop::getWindowAt;
using loop::IndexMapFn;
using loop::isUnsignedOrBool;
using loop::makeFloat;
using loop::ReductionValueFn;

/// `dim` of a rank-`rank` tensor, counted from the end when negative.
inline int64_t normalizeDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

/// The run-time value of the size symbol `name` of the graph around `op`:
/// the size of the first guarded argument dimension it names, or null.
Value getSizeSymbolValue(OpBuilder &b, Location loc, Operation *op,
                         StringRef name);

/// The run-time value of a `size_symbols` entry of `op` (a size symbol, or
/// a multiple of one plus a constant, a window count, a product of those:
/// fx::parseSizeExpression), or null.
Value getSizeExpressionValue(OpBuilder &b, Location loc, Operation *op,
                             StringRef text);

/// The dynamic sizes of `type`, the result of `op`, from the graph's size
/// symbols that `op`'s `size_symbols` names; failure where it names none or
/// no argument binds one.
FailureOr<SmallVector<Value>> getNamedDynamicSizes(OpBuilder &b, Location loc,
                                                   Operation *op,
                                                   RankedTensorType type);

/// The dynamic sizes of `type` from `sizeOf(dim)` for each dynamic `dim`.
SmallVector<Value> collectDynamicSizes(RankedTensorType type,
                                       function_ref<Value(int64_t)> sizeOf);

/// An element of an index tensor, `value`, as an index into a dimension of
/// `size`: negative values count from the end, and the result is clamped
/// into [0, size) (an index out of range, an error in PyTorch, reads or
/// writes the nearest element instead of memory outside the tensor).
Value wrapAndClampIndex(OpBuilder &b, Location loc, Value value, Value size);

/// How the lowerings report an index element outside its dimension, where
/// eager raises. With `flags` (kiln-fx-to-loop's `runtime-checks`: eager's
/// CPU kernels raise after checking), the whole index tensor is checked
/// before the node reads it, by a loop.check the runtime reads after the
/// run. With `asserts` (`device-asserts`: CUDA's eager kernels make device
/// asserts), each element is asserted where the node's body loads it
/// (cf.assert, a device assert in the kernel: nothing to read back). Nodes
/// read at the index clamped into range either way, so that no read leaves
/// its tensor.
struct IndexChecks {
  bool flags = false;
  bool asserts = false;

  IndexChecks() = default;
  explicit IndexChecks(const FXToLoopOptions &options)
      : flags(options.runtimeChecks), asserts(options.deviceAsserts) {}

  /// With `flags`, fails the run with `message` where an element of
  /// `indices` lies outside [-size, size) (`negative`: ATen's advanced
  /// indexing) or [0, size).
  void checkTensor(OpBuilder &b, Location loc, Value indices, Value size,
                   bool negative, StringRef message) const;
  /// With `asserts`, asserts with `message` that `element`, an index element
  /// that a node's body loaded, lies in that range.
  void checkElement(OpBuilder &b, Location loc, Value element, Value size,
                    bool negative, StringRef message) const;
};

/// ATen's advanced indexing of `self` by integer index tensors at its
/// dimensions `positions` (fx.index reads through it, fx.index_put writes):
/// the index tensors broadcast together, and their broadcast dimensions
/// replace the indexed ones where those are adjacent and lead otherwise.
/// That gives the index space of the read or write.
struct AdvancedIndexing {
  /// Fails for bool or unsigned indices (masks, with data-dependent
  /// shapes). `positions` defaults to the first dimensions; `spaceShape` to
  /// the broadcast of the index tensors' shapes placed among self's.
  static FailureOr<AdvancedIndexing>
  get(Value self, ValueRange indexTensors,
      std::optional<ArrayRef<int64_t>> positions,
      std::optional<ArrayRef<int64_t>> spaceShape = std::nullopt);

  /// The dynamic sizes of the space, read from the index tensors and self.
  SmallVector<Value> getDynamicSizes(OpBuilder &b, Location loc) const;
  /// The sizes of self's indexed dimensions (outside any node, for
  /// getSelfIndices).
  SmallVector<Value> getIndexedSizes(OpBuilder &b, Location loc) const;
  /// The indices into self of point `ivs` of the space: negative indices
  /// count from the end, and out-of-range ones are clamped (and asserted,
  /// with `checks.asserts`).
  SmallVector<Value> getSelfIndices(OpBuilder &b, Location loc, ValueRange ivs,
                                    ArrayRef<Value> indexedSizes,
                                    const IndexChecks &checks) const;
  /// With `checks.flags`, adds the run-time checks of eager's indexing: each
  /// index tensor's elements in [-size, size) of the dimension it indexes.
  void checkIndices(OpBuilder &b, Location loc, const IndexChecks &checks,
                    ArrayRef<Value> indexedSizes) const;

  Value self;
  SmallVector<Value> indexTensors;
  SmallVector<int64_t> positions;
  SmallVector<int64_t> spaceShape;

private:
  /// The dimension of index tensor `i` that space dimension `dim` (one of
  /// the broadcast ones) reads, or -1 where the tensor broadcasts along it.
  int64_t getIndexDim(int64_t i, int64_t dim) const;

  int64_t broadcastRank = 0;
  int64_t broadcastStart = 0;
  /// For each dimension of self, the index tensor that indexes it, or -1.
  SmallVector<int64_t> indexOfDim;
  /// For each dimension of self that is not indexed, its space dimension.
  SmallVector<int64_t> spaceDimOf;
};

/// `indices` of a tensor of row-major `sizes` as its position.
Value linearizeBySizes(OpBuilder &b, Location loc, ValueRange indices,
                       ArrayRef<Value> sizes);

/// The run-time sizes of the dynamic dimensions of `resultType`, the
/// broadcast of `inputs`' shapes, each read off an input that has it.
SmallVector<Value> getBroadcastDynamicSizes(OpBuilder &b, Location loc,
                                            RankedTensorType resultType,
                                            ValueRange inputs);

/// offset + Σ ivs[i]·strides[i]: where element `ivs` of an as_strided view
/// lies among the viewed tensor's row-major elements.
Value buildStridedPosition(OpBuilder &b, Location loc, ValueRange ivs,
                           ArrayRef<int64_t> strides, int64_t offset);

/// Whether an as_strided view of `shape` (non-negative `strides`, `offset`)
/// stays within a tensor of `elements` elements.
bool isStridedViewWithin(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides,
                         int64_t offset, int64_t elements);

/// Whether the last `spatial` dimensions of a pooling or resampling op's
/// `input` and `result` are static (what their lowerings need).
bool hasStaticSpatialSizes(RankedTensorType input, RankedTensorType result,
                           int64_t spatial);

/// A zero-filled tensor of `type`, with the sizes `sizeOf` gives its `?`s.
Value buildZeros(OpBuilder &b, Location loc, RankedTensorType type,
                 function_ref<Value(int64_t)> sizeOf);

/// The value a scatter update combines and the result indices it goes to.
struct ScatterUpdate {
  Value value;
  SmallVector<Value> indices;
};

/// Builds a loop.scatter with `combiner` of `init`'s type over an update
/// space of `updateShape` (`updateDynamicSizes` for its `?`s): `updateFn`
/// gives the update at each index.
Value buildScatter(
    OpBuilder &b, Location loc, CombiningKind combiner, Value init,
    ArrayRef<int64_t> updateShape, ValueRange updateDynamicSizes,
    function_ref<ScatterUpdate(OpBuilder &, Location, ValueRange)> updateFn);

/// A PyTorch Scalar attribute (bool, i64 or f64) as a constant of `dtype`.
Value makeScalar(OpBuilder &b, Location loc, Attribute scalar, Type dtype);

/// Whether the optional PyTorch Scalar `scalar` is present and zero.
bool isZeroScalar(std::optional<Attribute> scalar);

/// A size, count or other non-negative index value as a float of `type`.
Value sizeToFloat(OpBuilder &b, Location loc, Value size, Type type);

/// Computes one element from the operand elements, all already converted to
/// the compute dtype.
using ScalarBodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Builds a loop.pointwise defining `resultType` from broadcast `inputs`. Each
/// input's elements are converted to the dtype `inputDtypes` gives it before
/// `bodyFn` runs, and the body's value from `bodyDtype` to the result's.
Value buildBroadcastPointwise(OpBuilder &b, Location loc,
                              RankedTensorType resultType, ValueRange inputs,
                              TypeRange inputDtypes, Type bodyDtype,
                              ScalarBodyFn bodyFn);

/// The longest row that fx.sort (and so topk and randperm) lowers for: its
/// sorting network has log2(n) (log2(n) + 1) / 2 nodes, 300 for 2^24.
inline constexpr int64_t kMaxSortLength = int64_t(1) << 24;

/// `min(max(x, lower), upper)` on scalars of `dtype`, with either bound
/// absent (null); NaN propagates for floats, as in PyTorch.
Value emitClamp(OpBuilder &b, Location loc, Value x, Value lower, Value upper,
                Type dtype);

/// An integer constant of scalar type `type`.
Value makeInteger(OpBuilder &b, Location loc, Type type, int64_t value);

/// A PyTorch Scalar attribute as a double, and whether it is integral.
std::pair<double, bool> getScalarValue(Attribute scalar);

/// The kinds of binary arithmetic the elementwise lowerings share.
enum class BinaryKind {
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Fmod,      // C's fmod: the sign of the dividend.
  Remainder, // Python's %: the sign of the divisor.
  TruncDiv,  // Division rounded toward zero.
  FloorDiv   // Division rounded down.
};

/// `lhs <kind> rhs` on scalars of PyTorch dtype `dtype` (bools: or, and)
/// (ElementwiseLowering.cpp).
Value emitBinary(OpBuilder &b, Location loc, BinaryKind kind, Value lhs,
                 Value rhs, Type dtype);

/// Multiplies `value`, of PyTorch dtype `dtype`, by the op's `alpha`, if it
/// has one other than 1 (ElementwiseLowering.cpp).
Value scaleByAlpha(OpBuilder &b, Location loc, Value value, Type dtype,
                   std::optional<Attribute> alpha);

/// Whether an element fails a run-time check (an i1), given the element.
using CheckFn = function_ref<Value(OpBuilder &, Location, Value element)>;

/// Adds a run-time check (loop.check) that fails the graph's run with
/// `message` where `fails` holds for an element of `tensor`. Its flag is the
/// largest of `fails` over the elements as an si32 (the type's least value
/// for an empty tensor: never positive).
void buildRuntimeCheck(OpBuilder &b, Location loc, Value tensor, CheckFn fails,
                       StringRef message);

/// Adds the run-time check of eager's integer division, remainder and fmod
/// on CPUs ("RuntimeError: ZeroDivisionError") where `divisor`, a tensor,
/// holds a zero; nothing when the division computes in `dtype` floats.
void checkDivisor(OpBuilder &b, Location loc, Value divisor, Type dtype);

/// checkDivisor for a Scalar divisor: a zero one fails every run that
/// divides something, that is, where `dividend` has an element.
void checkDivisor(OpBuilder &b, Location loc, Value dividend, Attribute divisor,
                  Type dtype);

/// Whether scalars `lhs` and `rhs` are the same value: equal, or both NaN.
Value emitSameValue(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// The dtype PyTorch computes normalizations in: f32 for f16/bf16 inputs.
Type getNormalizationDtype(OpBuilder &b, Type dtype);

/// `type`'s shape with size 1 at `dims`, and elements of `dtype`: the shape
/// of per-row statistics.
RankedTensorType getStatisticsType(RankedTensorType type,
                                   ArrayRef<int64_t> dims, Type dtype);

/// The standard normal distribution's CDF Φ(x) of an f32 scalar, for the
/// exact GELU and its gradient: cheaper on GPUs than `0.5 (1 + erf(x /
/// sqrt 2))` and closer to the exact value (MathLowering.cpp).
Value emitNormalCdfF32(OpBuilder &b, Location loc, Value x);

/// asinh, acosh and atanh of a float scalar (MathLowering.cpp): log1p forms
/// near 0 (and near 1 for acosh), log 2x where x² + 1 rounds to x² (asinh,
/// acosh), so as accurate as the target's log1p over the whole domains.
Value emitAsinh(OpBuilder &b, Location loc, Value x);
Value emitAcosh(OpBuilder &b, Location loc, Value x);
Value emitAtanh(OpBuilder &b, Location loc, Value x);

/// Helpers of the normalization gradients: pointwise nodes and sums in the
/// statistics dtype `dtype`.
struct GradientBuilder {
  PatternRewriter &rewriter;
  Location loc;
  Type dtype;

  Value pointwise(RankedTensorType type, ValueRange inputs,
                  ScalarBodyFn body) const {
    return buildBroadcastPointwise(rewriter, loc, type, inputs,
                                   SmallVector<Type>(inputs.size(), dtype),
                                   dtype, body);
  }
  /// `input`'s elements summed over `dims` into `type` (kept dimensions if
  /// its rank is `input`'s).
  Value sum(Value input, ArrayRef<int64_t> dims, RankedTensorType type) const {
    bool keepdim =
        type.getRank() == cast<RankedTensorType>(input.getType()).getRank();
    return buildReduction(rewriter, loc, input, dims, keepdim,
                          CombiningKind::sum, type);
  }
  /// `values` as `type` (their elements converted).
  Value convertTo(RankedTensorType type, Value values) const {
    if (cast<RankedTensorType>(values.getType()) == type)
      return values;
    return pointwise(type, {values},
                     [](OpBuilder &, Location, ValueRange e) { return e[0]; });
  }
  /// `values` summed over `dims` into `result`'s type; `values` themselves
  /// when there are no dimensions to sum.
  Value sumInto(Value result, Value values, ArrayRef<int64_t> dims) const {
    auto type = cast<RankedTensorType>(result.getType());
    if (dims.empty())
      return convertTo(type, values);
    return convertTo(type, sum(values, dims, type.clone(dtype)));
  }
  /// A result that `output_mask` leaves out: zeros of its type.
  Value maskedOff(Value result, Value sizedLike) const {
    auto type = cast<RankedTensorType>(result.getType());
    return buildZeros(rewriter, loc, type, [&](int64_t dim) {
      return getDimSize(rewriter, loc, sizedLike, dim);
    });
  }
};

/// Builds `lhs x rhs` as a loop.matmul of `resultType`, reading operands
/// that are transposed views from their sources in place, and a 2-d lhs
/// that merges the rows of a larger tensor as a collapse of it
/// (MatmulLowering.cpp).
Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  RankedTensorType resultType);

} // namespace fxtoloop
} // namespace kiln
} // namespace mlir

#endif // KILN_LIB_CONVERSION_FXTOLOOP_LOWERINGUTILS_H
