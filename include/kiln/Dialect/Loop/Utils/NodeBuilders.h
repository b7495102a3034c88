//===- NodeBuilders.h - Building loop nodes ---------------------*- C++ -*-===//
//
// Part of Kiln. The scalar and node builders that lowerings into the loop
// dialect and the loop dialect's own rewrites share: conversions with
// PyTorch's cast semantics, sizes, index arithmetic, index-map, generator
// and reduction nodes, and matrix product nodes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_UTILS_NODEBUILDERS_H
#define KILN_DIALECT_LOOP_UTILS_NODEBUILDERS_H

#include "kiln/Dialect/Loop/IR/LoopAttrs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::kiln::loop {

/// Whether PyTorch dtype `dtype` is unsigned (or bool): body scalars are
/// signless, so signedness comes from the dtype.
inline bool isUnsignedOrBool(Type dtype) {
  auto intType = dyn_cast<IntegerType>(dtype);
  return intType && (intType.isUnsigned() || intType.getWidth() == 1);
}

/// `index` clamped to [0, size), so that a read there stays in the tensor.
Value clampToRange(OpBuilder &b, Location loc, Value index, Value size);

/// Converts a scalar holding an element of PyTorch dtype `from` into one of
/// dtype `to`, with PyTorch's cast semantics (signedness comes from the dtype,
/// since body scalars are signless).
Value convertScalar(OpBuilder &b, Location loc, Value value, Type from,
                    Type to);

/// The size of dimension `dim` of `tensor` as an index value.
Value getDimSize(OpBuilder &b, Location loc, Value tensor, int64_t dim);

/// The dynamic sizes of `type` read from the same dimensions of `source`
/// (where only one of them has a dimension d, it is static).
SmallVector<Value> getSizesLike(OpBuilder &b, Location loc,
                                RankedTensorType type, Value source);

/// `value` split into digits of the row-major static `sizes` (the last
/// varies fastest); the first digit is the quotient left over, so the first
/// size may be dynamic.
SmallVector<Value> delinearizeIndex(OpBuilder &b, Location loc, Value value,
                                    ArrayRef<int64_t> sizes);

/// `value` split into digits of the row-major `sizes`, static or not (the
/// last varies fastest). The first digit is the quotient left over: its size
/// is not used, and may be null.
SmallVector<Value> delinearizeBySizes(OpBuilder &b, Location loc, Value value,
                                      ArrayRef<Value> sizes);

/// Builds the loop.reduce "sum" of `resultType` (`dynamicSizes` for its
/// `?`s) over `reductionShape` (`reductionSizes` for its `?`s) whose terms
/// `term` computes from the result's and the reduction's indices.
Value buildSum(OpBuilder &b, Location loc, RankedTensorType resultType,
               ValueRange dynamicSizes, ArrayRef<int64_t> reductionShape,
               ValueRange reductionSizes,
               function_ref<Value(OpBuilder &, Location, ValueRange out,
                                  ValueRange reduction)>
                   term);

/// A float constant of scalar type `type`.
Value makeFloat(OpBuilder &b, Location loc, Type type, double value);

/// Computes the source indices a view reads for the result indices `ivs`.
using IndexMapFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange ivs)>;

/// Builds a node that reads `source` at the indices `indexMap` gives for
/// each element of `resultType`. Inlining then folds it into its readers, so
/// a view costs index arithmetic in the kernel that reads it, not a copy.
Value buildIndexMapNode(OpBuilder &b, Location loc, Value source,
                        RankedTensorType resultType, ValueRange dynamicSizes,
                        IndexMapFn indexMap);

/// Builds a node of `type` whose element at the node's indices `elementFn`
/// computes (reading only what it loads).
Value buildGeneratorNode(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes,
    function_ref<Value(OpBuilder &, Location, ValueRange)> elementFn);

/// What a reduction's body yields at the input's `indices`, given the
/// reduction's own indices (of the reduced dimensions, in order).
using ReductionValueFn = function_ref<Value(
    OpBuilder &, Location, ValueRange indices, ValueRange reductionIndices)>;

/// Builds a loop.reduce combining `input` over `dims` (all dimensions when
/// empty) with `combiner`, into `resultType` (with size-1 reduced dimensions
/// when `keepdim`). Elements convert to the result's dtype, accumulated in
/// f32 for f16/bf16 results; `value`, if given, yields something else.
Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> dims, bool keepdim,
                     CombiningKind combiner, RankedTensorType resultType,
                     ReductionValueFn value = nullptr);

/// `index` clamped to [0, size), and whether it already was: a read at the
/// clamped index stays in the tensor, and the flag selects a fill value for
/// positions outside it (padding).
std::pair<Value, Value> clampAndTest(OpBuilder &b, Location loc, Value index,
                                     Value size);

/// Builds `lhs x rhs` (each read transposed in its last two dimensions
/// where asked) as a loop.matmul of `resultType`.
Value buildMatmulNode(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      RankedTensorType resultType, bool transposeLhs = false,
                      bool transposeRhs = false);

/// The value of a per-spatial-dimension attribute for dimension `dim`
/// (PyTorch accepts one value for all).
int64_t getSpatialAttr(ArrayRef<int64_t> values, int64_t dim);

/// The output position (patch column, block, pooling output) whose window
/// puts kernel position `k` at input position `x` along one dimension: (x +
/// padding - k·dilation) / stride when that divides and lies in [0,
/// outputs); the position clamped into range, so that reading there stays in
/// bounds, and whether it does (the gathers of col2im and of the pooling and
/// convolution gradients).
std::pair<Value, Value> getWindowAt(OpBuilder &b, Location loc, Value x,
                                    Value k, int64_t padding, int64_t dilation,
                                    int64_t stride, Value outputs);
std::pair<Value, Value> getWindowAt(OpBuilder &b, Location loc, Value x,
                                    Value k, int64_t padding, int64_t dilation,
                                    int64_t stride, int64_t outputs);

} // namespace mlir::kiln::loop

#endif // KILN_DIALECT_LOOP_UTILS_NODEBUILDERS_H
