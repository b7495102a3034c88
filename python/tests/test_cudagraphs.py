"""CUDA graphs: the backend's cuda_graphs option (kiln.cudagraphs) and the
capture safety of Kiln's CUDA runtime. The options and the recording checks
run everywhere; recording and replaying need a GPU and torch 2.x."""

import logging
import math
import re

import pytest

torch = pytest.importorskip("torch")

from kiln.backend import compile_aten_graph  # noqa: E402
from kiln.options import Options  # noqa: E402
from kiln.cudagraphs import graph_mode_options, recording_problem  # noqa: E402
from kiln.importer import capture  # noqa: E402
from kiln.runtime import Artifact  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
needs_graphs = pytest.mark.skipif(
    not HAS_CUDA or not hasattr(torch, "compile"),
    reason="CUDA graphs need a GPU and torch 2.x")


def test_options_are_checked():
    parsed = Options.parse({"cuda_graphs": True, "cuda_graph_limit": 3,
                                   "clone_outputs": True})
    assert parsed.cuda_graphs and parsed.cuda_graph_limit == 3 and parsed.clone_outputs
    assert not Options.parse(None).cuda_graphs
    for bad in ({"cuda_graphs": "yes"}, {"clone_outputs": 1.5}, {"cuda_graph_limit": 0},
                {"cuda_graph_limit": True}, {"cuda_graph_limit": 2.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Options.parse(bad)


def test_torch_compile_modes_map_to_cuda_graphs():
    assert graph_mode_options("reduce-overhead") == {"cuda_graphs": True}
    assert graph_mode_options("max-autotune") == {"cuda_graphs": True}
    assert graph_mode_options(None) == graph_mode_options("default") == {}
    assert graph_mode_options("max-autotune-no-cudagraphs") == {}
    with pytest.raises(ValueError, match="mode='fastest'"):
        graph_mode_options("fastest")


def values_of(gm, inputs):
    """Every node's value in one run of `gm` on `inputs`."""
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            values[node] = super().run_node(node)
            return values[node]

    Recorder(gm).run(*inputs)
    return values


def test_graphs_that_read_data_on_the_host_are_not_recorded():
    def keep_positive(x):
        return x[torch.nonzero(x > 0, as_tuple=True)] * 2

    x = torch.randn(64)
    gm = capture(keep_positive, [x])
    problem = recording_problem(gm, values_of(gm, [x]), "cuda")
    assert problem is not None and "nonzero" in problem and "host" in problem, problem


def _all_reduce_op():
    """torch 2.x's functional all-reduce, or (torch 1.x) a stand-in of the
    same name, which only the name of matters here."""
    existing = getattr(getattr(torch.ops, "_c10d_functional", None), "all_reduce", None)
    if existing is not None:
        return existing.default
    library = torch.library.Library("_c10d_functional", "DEF")
    library.define("all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor")
    library.impl("all_reduce", lambda x, op, group: x.clone(), "CPU")
    _all_reduce_op.library = library  # kept alive
    return torch.ops._c10d_functional.all_reduce.default


def test_graphs_with_collectives_are_not_recorded():
    """Tensor parallelism's all-reduces (and FSDP2's gathers) run in PyTorch
    between regions; Kiln keeps them out of CUDA graphs, with the reason."""
    all_reduce = _all_reduce_op()
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    reduced = graph.call_function(all_reduce, (x, "sum", "0"))
    graph.output(graph.call_function(torch.ops.aten.mul.Tensor, (reduced, reduced)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    # Each value as one run would give it (running the graph would need a
    # process group).
    values = {node: torch.randn(4, 4) for node in gm.graph.nodes if node.op != "output"}
    problem = recording_problem(gm, values, "cuda")
    assert problem is not None and "all_reduce" in problem and \
        "other processes" in problem, problem


def test_graphs_with_host_tensors_are_not_recorded():
    def scale(x, y):
        return x * 2 + y

    inputs = [torch.randn(8, 4), torch.randn(4)]
    gm = capture(scale, inputs)
    values = values_of(gm, inputs)
    assert recording_problem(gm, values, "cpu") == "the graph runs on the cpu"
    problem = recording_problem(gm, values, "cuda")
    assert problem is not None and "is a tensor on the cpu" in problem, problem


def test_cpu_graphs_report_that_they_run_without_cuda_graphs(tmp_path):
    def scale(x):
        return torch.relu(x) * 3

    x = torch.randn(16, 16)
    gm = compile_aten_graph(capture(scale, [x]), [x], options=Options(
        cache_dir=tmp_path, cuda_graphs=True))
    assert gm.kiln_report.cuda_graph_problem == "the graph runs on the cpu"
    out = gm(x)
    torch.testing.assert_close(out[0] if isinstance(out, (tuple, list)) else out, scale(x))


# ---------------------------------------------------------------------------
# On the GPU
# ---------------------------------------------------------------------------


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(64, 256)
        self.down = torch.nn.Linear(256, 64)
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return self.norm(self.down(h) + x).softmax(-1) * 2


def count_artifact_calls(monkeypatch):
    """A list that grows by one at every call of a Kiln artifact from
    Python (a replayed CUDA graph makes none)."""
    calls = []
    original = Artifact.__call__

    def counted(self, *args, **kwargs):
        calls.append(self.path)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Artifact, "__call__", counted)
    return calls


def fresh_reports():
    import kiln.backend
    torch._dynamo.reset()
    kiln.backend.REPORTS.clear()
    return kiln.backend.REPORTS


@needs_graphs
def test_strict_capture_of_an_artifact_with_products_and_temporaries(tmp_path):
    """Kiln's runtime is capture-safe under the strictest mode ("global":
    no call that may synchronize, from any thread): an artifact run for the
    first time on the capturing stream (its GEMM workspace not made yet,
    the product's algorithm not chosen yet), and one never run at all
    (kernels loaded inside the capture), record and replay right."""
    import kiln

    def block(x, w, b):
        h = torch.relu(x @ w + b)
        return h.softmax(-1) * h.sum(-1, keepdim=True), h.amax(0)

    def other(x):
        return torch.sigmoid(x) * x.square().mean(-1, keepdim=True)

    shapes = [(384, 192), (192, 320), (320,)]
    args = [torch.randn(s, device="cuda") for s in shapes]
    compiled = kiln.compile(block, args, cache_dir=tmp_path)
    compiled(*args)  # Compiled and run once, on the current stream.
    never_run = kiln.compile(other, [args[0]], cache_dir=tmp_path)
    torch.cuda.synchronize()

    static = [torch.randn_like(a) for a in args]
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.graph(graph, stream=stream, capture_error_mode="global"):
        outputs = [*compiled(*static), never_run(static[0])]
    for _ in range(2):
        fresh = [torch.randn_like(a) for a in args]
        for target, value in zip(static, fresh):
            target.copy_(value)
        for output in outputs:  # Unwritten elements would show.
            output.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        want = [*block(*fresh), other(fresh[0])]
        for got, expected in zip(outputs, want):
            torch.testing.assert_close(got, expected, rtol=2e-4, atol=2e-4)


@needs_graphs
@pytest.mark.parametrize("how", ["option", "mode"])
def test_inference_replays_cuda_graphs(tmp_path, monkeypatch, how):
    reports = fresh_reports()
    model = Mlp().cuda().eval()
    if how == "option":
        compiled = torch.compile(model, backend="kiln",
                                 options={"cache_dir": tmp_path, "cuda_graphs": True})
    else:  # Inductor's mode turns graphs on; the cache goes where it does by default.
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        compiled = torch.compile(model, backend="kiln", mode="reduce-overhead")
    calls = count_artifact_calls(monkeypatch)
    with torch.no_grad():
        for step in range(6):
            x = torch.randn(32, 64, device="cuda")
            torch.testing.assert_close(compiled(x), model(x), rtol=2e-4, atol=2e-4)
            if step == 2:
                recorded = len(calls)
    assert len(calls) == recorded, "replays called artifacts from Python"
    assert [r.cuda_graphs for r in reports] == \
        ["recorded per set of input sizes (at most 8)"], [r.summary() for r in reports]


@needs_graphs
def test_a_training_step_replays_forward_and_backward(tmp_path):
    reports = fresh_reports()
    torch.manual_seed(0)
    model, reference = Mlp().cuda(), Mlp().cuda()
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="kiln",
                             options={"cache_dir": tmp_path, "cuda_graphs": True})
    for _ in range(4):
        x = torch.randn(32, 64, device="cuda", requires_grad=True)
        x_ref = x.detach().clone().requires_grad_()
        for m in (model, reference):
            m.zero_grad(set_to_none=True)
        out = compiled(x)
        out.square().mean().backward()
        want = reference(x_ref)
        want.square().mean().backward()
        torch.testing.assert_close(out, want, rtol=2e-4, atol=2e-4)
        torch.testing.assert_close(x.grad, x_ref.grad, rtol=2e-4, atol=2e-4)
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=2e-4, atol=2e-4)
    assert sorted(r.name for r in reports) == ["backward graph 1", "forward graph 1"]
    assert all(r.cuda_graphs.startswith("recorded") for r in reports), \
        [r.summary() for r in reports]


@needs_graphs
def test_new_sizes_record_up_to_the_limit(tmp_path, caplog):
    fresh_reports()
    model = Mlp().cuda().eval()
    compiled = torch.compile(model, backend="kiln", dynamic=True, options={
        "cache_dir": tmp_path, "cuda_graphs": True, "cuda_graph_limit": 2})
    with torch.no_grad(), caplog.at_level(logging.WARNING, logger="kiln"):
        for rows in [8, 5, 8, 12, 5, 12, 20]:
            x = torch.randn(rows, 64, device="cuda")
            torch.testing.assert_close(compiled(x), model(x), rtol=2e-4, atol=2e-4)
    warnings = [r.message for r in caplog.records if "cuda_graph_limit" in r.message]
    assert len(warnings) == 1, warnings


@needs_graphs
def test_graphs_with_host_tensors_run_without_cuda_graphs(tmp_path, caplog):
    """A zero-dim CPU tensor that the graph reads is moved to the GPU at
    each call, which a replay would not repeat: such a graph runs plainly,
    its report says why, and its answers stay right."""
    reports = fresh_reports()

    def scale(x, s):
        return torch.relu(x) * s + 1

    compiled = torch.compile(scale, backend="kiln",
                             options={"cache_dir": tmp_path, "cuda_graphs": True})
    with caplog.at_level(logging.WARNING, logger="kiln"):
        for value in [2.0, 3.0, -1.0]:
            x, s = torch.randn(1000, device="cuda"), torch.tensor(value)
            torch.testing.assert_close(compiled(x, s), scale(x, s), rtol=2e-4, atol=2e-4)
    assert len(reports) == 1 and re.fullmatch(
        r"not used: input '\w+' is a tensor on the cpu", reports[0].cuda_graphs), \
        [r.summary() for r in reports]
    assert any("CUDA graphs not used" in r.message for r in caplog.records)


@needs_graphs
@pytest.mark.parametrize("clone", [False, True])
def test_outputs_live_until_the_next_call_unless_cloned(tmp_path, clone):
    fresh_reports()
    model = Mlp().cuda().eval()
    compiled = torch.compile(model, backend="kiln", options={
        "cache_dir": tmp_path, "cuda_graphs": True, "clone_outputs": clone})
    with torch.no_grad():
        for _ in range(3):  # Warm-up, recording, replay.
            compiled(torch.randn(32, 64, device="cuda"))
        x = torch.randn(32, 64, device="cuda")
        first = compiled(x)
        want, address = model(x), first.data_ptr()
        torch.testing.assert_close(first, want, rtol=2e-4, atol=2e-4)
        second = compiled(torch.randn(32, 64, device="cuda"))
        if clone:
            torch.testing.assert_close(first, want, rtol=2e-4, atol=2e-4)
            assert second.data_ptr() != address
        else:  # The replay wrote its output where the last one was.
            assert second.data_ptr() == address


@needs_graphs
def test_random_ops_draw_anew_at_every_replay(tmp_path):
    """The seed of Kiln's random ops comes from PyTorch's CUDA generator
    inside the graph, whose captured offsets advance at every replay: each
    replay's dropout mask is new, and its kept elements are scaled."""
    fresh_reports()

    def drop(x):
        return torch.nn.functional.dropout(x * 1.0, 0.5, training=True)

    compiled = torch.compile(drop, backend="kiln",
                             options={"cache_dir": tmp_path, "cuda_graphs": True})
    x = torch.rand(4096, device="cuda") + 1
    masks = []
    for _ in range(5):
        out = compiled(x).clone()
        kept = out != 0
        torch.testing.assert_close(out[kept], x[kept] * 2)
        assert 0.4 < kept.float().mean().item() < 0.6
        masks.append(kept)
    # The last three calls replay the graph; no two masks are the same.
    assert all(not torch.equal(a, b) for i, a in enumerate(masks) for b in masks[i + 1:])
