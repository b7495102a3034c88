// RUN: kiln-opt %s -split-input-file --kiln-row-kernel-occupancy='min-blocks-per-sm=6' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-row-kernel-occupancy | FileCheck %s --check-prefix=OFF

// Row kernels (kiln_rows, with outlining's suffixes) get nvvm.minctasm;
// other kernels and functions that are not kernels do not. Without the
// option nothing changes.
// CHECK-LABEL: gpu.func @kiln_rows(
// CHECK-SAME: nvvm.minctasm = 6 : i32
// CHECK-LABEL: gpu.func @kiln_rows_0(
// CHECK-SAME: nvvm.minctasm = 6 : i32
// CHECK-LABEL: gpu.func @kiln_pointwise(
// CHECK-NOT: nvvm.minctasm
// CHECK-LABEL: gpu.func @kiln_rows_helper(
// CHECK-NOT: nvvm.minctasm
// OFF-NOT: nvvm.minctasm
module attributes {gpu.container_module} {
  gpu.module @kiln_rows {
    gpu.func @kiln_rows() kernel {
      gpu.return
    }
    gpu.func @kiln_rows_0() kernel {
      gpu.return
    }
    gpu.func @kiln_pointwise() kernel {
      gpu.return
    }
    gpu.func @kiln_rows_helper() {
      gpu.return
    }
  }
}
