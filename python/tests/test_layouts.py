"""Layouts in partitioned graphs (kiln.layouts): regions and library
convolutions exchange NHWC buffers, in inference graphs and in training
graphs (a forward's saved images, a backward's convolution gradients);
regions read inputs dense in other orders in place; the strides that a
graph's outputs will have are known before it runs."""

import re

import pytest

torch = pytest.importorskip("torch")

from kiln.backend import compile_aten_graph  # noqa: E402
from kiln.importer import capture  # noqa: E402
from kiln.layouts import convolution_gradients_as_run  # noqa: E402
from kiln.options import Options  # noqa: E402

from e2e_support import partitioned, regions  # noqa: E402

F = torch.nn.functional
WRITES_NHWC = "dims = array<i64: 0, 2, 3, 1>"


def two_convolutions(x, w1, w2, scale, shift):
    h = torch.relu(torch.nn.functional.conv2d(x, w1, padding=1) * scale + shift)
    return torch.nn.functional.conv2d(h, w2, padding=1).sigmoid() + h


@pytest.mark.parametrize("channels_last", [True, False])
def test_regions_exchange_nhwc_buffers_with_convolutions(tmp_path, channels_last):
    """With channels_last, the image is converted to channels-last for the
    first convolution, whose result the first region reads as an NHWC
    buffer; that region writes an NHWC buffer (which the second convolution
    reads as a channels-last tensor) and the last region reads that
    convolution's NHWC result. The answers do not change."""
    generator = torch.Generator().manual_seed(3)
    args = [torch.randn(*s, generator=generator)
            for s in [(2, 3, 8, 6), (4, 3, 3, 3), (4, 4, 3, 3), (4, 1, 1), (4, 1, 1)]]
    compiled = partitioned(two_convolutions, args, tmp_path, channels_last=channels_last)
    assert compiled.kiln_report.kernels == 2
    texts = [m.graph_text for m in regions(compiled)]
    nhwc = "tensor<2x8x6x4xf32>"
    assert any(nhwc in text for text in texts) == channels_last
    assert ("memory_format = torch.channels_last" in compiled.code) == channels_last
    if channels_last:
        for text in texts:
            assert "dims = array<i64: 0, 3, 1, 2>" in text  # Reads NHWC.
        assert "dims = array<i64: 0, 2, 3, 1>" in texts[0]  # Writes NHWC.
    # The regions read and write the channels-last tensors themselves: no
    # permute views between them and the convolutions.
    assert "aten.permute" not in compiled.code, compiled.code
    fresh = [torch.randn(a.shape, generator=generator) for a in args]
    torch.testing.assert_close(compiled(*fresh), two_convolutions(*fresh),
                               rtol=1e-4, atol=1e-4)
    if channels_last:  # The same under check_numerics, through views.
        checked = partitioned(two_convolutions, args, tmp_path, channels_last=True,
                              check_numerics="error")
        assert "aten.permute" in checked.code
        torch.testing.assert_close(checked(*fresh), two_convolutions(*fresh),
                                   rtol=1e-4, atol=1e-4)


def test_regions_read_permuted_dense_inputs_in_place(tmp_path):
    """An input dense in another order than PyTorch's contiguous one (as
    cuDNN's attention writes its result) is read in its own order, with no
    copy at each call; an input of another layout is copied, and right."""
    def fn(x):
        return torch.tanh(x) * 2 + 1

    generator = torch.Generator().manual_seed(5)
    permuted = torch.randn(2, 4, 3, generator=generator).permute(0, 2, 1)
    compiled = partitioned(fn, [permuted], tmp_path)
    (region,) = regions(compiled)
    assert "tensor<2x4x3xf32>" in region.graph_text
    assert "dims = array<i64: 0, 2, 1>" in region.graph_text
    assert "aten.permute" not in compiled.code, compiled.code
    fresh = torch.randn(2, 4, 3, generator=generator).permute(0, 2, 1)
    torch.testing.assert_close(compiled(fresh), fn(fresh))
    assert region.artifact._plans, "a permuted dense input needs no copy"
    contiguous = torch.randn(2, 3, 4, generator=generator)
    torch.testing.assert_close(compiled(contiguous), fn(contiguous))
    # Every other row of a permuted tensor is in that order too, but not
    # dense: the region reads it as PyTorch indexes it (copied at calls).
    gaps = torch.randn(2, 3, 8, generator=generator).permute(0, 2, 1)[:, ::2]
    compiled = partitioned(fn, [gaps], tmp_path)
    (region,) = regions(compiled)
    assert "fx.permute" not in region.graph_text, region.graph_text
    torch.testing.assert_close(compiled(gaps), fn(gaps))


def test_regions_expect_the_layouts_values_have_when_running(tmp_path):
    """A region writes its result contiguous even where its ATen op gives
    another layout (tanh keeps its permuted input's); sin, run in PyTorch,
    keeps the layout it is given, and the region reading sin's result
    expects it as it comes: it needs no copy at each call."""
    def fn(x):
        return torch.sin(torch.tanh(x)) * 3

    generator = torch.Generator().manual_seed(8)
    args = [torch.randn(2, 4, 3, generator=generator).permute(0, 2, 1)]
    compiled = partitioned(fn, args, tmp_path, library_ops=["aten.sin.default"])
    assert compiled.kiln_report.kernels == 2
    last = regions(compiled)[-1]
    assert "fx.permute" not in last.graph_text, last.graph_text
    fresh = [torch.randn(2, 4, 3, generator=generator).permute(0, 2, 1)]
    torch.testing.assert_close(compiled(*fresh), fn(*fresh))
    assert last.artifact._plans, "the region's input came as it expected"


def test_values_that_pytorch_ops_read_keep_their_layout(tmp_path):
    """nonzero (which runs in PyTorch) reads the region's result that the
    second convolution reads too: that result stays NCHW, and so does the
    second convolution's input; the answers are eager's."""
    def fn(x, w1, w2):
        h = torch.relu(torch.nn.functional.conv2d(x, w1, padding=1))
        y = torch.nn.functional.conv2d(h, w2, padding=1).tanh()
        return y + 1, torch.nonzero(h)
    generator = torch.Generator().manual_seed(4)
    args = [torch.randn(*s, generator=generator) for s in [(2, 3, 6, 5), (4, 3, 3, 3),
                                                             (4, 4, 3, 3)]]
    compiled = partitioned(fn, args, tmp_path, channels_last=True)
    first = next(m for m in regions(compiled) if "fx.relu" in m.graph_text)
    assert "dims = array<i64: 0, 2, 3, 1>" not in first.graph_text
    fresh = [torch.randn(a.shape, generator=generator) for a in args]
    for got, want in zip(compiled(*fresh), fn(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def forward_step(x, w1, w2, scale, shift):
    """A training forward's shape: a loss, and the images it saves."""
    c1 = F.conv2d(x, w1, padding=1)
    h = torch.relu(c1 * scale + shift)
    c2 = F.conv2d(h, w2, padding=1)
    return (c2.sigmoid() * h).sum(), c1, h, c2


def channels_last(*shape, generator):
    return torch.randn(*shape, generator=generator).contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("saved", [(1, 2, 3), ()], ids=["saved", "user_outputs"])
def test_saved_images_stay_channels_last(tmp_path, saved):
    """Outputs that only the backward reads (`saved_outputs`) stay as the
    convolutions and regions exchange them, NHWC; outputs the user sees
    keep eager's layout. kiln_output_strides says which strides each
    output will have, and the outputs have them."""
    generator = torch.Generator().manual_seed(21)
    args = [torch.randn(*s, generator=generator)
            for s in [(2, 3, 8, 6), (4, 3, 3, 3), (4, 4, 3, 3), (4, 1, 1), (4, 1, 1)]]
    gm = capture(forward_step, args)
    compiled = compile_aten_graph(gm, args, saved_outputs=saved, options=Options(
        cache_dir=tmp_path, channels_last=True))
    fresh = [torch.randn(a.shape, generator=generator) for a in args]
    got = compiled(*fresh)
    for result, expected in zip(got, forward_step(*fresh)):
        torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-4)
    assert compiled.kiln_output_strides == [tuple(r.stride()) for r in got]
    for index, result in enumerate(got[1:], 1):
        assert result.is_contiguous(memory_format=torch.channels_last) == (index in saved)
        assert result.is_contiguous() == (index not in saved)
    written = [t for t in (m.graph_text for m in regions(compiled)) if "fx.relu" in t]
    assert (WRITES_NHWC in written[0]) == bool(saved)


def backward_step(tangent, c, h, w):
    """A training backward's shape: a gradient made by a region from saved
    images for convolution_backward, whose input gradient a region reads."""
    g = tangent * (c > 0)
    gi, gw, _ = torch.ops.aten.convolution_backward(
        g, h, w, [0], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])
    return gi * (h > 0), gw


def test_backward_reads_saved_images_in_place(tmp_path):
    """Saved images that come channels-last are read in place (no copy at
    each call, none converted); the gradient that convolution_backward
    reads is written NHWC, as its input is; answers are eager's."""
    generator = torch.Generator().manual_seed(22)
    shapes = [(2, 4, 8, 6), (2, 4, 8, 6), (2, 3, 8, 6), (4, 3, 3, 3)]

    def inputs():
        return [torch.randn(*shapes[0], generator=generator)] + \
            [channels_last(*s, generator=generator) for s in shapes[1:3]] + \
            [torch.randn(*shapes[3], generator=generator)]

    args = inputs()
    compiled = partitioned(backward_step, args, tmp_path, channels_last=True)
    assert "torch.channels_last" not in compiled.code, compiled.code
    first = next(m for m in regions(compiled) if "fx.gt" in m.graph_text and
                 "fx.convolution" not in m.graph_text)
    assert WRITES_NHWC in first.graph_text
    fresh = inputs()
    got = compiled(*fresh)
    for result, expected in zip(got, backward_step(*fresh)):
        torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-4)
    assert compiled.kiln_output_strides == [tuple(r.stride()) for r in got]
    for region in regions(compiled):
        assert region.artifact._plans, f"a copy at each call:\n{region.graph_text}"


def test_gradients_of_channels_last_convolutions_are_channels_last():
    """The library writes convolution_backward's gradients channels-last
    where its input or weight is (meta functions say contiguous)."""
    image = torch.empty(2, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    weight, gradient = torch.empty(4, 3, 3, 3), torch.empty(2, 4, 3, 3)
    results = (torch.empty(2, 3, 5, 5), torch.empty(4, 3, 3, 3), None)
    laid_out = convolution_gradients_as_run((gradient, image, weight), results)
    assert all(r.is_contiguous(memory_format=torch.channels_last) for r in laid_out[:2])
    assert laid_out[2] is None
    plain = convolution_gradients_as_run((gradient, image.contiguous(), weight), results)
    assert plain is results


def test_views_that_strides_given_cannot_make_become_reshapes(tmp_path):
    """A graph traced on contiguous tensors, given a channels-last one (a
    saved image the forward wrote so): its view is then a reshape, which
    copies where it must, in PyTorch or in a region."""
    def fn(x):
        return x.view(2, -1) * 2, x.view(-1)

    generator = torch.Generator().manual_seed(23)
    gm = capture(fn, [torch.randn(2, 3, 4, 5, generator=generator)])
    given = [channels_last(2, 3, 4, 5, generator=generator)]
    compiled = compile_aten_graph(gm, given, options=Options(cache_dir=tmp_path))
    assert "aten.view" not in compiled.code, compiled.code
    fresh = channels_last(2, 3, 4, 5, generator=generator)
    for result, expected in zip(compiled(fresh), fn(fresh.contiguous())):
        torch.testing.assert_close(result, expected)


@pytest.mark.skipif(not (hasattr(torch, "compile") and torch.cuda.is_available()),
                    reason="torch.compile's training graphs on a GPU")
def test_training_steps_exchange_channels_last_images(tmp_path, monkeypatch):
    """Through torch.compile on CUDA: the forward saves its images NHWC and
    tells AOTAutograd so; the backward reads them in place and hands
    convolution_backward NHWC gradients, converting only the model's input
    image; gradients are eager's."""
    import copy

    compiled_graphs = keep_compiled_graphs(monkeypatch)
    torch.manual_seed(24)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)).cuda()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="kiln", options={"cache_dir": tmp_path})
    for _ in range(2):
        x = torch.randn(4, 3, 16, 12, device="cuda")
        compiled(x).square().sum().backward()
        reference(x).square().sum().backward()
    for (name, got), want in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-3, atol=1e-3, msg=name)
    backward = compiled_graphs["backward graph 1"]
    assert backward.code.count("torch.channels_last") == 1, backward.code
    for region in regions(backward):
        assert region.artifact._plans, f"a copy at each call:\n{region.graph_text}"


def keep_compiled_graphs(monkeypatch):
    """The graph modules that the torch.compile backend compiles from now
    on (after a reset of Dynamo), by name, as it compiles them."""
    import kiln.backend

    compiled_graphs = {}
    compile_graph = kiln.backend.compile_aten_graph

    def keeping(gm, example_inputs, *, name, **kwargs):
        compiled_graphs[name] = compile_graph(gm, example_inputs, name=name, **kwargs)
        return compiled_graphs[name]

    monkeypatch.setattr(kiln.backend, "compile_aten_graph", keeping)
    torch._dynamo.reset()
    return compiled_graphs


def aot_compiled(step, tmp_path):
    """`step` under AOTAutograd (torch 1.x's aot_function, which does not
    restride saved tensors by what the forward reports) with Kiln's graphs,
    channels-last; returns it and the list its compiled graphs go to."""
    import torch.utils._pytree as pytree
    from functorch.compile import aot_function, make_boxed_func

    from kiln.importer import DECOMPOSITIONS

    compiled_graphs = []

    def compiler(saves):
        def compile_graph(gm, example_inputs):
            output = next(n for n in gm.graph.nodes if n.op == "output")
            outputs = len(pytree.tree_flatten(output.args[0])[0])
            compiled_graphs.append(compile_aten_graph(
                gm, example_inputs, saved_outputs=range(1 if saves else outputs, outputs),
                options=Options(cache_dir=tmp_path, channels_last=True)))
            return make_boxed_func(compiled_graphs[-1])
        return compile_graph

    return aot_function(step, compiler(True), compiler(False),
                        decompositions=DECOMPOSITIONS), compiled_graphs


def training_compiled(step, tmp_path, monkeypatch):
    """`step` as the backend compiles it, channels-last: through
    torch.compile where there is one (whose AOTAutograd gives the backward
    graph its saved images with the strides the forward reports), else as
    aot_compiled; returns it and its compiled graphs as they come."""
    if not hasattr(torch, "compile"):
        return aot_compiled(step, tmp_path)
    compiled_graphs = keep_compiled_graphs(monkeypatch)
    return torch.compile(step, backend="kiln", options={
        "cache_dir": tmp_path, "channels_last": True}), compiled_graphs.values()


def assert_gradients_match(step, args):
    expected = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    step(*expected).backward()
    for got, want in zip(args, expected):
        if want.requires_grad:
            torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-4)


def test_training_step_right_whatever_strides_the_backward_is_told(tmp_path):
    """AOTAutograd may give the backward graph saved images with eager's
    strides while the forward wrote them channels-last: the backward's
    regions then copy what comes otherwise, its views stay viewable, and
    the gradients are eager's."""
    def step(x, w1, w2, scale, shift):
        loss, _, h, _ = forward_step(x, w1, w2, scale, shift)
        return loss + h.flatten(1).square().sum()

    generator = torch.Generator().manual_seed(25)
    shapes = [(2, 3, 8, 6), (4, 3, 3, 3), (4, 4, 3, 3), (4, 1, 1), (4, 1, 1)]
    args = [torch.randn(*s, generator=generator).requires_grad_() for s in shapes]
    compiled, compiled_graphs = aot_compiled(step, tmp_path)
    compiled(*args).backward()
    forward = compiled_graphs[0]
    assert any(len(s or ()) == 4 and s[1] == 1 for s in forward.kiln_output_strides), \
        forward.kiln_output_strides  # A saved image, channels-last.
    assert_gradients_match(step, args)


def test_backward_regions_exchange_nhwc_images(tmp_path, monkeypatch):
    """A ResNet stem's training step: the backward's regions read the saved
    images channels-last, so they write the images they pass on to one
    another NHWC too (the residual's gradient, on its way to the max
    pooling's), and the forward saves the pooling's indices NHWC: no region
    reads or writes an NCHW image (whose gradient kernels would read
    channels across rows), and the gradients are eager's."""
    def step(x, w1, g1, b1, w2, g2, b2):
        h = F.conv2d(x, w1, stride=2, padding=3)
        h = torch.relu(F.batch_norm(h, None, None, g1, b1, training=True))
        h = F.max_pool2d(h, 3, 2, 1)
        y = F.batch_norm(F.conv2d(h, w2), None, None, g2, b2, training=True)
        return torch.relu(y + h).mean()

    generator = torch.Generator().manual_seed(3)
    shapes = [(6, 3, 7, 7), (6,), (6,), (6, 6, 1, 1), (6,), (6,)]
    # The model's image needs no gradient (one would be the graph's result,
    # in PyTorch's layout).
    args = [torch.randn(2, 3, 32, 32, generator=generator)] + \
        [torch.randn(*s, generator=generator).requires_grad_() for s in shapes]
    compiled, compiled_graphs = training_compiled(step, tmp_path, monkeypatch)
    compiled(*args).backward()
    assert len(compiled_graphs) == 2
    images = 0
    for graph in compiled_graphs:
        for region in regions(graph):
            signature = region.graph_text[:region.graph_text.index(" {\n")]
            # Images of 6 channels, [2, 16, 16, 6] and [2, 8, 8, 6], not
            # [2, 6, 16, 16] or [2, 6, 8, 8]; some regions (batch norm's
            # per-channel sums) take none.
            for dims in re.findall(r"tensor<2x([\dx]+)x[a-z]+\d*>", signature):
                assert dims in ("16x16x6", "8x8x6"), signature
                images += 1
    assert images, "no region reads or writes an image"
    assert_gradients_match(step, args)


def test_storage_reads_of_restrided_inputs_read_what_eager_did(tmp_path):
    """An `as_strided` of an input traced contiguous (eager's saved image)
    that comes channels-last (as the forward wrote it) reads a contiguous
    copy: the elements eager's read, in PyTorch or in a region."""
    def fn(x):
        window = torch.as_strided(x, (2, 3, 20), (60, 20, 1), 0)
        return window * 2, torch.as_strided(x, (4, 5), (5, 1), 7)

    generator = torch.Generator().manual_seed(26)
    traced = torch.randn(2, 3, 4, 5, generator=generator)
    gm = capture(fn, [traced])
    next(n for n in gm.graph.nodes if n.op == "placeholder").meta["val"] = traced
    given = channels_last(2, 3, 4, 5, generator=generator)
    compiled = compile_aten_graph(gm, [given], options=Options(cache_dir=tmp_path))
    fresh = channels_last(2, 3, 4, 5, generator=generator)
    for got, want in zip(compiled(fresh), fn(fresh.contiguous())):
        torch.testing.assert_close(got, want)
