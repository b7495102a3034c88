"""Explicit attention found in traced graphs and rewritten into one fused
call (kiln.attention): which chains match, and that the rewritten graph
computes what the function does."""

import pytest

torch = pytest.importorskip("torch")

from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

from kiln.attention import (find_explicit_attention, fuse_explicit_attention,  # noqa: E402
                            reference_attention)
from kiln.backend import _record_values  # noqa: E402
from kiln.importer import DECOMPOSITIONS  # noqa: E402


def scaled(q, k, v):
    scores = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def divided_and_masked(q, k, v, mask):  # BERT's
    scores = torch.matmul(q, k.transpose(-1, -2)) / 4.0
    return torch.matmul(torch.softmax(scores + mask, dim=-1), v) * 2


def biased_unscaled(q, k, v, bias):  # T5's: a position bias, no scale
    scores = torch.matmul(q, k.permute(0, 1, 3, 2))
    return torch.matmul(torch.softmax(bias + scores, dim=-1), v)


def softmax_in_f32(q, k, v, mask):  # HuggingFace's eager attention, 16-bit
    weights = torch.matmul(q, k.transpose(2, 3)) * 0.5
    weights = weights + mask[:, :, :, : k.shape[-2]]
    weights = torch.nn.functional.softmax(weights, dim=-1, dtype=torch.float32).to(q.dtype)
    weights = torch.nn.functional.dropout(weights, p=0.0, training=False)
    return torch.matmul(weights, v)


def math_attention(q, k, v, mask):  # PyTorch's math SDPA of a 16-bit model, traced
    factor = 0.125 ** 0.5
    scores = torch.matmul(q.float() * factor, k.float().permute(0, 1, 3, 2) * factor) + mask
    weights = torch.softmax(scores, dim=-1)
    fully_masked = (scores == float("-inf")).all(dim=-1, keepdim=True)
    weights = torch.where(fully_masked, torch.zeros_like(weights), weights)
    return torch.matmul(weights, v.float()).to(q.dtype)


def heads_from_sequence(x, w):  # q, k, v split off one projection
    b, s, _ = x.shape
    q, k, v = (x @ w).view(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
    weights = torch.softmax(q @ k.transpose(-2, -1) * 0.25, dim=-1)
    return (weights @ v).transpose(1, 2).reshape(b, s, 16)


def weights_also_returned(q, k, v):
    weights = torch.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1)
    return torch.matmul(weights, v), weights


def softmax_over_queries(q, k, v):
    weights = torch.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-2)
    return torch.matmul(weights, v)


def scaled_by_a_tensor(q, k, v, c):
    weights = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * c, dim=-1)
    return torch.matmul(weights, v)


def three_dimensional(q, k, v):
    return torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1), v)


def zeroed_by_another_condition(q, k, v, keep):
    weights = torch.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1)
    weights = torch.where(keep, torch.zeros_like(weights), weights)
    return torch.matmul(weights, v)


def quantized_query(q, k, v):  # a cast from integers is kept
    q = (q * 4).to(torch.int32).to(q.dtype) / 4
    return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1), v)


def narrowed_values(q, k, v):  # v rounded to bf16 on its way
    weights = torch.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1)
    return torch.matmul(weights, v.bfloat16().float())


def two_in_a_row(q, k, v, mask):  # one attention's result is the next's query
    first = torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * 0.5, -1), v)
    scores = mask + torch.matmul(first, k.transpose(-1, -2)) * 0.5
    return torch.matmul(torch.softmax(scores, -1), v)


def qkv(*shape):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(*shape, generator=generator) for _ in range(3)]


MATCHED = [
    ("scaled", scaled, qkv(2, 3, 5, 4), 0.5),
    ("divided and masked", divided_and_masked,
     qkv(2, 3, 5, 4) + [torch.randn(2, 1, 1, 5)], 0.25),
    ("biased, unscaled", biased_unscaled, qkv(1, 2, 6, 4) + [torch.randn(1, 2, 6, 6)], 1.0),
    ("softmax in f32", softmax_in_f32,
     [t.bfloat16() for t in qkv(2, 3, 5, 4) + [torch.randn(2, 1, 5, 7)]], 0.5),
    # The query as its cast from integers, the division a scale.
    ("quantized query", quantized_query, qkv(2, 3, 5, 4), 0.25),
    ("PyTorch's math attention", math_attention,
     [t.bfloat16() for t in qkv(2, 3, 5, 4) + [torch.randn(2, 1, 1, 5)]], 0.125),
    ("mask first", two_in_a_row, qkv(2, 3, 5, 4) + [torch.randn(2, 1, 1, 5)], 0.5),
    ("heads from a sequence", heads_from_sequence,
     [torch.randn(2, 7, 16), torch.randn(16, 48)], 0.25),
]


def trace(fn, inputs):
    gm = make_fx(fn, decomposition_table=DECOMPOSITIONS)(*inputs)
    return gm, _record_values(gm, inputs)


@pytest.mark.parametrize("name, fn, inputs, scale", MATCHED, ids=[m[0] for m in MATCHED])
def test_explicit_attention_is_fused(name, fn, inputs, scale):
    gm, values = trace(fn, inputs)
    matches = find_explicit_attention(gm, values)
    assert matches and matches[0].scale == pytest.approx(scale)
    count = 2 if fn is two_in_a_row else 1
    assert fuse_explicit_attention(gm, values, reference_attention) == count
    # The chains are gone: fused calls, no products or softmax left.
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets.count(reference_attention) == count
    assert torch.ops.aten._softmax.default not in targets
    assert torch.ops.aten.bmm.default not in targets
    fresh = [torch.randn_like(t) for t in inputs]
    # Within the roundings of the dtypes each computes in (the fused call
    # in the operands').
    tolerance = 3e-2 if inputs[0].dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(gm(*fresh), fn(*fresh), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("fn, inputs", [
    (weights_also_returned, qkv(2, 3, 5, 4)),
    (softmax_over_queries, qkv(2, 3, 5, 4)),
    (scaled_by_a_tensor, qkv(2, 3, 5, 4) + [torch.tensor(0.5)]),
    (three_dimensional, qkv(6, 5, 4)),
    (zeroed_by_another_condition, qkv(2, 3, 5, 4) + [torch.rand(2, 3, 5, 1) > 0.5]),
    (narrowed_values, qkv(2, 3, 5, 4)),
], ids=["weights also returned", "softmax over queries", "scaled by a tensor",
        "three-dimensional", "zeroed by another condition", "narrowed values"])
def test_other_chains_are_left_alone(fn, inputs):
    gm, values = trace(fn, inputs)
    assert find_explicit_attention(gm, values) == []
    assert fuse_explicit_attention(gm, values, reference_attention) == 0


def _efficient_forward(q, k, v, bias, compute_log_sumexp, dropout_p=0.0):
    """Stands in for CUDA's memory-efficient attention: its four results,
    the Philox state on the CPU."""
    state = torch.zeros((), dtype=torch.int64)
    return q + k + v, q.sum(-1), state, state.clone()


def _efficient_backward(grad, q, k, v, bias, out, lse, seed, offset, dropout_p, mask):
    return grad * 2, grad * 3, grad * 4, None


@pytest.mark.parametrize("dropout_p", [0.0, 0.1])
def test_philox_state_is_detached(monkeypatch, dropout_p):
    """Without dropout, the forward's returned Philox seed and offset become
    unused_philox_state calls (Python) and the gradient reads zeros made on
    the regions' device instead of the CPU tensors; with dropout, or where
    the ops are library ops, the graph stays as it was."""
    import operator

    import kiln.attention
    from kiln.attention import detach_philox_state, unused_philox_state

    monkeypatch.setattr(kiln.attention, "_efficient_attention_ops",
                        lambda: (_efficient_forward, _efficient_backward))
    graph = torch.fx.Graph()
    q, k, v, grad = (graph.placeholder(name) for name in ("q", "k", "v", "grad"))
    forward = graph.call_function(_efficient_forward, (q, k, v, None, True, dropout_p))
    results = [graph.call_function(operator.getitem, (forward, i)) for i in range(4)]
    backward = graph.call_function(_efficient_backward, (grad, q, k, v, None, results[0],
                                                         results[1], results[2], results[3],
                                                         dropout_p, [True, True, True, False]))
    grads = [graph.call_function(operator.getitem, (backward, i)) for i in range(3)]
    graph.output((*results, *grads))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    inputs = [torch.randn(2, 3, 4, 8) for _ in range(4)]
    values = _record_values(gm, inputs)

    library = {str(_efficient_forward), str(_efficient_backward)}
    assert not detach_philox_state(gm, values, "cpu", library_ops=library)
    changed = detach_philox_state(gm, values, "cpu")
    assert changed == (dropout_p == 0.0)
    states = [n for n in gm.graph.nodes if n.target is unused_philox_state]
    zeros = [n for n in gm.graph.nodes if n.target is torch.ops.aten.full.default]
    if dropout_p:
        assert not states and not zeros
        return
    assert len(states) == 2 and len(zeros) == 2
    assert backward.args[7:9] == tuple(zeros)
    assert all(z.kwargs["dtype"] is torch.int64 for z in zeros)
    # The graph still computes what it did.
    got = gm(*inputs)
    assert torch.equal(got[2], torch.zeros((), dtype=torch.int64))
    assert torch.equal(got[4], inputs[3] * 2)
