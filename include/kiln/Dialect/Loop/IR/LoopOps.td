//===- LoopOps.td - loop dialect operations ------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPOPS_TD
#define KILN_DIALECT_LOOP_IR_LOOPOPS_TD

include "kiln/Dialect/Loop/IR/LoopBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Loop_PointwiseOp : Loop_Op<"pointwise", [
    RecursiveMemoryEffects, SingleBlock,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Defines a tensor element by element";
  let description = [{
    The result's index space is its shape. The body has one `index` argument
    per dimension and yields the element at that index, as a signless scalar.
    Dynamic dimensions of the result take their sizes from `dynamic_sizes`, in
    order.

    ```mlir
    %r = loop.pointwise(%n) : tensor<?x64xf32> {
    ^bb0(%i: index, %j: index):
      %a = loop.load %x[%i, %j] : tensor<?x64xf32>
      %b = loop.load %y[%j] : tensor<64xf32>
      %s = arith.addf %a, %b : f32
      loop.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? `:` type($result) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// The yield that ends the body.
    YieldOp getYield();
    /// The induction variables, one per result dimension.
    ::mlir::Block::BlockArgListType getInductionVars() {
      return getBody().front().getArguments();
    }
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
  }];
}

def Loop_ReduceOp : Loop_Op<"reduce", [
    RecursiveMemoryEffects, SingleBlock, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Defines a tensor by combining values over a reduction space";
  let description = [{
    For every index of the result, combines the values the body yields over
    every index of the reduction space (`over`, whose dynamic sizes follow
    it) with `combiner`: "sum", "prod", "max" or "min" (max and min propagate
    NaN, as PyTorch's do). The body has one `index` argument per result
    dimension, then one per reduction dimension. It yields the value to
    combine in the accumulator's type: the result's scalar type, or f32 for
    f16/bf16 results (rounded once, at the end), as PyTorch accumulates.

    ```mlir
    %s = loop.reduce "sum"(%n) over [64] : tensor<?xbf16> {
    ^bb0(%i: index, %k: index):
      %v = loop.load %x[%i, %k] : tensor<?x64xbf16>
      %w = arith.extf %v : bf16 to f32
      loop.yield %w : f32
    }
    ```
  }];
  let arguments = (ins StrAttr:$combiner, Variadic<Index>:$dynamic_sizes,
                       Variadic<Index>:$reduction_dynamic_sizes,
                       DenseI64ArrayAttr:$reduction_shape);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $combiner (`(` $dynamic_sizes^ `)`)? `over`
    custom<DynamicIndexList>($reduction_dynamic_sizes, $reduction_shape)
    `:` type($result) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    YieldOp getYield();
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    /// The induction variables of the result's dimensions.
    ::llvm::ArrayRef<::mlir::BlockArgument> getResultInductionVars() {
      return getBody().front().getArguments().take_front(
          getResultType().getRank());
    }
    /// The induction variables of the reduction dimensions.
    ::llvm::ArrayRef<::mlir::BlockArgument> getReductionInductionVars() {
      return getBody().front().getArguments().drop_front(
          getResultType().getRank());
    }
  }];
}

def Loop_LoadOp : Loop_Op<"load", [
    Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>
  ]> {
  let summary = "Reads one element of a tensor inside a node's body";
  let description = [{
    Reads the element of `source` at `indices` (one per dimension) and yields
    it as a signless scalar: `si*`/`ui*` elements load as `i*`.

    ```mlir
    %v = loop.load %t[%i, %c0] : tensor<8x1xsi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, Variadic<Index>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` type($source)
  }];
  let hasVerifier = 1;
}

def Loop_YieldOp : Loop_Op<"yield", [
    Pure, ReturnLike, Terminator, ParentOneOf<["PointwiseOp", "ReduceOp"]>
  ]> {
  let summary = "Yields the element a node computes at the current index";
  let description = [{
    ```mlir
    loop.yield %v : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // KILN_DIALECT_LOOP_IR_LOOPOPS_TD
