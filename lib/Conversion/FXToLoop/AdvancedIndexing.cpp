//===- AdvancedIndexing.cpp - ATen's indexing by index tensors ------------===//
//
// Part of Kiln. The index space of `self[i, j]` (and of `self[:, i, :, j]`)
// with integer index tensors, and the element of `self` at each of its
// points: what fx.index reads and fx.index_put writes.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::fxtoloop;

FailureOr<AdvancedIndexing>
AdvancedIndexing::get(Value self, ValueRange indexTensors,
                      std::optional<ArrayRef<int64_t>> positions,
                      std::optional<ArrayRef<int64_t>> spaceShape) {
  AdvancedIndexing indexing;
  indexing.self = self;
  indexing.indexTensors.assign(indexTensors.begin(), indexTensors.end());
  if (indexTensors.empty())
    return failure();
  for (Value index : indexTensors) {
    auto type = cast<RankedTensorType>(index.getType());
    auto element = dyn_cast<IntegerType>(type.getElementType());
    if (!element || !element.isSigned())
      return failure();
    indexing.broadcastRank = std::max(indexing.broadcastRank, type.getRank());
  }
  if (positions)
    indexing.positions.assign(positions->begin(), positions->end());
  else
    indexing.positions = llvm::to_vector(
        llvm::seq<int64_t>(0, static_cast<int64_t>(indexTensors.size())));
  ArrayRef<int64_t> indexed = indexing.positions;
  auto selfType = cast<RankedTensorType>(self.getType());
  int64_t rank = selfType.getRank();
  if (indexed.size() != indexTensors.size() || !llvm::is_sorted(indexed) ||
      indexed.front() < 0 || indexed.back() >= rank)
    return failure();

  bool adjacent = indexed.back() - indexed.front() ==
                  static_cast<int64_t>(indexed.size()) - 1;
  indexing.broadcastStart = adjacent ? indexed.front() : 0;
  indexing.indexOfDim.assign(rank, -1);
  for (auto [i, position] : llvm::enumerate(indexed))
    indexing.indexOfDim[position] = i;
  indexing.spaceDimOf.assign(rank, -1);
  int64_t next = adjacent ? 0 : indexing.broadcastRank;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (adjacent && dim == indexed.front())
      next += indexing.broadcastRank;
    if (indexing.indexOfDim[dim] < 0)
      indexing.spaceDimOf[dim] = next++;
  }

  if (spaceShape) {
    indexing.spaceShape.assign(spaceShape->begin(), spaceShape->end());
    return indexing;
  }
  // The broadcast of the index tensors' shapes (a dimension of 1 broadcasts;
  // a dynamic one stays dynamic unless a static size other than 1 is there).
  SmallVector<int64_t> broadcast(indexing.broadcastRank, 1);
  for (int64_t k = 0; k < indexing.broadcastRank; ++k) {
    for (Value index : indexTensors) {
      auto type = cast<RankedTensorType>(index.getType());
      int64_t dim = k - (indexing.broadcastRank - type.getRank());
      if (dim < 0 || type.getDimSize(dim) == 1)
        continue;
      if (!ShapedType::isDynamic(type.getDimSize(dim)))
        broadcast[k] = type.getDimSize(dim);
      else if (broadcast[k] == 1)
        broadcast[k] = ShapedType::kDynamic;
    }
  }
  indexing.spaceShape.assign(rank - indexed.size() + indexing.broadcastRank, 0);
  for (int64_t k = 0; k < indexing.broadcastRank; ++k)
    indexing.spaceShape[indexing.broadcastStart + k] = broadcast[k];
  for (int64_t dim = 0; dim < rank; ++dim)
    if (indexing.spaceDimOf[dim] >= 0)
      indexing.spaceShape[indexing.spaceDimOf[dim]] = selfType.getDimSize(dim);
  return indexing;
}

int64_t AdvancedIndexing::getIndexDim(int64_t i, int64_t dim) const {
  auto type = cast<RankedTensorType>(indexTensors[i].getType());
  int64_t indexDim = dim - broadcastStart - (broadcastRank - type.getRank());
  if (indexDim < 0 || indexDim >= type.getRank() ||
      (type.getDimSize(indexDim) == 1 && spaceShape[dim] != 1))
    return -1;
  return indexDim;
}

SmallVector<Value> AdvancedIndexing::getDynamicSizes(OpBuilder &b,
                                                     Location loc) const {
  SmallVector<Value> sizes;
  for (auto [dim, size] : llvm::enumerate(spaceShape)) {
    if (!ShapedType::isDynamic(size))
      continue;
    int64_t spaceDim = dim;
    if (spaceDim >= broadcastStart &&
        spaceDim < broadcastStart + broadcastRank) {
      for (int64_t i = 0, e = indexTensors.size(); i < e; ++i) {
        int64_t indexDim = getIndexDim(i, spaceDim);
        if (indexDim >= 0) {
          sizes.push_back(getDimSize(b, loc, indexTensors[i], indexDim));
          break;
        }
      }
      continue;
    }
    int64_t selfDim = llvm::find(spaceDimOf, spaceDim) - spaceDimOf.begin();
    sizes.push_back(getDimSize(b, loc, self, selfDim));
  }
  return sizes;
}

SmallVector<Value> AdvancedIndexing::getIndexedSizes(OpBuilder &b,
                                                     Location loc) const {
  return llvm::map_to_vector(positions, [&](int64_t position) {
    return getDimSize(b, loc, self, position);
  });
}

/// What eager raises for an index outside self's dimension `position`.
static std::string getBoundsMessage(int64_t position) {
  return ("IndexError: index out of bounds for dimension " + Twine(position))
      .str();
}

void AdvancedIndexing::checkIndices(OpBuilder &b, Location loc,
                                    const IndexChecks &checks,
                                    ArrayRef<Value> indexedSizes) const {
  // Integer indices take one dimension of self each: the one at their
  // position in ATen's list.
  for (auto [indices, position, size] :
       llvm::zip_equal(indexTensors, positions, indexedSizes))
    checks.checkTensor(b, loc, indices, size, /*negative=*/true,
                       getBoundsMessage(position));
}

SmallVector<Value>
AdvancedIndexing::getSelfIndices(OpBuilder &b, Location loc, ValueRange ivs,
                                 ArrayRef<Value> indexedSizes,
                                 const IndexChecks &checks) const {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> indices;
  for (int64_t dim = 0, rank = indexOfDim.size(); dim < rank; ++dim) {
    int64_t i = indexOfDim[dim];
    if (i < 0) {
      indices.push_back(ivs[spaceDimOf[dim]]);
      continue;
    }
    auto type = cast<RankedTensorType>(indexTensors[i].getType());
    SmallVector<Value> at(type.getRank(), zero);
    int64_t lead = broadcastStart + broadcastRank - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (getIndexDim(i, lead + d) >= 0)
        at[d] = ivs[lead + d];
    Value loaded = loop::LoadOp::create(b, loc, indexTensors[i], at);
    checks.checkElement(b, loc, loaded, indexedSizes[i], /*negative=*/true,
                        getBoundsMessage(positions[i]));
    indices.push_back(wrapAndClampIndex(b, loc, loaded, indexedSizes[i]));
  }
  return indices;
}
