//===- VectorizeNodeBody.cpp - Several elements of a node at once ---------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/VectorizeNodeBody.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

int64_t mlir::kiln::getVectorAccessAlignment(Value buffer, int64_t width,
                                             int64_t bufferAlignment) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bytes = width * type.getElementTypeBitWidth() / 8;
  if (type.getRank() == 0 || bytes <= 0)
    return 0;
  // A row starts at a multiple of the innermost size; with that a multiple
  // of `width`, the access offset is a multiple of the vector's size.
  int64_t innermost = type.getShape().back();
  if (ShapedType::isDynamic(innermost) || innermost % width != 0)
    return 0;
  int64_t alignment = std::gcd(bytes, bufferAlignment);
  return alignment > type.getElementTypeBitWidth() / 8 ? alignment : 0;
}

void mlir::kiln::emitVectorStore(OpBuilder &b, Location loc, Value vector,
                                 Value buffer, ValueRange indices,
                                 int64_t bufferAlignment) {
  auto store = vector::StoreOp::create(b, loc, vector, buffer, indices);
  int64_t width = cast<VectorType>(vector.getType()).getNumElements();
  if (int64_t alignment =
          getVectorAccessAlignment(buffer, width, bufferAlignment))
    store.setAlignment(alignment);
}

bool mlir::kiln::canVectorizeNodeBody(loop::PointwiseOp node) {
  return canVectorizeBody(node.getBody().front());
}

bool mlir::kiln::canVectorizeBody(Block &body) {
  // In memory, LLVM packs vectors of i1 into bits where tensors keep a byte
  // per bool: such buffers are read and written one element at a time.
  // Complex numbers are structs in LLVM: one at a time too.
  auto isByteSized = [](Type type) {
    return type.isIntOrFloat() && type.getIntOrFloatBitWidth() % 8 == 0;
  };
  if (body.getNumArguments() == 0 ||
      !isByteSized(
          cast<loop::YieldOp>(body.getTerminator()).getValue().getType()))
    return false;
  for (Operation &op : body.without_terminator()) {
    if (auto load = dyn_cast<loop::LoadOp>(op)) {
      if (!isByteSized(load.getType()))
        return false;
      continue;
    }
    // Asserts (on loaded indices) check lane by lane.
    if (!isa<arith::ConstantOp, cf::AssertOp>(op) &&
        !(op.hasTrait<OpTrait::Elementwise>() && op.getNumRegions() == 0))
      return false;
  }
  return true;
}

namespace {
/// Emits one node body for `width` elements. Values are either uniform (the
/// same scalar for every element) or vectors.
class BodyVectorizer {
public:
  BodyVectorizer(OpBuilder &b, Block &body, const IRMapping &mapping,
                 ValueRange ivs, int64_t width, int64_t bufferAlignment,
                 VectorLoadCache *cache, bool loadsOnly = false,
                 function_ref<bool(loop::LoadOp)> filter = nullptr,
                 std::optional<unsigned> columnIndex = std::nullopt,
                 bool branchOnClamps = false)
      : b(b), body(body), mapping(mapping), ivs(ivs.begin(), ivs.end()),
        width(width), bufferAlignment(bufferAlignment), cache(cache),
        loadsOnly(loadsOnly), filter(filter),
        columnIndex(columnIndex.value_or(ivs.size() - 1)),
        branchOnClamps(branchOnClamps) {}

  FailureOr<Value> run() {
    if (!canVectorizeBody(body))
      return failure();
    BlockArgument column = body.getArgument(columnIndex);
    for (auto [arg, iv] : llvm::zip(body.getArguments(), ivs)) {
      if (arg == column)
        continue;
      if (isa<VectorType>(iv.getType()))
        vectors.map(arg, iv);
      else
        uniform.map(arg, iv);
    }
    // Loads-only mode emits contiguous loads, which take the step's first
    // column as it is: the vector of columns is never read.
    if (loadsOnly) {
      vectors.map(column, firstColumn());
      columnValue = column;
      for (auto load : body.getOps<loop::LoadOp>())
        if (!filter || filter(load))
          emitLoad(load, column);
      return Value();
    }
    // The column differs by element: [c, c + 1, ...]. Index arithmetic on it
    // in the body then computes per-element indices, which loads gather.
    Location loc = body.getParentOp()->getLoc();
    auto indexVector = VectorType::get({width}, b.getIndexType());
    // [0, 1, ..., width - 1] as a constant: every target lowers that (the
    // GPU's NVVM conversion has no rule for vector.step).
    SmallVector<APInt> steps;
    for (int64_t k = 0; k < width; ++k)
      steps.push_back(APInt(64, k));
    Value columns = arith::AddIOp::create(
        b, loc, vector::BroadcastOp::create(b, loc, indexVector, firstColumn()),
        arith::ConstantOp::create(b, loc,
                                  DenseElementsAttr::get(indexVector, steps)));
    vectors.map(column, columns);
    columnValue = column;
    for (Operation &op : body.without_terminator()) {
      if (auto load = dyn_cast<loop::LoadOp>(op))
        emitLoad(load, column);
      else
        emitElementwise(op);
    }
    return asVector(cast<loop::YieldOp>(body.getTerminator()).getValue());
  }

private:
  Type vectorOf(Type scalar) { return VectorType::get({width}, scalar); }

  /// The column of the step's first element.
  Value firstColumn() const { return ivs[columnIndex]; }

  /// The step's first column plus `offset` (a scalar, or null for none).
  Value columnPlus(Value offset) {
    if (!offset)
      return firstColumn();
    return arith::AddIOp::create(b, offset.getLoc(), firstColumn(), offset);
  }

  /// `value` as a vector: vectors as they are, uniform values broadcast.
  Value asVector(Value value) {
    if (Value vector = vectors.lookupOrNull(value))
      return vector;
    Value scalar = getUniform(value);
    return vector::BroadcastOp::create(b, scalar.getLoc(),
                                       vectorOf(scalar.getType()), scalar);
  }

  /// The scalar of a uniform value: from the body, or from outside the node.
  Value getUniform(Value value) {
    if (Value scalar = uniform.lookupOrNull(value))
      return scalar;
    return mapping.lookupOrDefault(value);
  }

  bool isUniform(Value value) { return !vectors.contains(value); }

  /// Whether `index` is the same for every element (and not the column,
  /// which loads-only mode keeps as a scalar).
  bool isUniformIndex(Value index) {
    return isUniform(index) && index != body.getArgument(columnIndex);
  }

  /// The scalar at element `k` of `value`.
  Value element(Value value, int64_t k) {
    if (isUniform(value))
      return getUniform(value);
    return vector::ExtractOp::create(b, value.getLoc(), vectors.lookup(value),
                                     ArrayRef<int64_t>{k});
  }

  void emitLoad(loop::LoadOp load, BlockArgument column) {
    Location loc = load.getLoc();
    // A value the caller staged for this load (a vector of its elements, or
    // one scalar for all) replaces the read.
    if (Value staged = mapping.lookupOrNull(load.getResult())) {
      if (isa<VectorType>(staged.getType()))
        vectors.map(load.getResult(), staged);
      else
        uniform.map(load.getResult(), staged);
      return;
    }
    Value buffer = mapping.lookup(load.getSource());
    // A tensor held as a vector (an earlier node of a kernel that computes
    // element by element) has this step's elements.
    if (isa<VectorType>(buffer.getType())) {
      vectors.map(load.getResult(), buffer);
      return;
    }
    // A tensor held as a scalar (a reduction fused into this kernel) has one
    // value per row: the same for every element.
    if (!isa<MemRefType>(buffer.getType())) {
      uniform.map(load.getResult(), buffer);
      return;
    }
    ValueRange indices = load.getIndices();
    bool contiguous = !indices.empty() && isShiftedColumn(indices.back()) &&
                      llvm::all_of(indices.drop_back(), [&](Value index) {
                        return isUniformIndex(index);
                      });
    bool independent = llvm::all_of(
        indices, [&](Value index) { return isUniformIndex(index); });
    SmallVector<Value> scalarIndices;
    // Loads-only mode emits what the full emission will look up in the
    // cache: contiguous loads at indices that are the same values then
    // (the body's arguments, values from outside, the unshifted column).
    if (loadsOnly && (independent || !contiguous || indices.back() != column ||
                      !llvm::all_of(indices.drop_back(), [&](Value index) {
                        return isa<BlockArgument>(index) ||
                               index.getParentBlock() != &body;
                      })))
      return;
    if (independent) {
      for (Value index : indices)
        scalarIndices.push_back(getUniform(index));
      uniform.map(load.getResult(),
                  memref::LoadOp::create(b, loc, buffer, scalarIndices));
      return;
    }
    Type vectorType = vectorOf(load.getType());
    if (contiguous) {
      for (Value index : indices.drop_back())
        scalarIndices.push_back(getUniform(index));
      Value offset = shifted.lookup(indices.back());
      scalarIndices.push_back(columnPlus(offset));
      if (cache) {
        if (Value cached = cache->lookup(buffer, scalarIndices, width)) {
          vectors.map(load.getResult(), cached);
          return;
        }
      }
      auto vectorLoad =
          vector::LoadOp::create(b, loc, vectorType, buffer, scalarIndices);
      // A shifted start may break the vector's alignment.
      if (int64_t alignment =
              getVectorAccessAlignment(buffer, width, bufferAlignment);
          alignment && !offset)
        vectorLoad.setAlignment(alignment);
      vectors.map(load.getResult(), vectorLoad.getResult());
      if (cache)
        cache->insert(buffer, scalarIndices, width, vectorLoad.getResult());
      return;
    }
    // A column clamped into a range reads whole vectors where the step's
    // columns are all inside it, and gathers at the range's ends.
    if (auto clamp = clamped.find(indices.back());
        branchOnClamps && clamp != clamped.end() &&
        llvm::all_of(indices.drop_back(),
                     [&](Value index) { return isUniformIndex(index); })) {
      const ClampedColumn &range = clamp->second;
      Value start = columnPlus(range.offset);
      Value end = arith::AddIOp::create(
          b, loc, start, arith::ConstantIndexOp::create(b, loc, width - 1));
      Value inside = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, start,
                                range.low),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end,
                                range.high));
      for (Value index : indices.drop_back())
        scalarIndices.push_back(getUniform(index));
      scalarIndices.push_back(start);
      auto branch = scf::IfOp::create(
          b, loc, inside,
          [&](OpBuilder &then, Location loc) {
            scf::YieldOp::create(then, loc,
                                 vector::LoadOp::create(then, loc, vectorType,
                                                        buffer, scalarIndices)
                                     .getResult());
          },
          [&](OpBuilder &otherwise, Location loc) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(otherwise.getInsertionBlock(),
                                otherwise.getInsertionPoint());
            scf::YieldOp::create(b, loc, emitGather(load, buffer, column));
          });
      vectors.map(load.getResult(), branch.getResult(0));
      return;
    }
    vectors.map(load.getResult(), emitGather(load, buffer, column));
  }

  /// `load`'s elements read one at a time, as a vector.
  Value emitGather(loop::LoadOp load, Value buffer, BlockArgument column) {
    Location loc = load.getLoc();
    SmallVector<Value> elements;
    for (int64_t k = 0; k < width; ++k) {
      Value columnK = firstColumn();
      if (k > 0)
        columnK = arith::AddIOp::create(
            b, loc, firstColumn(), arith::ConstantIndexOp::create(b, loc, k));
      SmallVector<Value> indicesK;
      for (Value index : load.getIndices())
        indicesK.push_back(index == column ? columnK : element(index, k));
      elements.push_back(memref::LoadOp::create(b, loc, buffer, indicesK));
    }
    return vector::FromElementsOp::create(b, loc, vectorOf(load.getType()),
                                          elements);
  }

  /// Whether `value` is the column plus a uniform offset: its elements are
  /// consecutive, so a load at it is contiguous (views shift columns).
  bool isShiftedColumn(Value value) {
    return value == columnValue || shifted.contains(value);
  }

  /// Records `op`'s result as a shifted column when it adds a uniform value
  /// to one or subtracts one from it, and as a clamped column when it
  /// bounds a shifted column by uniform values (arith.maxsi, then
  /// arith.minsi, as clamps to [0, size) are built).
  void recordShiftedColumn(Operation &op) {
    if (auto sub = dyn_cast<arith::SubIOp>(op)) {
      if (isShiftedColumn(sub.getLhs()) && isUniform(sub.getRhs())) {
        Value previous = shifted.lookup(sub.getLhs());
        if (!previous)
          previous = arith::ConstantIndexOp::create(b, op.getLoc(), 0);
        shifted[sub.getResult()] = arith::SubIOp::create(
            b, op.getLoc(), previous, getUniform(sub.getRhs()));
      }
      return;
    }
    if (auto max = dyn_cast<arith::MaxSIOp>(op)) {
      if (isShiftedColumn(max.getLhs()) && isUniform(max.getRhs()))
        lowClamped[max.getResult()] = {shifted.lookup(max.getLhs()),
                                       getUniform(max.getRhs()), Value()};
      return;
    }
    if (auto min = dyn_cast<arith::MinSIOp>(op)) {
      auto low = lowClamped.find(min.getLhs());
      if (low != lowClamped.end() && isUniform(min.getRhs())) {
        ClampedColumn range = low->second;
        range.high = getUniform(min.getRhs());
        clamped[min.getResult()] = range;
      }
      return;
    }
    auto add = dyn_cast<arith::AddIOp>(op);
    if (!add)
      return;
    for (auto [columnSide, other] : {std::pair(add.getLhs(), add.getRhs()),
                                     std::pair(add.getRhs(), add.getLhs())}) {
      if (!isShiftedColumn(columnSide) || !isUniform(other))
        continue;
      Value offset = getUniform(other);
      if (Value previous = shifted.lookup(columnSide))
        offset = arith::AddIOp::create(b, op.getLoc(), previous, offset);
      shifted[add.getResult()] = offset;
      return;
    }
  }

  void emitElementwise(Operation &op) {
    recordShiftedColumn(op);
    bool allUniform =
        llvm::all_of(op.getOperands(), [&](Value v) { return isUniform(v); });
    if (allUniform) {
      IRMapping scalars;
      for (Value operand : op.getOperands())
        scalars.map(operand, getUniform(operand));
      Operation *clone = b.clone(op, scalars);
      uniform.map(op.getResults(), clone->getResults());
      return;
    }
    if (isa<arith::RemFOp, cf::AssertOp>(op)) {
      emitPerLane(op);
      return;
    }
    SmallVector<Value> operands = llvm::map_to_vector(
        op.getOperands(), [&](Value v) { return asVector(v); });
    SmallVector<Type> resultTypes = llvm::map_to_vector(
        op.getResultTypes(), [&](Type t) { return vectorOf(t); });
    OperationState state(op.getLoc(), op.getName(), operands, resultTypes,
                         op.getAttrs());
    Operation *vectorOp = b.create(state);
    vectors.map(op.getResults(), vectorOp->getResults());
  }

  /// `op` once per lane, on scalars: for ops that targets lower only on
  /// scalars (the GPU's NVVM conversion calls libdevice's fmodf for a
  /// scalar remf and has no rule for a vector one) and asserts.
  void emitPerLane(Operation &op) {
    Location loc = op.getLoc();
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane) {
      IRMapping scalars;
      for (Value operand : op.getOperands()) {
        scalars.map(operand, isUniform(operand)
                                 ? getUniform(operand)
                                 : Value(vector::ExtractOp::create(
                                       b, loc, asVector(operand), lane)));
      }
      Operation *clone = b.clone(op, scalars);
      if (clone->getNumResults() == 1)
        lanes.push_back(clone->getResult(0));
    }
    if (lanes.empty())
      return;
    vectors.map(op.getResult(0),
                vector::FromElementsOp::create(
                    b, loc, vectorOf(op.getResult(0).getType()), lanes));
  }

  OpBuilder &b;
  Block &body;
  const IRMapping &mapping;
  SmallVector<Value> ivs;
  int64_t width;
  int64_t bufferAlignment;
  VectorLoadCache *cache;
  /// Whether to emit only the contiguous loads (into `cache`).
  bool loadsOnly;
  /// Which loads loads-only mode emits (all if null).
  function_ref<bool(loop::LoadOp)> filter;
  /// The body argument that varies by element.
  unsigned columnIndex;
  /// Whether loads at clamped columns branch between a vector load and a
  /// gather.
  bool branchOnClamps;
  /// Body values that are the same scalar for every element.
  IRMapping uniform;
  /// Body values that differ by element, as vectors.
  IRMapping vectors;
  /// The body's column argument, and values that are it plus a uniform
  /// offset (the offset's scalar).
  Value columnValue;
  DenseMap<Value, Value> shifted;
  /// A shifted column (its offset, null for none) clamped to [low, high].
  struct ClampedColumn {
    Value offset, low, high;
  };
  /// Values that are a shifted column bounded below (high unset), and
  /// bounded on both sides.
  DenseMap<Value, ClampedColumn> lowClamped, clamped;
};
} // namespace

FailureOr<Value>
mlir::kiln::emitVectorNodeElements(OpBuilder &b, loop::PointwiseOp node,
                                   const IRMapping &mapping, ValueRange ivs,
                                   int64_t width, int64_t bufferAlignment) {
  return emitVectorBodyElements(b, node.getBody().front(), mapping, ivs, width,
                                bufferAlignment);
}

FailureOr<Value> mlir::kiln::emitVectorBodyElements(
    OpBuilder &b, Block &body, const IRMapping &mapping, ValueRange ivs,
    int64_t width, int64_t bufferAlignment, VectorLoadCache *cache,
    std::optional<unsigned> columnIndex, bool branchOnClamps) {
  return BodyVectorizer(b, body, mapping, ivs, width, bufferAlignment, cache,
                        /*loadsOnly=*/false, /*filter=*/nullptr, columnIndex,
                        branchOnClamps)
      .run();
}

void mlir::kiln::emitVectorBodyLoads(OpBuilder &b, Block &body,
                                     const IRMapping &mapping, ValueRange ivs,
                                     int64_t width, int64_t bufferAlignment,
                                     VectorLoadCache &cache,
                                     function_ref<bool(loop::LoadOp)> filter) {
  (void)BodyVectorizer(b, body, mapping, ivs, width, bufferAlignment, &cache,
                       /*loadsOnly=*/true, filter)
      .run();
}

VectorLoadCache::Key VectorLoadCache::getKey(Value buffer, ValueRange indices,
                                             int64_t width) {
  Key key = {buffer.getAsOpaquePointer(),
             reinterpret_cast<const void *>(static_cast<intptr_t>(width))};
  for (Value index : indices)
    key.push_back(index.getAsOpaquePointer());
  return key;
}

Value VectorLoadCache::lookup(Value buffer, ValueRange indices,
                              int64_t width) const {
  auto it = loads.find(getKey(buffer, indices, width));
  return it == loads.end() ? Value() : it->second;
}

void VectorLoadCache::insert(Value buffer, ValueRange indices, int64_t width,
                             Value loaded) {
  loads[getKey(buffer, indices, width)] = loaded;
}
