//===- Passes.td - Kiln's transforms of arith and math ops ---------------===//
//
// Part of Kiln. Rewrites of scalar and vector math that both targets' code
// generators run: no dialect of Kiln's own is involved.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ApproximateMathPass : Pass<"kiln-approximate-math"> {
  let summary = "Replaces math functions that CPUs lack with polynomials";
  let description = [{
    x86 has no instructions for `erf`, `exp`, `log`, `sin`, `cos` and their
    relatives, and LLVM turns a vector of them into one libm call per lane.
    This pass replaces f32 ones with polynomial approximations (accurate to
    a few ulp), which work on vectors as on scalars: MLIR's, but for sin and
    cos, whose reduction is Kiln's (Cody and Waite's, which keeps the
    digits of sin x near multiples of π, where upstream's does not), log and
    log2, whose subnormal arguments are scaled first, and tanh, whose
    polynomial serves |x| < 0.625 (beyond, (1 - e^-2|x|) / (1 + e^-2|x|),
    exactly ±1 far out); f64 `log1p`, `expm1` and `tanh` with Kahan's ratios
    (log(1 + x), e^x - 1 and math-expand-ops' tanh lose every digit of a
    tiny x); f32 `erfc` takes upstream's polynomial too; f32 `powf` is
    e^(y ln|x|) evaluated in f64 (in f32 it would err by |y ln x| ulp),
    with C99's special values. With
    `libm-erf` (CPUs), f64 `erf` and `erfc`, which have neither a polynomial
    here nor an LLVM intrinsic, call libm's, lane by lane.

    GPUs have libdevice; with `fast-exp` (for them) the pass approximates
    nothing, and f32 `math.exp(x)` becomes `math.exp2(x * log2(e))`,
    which NVIDIA GPUs compute with one instruction (`ex2.approx`), as Triton
    does: a few ulp, and a relative error that grows like |x| * 2^-24 from
    rounding the product, against libdevice's exact range reduction, which
    costs several times more instructions in exp-heavy kernels (softmax).
  }];
  let options = [
    Option<"fastExp", "fast-exp", "bool", /*default=*/"false",
           "Compute f32 exp as exp2 of a product (GPUs)">,
    Option<"libmErf", "libm-erf", "bool", /*default=*/"false",
           "Compute f64 erf and erfc with calls to libm (CPUs)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ContractFloatOpsPass : Pass<"kiln-contract-float-ops"> {
  let summary = "Lets the code generator fuse multiplies and adds (FMA)";
  let description = [{
    Marks floating-point multiplies, adds, subtractions and negations
    `contract`, so that LLVM may fuse a multiply and the add that uses it
    into one FMA, as nvcc
    (`--fmad=true`) and Triton do for PyTorch's own CUDA kernels: one
    rounding instead of two, and one instruction. Without the flag the NVPTX
    back end emits `mul.rn`/`add.rn`, which `ptxas` may not fuse either, and
    instruction-bound kernels (LayerNorm + GELU) pay for every pair. Casts
    stay as they are: `contract` on them would let a round trip through a
    narrower type fold away, and PyTorch rounds there.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // KILN_TRANSFORMS_PASSES_TD
