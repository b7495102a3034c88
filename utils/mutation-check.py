#!/usr/bin/env python3
"""Plants plausible bugs in Kiln one at a time and reports which ones the
test suites miss: a check of the tests themselves, to run before a release
(not in CI: each mutation rebuilds and runs the suites).

    utils/mutation-check.py --list
    utils/mutation-check.py [--only NAME[,NAME...]] [--build-dir build]
                            [--pytest "python/tests/test_e2e.py python/tests/test_backend.py ..."]

For each mutation: the source is changed (the original text must occur
exactly once, else the mutation is reported stale), the build is updated
incrementally (C++ mutations), lit runs (C++ mutations), then pytest on the
chosen files (stopping at the first failure) if lit did not fail. The
source is restored whatever happens, and the build updated again at the
end. A mutation no suite catches is a test to write.
"""

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIT = "/usr/lib/llvm-22/bin/lit"


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    original: str
    mutated: str
    why: str  # The bug it plants, as a reviewer would miss it.


CATALOGUE = [
    # Identities of reductions.
    Mutation("signed-max-from-zero", "lib/Dialect/Loop/Utils/Combiners.cpp",
             ": llvm::APInt::getSignedMinValue(width);", ": llvm::APInt(width, 0);",
             "a signed integer max starts at 0, not the type's least value"),
    Mutation("signed-min-from-zero", "lib/Dialect/Loop/Utils/Combiners.cpp",
             ": llvm::APInt::getSignedMaxValue(width);", ": llvm::APInt(width, 0);",
             "a signed integer min starts at 0, not the type's greatest value"),
    Mutation("integer-product-from-zero", "lib/Dialect/Loop/Utils/Combiners.cpp",
             "      value = llvm::APInt(width, 1);", "      value = llvm::APInt(width, 0);",
             "an integer product starts at 0"),
    # Fusion legality.
    Mutation("epilogue-at-any-index", "lib/Dialect/Loop/Transforms/EpilogueFusion.cpp",
             "      if (!isLinearized(index, ivs, sizes))\n        return std::nullopt;",
             "      (void)isLinearized(index, ivs, sizes);",
             "a product's reader becomes its epilogue wherever it reads it"),
    Mutation("row-fusion-unaligned-reads", "lib/Dialect/Loop/Transforms/RowFusion.cpp",
             "isRowValue(load.getSource(), rows) && isRowAlignedLoad(load, rows);",
             "isRowValue(load.getSource(), rows);",
             "a row kernel takes readers of a row statistic at another row"),
    # Index arithmetic.
    Mutation("flip-off-by-one", "lib/Conversion/FXToLoop/ViewLowering.cpp",
             "                                  arith::ConstantIndexOp::create(b, loc, 1));\n"
             "                              indices[dim] =",
             "                                  arith::ConstantIndexOp::create(b, loc, 0));\n"
             "                              indices[dim] =",
             "flip reads size - i instead of size - 1 - i"),
    Mutation("negative-index-not-wrapped", "lib/Conversion/FXToLoop/LoweringUtils.cpp",
             "arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);\n"
             "  Value wrapped",
             "arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, zero, zero);\n"
             "  Value wrapped",
             "negative indices (gather, index_select) are not wrapped to size + i"),
    Mutation("strided-view-extent", "lib/Conversion/FXToLoop/LoweringUtils.cpp",
             "last += size == 0 ? 0 : (size - 1) * stride;",
             "last += size == 0 ? 0 : size * stride;",
             "a strided view's last element is taken one stride further"),
    # Numerics.
    Mutation("layer-norm-without-eps", "lib/Conversion/FXToLoop/NormalizationLowering.cpp",
             "              b, loc, arith::AddFOp::create(b, loc, variance, eps));\n"
             "        });\n\n"
             "    SmallVector<Value> operands = {input, moments.mean, rstd};",
             "              b, loc, variance);\n"
             "        });\n\n"
             "    SmallVector<Value> operands = {input, moments.mean, rstd};",
             "a normalization's rsqrt(var + eps) loses its eps"),
    Mutation("variance-without-correction", "lib/Conversion/FXToLoop/NormalizationLowering.cpp",
             "        Value exact = arith::SubFOp::create(nested, loc, elements[0], offset);",
             "        Value exact = elements[0];\n"
             "        (void)offset;",
             "variances square deviations from the rounded mean only"),
    Mutation("softmax-without-max", "lib/Conversion/FXToLoop/NormalizationLowering.cpp",
             "          return math::ExpOp::create(\n"
             "              b, loc, arith::SubFOp::create(b, loc, elements[0], elements[1]));\n"
             "        });\n"
             "    Value sum = buildReduction(rewriter, loc, exps, {dim}",
             "          return math::ExpOp::create(b, loc, elements[0]);\n"
             "        });\n"
             "    Value sum = buildReduction(rewriter, loc, exps, {dim}",
             "softmax exponentiates x, not x - max(x): right until exp overflows"),
    Mutation("divisor-never-zero", "lib/Conversion/FXToLoop/ElementwiseLowering.cpp",
             "arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero),",
             "arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, divisor, divisor),",
             "integer division trusts its divisor (a trap on 0)"),
    # The backend and the runtime.
    Mutation("merged-products-overlap", "python/kiln/products.py",
             "                start += product.columns", "                start += 0",
             "merged products' slices all start at the first one"),
    Mutation("merged-biases-reversed", "python/kiln/products.py",
             "([p.bias for p in products], 0)", "([p.bias for p in reversed(products)], 0)",
             "merged products' biases concatenated in the other order"),
    Mutation("dense-order-unchecked", "python/kiln/layouts.py",
             "    return order if value.permute(order).is_contiguous() else None",
             "    return order",
             "an input with gaps or overlaps is read as if dense in its stride order"),
    Mutation("plan-key-without-strides", "python/kiln/runtime.py",
             "key = [(t.dtype, t.shape, t.stride(), t.device,",
             "key = [(t.dtype, t.shape, t.device,",
             "a call's checks are skipped for inputs of other strides"),
    Mutation("misaligned-inputs-kept", "python/kiln/runtime.py",
             "    return tensor if tensor.data_ptr() % ALIGNMENT == 0 else tensor.clone()",
             "    return tensor",
             "inputs that are not 16-byte aligned reach kernels that assume it"),
    Mutation("conjugate-views-kept", "python/kiln/runtime.py",
             "    return tensor.resolve_conj().resolve_neg()", "    return tensor",
             "conjugate and negative views reach kernels as their stored data"),
    Mutation("cache-evicts-newest", "python/kiln/cache.py",
             "                  key=lambda entry: entry[1])",
             "                  key=lambda entry: -entry[1])",
             "the cache evicts the entries used most recently"),
    Mutation("cache-trusts-size", "python/kiln/cache.py",
             "        problem = _verify(link, size, sha256)\n        if problem:\n"
             "            _unlink(link)\n            return None, problem\n"
             "        _mark_used",
             "        problem = None\n        if problem:\n"
             "            _unlink(link)\n            return None, problem\n"
             "        _mark_used",
             "a cached artifact is loaded without checking its size and checksum"),
]


def stale_mutations():
    """The mutations whose original text is not in their source exactly once."""
    return [m for m in CATALOGUE if (ROOT / m.path).read_text().count(m.original) != 1]


def run(command, **kwargs) -> bool:
    return subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          **kwargs).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    parser.add_argument("--only", default="", help="comma-separated mutation names")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build")
    parser.add_argument("--pytest", default="python/tests/test_e2e.py python/tests/test_e2e_products.py "
                        "python/tests/test_e2e_runtime.py python/tests/test_backend.py "
                        "python/tests/test_layouts.py python/tests/test_cache.py",
                        help="the pytest files to run, space-separated")
    args = parser.parse_args()

    chosen = [m for m in CATALOGUE if not args.only or m.name in args.only.split(",")]
    if args.list:
        for m in chosen:
            print(f"{m.name:28} {m.path}: {m.why}")
        return 0
    env = dict(os.environ, PATH=f"{args.build_dir / 'bin'}{os.pathsep}{os.environ['PATH']}")
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    results = []
    for m in chosen:
        path = ROOT / m.path
        text = path.read_text()
        if text.count(m.original) != 1:
            results.append((m, "stale: its text is not in the source once"))
            continue
        start = time.time()
        try:
            path.write_text(text.replace(m.original, m.mutated))
            cpp = m.path.endswith((".cpp", ".h", ".td"))
            if cpp and not run(["ninja", "-C", str(args.build_dir)], cwd=ROOT):
                verdict = "caught by the build"
            elif cpp and not run([LIT, "-q", str(args.build_dir / "test")], cwd=ROOT, env=env):
                verdict = "caught by lit"
            elif not run([python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          *args.pytest.split()], cwd=ROOT, env=env):
                verdict = "caught by pytest"
            else:
                verdict = "MISSED"
        finally:
            path.write_text(text)
        results.append((m, f"{verdict} ({time.time() - start:.0f} s)"))
        print(f"{m.name:28} {results[-1][1]}", flush=True)
    if any(m.path.endswith((".cpp", ".h", ".td")) for m in chosen):
        run(["ninja", "-C", str(args.build_dir)], cwd=ROOT)
    missed = [m for m, verdict in results if verdict.startswith(("MISSED", "stale"))]
    print(f"\n{len(results) - len(missed)} of {len(results)} mutations caught")
    for m in missed:
        print(f"  {m.name}: {m.why} ({dict(results)[m]})")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
