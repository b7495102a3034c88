/*===- c-api-compiler.c - A C compiler that embeds Kiln -------------------===*\
|*                                                                            *|
|* Part of Kiln's embedding example. Uses Kiln through its C API only: lowers *|
|* an fx graph to loop nodes and prints it, compiles it into a shared object, *|
|* loads it and runs it.                                                      *|
|*                                                                            *|
|*   c-api-compiler graph.mlir artifact.so                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln-c/Compiler.h"
#include "kiln-c/Registration.h"
#include "mlir-c/IR.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* The graph this program runs: @scale_shift(x, y) on 2x3 f32 tensors. */
enum { kNumElements = 6 };
typedef int32_t (*RunFn)(void *const *, void *const *, const int64_t *, void *);

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirStringRef str(const char *text) {
  return mlirStringRefCreateFromCString(text);
}

/* Loads the artifact and runs @scale_shift on inputs 0.5 * (i + 1) * (j - 2)
   (argument i, element j). */
static int run(const char *artifact) {
  void *library = dlopen(artifact, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "c-api-compiler: %s\n", dlerror());
    return 1;
  }
  const char *signature =
      (const char *)dlsym(library, "kiln_scale_shift_signature");
  RunFn runGraph = (RunFn)dlsym(library, "kiln_scale_shift_run");
  if (!signature || !runGraph) {
    fprintf(stderr, "c-api-compiler: the artifact lacks @scale_shift\n");
    return 1;
  }
  _Alignas(16) float x[kNumElements], y[kNumElements], out[kNumElements];
  for (int j = 0; j < kNumElements; ++j) {
    x[j] = 0.5f * (float)(j - 2);
    y[j] = 1.0f * (float)(j - 2);
    out[j] = -7.0f;
  }
  void *inputs[2] = {x, y};
  void *outputs[1] = {out};
  printf("== run @scale_shift\nsignature: %s\n", signature);
  if (runGraph(inputs, outputs, NULL, NULL) != 0)
    return 1;
  printf("result 0:");
  for (int j = 0; j < kNumElements; ++j)
    printf(" %g", out[j]);
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c-api-compiler graph.mlir artifact.so\n");
    return 2;
  }
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  kilnRegisterAllDialects(registry);
  kilnRegisterAllTranslations(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  kilnRegisterAllPasses();

  /* A named pipeline: the loop nodes Kiln makes of the graph. */
  MlirModule module = mlirModuleCreateParseFromFile(context, str(argv[1]));
  if (mlirModuleIsNull(module) || mlirLogicalResultIsFailure(kilnRunPipeline(
                                      module, str("kiln-lower-to-loop"))))
    return 1;
  printf("== loop nodes\n");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);

  /* The whole compiler, from the graph again. */
  module = mlirModuleCreateParseFromFile(context, str(argv[1]));
  MlirLogicalResult compiled = kilnCompileToSharedObject(
      module, str("cpu"), str(""), str(KILN_LIBRARY_DIR), str(argv[2]));
  mlirModuleDestroy(module);
  int status = mlirLogicalResultIsFailure(compiled) ? 1 : run(argv[2]);
  mlirContextDestroy(context);
  return status;
}
