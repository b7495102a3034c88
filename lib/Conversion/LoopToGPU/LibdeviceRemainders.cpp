//===- LibdeviceRemainders.cpp - Float remainders as libdevice calls ------===//
//
// Part of Kiln. The NVVM target's part of kiln-loop-to-gpu: libdevice's fmod
// for the kernels' float remainders.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::kiln;

void mlir::kiln::callLibdeviceForRemainders(ModuleOp module) {
  SmallVector<arith::RemFOp> remainders;
  module.walk([&](gpu::LaunchOp launch) {
    launch.walk([&](arith::RemFOp op) { remainders.push_back(op); });
  });
  for (arith::RemFOp op : remainders) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    Type callType = type.isF64() ? type : b.getF32Type();
    StringRef name = type.isF64() ? "__nv_fmod" : "__nv_fmodf";
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function) {
      OpBuilder atEnd = OpBuilder::atBlockEnd(module.getBody());
      function = func::FuncOp::create(
          atEnd, loc, name,
          atEnd.getFunctionType({callType, callType}, {callType}));
      function.setPrivate();
    }
    auto widen = [&](Value value) -> Value {
      return value.getType() == callType
                 ? value
                 : arith::ExtFOp::create(b, loc, callType, value);
    };
    Value result =
        func::CallOp::create(b, loc, function,
                             ValueRange{widen(op.getLhs()), widen(op.getRhs())})
            .getResult(0);
    if (type != callType)
      result = arith::TruncFOp::create(b, loc, type, result);
    op.replaceAllUsesWith(result);
    op.erase();
  }
}
