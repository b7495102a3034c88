#!/usr/bin/env python3
"""Runs a few Kiln-compiled graphs on the GPU once, for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 utils/sanitize-check.py

Small shapes with ragged edges (row kernels, library GEMMs with bias and
epilogue splits, merged-batch attention, atomic scatters); each result is
checked against eager. Compile first without the sanitizer (the on-disk cache then serves
the sanitized run): python3 utils/sanitize-check.py --compile-only
"""

import sys

import torch
import torch.nn.functional as F

import kiln


def workloads():
    def bf16(*shape):
        return torch.randn(*shape, device="cuda").to(torch.bfloat16)

    def mlp(x, w1, b1, w2, b2):
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)

    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1) @ v

    def layer_norm_gelu(x, r, w, b):
        return F.gelu(F.layer_norm(x + r, (x.shape[-1],), w, b)) * 0.5 + x

    yield "mlp", mlp, [bf16(37, 72), bf16(200, 72), bf16(200), bf16(72, 200), bf16(72)]
    yield "attention", attention, [bf16(2, 3, 33, 40), bf16(2, 3, 45, 40), bf16(2, 3, 45, 40)]
    yield "layer norm + gelu", layer_norm_gelu, [bf16(19, 1000), bf16(19, 1000), bf16(1000),
                                                 bf16(1000)]
    # Atomic additions at indices from data, duplicates and the last row
    # included.
    ids = torch.randint(0, 300, (37,), device="cuda")
    ids[:5] = 299
    yield "embedding gradient", lambda g, i: torch.ops.aten.embedding_dense_backward(
        g, i, 300, -1, False), [torch.randn(37, 50, device="cuda"), ids]
    yield "relu(linear) f32", lambda x, w, b: torch.relu(F.linear(x, w, b)), [
        torch.randn(29, 50, device="cuda"), torch.randn(31, 50, device="cuda"),
        torch.randn(31, device="cuda")]


def main():
    compile_only = "--compile-only" in sys.argv
    torch.manual_seed(0)
    failures = 0
    for name, fn, inputs in workloads():
        compiled = kiln.compile(fn, inputs)
        if compile_only:
            continue
        got = compiled(*inputs)
        torch.cuda.synchronize()
        reference = fn(*[t.double() if t.is_floating_point() else t for t in inputs])
        error = (got.double() - reference).abs().max().item()
        eager_error = (fn(*inputs).double() - reference).abs().max().item()
        ok = error <= 2 * eager_error + 1e-6
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: max error {error:.3g} (eager {eager_error:.3g})")
    print("sanitize-check: compiled" if compile_only else
          f"sanitize-check: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
