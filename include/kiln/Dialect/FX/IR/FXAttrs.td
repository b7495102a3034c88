//===- FXAttrs.td - fx dialect attributes: the shape guards ---------------===//
//
// Part of Kiln. The attributes that carry the shape guards of an `fx.graph`:
// the named size symbols of the graph (`#fx.symbol`) and what each tensor
// argument is assumed to be (`#fx.tensor_guard`). The compiled artifact
// assumes them and the runtime checks them before every call. See
// docs/Dialects/RationaleFX.md, "Shape guards".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_FX_IR_FXATTRS_TD
#define KILN_DIALECT_FX_IR_FXATTRS_TD

include "kiln/Dialect/FX/IR/FXBase.td"
include "mlir/IR/AttrTypeBase.td"

class FX_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FX_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// An optional integer parameter, printed bare.
class FX_OptionalIntParameter<string desc>
    : OptionalParameter<"std::optional<int64_t>", desc> {
  let printer = "$_printer << *$_self";
}

// The sizes of a tensor guard, `[s0, 4096]`: integers and bare symbol names,
// stored as i64 IntegerAttrs and StringAttrs.
def FX_GuardSizesParameter
    : AttrParameter<"::mlir::ArrayAttr",
                    "one entry per dimension: an i64 IntegerAttr (static) or "
                    "a StringAttr naming a size symbol"> {
  let parser = "parseGuardSizes($_parser)";
  let printer = "printGuardSizes($_printer, $_self)";
}

// The strides of a tensor guard, `[4096, 1]` or `[?, 1]`, with
// ShapedType::kDynamic for `?`; null when omitted (contiguous).
def FX_GuardStridesParameter
    : OptionalParameter<"::mlir::DenseI64ArrayAttr",
                        "strides in elements, `?` where not guarded"> {
  let parser = "parseGuardStrides($_parser)";
  let printer = "printGuardStrides($_printer, $_self)";
}

def FX_SymbolAttr : FX_Attr<"Symbol", "symbol"> {
  let summary = "A named size symbol with an inclusive range";
  let description = [{
    A size that is only known at run time, as Dynamo's shape environment
    names it (`s0`, `s1`, ...), with the inclusive range the graph was
    compiled for and, optionally, a divisor that the size is known to be a
    multiple of. `max` omitted means unbounded. The name is an identifier
    (letters, digits, `_`, not starting with a digit) so that guards can
    write it bare.

    `min` is at least 2: Dynamo specialises sizes 0 and 1, and Kiln's `?` is
    never 1 (broadcasting never depends on run-time sizes).

    A symbol derived from another (`of`) equals `scale * of + offset`
    (`scale` 1 and `offset` 0 when omitted): an input size that the shape
    environment knows as an expression of another's, such as `2*s0`, which
    the runtime checks as well as the range.

    ```mlir
    #fx.symbol<"s0", min = 2>
    #fx.symbol<"s1", min = 2, max = 4096, divisor = 8>
    #fx.symbol<"e0", min = 4, of = "s0", scale = 2>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the symbol's name">:$name,
    "int64_t":$min,
    FX_OptionalIntParameter<"the inclusive upper bound, none if unbounded">:$max,
    FX_OptionalIntParameter<"a known divisor of the size">:$divisor,
    StringRefParameter<"the symbol this one derives from, if any", "\"\"">:$of,
    FX_OptionalIntParameter<"the factor of `of`, 1 if omitted">:$scale,
    FX_OptionalIntParameter<"the term added to `scale * of`, 0 if omitted">:$offset
  );
  let assemblyFormat =
      "`<` $name `,` struct($min, $max, $divisor, $of, $scale, $offset) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether `size` lies in the symbol's range and is a multiple of its
    /// divisor: what the runtime checks of a bound size.
    bool admits(int64_t size) const;
    /// Whether the symbol is `scale * of + offset` for another symbol `of`.
    bool isDerived() const { return !getOf().empty(); }
  }];
}

def FX_TensorGuardAttr : FX_Attr<"TensorGuard", "tensor_guard"> {
  let summary = "What a compiled graph assumes about one tensor argument";
  let description = [{
    Attached to a graph argument as `fx.guard`. `sizes` has one entry per
    dimension: an integer for a static size (it restates the tensor type's)
    or the name of a size symbol of the graph (`symbols`) for a `?`
    dimension. Arguments that name the same symbol have equal sizes there.

    `strides` (in elements) has one entry per dimension, an integer or `?`
    for a stride that is not guarded; omitted, the tensor is contiguous
    (row-major). `align` is the alignment of the data pointer in bytes, a
    power of two; omitted, the element type's natural alignment. `device` is
    `"cpu"`, `"cuda"` (the current CUDA device) or `"cuda:N"`; omitted, the
    graph's device is not guarded.

    The dtype and the rank are the tensor type's.

    ```mlir
    #fx.tensor_guard<sizes = [s0, 4096]>
    #fx.tensor_guard<sizes = [s0, 4096], strides = [4096, 1], align = 16,
                     device = "cuda:0">
    ```
  }];
  let parameters = (ins
    FX_GuardSizesParameter:$sizes,
    FX_GuardStridesParameter:$strides,
    FX_OptionalIntParameter<"the data pointer's alignment in bytes">:$align,
    OptionalParameter<"::mlir::StringAttr", "the device">:$device
  );
  let assemblyFormat = "`<` struct($sizes, $strides, $align, $device) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The rank the guard describes.
    unsigned getRank() const { return getSizes().size(); }
    /// The symbol that dimension `dim` is guarded to, or null when the
    /// dimension is static.
    ::mlir::StringAttr getSizeSymbol(unsigned dim) const;
    /// The static size of dimension `dim`, or none when it is a symbol.
    std::optional<int64_t> getStaticSize(unsigned dim) const;
    /// Whether the guard requires a contiguous (row-major) tensor.
    bool isContiguous() const { return !getStrides(); }
  }];
}

#endif // KILN_DIALECT_FX_IR_FXATTRS_TD
