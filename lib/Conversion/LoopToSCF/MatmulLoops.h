//===- MatmulLoops.h - The CPU product's loops and buffers -------*- C++
//-*-===//
//
// Part of Kiln. What the CPU product's phases share (MatmulToSCF.cpp: the
// register tiles and dot products; MatmulAMX.cpp: AMX tiles).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_LOOPTOSCF_MATMULLOOPS_H
#define KILN_LIB_CONVERSION_LOOPTOSCF_MATMULLOOPS_H

#include "kiln/Conversion/LoopToSCF/LoopToSCF.h"
#include "kiln/Dialect/Loop/IR/LoopOps.h"
#include "mlir/IR/Builders.h"
#include <optional>
#include <vector>

namespace mlir {
namespace kiln {

/// Rows of the result per register tile (MR). With two vectors per row this
/// keeps 12 accumulators, two right-hand vectors and a broadcast within
/// AVX2's 16 registers.
inline constexpr int64_t kTileRows = 6;
/// Vectors per tile row: NR is this many vectors of the accumulator type.
inline constexpr int64_t kVectorsPerTileRow = 2;
/// Alignment of the packed panels, a cache line.
inline constexpr int64_t kPanelAlignment = 64;
/// Register tiles of rows that one task computes against a panel, in turn:
/// the panel stays in cache while they read it.
inline constexpr int64_t kTilesPerBlock = 16;
/// Products of at most this many rows whose operands both run along K (a
/// linear layer's weight [N, K]) are dot products instead: packing the
/// weight at every call would cost more than the product.
inline constexpr int64_t kFewRows = 16;
/// Columns of the result whose dot products a task computes together, each
/// with its own accumulator vector.
inline constexpr int64_t kDotColumns = 4;
/// Steps along K that the block's tiles take in turn (their sums kept in a
/// buffer of the task's between blocks of steps): a block of steps of the
/// panel (256 x 32 f32 with AVX-512, 32 KiB) stays in L1 meanwhile.
inline constexpr int64_t kBlockSteps = 256;

/// A frozen right-hand side (a weight), read at compile time to pack it.
struct FrozenRhs {
  std::vector<float> elements;
  /// The batch dimensions' sizes, and their product.
  SmallVector<int64_t> batchShape;
  int64_t batch, kSize, nSize;
  bool transposed;

  /// The element of batch `bi`, step `step` of K, column `column`.
  float at(int64_t bi, int64_t step, int64_t column) const {
    int64_t rows = transposed ? nSize : kSize,
            cols = transposed ? kSize : nSize;
    return elements[bi * rows * cols +
                    (transposed ? column * cols + step : step * cols + column)];
  }
};

/// What the two phases share: buffers, sizes and the tile shape.
struct MatmulLoops {
  MatmulLoops(OpBuilder &b, loop::MatmulOp node, Value dest,
              const IRMapping &mapping, const LoopToSCFOptions &options);

  /// Emits `body` inside a parallel (or sequential) nest over the batch
  /// dimensions and `inner` sizes; `body` gets the batch indices, then one
  /// index per `inner` size.
  void emitNest(OpBuilder &b, ArrayRef<Value> inner,
                function_ref<void(OpBuilder &, ValueRange, ValueRange)> body);

  /// Packs the right-hand side: packed[batch..., p, k, r] = rhs(k, p*NR + r),
  /// zero for columns past N.
  void emitPacking(OpBuilder &b);

  /// The right-hand side's elements, if it is a frozen constant of f32,
  /// bf16 or f16 elements with a static shape (a weight).
  std::optional<FrozenRhs> getFrozenRhs();

  /// Packs a frozen right-hand side (a weight) now, into a global of the
  /// artifact, instead of at every run; false if it is not one.
  bool emitPrepackedConstant(OpBuilder &b);

  /// Computes and stores every MR x NR tile of the result.
  void emitTiles(OpBuilder &b);

  /// Whether both operands are stored along K (lhs [M, K], rhs [N, K]), so
  /// that few rows compute as dot products (emitDotProducts).
  bool readsAlongK() {
    return !node.getTransposeLhs() && node.getTransposeRhs();
  }

  /// Computes the result as dot products of vectors along K: a task per
  /// kDotColumns columns, reading those rows of the rhs once per lhs row,
  /// with no packing.
  void emitDotProducts(OpBuilder &b);

  /// The elements of `row` from `firstColumn` on, one panel's worth, from
  /// their `sums`: through the epilogue, or rounded. Lanes past N compute
  /// (in bounds) values that are never stored.
  Value emitRowElements(OpBuilder &b, ValueRange batch, Value row,
                        Value firstColumn, Value sums);

  /// emitRowElements for a panel whose columns are all the result's: the
  /// epilogue computes on vectors, its reads contiguous loads where they
  /// can be (else element by element, as emitRowElements).
  Value emitWholeRowElements(OpBuilder &b, ValueRange batch, Value row,
                             Value firstColumn, Value sums);

  /// Stores `sums`, the sums of `row` (one panel's worth from
  /// `firstColumn`), if the row is one of the result's: whole vectors
  /// through emitWholeRowElements where the panel is full, else through
  /// emitRowElements, masked at N's edge.
  void emitRowStore(OpBuilder &b, ValueRange batch, Value row,
                    Value firstColumn, Value sums);

  /// Whether the product runs on AMX tiles (MatmulAMX.cpp): the `amx`
  /// option, bf16 operands, f32 sums, panels of 32 of them.
  bool usesAMX() const;

  /// Computes the whole product on AMX tiles: packs both operands (but a
  /// `prepackedRhs`), then computes 32 x 32 blocks of the result in four
  /// tiles of sums.
  void emitAMXProduct(OpBuilder &b, Value prepackedRhs);

  /// The right-hand side packed for AMX now, into a global of the artifact,
  /// if it is a frozen constant (a weight); else null. Outside any op being
  /// built: it adds the global to the module.
  Value emitPrepackedAMXConstant(OpBuilder &b);

  /// Indices into an operand stored [batch..., rows, cols], transposed or not.
  SmallVector<Value> operandIndices(ValueRange batch, Value row, Value col,
                                    bool transposed) const;

  Location loc;
  loop::MatmulOp node;
  const IRMapping &mapping;
  Value lhs, rhs, dest, packed;
  const LoopToSCFOptions &options;
  FloatType accumulatorType;
  Type elementType;
  int64_t panelWidth;
  SmallVector<Value> batchSizes;
  Value m, n, k, panels, tiles;
};

/// The elements of a frozen constant as floats, if it holds f32, bf16 or
/// f16 elements in a dense value or a resource blob of the right size.
std::optional<std::vector<float>> getFloatElements(Attribute value);

/// Converts a scalar or vector of floats to `elementType`'s width (same
/// shape).
Value convertFloat(OpBuilder &b, Location loc, Value value, Type elementType);

} // namespace kiln
} // namespace mlir

#endif // KILN_LIB_CONVERSION_LOOPTOSCF_MATMULLOOPS_H
