//===- PoolingVerifiers.cpp - pooling and resampling verifiers ------------===//
//
// Part of Kiln. Pooling windows slide over the trailing `spatialRank`
// dimensions of a [N, C, *] or unbatched [C, *] input; resampling ops take
// their output size from the result type (ATen's `output_size`).
//
//===----------------------------------------------------------------------===//

#include "FXVerifiers.h"

#include "kiln/Dialect/FX/IR/ShapeFunctions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln::fx;
using namespace mlir::kiln::fx::verifier;

/// Requires `input` (argument `name`) to have spatialRank + 2 dimensions, or
/// spatialRank + 1 when `allowUnbatched`.
static LogicalResult verifyPoolingRank(Operation *op, StringRef name,
                                       RankedTensorType input,
                                       int64_t spatialRank,
                                       bool allowUnbatched) {
  int64_t rank = input.getRank();
  if (rank == spatialRank + 2 || (allowUnbatched && rank == spatialRank + 1))
    return success();
  InFlightDiagnostic diag = op->emitOpError("`")
                            << name << "` " << input << " must have rank ";
  if (allowUnbatched)
    diag << spatialRank + 1 << " or ";
  return diag << spatialRank + 2;
}

/// The pooled shape of max_pool*/avg_pool* over `input`.
static FailureOr<SmallVector<int64_t>> getPooledShape(Operation *op,
                                                      RankedTensorType input,
                                                      int64_t spatialRank,
                                                      bool hasDilation) {
  if (failed(verifyPoolingRank(op, "self", input, spatialRank,
                               /*allowUnbatched=*/true)))
    return failure();
  FailureOr<SmallVector<int64_t>> kernel = expandParam(
      op, "kernel_size", getI64Array(op, "kernel_size"), spatialRank);
  if (failed(kernel))
    return failure();
  SmallVector<int64_t> strideAttr = getI64Array(op, "stride");
  // An empty stride is the kernel size.
  FailureOr<SmallVector<int64_t>> stride =
      strideAttr.empty() ? *kernel
                         : expandParam(op, "stride", strideAttr, spatialRank);
  FailureOr<SmallVector<int64_t>> padding =
      expandParam(op, "padding", getI64Array(op, "padding"), spatialRank);
  FailureOr<SmallVector<int64_t>> dilation =
      hasDilation ? expandParam(op, "dilation", getI64Array(op, "dilation"),
                                spatialRank)
                  : SmallVector<int64_t>(spatialRank, 1);
  if (failed(stride) || failed(padding) || failed(dilation))
    return failure();
  bool ceilMode = getBool(op, "ceil_mode", false);

  int64_t firstSpatial = input.getRank() - spatialRank;
  SmallVector<int64_t> shape(input.getShape().take_front(firstSpatial));
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t k = (*kernel)[i], s = (*stride)[i], p = (*padding)[i],
            d = (*dilation)[i];
    if (k <= 0 || s <= 0 || d <= 0 || p < 0)
      return op->emitOpError("window parameters must be positive (padding "
                             "not negative) in spatial dimension ")
             << i;
    if (p > ((k - 1) * d + 1) / 2)
      return op->emitOpError("`padding` ")
             << p << " exceeds half the window in spatial dimension " << i;
    std::optional<int64_t> out = getWindowOutputSize(
        input.getDimSize(firstSpatial + i), k, s, p, d, ceilMode);
    if (!out)
      return op->emitOpError("the window's output size overflows in spatial "
                             "dimension ")
             << i;
    if (!ShapedType::isDynamic(*out) && *out < 1)
      return op->emitOpError("the window does not fit: spatial dimension ")
             << i << " of " << input << " gives output size " << *out;
    shape.push_back(*out);
  }
  return shape;
}

/// Requires `grad_output` to have `shape`.
static LogicalResult verifyGradOutput(Operation *op, ArrayRef<int64_t> shape) {
  auto gradOutput = getTensorType(op->getOperand(0));
  if (shapesJoin(gradOutput.getShape(), shape))
    return success();
  return op->emitOpError("`grad_output` ")
         << gradOutput << " does not have the forward's output shape "
         << formatShape(shape);
}

/// grid_sampler_2d: input [N, C, H, W] sampled at grid [N, Ho, Wo, 2].
static LogicalResult verifyGridSampler(Operation *op) {
  auto input = getTensorType(op->getOperand(0));
  auto grid = getTensorType(op->getOperand(1));
  if (failed(verifyPoolingRank(op, "input", input, 2,
                               /*allowUnbatched=*/false)))
    return failure();
  if (grid.getRank() != 4 || grid.getDimSize(3) != 2 ||
      !joinSizes(grid.getDimSize(0), input.getDimSize(0)))
    return op->emitOpError("`grid` ")
           << grid << " must be [N, H_out, W_out, 2] for `input` " << input;
  if (grid.getElementType() != input.getElementType())
    return op->emitOpError("`grid` ")
           << grid << " must have the dtype of `input` " << input;
  return verifyResult(op, 0,
                      {input.getDimSize(0), input.getDimSize(1),
                       grid.getDimSize(1), grid.getDimSize(2)},
                      input.getElementType());
}

/// col2im: the blocks of self ([N, C * kh * kw, L]) summed into the result
/// ([N, C, H, W], whose spatial size is ATen's `output_size`).
static LogicalResult verifyCol2Im(Operation *op) {
  auto self = getTensorType(op->getOperand(0));
  auto result = getTensorType(op->getResult(0));
  if (self.getRank() != 2 && self.getRank() != 3)
    return op->emitOpError("`self` ") << self << " must have rank 2 or 3";
  SmallVector<int64_t, 2> params[4];
  StringRef names[] = {"kernel_size", "dilation", "padding", "stride"};
  for (auto [param, name] : llvm::zip(params, names)) {
    FailureOr<SmallVector<int64_t>> values =
        expandParam(op, name, getI64Array(op, name), 2);
    if (failed(values))
      return failure();
    param.assign(values->begin(), values->end());
  }
  // The result is self's leading dimensions, then [C, H, W].
  SmallVector<int64_t> expected(self.getShape().drop_back(2));
  expected.append({kAnySize, kAnySize, kAnySize});
  if (failed(verifyResult(op, 0, expected, self.getElementType())))
    return failure();
  for (int64_t i = 0; i < 2; ++i) {
    if (params[0][i] < 1 || params[1][i] < 1 || params[3][i] < 1 ||
        params[2][i] < 0)
      return op->emitOpError("window parameters must be positive (padding "
                             "not negative) in spatial dimension ")
             << i;
  }
  auto overflows = [&] {
    return op->emitOpError("the number of blocks or of their channels "
                           "overflows");
  };
  int64_t channels = result.getDimSize(result.getRank() - 3);
  std::optional<int64_t> blockSize =
      llvm::checkedMul(params[0][0], params[0][1]);
  int64_t blocks = 1;
  for (int64_t i = 0; i < 2; ++i) {
    int64_t out = result.getDimSize(result.getRank() - 2 + i);
    std::optional<int64_t> count = getWindowOutputSize(
        out, params[0][i], params[3][i], params[2][i], params[1][i]);
    if (!count)
      return overflows();
    if (ShapedType::isDynamic(*count) || ShapedType::isDynamic(blocks)) {
      blocks = ShapedType::kDynamic;
      continue;
    }
    std::optional<int64_t> product = llvm::checkedMul(blocks, *count);
    if (!product)
      return overflows();
    blocks = *product;
  }
  int64_t expectedChannels = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(channels)) {
    std::optional<int64_t> product =
        blockSize ? llvm::checkedMul(channels, *blockSize) : std::nullopt;
    if (!product)
      return overflows();
    expectedChannels = *product;
  }
  if (!joinSizes(self.getDimSize(self.getRank() - 2), expectedChannels) ||
      !joinSizes(self.getDimSize(self.getRank() - 1), blocks))
    return op->emitOpError("`self` ")
           << self << " must be [.., " << formatSize(expectedChannels) << ", "
           << formatSize(blocks) << "]: C * kh * kw channels and one column "
           << "per block of the result " << result;
  return success();
}

LogicalResult mlir::kiln::fx::verifyPoolingOp(Operation *op, PoolingKind kind,
                                              int64_t spatialRank,
                                              OperandGroups groups) {
  auto first = getTensorType(op->getOperand(0));
  MLIRContext *ctx = op->getContext();

  switch (kind) {
  case PoolingKind::MaxPoolWithIndices:
  case PoolingKind::AvgPool: {
    bool isMax = kind == PoolingKind::MaxPoolWithIndices;
    FailureOr<SmallVector<int64_t>> shape =
        getPooledShape(op, first, spatialRank, /*hasDilation=*/isMax);
    if (failed(shape))
      return failure();
    if (!isMax && getI64(op, "divisor_override", 1) == 0)
      return op->emitOpError("`divisor_override` must not be 0");
    if (failed(verifyResult(op, 0, *shape, first.getElementType())))
      return failure();
    return isMax ? verifyResult(op, 1, *shape, getIndexDtype(ctx)) : success();
  }
  case PoolingKind::MaxPoolWithIndicesBackward:
  case PoolingKind::AvgPoolBackward: {
    // Operands: (grad_output, self, ..., indices).
    bool isMax = kind == PoolingKind::MaxPoolWithIndicesBackward;
    auto self = getTensorType(op->getOperand(1));
    FailureOr<SmallVector<int64_t>> shape =
        getPooledShape(op, self, spatialRank, /*hasDilation=*/isMax);
    if (failed(shape) || failed(verifyGradOutput(op, *shape)))
      return failure();
    if (isMax) {
      auto indices = getTensorType(op->getOperand(2));
      if (!shapesJoin(indices.getShape(), *shape))
        return op->emitOpError("`indices` ")
               << indices << " does not have the forward's output shape "
               << formatShape(*shape);
    }
    return verifyResult(op, 0, self);
  }
  case PoolingKind::AdaptiveAvgPool:
  case PoolingKind::UpsampleNearest:
  case PoolingKind::UpsampleLinear:
  case PoolingKind::UpsampleBicubic: {
    bool isAdaptive = kind == PoolingKind::AdaptiveAvgPool;
    if (failed(verifyPoolingRank(op, isAdaptive ? "self" : "input", first,
                                 spatialRank,
                                 /*allowUnbatched=*/isAdaptive)))
      return failure();
    int64_t firstSpatial = first.getRank() - spatialRank;
    auto result = getTensorType(op->getResult(0));
    SmallVector<int64_t> shape(first.getShape().take_front(firstSpatial));
    // The output size comes from the result type, or from `scale_factors`.
    std::optional<SmallVector<double>> scales =
        getOptionalF64Array(op, "scale_factors");
    if (scales && static_cast<int64_t>(scales->size()) != spatialRank)
      return op->emitOpError("`scale_factors` has ")
             << scales->size() << " entries; expected " << spatialRank;
    for (int64_t i = 0; i < spatialRank; ++i) {
      int64_t in = first.getDimSize(firstSpatial + i);
      if (scales && !ShapedType::isDynamic(in))
        shape.push_back(static_cast<int64_t>(std::floor(in * (*scales)[i])));
      else
        shape.push_back(kAnySize);
    }
    if (failed(verifyResult(op, 0, shape, first.getElementType())))
      return failure();
    for (int64_t i = 0; i < spatialRank; ++i) {
      int64_t out = result.getDimSize(firstSpatial + i);
      if (!ShapedType::isDynamic(out) && out < 1)
        return op->emitOpError("result ")
               << result << " must have positive spatial sizes";
    }
    // Upsamplings name dynamic sizes that no scale factor gives.
    return verifySizeSymbols(op, result);
  }
  case PoolingKind::GridSampler:
    return verifyGridSampler(op);
  case PoolingKind::Col2Im:
    return verifyCol2Im(op);
  case PoolingKind::AdaptiveAvgPoolBackward: {
    // Operands: (grad_output, self).
    auto self = getTensorType(op->getOperand(1));
    if (failed(verifyPoolingRank(op, "self", self, spatialRank,
                                 /*allowUnbatched=*/true)))
      return failure();
    int64_t leading = self.getRank() - spatialRank;
    if (first.getRank() != self.getRank() ||
        !shapesJoin(first.getShape().take_front(leading),
                    self.getShape().take_front(leading)))
      return op->emitOpError("`grad_output` ")
             << first << " must have the rank and leading sizes of `self` "
             << self;
    return verifyResult(op, 0, self);
  }
  }
  llvm_unreachable("unknown pooling kind");
}
