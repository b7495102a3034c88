//===- LoopToSCF.cpp - Bufferizing graphs into SCF loops ------------------===//
//
// Part of Kiln. The CPU's way to bufferize a graph: each loop node becomes an
// scf.parallel (or scf.for) nest, temporaries are memref.alloc'd.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"
#include "kiln/Conversion/Passes.h"

#include "kiln/Conversion/Bufferization/GraphBufferization.h"
#include "kiln/Conversion/Bufferization/VectorizeNodeBody.h"
#include "kiln/Dialect/FX/IR/FXOps.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include <algorithm>

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVERTLOOPTOSCFPASS
#include "kiln/Conversion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// Buffers are 16-byte aligned (Kiln's ABI).
static constexpr int64_t kCPUBufferAlignment = 16;

/// Elements of `node` per vector: `vectorBytes` worth of its result's
/// elements, or 1 where its body cannot be vectorized.
static int64_t getVectorWidth(loop::PointwiseOp node, int64_t vectorBytes) {
  if (vectorBytes <= 0 || !canVectorizeNodeBody(node))
    return 1;
  int64_t elementBytes = node.getResultType().getElementTypeBitWidth() / 8;
  return std::max<int64_t>(vectorBytes / elementBytes, 1);
}

/// Emits elements [from, to) of the row at `outer` one at a time.
static void emitScalarColumns(OpBuilder &b, Location loc,
                              loop::PointwiseOp node, Value dest,
                              const IRMapping &mapping, ValueRange outer,
                              Value from, Value to) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(
      b, loc, from, to, one, ValueRange{},
      [&](OpBuilder &nested, Location, Value column, ValueRange) {
        SmallVector<Value> ivs(outer);
        ivs.push_back(column);
        emitNodeBody(nested, node, dest, mapping, ivs);
        scf::YieldOp::create(nested, loc);
      });
}

/// Emits `width` elements of the row at `outer` from `column` on, as vectors.
static void emitVectorColumns(OpBuilder &b, Location loc,
                              loop::PointwiseOp node, Value dest,
                              const IRMapping &mapping, ValueRange outer,
                              Value column, int64_t width) {
  SmallVector<Value> ivs(outer);
  ivs.push_back(column);
  FailureOr<Value> elements =
      emitVectorNodeElements(b, node, mapping, ivs, width, kCPUBufferAlignment);
  assert(succeeded(elements) && "checked by canVectorizeNodeBody");
  auto store = vector::StoreOp::create(b, loc, *elements, dest, ivs);
  if (int64_t alignment =
          getVectorAccessAlignment(dest, width, kCPUBufferAlignment))
    store.setAlignment(alignment);
}

/// Emits the loop nest of `node` storing into `dest`. With vectors, the
/// innermost dimension runs `width` elements at a time while whole vectors
/// fit, then one at a time; the outer dimensions (or, for one dimension, the
/// vector steps) are the parallel ones.
static void emitSCFLoops(OpBuilder &b, loop::PointwiseOp node, Value dest,
                         IRMapping &mapping, const LoopToSCFOptions &options) {
  Location loc = node.getLoc();
  SmallVector<Value> upperBounds = getNodeSizes(b, loc, node, mapping);
  if (upperBounds.empty()) {
    emitNodeBody(b, node, dest, mapping, {});
    return;
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t width = getVectorWidth(node, options.vectorBytes);
  if (width == 1) {
    SmallVector<Value> lowerBounds(upperBounds.size(), zero);
    SmallVector<Value> steps(upperBounds.size(), one);
    auto body = [&](OpBuilder &nested, Location, ValueRange ivs) {
      emitNodeBody(nested, node, dest, mapping, ivs);
    };
    if (options.parallel)
      scf::ParallelOp::create(b, loc, lowerBounds, upperBounds, steps, body);
    else
      scf::buildLoopNest(b, loc, lowerBounds, upperBounds, steps, body);
    return;
  }

  Value columns = upperBounds.back();
  Value widthValue = arith::ConstantIndexOp::create(b, loc, width);
  Value vectorEnd = arith::SubIOp::create(
      b, loc, columns, arith::RemUIOp::create(b, loc, columns, widthValue));
  ArrayRef<Value> outerBounds = ArrayRef<Value>(upperBounds).drop_back();
  if (outerBounds.empty()) {
    // One dimension: vector steps in parallel, then the tail.
    auto vectorStep = [&](OpBuilder &nested, Location, ValueRange ivs) {
      emitVectorColumns(nested, loc, node, dest, mapping, {}, ivs.front(),
                        width);
    };
    if (options.parallel)
      scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{vectorEnd},
                              ValueRange{widthValue}, vectorStep);
    else
      scf::buildLoopNest(b, loc, ValueRange{zero}, ValueRange{vectorEnd},
                         ValueRange{widthValue}, vectorStep);
    emitScalarColumns(b, loc, node, dest, mapping, {}, vectorEnd, columns);
    return;
  }
  auto row = [&](OpBuilder &nested, Location, ValueRange outer) {
    scf::ForOp::create(
        nested, loc, zero, vectorEnd, widthValue, ValueRange{},
        [&](OpBuilder &inner, Location, Value column, ValueRange) {
          emitVectorColumns(inner, loc, node, dest, mapping, outer, column,
                            width);
          scf::YieldOp::create(inner, loc);
        });
    emitScalarColumns(nested, loc, node, dest, mapping, outer, vectorEnd,
                      columns);
  };
  SmallVector<Value> lowerBounds(outerBounds.size(), zero);
  SmallVector<Value> steps(outerBounds.size(), one);
  if (options.parallel)
    scf::ParallelOp::create(b, loc, lowerBounds, outerBounds, steps, row);
  else
    scf::buildLoopNest(b, loc, lowerBounds, outerBounds, steps, row);
}

/// The value `combiner` starts from for accumulators of `type` (signedness
/// from the result's `dtype`).
static Value getCombinerIdentity(OpBuilder &b, Location loc, StringRef combiner,
                                 Type type, Type dtype) {
  bool isUnsigned = isa<IntegerType>(dtype) &&
                    (dtype.isUnsignedInteger() || dtype.isInteger(1));
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    llvm::APFloat value(semantics);
    if (combiner == "sum")
      value = llvm::APFloat::getZero(semantics);
    else if (combiner == "prod")
      value = llvm::APFloat(semantics, 1);
    else
      value = llvm::APFloat::getInf(semantics, /*Negative=*/combiner == "max");
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  }
  unsigned width = type.getIntOrFloatBitWidth();
  llvm::APInt value(width, 0);
  if (combiner == "prod")
    value = llvm::APInt(width, 1);
  else if (combiner == "max")
    value = isUnsigned ? llvm::APInt::getMinValue(width)
                       : llvm::APInt::getSignedMinValue(width);
  else if (combiner == "min")
    value = isUnsigned ? llvm::APInt::getMaxValue(width)
                       : llvm::APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

/// `accumulator <combiner> value`; max and min propagate NaN.
static Value combine(OpBuilder &b, Location loc, StringRef combiner,
                     Value accumulator, Value value, Type dtype) {
  bool isFloat = isa<FloatType>(value.getType());
  bool isUnsigned = isa<IntegerType>(dtype) &&
                    (dtype.isUnsignedInteger() || dtype.isInteger(1));
  if (combiner == "sum")
    return isFloat
               ? arith::AddFOp::create(b, loc, accumulator, value)
               : arith::AddIOp::create(b, loc, accumulator, value).getResult();
  if (combiner == "prod")
    return isFloat
               ? arith::MulFOp::create(b, loc, accumulator, value)
               : arith::MulIOp::create(b, loc, accumulator, value).getResult();
  if (combiner == "max") {
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, accumulator, value);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, accumulator, value);
    return arith::MaxSIOp::create(b, loc, accumulator, value);
  }
  if (isFloat)
    return arith::MinimumFOp::create(b, loc, accumulator, value);
  if (isUnsigned)
    return arith::MinUIOp::create(b, loc, accumulator, value);
  return arith::MinSIOp::create(b, loc, accumulator, value);
}

/// Emits a reduction node: its result dimensions in parallel (or serially),
/// and for each element a serial loop nest over the reduction space that
/// accumulates, rounding once at the end.
static void emitReduceLoops(OpBuilder &b, loop::ReduceOp node, Value dest,
                            IRMapping &mapping, bool parallel) {
  Location loc = node.getLoc();
  SmallVector<Value> resultSizes = getNodeSizes(b, loc, node, mapping);
  SmallVector<Value> reductionSizes;
  unsigned nextDynamic = 0;
  for (int64_t size : node.getReductionShape()) {
    if (ShapedType::isDynamic(size))
      reductionSizes.push_back(
          mapping.lookup(node.getReductionDynamicSizes()[nextDynamic++]));
    else
      reductionSizes.push_back(arith::ConstantIndexOp::create(b, loc, size));
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Type dtype = node.getResultType().getElementType();
  Type accumulatorType = node.getYield().getValue().getType();
  StringRef combiner = node.getCombiner();

  auto element = [&](OpBuilder &nested, Location, ValueRange outer) {
    Value init =
        getCombinerIdentity(nested, loc, combiner, accumulatorType, dtype);
    SmallVector<Value> lowerBounds(reductionSizes.size(), zero);
    SmallVector<Value> steps(reductionSizes.size(), one);
    scf::LoopNest nest = scf::buildLoopNest(
        nested, loc, lowerBounds, reductionSizes, steps, ValueRange{init},
        [&](OpBuilder &inner, Location, ValueRange inners,
            ValueRange accumulators) -> scf::ValueVector {
          SmallVector<Value> ivs(outer);
          llvm::append_range(ivs, inners);
          Value value =
              emitBodyValue(inner, node.getBody().front(), mapping, ivs);
          return {combine(inner, loc, combiner, accumulators.front(), value,
                          dtype)};
        });
    Value total = nest.results.front();
    Type scalarType = loop::getScalarType(dtype);
    if (total.getType() != scalarType)
      total = arith::TruncFOp::create(nested, loc, scalarType, total);
    memref::StoreOp::create(nested, loc, total, dest, outer);
  };
  if (resultSizes.empty()) {
    element(b, loc, {});
    return;
  }
  SmallVector<Value> lowerBounds(resultSizes.size(), zero);
  SmallVector<Value> steps(resultSizes.size(), one);
  if (parallel)
    scf::ParallelOp::create(b, loc, lowerBounds, resultSizes, steps, element);
  else
    scf::buildLoopNest(b, loc, lowerBounds, resultSizes, steps, element);
}

GraphBufferizationTarget
mlir::kiln::getSCFBufferizationTarget(const LoopToSCFOptions &options) {
  GraphBufferizationTarget target;
  target.emitNode = [options](OpBuilder &b, loop::PointwiseOp node, Value dest,
                              IRMapping &mapping, ValueRange) {
    emitSCFLoops(b, node, dest, mapping, options);
  };
  target.emitReduce = [options](OpBuilder &b, loop::ReduceOp node, Value dest,
                                IRMapping &mapping, ValueRange) {
    emitReduceLoops(b, node, dest, mapping, options.parallel);
  };
  target.allocate = [](OpBuilder &b, Location loc, MemRefType type,
                       ValueRange dynamicSizes, ValueRange) -> Value {
    return memref::AllocOp::create(b, loc, type, dynamicSizes);
  };
  target.deallocate = [](OpBuilder &b, Location loc, Value buffer, ValueRange) {
    memref::DeallocOp::create(b, loc, buffer);
  };
  target.copy = [](OpBuilder &b, Location loc, Value source, Value dest,
                   ValueRange) {
    memref::CopyOp::create(b, loc, source, dest);
  };
  return target;
}

namespace {
struct ConvertLoopToSCFPass
    : kiln::impl::ConvertLoopToSCFPassBase<ConvertLoopToSCFPass> {
  using Base::Base;

  void runOnOperation() override {
    LoopToSCFOptions options;
    options.parallel = parallel;
    options.vectorBytes = vectorBytes;
    GraphBufferizationTarget target = getSCFBufferizationTarget(options);
    if (failed(bufferizeGraphs(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
