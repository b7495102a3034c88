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
    A tensor node of the loop dialect: an op that defines one ranked tensor
    over an index space (`loop.pointwise`, `loop.reduce`, `loop.scatter`,
    `loop.matmul`, `loop.convolution`, `loop.attention`). Its result's dynamic sizes are operands of the node, so
    that asking a tensor's size never needs the node's elements.
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
      /*methodName=*/"getIndexSpaceShape">
  ];
}

#endif // KILN_DIALECT_LOOP_IR_LOOPINTERFACES_TD
