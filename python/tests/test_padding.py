"""Products padded to aligned sizes while tracing (kiln.padding): which
products pad which sizes, that the traced graphs compute the same, that the
backward's products read the padded gradient, and that a padded result
leaves its region as a view of the padded tensor."""

import pytest

torch = pytest.importorskip("torch")

from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp  # noqa: E402

from kiln.backend import KilnRegion, compile_aten_graph  # noqa: E402
from kiln.importer import DECOMPOSITIONS  # noqa: E402
from kiln.options import Options  # noqa: E402
from kiln.padding import padded_product_decompositions  # noqa: E402

aten = torch.ops.aten
# Traced on the CPU here; the backend pads on CUDA only.
PADDING = padded_product_decompositions(devices=("cpu",))


def trace(fn, *args):
    return make_fx(fn, decomposition_table=PADDING)(*args)


def products(gm, *args):
    """(shape of a, shape of b) of each product of `gm` called with `args`."""
    ShapeProp(gm).propagate(*args)
    return [tuple(tuple(operand.meta["tensor_meta"].shape) for operand in node.args[-2:])
            for node in gm.graph.nodes
            if node.target in (aten.mm.default, aten.addmm.default)]


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_logits_pad_the_vocabulary(dtype):
    """h @ Wᵀ with 1001 columns: W gains zero rows up to a whole vector's
    worth of columns (4 f32, 8 bf16), and the result is a slice of the
    padded product, with padded rows."""
    h, w, bias = randn(512, 768, dtype=dtype), randn(1001, 768, dtype=dtype), \
        randn(1001, dtype=dtype)
    padded = 1004 if dtype == torch.float32 else 1008

    def fn(h, w, bias):
        return h @ w.t(), torch.addmm(bias, h, w.t())

    gm = trace(fn, h, w, bias)
    assert products(gm, h, w, bias) == [((512, 768), (768, padded))] * 2
    pads = [n for n in gm.graph.nodes if n.target is aten.constant_pad_nd.default]
    # W's rows (through its transpose, which stays a view) twice, the bias once.
    assert [list(n.args[1]) for n in pads].count([0, 0, 0, padded - 1001]) == 2
    assert [list(n.args[1]) for n in pads].count([0, padded - 1001]) == 1
    for got, want in zip(gm(h, w, bias), fn(h, w, bias)):
        assert got.shape == want.shape and got.stride() == (padded, 1)
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_odd_inner_sizes_pad_both_operands_and_transposed_rows():
    """An odd K pads both operands with zeros; an odd M pads a transposed
    left operand (stored along M), not a row-major one."""
    a, b = randn(511, 768), randn(511, 1024)

    def fn(a, b):
        return a.t() @ b, b.t()[:, :509] @ a[:509]

    gm = trace(fn, a, b)
    assert products(gm, a, b) == [((768, 512), (512, 1024)), ((1024, 512), (512, 768))]
    for got, want in zip(gm(a, b), fn(a, b)):
        torch.testing.assert_close(got, want)
    a, b = randn(1001, 768), randn(768, 512)  # M odd, a row-major
    gm = trace(lambda a, b: a @ b, a, b)
    assert products(gm, a, b) == [((1001, 768), (768, 512))]
    assert not any(n.target is aten.constant_pad_nd.default for n in gm.graph.nodes)


@pytest.mark.parametrize("shapes", [
    ((64, 768), (768, 1001)),       # too small to pay
    ((512, 768), (768, 1024)),      # aligned
], ids=["small", "aligned"])
def test_products_that_need_no_padding_stay(shapes):
    a, b = randn(*shapes[0]), randn(*shapes[1])
    gm = trace(lambda a, b: a @ b, a, b)
    assert products(gm, a, b) == [shapes]
    assert not any(n.target is aten.constant_pad_nd.default for n in gm.graph.nodes)


def test_other_devices_and_integer_products_stay():
    """Only products on the given devices pad (the backend's: CUDA), and only
    floating ones."""
    cuda_only = padded_product_decompositions()
    h, w = randn(512, 768), randn(1001, 768)
    gm = make_fx(lambda h, w: h @ w.t(), decomposition_table=cuda_only)(h, w)
    assert not any(n.target is aten.constant_pad_nd.default for n in gm.graph.nodes)
    i, j = torch.randint(0, 3, (512, 768)), torch.randint(0, 3, (768, 1001))
    gm = trace(lambda i, j: i @ j, i, j)
    assert not any(n.target is aten.constant_pad_nd.default for n in gm.graph.nodes)


def test_addmm_falls_back_to_the_other_decomposition():
    """Where it does not pad, the decomposition defers to the table's own."""
    calls = []

    def other(bias, a, b, *, beta=1, alpha=1):
        calls.append(tuple(b.shape))
        return aten.add(aten.mm(a, b), bias)

    table = padded_product_decompositions(("cpu",), {aten.addmm.default: other})
    bias, a, b = randn(64), randn(8, 32), randn(32, 64)
    gm = make_fx(lambda bias, a, b: torch.addmm(bias, a, b), decomposition_table=table)(
        bias, a, b)
    assert calls == [(32, 64)]
    assert not any(n.target is aten.addmm.default for n in gm.graph.nodes)
    torch.testing.assert_close(gm(bias, a, b), torch.addmm(bias, a, b))


def test_backward_products_read_the_padded_gradient():
    """Traced by AOTAutograd, the logits' backward products both read the
    gradient padded to aligned rows: every product is of aligned sizes."""
    from functorch.compile import aot_function, make_boxed_func

    calls = []

    def keep(gm, _):
        def run(*args):
            calls.append((gm, [a.detach() if isinstance(a, torch.Tensor) else a
                               for a in args]))
            return gm(*args)
        return make_boxed_func(run)

    h = torch.randn(512, 768, requires_grad=True)
    w = torch.randn(1001, 768, requires_grad=True)
    compiled = aot_function(lambda h, w: h @ w.t(), keep, keep, decompositions=PADDING)
    out = compiled(h, w)
    grad = torch.randn_like(out)
    out.backward(grad)
    shapes = [shape for gm, args in calls for shape in products(gm, *args)]
    assert len(shapes) == 3  # the forward's, and the backward's two
    for a, b in shapes:
        assert all(size % 4 == 0 for size in (*a, *b)), (a, b)
    h2, w2 = h.detach().requires_grad_(), w.detach().requires_grad_()
    (h2 @ w2.t()).backward(grad)
    torch.testing.assert_close(h.grad, h2.grad)
    torch.testing.assert_close(w.grad, w2.grad)


def test_padded_results_leave_their_region_as_views(tmp_path):
    """A region that writes a padded product's result writes the padded
    tensor; PyTorch slices it (no copy), and the region reads the slice
    itself for its own ops."""
    h, w = randn(512, 768), randn(1001, 768)

    def fn(h, w):
        logits = h @ w.t()
        return logits, torch.softmax(logits, -1)

    table = {**DECOMPOSITIONS, **padded_product_decompositions(("cpu",), DECOMPOSITIONS)}
    gm = make_fx(fn, decomposition_table=table)(h, w)
    compiled = compile_aten_graph(gm, [h, w], options=Options(cache_dir=tmp_path,
                                                             fallback="error"))
    [region] = [m for m in compiled.modules() if isinstance(m, KilnRegion)]
    [results] = [line for line in region.graph_text.splitlines() if "fx.output" in line]
    assert "512x1004xf32" in results and "512x1001xf32" in results, results
    assert results.count("512x1001xf32") == 1, results  # the softmax alone
    h, w = randn(512, 768), randn(1001, 768)
    logits, probabilities = compiled(h, w)
    assert logits.stride() == (1004, 1)
    torch.testing.assert_close(logits, h @ w.t(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(probabilities, torch.softmax(h @ w.t(), -1))
