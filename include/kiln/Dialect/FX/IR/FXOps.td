//===- FXOps.td - fx dialect operations ----------------------------------===//
//
// Part of Kiln. The graph container and the hand-written ATen ops. Ops whose
// definition is a row of PyTorch's op table are generated into their own file.
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
// Elementwise ops
//===----------------------------------------------------------------------===//

// A binary elementwise op with PyTorch broadcasting and type promotion. The
// verifier computes the result type from the operands and compares.
class FX_BinaryElementwiseOp<string mnemonic, string atenName,
                             list<Trait> traits = []>
    : FX_Op<mnemonic, !listconcat(traits, [Pure])> {
  let summary = "Elementwise `aten." # atenName # "` with broadcasting";
  let arguments = (ins FX_Tensor:$self, FX_Tensor:$other);
  let results = (outs FX_Tensor:$result);
  let assemblyFormat = [{
    $self `,` $other attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def FX_AddOp : FX_BinaryElementwiseOp<"add", "add.Tensor"> {
  let description = [{
    `self + alpha * other`, broadcasting both operands to the result shape and
    computing in the promoted dtype. `alpha` defaults to 1.

    ```mlir
    %0 = fx.add %a, %b {alpha = 2.0 : f64}
        : (tensor<8x1xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins FX_Tensor:$self, FX_Tensor:$other,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
}

def FX_SubOp : FX_BinaryElementwiseOp<"sub", "sub.Tensor"> {
  let description = [{
    `self - alpha * other`, with broadcasting and type promotion as `fx.add`.
    PyTorch rejects `sub` with any bool operand, and so does the verifier.
  }];
  let arguments = (ins FX_Tensor:$self, FX_Tensor:$other,
                       OptionalAttr<AnyAttrOf<[F64Attr, I64Attr]>>:$alpha);
}

def FX_MulOp : FX_BinaryElementwiseOp<"mul", "mul.Tensor"> {
  let description = [{
    `self * other`, with broadcasting and type promotion.

    ```mlir
    %0 = fx.mul %a, %b : (tensor<?x4xbf16>, tensor<f32>) -> tensor<?x4xbf16>
    ```
  }];
}

// A unary elementwise op whose result has its operand's type.
class FX_UnaryElementwiseOp<string mnemonic, string atenName,
                            list<Trait> traits = []>
    : FX_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let summary = "Elementwise `aten." # atenName # "`";
  let arguments = (ins FX_NumericTensor:$self);
  let results = (outs FX_NumericTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($result)";
}

def FX_NegOp : FX_UnaryElementwiseOp<"neg", "neg"> {
  let description = [{
    `-self`. Not defined for bool tensors.

    ```mlir
    %0 = fx.neg %x : tensor<4x4xf32>
    ```
  }];
}

def FX_ReluOp : FX_UnaryElementwiseOp<"relu", "relu"> {
  let arguments = (ins FX_RealTensor:$self);
  let results = (outs FX_RealTensor:$result);
  let description = [{
    `max(self, 0)`. Not defined for bool or complex tensors.

    ```mlir
    %0 = fx.relu %x : tensor<?x128xbf16>
    ```
  }];
}

#endif // KILN_DIALECT_FX_IR_FXOPS_TD
