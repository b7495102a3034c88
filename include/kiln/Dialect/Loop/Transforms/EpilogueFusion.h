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

/// Whether Kiln's tensor-core kernels compute `matmul` (kiln-loop-to-gpu's
/// `matmul-kernels`): f16 or bf16 operands whose stored rows hold a
/// multiple of 8 elements, so that their tiles copy in 16-byte pieces.
bool isTensorCoreProduct(MatmulOp matmul);

/// Which epilogues fuseEpilogues makes.
struct EpilogueFusionOptions {
  /// Only those that matchLibraryEpilogue accepts: the target's products are
  /// library calls.
  bool libraryOnly = false;
  /// With `libraryOnly`, any epilogue of the products that
  /// isTensorCoreProduct accepts: the target generates their kernels.
  bool tensorCoreProducts = false;
};

/// Fuses each loop.matmul in `block` whose only reader is a loop.pointwise
/// that reads it at its own index, or whose leading dimensions collapse
/// into the product's (a Linear's [batch * tokens, features] product read
/// as [batch, tokens, features]) and that reads it at their linearized
/// index: the reader's body becomes the matmul's epilogue, applied before
/// anything is stored, where `options` allow the epilogue; the product,
/// expanded to the reader's shape, replaces the reader. Returns the number
/// of fused epilogues.
unsigned fuseEpilogues(RewriterBase &rewriter, Block &block,
                       const EpilogueFusionOptions &options);

} // namespace kiln::loop
} // namespace mlir

#endif // KILN_DIALECT_LOOP_TRANSFORMS_EPILOGUEFUSION_H
