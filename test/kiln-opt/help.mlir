// Tests that kiln-opt lists Kiln's passes and pipelines, and only the
// upstream passes Kiln uses.
// RUN: kiln-opt --help | FileCheck %s
// CHECK: OVERVIEW: Kiln optimizer driver
// CHECK-DAG: --canonicalize
// CHECK-DAG: --cse
// CHECK-DAG: --kiln-fx-to-loop
// CHECK-DAG: --kiln-loop-inline
// CHECK-DAG: --kiln-lower-to-loop
// RUN: kiln-opt --help | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE-NOT: --convert-gpu-to-spirv
// NEGATIVE-NOT: --convert-scf-to-spirv
