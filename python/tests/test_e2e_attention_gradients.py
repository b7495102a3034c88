"""Kiln's kernels of attention's gradients (loop.attention_backward) and the
forward kernel's logsumexp, against autograd through the math in f32 from
the same 16-bit inputs, and against eager's fused attention."""

import pytest
import torch

from e2e_support import poisoned_like

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")

# (batch, heads, queries, keys, head size, causal): blocks off every edge
# (64 keys and 64 queries per block), more keys than queries and fewer, one
# query, head sizes from 16 to 128.
SHAPES = [
    (2, 3, 100, 70, 64, False),
    (2, 3, 100, 70, 64, True),
    (1, 2, 130, 200, 128, False),
    (1, 2, 200, 130, 128, True),
    (2, 1, 1, 7, 16, False),
    (1, 1, 129, 129, 32, True),
    (1, 2, 150, 97, 80, True),
]
ELEMENT = {torch.bfloat16: "bf16", torch.float16: "f16"}


def gradient_graph(shape, dtype, masked):
    """The CPU flash op and its gradient (what Kiln's importer gives a
    training step's attention), one graph: out, logsumexp, dq, dk, dv."""
    batch, heads, queries, keys, head, causal = shape
    element = ELEMENT[dtype]
    q = f"tensor<{batch}x{heads}x{queries}x{head}x{element}>"
    kv = f"tensor<{batch}x{heads}x{keys}x{head}x{element}>"
    lse = f"tensor<{batch}x{heads}x{queries}xf32>"
    mask = f"tensor<{queries}x{keys}x{element}>"
    flag = "true" if causal else "false"
    masking = " attn_mask(%mask)" if masked else ""
    mask_arg, mask_type = (f", %mask: {mask}", f", {mask}") if masked else ("", "")
    return f"""fx.graph @forward(%q: {q}, %k: {kv}, %v: {kv}, %do: {q}{mask_arg}) -> ({q}, {lse}, {q}, {kv}, {kv}) {{
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v{masking} {{is_causal = {flag}}} : ({q}, {kv}, {kv}{mask_type}) -> ({q}, {lse})
  %1:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %v, %0#0, %0#1{masking} {{dropout_p = 0.0 : f64, is_causal = {flag}}} : ({q}, {q}, {kv}, {kv}, {q}, {lse}{mask_type}) -> ({q}, {kv}, {kv})
  fx.output %0#0, %0#1, %1#0, %1#1, %1#2 : {q}, {lse}, {q}, {kv}, {kv}
}}
"""


def reference(query, key, value, grad, mask, causal):
    """out, logsumexp and the three gradients, by autograd through the math
    in f32."""
    query, key, value = (t.float().requires_grad_() for t in (query, key, value))
    scores = (query @ key.transpose(-1, -2)) / query.shape[-1] ** 0.5
    if mask is not None:
        scores = scores + mask.float()
    if causal:
        hidden = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    out = scores.softmax(-1) @ value
    grads = torch.autograd.grad(out, (query, key, value), grad.float())
    return [out.detach(), scores.logsumexp(-1).detach(), *grads]


def assert_near(got, want, tolerance, name):
    """The largest error, relative to the largest element of `want`."""
    error = (got.float() - want).abs().max().item()
    scale = max(want.abs().max().item(), 1e-6)
    assert error <= tolerance * scale, f"{name}: error {error:.3g} against {scale:.3g}"


@cuda
@pytest.mark.parametrize("chip", [{}, {"chip": "sm_80"}, {"warpgroup-attention-gradients": False}],
                         ids=["native", "sm_80", "mma-sync"])
@pytest.mark.parametrize("masked", [False, True], ids=["plain", "masked"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[:5])) +
                         ("-causal" if s[5] else ""))
def test_cuda_attention_gradients(tmp_path, shape, dtype, masked, chip):
    """The forward kernel's result and logsumexp and the backward kernels'
    gradients, written over poison, match autograd through the math in f32
    to the tolerance of the 16-bit probabilities, and eager's fused
    attention's gradients likewise. A mask (random, with -inf in places)
    runs in both kernels' scores regions. "native" runs sm_90a's
    warpgroup-MMA gradient kernel (heads of 64 and 128) where the GPU has
    it, else the two mma.sync kernels, which "mma-sync" runs everywhere."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    batch, heads, queries, keys, head, causal = shape
    path = compile_graph_text(gradient_graph(shape, dtype, masked), target="cuda",
                              options={"attention-kernels": True, **chip},
                              cache_dir=tmp_path)
    generator = torch.Generator().manual_seed(sum(shape[:5]) + masked)
    query, key, value = [
        torch.randn(batch, heads, rows, head, generator=generator).to("cuda", dtype)
        for rows in (queries, keys, keys)]
    grad = torch.randn(batch, heads, queries, head, generator=generator).to("cuda", dtype)
    mask = None
    inputs = [query, key, value, grad]
    if masked:
        mask = torch.randn(queries, keys, generator=generator)
        mask[torch.rand(queries, keys, generator=generator) < 0.1] = float("-inf")
        mask[:, 0] = 0  # every row keeps a key
        mask = mask.to("cuda", dtype)
        inputs.append(mask)
    def poisoned(rows):
        return poisoned_like(torch.empty(batch, heads, rows, head, device="cuda", dtype=dtype))

    outs = [poisoned(queries), torch.full((batch, heads, queries), float("nan"), device="cuda"),
            poisoned(queries), poisoned(keys), poisoned(keys)]
    Artifact(path)(*inputs, out=outs)
    torch.cuda.synchronize()
    want = reference(query, key, value, grad, mask, causal)
    tolerance = {torch.bfloat16: 2e-2, torch.float16: 5e-3}[dtype]
    for name, got, expected in zip(["out", "logsumexp", "dq", "dk", "dv"], outs, want):
        assert_near(got, expected, tolerance, name)
    # Eager's fused attention from the same inputs.
    leaves = [t.detach().requires_grad_() for t in (query, key, value)]
    eager = torch.nn.functional.scaled_dot_product_attention(
        *leaves, attn_mask=mask, is_causal=causal and mask is None)
    if mask is None or not causal:
        eager_grads = torch.autograd.grad(eager, leaves, grad)
        for name, got, expected in zip(["dq", "dk", "dv"], outs[2:], eager_grads):
            assert_near(got, expected.float(), 2 * tolerance, "eager " + name)


@cuda
@pytest.mark.parametrize("form", ["plain", "causal", "masked"])
def test_compiled_training_step(tmp_path, monkeypatch, form):
    """torch.compile(backend="kiln") of attention in a training step, with
    Kiln compiling CUDA's fused attention (library_ops=[]): AOTAutograd
    traces scaled_dot_product_attention as the memory-efficient kernel's
    ops, their Philox state stays out of the regions, and the forward and
    the gradient compile as Kiln's (nothing falls back). The output and the
    gradients of q, k and v (the queries scaled on their way in, a
    prologue) match eager's fused attention."""
    import kiln.backend
    from e2e_support import regions

    graphs = []
    compile_aten_graph = kiln.backend.compile_aten_graph

    def recording(*args, **kwargs):
        graphs.append(compile_aten_graph(*args, **kwargs))
        return graphs[-1]

    monkeypatch.setattr(kiln.backend, "compile_aten_graph", recording)
    causal = form == "causal"
    generator = torch.Generator().manual_seed(len(form))
    batch, heads, queries, keys, head = 2, 4, 100, 70 if not causal else 100, 64
    query, key, value = [
        torch.randn(batch, heads, rows, head, generator=generator).to("cuda", torch.bfloat16)
        for rows in (queries, keys, keys)]
    grad = torch.randn(batch, heads, queries, head, generator=generator).to("cuda", torch.bfloat16)
    mask = None
    if form == "masked":
        mask = torch.randn(1, 1, queries, keys, generator=generator)
        mask[..., 1:][torch.rand(1, 1, queries, keys - 1, generator=generator) < 0.1] = \
            float("-inf")
        mask = mask.to("cuda", torch.bfloat16)

    def attention(q, k, v, mask):
        return torch.nn.functional.scaled_dot_product_attention(q * 1.5, k, v, attn_mask=mask,
                                                                is_causal=causal)

    torch._dynamo.reset()
    compiled = torch.compile(attention, backend="kiln", options={
        "library_ops": [], "fallback": "error", "cache_dir": tmp_path})
    results = []
    for fn in (compiled, attention):
        leaves = [t.detach().requires_grad_() for t in (query, key, value)]
        out = fn(*leaves, mask)
        results.append([out, *torch.autograd.grad(out, leaves, grad)])
    torch._dynamo.reset()
    for name, got, want in zip(["out", "dq", "dk", "dv"], *results):
        assert_near(got, want.float(), 4e-2, name)
    texts = "\n".join(region.graph_text for gm in graphs for region in regions(gm))
    assert "fx.scaled_dot_product_efficient_attention " in texts, texts
    assert "fx.scaled_dot_product_efficient_attention_backward " in texts, texts
