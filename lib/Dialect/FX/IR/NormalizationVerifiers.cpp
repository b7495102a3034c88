//===- NormalizationVerifiers.cpp - softmax and normalisation verifiers ---===//
//
// Part of Kiln. The outputs of the normalisations have their input's type.
// Their saved statistics (mean, rstd) are computed in the input's compute
// dtype: CUDA kernels return them in it (f32 for f16/bf16 inputs), CPU
// kernels cast them back to the input's dtype, so the verifiers accept both.
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// The dtype expected for saved statistics of an input of dtype `input`:
/// the compute dtype when result `index` has it, else the input's dtype.
static Type getStatsDtype(Operation *op, unsigned index, Type input) {
  Type actual = getTensorType(op->getResult(index)).getElementType();
  Type compute = getComputeDtype(input);
  return actual == compute ? compute : input;
}

/// Requires the optional operand `value` (argument `name`) to have `shape`.
static LogicalResult verifyParamShape(Operation *op, StringRef name,
                                      Value value, ArrayRef<int64_t> shape,
                                      RankedTensorType input) {
  if (!value)
    return success();
  auto type = getTensorType(value);
  if (shapesJoin(type.getShape(), shape))
    return success();
  return op->emitOpError("`")
         << name << "` has type " << type << ", but input " << input
         << " needs the shape " << formatShape(shape);
}

/// Requires `value` (argument `name`) to have `reference`'s shape.
static LogicalResult verifySameShape(Operation *op, StringRef name, Value value,
                                     StringRef referenceName, Value reference) {
  auto type = getTensorType(value);
  auto referenceType = getTensorType(reference);
  if (shapesJoin(type.getShape(), referenceType.getShape()))
    return success();
  return op->emitOpError("`")
         << name << "` " << type << " and `" << referenceName << "` "
         << referenceType << " must have the same shape";
}

/// Requires an input of rank >= 2 ([N, C, *]) and returns C.
static FailureOr<int64_t> getChannels(Operation *op, RankedTensorType input) {
  if (input.getRank() < 2)
    return op->emitOpError("input ")
           << input << " must have a batch and a channel dimension";
  return input.getDimSize(1);
}

static LogicalResult verifySoftmax(Operation *op, bool isBackward) {
  auto input = getTensorType(op->getOperand(0));
  if (failed(wrapDimOrError(op, "dim", getI64(op, "dim", 0), input.getRank())))
    return failure();
  if (isBackward) {
    if (failed(verifySameShape(op, "grad_output", op->getOperand(0), "output",
                               op->getOperand(1))))
      return failure();
    auto inputDtype = cast<TypeAttr>(op->getAttr("input_dtype")).getValue();
    return verifyResult(op, 0, input.getShape(), inputDtype);
  }
  Type dtype = input.getElementType();
  if (getBool(op, "half_to_float", false)) {
    if (!dtype.isF16() && !dtype.isBF16())
      return op->emitOpError("`half_to_float` needs an f16 or bf16 input, "
                             "but the input is ")
             << input;
    dtype = getDefaultFloatDtype(op->getContext());
  }
  return verifyResult(op, 0, input.getShape(), dtype);
}

/// The statistics shape of layer norm: the input's leading dimensions, then
/// a 1 for each normalised dimension.
static SmallVector<int64_t> getLayerNormStatsShape(RankedTensorType input,
                                                   size_t normalizedRank) {
  SmallVector<int64_t> shape(input.getShape().drop_back(
      std::min<size_t>(normalizedRank, input.getRank())));
  shape.append(normalizedRank, 1);
  return shape;
}

/// Checks a normalization backward's `mean` and `rstd` operands (groups 2
/// and 3) against the statistics shape of `input`.
static LogicalResult verifyStatistics(Operation *op, OperandGroups groups,
                                      RankedTensorType input,
                                      ArrayRef<int64_t> statsShape) {
  StringRef statsNames[] = {"mean", "rstd"};
  for (auto [index, name] : llvm::enumerate(statsNames)) {
    auto stats = getTensorType(groups(2 + index).front());
    if (!shapesJoin(stats.getShape(), statsShape))
      return op->emitOpError("`")
             << name << "` has type " << stats << ", but input " << input
             << " has statistics of shape " << formatShape(statsShape);
  }
  return success();
}

static LogicalResult verifyLayerNorm(Operation *op, OperandGroups groups,
                                     bool isBackward) {
  // Forward: (input, weight?, bias?); backward: (grad_out, input, mean, rstd,
  // weight?, bias?).
  unsigned inputIndex = isBackward ? 1 : 0;
  unsigned weightIndex = isBackward ? 4 : 1;
  auto input = getTensorType(groups(inputIndex).front());
  SmallVector<int64_t> normalizedShape = getI64Array(op, "normalized_shape");
  size_t normalizedRank = normalizedShape.size();
  if (static_cast<int64_t>(normalizedRank) > input.getRank() ||
      !shapesJoin(input.getShape().take_back(normalizedRank), normalizedShape))
    return op->emitOpError("`normalized_shape` ")
           << formatShape(normalizedShape)
           << " does not match the trailing dimensions of input " << input;
  Value weight = getOptionalOperand(groups, weightIndex);
  Value bias = getOptionalOperand(groups, weightIndex + 1);
  if (failed(verifyParamShape(op, "weight", weight, normalizedShape, input)) ||
      failed(verifyParamShape(op, "bias", bias, normalizedShape, input)))
    return failure();
  SmallVector<int64_t> statsShape =
      getLayerNormStatsShape(input, normalizedRank);
  Type dtype = input.getElementType();

  if (!isBackward) {
    if (failed(verifyResult(op, 0, input)))
      return failure();
    for (unsigned index : {1, 2}) {
      if (failed(verifyResult(op, index, statsShape,
                              getStatsDtype(op, index, dtype))))
        return failure();
    }
    return success();
  }

  Value gradOut = groups(0).front();
  if (failed(
          verifySameShape(op, "grad_out", gradOut, "input", groups(1).front())))
    return failure();
  if (failed(verifyStatistics(op, groups, input, statsShape)))
    return failure();
  if (failed(verifyResult(op, 0, input)))
    return failure();
  // Without weight or bias, their gradients are typed as if they existed.
  auto paramType = [&](Value param) {
    return param ? getTensorType(param)
                 : RankedTensorType::get(normalizedShape, dtype);
  };
  if (failed(verifyResult(op, 1, paramType(weight))))
    return failure();
  return verifyResult(op, 2, paramType(bias));
}

static LogicalResult verifyGroupNorm(Operation *op, OperandGroups groups,
                                     bool isBackward) {
  // Forward: (input, weight?, bias?); backward: (grad_out, input, mean, rstd,
  // weight?).
  auto input = getTensorType(groups(isBackward ? 1 : 0).front());
  FailureOr<int64_t> channels = getChannels(op, input);
  if (failed(channels))
    return failure();
  int64_t group = getI64(op, "group", 1);
  if (group <= 0)
    return op->emitOpError("`group` must be positive, but is ") << group;
  if (!ShapedType::isDynamic(*channels) && *channels % group != 0)
    return op->emitOpError("input ")
           << input << " has " << *channels << " channels, which `group` "
           << group << " does not divide";
  Value weight = getOptionalOperand(groups, isBackward ? 4 : 1);
  if (failed(verifyParamShape(op, "weight", weight, {*channels}, input)))
    return failure();
  Type dtype = input.getElementType();
  SmallVector<int64_t> statsShape = {input.getDimSize(0), group};

  if (!isBackward) {
    Value bias = getOptionalOperand(groups, 2);
    if (failed(verifyParamShape(op, "bias", bias, {*channels}, input)) ||
        failed(verifyResult(op, 0, input)))
      return failure();
    for (unsigned index : {1, 2}) {
      if (failed(verifyResult(op, index, statsShape,
                              getStatsDtype(op, index, dtype))))
        return failure();
    }
    return success();
  }

  if (failed(verifySameShape(op, "grad_out", groups(0).front(), "input",
                             groups(1).front())))
    return failure();
  if (failed(verifyStatistics(op, groups, input, statsShape)))
    return failure();
  if (failed(verifyResult(op, 0, input)))
    return failure();
  Type paramDtype = weight ? getTensorType(weight).getElementType() : dtype;
  for (unsigned index : {1, 2}) {
    if (failed(verifyResult(op, index, {*channels}, paramDtype)))
      return failure();
  }
  return success();
}

static LogicalResult verifyBatchNorm(Operation *op, NormalizationKind kind,
                                     OperandGroups groups) {
  bool isBackward = kind == NormalizationKind::BatchNormBackward;
  // Forward: (input, weight?, bias?, running_mean, running_var) (no running
  // stats for no_stats); backward: (grad_out, input, weight?, running_mean?,
  // running_var?, save_mean?, save_invstd?).
  auto input = getTensorType(groups(isBackward ? 1 : 0).front());
  FailureOr<int64_t> channels = getChannels(op, input);
  if (failed(channels))
    return failure();
  SmallVector<int64_t> channelShape = {*channels};

  struct Param {
    StringRef name;
    unsigned group;
  };
  SmallVector<Param> params;
  if (isBackward) {
    params = {{"weight", 2},
              {"running_mean", 3},
              {"running_var", 4},
              {"save_mean", 5},
              {"save_invstd", 6}};
  } else {
    params = {{"weight", 1}, {"bias", 2}};
    if (kind != NormalizationKind::BatchNormNoStats)
      params.append({{"running_mean", 3}, {"running_var", 4}});
  }
  for (const Param &param : params) {
    Value value = getOptionalOperand(groups, param.group);
    // Saved statistics of an evaluation-mode forward are empty.
    if (value && param.name.starts_with("save_") &&
        getTensorType(value).getShape() == ArrayRef<int64_t>{0})
      continue;
    if (failed(verifyParamShape(op, param.name, value, channelShape, input)))
      return failure();
  }

  Type dtype = input.getElementType();
  if (isBackward) {
    if (failed(verifySameShape(op, "grad_out", groups(0).front(), "input",
                               groups(1).front())) ||
        failed(verifyResult(op, 0, input)))
      return failure();
    Value weight = getOptionalOperand(groups, 2);
    Type paramDtype = weight ? getTensorType(weight).getElementType() : dtype;
    for (unsigned index : {1, 2}) {
      if (failed(verifyResult(op, index, channelShape, paramDtype)))
        return failure();
    }
    return success();
  }

  if (failed(verifyResult(op, 0, input)))
    return failure();
  // Statistics are saved only when training.
  bool training = kind != NormalizationKind::BatchNormInference &&
                  getBool(op, "training", false);
  SmallVector<int64_t> statsShape =
      training ? channelShape : SmallVector<int64_t>{0};
  for (unsigned index : {1, 2}) {
    if (failed(verifyResult(op, index, statsShape,
                            getStatsDtype(op, index, dtype))))
      return failure();
  }
  if (kind == NormalizationKind::BatchNormFunctional) {
    // The updated running statistics have the running statistics' types.
    for (unsigned index : {3, 4}) {
      if (failed(verifyResult(op, index, getTensorType(groups(index).front()))))
        return failure();
    }
  }
  return success();
}

LogicalResult mlir::kiln::fx::verifyNormalizationOp(Operation *op,
                                                    NormalizationKind kind,
                                                    OperandGroups groups) {
  switch (kind) {
  case NormalizationKind::Softmax:
    return verifySoftmax(op, /*isBackward=*/false);
  case NormalizationKind::SoftmaxBackward:
    return verifySoftmax(op, /*isBackward=*/true);
  case NormalizationKind::LayerNorm:
    return verifyLayerNorm(op, groups, /*isBackward=*/false);
  case NormalizationKind::LayerNormBackward:
    return verifyLayerNorm(op, groups, /*isBackward=*/true);
  case NormalizationKind::GroupNorm:
    return verifyGroupNorm(op, groups, /*isBackward=*/false);
  case NormalizationKind::GroupNormBackward:
    return verifyGroupNorm(op, groups, /*isBackward=*/true);
  case NormalizationKind::BatchNormInference:
  case NormalizationKind::BatchNormFunctional:
  case NormalizationKind::BatchNormNoStats:
  case NormalizationKind::BatchNormBackward:
    return verifyBatchNorm(op, kind, groups);
  }
  llvm_unreachable("unknown normalization kind");
}
