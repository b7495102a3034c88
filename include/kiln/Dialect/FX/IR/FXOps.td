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
include "kiln/Dialect/FX/IR/FXAttrs.td"
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

    A graph may carry shape guards: what the compiled artifact assumes of
    its arguments and the runtime checks before each call. `symbols` lists
    the graph's size symbols; an argument's `fx.guard` gives its sizes (a
    symbol name for each `?` dimension, so arguments naming the same symbol
    have equal sizes there), strides, alignment and device; a result's
    `fx.aliases = N` says it may share storage with argument N, and an
    argument's `fx.mutated` that the graph writes it in place. All are
    optional.

    ```mlir
    fx.graph @guarded(
        %x: tensor<?x4096xbf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 4096], align = 16>},
        %r: tensor<?x4096xbf16> {fx.guard = #fx.tensor_guard<sizes = [s0, 4096]>})
        -> tensor<?x4096xbf16>
        attributes {symbols = [#fx.symbol<"s0", min = 2, max = 8192>]} {
      ...
    }
    ```

    The verifier checks the guards against the argument types and each
    other: ranks, static sizes, symbols only and always for `?` dimensions,
    defined and used symbols, stride counts, and the aliasing results.
  }];

  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       OptionalAttr<TypedArrayAttrBase<FX_SymbolAttr,
                           "array of size symbols">>:$symbols);
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

    // Shape guards (all optional; see FXAttrs.td).
    /// The size symbol named `name`, or null when the graph has none.
    ::mlir::kiln::fx::SymbolAttr lookupSizeSymbol(::llvm::StringRef name);
    /// The guard of argument `index`, or null when it has none.
    ::mlir::kiln::fx::TensorGuardAttr getArgumentGuard(unsigned index);
    /// Whether the graph writes argument `index` in place (`fx.mutated`).
    bool isArgumentMutated(unsigned index);
    /// The argument that result `index` may share storage with
    /// (`fx.aliases`), if any.
    std::optional<unsigned> getResultAlias(unsigned index);

  private:
    /// Checks the guards against the argument types and each other.
    static ::mlir::LogicalResult verifyGuards(GraphOp graph);

  public:
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

def FX_ConstantOp : FX_Op<"constant", [
    ConstantLike, Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>
  ]> {
  let summary = "A tensor the graph holds: a frozen parameter or buffer";
  let description = [{
    The value of a parameter, buffer or tensor constant that the importer
    froze into the graph (`freeze=True`) instead of passing it as an input.
    Large values are `dense_resource` blobs, which the module's
    `dialect_resources` section holds; small ones may be `dense`. The result
    type is the value's.

    ```mlir
    %w = fx.constant dense_resource<fc_weight> : tensor<10x16xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs FX_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def FX_SymbolValueOp : FX_Op<"symbol_value", [Pure]> {
  let summary = "The run-time value of one of the graph's size symbols";
  let description = [{
    The size that the graph's size symbol `symbol` stands for in this call
    (the runtime binds it from a guarded argument dimension), as an i64: how
    symbolic integer arguments (`slice`'s `dynamic_end`, `arange`'s
    `dynamic_end`, `select`'s `dynamic_index`) depend on the input sizes.
    Arithmetic on it is `arith` on i64, as PyTorch's SymInt expressions are.

    ```mlir
    %n = fx.symbol_value "s0"
    %p = fx.slice %pe dynamic_end(%n) {dim = 0 : i64}
        : (tensor<512x64xf32>, i64) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$symbol);
  let results = (outs I64:$result);
  let assemblyFormat = "$symbol attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Core ATen ops, generated from utils/fx_op_table.py
//===----------------------------------------------------------------------===//

include "kiln/Dialect/FX/IR/FXAtenOps.td"

#endif // KILN_DIALECT_FX_IR_FXOPS_TD
