//===- ElementKernels.cpp - Kernels that compute element by element -------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/ElementKernels.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Codegen/VectorizeNodeBody.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "kiln/Dialect/Loop/Utils/Combiners.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::kiln;

/// The longest reduction a kernel that computes element by element
/// accumulates `width` elements' states of at once (a window's, say);
/// longer ones vectorize along their own innermost dimension instead.
constexpr int64_t kMaxElementReduction = 256;

/// Whether every load of `body` whose indices depend on its argument
/// `column` has an index computed from it last, so that a vector of
/// consecutive columns reads nearby elements: a load whose last index is a
/// reduction's (a row's elements, summed) would gather from as many rows.
static bool readsAlongColumn(Block &body, unsigned column) {
  DenseSet<Value> dependent = {body.getArgument(column)};
  auto isDependent = [&](Value value) { return dependent.contains(value); };
  for (Operation &op : body.without_terminator()) {
    if (!llvm::any_of(op.getOperands(), isDependent))
      continue;
    if (auto load = dyn_cast<loop::LoadOp>(op);
        load && !isDependent(load.getIndices().back()))
      return false;
    dependent.insert(op.result_begin(), op.result_end());
  }
  return true;
}

int64_t mlir::kiln::getElementKernelWidth(ArrayRef<Operation *> nodes,
                                          int64_t rows, int64_t vectorBytes) {
  if (vectorBytes <= 0 || rows == 0)
    return 1;
  int64_t widestBits = 0;
  for (Operation *node : nodes) {
    Operation &op = *node;
    auto type = cast<RankedTensorType>(op.getResult(0).getType());
    if (type.getRank() != rows || op.getNumRegions() != 1 ||
        !canVectorizeBody(op.getRegion(0).front()) ||
        !readsAlongColumn(op.getRegion(0).front(), rows - 1))
      return 1;
    widestBits = std::max<int64_t>(
        widestBits, loop::getElementBitWidth(type.getElementType()));
    if (auto reduce = dyn_cast<loop::ReduceOp>(op)) {
      ArrayRef<int64_t> shape = reduce.getReductionShape();
      if (hasReductionState(reduce.getKind()) ||
          ShapedType::isDynamicShape(shape) ||
          ShapedType::getNumElements(shape) > kMaxElementReduction)
        return 1;
      widestBits = std::max<int64_t>(
          widestBits,
          reduce.getYield().getValue().getType().getIntOrFloatBitWidth());
    } else if (!isa<loop::PointwiseOp>(op)) {
      return 1;
    }
  }
  return std::max<int64_t>(vectorBytes * 8 / widestBits, 1);
}

void mlir::kiln::emitElementKernelStep(
    OpBuilder &b, ArrayRef<Operation *> nodes, int64_t rows, IRMapping &mapping,
    ValueRange ivs, int64_t width, int64_t bufferAlignment,
    function_ref<void(Value result, Value elements)> store) {
  auto columnIndex = static_cast<unsigned>(rows - 1);
  for (Operation *node : nodes) {
    Operation &op = *node;
    Location loc = op.getLoc();
    Value result = op.getResult(0);
    Block &body = op.getRegion(0).front();
    Value value;
    if (auto reduce = dyn_cast<loop::ReduceOp>(op)) {
      loop::CombiningKind combiner = reduce.getKind();
      Type dtype = reduce.getResultType().getElementType();
      auto accumulatorType =
          VectorType::get({width}, reduce.getYield().getValue().getType());
      SmallVector<Value> sizes = getReductionSizes(b, loc, reduce, mapping);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      scf::LoopNest nest = scf::buildLoopNest(
          b, loc, SmallVector<Value>(sizes.size(), zero), sizes,
          SmallVector<Value>(sizes.size(), one),
          ValueRange{
              getCombinerIdentity(b, loc, combiner, accumulatorType, dtype)},
          [&](OpBuilder &nested, Location, ValueRange reductionIvs,
              ValueRange accumulator) -> scf::ValueVector {
            SmallVector<Value> bodyIvs(ivs);
            llvm::append_range(bodyIvs, reductionIvs);
            FailureOr<Value> elements = emitVectorBodyElements(
                nested, body, mapping, bodyIvs, width, bufferAlignment,
                /*cache=*/nullptr, columnIndex, /*branchOnClamps=*/true);
            assert(succeeded(elements) && "checked by getElementKernelWidth");
            return {emitCombine(nested, loc, combiner, accumulator.front(),
                                *elements, dtype)};
          });
      value = emitReductionResult(b, loc, combiner, nest.results.front());
      auto resultType = VectorType::get({width}, loop::getScalarType(dtype));
      if (value.getType() != resultType)
        value = arith::TruncFOp::create(b, loc, resultType, value);
    } else {
      FailureOr<Value> elements = emitVectorBodyElements(
          b, body, mapping, ivs, width, bufferAlignment, /*cache=*/nullptr,
          /*columnIndex=*/std::nullopt, /*branchOnClamps=*/true);
      assert(succeeded(elements) && "checked by getElementKernelWidth");
      value = *elements;
    }
    store(result, value);
    mapping.map(result, value);
  }
}
