/*===- kiln-capi-test.c - Tests of Kiln's C API ---------------------------===*\
|*                                                                            *|
|* Part of Kiln. Drives Kiln through its C API only, as a compiler built on   *|
|* MLIR's C API would: pipelines, their errors, and compiling a graph into a  *|
|* shared object that it then loads and runs.                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: kiln-capi-test %t.so 2>&1 | FileCheck %s

#include "kiln-c/Compiler.h"
#include "kiln-c/Registration.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *graph =
    "fx.graph @forward(%x: tensor<4xf32>, %y: tensor<4xf32>)\n"
    "    -> tensor<4xf32> {\n"
    "  %0 = fx.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  %1 = fx.relu %0 : tensor<4xf32>\n"
    "  fx.output %1 : tensor<4xf32>\n"
    "}\n";

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

/* Prints every diagnostic with its location, as a compiler would show it. */
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirLocationPrint(mlirDiagnosticGetLocation(diagnostic), printToStdout, NULL);
  printf(": ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  kilnRegisterAllDialects(registry);
  kilnRegisterAllTranslations(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);
  return context;
}

/* A named pipeline on a parsed module: fx graphs become fused loop nodes. */
static int testLowerToLoop(MlirContext context) {
  printf("== lower to loop\n");
  MlirModule module;
  if (mlirLogicalResultIsFailure(kilnParseAndRunPipeline(
          context, mlirStringRefCreateFromCString(graph),
          mlirStringRefCreateFromCString("kiln-lower-to-loop{inline=true}"),
          &module)))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);
  return 0;
  // CHECK-LABEL: == lower to loop
  // CHECK: fx.graph @forward
  // CHECK: loop.pointwise
  // CHECK-NOT: loop.pointwise
  // CHECK: fx.output
}

/* An anchored pipeline runs exactly the passes it names. */
static int testAnchoredPipeline(MlirContext context) {
  printf("== anchored\n");
  MlirModule module;
  if (mlirLogicalResultIsFailure(kilnParseAndRunPipeline(
          context, mlirStringRefCreateFromCString(graph),
          mlirStringRefCreateFromCString(
              "builtin.module(fx.graph(kiln-fx-to-loop))"),
          &module)))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);
  return 0;
  // Without kiln-loop-inline, each op stays its own node.
  // CHECK-LABEL: == anchored
  // CHECK: loop.pointwise
  // CHECK: loop.pointwise
  // CHECK: fx.output
}

/* Every failure is a failed result and a diagnostic; nothing aborts. */
static int testErrors(MlirContext context) {
  printf("== errors\n");
  MlirModule module;
  MlirLogicalResult result = kilnParseAndRunPipeline(
      context, mlirStringRefCreateFromCString(graph),
      mlirStringRefCreateFromCString("kiln-no-such-pipeline"), &module);
  printf("unknown pipeline: %s, module %s\n",
         mlirLogicalResultIsFailure(result) ? "failed" : "succeeded",
         mlirModuleIsNull(module) ? "null" : "set");
  // CHECK-LABEL: == errors
  // CHECK: diagnostic: {{.*}}: invalid pass pipeline 'kiln-no-such-pipeline':
  // CHECK-SAME: kiln-no-such-pipeline
  // CHECK: unknown pipeline: failed, module null

  result = kilnParseAndRunPipeline(
      context,
      mlirStringRefCreateFromCString(
          "fx.graph @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  %0 = fx.relu %x\n}\n"),
      mlirStringRefCreateFromCString("kiln-lower-to-loop"), &module);
  printf("malformed: %s\n",
         mlirLogicalResultIsFailure(result) ? "failed" : "succeeded");
  // CHECK: diagnostic: loc({{.*}}:2:18): expected ':'
  // CHECK: malformed: failed

  // MLIR's parser would crash on a dense array of index.
  result = kilnParseAndRunPipeline(
      context,
      mlirStringRefCreateFromCString(
          "fx.graph @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  %0 = fx.sum %x {dim = array<index: 0>} : tensor<4xf32>\n}\n"),
      mlirStringRefCreateFromCString("kiln-lower-to-loop"), &module);
  printf("index array: %s\n",
         mlirLogicalResultIsFailure(result) ? "failed" : "succeeded");
  // CHECK: diagnostic: loc({{.*}}:2:25): dense arrays of `index` are not
  // supported CHECK: index array: failed

  module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(graph));
  result = kilnCompileToSharedObject(
      module, mlirStringRefCreateFromCString("tpu"),
      mlirStringRefCreateFromCString(""), mlirStringRefCreateFromCString(""),
      mlirStringRefCreateFromCString("/nonexistent/graph.so"));
  printf("unknown target: %s\n",
         mlirLogicalResultIsFailure(result) ? "failed" : "succeeded");
  // CHECK: diagnostic: {{.*}}: unknown target 'tpu'; expected 'cpu' or 'cuda'
  // CHECK: unknown target: failed

  result = kilnCompileToSharedObject(
      module, mlirStringRefCreateFromCString("cpu"),
      mlirStringRefCreateFromCString("no-such-option=1"),
      mlirStringRefCreateFromCString(""),
      mlirStringRefCreateFromCString("/nonexistent/graph.so"));
  printf("bad options: %s\n",
         mlirLogicalResultIsFailure(result) ? "failed" : "succeeded");
  mlirModuleDestroy(module);
  return 0;
  // CHECK: diagnostic: {{.*}}: invalid kiln-cpu-pipeline options
  // CHECK-SAME: 'no-such-option=1': {{.*}}no such option no-such-option
  // CHECK: bad options: failed
}

typedef int32_t (*RunFn)(void *const *, void *const *, const int64_t *, void *);

/* The whole compiler: a shared object with Kiln's entry points, loaded and
   run here. */
static int testCompile(MlirContext context, const char *artifact) {
  printf("== compile\n");
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(graph));
  MlirLogicalResult result = kilnCompileToSharedObject(
      module, mlirStringRefCreateFromCString("cpu"),
      mlirStringRefCreateFromCString("vector-bytes=16"),
      mlirStringRefCreateFromCString(""),
      mlirStringRefCreateFromCString(artifact));
  mlirModuleDestroy(module);
  if (mlirLogicalResultIsFailure(result))
    return 1;

  void *library = dlopen(artifact, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  const char *signature =
      (const char *)dlsym(library, "kiln_forward_signature");
  RunFn run = (RunFn)dlsym(library, "kiln_forward_run");
  if (!signature || !run) {
    printf("missing entry points\n");
    return 1;
  }
  printf("signature: %s\n", signature);
  _Alignas(16) float x[4] = {1.5f, -2.0f, 3.0f, 0.25f};
  _Alignas(16) float y[4] = {2.0f, 4.0f, -1.0f, 8.0f};
  _Alignas(16) float out[4] = {-7.0f, -7.0f, -7.0f, -7.0f};
  void *inputs[2] = {x, y};
  void *outputs[1] = {out};
  int32_t status = run(inputs, outputs, NULL, NULL);
  printf("run: %d, result: %g %g %g %g\n", status, out[0], out[1], out[2],
         out[3]);
  dlclose(library);
  return 0;
  // CHECK-LABEL: == compile
  // CHECK: signature: (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: run: 0, result: 3 0 0 2
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: kiln-capi-test ARTIFACT.so\n");
    return 2;
  }
  kilnRegisterAllPasses();
  /* A second registration must be harmless. */
  kilnRegisterAllPasses();
  MlirContext context = createContext();
  int failures = testLowerToLoop(context) + testAnchoredPipeline(context) +
                 testErrors(context) + testCompile(context, argv[1]);
  mlirContextDestroy(context);
  printf("failures: %d\n", failures);
  return failures != 0;
  // CHECK: failures: 0
}
