//===- LoopInterfaces.td - loop dialect interfaces -----------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPINTERFACES_TD
#define KILN_DIALECT_LOOP_IR_LOOPINTERFACES_TD

include "mlir/IR/OpBase.td"

def Loop_NodeOpInterface : OpInterface<"LoopNodeOpInterface"> {
  let cppNamespace = "::mlir::kiln::loop";
  let description = [{
    A tensor node of the loop dialect: an op that defines ranked tensors
    over an index space (`loop.pointwise`, `loop.reduce`, `loop.scatter`,
    `loop.matmul`, `loop.convolution`, `loop.attention`,
    `loop.attention_backward`); all but the attention nodes define one. Its
    results' dynamic sizes are operands of the node, so that asking a
    tensor's size never needs the node's elements.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"The type of the tensor the node defines.",
      /*retTy=*/"::mlir::RankedTensorType",
      /*methodName=*/"getResultType">,
    InterfaceMethod<
      /*desc=*/"The sizes of the result's dynamic dimensions, in order.",
      /*retTy=*/"::mlir::ValueRange",
      /*methodName=*/"getDynamicSizes">,
    InterfaceMethod<
      /*desc=*/[{
        The sizes of the index space that the body's leading `index`
        arguments run over, in order (`ShapedType::kDynamic` where dynamic):
        the result's dimensions for `loop.pointwise` and a `loop.matmul`'s
        epilogue, then the reduction dimensions for `loop.reduce`, the
        update dimensions for `loop.scatter`.
      }],
      /*retTy=*/"::llvm::SmallVector<int64_t>",
      /*methodName=*/"getIndexSpaceShape">,
    InterfaceMethod<
      /*desc=*/[{
        The dynamic sizes of result `index`, in order: those of the result
        for a node of one result and for `loop.attention`'s logsumexp (the
        result's leading dimensions).
      }],
      /*retTy=*/"::mlir::ValueRange",
      /*methodName=*/"getResultDynamicSizes",
      /*args=*/(ins "unsigned":$index),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{ return $_op.getDynamicSizes(); }]>
  ];
}

#endif // KILN_DIALECT_LOOP_IR_LOOPINTERFACES_TD
