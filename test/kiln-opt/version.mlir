// The tools print the project's one version (kiln/__init__.py's) after LLVM's.
// RUN: kiln-opt --version | FileCheck %s -DVERSION=%kiln_version
// RUN: kiln-compile --version | FileCheck %s -DVERSION=%kiln_version
// CHECK: LLVM version 22
// CHECK: Kiln version [[VERSION]]{{$}}
