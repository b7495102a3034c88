"""Programs from torch.export (torch 2.x): imported with their parameters
and buffers as inputs after the user's, compiled and run against eager, with
export's dynamic shapes as size symbols."""

import re

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch, "export"):
    pytest.skip("torch.export needs torch 2.x", allow_module_level=True)

import kiln  # noqa: E402
from kiln.guards import GuardError  # noqa: E402
from kiln.importer import (KilnImportError, UnsupportedOpError,  # noqa: E402
                           drop_implied_assertions, import_exported)

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU on this machine"))]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


class ConvNormMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 5)
        self.register_buffer("offset", torch.linspace(-1, 1, 5))

    def forward(self, x):
        h = torch.relu(self.norm(self.conv(x))).mean((2, 3))
        return torch.softmax(self.head(h), -1) + self.offset, h


def test_an_exported_module_compiles_and_matches_eager(device, tmp_path):
    model = ConvNormMlp().to(device).eval()
    with torch.no_grad():
        model.norm.running_var.uniform_(0.5, 2.0)
    program = torch.export.export(model, (torch.randn(2, 3, 8, 8, device=device),))
    compiled = kiln.compile(program, cache_dir=tmp_path)
    # Parameters and buffers follow the user's input.
    lifted = [s for s in program.graph_signature.input_specs if s.kind.name != "USER_INPUT"]
    assert len(compiled.constants) == len(lifted) > 0
    x = torch.randn(2, 3, 8, 8, device=device)
    got, want = compiled(x), model(x)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)


def test_export_dynamic_shapes_become_size_symbols(device, tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.LayerNorm(32)).to(device).eval()
    batch = torch.export.Dim("batch", min=2, max=1024)
    program = torch.export.export(model, (torch.randn(4, 16, device=device),),
                                  dynamic_shapes=({0: batch},))
    compiled = kiln.compile(program, cache_dir=tmp_path)
    assert "tensor<?x16xf32>" in compiled.graph_text
    # The Dim's range becomes the symbol's, which the runtime checks.
    assert re.search(r'#fx\.symbol<"\w+", min = 2, max = 1024>', compiled.graph_text)
    for rows in [3, 8, 50]:
        x = torch.randn(rows, 16, device=device)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


class PositionalTable(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pe", torch.randn(64, 16))

    def forward(self, x):
        return x + self.pe[:x.shape[0]], torch.arange(x.shape[0], device=x.device) * 2


def test_bounds_that_follow_a_dynamic_size_read_its_symbol(device, tmp_path):
    """pe[:x.shape[0]] and arange(x.shape[0]) with a dynamic x: the exported
    graph's sym_size becomes the symbol's fx.symbol_value, and export's range
    for it (at most pe's 64 rows) the guard's."""
    model = PositionalTable().to(device).eval()
    compiled = kiln.compile(model, [torch.randn(5, 16, device=device)], capture="export",
                            dynamic={0: [0]}, cache_dir=tmp_path)
    assert "fx.symbol_value" in compiled.graph_text
    assert re.search(r"#fx\.symbol<\"\w+\", min = 2, max = 64>", compiled.graph_text)
    for rows in [2, 17, 64]:
        x = torch.randn(rows, 16, device=device)
        for got, want in zip(compiled(x), model(x)):
            torch.testing.assert_close(got, want)


def _doubled(x, y):
    return torch.cat([x, x]) + y


def test_a_size_that_export_derives_from_another_is_checked(device, tmp_path):
    """y's rows are 2*s for x's s: the guard relates y's symbol to x's, and
    the runtime refuses sizes that break it."""
    x, y = torch.randn(3, 4, device=device), torch.randn(6, 4, device=device)
    compiled = kiln.compile(_doubled, [x, y], capture="export", dynamic={0: [0], 1: [0]},
                            cache_dir=tmp_path)
    assert re.search(r'#fx\.symbol<"e0", min = 4, (max = \d+, )?of = "\w+", scale = 2>',
                     compiled.graph_text)
    for rows in [2, 5]:
        x, y = torch.randn(rows, 4, device=device), torch.randn(2 * rows, 4, device=device)
        torch.testing.assert_close(compiled(x, y), _doubled(x, y))
    with pytest.raises(GuardError, match=r"size symbol 'e0' = 2\*\w+, which is 6 for"):
        compiled(torch.randn(3, 4, device=device), torch.randn(8, 4, device=device))


def test_a_program_that_updates_buffers_is_refused():
    model = torch.nn.BatchNorm1d(4).train()
    program = torch.export.export(model, (torch.randn(8, 4),))
    with pytest.raises(KilnImportError, match="updates .*export the module in eval mode"):
        import_exported(program)


def _attention_scores(q, k):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1)


def test_kiln_compile_captures_through_export(device, tmp_path):
    """capture="export": kiln.compile exports the function itself, and its
    dynamic dimensions are Dynamo's symbols (q's and k's batch is one
    symbol: export finds them equal)."""
    q, k = (torch.randn(4, 6, 8, device=device), torch.randn(4, 5, 8, device=device))
    compiled = kiln.compile(_attention_scores, [q, k], capture="export",
                            dynamic={0: [0], 1: [0]}, cache_dir=tmp_path)
    assert "tensor<?x6x8xf32>" in compiled.graph_text
    assert len(re.findall(r"#fx\.symbol<", compiled.graph_text)) == 1
    for batch in [2, 9]:
        q, k = (torch.randn(batch, 6, 8, device=device), torch.randn(batch, 5, 8, device=device))
        torch.testing.assert_close(compiled(q, k), _attention_scores(q, k))


def _graph_asserting(condition):
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    check = graph.call_function(torch.ops.aten.sym_size.int, (x, 0))
    check.meta["val"] = condition
    graph.call_function(torch.ops.aten._assert_scalar.default, (check, "check"))
    graph.output(x)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_assertions_that_the_guards_imply_are_dropped_and_others_refused():
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    env = ShapeEnv()
    size = env.create_symintnode(env.create_symbol(10, ConstantSource("n")), hint=10)
    for implied in [size == size, size >= 2, True]:
        gm = _graph_asserting(implied)
        drop_implied_assertions(gm)
        assert not any("assert" in str(n.target) for n in gm.graph.nodes)
    for unknown in [size > 20, size == 2 * size - 4, False]:
        with pytest.raises(UnsupportedOpError, match="asserts .* at run time"):
            drop_implied_assertions(_graph_asserting(unknown))


def test_kiln_compile_exports_a_module(device, tmp_path):
    model = ConvNormMlp().to(device).eval()
    x = torch.randn(2, 3, 8, 8, device=device)
    compiled = kiln.compile(model, [x], capture="export", cache_dir=tmp_path)
    assert len(compiled.constants) > 0
    for got, want in zip(compiled(x), model(x)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
