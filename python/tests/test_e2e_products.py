"""End to end (see test_e2e.py): matrix products on both targets (register
tiles, dot products, AMX tiles, cuBLASLt, Kiln's tensor-core kernels),
frozen weights, and attention as written.
"""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from e2e_support import TOLERANCES, GEMM_TOLERANCES, DEVICES, device, check, fresh, F32  # noqa: E402,F401


def test_products_returned_reshaped(device, tmp_path):
    # A language model's logits: the product of [B*S, K] rows is returned as
    # [B, S, V] and stored straight into the result, with V not a multiple
    # of a vector (GPT-2's 50257); also merged, and returned twice.
    def fn(h, w, a, b):
        logits = torch.nn.functional.linear(h, w)
        product = torch.bmm(a, b)
        return logits, product.reshape(-1, 9), product

    shapes = [((2, 5, 32), F32), ((37, 32), F32), ((3, 4, 16), F32), ((3, 16, 9), F32)]
    compiled = check(fn, shapes, device=device, tmp_path=tmp_path,
                     tolerances={F32: (1e-4, 1e-5)})
    lowered = kiln.run_opt(compiled.graph_text, ["--kiln-lower-to-loop"])
    assert "loop.pointwise" not in lowered, lowered


class _FrozenModel(torch.nn.Module):
    """Parameters of several dtypes, an index buffer, a 0-d buffer, a bool
    mask, and a weight read under two names (tied)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 24)
        self.norm = torch.nn.LayerNorm(24)
        self.half_scale = torch.nn.Parameter(torch.randn(24).to(torch.bfloat16))
        self.register_buffer("picks", torch.tensor([5, 0, 23, 7]))
        self.register_buffer("temperature", torch.tensor(0.75))
        self.register_buffer("mask", torch.rand(24) > 0.5)
        self.head = torch.nn.Linear(24, 16, bias=False)
        self.tail = torch.nn.Linear(24, 16, bias=False)
        self.tail.weight = self.head.weight

    def forward(self, x):
        y = self.norm(torch.relu(self.linear(x))) * self.half_scale.float()
        y = torch.where(self.mask, y, -y) * self.temperature
        return y, y.index_select(1, self.picks), self.head(y) - self.tail(y * 2)


def test_freeze_constants(device, tmp_path):
    """freeze=True: the parameters and buffers are the artifact's (bool ones
    stay inputs); calls pass the function's inputs only; the values are
    those at compile time."""
    torch.manual_seed(0)
    model = _FrozenModel().eval().to(device)
    x = torch.randn(6, 16, device=device)
    with torch.no_grad():
        compiled = kiln.compile(model, [x], freeze=True, cache_dir=tmp_path)
        assert "fx.constant dense_resource<" in compiled.graph_text
        assert "dialect_resources" in compiled.graph_text
        assert [t.dtype for t in compiled.constants] == [torch.bool]
        # Eight tensors, the tied weight once.
        assert compiled.graph_text.count(': "0x') == 8
        fresh = torch.randn(6, 16, device=device)
        expected = model(fresh)
        for got, want in zip(compiled(fresh), expected):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        # Frozen: a later change to the module does not reach the artifact.
        model.linear.weight.add_(1.0)
        for got, want in zip(compiled(fresh), expected):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


_EXIT_AFTER_FROZEN_RUN = """
import sys, torch, kiln
model = torch.nn.Linear(16, 8).to(sys.argv[1])
x = torch.randn(4, 16, device=sys.argv[1])
with torch.no_grad():
    compiled = kiln.compile(model, [x], freeze=True, cache_dir=sys.argv[2])
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
print("ran")
"""


def test_a_process_that_ran_frozen_constants_exits(device, tmp_path):
    """Artifacts unload when the process exits, after the runtime's own state
    is gone: the exit must neither touch that state nor wait on the driver."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_AFTER_FROZEN_RUN, device, str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ran")


def test_freeze_with_dynamic_sizes(tmp_path):
    # Frozen weights and a dynamic batch: one artifact serves every batch.
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 8)).eval()
    with torch.no_grad():
        compiled = kiln.compile(model, [torch.randn(5, 16)], freeze=True,
                                dynamic={0: [0]}, cache_dir=tmp_path)
        assert compiled.constants == []
        for batch in (3, 40):
            x = torch.randn(batch, 16)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_frozen_weights_are_packed_once(dtype, tmp_path):
    # On the CPU a frozen weight's panels are packed at compile time: the
    # products read them and give what packing at every run gives, bit for
    # bit (transposed as linear layers read their weights, and not), on
    # vector FMAs and on AMX tiles (bf16, where the host has them). More
    # than 16 rows: fewer, with the weight an input, are dot products.
    torch.manual_seed(0)
    linear = torch.nn.Linear(40, 37).to(dtype).eval()
    plain = torch.randn(40, 19).to(dtype)

    def fn(x):
        return linear(x), x @ plain

    x = torch.randn(21, 40).to(dtype)
    with torch.no_grad():
        frozen = kiln.compile(fn, [x], freeze=True, cache_dir=tmp_path / "frozen")
        packed_per_run = kiln.compile(fn, [x], cache_dir=tmp_path / "inputs")
        assert "kiln_packed" in kiln.run_opt(frozen.graph_text, ["--kiln-cpu-pipeline"])
        if dtype == torch.bfloat16:  # and for AMX tiles, in pairs of steps
            assert "kiln_packed" in kiln.run_opt(
                frozen.graph_text, ["--kiln-cpu-pipeline=vector-bytes=64 amx=true"])
        fresh = torch.randn(21, 40).to(dtype)
        for got, want in zip(frozen(fresh), packed_per_run(fresh)):
            assert torch.equal(got, want)


_AMX_CASES = [
    # (M, K, N, lhs transposed, rhs transposed, batch, GELU epilogue)
    (37, 45, 29, False, False, None, False),
    (64, 64, 64, False, False, None, False),
    (100, 1001, 77, False, True, None, False),
    (33, 70, 65, True, False, None, False),
    (50, 96, 40, True, True, 3, False),
    (64, 128, 96, False, True, None, True),
    (17, 1, 33, False, True, None, False),
]


@pytest.mark.parametrize("case", _AMX_CASES, ids=lambda c: "x".join(map(str, c[:3])))
def test_cpu_bf16_products(case, tmp_path):
    """bf16 products on the CPU: on AMX tiles where the host has them (the
    compiler's default there), else on vector FMAs; sizes off the 32 x 32
    blocks and the 32 steps of K, both operands transposed or not, batched,
    with an epilogue. Against f32 products of the same bf16 values."""
    m, k, n, lhs_t, rhs_t, batch, gelu = case
    generator = torch.Generator().manual_seed(m * k + n)

    def shape(rows, cols):
        return ((batch,) if batch else ()) + (rows, cols)

    a = torch.randn(*(shape(k, m) if lhs_t else shape(m, k)), generator=generator)
    b = torch.randn(*(shape(n, k) if rhs_t else shape(k, n)), generator=generator)

    def fn(a, b):
        product = (a.transpose(-1, -2) if lhs_t else a) @ \
            (b.transpose(-1, -2) if rhs_t else b)
        return torch.nn.functional.gelu(product) if gelu else product

    a, b = a.bfloat16(), b.bfloat16()
    compiled = kiln.compile(fn, [a, b], cache_dir=tmp_path)
    # With `amx`, whatever the host, the product is AMX tiles' (M > 16).
    lowered = kiln.run_opt(compiled.graph_text,
                           ["--kiln-cpu-pipeline=vector-bytes=64 amx=true"])
    assert "llvm.x86.tdpbf16ps.internal" in lowered
    want = fn(a.float(), b.float())
    got = compiled(a, b)
    assert got.dtype == torch.bfloat16 and got.shape == want.shape
    torch.testing.assert_close(got.float(), want, rtol=2e-2, atol=2e-2 * want.abs().max())


def test_cpu_flash_attention_as_written(device, tmp_path):
    """torch 2.x traces attention on the CPU as
    _scaled_dot_product_flash_attention_for_cpu: it lowers to two products
    around a softmax, with its mask, causal masking, scale and logsumexp."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    q, k, v = "tensor<2x3x5x8xf32>", "tensor<2x3x7x8xf32>", "tensor<2x3x7x4xf32>"
    o, lse = "tensor<2x3x5x4xf32>", "tensor<2x3x5xf32>"
    text = f"""fx.graph @forward(%q: {q}, %k: {k}, %v: {v}, %mask: tensor<5x7xf32>) -> ({o}, {lse}, {o}, {lse}) {{
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v attn_mask(%mask) {{scale = 0.3 : f64}} : ({q}, {k}, {v}, tensor<5x7xf32>) -> ({o}, {lse})
  %1:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v {{is_causal = true}} : ({q}, {k}, {v}) -> ({o}, {lse})
  fx.output %0#0, %0#1, %1#0, %1#1 : {o}, {lse}, {o}, {lse}
}}
"""
    generator = torch.Generator().manual_seed(8)
    query, key = torch.randn(2, 3, 5, 8, generator=generator), torch.randn(2, 3, 7, 8,
                                                                           generator=generator)
    value, mask = torch.randn(2, 3, 7, 4, generator=generator), torch.randn(5, 7,
                                                                            generator=generator)

    def attention(scores):
        return scores.softmax(-1) @ value, scores.logsumexp(-1)

    scores = query @ key.transpose(-1, -2)
    causal = torch.ones(5, 7, dtype=torch.bool).tril()
    want = [*attention(scores * 0.3 + mask),
            *attention((scores / 8 ** 0.5).masked_fill(~causal, float("-inf")))]
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[t.to(device) for t in (query, key, value, mask)])
    for result, expected in zip(got, want):
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_masked_attention_node(device, tmp_path):
    """A mask whose logsumexp nothing reads is added in loop.attention's
    scores region (written out again on the CPU and for f32 on CUDA), with
    a broadcast mask of -inf: rows with every key hidden are zeros, as
    PyTorch's scaled_dot_product_attention gives them."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    q, k = "tensor<2x3x5x8xf32>", "tensor<2x3x7x8xf32>"
    o, lse, m = "tensor<2x3x5x8xf32>", "tensor<2x3x5xf32>", "tensor<2x1x5x7xf32>"
    text = f"""fx.graph @forward(%q: {q}, %k: {k}, %mask: {m}) -> {o} {{
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %k attn_mask(%mask) {{scale = 0.3 : f64}} : ({q}, {k}, {k}, {m}) -> ({o}, {lse})
  fx.output %0#0 : {o}
}}
"""
    generator = torch.Generator().manual_seed(12)
    query, key = torch.randn(2, 3, 5, 8, generator=generator), torch.randn(2, 3, 7, 8,
                                                                           generator=generator)
    mask = torch.randn(2, 1, 5, 7, generator=generator)
    mask[mask > 0.8] = float("-inf")
    mask[1, 0, 2] = float("-inf")
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got, = Artifact(path)(*[t.to(device) for t in (query, key, mask)])
    want = (query @ key.transpose(-1, -2) * 0.3 + mask).softmax(-1) @ key
    want[1, :, 2] = 0
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)


def test_cpu_flash_attention_gradient_as_written(device, tmp_path):
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    q, k, v = "tensor<2x3x5x8xf32>", "tensor<2x3x7x8xf32>", "tensor<2x3x7x4xf32>"
    o, lse = "tensor<2x3x5x4xf32>", "tensor<2x3x5xf32>"
    text = f"""fx.graph @forward(%do: {o}, %q: {q}, %k: {k}, %v: {v}, %o: {o}, %lse: {lse}, %mask: tensor<5x7xf32>) -> ({q}, {k}, {v}) {{
  %0:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %v, %o, %lse attn_mask(%mask) {{dropout_p = 0.0 : f64, is_causal = true, scale = 0.3 : f64}} : ({o}, {q}, {k}, {v}, {o}, {lse}, tensor<5x7xf32>) -> ({q}, {k}, {v})
  fx.output %0#0, %0#1, %0#2 : {q}, {k}, {v}
}}
"""
    generator = torch.Generator().manual_seed(9)
    query, key, value = (torch.randn(*shape, generator=generator).requires_grad_()
                         for shape in [(2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)])
    mask, grad = torch.randn(5, 7, generator=generator), torch.randn(2, 3, 5, 4,
                                                                     generator=generator)
    causal = torch.ones(5, 7, dtype=torch.bool).tril()
    scores = (query @ key.transpose(-1, -2) * 0.3 + mask).masked_fill(~causal, float("-inf"))
    out = scores.softmax(-1) @ value
    want = torch.autograd.grad(out, (query, key, value), grad)
    inputs = [grad, query, key, value, out, scores.logsumexp(-1), mask]
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[t.detach().to(device) for t in inputs])
    for result, expected in zip(got, want):
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_fused_attention_of_dynamic_sizes(device, tmp_path):
    """The fused attention ops over dynamic batches and sequence lengths
    (torch.compile's dynamic shapes): the CPU's flash kernel with a mask,
    its gradient, and CUDA's memory-efficient kernel, whose logsumexp pads
    its rows to a multiple of 32 with +inf. One artifact, two sets of
    sizes."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    def guarded(name, sizes):
        type = "tensor<" + "x".join("?" if isinstance(d, str) else str(d) for d in sizes) + "xf32>"
        guard = ", ".join(str(d) for d in sizes)
        return type, (f"%{name}: {type} {{fx.guard = #fx.tensor_guard<sizes = [{guard}], "
                      f'align = 16, device = "{device}">}}')

    q, q_arg = guarded("q", ["s0", 2, "s1", 8])
    k, k_arg = guarded("k", ["s0", 2, "s2", 8])
    v, v_arg = guarded("v", ["s0", 2, "s2", 4])
    m, m_arg = guarded("m", ["s0", 1, "s1", "s2"])
    o, do_arg = guarded("do", ["s0", 2, "s1", 4])
    lse, padded = "tensor<?x2x?xf32>", "tensor<?x2x?xf32>"
    state = "tensor<si64>"
    text = f"""fx.graph @forward({q_arg}, {k_arg}, {v_arg}, {m_arg}, {do_arg}) -> ({o}, {lse}, {q}, {k}, {v}, {o}, {padded})
    attributes {{symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>, #fx.symbol<"s2", min = 2>]}} {{
  %0:2 = fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v attn_mask(%m) {{scale = 0.3 : f64}} : ({q}, {k}, {v}, {m}) -> ({o}, {lse})
  %1:3 = fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %v, %0#0, %0#1 attn_mask(%m) {{dropout_p = 0.0 : f64, is_causal = false, scale = 0.3 : f64}} : ({o}, {q}, {k}, {v}, {o}, {lse}, {m}) -> ({q}, {k}, {v})
  %2:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v {{compute_log_sumexp = true, is_causal = true}} : ({q}, {k}, {v}) -> ({o}, {padded}, {state}, {state})
  fx.output %0#0, %0#1, %1#0, %1#1, %1#2, %2#0, %2#1 : {o}, {lse}, {q}, {k}, {v}, {o}, {padded}
}}
"""
    artifact = Artifact(compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                                           cache_dir=tmp_path))
    generator = torch.Generator().manual_seed(10)
    for batch, queries, keys in [(2, 5, 7), (3, 37, 37)]:
        query, key, value = (torch.randn(*shape, generator=generator).requires_grad_()
                             for shape in [(batch, 2, queries, 8), (batch, 2, keys, 8),
                                           (batch, 2, keys, 4)])
        mask = torch.randn(batch, 1, queries, keys, generator=generator)
        grad = torch.randn(batch, 2, queries, 4, generator=generator)
        scores = query @ key.transpose(-1, -2)
        masked = scores * 0.3 + mask
        out = masked.softmax(-1) @ value
        causal = torch.ones(queries, keys, dtype=torch.bool).tril()
        causal_scores = (scores / 8 ** 0.5).masked_fill(~causal, float("-inf"))
        rows = -(-queries // 32) * 32
        padded_lse = torch.full((batch, 2, rows), float("inf"))
        padded_lse[..., :queries] = causal_scores.logsumexp(-1)
        want = [out, masked.logsumexp(-1),
                *torch.autograd.grad(out, (query, key, value), grad),
                causal_scores.softmax(-1) @ value, padded_lse]
        got = artifact(*[t.detach().to(device) for t in (query, key, value, mask, grad)])
        for index, (result, expected) in enumerate(zip(got, want)):
            torch.testing.assert_close(result.cpu(), expected.detach(), rtol=1e-4, atol=1e-4,
                                       msg=lambda text: f"result {index}: {text}")


def test_efficient_attention_as_written(device, tmp_path):
    """_scaled_dot_product_efficient_attention (CUDA's memory-efficient
    kernel) lowers to the same math on both targets: its logsumexp pads the
    queries to 32 rows (+inf past them), its Philox state is zero without
    dropout. On the GPU it is compared with PyTorch's own kernel too."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    q, k, v = "tensor<2x3x5x8xf32>", "tensor<2x3x7x8xf32>", "tensor<2x3x7x4xf32>"
    o, lse, bias = "tensor<2x3x5x4xf32>", "tensor<2x3x32xf32>", "tensor<2x3x5x7xf32>"
    text = f"""fx.graph @forward(%q: {q}, %k: {k}, %v: {v}, %bias: {bias}) -> ({o}, {lse}, tensor<si64>, {o}, tensor<2x3x0xf32>) {{
  %0:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v attn_bias(%bias) {{compute_log_sumexp = true, scale = 0.3 : f64}} : ({q}, {k}, {v}, {bias}) -> ({o}, {lse}, tensor<si64>, tensor<si64>)
  %1:4 = fx.scaled_dot_product_efficient_attention %q, %k, %v {{compute_log_sumexp = false, is_causal = true}} : ({q}, {k}, {v}) -> ({o}, tensor<2x3x0xf32>, tensor<si64>, tensor<si64>)
  fx.output %0#0, %0#1, %0#2, %1#0, %1#1 : {o}, {lse}, tensor<si64>, {o}, tensor<2x3x0xf32>
}}
"""
    generator = torch.Generator().manual_seed(10)
    inputs = [torch.randn(*shape, generator=generator)
              for shape in [(2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4), (2, 3, 5, 7)]]
    query, key, value, bias = inputs
    scores = query @ key.transpose(-1, -2)
    causal = torch.ones(5, 7, dtype=torch.bool).tril()
    padded = torch.full((2, 3, 32), float("inf"))
    padded[..., :5] = (scores * 0.3 + bias).logsumexp(-1)
    want = [(scores * 0.3 + bias).softmax(-1) @ value, padded, torch.tensor(0),
            (scores / 8 ** 0.5).masked_fill(~causal, float("-inf")).softmax(-1) @ value,
            torch.empty(2, 3, 0)]
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[t.to(device) for t in inputs])
    for result, expected in zip(got, want):
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4)
    if device == "cuda":
        # The kernel wants the bias's strides aligned to 4 elements.
        aligned = torch.zeros(2, 3, 5, 8, device="cuda")[..., :7].copy_(bias)
        eager = torch.ops.aten._scaled_dot_product_efficient_attention(
            query.cuda(), key.cuda(), value.cuda(), aligned, True, scale=0.3)
        torch.testing.assert_close(got[0], eager[0], rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(got[1], eager[1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name, fn, shapes", [
    ("mm", lambda a, b: a @ b, [((37, 50), F32), ((50, 29), F32)]),
    ("mm, one row", lambda a, b: a @ b, [((1, 300), F32), ((300, 70), F32)]),
    ("linear with bias", lambda x, w, b: torch.nn.functional.linear(x, w, b),
     [((65, 96), F32), ((33, 96), F32), ((33,), F32)]),
    ("linear, 3-d input", lambda x, w: torch.nn.functional.linear(x, w) * 2,
     [((2, 7, 40), F32), ((24, 40), F32)]),
    ("bmm, transposed operands", lambda a, b: torch.bmm(a.transpose(1, 2), b.transpose(1, 2)),
     [((3, 20, 9), F32), ((3, 11, 20), F32)]),
    ("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0),
     [((4, 1), F32), ((2, 4, 6), F32), ((2, 6, 5), F32)]),
    ("addmm, beta 0", lambda c, a, b: torch.addmm(c, a, b, beta=0),
     [((3, 8), F32), ((3, 16), F32), ((16, 8), F32)]),
    ("mlp", lambda x, w1, b1, w2: torch.nn.functional.linear(
        torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1)), w2),
     [((16, 64), F32), ((128, 64), F32), ((128,), F32), ((10, 128), F32)]),
    ("attention", lambda q, k, v: torch.softmax(q @ k.transpose(-1, -2) * 0.25, -1) @ v,
     [((2, 3, 10, 16), F32), ((2, 3, 12, 16), F32), ((2, 3, 12, 16), F32)]),
    ("bf16 linear", lambda x, w, b: torch.nn.functional.linear(x, w, b),
     [((19, 64), torch.bfloat16), ((40, 64), torch.bfloat16), ((40,), torch.bfloat16)]),
])
def test_matrix_products(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path, tolerances=GEMM_TOLERANCES)


def test_f64_matrix_products_on_the_cpu(tmp_path):
    check(lambda a, b: a @ b, [((9, 13), torch.float64), ((13, 21), torch.float64)],
          tmp_path=tmp_path, tolerances=GEMM_TOLERANCES)


@pytest.mark.parametrize("vector_bytes", [0, 16, 64])
def test_matrix_product_tiles_at_every_vector_width(vector_bytes, tmp_path):
    # 13 x 37 leaves partial row tiles and column panels at every width.
    check(lambda a, b: a @ b.t(), [((13, 24), F32), ((37, 24), F32)],
          options={"vector-bytes": vector_bytes}, tmp_path=tmp_path,
          tolerances=GEMM_TOLERANCES)


# A product's epilogue may only be fused where it reads the product at the
# epilogue's own index; these read it elsewhere (transposed, flipped,
# rolled, both), and must not become epilogues.
PRODUCTS_READ_ELSEWHERE = {
    "transposed": lambda x, w: (x @ w).t() * 2 + 1,
    "flipped": lambda x, w: (x @ w).flip(-1) + 1,
    "rolled": lambda x, w: torch.relu(x @ w).roll(1, 0) * 3,
    "with its transpose": lambda x, w: (x @ w) + (x @ w).t(),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(PRODUCTS_READ_ELSEWHERE))
def test_products_read_at_other_indices(tmp_path, device, name):
    fn = PRODUCTS_READ_ELSEWHERE[name]
    check(fn, [((24, 16), F32), ((16, 24), F32)], device=device, tmp_path=tmp_path,
          tolerances={**TOLERANCES, F32: (1e-4, 1e-4)})


# Products that Kiln's tensor-core kernels compute with `matmul-kernels`:
# sizes that are not multiples of the 128x128x32 tiles, transposed operands,
# batches and fused epilogues; and products they leave to the library (rows
# of fewer than 8 elements, f32).
TENSOR_CORE_PRODUCTS = {
    "plain": (lambda a, b: a @ b, [(300, 256), (256, 520)]),
    "linear, bias and gelu": (
        lambda x, w, bias: torch.nn.functional.gelu(
            torch.nn.functional.linear(x, w, bias)), [(7, 96), (264, 96), (264,)]),
    "batched": (lambda a, b: torch.bmm(a, b), [(3, 130, 64), (3, 64, 72)]),
    "lhs transposed": (lambda a, b: a.t() @ b, [(40, 136), (40, 24)]),
    "residual, as f32": (lambda x, w, r: (x @ w + r).float() * 0.5,
                         [(129, 48), (48, 136), (129, 136)]),
    "rows of 4, by the library": (lambda a, b: (a @ b).relu(), [(33, 16), (16, 4)]),
    # Both operands along K (sm_90a's warpgroup kernel): tiles off the
    # edges in M, N and K, several steps along K, batches.
    "linear over many steps": (lambda x, w: torch.nn.functional.linear(x, w),
                               [(300, 1000), (264, 1000)]),
    "queries by keys": (lambda q, k: (q @ k.transpose(-1, -2)) * 0.125,
                        [(3, 130, 200), (3, 72, 200)]),
}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("kernel", [
    {"warpgroup-mma": True},
    {"warpgroup-mma": True, "warpgroup-tile-n": 256},
    {"warpgroup-mma": True, "warpgroup-tma": True},
    {"warpgroup-mma": True, "warpgroup-tma": True, "warpgroup-tile-n": 256},
    {"warpgroup-mma": False},
], ids=["wgmma", "wgmma-wide", "wgmma-tma", "wgmma-tma-wide", "mma.sync"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("name", list(TENSOR_CORE_PRODUCTS))
def test_cuda_tensor_core_products(tmp_path, name, dtype, kernel):
    """Kiln's tensor-core kernels against eager's cuBLAS, on poisoned
    outputs; the products rounded to the operands' dtype first, as eager's
    are, before the epilogue. On sm_90a products are warpgroup kernels
    (128x128 tiles at these sizes, or 128x256 ones with two warpgroups
    where asked for; with `warpgroup-tma`, copied by TMA from a producer
    warpgroup) unless `warpgroup-mma` is off; elsewhere every one is
    mma.sync's."""
    fn, shapes = TENSOR_CORE_PRODUCTS[name]
    # The kernel alone: a product the library computes too would otherwise
    # run as the faster of the two.
    check(fn, [(shape, dtype) for shape in shapes], device="cuda", tmp_path=tmp_path,
          options={"matmul-kernels": True, "choose-products": False, **kernel},
          rounded_f32=False,
          tolerances={**TOLERANCES, torch.bfloat16: (2e-2, 2e-1),
                      torch.float16: (2e-3, 2e-2),
                      # An f32 result of a 16-bit product rounded once.
                      torch.float32: (2e-2, 2e-1) if dtype == torch.bfloat16
                      else (2e-3, 2e-2)})


# Products that run as the faster of Kiln's kernel and the GEMM library:
# with an epilogue the library applies (a bias and relu), and with one it
# lacks (exact GELU, a residual, a cast to f32), which a kernel applies
# after the library's product in its candidate.
CHOSEN_PRODUCTS = {
    "library epilogue": (lambda x, w, b: torch.nn.functional.linear(x, w, b).relu(),
                         [(264, 96), (136, 96), (136,)]),
    "epilogue the library lacks": (
        lambda x, w, r: (torch.nn.functional.gelu(x @ w.t()) + r).float(),
        [(264, 96), (136, 96), (264, 136)]),
}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("name", list(CHOSEN_PRODUCTS))
def test_cuda_products_run_as_the_faster_of_kernel_and_library(tmp_path, monkeypatch, capfd,
                                                               name):
    """With matmul-kernels, a product times Kiln's kernel and the library's
    candidate at its shape's first call, keeps the faster, and gives eager's
    answer at every call: the first, whose last timed run stays, and the
    later ones."""
    monkeypatch.setenv("KILN_PRODUCT_TRACE", "1")
    fn, shapes = CHOSEN_PRODUCTS[name]
    generator = torch.Generator().manual_seed(0)
    example = [fresh(s, torch.bfloat16, generator, "cuda") for s in shapes]
    compiled = kiln.compile(fn, example, options={"matmul-kernels": True}, cache_dir=tmp_path)
    for _ in range(3):
        inputs = [fresh(s, torch.bfloat16, generator, "cuda") for s in shapes]
        # Eager's epilogue reads the product rounded to bf16; Kiln's kernel,
        # the f32 sums.
        torch.testing.assert_close(compiled(*inputs), fn(*inputs), rtol=2e-2, atol=2e-1)
    torch.cuda.synchronize()
    choices = [line for line in capfd.readouterr().err.splitlines()
               if line.startswith("kiln: product 1x264x136x96")]
    assert len(choices) == 1, choices
    assert "(not all runs timed)" not in choices[0], choices


# CPU products whose operands both run along K: up to 16 rows are dot
# products (the weight read as stored), more are register tiles over a
# packed weight; K off the vector width, batches and epilogues in both.
@pytest.mark.parametrize("rows", [1, 5, 16, 17, 40])
@pytest.mark.parametrize("dtype", [F32, torch.bfloat16], ids=["f32", "bf16"])
def test_cpu_products_along_k(tmp_path, rows, dtype):
    def fn(x, w, b, q, k):
        return (torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b)),
                q @ k.transpose(-1, -2))

    check(fn, [((rows, 37), dtype), ((29, 37), dtype), ((29,), dtype),
               ((3, rows, 20), dtype), ((3, 11, 20), dtype)], tmp_path=tmp_path,
          tolerances={**TOLERANCES, F32: (1e-4, 1e-5)})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
def test_cuda_f32_products_multiply_in_tf32_as_pytorch_does(tmp_path, monkeypatch):
    """With PyTorch's allow_tf32 on when Kiln compiles, an f32 product
    multiplies in TF32 as eager's does: near eager's answer, and as far from
    the exact one as TF32's 10-bit mantissa puts it; off, it is exact f32."""
    def fn(a, b):
        return a @ b

    generator = torch.Generator().manual_seed(0)
    a, b = (fresh(shape, torch.float32, generator, "cuda") for shape in [(512, 1024), (1024, 384)])
    exact = (a.double() @ b.double()).float()

    def relative_error(x):
        return ((x - exact).abs().max() / exact.abs().max()).item()

    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", True)
    eager = fn(a, b)
    tf32 = kiln.compile(fn, [a, b], cache_dir=tmp_path)(a, b)
    assert relative_error(tf32) > 1e-5
    torch.testing.assert_close(tf32, eager, rtol=1e-2, atol=1e-2 * exact.abs().max().item())
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    f32 = kiln.compile(fn, [a, b], cache_dir=tmp_path)(a, b)
    assert relative_error(f32) < 1e-5
