"""The torch.compile backend: partitioning into compiled regions and PyTorch
fallbacks, fallback reports and errors, options, and (on torch 2.x)
torch.compile(backend="kiln") itself for inference and training."""

import logging
import operator
import re

import pytest

torch = pytest.importorskip("torch")

from kiln.backend import FallbackError  # noqa: E402
from kiln.importer import capture  # noqa: E402
from kiln.numerics import NumericsError, compare  # noqa: E402
from kiln.options import Options  # noqa: E402

from e2e_support import partitioned, regions  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU on this machine"))]
HAS_DYNAMO = hasattr(torch, "compile")


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


# Fourier transforms along more than 2^23 elements, of a length other than a
# power of two, have no lowering (Bluestein's transform takes up to 2^23):
# they run in PyTorch. 9 · 2^20 is one that eager transforms quickly.
LONG_FFT = 9 * 2 ** 20


def long_fourier_transforms(x, w):
    y = torch.relu(x @ w) * 2
    t = y.reshape(-1).repeat(-(-LONG_FFT // y.numel()))[:LONG_FFT] * 0.001 + 1
    s = torch.fft.rfft(t).abs()[:4] + torch.fft.rfft(t * 2).abs()[1:5]
    return (s[:2] * 1e-6).tanh(), y.sum(0)


def test_unsupported_ops_run_in_pytorch_between_regions(device, tmp_path, caplog):
    generator = torch.Generator().manual_seed(0)
    x, w = (torch.randn(8, 16, generator=generator).to(device),
            torch.randn(16, 40, generator=generator).to(device))
    with caplog.at_level(logging.INFO, logger="kiln"):
        compiled = partitioned(long_fourier_transforms, [x, w], tmp_path)
    # A long Fourier transform imports into fx but has no lowering:
    # kiln-compile's diagnostics name it, and it leaves the regions around
    # it.
    report = compiled.kiln_report
    assert report.kernels == 2 and len(regions(compiled)) == 2
    assert {op for op, _ in report.fallbacks} == {"aten._fft_r2c.default"}
    assert all("no lowering for 'fx." in reason for _, reason in report.fallbacks)
    assert "2 op(s) ran in PyTorch" in caplog.text
    fresh = torch.randn(8, 16, generator=generator).to(device)
    for got, want in zip(compiled(fresh, w), long_fourier_transforms(fresh, w)):
        torch.testing.assert_close(got, want)


def test_regions_that_feed_each_other(tmp_path):
    """y feeds the second region directly and through a long Fourier
    transform, which the partitioner must not put in between: two regions,
    one reading the other's result."""
    def fn(x):
        y = torch.relu(x) * 3
        flat = y.reshape(-1).repeat(-(-LONG_FFT // 200))[:LONG_FFT] * 0.01 + 1
        return y + torch.fft.rfft(flat).abs()[:200].reshape(5, 40) * 1e-6
    x = torch.randn(5, 40)
    compiled = partitioned(fn, [x], tmp_path)
    assert compiled.kiln_report.kernels == 2
    x = torch.randn(5, 40)
    torch.testing.assert_close(compiled(x), fn(x))


def test_ops_the_importer_refuses_fall_back_with_its_reason(tmp_path):
    def fn(x):
        return torch.nonzero(x > 0).float().sum() + (x * 3).sum()
    x = torch.randn(6, 5)
    compiled = partitioned(fn, [x], tmp_path)
    ops = {op: reason for op, reason in compiled.kiln_report.fallbacks}
    assert "aten.nonzero.default" in ops, compiled.kiln_report.summary()
    torch.testing.assert_close(compiled(x), fn(x))


def test_cuda_convolutions_leave_their_bias_to_the_region_after_them():
    """A CUDA convolution (cuDNN's, which adds a bias in a kernel of its
    own) gets no bias; an add after it does, which the region that reads the
    convolution takes in. CPU convolutions keep theirs (oneDNN's adds it
    inside)."""
    from kiln.backend import _record_values, _split_convolution_biases

    def fn(x, w, b, v):
        return (torch.relu(torch.nn.functional.conv2d(x, w, b, padding=1)),
                torch.nn.functional.conv1d(x[:, :, 0], v))

    inputs = [torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3), torch.randn(4),
              torch.randn(5, 3, 2)]
    gm = capture(fn, inputs)
    values = _record_values(gm, inputs)
    assert not _split_convolution_biases(gm, values, "cpu")
    assert _split_convolution_biases(gm, values, "cuda")
    gm.recompile()
    convolutions = [n for n in gm.graph.nodes if n.target is torch.ops.aten.convolution.default]
    assert len(convolutions) == 2 and all(n.args[2] is None for n in convolutions)
    (total,) = convolutions[0].users
    assert total.target is torch.ops.aten.add.Tensor
    assert total.args[1].target is torch.ops.aten.view.default
    assert total.args[1].args[1] == [-1, 1, 1]
    for got, want in zip(gm(*inputs), fn(*inputs)):
        torch.testing.assert_close(got, want)


def test_library_kernels_read_strided_views_of_region_buffers(tmp_path):
    """A region writes its results contiguously; a view that feeds a
    library kernel and is not contiguous (the transposes here, or
    attention's slice of a padded bias) stays in PyTorch over the region's
    buffer, so that the kernel sees eager's strides. So does a view that
    only the region's outside reads (the reshape): the region writes the
    tensor it views."""
    def fn(a, b):
        return torch.mm(a.relu().reshape(6, 8), (b * 2).t()).t()

    a, b = torch.randn(3, 16), torch.randn(5, 8)
    compiled = partitioned(fn, [a, b], tmp_path, fallback="error",
                           library_ops=["aten.mm.default"])
    # Both pointwise ops compile (torch 1.13's partitioner makes a region of
    # each, later ones one region of both); the views do not.
    assert compiled.kiln_report.compiled_ops == 2 and not compiled.kiln_report.fallbacks
    in_pytorch = [str(n.target) for n in compiled.graph.nodes if n.op == "call_function"]
    assert in_pytorch.count("aten.mm.default") == 1
    assert sum(op in ("aten.reshape.default", "aten.view.default",
                      "aten._unsafe_view.default") for op in in_pytorch) == 1
    (mm,) = [n for n in compiled.graph.nodes if n.target is torch.ops.aten.mm.default]
    # A view of a region's result (one of several: an item of its outputs).
    source = mm.args[0].args[0]
    if source.target is operator.getitem:
        source = source.args[0]
    assert source.op == "call_module"
    assert mm.args[1].target in (torch.ops.aten.t.default, torch.ops.aten.permute.default,
                                 torch.ops.aten.transpose.int)
    a, b = torch.randn(3, 16), torch.randn(5, 8)
    torch.testing.assert_close(compiled(a, b), fn(a, b))


def test_views_read_outside_a_region_are_pytorchs(tmp_path):
    """A region writes its results contiguously, so a view that leaves it
    would be a copy: a transpose of an input that the region multiplies by
    and the backward saves, a product reshaped for a reader outside. PyTorch
    makes such views instead (a twin, where the region reads the view too),
    and the region writes the tensor viewed."""
    def fn(x, w):
        wt = w.t()
        h = torch.relu(x @ wt)
        return h.reshape(4, 3, 10), wt, h * 2

    x, w = torch.randn(12, 16), torch.randn(10, 16)
    compiled = partitioned(fn, [x, w], tmp_path, fallback="error")
    [region] = regions(compiled)
    in_pytorch = [n.target for n in compiled.graph.nodes if n.op == "call_function"]
    aten = torch.ops.aten
    assert any(t in (aten.t.default, aten.permute.default, aten.transpose.int)
               for t in in_pytorch), in_pytorch
    assert any(t in (aten.view.default, aten._unsafe_view.default, aten.reshape.default)
               for t in in_pytorch), in_pytorch
    # The region's results: the product's relu and its double, no transpose.
    [results] = [line for line in region.graph_text.splitlines() if "fx.output" in line]
    assert results.count("tensor<12x10xf32>") == 2 and "16x10" not in results, results
    x, w = torch.randn(12, 16), torch.randn(10, 16)
    for got, want in zip(compiled(x, w), fn(x, w)):
        torch.testing.assert_close(got, want)


def test_views_stay_in_a_region_where_pytorch_could_not_make_them(tmp_path):
    """Eager's pointwise ops keep their operand's layout: here the product
    of a transposed input is transposed, its transpose back contiguous, and
    a view of that works. The region writes the product contiguous, so the
    transpose back, made by PyTorch, could not be viewed: the view and the
    transpose stay in the region, which writes the result (a copy)."""
    def fn(x):
        rotated = x.transpose(1, 2) * 2 + 1
        return rotated.transpose(1, 2).reshape(2, 4, 24)

    x = torch.randn(2, 4, 3, 8)
    compiled = partitioned(fn, [x], tmp_path, fallback="error")
    in_pytorch = [n.target for n in compiled.graph.nodes if n.op == "call_function"]
    assert in_pytorch == [], in_pytorch
    x = torch.randn(2, 4, 3, 8)
    torch.testing.assert_close(compiled(x), fn(x))


def test_views_of_region_inputs_whose_strides_are_unknown_stay_in_it(tmp_path):
    """A region's inputs may have other strides than eager's (a backward
    graph's saved tensors are what the forward's regions wrote): a view of
    one that depends on its strides stays in the region, which reads the
    input as it comes; a transpose, which any strides allow, leaves (here
    as twins of the views the region reads too)."""
    def fn(x, y):
        viewed, transposed = x.view(24, 2), y.t()
        return viewed, torch.relu(viewed) * 2, transposed, transposed * 3

    x, y = torch.randn(4, 6, 2), torch.randn(3, 5)
    compiled = partitioned(fn, [x, y], tmp_path, fallback="error")
    in_pytorch = [n.target for n in compiled.graph.nodes if n.op == "call_function"
                  and n.target is not operator.getitem]
    aten = torch.ops.aten
    assert aten.view.default not in in_pytorch and \
        aten._unsafe_view.default not in in_pytorch, in_pytorch
    assert any(t in (aten.t.default, aten.permute.default, aten.transpose.int)
               for t in in_pytorch), in_pytorch
    x, y = torch.randn(4, 6, 2), torch.randn(3, 5)
    for got, want in zip(compiled(x, y), fn(x, y)):
        torch.testing.assert_close(got, want)


def test_fallback_error_names_the_op(tmp_path):
    x, w = torch.randn(8, 16), torch.randn(16, 40)
    with pytest.raises(FallbackError,
                       match=r"aten\._fft_r2c\.default x\d: kiln-fx-to-loop: "
                             r"no lowering for 'fx\.fft_r2c'"):
        partitioned(long_fourier_transforms, [x, w], tmp_path, fallback="error")


def test_a_fully_supported_graph_is_one_region(device, tmp_path):
    def fn(x, w, b):
        h = torch.nn.functional.gelu(x @ w + b)
        return torch.softmax(h, -1), torch.nn.functional.layer_norm(h, (32,))
    generator = torch.Generator().manual_seed(1)
    args = [torch.randn(*s, generator=generator).to(device) for s in [(4, 16), (16, 32), (32,)]]
    compiled = partitioned(fn, args, tmp_path, fallback="error")
    assert compiled.kiln_report.kernels == 1 and not compiled.kiln_report.fallbacks
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def conv_bn_relu(x, w, scale, shift):
    return torch.relu(torch.nn.functional.conv2d(x, w, padding=1) * scale + shift)


def test_convolutions_call_the_library_by_default(device, tmp_path):
    """Through PyTorch, between regions (on CUDA, a graph of such small
    convolutions would call cuDNN from its region: cudnn_in_regions="auto")."""
    generator = torch.Generator().manual_seed(2)
    args = [torch.randn(*s, generator=generator).to(device)
            for s in [(2, 3, 8, 8), (4, 3, 3, 3), (4, 1, 1), (4, 1, 1)]]
    compiled = partitioned(conv_bn_relu, args, tmp_path, fallback="error",
                           cudnn_in_regions=False)
    report = compiled.kiln_report
    # A library call is a choice, not a fallback: fallback="error" allows it.
    assert report.library_calls == {"aten.convolution.default": 1}
    assert report.kernels == 1 and not report.fallbacks
    assert "library kernels (option library_ops): aten.convolution.default x1" \
        in report.summary()
    torch.testing.assert_close(compiled(*args), conv_bn_relu(*args), rtol=1e-4, atol=1e-4)

    everything = partitioned(conv_bn_relu, args, tmp_path, fallback="error", library_ops=[])
    assert not everything.kiln_report.library_calls and everything.kiln_report.kernels == 1
    assert everything.kiln_report.compiled_ops == report.compiled_ops + 1
    torch.testing.assert_close(everything(*args), conv_bn_relu(*args), rtol=1e-4, atol=1e-4)


def conv_network(x, w1, w2, w3):
    """A 2-d convolution with a bias-free residual, a grouped one and a
    strided one, a 1-d convolution of the result's rows."""
    h = torch.relu(torch.nn.functional.conv2d(x, w1, padding=1))
    h = h + torch.nn.functional.conv2d(h, w2, padding=1, groups=4)
    h = torch.nn.functional.conv2d(h, w3, stride=2)
    return torch.nn.functional.conv1d(h.flatten(2), w3[:, :, 0, :2])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cudnn_in_regions_compiles_convolutions_into_the_region(device, dtype, tmp_path):
    """With cudnn_in_regions, CUDA's convolutions run inside the one region
    (cuDNN called by the artifact, on channels-last copies); on the CPU the
    option changes nothing."""
    generator = torch.Generator().manual_seed(4)
    args = [torch.randn(*s, generator=generator).to(device, dtype)
            for s in [(2, 8, 9, 9), (16, 8, 3, 3), (16, 4, 3, 3), (16, 16, 2, 2)]]
    compiled = partitioned(conv_network, args, tmp_path, fallback="error",
                           cudnn_in_regions=True)
    report = compiled.kiln_report
    if device == "cuda":
        assert not report.library_calls and report.kernels >= 1
        (region,) = regions(compiled)
        assert region.graph_text.count("fx.convolution") == 4
    else:
        assert report.library_calls == {"aten.convolution.default": 4}
    # Filters scaled by their depth keep every layer's values near 1.
    fresh = [torch.randn(a.shape, generator=generator) /
             (a[0].numel() ** 0.5 if i else 1) for i, a in enumerate(args)]
    got = compiled(*[a.to(device, dtype) for a in fresh]).double()
    exact = conv_network(*[a.to(device, dtype).double() for a in fresh])
    if dtype == torch.float32:
        torch.testing.assert_close(got, exact, rtol=1e-4, atol=1e-4)
    else:
        # bf16 rounds after every layer, eager's and Kiln's in other orders:
        # Kiln is as far from the exact result as eager is.
        eager = conv_network(*[a.to(device, dtype) for a in fresh]).double()
        assert (got - exact).abs().max() <= 2 * (eager - exact).abs().max() + 1e-3


def test_cudnn_in_regions_is_a_flag_or_auto():
    assert Options.parse({}).cudnn_in_regions == "auto"
    assert Options.parse({"cudnn_in_regions": True}).cudnn_in_regions is True
    with pytest.raises(ValueError, match="cudnn_in_regions: expected True, False or 'auto'"):
        Options.parse({"cudnn_in_regions": "yes"})


def squeeze_excitation(x, w1, w2, w3):
    h = torch.nn.functional.conv2d(x, w1)
    pooled = h.mean((2, 3), keepdim=True)
    gate = torch.nn.functional.conv2d(torch.relu(torch.nn.functional.conv2d(pooled, w2)), w3)
    return h * torch.sigmoid(gate)


def convolution_stack(x, w1, w2, w3):
    h = torch.relu(torch.nn.functional.conv2d(x, w1, padding=1))
    return torch.nn.functional.conv2d(torch.relu(torch.nn.functional.conv2d(h, w2, padding=1)),
                                      w3, padding=1)


@pytest.mark.parametrize("fn, batch, channels, size, host_bound", [
    # Squeeze-and-excitation gates take the GPU microseconds at any size.
    (squeeze_excitation, 2, 8, 8, True),
    (squeeze_excitation, 64, 256, 56, True),
    # Convolutions of large images keep the GPU busy longer than the host.
    (convolution_stack, 64, 64, 56, False),
    (convolution_stack, 1, 8, 8, True),
])
def test_auto_calls_cudnn_from_regions_where_the_host_bounds(fn, batch, channels, size,
                                                             host_bound):
    """cudnn_in_regions="auto" (CUDA inference graphs without CUDA graphs)
    calls cuDNN from the regions when a quarter of the convolutions take the
    GPU less than a quarter of the host's time to call them."""
    from kiln.backend import _host_bound_convolutions, _record_values

    def shapes(n, c, hw):
        if fn is squeeze_excitation:
            return [(n, 3, hw, hw), (c, 3, 1, 1), (c // 4, c, 1, 1), (c, c // 4, 1, 1)]
        return [(n, 3, hw, hw), (c, 3, 3, 3), (c, c, 3, 3), (c, c, 3, 3)]

    gm = capture(fn, [torch.randn(*s) for s in shapes(2, 8, 8)])
    # Shapes alone decide: meta tensors of the sizes asked for.
    values = _record_values(gm, [torch.empty(*s, device="meta")
                                 for s in shapes(batch, channels, size)])
    assert _host_bound_convolutions(gm, values) is host_bound


@pytest.mark.skipif(not torch.cuda.is_available() or
                    not hasattr(torch.ops.aten, "scaled_dot_product_attention"),
                    reason="needs a GPU and torch 2.x's fused attention")
def test_explicit_attention_becomes_one_fused_call(tmp_path):
    """Attention written out (BERT's: products around a softmax of scaled,
    masked scores) runs as one fused attention call on CUDA, a library
    call; with library_ops=[] Kiln compiles it all."""
    def fn(q, k, v, mask):
        scores = torch.matmul(q, k.transpose(-1, -2)) / 8.0
        out = torch.matmul(torch.softmax(scores + mask, dim=-1), v)
        return out.transpose(1, 2).reshape(2, 128, 256) * 2

    generator = torch.Generator().manual_seed(9)
    shapes = [(2, 4, 128, 64)] * 3 + [(2, 1, 1, 128)]
    inputs = [torch.randn(*s, generator=generator).cuda().bfloat16() for s in shapes]
    fused = partitioned(fn, inputs, tmp_path, fallback="error")
    # (kiln.compile's capture traces the fused call as the op of the kernel
    # it chooses; the backend keeps scaled_dot_product_attention.)
    assert sum(count for op, count in fused.kiln_report.library_calls.items()
               if "scaled_dot_product" in op) == 1
    everything = partitioned(fn, inputs, tmp_path, fallback="error", library_ops=[])
    assert not everything.kiln_report.library_calls
    fresh = [torch.randn(*s, generator=generator).cuda().bfloat16() for s in shapes]
    # Both against f32 arithmetic: the fused kernel keeps the scores in f32.
    want = fn(*[t.float() for t in fresh])
    for compiled in (fused, everything):
        torch.testing.assert_close(compiled(*fresh).float(), want, rtol=3e-2, atol=3e-2)


def test_convolution_gradients_compile_without_the_library(device, tmp_path):
    """A training step's convolution_backward (no bias: a masked-off
    result) is a library call by default and compiles with library_ops=[]."""
    def step(x, w):
        x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
        y = torch.nn.functional.conv2d(x, w, stride=2, padding=1).relu()
        return torch.autograd.grad((y * y).sum(), (x, w))

    generator = torch.Generator().manual_seed(6)
    args = [torch.randn(*s, generator=generator).to(device) for s in [(2, 3, 9, 9), (5, 3, 3, 3)]]
    library = partitioned(step, args, tmp_path, fallback="error")
    assert library.kiln_report.library_calls.get("aten.convolution_backward.default") == 1
    everything = partitioned(step, args, tmp_path, fallback="error", library_ops=[])
    assert not everything.kiln_report.library_calls
    fresh = [torch.randn(a.shape, generator=generator).to(device) for a in args]
    for got, want in zip(everything(*fresh), step(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_views_alone_stay_views(tmp_path):
    compiled = partitioned(lambda x: x.t().unsqueeze(0), [torch.randn(3, 4)], tmp_path)
    assert compiled.kiln_report.kernels == 0 and not compiled.kiln_report.fallbacks
    x = torch.randn(3, 4)
    assert compiled(x).data_ptr() == x.data_ptr()


def test_second_compile_reuses_the_cached_artifacts(tmp_path):
    x, w = torch.randn(8, 16), torch.randn(16, 40)
    partitioned(long_fourier_transforms, [x, w], tmp_path)
    # The two final regions, and one that a failed op's blame split later.
    cached = sorted(tmp_path.glob("*.so"))
    assert len(cached) == 3
    stamps = [p.stat().st_mtime_ns for p in cached]
    partitioned(long_fourier_transforms, [x, w], tmp_path)
    assert sorted(tmp_path.glob("*.so")) == cached
    assert [p.stat().st_mtime_ns for p in cached] == stamps


def test_options_are_checked():
    """Kiln's own options are checked as they are parsed; other keys are the
    pipeline's, checked against the target's pipeline, which names its
    closest option, or Kiln's closest."""
    with pytest.raises(ValueError, match=r"is 'fallbak' the Kiln option 'fallback'\?"):
        Options.parse({"fallbak": "error"}).check_pipeline("cpu")
    with pytest.raises(ValueError, match="did you mean 'vector-bytes'") as error:
        Options.parse({"vectr-bytes": 16}).check_pipeline("cpu")
    assert "Kiln option" not in str(error.value)
    assert Options.parse({"openmp": False, "pipeline_options": {"inline": True}}) \
        .pipeline_options == {"openmp": False, "inline": True}
    with pytest.raises(ValueError, match=r"\['openmp'\] given twice"):
        Options.parse({"openmp": False, "pipeline_options": {"openmp": True}})
    with pytest.raises(ValueError, match="pipeline_options: expected a dict"):
        Options.parse({"pipeline_options": "openmp=false"})
    with pytest.raises(ValueError, match="expected 'eager' or 'error'"):
        Options.parse({"fallback": "never"})
    assert Options.parse({"pipeline_options": {"openmp": False}}).pipeline_options == \
        {"openmp": False}
    with pytest.raises(ValueError, match="library_ops: expected a list of ATen op names"):
        Options.parse({"library_ops": "aten.convolution.default"})


def test_misspelt_pipeline_options_fail_before_compiling(tmp_path):
    """A pipeline option the target's pipeline lacks fails before any region
    compiles, naming the closest option."""
    def fn(x):
        return torch.relu(x) * 2

    with pytest.raises(ValueError, match="'vectr-bytes': did you mean 'vector-bytes'"):
        partitioned(fn, [torch.randn(4)], tmp_path,
                    pipeline_options={"vectr-bytes": 32})
    assert not list(tmp_path.glob("*.so"))


def test_region_compiles_are_logged_at_info(tmp_path, caplog):
    """At INFO the backend says how many of a graph's regions have compiled,
    and its report; at DEBUG each artifact's cache hit or compile time."""
    def fn(x, w):
        return torch.relu(torch.nn.functional.conv2d(x, w)).sum(-1)

    args = [torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)]
    with caplog.at_level(logging.DEBUG, logger="kiln"):
        partitioned(fn, args, tmp_path)
        partitioned(fn, args, tmp_path)
    messages = [r.getMessage() for r in caplog.records if r.name == "kiln"]
    assert sum("1 of 1 regions compiled" in m for m in messages) == 2
    assert any("kiln-compile --target=cpu took" in m for m in messages)
    assert any("from the cache" in m for m in messages)


def test_options_check_numerics():
    assert Options.parse({"check_numerics": "warn"}).check_numerics == "warn"
    with pytest.raises(ValueError, match="check_numerics=True: expected False, 'warn' or "
                                         "'error'"):
        Options.parse({"check_numerics": True})
    assert Options.parse({"check_tolerance": 0.1}).check_tolerance == 0.1
    for bad in (-1.0, "0.1", float("nan")):
        with pytest.raises(ValueError, match="check_tolerance=.*: expected None or a number"):
            Options.parse({"check_tolerance": bad})


def miscompiled(region, wrong_output):
    """Makes a region's artifact add 1 to one of its results, as a wrong
    lowering would."""
    artifact = region.artifact

    def wrong(*args):
        results = list(artifact(*args))
        results[wrong_output] = results[wrong_output] + 1
        return results
    region.artifact = wrong


def test_check_numerics_names_the_wrong_output(device, tmp_path, caplog):
    """Each region is compared with PyTorch on the inputs it was given: the
    second region is wrong, the first one right; the report names the node of
    the wrong output and the user's line. 'warn' logs it once and goes on."""
    generator = torch.Generator().manual_seed(5)
    x, w = (torch.randn(8, 16, generator=generator).to(device),
            torch.randn(16, 40, generator=generator).to(device))
    compiled = partitioned(long_fourier_transforms, [x, w], tmp_path, check_numerics="warn")
    first, second = regions(compiled)
    assert first.check is not None and second.check is not None
    compiled(x, w)
    assert not first.check.mismatches and not second.check.mismatches
    miscompiled(second, 0)
    with caplog.at_level(logging.WARNING, logger="kiln"):
        compiled(x, w)
        compiled(x, w)
    assert not first.check.mismatches and len(second.check.mismatches) == 2
    warnings = [r.getMessage() for r in caplog.records if "differs from PyTorch" in r.getMessage()]
    assert len(warnings) == 1
    assert re.search(r"region 1: output 0 'tanh(_\d+)?' \(aten.tanh.default", warnings[0])
    assert "relative error" in warnings[0]
    if not HAS_DYNAMO:  # torch 2.11's partitioned graph has lost this node's trace.
        assert "aten.tanh.default at " in warnings[0] and "test_backend.py:" in warnings[0]


def test_check_numerics_error_raises(tmp_path):
    def fn(x):
        y = torch.nn.functional.layer_norm(x, [16]).relu()
        return y, y.amax(-1)
    x = torch.randn(4, 16)
    compiled = partitioned(fn, [x], tmp_path, check_numerics="error")
    (region,) = regions(compiled)
    compiled(x)
    miscompiled(region, 1)
    with pytest.raises(NumericsError, match=r"region 0: output 1 'amax' \(aten.amax.default"):
        compiled(x)


def test_check_numerics_per_op(tmp_path):
    """With check_granularity="ops" every op is a region of its own: the
    report names the op itself, not the region's output it feeds."""
    def fn(x):
        return torch.nn.functional.layer_norm(x, [16]).relu() * 2
    x = torch.randn(4, 16)
    fused = partitioned(fn, [x], tmp_path, check_numerics="error")
    per_op = partitioned(fn, [x], tmp_path, check_numerics="error", check_granularity="ops")
    assert len(regions(fused)) == 1
    assert len(regions(per_op)) == per_op.kiln_report.kernels > 2
    torch.testing.assert_close(per_op(x), fn(x))
    relu = next(r for r in regions(per_op) if "fx.relu" in r.graph_text)
    miscompiled(relu, 0)
    with pytest.raises(NumericsError, match=r"output 0 'relu' \(aten.relu.default"):
        per_op(x)
    with pytest.raises(ValueError, match="check_granularity='op': expected 'regions' or 'ops'"):
        Options.parse({"check_granularity": "op"})


def test_check_numerics_sees_inputs_change(tmp_path):
    def fn(x):
        return torch.softmax(x, -1) * 2
    x = torch.randn(4, 16)
    compiled = partitioned(fn, [x], tmp_path, check_numerics="error")
    (region,) = regions(compiled)
    artifact = region.artifact

    def clobbering(*args):
        results = artifact(*args)
        args[0][1, 2] = 7.0
        return results
    region.artifact = clobbering
    with pytest.raises(NumericsError, match=r"input 0 \(which it must only read\) differs "
                                            r"from PyTorch: .* at index \[1, 2\]: 7 instead"):
        compiled(x)


def test_compare_by_dtype():
    want = torch.tensor([1.0, float("nan"), float("inf"), -2.0])
    assert compare(want.clone(), want) is None
    assert compare(want + 1e-5, want) is None  # Within f32's 1e-4 of max |want| = 2.
    mismatch = compare(torch.tensor([1.0, 0.0, float("inf"), -2.0]), want)
    assert mismatch.index == (1,) and mismatch.error == float("inf")
    mismatch = compare(torch.tensor([1.0, float("nan"), float("inf"), -1.0]), want)
    assert mismatch.index == (3,) and mismatch.error == 0.5
    assert compare(want.bfloat16() * 1.01, want.bfloat16()) is None
    ints = torch.arange(6).reshape(2, 3)
    assert compare(ints + (ints == 4), ints).index == (1, 1)
    assert compare(ints + 1, ints, tolerance=1) is None
    with pytest.raises(NumericsError, match="shape"):
        compare(ints.float(), ints)
    # Complex numbers compare part by part, at their parts' tolerance; the
    # index names the part.
    z = torch.complex(torch.tensor([1.0, -2.0]), torch.tensor([0.5, 3.0]))
    assert compare(z * (1 + 1e-6), z) is None
    mismatch = compare(z + torch.tensor([0, 0.1j]), z)
    assert mismatch.index == (1, 1) and mismatch.want == 3.0


# ===--- torch.compile (torch 2.x) -------------------------------------------=== #

needs_dynamo = pytest.mark.skipif(not HAS_DYNAMO, reason="torch.compile needs torch 2.x")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 32)

    def forward(self, x):
        h = self.down(torch.nn.functional.gelu(self.up(self.norm(x))))
        return x + h, torch.sort(h, dim=-1).values


@needs_dynamo
def test_torch_compile_inference(device, tmp_path):
    import kiln.backend  # noqa: F401  (registers "kiln")
    torch._dynamo.reset()
    model = Block().to(device).eval()
    compiled = torch.compile(model, backend="kiln", options={"cache_dir": tmp_path})
    x = torch.randn(4, 8, 32, device=device)
    with torch.no_grad():
        for got, want in zip(compiled(x), model(x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        x = torch.randn(4, 8, 32, device=device)
        for got, want in zip(compiled(x), model(x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@needs_dynamo
@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "save_all"])
def test_torch_compile_training_step(device, tmp_path, recompute):
    """A training step's outputs and gradients, with the forward saving
    only what the backward cannot recompute (the default) or everything."""
    import kiln.backend  # noqa: F401
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block().to(device)
    reference = Block().to(device)
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="kiln",
                             options={"cache_dir": tmp_path, "recompute": recompute})
    x = torch.randn(4, 8, 32, device=device)
    out, ranked = compiled(x)
    (out.square().mean() + ranked[..., -1].mean()).backward()
    ref_out, ref_ranked = reference(x)
    (ref_out.square().mean() + ref_ranked[..., -1].mean()).backward()
    torch.testing.assert_close(out, ref_out, rtol=1e-4, atol=1e-4)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)


class Heads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(32, 64)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x)).view(*x.shape[:-1], 4, 16)
        return (torch.softmax(h, dim=-1) * 2 + 1).flatten(-2)


@needs_dynamo
@pytest.mark.parametrize("how", ["dynamic", "mark_dynamic"])
def test_torch_compile_symbolic_sizes_compile_once(device, tmp_path, how):
    import kiln.backend
    torch._dynamo.reset()
    kiln.backend.REPORTS.clear()
    model = Heads().to(device).eval()
    options = {"cache_dir": tmp_path, "fallback": "error"}
    compiled = torch.compile(model, backend="kiln", options=options,
                             dynamic=True if how == "dynamic" else None)
    with torch.no_grad():
        for rows in [8, 5, 12]:
            x = torch.randn(rows, 32, device=device)
            if how == "mark_dynamic":
                torch._dynamo.mark_dynamic(x, 0)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    # One graph served every size: its region has a dynamic dimension.
    assert len(kiln.backend.REPORTS) == 1, [r.summary() for r in kiln.backend.REPORTS]
    report = kiln.backend.REPORTS[0]
    assert report.kernels == 1 and not report.fallbacks, report.summary()


@needs_dynamo
def test_torch_compile_views_that_split_symbolic_sizes_compile(device, tmp_path):
    """A Linear on [batch, length, 32] flattens both symbolic sizes into one
    (s0*s1) and splits its result back into two, a view that names the
    symbols it splits into (size_symbols): everything compiles once for
    every size."""
    import kiln.backend
    torch._dynamo.reset()
    kiln.backend.REPORTS.clear()
    model = Heads().to(device).eval()
    compiled = torch.compile(model, backend="kiln",
                             options={"cache_dir": tmp_path, "fallback": "error"},
                             dynamic=True)
    with torch.no_grad():
        for batch, length in [(4, 8), (3, 5), (6, 9)]:
            x = torch.randn(batch, length, 32, device=device)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert len(kiln.backend.REPORTS) == 1, [r.summary() for r in kiln.backend.REPORTS]
    report = kiln.backend.REPORTS[0]
    assert report.kernels >= 1 and not report.fallbacks, report.summary()


@needs_dynamo
def test_torch_compile_resampling_of_symbolic_sizes(device, tmp_path):
    """Resampling to another tensor's symbolic size (a feature pyramid's
    `size=x.shape[-2:]`) and by a factor: the output size is the result's
    spatial sizes, which the region names; everything compiles once."""
    import kiln.backend
    torch._dynamo.reset()
    kiln.backend.REPORTS.clear()
    functional = torch.nn.functional

    def pyramid(fine, coarse):
        up = functional.interpolate(coarse, size=fine.shape[-2:], mode="nearest")
        return fine + up, functional.interpolate(fine, scale_factor=2, mode="bilinear")

    compiled = torch.compile(pyramid, backend="kiln",
                             options={"cache_dir": tmp_path, "fallback": "error"},
                             dynamic=True)
    for height, width in [(8, 12), (6, 10), (14, 4)]:
        fine = torch.randn(2, 3, height, width, device=device)
        coarse = torch.randn(2, 3, height // 2, width // 2, device=device)
        for got, want in zip(compiled(fine, coarse), pyramid(fine, coarse)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert len(kiln.backend.REPORTS) == 1, [r.summary() for r in kiln.backend.REPORTS]
    assert not kiln.backend.REPORTS[0].fallbacks, kiln.backend.REPORTS[0].summary()


@needs_dynamo
def test_torch_compile_fallback_error(tmp_path):
    import kiln.backend  # noqa: F401
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda x: torch.fft.rfft(x.tanh()).abs(),
        backend="kiln", options={"cache_dir": tmp_path, "fallback": "error"})
    # A long Fourier transform has no lowering: it would stay in PyTorch.
    with pytest.raises(Exception, match="aten._fft_r2c"):
        compiled(torch.randn(LONG_FFT))


def test_the_entry_point_names_the_backend():
    """An installed package registers "kiln" through this entry point."""
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    import kiln.backend
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    target = project["project"]["entry-points"]["torch_dynamo_backends"]["kiln"]
    module, name = target.split(":")
    assert module == "kiln.backend" and getattr(kiln.backend, name) is kiln.backend.kiln_backend


def dropout_around_sort(x):
    h = torch.nn.functional.dropout(torch.relu(x), 0.25, True)
    return torch.sort(h, dim=-1).values, torch.nn.functional.dropout(h, 0.5, True) * 2


def test_random_ops_compile_from_a_seed_drawn_at_each_call(device, tmp_path):
    x = torch.randn(64, 128, device=device)
    compiled = partitioned(dropout_around_sort, [x], tmp_path)
    seeds = [n for n in compiled.graph.nodes if n.op == "call_function"
             and getattr(n.target, "__name__", "") == "draw_seed"]
    # Sorts of short rows compile too: one region, nothing in PyTorch.
    assert len(seeds) == 1 and compiled.kiln_report.kernels == 1
    assert not compiled.kiln_report.fallbacks
    x = torch.rand(64, 128, device=device) + 1.0
    (sorted_h, twice), (_, again) = compiled(x), compiled(x)
    assert not torch.equal(twice, again)
    # h keeps 3/4 of x (scaled by 1/0.75); the second dropout half of h.
    assert 0.72 < (sorted_h > 0).double().mean().item() < 0.78
    kept = twice != 0
    assert 0.34 < kept.double().mean().item() < 0.41
    torch.testing.assert_close(twice[kept], (x * 2 / 0.375)[kept])
    torch.manual_seed(3)
    repeated = compiled(x)
    torch.manual_seed(3)
    assert all(torch.equal(a, b) for a, b in zip(compiled(x), repeated))


def test_random_ops_that_fall_back_draw_from_pytorch(tmp_path):
    # randperm of more elements than Kiln sorts (2^24) has no lowering: it
    # runs as PyTorch's op, and nothing reads the seed, which goes.
    def fn(x):
        return x[torch.randperm(2**24 + 1)[:8] % 8] * 2
    compiled = partitioned(fn, [torch.randn(8, 4)], tmp_path)
    assert "aten.randperm.default" in {op for op, _ in compiled.kiln_report.fallbacks}
    assert all(getattr(n.target, "__name__", "") not in ("draw_seed", "seeded")
               for n in compiled.graph.nodes)
    x = torch.randn(8, 4)
    rows = compiled(x)
    # Each row is one of x's, doubled.
    assert ((rows[:, None] == (x * 2)[None]).all(-1).any(-1)).all()


def test_zero_dim_cpu_constants_move_to_the_graphs_device():
    # A GPU graph's 0-dim CPU constants (scalar_tensor, a lifted
    # torch.tensor) that only ops on the GPU read are made there, so that
    # regions can hold them; one that a CPU consumer reads stays. The meta
    # device stands in for CUDA on a machine without one.
    from torch.fx.experimental.proxy_tensor import make_fx

    from kiln.backend import _move_scalars_to_device, _record_values

    aten = torch.ops.aten

    def f(x, s):
        kept = aten.scalar_tensor(2.0)
        return (torch.where(x > 0, x, aten.scalar_tensor(-1.0)) * torch.tensor(0.5) * s,
                kept + 1)

    # A 0-dim CPU input (s) stays where the caller put it.
    x, s = torch.randn(4, device="meta"), torch.tensor(3.0)
    gm = make_fx(f)(x, s)
    assert _move_scalars_to_device(gm, _record_values(gm, [x, s]), "meta")
    gm.recompile()
    values = _record_values(gm, [x, s])
    devices = {n.name: v.device.type for n, v in values.items() if isinstance(v, torch.Tensor)}
    assert devices.pop("scalar_tensor") == "cpu" and devices.pop("add") == "cpu"
    assert devices.pop("s_1") == "cpu"
    assert set(devices.values()) == {"meta"}
    assert gm._tensor_constant0.device.type == "meta"
    # Nothing moves on the CPU, or a second time.
    assert not _move_scalars_to_device(gm, values, "meta")
    assert not _move_scalars_to_device(gm, values, "cpu")


@needs_dynamo
def test_a_whole_graph_reads_its_symbolic_integer_inputs_as_size_symbols():
    # AOTAutograd's graph of a dynamic function takes the size s as an
    # input beside the tensors: import_graph reads it as the symbol's value
    # (fx.symbol_value), not as an argument, and the slice takes it.
    from torch._dynamo.backends.common import aot_autograd

    from kiln import run_opt
    from kiln.importer import import_graph

    captured = []

    def keep(gm, inputs):
        captured.append((gm, list(inputs)))
        return gm.forward

    pe = torch.randn(16, 4)
    fn = torch.compile(lambda x: x + pe[:x.shape[0]], backend=aot_autograd(fw_compiler=keep),
                       dynamic=True)
    x = torch.randn(5, 4)
    torch.testing.assert_close(fn(x), x + pe[:5])
    gm, inputs = captured[0]
    assert any(isinstance(i, torch.SymInt) for i in inputs)
    text = import_graph(gm, inputs)
    assert "fx.symbol_value" in text and "dynamic_end(" in text
    assert text.count("fx.guard") == sum(isinstance(i, torch.Tensor) for i in inputs)
    run_opt(text)


def projections(x, wq, bq, wk, bk, wv, bv, wg, wu):
    """Query, key and value projections with biases; a gated MLP's gate and
    up projections without."""
    q, k, v = (torch.nn.functional.linear(x, w, b) for w, b in ((wq, bq), (wk, bk), (wv, bv)))
    gate, up = torch.nn.functional.linear(x, wg), torch.nn.functional.linear(x, wu)
    return q * k.sum(-1, keepdim=True) + v[..., :16], torch.nn.functional.silu(gate) * up


def projection_args(generator):
    shapes = [(2, 5, 16), (16, 16), (16,), (8, 16), (8,), (24, 16), (24,), (12, 16), (12, 16)]
    return [torch.randn(*s, generator=generator) for s in shapes]


def test_products_reading_one_operand_merge(tmp_path):
    generator = torch.Generator().manual_seed(11)
    args = projection_args(generator)
    compiled = partitioned(projections, args, tmp_path, fallback="error")
    report = compiled.kiln_report
    assert report.merged_products == 5, report.summary()
    assert "3 matrix products merged" not in report.summary()
    assert "5 matrix products merged" in report.summary()
    texts = " ".join(m.graph_text for m in regions(compiled))
    assert texts.count("fx.addmm") == 1 and texts.count("fx.mm ") == 1, texts
    fresh = projection_args(generator)
    for got, want in zip(compiled(*fresh), projections(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    separate = partitioned(projections, args, tmp_path, merge_products=False)
    assert separate.kiln_report.merged_products == 0
    texts = " ".join(m.graph_text for m in regions(separate))
    assert texts.count("fx.addmm") == 3, texts


def test_products_stay_apart_where_a_slice_cannot_be_viewed(tmp_path):
    """Flattening a product's result is a view of the product, not of a
    slice of a merged one: the rewrite is undone, and the answers are
    eager's."""
    def fn(x, w1, w2):
        return (x @ w1).view(-1), (x @ w2).view(-1)

    generator = torch.Generator().manual_seed(12)
    args = [torch.randn(*s, generator=generator) for s in [(6, 8), (8, 4), (8, 4)]]
    compiled = partitioned(fn, args, tmp_path, fallback="error")
    assert compiled.kiln_report.merged_products == 0
    fresh = [torch.randn(a.shape, generator=generator) for a in args]
    for got, want in zip(compiled(*fresh), fn(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def squeeze_excite(x, w1, w2, w3):
    features = torch.relu(torch.nn.functional.conv2d(x, w1, padding=1))
    gate = torch.sigmoid(torch.nn.functional.conv2d(features.mean((2, 3), keepdim=True), w2))
    return torch.nn.functional.conv2d(features * gate, w3).tanh()


def test_images_between_regions_stay_nhwc(tmp_path):
    """The features that a region computes from a convolution's NHWC result
    and another region reads (past the gate's convolution) pass between
    them as an NHWC buffer: neither region transposes them."""
    generator = torch.Generator().manual_seed(13)
    args = [torch.randn(*s, generator=generator)
            for s in [(2, 3, 6, 5), (4, 3, 3, 3), (4, 4, 1, 1), (3, 4, 1, 1)]]
    compiled = partitioned(squeeze_excite, args, tmp_path, channels_last=True)
    first, product, last = regions(compiled)
    assert "fx.mean" in first.graph_text and "fx.sigmoid" in product.graph_text
    nhwc = (0, 2, 3, 1)
    assert first.artifact._result_orders == (nhwc, nhwc), first.graph_text
    assert product.artifact._input_orders == (nhwc, nhwc), product.graph_text
    fresh = [torch.randn(a.shape, generator=generator) for a in args]
    torch.testing.assert_close(compiled(*fresh), squeeze_excite(*fresh), rtol=1e-4, atol=1e-4)


def test_region_views_hold_for_inputs_in_any_layout(tmp_path):
    """sin keeps its input's layout: traced, the flattening view after it
    reads a contiguous tensor; running, sin reads the first region's
    contiguous result, and a view of its transpose would need a copy. The
    region reshapes values instead, whatever their strides."""
    def fn(x):
        return torch.sin(torch.tanh(x)).permute(0, 2, 1).reshape(-1) * 2

    generator = torch.Generator().manual_seed(14)
    args = [torch.randn(2, 4, 3, generator=generator).permute(0, 2, 1)]
    compiled = partitioned(fn, args, tmp_path, fallback="error",
                           library_ops=["aten.sin.default"])
    assert compiled.kiln_report.kernels == 2
    fresh = [torch.randn(2, 4, 3, generator=generator).permute(0, 2, 1)]
    torch.testing.assert_close(compiled(*fresh), fn(*fresh))


def depthwise_block(x, expand, depthwise, project):
    h = torch.relu(torch.nn.functional.conv2d(x, expand))
    d = torch.nn.functional.conv2d(h, depthwise, padding=1, groups=depthwise.shape[0])
    return torch.nn.functional.conv2d(torch.nn.functional.silu(d * 2 + 1), project)


@pytest.mark.parametrize("channels_last", [True, False])
def test_direct_convolutions_join_their_regions(tmp_path, channels_last):
    """With direct_convolutions, the depthwise convolution (9 inputs per
    filter) is Kiln's, in one region with the relu before it and the
    activation after it; the 1x1 convolutions stay cuDNN's (oneDNN's)."""
    generator = torch.Generator().manual_seed(15)
    args = [torch.randn(*s, generator=generator)
            for s in [(2, 3, 6, 5), (8, 3, 1, 1), (8, 1, 3, 3), (4, 8, 1, 1)]]
    library = partitioned(depthwise_block, args, tmp_path, channels_last=channels_last)
    assert library.kiln_report.library_calls == {"aten.convolution.default": 3}
    direct = partitioned(depthwise_block, args, tmp_path, channels_last=channels_last,
                         direct_convolutions=True)
    assert direct.kiln_report.library_calls == {"aten.convolution.default": 2}
    assert direct.kiln_report.kernels < library.kiln_report.kernels
    (region,) = regions(direct)
    assert "fx.convolution" in region.graph_text and "fx.relu" in region.graph_text
    fresh = [torch.randn(a.shape, generator=generator) for a in args]
    torch.testing.assert_close(direct(*fresh), depthwise_block(*fresh), rtol=1e-4, atol=1e-4)
