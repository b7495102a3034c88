"""Kiln's flash-attention kernel (`attention-kernels`) against PyTorch: the
math in f32 from the same 16-bit inputs, and eager's fused attention."""

import math

import pytest
import torch

from e2e_support import poisoned_like

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")

# (batch, heads, queries, keys, head size, causal): tiles off every edge
# (128 queries per block, 64 keys per step, 32 above a head size of 64),
# one query, more queries than keys, head sizes from 16 to 128.
SHAPES = [
    (2, 3, 100, 70, 64, False),
    (2, 3, 100, 70, 64, True),
    (1, 2, 300, 333, 128, False),
    (1, 2, 333, 300, 128, True),
    (2, 1, 1, 7, 16, False),
    (1, 1, 129, 129, 32, True),
    (1, 2, 150, 97, 80, True),
    (1, 1, 64, 0, 64, False),
]


def reference(query, key, value, causal, scale):
    """Attention's math in f32."""
    scores = (query.float() @ key.float().transpose(-1, -2)) * scale
    if causal:
        hidden = torch.ones(scores.shape[-2:], dtype=torch.bool,
                            device=scores.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    if scores.shape[-1] == 0:
        return torch.zeros(*scores.shape[:-1], value.shape[-1], device=value.device)
    return scores.softmax(-1) @ value.float()


def attention_graph(shape, dtype, causal, dynamic):
    batch, heads, queries, keys, head, _ = shape
    element = {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
    # Sizes 0 and 1 are specialised, never dynamic.
    b, l, s = [("?" if dynamic and size > 1 else size) for size in (batch, queries, keys)]
    q = f"tensor<{b}x{heads}x{l}x{head}x{element}>"
    kv = f"tensor<{b}x{heads}x{s}x{head}x{element}>"
    empty = f"tensor<{b}x{heads}x0xf32>"
    flag = "true" if causal else "false"
    return f"""fx.graph @forward(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v {{compute_log_sumexp = false, is_causal = {flag}}} : ({q}, {kv}, {kv}) -> ({q}, {empty}, tensor<si64>, tensor<si64>)
  fx.output %0#0 : {q}
}}
"""


@cuda
@pytest.mark.parametrize("chip", [{}, {"chip": "sm_80"}], ids=["native", "sm_80"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[:5])) +
                         ("-causal" if s[5] else ""))
def test_cuda_attention_kernel(tmp_path, shape, dtype, dynamic, chip):
    """The kernel's result, written over poison, matches the math in f32 to
    the tolerance of the probabilities' rounding, and eager's fused
    attention likewise. On sm_90a, heads of 64 and 128 multiply with
    warpgroup MMA, others with mma.sync; the sm_80 code (mma.sync only) runs
    too, its PTX compiled by the driver."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    batch, heads, queries, keys, head, causal = shape
    path = compile_graph_text(attention_graph(shape, dtype, causal, dynamic),
                              target="cuda", options={"attention-kernels": True, **chip},
                              cache_dir=tmp_path)
    generator = torch.Generator().manual_seed(sum(shape[:5]))
    query, key, value = [
        torch.randn(batch, heads, rows, head, generator=generator).to("cuda", dtype)
        for rows in (queries, keys, keys)]
    out = poisoned_like(torch.empty(batch, heads, queries, head, device="cuda", dtype=dtype))
    Artifact(path)(query, key, value, out=[out])
    torch.cuda.synchronize()
    scale = 1 / math.sqrt(head)
    tolerance = {torch.bfloat16: 2e-2, torch.float16: 4e-3}[dtype]
    torch.testing.assert_close(out.float(), reference(query, key, value, causal, scale),
                               rtol=tolerance, atol=tolerance)
    if keys:
        eager = torch.nn.functional.scaled_dot_product_attention(query, key, value,
                                                                 is_causal=causal)
        torch.testing.assert_close(out, eager, rtol=tolerance, atol=tolerance)


@cuda
def test_cuda_written_out_attention_runs_as_the_kernel(tmp_path):
    """kiln.compile traces attention written out on CUDA (products around a
    softmax) as scaled_dot_product_attention, whose memory-efficient op
    runs as Kiln's kernel: no products in the graph; the result matches
    the function run in f32."""
    import kiln

    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1) @ v

    generator = torch.Generator().manual_seed(3)
    inputs = [torch.randn(2, 3, 100, 64, generator=generator).to("cuda", torch.bfloat16)
              for _ in range(3)]
    compiled = kiln.compile(attention, inputs, cache_dir=tmp_path)
    assert "scaled_dot_product_efficient_attention" in compiled.graph_text
    assert "fx.bmm" not in compiled.graph_text and "fx.mm " not in compiled.graph_text
    got = compiled(*inputs)
    torch.cuda.synchronize()
    want = attention(*[t.float() for t in inputs])
    torch.testing.assert_close(got.float(), want, rtol=2e-2, atol=2e-2)


def masked_reference(query, key, value, bias, scale):
    """Attention's math in f32 with an additive bias; rows with every key
    hidden are zeros, as PyTorch's scaled_dot_product_attention gives them."""
    scores = (query.float() @ key.float().transpose(-1, -2)) * scale + bias.float()
    hidden = (scores == float("-inf")).all(-1, keepdim=True)
    probabilities = scores.softmax(-1).masked_fill(hidden, 0)
    return probabilities @ value.float()


@cuda
@pytest.mark.parametrize("chip", [{}, {"chip": "sm_80"}], ids=["native", "sm_80"])
@pytest.mark.parametrize("head", [64, 128, 32])
@pytest.mark.parametrize("mask", ["additive", "boolean", "hidden-rows", "written-out"])
def test_cuda_masked_attention_kernel(tmp_path, mask, head, chip):
    """Masks reach the kernel's scores region through kiln.compile: an
    additive bf16 bias per batch, a boolean mask broadcast over batches and
    heads (SDPA makes it a bias of 0 and -inf), one that hides whole rows
    (zeros there), and attention written out with a mask (traced as SDPA).
    The result matches the math in f32, and eager's attention where no row
    is hidden."""
    import kiln

    batch, heads, queries, keys = 2, 3, 100, 70
    generator = torch.Generator().manual_seed(head + len(mask))
    query, key, value = [
        torch.randn(batch, heads, rows, head, generator=generator).to("cuda", torch.bfloat16)
        for rows in (queries, keys, keys)]
    if mask in ("additive", "written-out"):
        attn_mask = torch.randn(batch, 1, queries, keys, generator=generator).to(
            "cuda", torch.bfloat16)
    else:
        shape = (queries, keys) if mask == "boolean" else (batch, 1, queries, keys)
        attn_mask = (torch.rand(*shape, generator=generator) > 0.3).cuda()
        if mask == "hidden-rows":
            attn_mask[0, 0, 5] = False
            attn_mask[1, 0, 99] = False
    scale = 1 / math.sqrt(head)

    if mask == "written-out":
        def attention(q, k, v, m):
            return torch.softmax(q @ k.transpose(-1, -2) * scale + m, dim=-1) @ v
    else:
        def attention(q, k, v, m):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)

    inputs = [query, key, value, attn_mask]
    compiled = kiln.compile(attention, inputs, options=chip, cache_dir=tmp_path)
    assert "fx.bmm" not in compiled.graph_text
    got = compiled(*inputs)
    torch.cuda.synchronize()
    bias = attn_mask if attn_mask.dtype != torch.bool else torch.zeros(
        attn_mask.shape, device="cuda").masked_fill(~attn_mask, float("-inf"))
    want = masked_reference(query, key, value, bias, scale)
    torch.testing.assert_close(got.float(), want, rtol=2e-2, atol=2e-2)
    if mask != "hidden-rows":
        eager = torch.nn.functional.scaled_dot_product_attention(query, key, value,
                                                                 attn_mask=attn_mask)
        torch.testing.assert_close(got, eager, rtol=2e-2, atol=2e-2)


@cuda
@pytest.mark.parametrize("chip", [{}, {"chip": "sm_80"}], ids=["native", "sm_80"])
@pytest.mark.parametrize("head", [64, 128])
@pytest.mark.parametrize("mask", ["tensor", "positions"])
def test_cuda_soft_capped_attention_forms_the_kernel(tmp_path, mask, head, chip):
    """Attention written out with a soft cap (Gemma 2's tanh of the scaled
    scores), which no PyTorch kernel fuses, and a causal mask added to it:
    a tensor, or computed from the positions (which the node takes as
    `causal`, skipping hidden blocks). kiln-loop-form-attention makes it one
    loop.attention whose scores region caps and masks (tanh approximate).
    The result matches the function run in f32."""
    import kiln

    batch, heads, queries = 2, 4, 200
    generator = torch.Generator().manual_seed(head)
    inputs = [torch.randn(batch, heads, queries, head, generator=generator).to(
        "cuda", torch.bfloat16) for _ in range(3)]
    scale = head ** -0.5

    def capped(q, k):
        scores = q @ k.transpose(-1, -2) * scale
        return torch.tanh(scores / 5.0) * 5.0

    def probabilities_times(scores, v):
        return torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v

    if mask == "tensor":
        causal = torch.full((queries, queries), float("-inf")).triu(1).to("cuda", torch.bfloat16)
        inputs.append(causal)

        def attention(q, k, v, mask):
            return probabilities_times(capped(q, k) + mask, v)
    else:
        def attention(q, k, v):
            positions = torch.arange(q.shape[-2], device=q.device)
            later = positions[None, :] > positions[:, None]
            return probabilities_times(capped(q, k).masked_fill(later, float("-inf")), v)

    compiled = kiln.compile(attention, inputs, options=chip, cache_dir=tmp_path)
    out = compiled(*inputs)
    torch.cuda.synchronize()
    want = attention(*[t.float() for t in inputs])
    torch.testing.assert_close(out.float(), want, rtol=2e-2, atol=2e-2)
