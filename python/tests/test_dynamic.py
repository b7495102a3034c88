"""Tests for importing with dynamic sizes (kiln.importer.import_function)."""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.guards import GraphGuards, GuardError, SizeSymbol, TensorGuard  # noqa: E402
from kiln.importer import KilnImportError, import_function  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU on this machine"))]


def imported(fn, *inputs, dynamic=True):
    result = import_function(fn, inputs, dynamic=dynamic)
    kiln.run_opt(result.text)
    assert GraphGuards.parse(result.text) == result.guards
    return result


def test_duck_sizing_and_specialised_sizes():
    result = imported(lambda x, b, y: torch.relu(x + b) * y,
                      torch.randn(4, 8), torch.randn(8), torch.randn(4, 1))
    # Equal sizes share a symbol; size 1 stays static.
    assert result.guards == GraphGuards(
        (SizeSymbol("s0"), SizeSymbol("s1")),
        (TensorGuard(("s0", "s1"), align=16, device="cpu"),
         TensorGuard(("s1",), align=16, device="cpu"),
         TensorGuard(("s0", 1), align=16, device="cpu")))
    assert ("%mul = fx.mul %relu, %y_1 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>"
            in result.text)


def test_chosen_dimensions_and_multiples_of_a_symbol():
    def f(x, w):
        return (x.reshape(-1) * 2, x @ w, x.sum(0))

    result = imported(f, torch.randn(6, 4), torch.randn(4, 3), dynamic={0: [0]})
    assert result.guards.arguments[0].sizes == ("s0", 4)
    assert result.guards.arguments[1].sizes == (4, 3)
    # The flattened view has 4 * s0 elements: a multiple of s0, so dynamic.
    assert "-> (tensor<?xf32>, tensor<?x3xf32>, tensor<4xf32>)" in result.text


def test_parameters_stay_static():
    result = imported(torch.nn.Linear(4, 2), torch.randn(5, 4), dynamic={0: [0]})
    assert [g.sizes for g in result.guards.arguments] == [("s0", 4), (2, 4), (2,)]
    assert len(result.constants) == 2


@pytest.mark.parametrize("fn, message", [
    (lambda x: x[::2], r"dimension 0 of aten\.slice\.Tensor depends on the dynamic sizes"),
    (lambda x: torch.diagonal(x), r"aten\.diagonal\.default on a tensor with dynamic"),
    # n * n is no multiple of a symbol plus a constant (a third trace shows).
    (lambda x: x.sum() + torch.arange(x.shape[0] * x.shape[0]).sum(),
     r"depends on the dynamic input sizes beyond its types: '%arange = fx\.arange"),
    # s0 // 2 equals 4 for s0 = 8 and 9: the traces must differ by more,
    # and by an odd amount, so that a size that halves is no multiple of s0.
    (lambda x: x.sum() + x.new_zeros(x.shape[0] // 2).sum(),
     r"dimension 0 of aten\.full\.default depends on the dynamic sizes .*size 4, then 9"),
    # 2 * ((s0 + 1) // 2) equals s0 for even s0 only: an odd second trace
    # shows that it is no symbol's value (a U-Net's upsampled size).
    (lambda x: x.sum() + torch.arange(2 * ((x.shape[0] + 1) // 2)).sum(),
     r"beyond its types: '%arange = fx\.arange \{start = 0 : i64, end = 8 : i64\}"),
    # A view of a fixed size fails on every other size, multiples of 2, 4
    # and 8 included.
    (lambda x: x.view(4, 8), r"fails on inputs whose dynamic dimensions have "
                             r"other sizes \(shape '\[4, 8\]' is invalid"),
    # A count that is no multiple of one size or of a product of two, and a
    # divisor that is no count.
    (lambda x: x.sum() / x.shape[0] ** 3,
     r"'%div = fx\.div_scalar %sum_1 \{other = 512 : i64\}"),
    (lambda x: x / (x.shape[0] + 0.5), r"'%div = fx\.div_scalar %x_1 \{other = 8\.5"),
])
def test_size_dependent_graphs_are_refused(fn, message):
    with pytest.raises(kiln.KilnImportError, match=message):
        import_function(fn, [torch.randn(8, 4)], dynamic={0: [0]})


def test_element_counts_are_computed_at_run_time():
    # x.sum() / x.numel() divides by 4 * s0, read from the symbol at run
    # time; a mean of x[1:] multiplies its gradient by 1 / (4 * s0 - 4); a
    # zero-dim fill with the size keeps the fill's dtype (si64).
    def fn(x, w):
        y = x @ w
        return x.sum() / x.numel(), torch.autograd.grad(y[1:].mean(), w)[0], \
            torch.full((), x.shape[0])

    w = torch.randn(4, 3, requires_grad=True)
    result = imported(fn, torch.randn(8, 4), w, dynamic={0: [0]})
    assert "fx.scalar_tensor dynamic_s(" in result.text
    compiled = kiln.compile(fn, [torch.randn(8, 4), w], dynamic={0: [0]})
    for rows in [3, 5, 33]:
        x = torch.randn(rows, 4)
        for got, want in zip(compiled(x, w), fn(x, w)):
            torch.testing.assert_close(got, want)


def test_bounds_that_follow_a_size_become_symbolic():
    # pe[:n] and arange(n) read the size symbol at run time; x[-1], x[:, 3]
    # and x[:5] on the dynamic dimension narrow its range instead: at most
    # pe's 64 rows, at least 5.
    pe = torch.randn(64, 16)

    def fn(x):
        n = x.shape[0]
        return x + pe[:n], torch.arange(n) * 2, x[-1], x[:, 3], x[:5]

    result = imported(fn, torch.randn(7, 16), dynamic={0: [0]})
    assert result.guards.symbols == (SizeSymbol("s0", min=5, max=64),)
    assert 'fx.symbol_value "s0"' in result.text
    assert "fx.slice %_tensor_constant0_1 dynamic_end(" in result.text
    assert "fx.arange dynamic_end(" in result.text
    compiled = kiln.compile(fn, [torch.randn(7, 16)], dynamic={0: [0]})
    for rows in [5, 9, 64]:
        x = torch.randn(rows, 16)
        for got, want in zip(compiled(x), fn(x)):
            assert got.shape == want.shape
            torch.testing.assert_close(got, want)
    with pytest.raises(GuardError, match="outside the guarded range 5 <= s0 <= 64"):
        compiled(torch.randn(65, 16))


@pytest.mark.parametrize("device", DEVICES)
def test_scans_and_sorts_of_dynamic_rows(device):
    # Position ids from an attention mask, and a sort, along the dynamic
    # sequence dimension: scans run in blocks of 64 (one, a whole one, one
    # and a bit, many), sorts in blocks of 1024 (ties and NaNs across
    # blocks keep PyTorch's order).
    def fn(mask, x):
        positions = mask.long().cumsum(-1) - 1
        values, order = torch.sort(x, dim=1, descending=True, stable=True)
        return (positions.masked_fill(mask == 0, 1), values, order, x.cumsum(1),
                torch.topk(x, 2, dim=1).values)

    mask = torch.ones(3, 9, dtype=torch.int64, device=device)
    mask[0, :4] = 0
    compiled = kiln.compile(fn, [mask, torch.randn(3, 9, device=device)],
                            dynamic={0: [1], 1: [1]})
    for length in [2, 9, 64, 65, 300, 1024, 2049, 5000]:
        mask = (torch.rand(3, length, device=device) > 0.3).long()
        x = torch.randn(3, length, device=device)
        x[1, ::2] = 0.5  # ties keep their order
        x[2, ::7] = float("nan")  # NaN goes first, descending
        for got, want in zip(compiled(mask, x), fn(mask, x)):
            assert got.shape == want.shape
            # Running sums of 5000 normals reach about 70, and one near zero
            # can differ by a few of their roundings (1e-5) between orders.
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_masked_scatter_over_dynamic_sizes(device):
    # Image features merged into a sequence's embeddings (vision-language
    # models): the sequence and the number of features are dynamic, the
    # mask broadcasts along the width. The mask's counts scan in blocks of
    # 64 over the run-time number of elements, their totals in blocks in
    # turn (288000 elements take all three levels).
    def fn(embeddings, is_image, features):
        return embeddings.masked_scatter(is_image, features) * 2

    def example(length, images):
        generator = torch.Generator().manual_seed(length)
        is_image = torch.zeros(2, length, 1, dtype=torch.bool)
        is_image[0, 1:1 + images] = True
        is_image[1, -images:] = True
        return [torch.randn(2, length, 16, generator=generator).to(device),
                is_image.to(device),
                torch.randn(2 * images + 5, 16, generator=generator).to(device)]

    compiled = kiln.compile(fn, example(9, 3), dynamic={0: [1], 1: [1], 2: [0]})
    for length, images in [(9, 3), (40, 17), (300, 150), (9000, 4000)]:
        inputs = example(length, images)
        assert torch.equal(compiled(*inputs), fn(*inputs))


@pytest.mark.parametrize("device", DEVICES)
def test_arange_ends_that_are_multiples_of_a_symbol(device):
    # arange(1, n + 1) and arange(0, 3n, 3) end at k*s + c, which a third
    # trace confirms and the graph computes at run time; embedding_bag of a
    # 2-d input makes its bag offsets so (arange(0, n * L, L)), and a slice
    # [:-1] of a (2n + 1)-long tensor needs n large enough for its size.
    weight = torch.randn(10, 4, device=device)

    def fn(x, indices):
        n = x.shape[0]
        counts = torch.arange(1, n + 1, device=device).unsqueeze(1)
        starts = torch.arange(0, 3 * n, 3, device=device).unsqueeze(1)
        longer = torch.cat([x[:, 0], x[:, 0], x[:1, 0]])[:-1]
        return (x * counts + starts, longer,
                torch.nn.functional.embedding_bag(indices, weight, mode="max"))

    example = [torch.randn(3, 5, device=device), torch.randint(0, 10, (3, 2), device=device)]
    compiled = kiln.compile(fn, example, dynamic={0: [0], 1: [0]})
    assert "fx.arange dynamic_end(" in compiled.graph_text
    assert '#fx.symbol<"s0", min = 2>' in compiled.graph_text
    for rows in [2, 7]:
        args = [torch.randn(rows, 5, device=device),
                torch.randint(0, 10, (rows, 2), device=device)]
        for got, want in zip(compiled(*args), fn(*args)):
            torch.testing.assert_close(got, want)


def test_sizes_one_apart_from_a_symbol_are_dynamic():
    # A language model's loss: logits for every position but the last
    # against the labels from the second on, over a dynamic sequence; the
    # sizes are s0 - 1, so s0 is at least 3.
    def loss(logits, labels):
        shifted = logits[:, :-1].reshape(-1, logits.shape[-1])
        return torch.nn.functional.cross_entropy(shifted, labels[:, 1:].reshape(-1)), \
            logits[:, -3:] * 2

    logits, labels = torch.randn(2, 9, 5), torch.randint(0, 5, (2, 9))
    result = imported(loss, logits, labels, dynamic={0: [1], 1: [1]})
    assert result.guards.symbols == (SizeSymbol("s0", min=3),)
    compiled = kiln.compile(loss, [logits, labels], dynamic={0: [1], 1: [1]})
    for length in [3, 4, 40]:
        logits, labels = torch.randn(2, length, 5), torch.randint(0, 5, (2, length))
        for got, want in zip(compiled(logits, labels), loss(logits, labels)):
            torch.testing.assert_close(got, want)
    with pytest.raises(GuardError, match="outside the guarded range 3 <= s0"):
        compiled(torch.randn(2, 2, 5), torch.randint(0, 5, (2, 2)))


def test_created_and_expanded_sizes_name_their_symbols():
    # zeros(n, 4), a causal mask ones(n, n).triu(1) and an expand of a
    # size-1 row to n have no operand to take n from: their size_symbols
    # name it.
    def fn(x, row):
        n = x.shape[1]
        mask = torch.ones(n, n, dtype=torch.bool).triu(1)
        scores = x.masked_fill(mask, -1e9).softmax(-1)
        return scores + torch.zeros(n, n), row.expand(n, -1) * 2

    x, row = torch.randn(2, 6, 6), torch.randn(1, 3)
    result = imported(fn, x, row, dynamic={0: [1, 2]})
    assert 'size_symbols = ["s0", "s0"]' in result.text
    assert 'fx.expand %row_1 {size_symbols = ["s0"]}' in result.text
    compiled = kiln.compile(fn, [x, row], dynamic={0: [1, 2]})
    for n in [2, 9]:
        x = torch.randn(2, n, n)
        for got, want in zip(compiled(x, row), fn(x, row)):
            torch.testing.assert_close(got, want)


def test_constant_padding_of_a_dynamic_dimension():
    # Cropping one element and padding two: the size is s0 + 1.
    def fn(x):
        return torch.nn.functional.pad(x, (-1, 2), value=0.5) * 2

    compiled = kiln.compile(fn, [torch.randn(2, 6)], dynamic={0: [1]})
    for n in [2, 3, 9]:
        x = torch.randn(2, n)
        torch.testing.assert_close(compiled(x), fn(x))


def test_sizes_that_the_function_relates_are_refused():
    # x[1:] + y needs y one shorter than x: the traces grow each symbol by
    # another amount, so the second one fails.
    with pytest.raises(kiln.KilnImportError, match="fails on inputs whose dynamic dimensions"):
        import_function(lambda x, y: x[1:] + y, [torch.randn(8), torch.randn(7)], dynamic=True)


def test_a_bound_that_another_dynamic_size_gives_is_refused():
    # x[:y.shape[0]] is y's size only while it is at most x's: a relation
    # between two symbols that the guards cannot state.
    with pytest.raises(kiln.KilnImportError,
                       match=r"aten\.slice\.Tensor on a tensor with dynamic sizes "
                             r"tensor<\?x4xf32> needs a relation between size symbols"):
        import_function(lambda x, y: x[:y.shape[0]], [torch.randn(8, 4), torch.randn(5)],
                        dynamic={0: [0], 1: [0]})


def test_a_function_that_fails_on_other_sizes_names_the_way_out():
    layer = torch.nn.Linear(4, 2)
    with pytest.raises(kiln.KilnImportError, match=r"choose the dynamic dimensions"):
        import_function(layer, [torch.randn(6, 4)], dynamic=True)


@pytest.mark.parametrize("dynamic, message", [
    ({0: [1]}, "dimension 1 of input 0 has size 1; sizes 0 and 1 are specialised"),
    ({0: [2]}, "dimension 2 of input 0, which has rank 2"),
    ({1: [0]}, "input 1, which is not a tensor input"),
])
def test_invalid_choices(dynamic, message):
    with pytest.raises(ValueError, match=message):
        import_function(torch.neg, [torch.randn(3, 1)], dynamic=dynamic)


def test_static_import_function_matches_import_graph():
    inputs = [torch.randn(3, 4)]
    result = import_function(torch.relu, inputs)
    gm = kiln.capture(torch.relu, inputs)
    assert result.text == kiln.import_graph(gm, inputs)
    assert result.guards.symbols == ()


SPLIT_VIEW = """
fx.graph @forward(
    %x: tensor<?x32xf32> {fx.guard = #fx.tensor_guard<sizes = [e0, 32], align = 16, device = "cpu">},
    %y: tensor<?x?x32xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1, 32], align = 16, device = "cpu">})
    -> tensor<?x?x32xf32>
    attributes {symbols = [#fx.symbol<"e0", min = 4>, #fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.view %x {size_symbols = ["s0", "s1"]} : (tensor<?x32xf32>) -> tensor<?x?x32xf32>
  %1 = fx.mul %0, %y : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  fx.output %1 : tensor<?x?x32xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_writes_into_views_of_a_dynamic_dimension(device):
    # Functionalised, writes into slices and selects of the dynamic dimension
    # are slice_scatter and select_scatter whose positions follow its
    # run-time size.
    def fn(x, y):
        out = x.clone()
        out[:, 1:] = y[:, 1:] * 2
        out[:, -1] = 0.5
        tail = x.clone()
        tail[:, -3:] = y[:, :3]
        return out, tail

    example = [torch.randn(2, 7, device=device), torch.randn(2, 7, device=device)]
    result = imported(fn, *example, dynamic={0: [1], 1: [1]})
    assert "fx.slice_scatter" in result.text and "fx.select_scatter" in result.text
    compiled = kiln.compile(fn, example, dynamic={0: [1], 1: [1]})
    for length in [3, 4, 40]:
        x, y = torch.randn(2, length, device=device), torch.randn(2, length, device=device)
        for got, want in zip(compiled(x, y), fn(x, y)):
            assert torch.equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_grid_sampling_of_a_dynamic_batch(device):
    def fn(x, grid):
        return (torch.nn.functional.grid_sample(x, grid, align_corners=False),
                torch.nn.functional.grid_sample(x, grid, mode="nearest",
                                                padding_mode="reflection",
                                                align_corners=True))

    example = [torch.randn(3, 2, 5, 6, device=device),
               torch.rand(3, 4, 7, 2, device=device) * 2.4 - 1.2]
    compiled = kiln.compile(fn, example, dynamic={0: [0], 1: [0]})
    for batch in [2, 5]:
        x = torch.randn(batch, 2, 5, 6, device=device)
        grid = torch.rand(batch, 4, 7, 2, device=device) * 2.4 - 1.2
        for got, want in zip(compiled(x, grid), fn(x, grid)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_grid_sampling_of_images_of_any_size(device):
    # The input's height and width dynamic: every mode and padding, at
    # several sizes (down to 2, the least a dynamic size takes).
    def fn(x, grid):
        return tuple(torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding,
                                                     align_corners=align)
                     for mode in ["bilinear", "nearest", "bicubic"]
                     for padding in ["zeros", "border", "reflection"]
                     for align in [False, True])

    example = [torch.randn(2, 2, 5, 6, device=device),
               torch.rand(2, 4, 7, 2, device=device) * 2.4 - 1.2]
    compiled = kiln.compile(fn, example, dynamic={0: [2, 3]})
    for height, width in [(5, 6), (3, 9), (7, 2)]:
        x = torch.randn(2, 2, height, width, device=device)
        grid = torch.rand(2, 4, 7, 2, device=device) * 2.4 - 1.2
        for got, want in zip(compiled(x, grid), fn(x, grid)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_upsampling_of_images_of_any_size(device):
    # The batch, height and width dynamic: scale factors give the result's
    # sizes; nearest, linear, bilinear, trilinear and bicubic (aligned
    # corners or not) compute their scales from the run-time sizes; a fixed
    # output size too.
    def fn(x):
        up = torch.nn.functional.interpolate
        return (up(x, scale_factor=2, mode="nearest"), up(x, scale_factor=(3, 2), mode="nearest"),
                up(x, scale_factor=2, mode="bilinear"),
                up(x, scale_factor=2, mode="bilinear", align_corners=True),
                up(x, size=(4, 5), mode="bilinear"), up(x, size=(7, 3), mode="nearest"),
                up(x, scale_factor=2, mode="bicubic"),
                up(x.flatten(1, 2), scale_factor=3, mode="nearest"),
                up(x.flatten(1, 2), scale_factor=2, mode="linear", align_corners=True),
                up(x[:, None], scale_factor=(1, 2, 1.5), mode="trilinear"))

    compiled = kiln.compile(fn, [torch.randn(2, 3, 5, 6, device=device)], dynamic={0: [0, 2, 3]})
    for batch, height, width in [(2, 5, 6), (3, 2, 9), (1 + 1, 8, 3)]:
        x = torch.randn(batch, 3, height, width, device=device)
        for got, want in zip(compiled(x), fn(x)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_resampling_to_another_tensors_size(device):
    # A feature pyramid resamples a coarse map to a finer one's size
    # (``size=x.shape[-2:]``): no scale factor gives the result's sizes,
    # which size_symbols names (s1, s2), and the sampling ratio is in / out.
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(4, 4, 3, 2, 1).to(device)

    def fpn(x):
        coarse = conv(x)
        up = torch.nn.functional.interpolate
        return (x + up(coarse, size=x.shape[-2:], mode="nearest"),
                x * up(coarse, size=x.shape[-2:], mode="bilinear"))

    compiled = kiln.compile(fpn, [torch.randn(2, 4, 16, 12, device=device)],
                            dynamic={0: [0, 2, 3]})
    assert 'size_symbols = ["s0", "s1", "s2"]' in compiled.graph_text
    for batch, height, width in [(2, 16, 12), (3, 17, 9), (2, 5, 6)]:
        x = torch.randn(batch, 4, height, width, device=device)
        with torch.no_grad():
            for got, want in zip(compiled(x), fpn(x)):
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_sizes_named_after_three_traces():
    # Windows of stride 4 count sizes that other chains fit at two traces'
    # sizes (13 and 30 here): the size a resampling names is the one a third
    # trace confirms, the first pooling's (s0+1)//2.
    def pyramid(x):
        fine = torch.nn.functional.max_pool2d(x, 3, 2, 1)
        coarse = torch.nn.functional.max_pool2d(fine, 3, 2, 1)
        return fine + torch.nn.functional.interpolate(coarse, size=fine.shape[-2:])

    compiled = kiln.compile(pyramid, [torch.randn(1, 3, 13, 13)], dynamic={0: [2, 3]})
    for side in [13, 12, 15, 30]:
        x = torch.randn(1, 3, side, side)
        torch.testing.assert_close(compiled(x), pyramid(x))
    # A created size that a product of symbols fits at two traces' sizes
    # (16 = 4 * 4, then ...) but a multiple of one fits at three.
    ones = kiln.compile(lambda x: x.sum() + x.new_ones(19 * x.shape[0] - 60).sum(),
                        [torch.randn(4)], dynamic={0: [0]})
    assert "s0*s0" not in ones.graph_text
    x = torch.randn(5)
    torch.testing.assert_close(ones(x), x.sum() + 35)


@pytest.mark.parametrize("device", DEVICES)
def test_convolutions_of_images_of_any_size(device):
    # Stride-1 convolutions (padded, dilated, grouped; 1-d, 2-d and 3-d) and
    # transposed ones grow their results with their inputs (s + c, s*k + c):
    # loop.convolution and the im2col products take the run-time sizes. A
    # super-resolution net (stride-1 convolutions, then a pixel shuffle) at
    # any size.
    torch.manual_seed(0)
    nn = torch.nn
    cases = [
        (nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                       nn.Conv2d(8, 4, 5, padding=2, groups=4), nn.Conv2d(4, 4, 3)),
         lambda n, h, w: torch.randn(n, 3, h, w, device=device), {0: [0, 2, 3]}),
        (nn.Sequential(nn.Conv1d(4, 8, 3, padding=1), nn.ReLU(),
                       nn.Conv1d(8, 4, 5, padding=4, dilation=2)),
         lambda n, h, w: torch.randn(n, 4, h, device=device), {0: [0, 2]}),
        (nn.Sequential(nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                       nn.ReLU(), nn.ConvTranspose2d(6, 2, 4, stride=2, padding=1)),
         lambda n, h, w: torch.randn(n, 4, h, w, device=device), {0: [0, 2, 3]}),
        (nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.Tanh(), nn.Conv2d(16, 4, 3, padding=1),
                       nn.PixelShuffle(2)),
         lambda n, h, w: torch.randn(n, 1, h, w, device=device), {0: [0, 2, 3]}),
        (nn.Conv3d(2, 3, 3, padding=1),
         lambda n, h, w: torch.randn(n, 2, 4, h, w, device=device), {0: [0, 3, 4]}),
        # Depthwise: window sums over rows of any width.
        (nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, groups=4), nn.SiLU()),
         lambda n, h, w: torch.randn(n, 4, h, w, device=device), {0: [0, 2, 3]}),
    ]
    for module, make, dynamic in cases:
        module = module.to(device)
        compiled = kiln.compile(module, [make(2, 7, 9)], dynamic=dynamic)
        for batch, height, width in [(2, 7, 9), (3, 5, 12), (2, 16, 6), (2, 4, 45)]:
            x = make(batch, height, width)
            # Eager in full f32 (cuDNN would round to TF32).
            with torch.no_grad(), torch.backends.cudnn.flags(allow_tf32=False):
                torch.testing.assert_close(compiled(x), module(x), rtol=1e-4, atol=1e-4)

    # A window sliding over a product of sizes counts what no chain of one
    # symbol states.
    conv = nn.Conv1d(3, 4, 3, stride=2).to(device)
    with pytest.raises(KilnImportError, match="not a multiple of one size symbol"):
        kiln.compile(lambda x: conv(x.flatten(2)), [torch.randn(2, 3, 9, 9, device=device)],
                     dynamic={0: [2, 3]})


def _check_training_step(model, example_shape, dynamic_dims, shapes, device):
    """Compiles a training step of `model` (the loss a sum of squares, the
    gradients of its parameters) with `dynamic_dims` of the input dynamic,
    and checks it against eager on inputs of `shapes`."""
    names = [name for name, _ in model.named_parameters()]

    def step(*args):
        params, x = args[:-1], args[-1]
        state = dict(zip(names, params))
        loss = torch.nn.utils.stateless.functional_call(model, state, (x,)).pow(2).sum()
        return (loss, *torch.autograd.grad(loss, params))

    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    compiled = kiln.compile(step, [*params, torch.randn(*example_shape, device=device)],
                            dynamic={len(params): dynamic_dims})
    for shape in shapes:
        x = torch.randn(*shape, device=device)
        for got, want in zip(compiled(*params, x), step(*params, x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_training_a_cnn_with_a_dynamic_batch(device):
    # convolution_backward (of strided and transposed convolutions too) with
    # the batch dynamic: each gradient's im2col columns are sized at run
    # time.
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(8, 4, 3, stride=2, padding=1),
                          nn.ConvTranspose2d(4, 2, 2, stride=2), nn.Flatten(),
                          nn.Linear(2 * 8 * 8, 3)).to(device)
    _check_training_step(model, (4, 3, 8, 8), [0], [(2, 3, 8, 8), (7, 3, 8, 8)], device)


class _ResidualBlock(torch.nn.Module):
    """A ResNet basic block, strided with a 1x1 strided shortcut."""

    def __init__(self, channels_in, channels_out, stride):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(channels_out)
        self.shortcut = nn.Sequential(nn.Conv2d(channels_in, channels_out, 1, stride, bias=False),
                                      nn.BatchNorm2d(channels_out))

    def forward(self, x):
        y = torch.relu(self.norm1(self.conv1(x)))
        return torch.relu(self.norm2(self.conv2(y)) + self.shortcut(x))


@pytest.mark.parametrize("device", DEVICES)
def test_strided_convolutions_and_pooling_of_images_of_any_size(device):
    # A ResNet stem (7x7 convolution and 3x3 max pooling, both strided), a
    # strided residual block whose branches count their windows alike, then
    # average and adaptive pooling: each window count is a floor division
    # of the run-time size, and the guard keeps the last one at least 2.
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 8, 7, 2, 3), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(3, 2, 1), _ResidualBlock(8, 16, 2),
                          nn.AvgPool2d(2, count_include_pad=False),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5)).to(device).eval()
    with torch.no_grad():
        compiled = kiln.compile(model, [torch.randn(2, 3, 64, 48, device=device)],
                                dynamic={0: [0, 2, 3]})
        for shape in [(2, 3, 64, 48), (3, 3, 33, 40), (2, 3, 97, 129)]:
            x = torch.randn(*shape, device=device)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        # ⌊(s + 7) / 8⌋ after the three strided windows, halved: at least 2
        # from s = 25 on.
        with pytest.raises(GuardError, match="outside the guarded range 25 <= s1"):
            compiled(torch.randn(2, 3, 24, 48, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_training_on_images_of_any_size(device):
    # The gradients of strided convolutions, max and average pooling and
    # adaptive pooling take the run-time sizes of the images and windows.
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                          nn.Conv2d(8, 8, 3, 1, 1), nn.AvgPool2d(2, count_include_pad=False),
                          nn.AdaptiveAvgPool2d((2, 3)), nn.Flatten(), nn.Linear(48, 5)).to(device)
    _check_training_step(model, (2, 3, 32, 40), [0, 2, 3], [(3, 3, 21, 35), (4, 3, 50, 33)],
                         device)
    # Global average pooling is a mean over window counts: its gradient
    # divides by their product and expands back to them, named
    # ``(s1+3)//8`` and so on.
    model = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                          nn.Conv2d(8, 4, 3, 2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 5)).to(device)
    _check_training_step(model, (2, 3, 32, 40), [0, 2, 3], [(3, 3, 21, 35), (4, 3, 50, 33)],
                         device)
    # Group norm's gradient views [N, C, H', W'] as [N, C, H' * W'], the
    # product of two window counts (``((s1+1)//2)*((s2+1)//2)``).
    model = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.GroupNorm(2, 8), nn.SiLU(),
                          nn.Conv2d(8, 8, 3, 2, 1), nn.GroupNorm(4, 8), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 3)).to(device)
    _check_training_step(model, (2, 3, 32, 24), [0, 2, 3], [(3, 3, 17, 9), (2, 3, 40, 64)],
                         device)


def test_windows_whose_counts_guards_cannot_follow():
    nn = torch.nn
    # Pooling with ceil_mode steps back where the last window would start in
    # the padding: refused on a dynamic size, compiled on a static one.
    pool = nn.MaxPool2d(3, 2, ceil_mode=True)
    with pytest.raises(kiln.UnsupportedOpError, match="ceil_mode on a dynamic size"):
        kiln.compile(pool, [torch.randn(2, 2, 16, 16)], dynamic={0: [0, 2]})
    compiled = kiln.compile(pool, [torch.randn(2, 2, 16, 17)], dynamic={0: [0]})
    x = torch.randn(5, 2, 16, 17)
    torch.testing.assert_close(compiled(x), pool(x))
    # A U-Net's skip connection joins s with 2·⌊(s + 1) / 2⌋, which agree
    # for even sizes only: test_u_nets_take_multiples_of_a_divisor.
    conv = nn.Conv2d(4, 4, 3, 2, 1)
    # Without the skip connection, the upsampled size 2·⌊(s + 1) / 2⌋ is a
    # window count's multiple, right for odd sizes too.
    decoder = kiln.compile(lambda x: torch.nn.functional.interpolate(conv(x), scale_factor=2),
                           [torch.randn(1, 4, 16, 12)], dynamic={0: [2, 3]})
    for height, width in [(16, 16), (17, 9), (5, 6)]:
        x = torch.randn(1, 4, height, width)
        with torch.no_grad():
            torch.testing.assert_close(decoder(x), torch.nn.functional.interpolate(
                conv(x), scale_factor=2))


def test_u_nets_take_multiples_of_a_divisor():
    """A U-Net's skip connections join s with 2·⌊(s + 1) / 2⌋ per level,
    which agree for multiples of 2**levels only: eager fails on the second
    trace's odd sizes, so the traces grow by multiples of 2, 4, ... until it
    does not, and the size symbols guard that divisor. An odd dynamic size
    (of another input here) keeps none; a view that halves takes multiples
    of 2."""
    nn = torch.nn
    torch.manual_seed(0)

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.ModuleList([nn.Conv2d(3 if i == 0 else 4, 4, 3, 2, 1)
                                       for i in range(3)])
            self.up = nn.ModuleList([nn.Conv2d(4 if i == 2 else 8, 4, 3, 1, 1)
                                     for i in range(3)])

        def forward(self, x, bias):
            skips = []
            for down in self.down:
                skips.append(x)
                x = torch.relu(down(x))
            for up in self.up:
                x = nn.functional.interpolate(x, scale_factor=2, mode="bilinear",
                                              align_corners=False)
                skip = skips.pop()
                x = torch.cat([x, skip], 1) if skip.shape[1] == 4 else \
                    x + skip.mean(1, keepdim=True)
                x = torch.relu(up(x))
            return x + bias.sum()

    model = UNet().eval()
    compiled = kiln.compile(model, [torch.randn(1, 3, 16, 24), torch.randn(3)],
                            dynamic={0: [2, 3], 1: [0]})
    assert [(s.name, s.min, s.divisor) for s in compiled.artifact.guards.symbols] == \
        [("s0", 16, 8), ("s1", 16, 8), ("s2", 2, None)]
    for height, width, length in [(16, 24, 3), (24, 16, 8), (8, 40, 5)]:
        if height < 16:
            with pytest.raises(GuardError, match=r"size 8 at dynamic dimension 2 is outside "
                                                 r"the guarded range 16 <= s0, a multiple of 8"):
                compiled(torch.randn(1, 3, height, width), torch.randn(length))
            continue
        inputs = [torch.randn(1, 3, height, width), torch.randn(length)]
        with torch.no_grad():
            torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-4, atol=1e-5)
    with pytest.raises(GuardError, match=r"a multiple of 8"):
        compiled(torch.randn(1, 3, 20, 24), torch.randn(3))

    # Each symbol's divisor is the least its own sizes need.
    def rows_of_eight(x):
        if x.shape[1] % 8:
            raise ValueError("rows of 8")
        return x * 2

    rows = kiln.compile(rows_of_eight, [torch.randn(4, 16)], dynamic={0: [0, 1]})
    assert [(s.name, s.min, s.divisor) for s in rows.artifact.guards.symbols] == \
        [("s0", 2, None), ("s1", 8, 8)]
    # A size that is the divisor itself grows by more than itself: a bound
    # that the second trace would cross in step with the size (16 here) is
    # seen as the bound it is.
    def at_most_16(x):
        if x.shape[0] % 8:
            raise ValueError("multiples of 8")
        return x[:min(x.shape[0], 16)] * 2

    with pytest.raises(KilnImportError, match="beyond its types"):
        kiln.compile(at_most_16, [torch.randn(8, 4)], dynamic={0: [0]})

    halves = kiln.compile(lambda x: x.view(x.shape[0] // 2, 8) * 2, [torch.randn(8, 4)],
                          dynamic={0: [0]})
    assert halves.artifact.guards.symbols[0].divisor == 2
    x = torch.randn(14, 4)
    torch.testing.assert_close(halves(x), x.view(7, 8) * 2)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_losses_of_a_dynamic_batch_and_length(device):
    # Means divide their gradients by element counts of the dynamic sizes
    # (B * T * 10 here, B * (T - 1) * 10 after a slice), and cross-entropy's
    # total weight is B * T: each is computed at run time from the size
    # symbols, not baked in from the trace.
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.GELU(),
                          nn.Linear(32, 10)).to(device)
    names = [name for name, _ in model.named_parameters()]

    def step(*args):
        params, x, labels = args[:-2], args[-2], args[-1]
        logits = torch.nn.utils.stateless.functional_call(model, dict(zip(names, params)), (x,))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()) \
            + logits.pow(2).mean() + logits[:, 1:].pow(2).mean()
        return (loss, *torch.autograd.grad(loss, params))

    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    example = [torch.randn(3, 5, 16, device=device), torch.randint(0, 10, (3, 5), device=device)]
    compiled = kiln.compile(step, [*params, *example],
                            dynamic={len(params): [0, 1], len(params) + 1: [0, 1]})
    assert "fx.scalar_tensor dynamic_s(" in compiled.graph_text
    for batch, length in [(2, 9), (7, 4)]:
        x = torch.randn(batch, length, 16, device=device)
        labels = torch.randint(0, 10, (batch, length), device=device)
        for got, want in zip(compiled(*params, x, labels), step(*params, x, labels)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_transposed_convolution_of_a_dynamic_batch(device):
    # The batch sizes the regrouped input, the patches and every node after.
    def fn(x, w, b):
        return torch.relu(torch.nn.functional.conv_transpose2d(
            x, w, b, stride=2, padding=1, output_padding=1, groups=2))

    w, b = torch.randn(4, 3, 3, 3, device=device), torch.randn(6, device=device)
    compiled = kiln.compile(fn, [torch.randn(3, 4, 5, 7, device=device), w, b],
                            dynamic={0: [0]})
    for batch in [2, 5]:
        x = torch.randn(batch, 4, 5, 7, device=device)
        torch.testing.assert_close(compiled(x, w, b), fn(x, w, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_adaptive_pooling_of_images_of_any_size(device):
    # A fixed output of images whose height and width are dynamic: windows
    # bounded at run time, sizes that Out divides, that it does not, and
    # smaller than Out (overlapping windows).
    def fn(x):
        return (torch.nn.functional.adaptive_avg_pool2d(x, (3, 4)),
                torch.nn.functional.adaptive_avg_pool2d(x, 1) * 2)

    compiled = kiln.compile(fn, [torch.randn(2, 3, 9, 8, device=device)], dynamic={0: [0, 2, 3]})
    for batch, height, width in [(2, 9, 8), (3, 10, 13), (2, 2, 3), (4, 31, 7)]:
        x = torch.randn(batch, 3, height, width, device=device)
        for got, want in zip(compiled(x), fn(x)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_rolls_along_dynamic_dimensions():
    # Both ways: slices whose bounds count from the end or the start, the
    # same at every size; a shift past the traced sizes is refused.
    def fn(x):
        return torch.roll(x, 2, 1), torch.roll(x, (1, -3), (0, 1)) * 2

    compiled = kiln.compile(fn, [torch.randn(4, 7)], dynamic={0: [0, 1]})
    for rows, columns in [(4, 7), (5, 12), (3, 5)]:
        x = torch.randn(rows, columns)
        for got, want in zip(compiled(x), fn(x)):
            assert torch.equal(got, want)
    with pytest.raises(KilnImportError, match="depends on the dynamic input sizes"):
        kiln.compile(lambda x: torch.roll(x, 8, 1), [torch.randn(4, 7)], dynamic={0: [0, 1]})


@pytest.mark.parametrize("device", DEVICES)
def test_transformer_encoder_layer_of_a_dynamic_batch(device):
    # Attention merges the batch with the heads ([S, B, E] -> [S, B*H, D])
    # and with the sequence ([B*S, E] for the projections): sizes that the
    # result-sizes function reads off views of nodes.
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True,
                                             dropout=0.0).eval().to(device)
    compiled = kiln.compile(layer, [torch.randn(3, 5, 16, device=device)], dynamic={0: [0]})
    for batch in [2, 6]:
        x = torch.randn(batch, 5, 16, device=device)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_causal_attention_of_any_batch_and_length(device):
    # A GPT block: the causal mask [T, T] viewed as [1, 1, T, T] (size-1
    # dimensions before dynamic ones group on their own), heads split off a
    # dynamic batch and length; and nn.MultiheadAttention with a padding
    # mask, whose [B*heads, 1, T] mask is a product that could pass for a
    # multiple of one symbol in two traces (15*s0-60 fits s0*s1 with these
    # sizes): a third trace tells, so no symbol's range narrows.
    torch.manual_seed(0)
    heads, width = 4, 16
    qkv, out = torch.nn.Linear(width, 3 * width).to(device), torch.nn.Linear(width, width).to(device)

    def gpt(x):
        b, t, c = x.shape
        q, k, v = (y.view(b, t, heads, c // heads).transpose(1, 2)
                   for y in qkv(x).split(c, dim=2))
        mask = torch.tril(torch.ones(t, t, device=x.device)).view(1, 1, t, t)
        scores = (q @ k.transpose(-2, -1) * 0.5).masked_fill(mask == 0, float("-inf"))
        return out((scores.softmax(-1) @ v).transpose(1, 2).contiguous().view(b, t, c))

    compiled = kiln.compile(gpt, [torch.randn(3, 5, width, device=device)], dynamic={0: [0, 1]})
    for batch, length in [(2, 5), (4, 9), (3, 2)]:
        x = torch.randn(batch, length, width, device=device)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), gpt(x), rtol=1e-4, atol=1e-4)

    attention = torch.nn.MultiheadAttention(width, heads).eval().to(device)

    def padded(x, padding):
        return attention(x, x, x, key_padding_mask=padding, need_weights=False)[0]

    example = [torch.randn(5, 3, width, device=device),
               torch.arange(5, device=device) >= torch.tensor([[5], [1], [3]], device=device)]
    compiled = kiln.compile(padded, example, dynamic={0: [0, 1], 1: [0, 1]})
    assert '#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>' in compiled.graph_text
    for length, batch in [(5, 3), (2, 2), (7, 4)]:
        x = torch.randn(length, batch, width, device=device)
        lengths = torch.randint(1, length + 1, (batch, 1), device=device)
        padding = torch.arange(length, device=device) >= lengths
        with torch.no_grad():
            torch.testing.assert_close(compiled(x, padding), padded(x, padding),
                                       rtol=1e-4, atol=1e-4)


def test_products_and_sums_of_two_dynamic_sizes():
    # A matmul of a [s0, s1, K] operand flattens its rows to [s0*s1, K], and
    # a cat of [.., s1] and [.., s2] has s1+s2 columns: sizes of two symbols,
    # which only the operands' sizes give.
    def fn(x, w, y):
        rows = torch.cat([x[:, :, 0], y], 1)
        return torch.relu(x @ w) + 1, torch.softmax(rows, 1) * 2

    compiled = kiln.compile(fn, [torch.randn(2, 3, 8), torch.randn(8, 5), torch.randn(2, 4)],
                            dynamic={0: [0, 1], 2: [0, 1]})
    for batch, length, extra in [(2, 3, 4), (4, 7, 2), (3, 2, 9)]:
        x, w, y = torch.randn(batch, length, 8), torch.randn(8, 5), torch.randn(batch, extra)
        for got, want in zip(compiled(x, w, y), fn(x, w, y)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    # Such a size has no name: a view that moves it among other dynamic
    # sizes is refused (unnamed, they would pair in order).
    with pytest.raises(KilnImportError, match="moves dynamic sizes"):
        kiln.compile(lambda x, y: torch.cat([x, y], 1).view(x.shape[1] + y.shape[1], x.shape[0]),
                     [torch.randn(3, 4), torch.randn(3, 5)], dynamic={0: [0, 1], 1: [0, 1]})


def test_views_that_move_dynamic_sizes_around():
    # [s0, s1] -> [s1, s0] has its operand's type: the importer names the
    # sizes, and neither folding nor the lowering may take it for the
    # identity; a view of it pairs its sizes with the moved ones.
    def fn(x):
        swapped = x.view(x.shape[1], x.shape[0])
        return swapped * 2, swapped.view(x.shape[1], x.shape[0], 1) + 1

    compiled = kiln.compile(fn, [torch.randn(3, 5)], dynamic={0: [0, 1]})
    for rows, columns in [(3, 5), (4, 7), (9, 2)]:
        x = torch.randn(rows, columns)
        for got, want in zip(compiled(x), fn(x)):
            assert got.shape == want.shape and torch.equal(got, want)


def test_views_whose_sizes_a_third_trace_names_as_products():
    # Two traces cannot tell a multiple of a symbol from other growth: H*W
    # of a square image grows 16 -> 81 as s1 grows 4 -> 9, which 13*s1-36
    # fits too; a third trace shows that no multiple of s1 plus a constant
    # does, and the product s1*s1 names the size (never paired in order).
    def fn(x):
        return x.view(x.shape[0], 3, -1) * 2

    compiled = kiln.compile(fn, [torch.randn(2, 3, 4, 4)], dynamic={0: [0, 2, 3]})
    assert 'size_symbols = ["s0", "s1*s1"]' in compiled.graph_text
    for batch, side in [(2, 4), (3, 7), (5, 2)]:
        x = torch.randn(batch, 3, side, side)
        torch.testing.assert_close(compiled(x), fn(x))


@pytest.mark.parametrize("device", DEVICES)
def test_views_named_by_a_third_trace(device):
    # Instance norm's [1, N*C, H, W] view and attention's [S, B*heads, D]
    # move dynamic sizes around: a third trace confirms that 3*s0 (4*s0) is
    # the batch's multiple, which names the view's sizes.
    def norm(x):
        return torch.nn.functional.instance_norm(x)

    compiled = kiln.compile(norm, [torch.randn(2, 3, 5, 6, device=device)],
                            dynamic={0: [0, 2, 3]})
    assert '"3*s0", "s1", "s2"' in compiled.graph_text
    for batch, height, width in [(2, 5, 6), (3, 5, 5), (4, 7, 9), (2, 2, 2)]:
        x = torch.randn(batch, 3, height, width, device=device)
        torch.testing.assert_close(compiled(x), norm(x), rtol=1e-4, atol=1e-4)

    # With weights, instance norm repeats them N times: an expand to s0.
    affine = torch.nn.InstanceNorm2d(3, affine=True).to(device)
    torch.nn.init.normal_(affine.weight)
    torch.nn.init.normal_(affine.bias)
    compiled = kiln.compile(affine, [torch.randn(2, 3, 5, 6, device=device)],
                            dynamic={0: [0, 2, 3]})
    for batch, height, width in [(2, 5, 6), (4, 7, 9)]:
        x = torch.randn(batch, 3, height, width, device=device)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), affine(x), rtol=1e-4, atol=1e-4)

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True,
                                             dropout=0.0).eval().to(device)
    compiled = kiln.compile(layer, [torch.randn(3, 5, 16, device=device)],
                            dynamic={0: [0, 1]})
    for batch, length in [(2, 5), (4, 9), (3, 2)]:
        x = torch.randn(batch, length, 16, device=device)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_group_norm_of_images_of_any_size(device):
    # The batch, height and width dynamic: the groups' statistics reduce over
    # each group's channels and the dynamic extent; 3-d inputs too.
    def fn(x, w, b, y):
        out, mean, rstd = torch.ops.aten.native_group_norm(
            x, w, b, x.shape[0], 6, x.shape[2] * x.shape[3], 3, 1e-5)
        return out, mean, rstd, torch.nn.functional.group_norm(y, 2) * 2

    example = [torch.randn(2, 6, 5, 4, device=device), torch.randn(6, device=device),
               torch.randn(6, device=device), torch.randn(2, 4, 7, device=device)]
    compiled = kiln.compile(fn, example, dynamic={0: [0, 2, 3], 3: [0, 2]})
    for batch, height, width in [(2, 5, 4), (3, 2, 11), (5, 9, 3)]:
        inputs = [torch.randn(batch, 6, height, width, device=device) * 3 + 1,
                  torch.randn(6, device=device), torch.randn(6, device=device),
                  torch.randn(batch, 4, height * width, device=device)]
        for got, want in zip(compiled(*inputs), fn(*inputs)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_diagonals_of_a_dynamic_size(tmp_path):
    # A diagonal whose length follows the run-time rows: shorter or longer
    # than the 5 columns, from row 1 (the importer refuses to write one, as
    # its length is min(s0 - 1, 5), but fx graphs may hold it).
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    artifact = Artifact(compile_graph_text(DYNAMIC_DIAGONAL, cache_dir=tmp_path),
                        guards=GraphGuards.parse(DYNAMIC_DIAGONAL))
    for rows in [2, 4, 6, 9]:
        x = torch.randn(rows, 5)
        (result,) = artifact(x)
        assert torch.equal(result, torch.diagonal(x, offset=-1) * 2)


DYNAMIC_DIAGONAL = """
fx.graph @forward(
    %x: tensor<?x5xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 5], align = 16, device = "cpu">})
    -> tensor<?xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %0 = fx.diagonal %x {offset = -1 : i64} : (tensor<?x5xf32>) -> tensor<?xf32>
  %1 = fx.mul_scalar %0 {other = 2 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  fx.output %1 : tensor<?xf32>
}
"""


def test_a_view_that_splits_dynamic_sizes_runs_at_every_size(tmp_path):
    # What torch 2.x's importer writes for x.view(s0, s1, 32) with x of
    # [s0*s1, 32] (a Linear's result on a 3-d input): the view names the
    # symbols it splits into, which y's guard binds.
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    artifact = Artifact(compile_graph_text(SPLIT_VIEW, cache_dir=tmp_path),
                        guards=GraphGuards.parse(SPLIT_VIEW))
    for rows, columns in [(3, 5), (2, 7), (6, 4)]:
        x = torch.randn(rows * columns, 32)
        y = torch.randn(rows, columns, 32)
        (result,) = artifact(x, y)
        assert torch.equal(result, x.view(rows, columns, 32) * y)


NAMED_FULL = """
fx.graph @forward(
    %x: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1], align = 16, device = "cpu">})
    -> tensor<?x?xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]} {
  %0 = fx.full {fill_value = 2.5 : f64, size_symbols = ["s1", "s0"]} : () -> tensor<?x?xf32>
  %1 = fx.permute %0 {dims = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = fx.sub %x, %1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  fx.output %2 : tensor<?x?xf32>
}
"""


def test_a_creation_op_of_dynamic_sizes_runs_at_every_size(tmp_path):
    # What torch 2.x's importer writes for torch.full((s1, s0), 2.5).
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    artifact = Artifact(compile_graph_text(NAMED_FULL, cache_dir=tmp_path),
                        guards=GraphGuards.parse(NAMED_FULL))
    for rows, columns in [(3, 5), (7, 2)]:
        x = torch.randn(rows, columns)
        (result,) = artifact(x)
        assert torch.equal(result, x - 2.5)


SYMBOLIC_BOUNDS = """
fx.graph @forward(
    %x: tensor<?x16xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 16], align = 16, device = "cpu">},
    %pe: tensor<40x16xf32> {fx.guard = #fx.tensor_guard<sizes = [40, 16], align = 16, device = "cpu">})
    -> (tensor<?x16xf32>, tensor<16xf32>, tensor<?xsi64>, tensor<16xf32>, tensor<?x16xf32>)
    attributes {symbols = [#fx.symbol<"s0", min = 2, max = 40>]} {
  %n = fx.symbol_value "s0"
  %0 = fx.slice %pe dynamic_end(%n) : (tensor<40x16xf32>, i64) -> tensor<?x16xf32>
  %1 = fx.add %x, %0 : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %c2 = arith.constant 2 : i64
  %m = arith.subi %n, %c2 : i64
  %2 = fx.select %x dynamic_index(%m) {dim = 0 : i64} : (tensor<?x16xf32>, i64) -> tensor<16xf32>
  %3 = fx.arange dynamic_end(%n) {start = 1 : i64, step = 3 : i64} : (i64) -> tensor<?xsi64>
  %4 = fx.select %x {dim = 0 : i64, index = -1 : i64} : (tensor<?x16xf32>) -> tensor<16xf32>
  %5 = fx.slice %pe dynamic_start(%m) {step = 2 : i64} : (tensor<40x16xf32>, i64) -> tensor<?x16xf32>
  fx.output %1, %2, %3, %4, %5 : tensor<?x16xf32>, tensor<16xf32>, tensor<?xsi64>, tensor<16xf32>, tensor<?x16xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_symbolic_bounds_follow_the_size_symbols(device, tmp_path):
    # x + pe[:s0], x[s0 - 2], arange(1, s0, 3), x[-1] and pe[s0 - 2::2]:
    # slice, select and arange bounds that are size symbols' values.
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    text = SYMBOLIC_BOUNDS.replace('"cpu"', f'"{device}"')
    artifact = Artifact(compile_graph_text(text, target=device, cache_dir=tmp_path),
                        guards=GraphGuards.parse(text))
    pe = torch.randn(40, 16, device=device)
    for rows in [2, 7, 40]:
        x = torch.randn(rows, 16, device=device)
        want = (x + pe[:rows], x[rows - 2], torch.arange(1, rows, 3, device=device), x[-1],
                pe[rows - 2::2])
        got = artifact(x, pe)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            torch.testing.assert_close(g, w)


def test_unbounded_symbol_ranges_have_no_max():
    # The shape environment's upper bounds: sympy's infinity (torch 2.x's
    # int_oo is one of its kind), a large int, or a finite one.
    sympy = pytest.importorskip("sympy")
    from kiln.importer import _finite_int

    assert _finite_int(sympy.oo) is None
    assert _finite_int(-sympy.oo) is None
    assert _finite_int(sympy.Integer(2 ** 63 - 1)) is None
    assert _finite_int(sympy.Integer(1024)) == 1024
    assert _finite_int(1024) == 1024


def test_sizes_named_as_products_of_symbols():
    # An expand over the flattened batch and length (a loss's total weight,
    # as torch 2.x's CUDA graphs spell it) names its size s0*s1; one over
    # the shifted length (the loss of x[:, 1:]) s0*(s1-1).
    def fn(x):
        total, shifted = x.sum(), x[:, 1:]
        return (total.expand(x.shape[0] * x.shape[1], 1) * 2,
                shifted.sum().expand(shifted.shape[0] * shifted.shape[1]) + 1)

    compiled = kiln.compile(fn, [torch.randn(3, 5, 4)], dynamic={0: [0, 1]})
    assert 'size_symbols = ["s0*s1"]' in compiled.graph_text
    assert 'size_symbols = ["s0*(s1-1)"]' in compiled.graph_text
    for batch, length in [(3, 5), (2, 9), (6, 3)]:
        x = torch.randn(batch, length, 4)
        for got, want in zip(compiled(x), fn(x)):
            torch.testing.assert_close(got, want)
