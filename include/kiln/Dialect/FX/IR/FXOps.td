//===- FXOps.td - fx dialect operations ----------------------------------===//
//
// Part of Kiln. The graph container, and the Core ATen ops that
// utils/gen-fx-ops.py generates into FXAtenOps.td from utils/fx_op_table.py
// (their classes are in FXOpBase.td).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXOPS_TD
#define KILN_DIALECT_FX_IR_FXOPS_TD

include "kiln/Dialect/FX/IR/FXBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

def FX_GraphOp : FX_Op<"graph", [
    FunctionOpInterface, IsolatedFromAbove, SingleBlock
  ]> {
  let summary = "A captured ATen graph";
  let description = [{
    `fx.graph` holds one graph captured by TorchDynamo/AOTAutograd (or
    `make_fx`). Its arguments are the graph's placeholders in order, its results
    the values of the graph's output node. The body is a single block ending in
    `fx.output`; it cannot capture values from outside.

    Example:

    ```mlir
    fx.graph @forward(%x: tensor<?x64xf32>, %y: tensor<64xf32>)
        -> tensor<?x64xf32> {
      %0 = fx.add %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
      %1 = fx.relu %0 : tensor<?x64xf32>
      fx.output %1 : tensor<?x64xf32>
    }
    ```
  }];

  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);

  let builders = [OpBuilder<(ins "StringRef":$name, "FunctionType":$type)>];

  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// A graph always has a body; there are no external graphs.
    bool isDeclaration() { return false; }
  }];

  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def FX_OutputOp : FX_Op<"output", [
    Pure, HasParent<"GraphOp">, ReturnLike, Terminator
  ]> {
  let summary = "The values a graph returns";
  let description = [{
    Terminates an `fx.graph`; its operands are the graph's results and must
    match the graph's result types.

    ```mlir
    fx.output %0, %1 : tensor<4xf32>, tensor<4xsi64>
    ```
  }];
  let arguments = (ins Variadic<FX_Tensor>:$results);
  let assemblyFormat = "attr-dict ($results^ `:` type($results))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Core ATen ops, generated from utils/fx_op_table.py
//===----------------------------------------------------------------------===//

include "kiln/Dialect/FX/IR/FXAtenOps.td"

#endif // KILN_DIALECT_FX_IR_FXOPS_TD
