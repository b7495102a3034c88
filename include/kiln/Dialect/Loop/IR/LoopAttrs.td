//===- LoopAttrs.td - loop dialect attributes ----------------------------===//
//
// Part of Kiln. The combining kinds of loop.reduce and loop.scatter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPATTRS_TD
#define KILN_DIALECT_LOOP_IR_LOOPATTRS_TD

include "kiln/Dialect/Loop/IR/LoopBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Loop_CombiningKind : I32EnumAttr<"CombiningKind",
    "how a reduction or a scatter combines values", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"prod", 1>,
      I32EnumAttrCase<"max", 2>,
      I32EnumAttrCase<"min", 3>,
      I32EnumAttrCase<"welford", 4>,
      I32EnumAttrCase<"assign", 5>
    ]> {
  let cppNamespace = "::mlir::kiln::loop";
  let genSpecializedAttr = 0;
  let description = [{
    "sum", "prod", "max" and "min" combine values arithmetically (max and
    min propagate NaN, as PyTorch's do). "welford" (loop.reduce only, floats
    only) accumulates the values' count, mean and sum of squared deviations
    (M2) and yields M2. "assign" (loop.scatter only) keeps one of the values
    at an element, unspecified which. `Combiners.h` (in
    `include/kiln/Dialect/Loop/Utils`) holds each kind's identity and
    combine rule.
  }];
}

def Loop_CombiningKindAttr : EnumAttr<Loop_Dialect, Loop_CombiningKind,
                                      "kind"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // KILN_DIALECT_LOOP_IR_LOOPATTRS_TD
