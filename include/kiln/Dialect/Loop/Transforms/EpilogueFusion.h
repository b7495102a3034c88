//===- EpilogueFusion.h - Pointwise readers into matrix products -*- C++
//-*-===//
//
// Part of Kiln. Library entry points behind the kiln-loop-fuse-epilogues pass,
// and the matcher that GPU code generation shares with it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_EPILOGUEFUSION_H
#define KILN_DIALECT_LOOP_TRANSFORMS_EPILOGUEFUSION_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class Block;
class RewriterBase;
namespace kiln::loop {
class MatmulOp;

/// An epilogue that GEMM libraries apply themselves:
/// `round(activation(sum + bias[j]))`.
struct LibraryEpilogue {
  enum class Activation { None, Relu };

  /// The vector of N elements added to every row, of the result's element
  /// type; null without a bias.
  Value bias;
  Activation activation = Activation::None;
};

/// Matches `matmul`'s epilogue (none counts) against LibraryEpilogue; the
/// result's elements must be the operands' or, for 16-bit operands, f32.
std::optional<LibraryEpilogue> matchLibraryEpilogue(MatmulOp matmul);

/// Fuses each loop.matmul in `block` whose only reader is a loop.pointwise
/// of its shape that reads it at its own index: the reader's body becomes
/// the matmul's epilogue, applied before anything is stored. With
/// `libraryOnly`, only epilogues that matchLibraryEpilogue accepts are made.
/// Returns the number of fused epilogues.
unsigned fuseEpilogues(RewriterBase &rewriter, Block &block, bool libraryOnly);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_EPILOGUEFUSION_H
