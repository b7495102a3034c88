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
    Pure, ReturnLike, Terminator, HasParent<"PointwiseOp">
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
