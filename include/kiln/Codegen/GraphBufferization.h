//===- GraphBufferization.h - Graphs of loop nodes to buffers ---*- C++ -*-===//
//
// Part of Kiln. What every code generator does first: a graph whose body holds
// loop nodes becomes a function over memrefs in destination-passing style.
// Targets differ only in how a node's loops, temporaries and copies look.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GRAPHBUFFERIZATION_H
#define KILN_CODEGEN_GRAPHBUFFERIZATION_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include <functional>

namespace mlir {
class IRMapping;
class MemRefType;
class ModuleOp;
class OpBuilder;
class RewriterBase;
namespace func {
class FuncOp;
} // namespace func
namespace kiln {
namespace fx {
class GraphOp;
} // namespace fx
namespace loop {
class AttentionBackwardOp;
class AttentionOp;
class KernelOp;
class ConvolutionOp;
class MatmulOp;
class PointwiseOp;
class ReduceOp;
class ScatterOp;
} // namespace loop

/// The attribute that marks a function bufferized from an fx.graph.
inline constexpr llvm::StringLiteral kGraphFuncAttrName = "kiln.graph";

/// The attribute that keeps a bufferized graph's original signature, with
/// PyTorch's dtypes (the buffers themselves have signless elements).
inline constexpr llvm::StringLiteral kGraphSignatureAttrName = "kiln.signature";

/// The suffix of the function that computes a graph's dynamic result sizes.
inline constexpr llvm::StringLiteral kResultSizesSuffix = "_result_sizes";

/// How one target emits a bufferized graph. `extraArgs` are the graph
/// function's trailing arguments of `extraArgumentTypes` (e.g. a stream).
struct GraphBufferizationTarget {
  /// Emits the loops of `node`, storing its elements into `dest`; `mapping`
  /// maps the graph's tensors to buffers and its scalars to values.
  std::function<void(OpBuilder &, loop::PointwiseOp node, Value dest,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitNode;
  /// Emits the loops of the reduction `node`, storing into `dest`; null for
  /// targets that cannot reduce yet (bufferization then fails, with a
  /// diagnostic).
  std::function<void(OpBuilder &, loop::ReduceOp node, Value dest,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitReduce;
  /// Emits the matrix product `node` into `dest`; null for targets without
  /// one (bufferization then fails, with a diagnostic).
  std::function<void(OpBuilder &, loop::MatmulOp node, Value dest,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitMatmul;
  /// Emits the attention `node` into `dests` (its result, then its
  /// logsumexp if it has one), its scores kept on chip; null for targets
  /// without an attention kernel (bufferization then fails, with a
  /// diagnostic: kiln-loop-expand-attention expands theirs).
  std::function<void(OpBuilder &, loop::AttentionOp node, ValueRange dests,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitAttention;
  /// Emits attention's gradients `node` into `dests` (the query's, key's
  /// and value's); null for targets without a kernel for them
  /// (bufferization then fails, with a diagnostic).
  std::function<void(OpBuilder &, loop::AttentionBackwardOp node,
                     ValueRange dests, IRMapping &mapping,
                     ValueRange extraArgs)>
      emitAttentionBackward;
  /// Emits the (channels-last) convolution `node` into `dest`; null for
  /// targets without a convolution library (bufferization then fails, with
  /// a diagnostic: kiln-loop-expand-convolutions expands theirs).
  std::function<void(OpBuilder &, loop::ConvolutionOp node, Value dest,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitConvolution;
  /// Emits the scatter `node` into `dest`, which already holds its `init`;
  /// null for targets without scatters (bufferization then fails, with a
  /// diagnostic).
  std::function<void(OpBuilder &, loop::ScatterOp node, Value dest,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitScatter;
  /// Emits the fused `kernel`, storing its results into `dests` (in order);
  /// null for targets that cannot run fused kernels (bufferization then
  /// fails, with a diagnostic).
  std::function<void(OpBuilder &, loop::KernelOp kernel, ValueRange dests,
                     IRMapping &mapping, ValueRange extraArgs)>
      emitKernel;
  /// Returns a buffer that holds `value`, a frozen parameter (a builtin
  /// tensor constant's value, with signless elements), where the target's
  /// code reads it; null for targets without frozen constants
  /// (bufferization then fails, with a diagnostic).
  std::function<Value(OpBuilder &, Location, ElementsAttr value,
                      ValueRange extraArgs)>
      emitConstant;
  /// Allocates a temporary of `type` with `dynamicSizes`.
  std::function<Value(OpBuilder &, Location, MemRefType type,
                      ValueRange dynamicSizes, ValueRange extraArgs)>
      allocate;
  /// Frees a temporary once the graph is done with it.
  std::function<void(OpBuilder &, Location, Value buffer, ValueRange extraArgs)>
      deallocate;
  /// Copies `source` into `dest` (same type).
  std::function<void(OpBuilder &, Location, Value source, Value dest,
                     ValueRange extraArgs)>
      copy;
  /// Types of the trailing arguments the graph function takes.
  SmallVector<Type> extraArgumentTypes;
};

/// The buffer type of a tensor type: same shape, signless elements.
MemRefType getBufferType(Type tensorType);

/// A read-only global of the module around the insertion point that holds
/// `value` (signless elements, 64-byte aligned as the widest vector loads
/// want), and its buffer, read at the insertion point.
Value emitConstantGlobal(OpBuilder &b, Location loc, ElementsAttr value);

/// Emits the scalar body of `node` at the indices `ivs`, loads becoming
/// memref.load from the buffers in `mapping` (or, for a load whose result
/// `mapping` maps, the value it maps to); returns the element it yields.
Value emitNodeElement(OpBuilder &b, loop::PointwiseOp node,
                      const IRMapping &mapping, ValueRange ivs);

/// Emits the scalar body of `node` at the indices `ivs`: loads become
/// memref.load from the buffers in `mapping`, the yield a store into `dest`.
void emitNodeBody(OpBuilder &b, loop::PointwiseOp node, Value dest,
                  const IRMapping &mapping, ValueRange ivs);

/// The dynamic sizes of `tensor`, a node's or a kernel's result, in order.
ValueRange getDynamicSizesOfResult(Value tensor);

/// The sizes of node `node`'s result, as index values.
SmallVector<Value> getNodeSizes(OpBuilder &b, Location loc, Operation *node,
                                const IRMapping &mapping);

/// The row-major indices of element `linear` of a space of `sizes` (the
/// first index is the quotient left over).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes);

/// The sizes of reduction `node`'s reduction space, as index values.
SmallVector<Value> getReductionSizes(OpBuilder &b, Location loc,
                                     loop::ReduceOp node,
                                     const IRMapping &mapping);

/// Emits the ops of a node body `body` at the indices `ivs` (one per block
/// argument), loads becoming memref.load from the buffers in `mapping`;
/// returns the value it yields.
Value emitBodyValue(OpBuilder &b, Block &body, const IRMapping &mapping,
                    ValueRange ivs);

/// The element of matrix product `node` at `indices` (batch..., row,
/// column) whose sum is `sum` (in the accumulator type): through the
/// product's epilogue, or converted to the result's element type.
Value emitMatmulElement(OpBuilder &b, loop::MatmulOp node,
                        const IRMapping &mapping, ValueRange indices,
                        Value sum);

/// Emits the ops of scatter `node`'s body at the update indices `ivs`, and
/// then the combination of the value it yields into `dest` at the indices it
/// yields: for "sum", "max" and "min" a memref.atomic_rmw and for "prod" a
/// compare-and-swap loop, so that updates may run in parallel; for "assign"
/// a store.
void emitScatterUpdate(OpBuilder &b, loop::ScatterOp node, Value dest,
                       const IRMapping &mapping, ValueRange ivs);

/// The sizes of scatter `node`'s update space, as index values.
SmallVector<Value> getUpdateSizes(OpBuilder &b, Location loc,
                                  loop::ScatterOp node,
                                  const IRMapping &mapping);

/// The alignment of each temporary in a graph's workspace, in bytes: what
/// the widest vector accesses and cuBLASLt's operands want.
inline constexpr int64_t kWorkspaceAlignment = 256;

/// A buffer of `bytes` that must hold its contents from the op at position
/// `first` to the op at position `last` (inclusive) of a graph's body.
struct WorkspaceInterval {
  unsigned first, last;
  int64_t bytes;
  /// Set by planWorkspace.
  int64_t offset = 0;
};

/// Places `buffers` in one workspace so that buffers alive at the same time
/// never overlap (largest first, each at the lowest free offset, offsets
/// multiples of `alignment`); returns the workspace's size in bytes.
int64_t planWorkspace(MutableArrayRef<WorkspaceInterval> buffers,
                      int64_t alignment);

/// Replaces `graph`, whose body holds only loop nodes and scalar ops, with a
/// destination-passing func.func over memrefs (inputs, results, then the
/// target's extra arguments) and its `_result_sizes` companion. Results are
/// computed straight into the caller's buffers; temporaries of static size
/// are views at planned offsets of one workspace (planWorkspace), which the
/// function allocates once; dynamic ones are allocated when written and
/// freed after their last reader. Returns the
/// new function, or failure (with a diagnostic) when the body still holds ops
/// that have no buffer form.
FailureOr<func::FuncOp> bufferizeGraph(RewriterBase &rewriter,
                                       fx::GraphOp graph,
                                       const GraphBufferizationTarget &target);

/// Bufferizes every fx.graph directly in `module` for `target`; stops at the
/// first graph that fails (which has emitted a diagnostic).
LogicalResult bufferizeGraphs(ModuleOp module,
                              const GraphBufferizationTarget &target);

} // namespace kiln
} // namespace mlir

#endif // KILN_CODEGEN_GRAPHBUFFERIZATION_H
