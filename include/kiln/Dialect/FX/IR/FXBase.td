//===- FXBase.td - fx dialect definition and type constraints ------------===//
//
// Part of Kiln. The fx dialect is the graph level of Kiln: one op per Core
// ATen op, on builtin ranked tensors with PyTorch's exact dtypes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXBASE_TD
#define KILN_DIALECT_FX_IR_FXBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def FX_Dialect : Dialect {
  let name = "fx";
  let cppNamespace = "::mlir::kiln::fx";
  let summary = "Kiln's graph-level dialect: ATen FX graphs with shape guards";
  let description = [{
    The `fx` dialect mirrors PyTorch's Core ATen opset. A captured graph is an
    `fx.graph` symbol whose body holds one op per ATen call, on builtin ranked
    tensors with value semantics. Element types keep PyTorch's dtypes exactly:
    signed integers are `si*`, `uint8` is `ui8`, `bool` is `i1`. Dimensions that
    are only known at run time are `?`; by Dynamo's 0/1 specialisation a `?`
    dimension is never 1, so broadcasting never depends on run-time sizes.

    Every op verifies its operand types and its result type (its shape
    function): broadcasting and PyTorch's type promotion are checked, not
    assumed.

    An `fx.graph` may carry shape guards (`FXAttrs.td`): its size symbols
    (`symbols = [#fx.symbol<...>]`), a `#fx.tensor_guard` per argument
    (`fx.guard`), and which results alias (`fx.aliases`) or which arguments
    are written in place (`fx.mutated`).
  }];
  let useDefaultAttributePrinterParser = 1;
  // Rejects the argument and result attributes of the guards (`fx.guard`,
  // `fx.mutated`, `fx.aliases`) where they are an op's attributes.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The argument attribute holding a `#fx.tensor_guard`.
    static constexpr ::llvm::StringLiteral kGuardAttrName = "fx.guard";
    /// The unit argument attribute saying the graph writes the argument.
    static constexpr ::llvm::StringLiteral kMutatedAttrName = "fx.mutated";
    /// The result attribute naming the argument the result may alias.
    static constexpr ::llvm::StringLiteral kAliasesAttrName = "fx.aliases";

  private:
    /// Registers the attributes of FXAttrs.td (FXAttrs.cpp).
    void registerAttributes();

  public:
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def FX_Bool : TypeAlias<I1, "bool (i1)">;

def FX_IntegerDtype : AnyTypeOf<[SI8, UI8, SI16, SI32, SI64],
                                 "PyTorch integer dtype">;
def FX_FloatDtype : AnyTypeOf<[F16, BF16, F32, F64], "PyTorch floating dtype">;
def FX_ComplexDtype : AnyTypeOf<[Complex<F32>, Complex<F64>],
                                "PyTorch complex dtype">;

def FX_Dtype : AnyTypeOf<[FX_Bool, FX_IntegerDtype, FX_FloatDtype,
                          FX_ComplexDtype], "PyTorch dtype">;
def FX_NumericDtype : AnyTypeOf<[FX_IntegerDtype, FX_FloatDtype,
                                 FX_ComplexDtype], "non-bool PyTorch dtype">;

def FX_RealDtype : AnyTypeOf<[FX_IntegerDtype, FX_FloatDtype],
                              "PyTorch integer or floating dtype">;

def FX_NonComplexDtype : AnyTypeOf<[FX_Bool, FX_IntegerDtype, FX_FloatDtype],
                                    "PyTorch bool, integer or floating dtype">;
def FX_IntegerOrBoolDtype : AnyTypeOf<[FX_Bool, FX_IntegerDtype],
                                      "PyTorch bool or integer dtype">;
def FX_FloatOrComplexDtype : AnyTypeOf<[FX_FloatDtype, FX_ComplexDtype],
                                       "PyTorch floating or complex dtype">;
// The dtypes of index tensors (torch.long and torch.int).
def FX_IndexDtype : AnyTypeOf<[SI64, SI32], "PyTorch index dtype (si64, si32)">;

def FX_Tensor : RankedTensorOf<[FX_Dtype]>;
def FX_RealTensor : RankedTensorOf<[FX_RealDtype]>;
def FX_NumericTensor : RankedTensorOf<[FX_NumericDtype]>;
def FX_NonComplexTensor : RankedTensorOf<[FX_NonComplexDtype]>;
def FX_IntegerOrBoolTensor : RankedTensorOf<[FX_IntegerOrBoolDtype]>;
def FX_FloatTensor : RankedTensorOf<[FX_FloatDtype]>;
def FX_FloatOrComplexTensor : RankedTensorOf<[FX_FloatOrComplexDtype]>;
def FX_ComplexTensor : RankedTensorOf<[FX_ComplexDtype]>;
def FX_BoolTensor : RankedTensorOf<[FX_Bool]>;
def FX_IndexTensor : RankedTensorOf<[FX_IndexDtype]>;
// An index tensor or a boolean mask, as `aten.index.Tensor` takes.
def FX_IndexOrMaskTensor : RankedTensorOf<[FX_IndexDtype, FX_Bool, UI8]>;
// The run-time seed of random ops.
def FX_SeedTensor : 0DTensorOf<[SI64]>;

//===----------------------------------------------------------------------===//
// Attribute constraints
//===----------------------------------------------------------------------===//

// A PyTorch `Scalar` argument: its kind (bool, int or float) takes part in
// type promotion as a wrapped number, so it keeps its own attribute type.
def FX_ScalarAttr : AnyAttrOf<[BoolAttr, I64Attr, F64Attr],
                              "PyTorch scalar (bool, i64 or f64)">;

// A PyTorch `ScalarType` argument: a dtype as a type attribute.
def FX_DtypeAttr : TypeAttrOf<FX_Dtype>;

// A `str` argument restricted to the values ATen accepts.
class FX_StrOneOf<list<string> values>
    : ConfinedAttr<StrAttr, [AttrConstraint<
          CPred<"::llvm::is_contained(::llvm::ArrayRef<::llvm::StringRef>{"
                # !interleave(!foreach(v, values, "\"" # v # "\""), ", ")
                # "}, ::llvm::cast<::mlir::StringAttr>($_self).getValue())">,
          "whose value is one of "
          # !interleave(!foreach(v, values, "'" # v # "'"), ", ")>]>;

def FX_GeluApproximationAttr : FX_StrOneOf<["none", "tanh"]>;
def FX_RoundingModeAttr : FX_StrOneOf<["trunc", "floor"]>;
def FX_ScatterReduceAttr : FX_StrOneOf<["sum", "prod", "mean", "amax", "amin"]>;

// The `bool[3] output_mask` of the backward ops.
def FX_OutputMaskAttr
    : ConfinedAttr<DenseBoolArrayAttr, [DenseArrayCount<3>]>;

// An `int[n]` padding list (two entries per padded dimension).
class FX_PaddingAttr<int n>
    : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<n>]>;

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

class FX_Op<string mnemonic, list<Trait> traits = []>
    : Op<FX_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_FX_IR_FXBASE_TD
