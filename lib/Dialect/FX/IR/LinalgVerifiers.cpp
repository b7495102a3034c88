//===- LinalgVerifiers.cpp - matmul, convolution and attention verifiers --===//
//
// Part of Kiln. Matrix products and convolutions do not promote: their
// tensor operands must share one dtype, which the result has.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// Requires all present `operands` to have the same dtype.
static LogicalResult verifySameDtype(Operation *op, ValueRange operands) {
  Type dtype;
  for (Value operand : operands) {
    if (!operand)
      continue;
    Type operandDtype = getTensorType(operand).getElementType();
    if (!dtype) {
      dtype = operandDtype;
    } else if (operandDtype != dtype) {
      return op->emitOpError("operands must have the same dtype, but have ")
             << dtype << " and " << operandDtype;
    }
  }
  return success();
}

/// Requires `value` (argument `name`) to have `rank`.
static LogicalResult verifyRank(Operation *op, StringRef name, Value value,
                                int64_t rank) {
  auto type = getTensorType(value);
  if (type.getRank() == rank)
    return success();
  return op->emitOpError("`")
         << name << "` must have rank " << rank << ", but is " << type;
}

/// Joins the size of dimension `lhsDim` of `lhs` with dimension `rhsDim` of
/// `rhs`, or reports that they differ.
static FailureOr<int64_t> joinDims(Operation *op, StringRef what, Value lhs,
                                   int64_t lhsDim, Value rhs, int64_t rhsDim) {
  auto lhsType = getTensorType(lhs);
  auto rhsType = getTensorType(rhs);
  std::optional<int64_t> joined =
      joinSizes(lhsType.getDimSize(lhsDim), rhsType.getDimSize(rhsDim));
  if (!joined)
    return op->emitOpError()
           << what << " of " << lhsType << " and " << rhsType << " differ";
  return *joined;
}

/// The [.., n, m] shape of a (batched) matrix product; `batched` adds one
/// leading batch dimension.
static FailureOr<SmallVector<int64_t>>
getMatmulShape(Operation *op, Value lhs, StringRef lhsName, Value rhs,
               StringRef rhsName, bool batched) {
  int64_t rank = batched ? 3 : 2;
  if (failed(verifyRank(op, lhsName, lhs, rank)) ||
      failed(verifyRank(op, rhsName, rhs, rank)) ||
      failed(verifySameDtype(op, {lhs, rhs})))
    return failure();
  SmallVector<int64_t> shape;
  if (batched) {
    FailureOr<int64_t> batch = joinDims(op, "batch sizes", lhs, 0, rhs, 0);
    if (failed(batch))
      return failure();
    shape.push_back(*batch);
  }
  if (failed(joinDims(op, "contracting sizes", lhs, rank - 1, rhs, rank - 2)))
    return failure();
  shape.push_back(getTensorType(lhs).getDimSize(rank - 2));
  shape.push_back(getTensorType(rhs).getDimSize(rank - 1));
  return shape;
}

/// Verifies mm/bmm, and addmm/baddbmm whose `self` broadcasts to the product.
static LogicalResult verifyMatmul(Operation *op, bool batched, bool hasSelf) {
  unsigned first = hasSelf ? 1 : 0;
  StringRef lhsName = hasSelf ? (batched ? "batch1" : "mat1") : "self";
  StringRef rhsName = hasSelf ? (batched ? "batch2" : "mat2") : "mat2";
  FailureOr<SmallVector<int64_t>> shape =
      getMatmulShape(op, op->getOperand(first), lhsName,
                     op->getOperand(first + 1), rhsName, batched);
  if (failed(shape))
    return failure();
  Type dtype = getTensorType(op->getOperand(first)).getElementType();
  if (hasSelf) {
    Value self = op->getOperand(0);
    if (failed(verifySameDtype(op, op->getOperands())))
      return failure();
    std::string reason;
    FailureOr<SmallVector<int64_t>> broadcast =
        broadcastShapes(getTensorType(self).getShape(), *shape, reason);
    if (failed(broadcast) || *broadcast != *shape)
      return op->emitOpError("`self` ")
             << self.getType() << " does not broadcast to the product shape "
             << formatShape(*shape);
    for (StringRef name : {"beta", "alpha"}) {
      Attribute coefficient = op->getAttr(name);
      if (coefficient && isa<FloatAttr>(coefficient) && isIntegralOrBool(dtype))
        return op->emitOpError("floating ")
               << name << " " << coefficient
               << " cannot be applied to an integral result of dtype " << dtype;
    }
  }
  return verifyResult(op, 0, *shape, dtype);
}

/// The window parameters of a convolution with `spatialRank` dimensions.
struct ConvParams {
  SmallVector<int64_t> stride, padding, dilation, outputPadding;
  int64_t groups;
  bool transposed;
};

static FailureOr<ConvParams> getConvParams(Operation *op, int64_t spatialRank) {
  ConvParams params;
  FailureOr<SmallVector<int64_t>> stride =
      expandParam(op, "stride", getI64Array(op, "stride"), spatialRank);
  FailureOr<SmallVector<int64_t>> padding =
      expandParam(op, "padding", getI64Array(op, "padding"), spatialRank);
  FailureOr<SmallVector<int64_t>> dilation =
      expandParam(op, "dilation", getI64Array(op, "dilation"), spatialRank);
  FailureOr<SmallVector<int64_t>> outputPadding = expandParam(
      op, "output_padding", getI64Array(op, "output_padding"), spatialRank);
  if (failed(stride) || failed(padding) || failed(dilation) ||
      failed(outputPadding))
    return failure();
  params.stride = std::move(*stride);
  params.padding = std::move(*padding);
  params.dilation = std::move(*dilation);
  params.outputPadding = std::move(*outputPadding);
  params.groups = getI64(op, "groups", 1);
  params.transposed = getBool(op, "transposed", false);
  if (params.groups <= 0)
    return op->emitOpError("`groups` must be positive, but is ")
           << params.groups;
  for (int64_t s : params.stride) {
    if (s <= 0)
      return op->emitOpError("`stride` entries must be positive");
  }
  for (int64_t d : params.dilation) {
    if (d <= 0)
      return op->emitOpError("`dilation` entries must be positive");
  }
  return params;
}

/// The output shape of convolution(input, weight, ...) and its output
/// channel count.
static FailureOr<SmallVector<int64_t>>
getConvolutionShape(Operation *op, Value input, Value weight) {
  auto inputType = getTensorType(input);
  auto weightType = getTensorType(weight);
  int64_t spatialRank = weightType.getRank() - 2;
  if (spatialRank < 1)
    return op->emitOpError("`weight` ")
           << weightType
           << " must have output and input channel dimensions and at least "
              "one spatial dimension";
  bool batched = inputType.getRank() == weightType.getRank();
  if (!batched && inputType.getRank() != weightType.getRank() - 1)
    return op->emitOpError("`input` ")
           << inputType << " must have rank " << weightType.getRank() << " (or "
           << weightType.getRank() - 1 << " unbatched) for `weight` "
           << weightType;
  FailureOr<ConvParams> params = getConvParams(op, spatialRank);
  if (failed(params))
    return failure();

  int64_t channelDim = batched ? 1 : 0;
  int64_t inChannels = inputType.getDimSize(channelDim);
  int64_t outChannels;
  int64_t groups = params->groups;
  if (params->transposed) {
    // weight: [C_in, C_out / groups, k...].
    if (!joinSizes(weightType.getDimSize(0), inChannels))
      return op->emitOpError("`input` ")
             << inputType << " has " << formatSize(inChannels)
             << " channels, but the transposed `weight` " << weightType
             << " expects " << formatSize(weightType.getDimSize(0));
    int64_t perGroup = weightType.getDimSize(1);
    outChannels = ShapedType::isDynamic(perGroup) ? ShapedType::kDynamic
                                                  : perGroup * groups;
  } else {
    // weight: [C_out, C_in / groups, k...].
    int64_t perGroup = weightType.getDimSize(1);
    int64_t expectedIn = ShapedType::isDynamic(perGroup) ? ShapedType::kDynamic
                                                         : perGroup * groups;
    if (!joinSizes(expectedIn, inChannels))
      return op->emitOpError("`input` ")
             << inputType << " has " << formatSize(inChannels)
             << " channels, but `weight` " << weightType << " with " << groups
             << " groups expects " << formatSize(expectedIn);
    outChannels = weightType.getDimSize(0);
    if (!ShapedType::isDynamic(outChannels) && outChannels % groups != 0)
      return op->emitOpError("`weight` ")
             << weightType << " has " << outChannels
             << " output channels, which `groups` " << groups
             << " does not divide";
  }

  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(inputType.getDimSize(0));
  shape.push_back(outChannels);
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t in = inputType.getDimSize(channelDim + 1 + i);
    int64_t kernel = weightType.getDimSize(2 + i);
    if (ShapedType::isDynamic(kernel)) {
      shape.push_back(kAnySize);
      continue;
    }
    std::optional<int64_t> out =
        params->transposed
            ? getTransposedWindowOutputSize(
                  in, kernel, params->stride[i], params->padding[i],
                  params->dilation[i], params->outputPadding[i])
            : getWindowOutputSize(in, kernel, params->stride[i],
                                  params->padding[i], params->dilation[i]);
    if (!out)
      return op->emitOpError("the output size overflows in spatial "
                             "dimension ")
             << i;
    if (!ShapedType::isDynamic(*out) && *out < 1)
      return op->emitOpError("the kernel does not fit: spatial dimension ")
             << i << " of `input` " << inputType << " gives output size "
             << *out;
    shape.push_back(*out);
  }
  return shape;
}

static LogicalResult verifyConvolution(Operation *op, OperandGroups groups,
                                       bool isBackward) {
  // Forward: (input, weight, bias?); backward: (grad_output, input, weight).
  Value input = groups(isBackward ? 1 : 0).front();
  Value weight = groups(isBackward ? 2 : 1).front();
  Value bias = isBackward ? Value() : getOptionalOperand(groups, 2);
  if (failed(verifySameDtype(op, {input, weight, bias})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      getConvolutionShape(op, input, weight);
  if (failed(shape))
    return failure();
  bool batched =
      getTensorType(input).getRank() == getTensorType(weight).getRank();
  int64_t outChannels = (*shape)[batched ? 1 : 0];
  Type dtype = getTensorType(input).getElementType();

  if (!isBackward) {
    if (bias) {
      auto biasType = getTensorType(bias);
      if (biasType.getRank() != 1 ||
          !joinSizes(biasType.getDimSize(0), outChannels))
        return op->emitOpError("`bias` ")
               << biasType << " must have shape " << formatShape(outChannels)
               << ", one per output channel";
    }
    return verifyResult(op, 0, *shape, dtype);
  }

  auto gradOutput = getTensorType(groups(0).front());
  if (!shapesJoin(gradOutput.getShape(), *shape))
    return op->emitOpError("`grad_output` ")
           << gradOutput << " does not have the convolution's output shape "
           << formatShape(*shape);
  // Autograd passes bias_sizes [0] for a convolution without a bias, whose
  // gradient output_mask leaves out.
  auto mask = op->getAttrOfType<DenseBoolArrayAttr>("output_mask");
  bool biasGradient = !mask || mask.size() != 3 || mask[2];
  if (std::optional<SmallVector<int64_t>> biasSizes =
          getOptionalI64Array(op, "bias_sizes");
      biasSizes && biasGradient) {
    if (biasSizes->size() != 1 || !joinSizes((*biasSizes)[0], outChannels))
      return op->emitOpError("`bias_sizes` ")
             << formatShape(*biasSizes) << " must be "
             << formatShape(outChannels);
  }
  if (failed(verifyResult(op, 0, getTensorType(input))) ||
      failed(verifyResult(op, 1, getTensorType(weight))))
    return failure();
  return verifyResult(op, 2, {outChannels}, gradOutput.getElementType());
}

/// Checks query [B, H, L, E], key [B, H, S, E], value [B, H, S, Ev] and
/// returns the output shape [B, H, L, Ev].
static FailureOr<SmallVector<int64_t>>
getAttentionShape(Operation *op, Value query, Value key, Value value) {
  if (failed(verifyRank(op, "query", query, 4)) ||
      failed(verifyRank(op, "key", key, 4)) ||
      failed(verifyRank(op, "value", value, 4)) ||
      failed(verifySameDtype(op, {query, key, value})))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t dim : {0, 1}) {
    FailureOr<int64_t> joined = joinDims(
        op, dim == 0 ? "batch sizes" : "head counts", query, dim, key, dim);
    if (failed(joined) ||
        failed(joinDims(op, dim == 0 ? "batch sizes" : "head counts", key, dim,
                        value, dim)))
      return failure();
    shape.push_back(*joined);
  }
  if (failed(joinDims(op, "head dimensions", query, 3, key, 3)) ||
      failed(joinDims(op, "sequence lengths", key, 2, value, 2)))
    return failure();
  shape.push_back(getTensorType(query).getDimSize(2));
  shape.push_back(getTensorType(value).getDimSize(3));
  return shape;
}

/// The memory-efficient kernel's gradient beyond the query's, key's and
/// value's: its logsumexp [B, H, rows], its four-entry `grad_input_mask`,
/// and the bias's gradient, of the bias's type where there is a bias whose
/// gradient is wanted (else undefined, of any shape).
static LogicalResult verifyEfficientAttentionBackward(Operation *op,
                                                      OperandGroups groups,
                                                      Type dtype) {
  if (failed(verifyRank(op, "logsumexp", groups(6).front(), 3)))
    return failure();
  auto mask = op->getAttrOfType<DenseBoolArrayAttr>("grad_input_mask");
  if (mask.size() != 4)
    return op->emitOpError("`grad_input_mask` must have 4 entries (query, "
                           "key, value, bias), but has ")
           << mask.size();
  ValueRange bias = groups(4);
  if (!bias.empty() && mask[3])
    return verifyResult(op, 3, getTensorType(bias.front()));
  auto gradBias = getTensorType(op->getResult(3));
  if (gradBias.getElementType() != dtype)
    return op->emitOpError("result #3 (the bias's gradient) must have the "
                           "operands' dtype ")
           << dtype << ", but is " << gradBias;
  return success();
}

static LogicalResult verifyAttention(Operation *op, LinalgKind kind,
                                     OperandGroups groups) {
  bool isEfficientBackward = kind == LinalgKind::EfficientAttentionBackward;
  bool isBackward =
      kind == LinalgKind::FlashAttentionForCpuBackward || isEfficientBackward;
  // Backward: (grad_out, query, key, value, out, logsumexp, attn_mask?), or
  // for the memory-efficient kernel (grad_out, query, key, value,
  // attn_bias?, out, logsumexp, philox_seed, philox_offset).
  unsigned first = isBackward ? 1 : 0;
  Value query = groups(first).front();
  Value key = groups(first + 1).front();
  Value value = groups(first + 2).front();
  FailureOr<SmallVector<int64_t>> shape =
      getAttentionShape(op, query, key, value);
  if (failed(shape))
    return failure();
  auto queryType = getTensorType(query);
  Type dtype = queryType.getElementType();
  if (isBackward) {
    unsigned outGroup = isEfficientBackward ? 5 : 4;
    for (auto [name, group] :
         {std::pair<StringRef, unsigned>{"grad_out", 0}, {"out", outGroup}}) {
      auto type = getTensorType(groups(group).front());
      if (!shapesJoin(type.getShape(), *shape))
        return op->emitOpError("`")
               << name << "` " << type
               << " does not have the attention output shape "
               << formatShape(*shape);
    }
    if (failed(verifyResult(op, 0, queryType)) ||
        failed(verifyResult(op, 1, getTensorType(key))) ||
        failed(verifyResult(op, 2, getTensorType(value))))
      return failure();
    if (!isEfficientBackward)
      return success();
    return verifyEfficientAttentionBackward(op, groups, dtype);
  }

  if (failed(verifyResult(op, 0, *shape, dtype)))
    return failure();
  MLIRContext *ctx = op->getContext();
  int64_t batch = (*shape)[0], heads = (*shape)[1];
  int64_t queryLength = queryType.getDimSize(2);
  if (kind == LinalgKind::FlashAttentionForCpu)
    return verifyResult(op, 1, {batch, heads, queryLength},
                        getComputeDtype(dtype));

  // Efficient attention pads the log-sum-exp rows to multiples of 32, and
  // computes none without `compute_log_sumexp`.
  int64_t lseLength = 0;
  if (getBool(op, "compute_log_sumexp", false))
    lseLength = ShapedType::isDynamic(queryLength)
                    ? kAnySize
                    : llvm::divideCeil(queryLength, 32) * 32;
  if (failed(verifyResult(op, 1, {batch, heads, lseLength},
                          getDefaultFloatDtype(ctx))))
    return failure();
  // The philox seed and offset are si64 tensors whose shape depends on the
  // PyTorch version; only their dtype is checked.
  for (unsigned index : {2, 3}) {
    auto type = getTensorType(op->getResult(index));
    if (type.getElementType() != getIndexDtype(ctx))
      return op->emitOpError("result #")
             << index << " (the philox state) must be an si64 tensor, but is "
             << type;
  }
  return success();
}

/// _pdist_forward and _cdist_forward: pairwise p-norm distances.
static LogicalResult verifyDistance(Operation *op, LinalgKind kind) {
  if (getOptionalF64(op, "p").value_or(2.0) < 0.0)
    return op->emitOpError("`p` must not be negative");
  Value x1 = op->getOperand(0);
  auto x1Type = getTensorType(x1);
  if (kind == LinalgKind::Pdist) {
    if (failed(verifyRank(op, "self", x1, 2)))
      return failure();
    // N * (N - 1) / 2 pairs; for a `?` N the count is unknown here.
    int64_t n = x1Type.getDimSize(0);
    int64_t pairs = ShapedType::isDynamic(n) ? kAnySize : n * (n - 1) / 2;
    return verifyResult(op, 0, {pairs}, x1Type.getElementType());
  }
  Value x2 = op->getOperand(1);
  auto x2Type = getTensorType(x2);
  if (x1Type.getRank() < 2 || x2Type.getRank() < 2)
    return op->emitOpError("`x1` ")
           << x1Type << " and `x2` " << x2Type << " must have rank 2 or more";
  if (failed(verifySameDtype(op, {x1, x2})) ||
      failed(joinDims(op, "feature sizes", x1, x1Type.getRank() - 1, x2,
                      x2Type.getRank() - 1)))
    return failure();
  std::string reason;
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(
      x1Type.getShape().drop_back(2), x2Type.getShape().drop_back(2), reason);
  if (failed(shape))
    return op->emitOpError("batch dimensions are not broadcastable: ")
           << reason;
  shape->push_back(x1Type.getDimSize(x1Type.getRank() - 2));
  shape->push_back(x2Type.getDimSize(x2Type.getRank() - 2));
  return verifyResult(op, 0, *shape, x1Type.getElementType());
}

/// _fft_r2c, _fft_c2r and _fft_c2c over the dimensions `dim`.
static LogicalResult verifyFft(Operation *op, LinalgKind kind) {
  auto self = getTensorType(op->getOperand(0));
  SmallVector<int64_t> dimAttr = getI64Array(op, "dim");
  if (dimAttr.empty())
    return op->emitOpError("`dim` must name at least one dimension");
  FailureOr<SmallVector<int64_t>> dims =
      wrapDimsOrError(op, "dim", dimAttr, self.getRank());
  if (failed(dims))
    return failure();
  SmallVector<int64_t> shape(self.getShape());
  int64_t last = dims->back();
  Type dtype = self.getElementType();
  if (kind == LinalgKind::FftC2R) {
    shape[last] = getI64(op, "last_dim_size", 0);
    return verifyResult(op, 0, shape, toRealDtype(dtype));
  }
  if (kind == LinalgKind::FftC2C)
    return verifyResult(op, 0, shape, dtype);
  // Kiln's dtypes have no complex counterpart of f16 and bf16.
  if (!dtype.isF32() && !dtype.isF64())
    return op->emitOpError("a real-to-complex transform needs an f32 or f64 "
                           "input, but the input is ")
           << self;
  if (getBool(op, "onesided", false) && !ShapedType::isDynamic(shape[last]))
    shape[last] = shape[last] / 2 + 1;
  return verifyResult(op, 0, shape, ComplexType::get(dtype));
}

LogicalResult mlir::kiln::fx::verifyLinalgOp(Operation *op, LinalgKind kind,
                                             OperandGroups groups) {
  switch (kind) {
  case LinalgKind::Mm:
    return verifyMatmul(op, /*batched=*/false, /*hasSelf=*/false);
  case LinalgKind::Bmm:
    return verifyMatmul(op, /*batched=*/true, /*hasSelf=*/false);
  case LinalgKind::Addmm:
    return verifyMatmul(op, /*batched=*/false, /*hasSelf=*/true);
  case LinalgKind::Baddbmm:
    return verifyMatmul(op, /*batched=*/true, /*hasSelf=*/true);
  case LinalgKind::Convolution:
    return verifyConvolution(op, groups, /*isBackward=*/false);
  case LinalgKind::ConvolutionBackward:
    return verifyConvolution(op, groups, /*isBackward=*/true);
  case LinalgKind::FlashAttentionForCpu:
  case LinalgKind::FlashAttentionForCpuBackward:
  case LinalgKind::EfficientAttention:
  case LinalgKind::EfficientAttentionBackward:
    return verifyAttention(op, kind, groups);
  case LinalgKind::Pdist:
  case LinalgKind::Cdist:
    return verifyDistance(op, kind);
  case LinalgKind::FftR2C:
  case LinalgKind::FftC2R:
  case LinalgKind::FftC2C:
    return verifyFft(op, kind);
  }
  llvm_unreachable("unknown linalg kind");
}
