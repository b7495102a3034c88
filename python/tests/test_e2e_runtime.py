"""End to end (see test_e2e.py): what the runtime and the compiler do around
the kernels: guards, copies of inputs, result buffers, the cache, errors,
dynamic sizes, threads.
"""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from e2e_support import device, check, F32  # noqa: E402,F401
from kiln.runtime import GuardError  # noqa: E402


def test_threads_compile_at_once(tmp_path):
    """Tracing changes process-wide switches (cuDNN's, oneDNN's) while it
    runs: threads that compile at once trace one at a time, each gets its
    function's results, and the switches are as they were afterwards."""
    from concurrent.futures import ThreadPoolExecutor

    functions = [lambda x: torch.relu(x) * 2, lambda x: torch.sigmoid(x) + 1,
                 lambda x: x.sum(0), torch.nn.GRU(3, 4)]

    def compile_and_run(index):
        fn, x = functions[index % len(functions)], torch.randn(5, 2, 3)
        compiled = kiln.compile(fn, [x], cache_dir=tmp_path / str(index))
        return [torch.allclose(got, want, atol=1e-5) for got, want in zip(
            torch.utils._pytree.tree_flatten(compiled(x))[0],
            torch.utils._pytree.tree_flatten(fn(x))[0])]

    switches = (torch.backends.cudnn.enabled, torch.backends.mkldnn.enabled)
    with ThreadPoolExecutor(4) as pool:
        assert all(all(r) for r in pool.map(compile_and_run, range(8)))
    assert (torch.backends.cudnn.enabled, torch.backends.mkldnn.enabled) == switches


def test_masked_select_sizes_that_tracing_baked_in_are_refused(tmp_path):
    """Tracing bakes the number a masked_select selects into what follows
    (a mean's gradient expands to it): refused, not compiled for the
    example's mask."""
    def fn(x, mask):
        return torch.autograd.grad(x.masked_select(mask).mean(), x)[0]

    example = [torch.randn(4, 5, requires_grad=True), torch.rand(4, 5) > 0.5]
    with pytest.raises(kiln.UnsupportedOpError, match="masked_select"):
        kiln.compile(fn, example, cache_dir=tmp_path)


@pytest.mark.parametrize("select", ["masked_select", "nonzero", "unique", "mask_index",
                                    "uint8_mask_index"])
def test_results_sized_by_values_are_refused_by_name(select, tmp_path):
    """Ops whose result's size depends on values (masked_select, nonzero,
    unique, indexing by a boolean mask) are refused at import, naming the op
    and why."""
    functions = {
        "masked_select": lambda x: torch.masked_select(x, x > 0),
        "nonzero": lambda x: torch.nonzero(x > 0),
        "unique": lambda x: torch.unique(x.round()),
        "mask_index": lambda x: x[x[:, 0] > 0] * 2,
        "uint8_mask_index": lambda x: x[:, (x[0] > 0).to(torch.uint8)],
    }
    with pytest.raises(kiln.UnsupportedOpError,
                       match=r"unsupported op aten\.\w+\.\w+: the size of its result depends "
                             r"on its operands' values"):
        kiln.compile(functions[select], [torch.randn(4, 5)], cache_dir=tmp_path)


def test_guard_violations(tmp_path):
    compiled = kiln.compile(lambda x, y: x + y, [torch.randn(4, 8), torch.randn(8)],
                            cache_dir=tmp_path)
    with pytest.raises(GuardError, match=r"input 0 .*dtype is torch.float64"):
        compiled(torch.randn(4, 8, dtype=torch.float64), torch.randn(8))
    with pytest.raises(GuardError, match=r"input 1 .*size 9 at dimension 0"):
        compiled(torch.randn(4, 8), torch.randn(9))
    with pytest.raises(GuardError, match=r"input 1 .*rank is 2"):
        compiled(torch.randn(4, 8), torch.randn(1, 8))
    with pytest.raises(GuardError, match="expected 2 inputs, got 1"):
        compiled(torch.randn(4, 8))


def test_non_contiguous_inputs_are_copied(tmp_path):
    compiled = kiln.compile(lambda x, y: x * y, [torch.randn(6, 5), torch.randn(6, 5)],
                            cache_dir=tmp_path)
    x = torch.randn(5, 6).t()
    y = torch.randn(6, 5)
    torch.testing.assert_close(compiled(x, y), x * y)


def test_misaligned_views_are_copied(device, tmp_path):
    compiled = kiln.compile(lambda x, y: x * y, [torch.randn(6, 8, device=device),
                                                 torch.randn(6, 8, device=device)],
                            cache_dir=tmp_path)
    base = torch.randn(6 * 8 + 1, device=device)
    x = base[1:].view(6, 8)  # data 4 bytes past an aligned address
    y = torch.randn(6, 8, device=device)
    torch.testing.assert_close(compiled(x, y), x * y)
    out = torch.empty(6 * 8 + 1, device=device)[1:].view(6, 8)
    with pytest.raises(GuardError, match="16-byte aligned"):
        compiled.artifact(x, y, out=[out])


def test_result_buffers_are_checked(device, tmp_path):
    x = torch.randn(6, 8, device=device)
    compiled = kiln.compile(lambda a: a * 2, [x], cache_dir=tmp_path)
    cases = [
        ([], "expected 1 result buffers, got 0"),
        ([torch.empty(5, 8, device=device)], "of shape \\[5, 8\\]"),
        ([torch.empty(6, 8, dtype=torch.float64, device=device)], "torch.float64"),
        ([x], "must not overlap the inputs"),
    ]
    for out, message in cases:
        with pytest.raises(GuardError, match=message):
            compiled.artifact(x, out=out)


def test_second_compile_hits_the_cache(tmp_path):
    fn = lambda x: torch.relu(x) * x  # noqa: E731
    first = kiln.compile(fn, [torch.randn(3, 3)], cache_dir=tmp_path)
    mtime = first.artifact.path.stat().st_mtime_ns
    second = kiln.compile(fn, [torch.randn(3, 3)], cache_dir=tmp_path)
    assert second.artifact.path == first.artifact.path
    assert second.artifact.path.stat().st_mtime_ns == mtime
    third = kiln.compile(fn, [torch.randn(3, 3)], cache_dir=tmp_path,
                         options={"openmp": False})
    assert third.artifact.path != first.artifact.path


def test_another_cpu_misses_the_cache(tmp_path, monkeypatch):
    """Artifacts use the host CPU's features: a cache shared with a machine
    of another CPU does not hand its code over."""
    import kiln.compiler

    fn = lambda x: torch.relu(x) * x  # noqa: E731
    first = kiln.compile(fn, [torch.randn(3, 3)], cache_dir=tmp_path)
    monkeypatch.setattr(kiln.compiler, "_host_cpu_fingerprint",
                        lambda: "vendor_id: another|flags: sse2")
    second = kiln.compile(fn, [torch.randn(3, 3)], cache_dir=tmp_path)
    assert second.artifact.path != first.artifact.path


def test_compile_error_is_reported(tmp_path):
    from kiln.compiler import compile_graph_text

    bad = "fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = fx.relu %x\n}\n"
    with pytest.raises(kiln.KilnError) as info:
        compile_graph_text(bad, cache_dir=tmp_path)
    assert info.value.diagnostics[0].line == 2


def test_a_compiler_crash_keeps_its_reproducer(tmp_path):
    """A kiln-compile that dies by a signal leaves no diagnostic to point at:
    its input and output are kept for a bug report."""
    from kiln.compiler import compile_graph_text

    tools = tmp_path / "tools"
    tools.mkdir()
    crashing = tools / "kiln-compile"
    crashing.write_text("#!/bin/sh\necho 'Stack dump: pass X' >&2\nkill -SEGV $$\n")
    crashing.chmod(0o755)
    text = "fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n}\n"
    with pytest.raises(kiln.KilnError, match="exit code -11") as info:
        compile_graph_text(text, cache_dir=tmp_path / "cache", tool_dir=tools)
    kept = info.value.reproducer
    assert kept is not None and kept.parent == tmp_path / "cache" / "failed"
    assert kept.read_text() == text
    assert "Stack dump: pass X" in kept.with_suffix(".log").read_text()

    # A refusal with an error diagnostic points at the input itself.
    bad = "fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = fx.relu %x\n}\n"
    with pytest.raises(kiln.KilnError) as info:
        compile_graph_text(bad, cache_dir=tmp_path / "cache")
    assert info.value.reproducer is None


def test_unknown_devices_are_refused():
    with pytest.raises(NotImplementedError, match="not 'meta'"):
        kiln.compile(lambda x: x, [torch.randn(2)], device="meta")


def test_gpu_block_size_option(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("no GPU on this machine")
    device = "cuda"
    compiled = check(lambda x, y: torch.relu(x) * y, [((33, 17), F32), ((33, 17), F32)],
                     options={"block-size": 64}, device=device, tmp_path=tmp_path)
    with pytest.raises(GuardError, match="input 0 .*tensor is on cpu, the graph runs on cuda"):
        compiled(torch.randn(33, 17), torch.randn(33, 17, device="cuda"))


def test_gpu_artifact_needs_a_gpu_to_run(tmp_path):
    """A GPU artifact loads anywhere; without a GPU, running it fails with a
    message."""
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    text = ("fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = fx.relu %x : tensor<4xf32>\n  fx.output %0 : tensor<4xf32>\n}\n")
    path = compile_graph_text(text, target="cuda", cache_dir=tmp_path)
    artifact = Artifact(path)
    assert artifact.device == "cuda"
    with pytest.raises(RuntimeError, match="runs on CUDA GPUs, and PyTorch sees none"):
        artifact(torch.randn(4))


def test_runtime_checks_the_guards_the_importer_emitted(tmp_path):
    from kiln.guards import GraphGuards

    compiled = kiln.compile(lambda x, y: x + y, [torch.randn(4, 8), torch.randn(8)],
                            cache_dir=tmp_path)
    assert compiled.artifact.guards == GraphGuards.parse(compiled.graph_text)
    assert compiled.artifact.guards.arguments[1].sizes == (8,)
    with pytest.raises(GuardError, match=r"input 1 \(expected tensor<8xf32>\): size 9"):
        compiled(torch.randn(4, 8), torch.randn(9))


def test_dynamic_sizes_run_on_other_sizes(tmp_path):
    def f(x, b, y):
        return torch.relu(x + b) * y

    example = [torch.randn(4, 8), torch.randn(8), torch.randn(4, 1)]
    compiled = kiln.compile(f, example, dynamic=True, cache_dir=tmp_path)
    assert "attributes {symbols = [#fx.symbol<\"s0\", min = 2>, #fx.symbol<\"s1\", min = 2>]}" \
        in compiled.graph_text
    for rows, cols in [(4, 8), (2, 3), (7, 33)]:
        inputs = [torch.randn(rows, cols), torch.randn(cols), torch.randn(rows, 1)]
        torch.testing.assert_close(compiled(*inputs), f(*inputs))
    # x's and y's rows are one symbol: the runtime checks that they agree.
    with pytest.raises(GuardError, match=r"input 2 .*size 6 at dimension 0 differs from "
                                         r"size 5 of input 0 .*size symbol 's0'"):
        compiled(torch.randn(5, 8), torch.randn(8), torch.randn(6, 1))
    with pytest.raises(GuardError, match=r"input 0 .*size 1 at dynamic dimension 0 is "
                                         r"outside the guarded range 2 <= s0"):
        compiled(torch.randn(1, 8), torch.randn(8), torch.randn(1, 1))


def test_dynamic_chosen_dims_and_a_reduction(tmp_path):
    def f(x):
        return (x * 2).sum(dim=1)

    compiled = kiln.compile(f, [torch.randn(3, 16)], dynamic={0: [0]}, cache_dir=tmp_path)
    assert "tensor<?x16xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 16]" in compiled.graph_text
    x = torch.randn(9, 16)
    torch.testing.assert_close(compiled(x), f(x))
    with pytest.raises(GuardError, match="size 8 at dimension 1"):
        compiled(torch.randn(9, 8))


def test_module_parameters_are_passed_at_every_call(tmp_path):
    class BiasRelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = torch.nn.Parameter(torch.randn(8))
            self.register_buffer("scale", torch.full((4, 1), 2.0))

        def forward(self, x):
            return torch.relu(x + self.bias) * self.scale

    module = BiasRelu()
    compiled = kiln.compile(module, [torch.randn(4, 8)], cache_dir=tmp_path)
    assert len(compiled.constants) == 2
    x = torch.randn(4, 8)
    torch.testing.assert_close(compiled(x), module(x))
    with torch.no_grad():
        module.bias.add_(1.0)  # The artifact reads the module's own tensors.
    torch.testing.assert_close(compiled(x), module(x))


def test_nested_results_keep_their_structure(tmp_path):
    compiled = kiln.compile(lambda x: (x + 1, [x * 2, (x - 1,)]), [torch.randn(3)],
                            cache_dir=tmp_path)
    x = torch.randn(3)
    a, (b, (c,)) = compiled(x)
    torch.testing.assert_close((a, b, c), (x + 1, x * 2, x - 1))


def test_repeated_calls_recheck_what_changes(tmp_path):
    # A call with the same kind of inputs as an earlier one skips the checks;
    # any change a guard or the layout depends on is checked again.
    f = lambda x, y: x * y + 1  # noqa: E731
    compiled = kiln.compile(f, [torch.randn(6, 8), torch.randn(6, 8)], cache_dir=tmp_path)
    for _ in range(3):
        x, y = torch.randn(6, 8), torch.randn(6, 8)
        torch.testing.assert_close(compiled(x, y), f(x, y))
    with pytest.raises(GuardError, match="size 9 at dimension 1"):
        compiled(torch.randn(6, 9), torch.randn(6, 9))
    with pytest.raises(GuardError, match="dtype is torch.float64"):
        compiled(torch.randn(6, 8, dtype=torch.float64), torch.randn(6, 8))
    transposed = torch.randn(8, 6).t()
    misaligned = torch.randn(6 * 8 + 1)[1:].view(6, 8)
    torch.testing.assert_close(compiled(transposed, misaligned), f(transposed, misaligned))
    x, y = torch.randn(6, 8), torch.randn(6, 8)
    torch.testing.assert_close(compiled(x, y), f(x, y))
