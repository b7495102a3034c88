//===- HostOps.td - The host compiler's dialect ------------*- tablegen -*-===//
//
// Part of Kiln's embedding example: a host compiler's own small dialect,
// built on Kiln's installed ODS files (fx's tensor constraints).
//
//===----------------------------------------------------------------------===//

#ifndef HOST_OPS_TD
#define HOST_OPS_TD

include "kiln/Dialect/FX/IR/FXBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Host_Dialect : Dialect {
  let name = "host";
  let summary = "The host compiler's tensor functions";
  let cppNamespace = "::host";
}

class Host_Op<string mnemonic, list<Trait> traits = []>
    : Op<Host_Dialect, mnemonic, traits>;

def Host_FuncOp : Host_Op<"func", [
    FunctionOpInterface, IsolatedFromAbove, SingleBlock
  ]> {
  let summary = "A function of tensors that Kiln compiles";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
  let hasCustomAssemblyFormat = 1;
}

def Host_ReturnOp : Host_Op<"return", [
    Pure, HasParent<"FuncOp">, ReturnLike, Terminator
  ]> {
  let summary = "The values a function returns";
  let arguments = (ins Variadic<FX_FloatTensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

// Binary ops of one type, without broadcasting.
class Host_BinaryOp<string mnemonic>
    : Host_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let arguments = (ins FX_FloatTensor:$lhs, FX_FloatTensor:$rhs);
  let results = (outs FX_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Host_AddOp : Host_BinaryOp<"add"> {
  let summary = "Elementwise sum";
}

def Host_MulOp : Host_BinaryOp<"mul"> {
  let summary = "Elementwise product";
}

def Host_ReluOp : Host_Op<"relu", [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise max(x, 0)";
  let arguments = (ins FX_FloatTensor:$input);
  let results = (outs FX_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

#endif // HOST_OPS_TD
