//===- LoopBase.td - loop dialect definition -----------------------------===//
//
// Part of Kiln. The loop dialect is Kiln's loop level: each node computes one
// tensor over an index space with a scalar body. Inlining and fusion happen here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPBASE_TD
#define KILN_DIALECT_LOOP_IR_LOOPBASE_TD

include "mlir/IR/OpBase.td"

def Loop_Dialect : Dialect {
  let name = "loop";
  let cppNamespace = "::mlir::kiln::loop";
  let summary = "Kiln's loop-level dialect: index spaces with scalar bodies";
  let description = [{
    A `loop` node defines one tensor by saying, for every index of its index
    space, how to compute that element: a region of scalar `arith`/`math` ops
    that reads other tensors through `loop.load`. Nodes keep value semantics
    (they produce tensors), so a pointwise producer can be inlined into its
    consumers by substituting its body for their loads.

    Scalars inside bodies are signless: a load from a `tensor<...xsi64>` yields
    an `i64`, and the lowering from `fx` picks signed or unsigned arithmetic
    from the tensor's dtype.
  }];
  // Canonicalization makes tensor reshapes of copies that only reshape.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  // Folds `tensor.dim` of a node's result to the node's size operand, and
  // copies that only reshape to reshapes.
  let hasCanonicalizer = 1;
  // `#loop.kind<...>`, the combining kind (LoopAttrs.td).
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
  private:
    /// Registers the attributes of LoopAttrs.td (LoopAttrs.cpp).
    void registerAttributes();

  public:
  }];
}

class Loop_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loop_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_LOOP_IR_LOOPBASE_TD
