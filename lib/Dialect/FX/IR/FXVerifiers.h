//===- FXVerifiers.h - verifiers of the table-generated fx ops --*- C++ -*-===//
//
// Part of Kiln. The op classes of FXOpBase.td call one verifier per family
// with a kind that selects the family's rule. Each verifier computes the
// result types from the operands and attributes (the op's shape function,
// with PyTorch's dtype rules) and reports the first mismatch. Verifiers read
// attributes by their ATen argument names, which the generator checks.
//
// This header is private to the dialect library: only the TUs that define
// ops and verifiers include it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_DIALECT_FX_IR_FXVERIFIERS_H
#define KILN_LIB_DIALECT_FX_IR_FXVERIFIERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <limits>
#include <optional>
#include <string>

namespace mlir::kiln::fx {

/// Returns the i-th ODS operand group of an op: one group per tensor
/// argument of the ATen schema, empty for an absent optional tensor.
using OperandGroups = llvm::function_ref<OperandRange(unsigned)>;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND, plus casts.
enum class TypePromotion {
  /// The promoted dtype.
  Default,
  /// The promoted dtype, or the default float dtype (f32) when integral.
  IntToFloat,
  /// Always bool; the promoted dtype is only the compute dtype.
  AlwaysBool,
  /// The promoted dtype, or its real counterpart when complex.
  ComplexToFloat,
  /// The complex dtype whose parts have the promoted (f32 or f64) dtype.
  FloatToComplex,
  /// The promoted dtype, or si64 when bool.
  BoolToLong,
  /// The `dtype` attribute, or the operand's dtype when absent.
  Cast,
};

/// Verifies an elementwise op: all tensor operands broadcast to the result
/// shape; the result dtype is `promotion` applied to torch.result_type of the
/// operands at `promotedOperands` (all when empty) and of the scalar
/// attributes `promotedScalars`. Float `coefficients` (alpha, value) need a
/// floating or complex result; `rejectBool` rejects bool operands as
/// subtraction does.
LogicalResult verifyElementwiseOp(Operation *op, TypePromotion promotion,
                                  ArrayRef<unsigned> promotedOperands,
                                  ArrayRef<StringRef> promotedScalars,
                                  ArrayRef<StringRef> coefficients,
                                  bool rejectBool);

//===----------------------------------------------------------------------===//
// Families
//===----------------------------------------------------------------------===//

/// Reductions read `dim` (absent, one i64 or an i64 array; absent or empty
/// means all dimensions), `keepdim` and `dtype`.
enum class ReductionKind {
  /// sum, prod: `dtype`, else si64 for integral inputs, else the input's.
  Sum,
  /// mean: `dtype` or the input's, which must be floating or complex.
  Mean,
  /// amax, amin: the input's dtype.
  SameDtype,
  /// max.dim, min.dim: (values with the input's dtype, si64 indices).
  ValuesAndIndices,
  /// argmax, argmin: si64.
  ArgIndex,
  /// any, all: bool (uint8 for uint8 inputs).
  AnyAll,
  /// var: real floating dtype of a floating or complex input.
  Var,
  /// var_mean: (var as `Var`, mean with the input's dtype).
  VarMean,
  /// logsumexp: INT_TO_FLOAT.
  LogSumExp,
  /// cumsum, cumprod: the input's shape, dtype as `Sum`.
  Cumulative,
  /// sort: (values of the input's type, si64 indices of its shape).
  Sort,
  /// topk: as `Sort` with `k` elements along `dim`.
  TopK,
};
LogicalResult verifyReductionOp(Operation *op, ReductionKind kind,
                                OperandGroups groups);

enum class NormalizationKind {
  /// _softmax, _log_softmax: the input's type, or f32 with half_to_float.
  Softmax,
  /// _softmax_backward_data, _log_softmax_backward_data.
  SoftmaxBackward,
  /// native_layer_norm: (output, mean, rstd).
  LayerNorm,
  /// native_layer_norm_backward: (grad_input, grad_weight, grad_bias).
  LayerNormBackward,
  /// native_group_norm: (output, mean, rstd), statistics of shape [N, group].
  GroupNorm,
  /// native_group_norm_backward.
  GroupNormBackward,
  /// _native_batch_norm_legit_no_training: statistics not computed.
  BatchNormInference,
  /// _native_batch_norm_legit_functional: 5 results with running stats.
  BatchNormFunctional,
  /// _native_batch_norm_legit.no_stats.
  BatchNormNoStats,
  /// native_batch_norm_backward.
  BatchNormBackward,
};
LogicalResult verifyNormalizationOp(Operation *op, NormalizationKind kind,
                                    OperandGroups groups);

enum class LinalgKind {
  Mm,
  Bmm,
  Addmm,
  Baddbmm,
  Convolution,
  ConvolutionBackward,
  /// _scaled_dot_product_flash_attention_for_cpu: (output, logsumexp).
  FlashAttentionForCpu,
  FlashAttentionForCpuBackward,
  /// _scaled_dot_product_efficient_attention: (output, log_sumexp,
  /// philox_seed, philox_offset).
  EfficientAttention,
  /// _scaled_dot_product_efficient_attention_backward: (grad_query,
  /// grad_key, grad_value, grad_bias).
  EfficientAttentionBackward,
  /// _pdist_forward: [N, M] -> [N * (N - 1) / 2].
  Pdist,
  /// _cdist_forward: [*, P, M] x [*, R, M] -> [*, P, R].
  Cdist,
  /// _fft_r2c: real to complex, the last transformed dimension halved when
  /// `onesided`.
  FftR2C,
  /// _fft_c2r: complex to real, the last transformed dimension
  /// `last_dim_size`.
  FftC2R,
  /// _fft_c2c: complex to complex of the same shape.
  FftC2C,
};
LogicalResult verifyLinalgOp(Operation *op, LinalgKind kind,
                             OperandGroups groups);

enum class ShapeKind {
  /// view, _unsafe_view: same dtype and, when static, element count.
  View,
  Permute,
  Expand,
  Squeeze,
  Unsqueeze,
  /// view_as_complex: [..., 2] of f32 (f64) -> [...] of complex<f32>
  /// (complex<f64>); view_as_real the other way.
  ViewAsComplex,
  ViewAsReal,
  Slice,
  Select,
  Cat,
  Split,
  AsStrided,
  ConstantPad,
  /// reflection_pad*, replication_pad*: `padding` of the trailing dims.
  Pad,
  Flip,
  Repeat,
  Diagonal,
  /// copy: self's type; src broadcasts to it.
  Copy,
  SliceScatter,
  SelectScatter,
  AsStridedScatter,
};
LogicalResult verifyShapeOp(Operation *op, ShapeKind kind,
                            OperandGroups groups);

enum class IndexingKind {
  Index,
  IndexPut,
  IndexSelect,
  Gather,
  /// scatter.src, scatter_add, scatter_reduce.two.
  Scatter,
  ScatterValue,
  Embedding,
  EmbeddingDenseBackward,
  /// masked_scatter: self and mask broadcast; source has self's dtype.
  MaskedScatter,
};
LogicalResult verifyIndexingOp(Operation *op, IndexingKind kind,
                               OperandGroups groups);

enum class PoolingKind {
  MaxPoolWithIndices,
  MaxPoolWithIndicesBackward,
  AvgPool,
  AvgPoolBackward,
  AdaptiveAvgPool,
  AdaptiveAvgPoolBackward,
  UpsampleNearest,
  UpsampleLinear,
  UpsampleBicubic,
  /// grid_sampler_2d: [N, C, H, W] sampled at grid [N, Ho, Wo, 2].
  GridSampler,
  /// col2im: [N, C * kh * kw, L] folded into [N, C, H, W].
  Col2Im,
};
LogicalResult verifyPoolingOp(Operation *op, PoolingKind kind,
                              int64_t spatialRank, OperandGroups groups);

enum class CreationKind {
  /// full, empty, rand, randn: the shape is the result's; `dtype` or default.
  Full,
  Empty,
  Random,
  EmptyStrided,
  /// full_like: self's shape, `dtype` or self's dtype.
  FullLike,
  ScalarTensor,
  Arange,
  /// native_dropout: (output of the input's type, bool mask).
  NativeDropout,
  /// bernoulli.p: self's type, `p` a probability.
  Bernoulli,
  /// randperm: a 1-d permutation, `dtype` or si64.
  Randperm,
};
LogicalResult verifyCreationOp(Operation *op, CreationKind kind,
                               OperandGroups groups);

//===----------------------------------------------------------------------===//
// Helpers shared by the family verifiers
//===----------------------------------------------------------------------===//

namespace verifier {

/// A size of an expected shape that the verifier cannot determine (a slice
/// of a `?` dimension): any result size matches it.
inline constexpr int64_t kAnySize = std::numeric_limits<int64_t>::min() + 1;

/// The ranked tensor type of `value`.
RankedTensorType getTensorType(Value value);

/// The single operand of ODS group `index`, or null when it is absent.
Value getOptionalOperand(OperandGroups groups, unsigned index);

/// Compares result `index` with `shape` (where kAnySize matches any size) and
/// `dtype`, and reports "result type 'X' does not match the inferred type
/// 'Y'" (naming the result's number when the op has several).
/// Checks a `size_symbols` attribute (views, creation ops): one name per
/// dynamic dimension of `result`, each a size symbol of the enclosing graph.
LogicalResult verifySizeSymbols(Operation *op, RankedTensorType result);

LogicalResult verifyResult(Operation *op, unsigned index,
                           ArrayRef<int64_t> shape, Type dtype);
LogicalResult verifyResult(Operation *op, unsigned index,
                           RankedTensorType expected);

/// Wraps `dim` of attribute `name` for a tensor of `rank`, or reports that it
/// is out of range.
FailureOr<int64_t> wrapDimOrError(Operation *op, StringRef name, int64_t dim,
                                  int64_t rank);

/// Wraps every dimension of attribute `name` and rejects repeats.
FailureOr<SmallVector<int64_t>> wrapDimsOrError(Operation *op, StringRef name,
                                                ArrayRef<int64_t> dims,
                                                int64_t rank);

/// Requires the static sizes of a window-like attribute list `name` to have
/// `count` entries, or one entry that stands for all (PyTorch's
/// expand_param_if_needed), and returns them expanded.
FailureOr<SmallVector<int64_t>> expandParam(Operation *op, StringRef name,
                                            ArrayRef<int64_t> values,
                                            int64_t count);

/// Attribute access by ATen argument name.
std::optional<int64_t> getOptionalI64(Operation *op, StringRef name);
int64_t getI64(Operation *op, StringRef name, int64_t defaultValue);
std::optional<double> getOptionalF64(Operation *op, StringRef name);
bool getBool(Operation *op, StringRef name, bool defaultValue);
std::optional<SmallVector<int64_t>> getOptionalI64Array(Operation *op,
                                                        StringRef name);
SmallVector<int64_t> getI64Array(Operation *op, StringRef name);
std::optional<SmallVector<double>> getOptionalF64Array(Operation *op,
                                                       StringRef name);
/// The `dtype` attribute, or null.
Type getDtypeAttr(Operation *op);

/// Whether `actual` can be `expected`: same rank, and every size joins (see
/// joinSizes) or is expected as kAnySize.
bool shapesJoin(ArrayRef<int64_t> actual, ArrayRef<int64_t> expected);

/// A shape as `[2, ?, 4]` (kAnySize prints as `?`), for messages.
std::string formatShape(ArrayRef<int64_t> shape);

/// A size as `4` or `?`, for messages.
std::string formatSize(int64_t size);

} // namespace verifier
} // namespace mlir::kiln::fx

#endif // KILN_LIB_DIALECT_FX_IR_FXVERIFIERS_H
