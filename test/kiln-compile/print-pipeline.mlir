// Tests that --print-pipeline prints the target's pass pipeline with every
// option's value, defaults or those given, without reading an input, and
// that bad options still fail.
// RUN: kiln-compile --print-pipeline --target=cuda | FileCheck %s --check-prefix=CUDA
// CUDA: builtin.module(fx.graph(kiln-fx-to-loop{
// CUDA-SAME: device-asserts=true
// CUDA-SAME: direct-convolution-depth=64
// CUDA-SAME: runtime-checks=false
// CUDA-SAME: kiln-loop-expand-convolutions{direct-depth=64 library=true}
// RUN: kiln-compile --print-pipeline --target=cuda --pipeline-options='direct-convolution-depth=9 device-asserts=false' | FileCheck %s --check-prefix=GIVEN
// GIVEN: kiln-fx-to-loop{
// GIVEN-SAME: device-asserts=false
// GIVEN-SAME: direct-convolution-depth=9
// GIVEN-SAME: kiln-loop-expand-convolutions{direct-depth=9
// RUN: kiln-compile --print-pipeline --target=cpu | FileCheck %s --check-prefix=CPU
// CPU: kiln-fx-to-loop{
// CPU-SAME: device-asserts=false
// CPU-SAME: runtime-checks=true
// CPU-SAME: kiln-loop-expand-convolutions{direct-depth=64 library=false}
// RUN: not kiln-compile --print-pipeline --target=cuda --pipeline-options='direct-depth=9' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: kiln-compile: {{.*}}direct-depth
