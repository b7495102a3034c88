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

GraphBufferizationTarget
mlir::kiln::getSCFBufferizationTarget(const LoopToSCFOptions &options) {
  GraphBufferizationTarget target;
  target.emitNode = [options](OpBuilder &b, loop::PointwiseOp node, Value dest,
                              IRMapping &mapping, ValueRange) {
    emitSCFLoops(b, node, dest, mapping, options);
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
