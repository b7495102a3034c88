//===- Passes.td - The host compiler's passes --------------*- tablegen -*-===//
//
// Part of Kiln's embedding example.
//
//===----------------------------------------------------------------------===//

#ifndef HOST_PASSES_TD
#define HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def HostToFXPass : Pass<"host-to-fx", "::mlir::ModuleOp"> {
  let summary = "Lowers host functions to Kiln's fx graphs";
  let description = [{
    Each `host.func` becomes an `fx.graph` of the same name and type, and its
    ops the fx ops of the same meaning: `host.add` to `fx.add`, `host.mul` to
    `fx.mul`, `host.relu` to `fx.relu`, `host.return` to `fx.output`. The
    result is the input of Kiln's pipelines.
  }];
  let dependentDialects = ["::mlir::kiln::fx::FXDialect"];
}

#endif // HOST_PASSES_TD
