//===- Registration.cpp - Registering Kiln, C API -------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln-c/Registration.h"

#include "kiln/InitKiln.h"
#include "mlir/CAPI/IR.h"
#include <mutex>

void kilnRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::kiln::registerAllKilnDialects(*unwrap(registry));
}

void kilnRegisterAllTranslations(MlirDialectRegistry registry) {
  mlir::kiln::registerAllKilnTranslations(*unwrap(registry));
}

void kilnRegisterAllPasses(void) {
  // The pass registry is global and refuses a pipeline registered twice.
  static std::once_flag registered;
  std::call_once(registered, [] { mlir::kiln::registerAllKilnPasses(); });
}
