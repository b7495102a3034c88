"""End to end (see test_e2e.py): long reductions and scans, Fourier
transforms, scatters, sorts and distances.
"""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from e2e_support import TOLERANCES, device, poisoned_like, check, F32  # noqa: E402,F401


@pytest.mark.parametrize("options", [None, {"welford": True}, {"split-reductions": True}])
def test_few_long_reductions(device, tmp_path, options):
    """Reductions with few results and many elements each split across
    threads on the CPU (chunks in parallel, then their merge), in kernels
    too (a whole tensor's mean and variance); float sums add in blocks.
    kiln-loop-split-reductions (the GPU's default) splits them in the loop
    IR instead: partial reductions over chunks, then their reduction."""
    def fn(x, y, n):
        return (x.sum(), (x * x).mean(), x.amax(-1), x.argmin(-1), n.sum(-1), x.amin(),
                (x * 0.0001 + 1).prod(-1),
                *torch.var_mean(y, dim=(0, 2, 3)), torch.var(x, unbiased=False))

    generator = torch.Generator().manual_seed(15)
    inputs = [torch.randn(3, 300_001, generator=generator),
              torch.randn(16, 4, 96, 96, generator=generator) + 3,
              torch.randint(-100, 100, (2, 200_000), generator=generator)]
    compiled = kiln.compile(fn, [t.to(device) for t in inputs], options=options,
                            cache_dir=tmp_path)
    args = [torch.randn(t.shape, generator=generator) if t.is_floating_point()
            else torch.randint(-100, 100, t.shape, generator=generator) for t in inputs]
    args[1] += 3
    # Judged against float64: a product of 300k f32 factors is itself only
    # good to a few 1e-3 (PyTorch's own CUDA product is 2e-3 off), where
    # sums are good to 1e-6.
    exact = fn(*[t.double() if t.is_floating_point() else t for t in args])
    for index, (got, want) in enumerate(zip(compiled(*[t.to(device) for t in args]),
                                            exact)):
        if want.is_floating_point():
            # Relative to the summands' magnitudes: a sum of 900k values.
            rtol = 5e-3 if index == 6 else 1e-4
            torch.testing.assert_close(got.cpu().double(), want, rtol=rtol, atol=1e-3,
                                       msg=lambda m: f"result {index}: {m}")
        else:
            assert torch.equal(got.cpu(), want), index


@pytest.mark.parametrize("options", [None, {"split-reductions": True},
                                     {"split-reductions": True, "column-kernels": False}])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_reductions_down_columns(device, tmp_path, options, dtype):
    """Sums over a matrix's rows (a bias gradient), a normalization's
    weight gradient (products with per-row statistics), a max, and a sum
    over every dimension but the innermost of a channels-last image: with
    split-reductions (the GPU's default) they split into partials over
    chunks of 128 positions, the chunk a first result dimension, which the
    GPU runs in column kernels (a warp's lanes on consecutive results); the
    reduction of the partials too where it is long. Results past a
    multiple of 128 (4099 rows) read nothing twice. Batch norm's statistics
    of the image seen as NCHW, kept as [1, C, 1, 1], are sums down columns
    too."""
    if options and "column-kernels" in options and device != "cuda":
        pytest.skip("column-kernels is an option of the GPU pipeline")

    def fn(g, x, mean, rstd, image, tall):
        normalized = (x - mean) * rstd
        nchw = image.permute(0, 3, 1, 2)
        channel_mean = nchw.mean((0, 2, 3), keepdim=True)
        return (g.sum(0), (g * normalized).sum(0), g.amax(0),
                image.sum((0, 1, 2)), tall.sum(0), channel_mean,
                (nchw - channel_mean).square().sum((0, 2, 3), keepdim=True))

    generator = torch.Generator().manual_seed(41)
    shapes = [(4099, 96), (4099, 96), (4099, 1), (4099, 1), (4, 40, 40, 64), (65536, 32)]

    def inputs():
        return [torch.randn(shape, generator=generator).to(dtype) for shape in shapes]

    compiled = kiln.compile(fn, [t.to(device) for t in inputs()], options=options,
                            cache_dir=tmp_path)
    args = inputs()
    exact = fn(*[t.double() for t in args])
    for index, (got, want) in enumerate(zip(compiled(*[t.to(device) for t in args]), exact)):
        # Sums of thousands of rounded terms: relative to their magnitude.
        scale = want.abs().max().item()
        rtol = 1e-5 if dtype == torch.float32 else 1e-2
        assert (got.cpu().double() - want).abs().max().item() <= rtol * scale + 1e-3, index


def test_long_scans(device, tmp_path):
    """Scans of rows longer than 256 run in blocks of about sqrt(n): block
    totals, the totals before each block, then each element's block; rows
    longer than 65536 by recursive doubling. f32 sums of 10000 terms agree
    with float64 to a few 1e-5 of their magnitude (PyTorch's CPU
    accumulates cumsum in double); integers exactly."""
    def fn(x, y, i, z, long, long_i):
        return (torch.cumsum(x, 1), torch.cumsum(y, -1), torch.cumsum(i, 0),
                torch.cumprod(z * 0.001 + 1, 0), torch.cumsum(long, -1),
                torch.cumsum(long_i, 0))

    generator = torch.Generator().manual_seed(23)
    shapes = [(3, 10000), (2, 1000), (65536,), (5000, 3), (2, 70000), (100001, 2)]

    def inputs():
        x, y, z, long = (torch.randn(shapes[k], generator=generator) for k in (0, 1, 3, 4))
        i, long_i = (torch.randint(-50, 50, shapes[k], generator=generator) for k in (2, 5))
        return [t.to(device) for t in (x, y.bfloat16(), i, z, long.bfloat16(), long_i)]

    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    out = [poisoned_like(w) for w in fn(*args)]
    got = compiled.artifact(*args, out=out)
    exact = fn(*[t.double() if t.is_floating_point() else t for t in args])
    for index, (result, expected) in enumerate(zip(got, exact)):
        if expected.is_floating_point():
            # bf16: one rounding (of the f32 sum) each.
            rtol, atol = (1e-4, 1e-4) if result.dtype == torch.float32 else (8e-3, 5e-2)
            torch.testing.assert_close(result.cpu().double(), expected.cpu(), rtol=rtol,
                                       atol=atol, msg=lambda m: f"result {index}: {m}")
        else:
            assert torch.equal(result.cpu(), expected.cpu()), index


def test_fourier_transforms(device, tmp_path):
    """Real-to-complex and complex-to-real transforms against PyTorch's FFTs,
    one- and two-dimensional, f32 and f64, with each normalization; Kiln sums
    them directly (n terms per element), so f32 agrees to about sqrt(n)
    roundings of the terms. Random spectra with imaginary parts at frequency
    0 and M/2 (which the inverse ignores) run on the CPU, where PyTorch's
    pocketfft defines that case; cuFFT leaves it undefined."""
    def fn(x, z, y):
        return (torch.fft.rfft(x, norm="ortho"), torch.fft.rfft2(x),
                torch.fft.rfft(x.double(), dim=1), torch.fft.irfft(z, n=10),
                torch.fft.irfft(z, n=9, norm="forward"),
                torch.fft.irfft2(torch.fft.rfft2(y), s=(6, 10)))

    generator = torch.Generator().manual_seed(21)
    shapes = [(3, 8, 12), (3, 6), (4, 6, 10)]

    def inputs():
        x, z, y = (torch.randn(s, generator=generator) for s in shapes)
        z = torch.complex(z, torch.randn(z.shape, generator=generator))
        if device == "cuda":
            z = torch.fft.rfft(torch.randn(3, 10, generator=generator))
        return [t.to(device) for t in (x, z, y)]

    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    want = fn(*args)
    # cuFFT's results may have strides; Kiln's buffers are contiguous.
    out = [torch.full(w.shape, float("nan"), dtype=w.dtype, device=w.device) for w in want]
    got = compiled.artifact(*args, out=out)
    for index, (result, expected) in enumerate(zip(got, want)):
        assert result.dtype == expected.dtype and result.shape == expected.shape
        double = expected.dtype in (torch.float64, torch.complex128)
        tolerance = 1e-10 if double else 2e-5
        torch.testing.assert_close(result.cpu(), expected.cpu(), rtol=tolerance,
                                   atol=tolerance, msg=lambda m: f"result {index}: {m}")


def assert_transforms_close(results, expected, double_tolerance):
    """Each transform within a tolerance of its reference's largest
    magnitude: 2e-5 in single precision, `double_tolerance` in double."""
    for index, (result, want) in enumerate(zip(results, expected)):
        assert result.dtype == want.dtype and result.shape == want.shape
        scale = want.abs().max().item()
        double = want.dtype in (torch.float64, torch.complex128)
        tolerance = double_tolerance if double else 2e-5
        torch.testing.assert_close(result, want, rtol=0, atol=tolerance * scale,
                                   msg=lambda m: f"result {index}: {m}")


def test_long_fourier_transforms(device, tmp_path):
    """Transforms of more than 4096 elements run one dimension at a time:
    radix-2 butterflies (log2(n) nodes) along powers of two, direct sums
    along other lengths. A Hyena-style long convolution through rfft and
    irfft of twice the length, each normalization, and a Fourier neural
    operator's 2-d transforms of 64 x 96 and 128 x 128 grids."""
    def fn(u, k, grid, field):
        n = u.shape[-1]
        spectrum = torch.fft.rfft(u, n=2 * n) * torch.fft.rfft(k, n=2 * n)
        modes = torch.fft.rfft2(grid)
        return (torch.fft.irfft(spectrum, n=2 * n)[..., :n],
                torch.fft.rfft(u, norm="ortho"),
                torch.fft.irfft(torch.fft.rfft(k.double()), n=n, norm="forward"),
                modes, torch.fft.irfft2(modes * 0.5, s=grid.shape[-2:]),
                torch.fft.irfft2(torch.fft.rfft2(field, norm="ortho"), s=field.shape[-2:],
                                 norm="ortho"))

    generator = torch.Generator().manual_seed(5)
    shapes = [(2, 3, 4096), (3, 4096), (2, 64, 96), (128, 128)]
    compiled = kiln.compile(fn, [torch.randn(s, generator=generator, device="cpu").to(device)
                                 for s in shapes], cache_dir=tmp_path)
    args = [torch.randn(s, generator=generator).to(device) for s in shapes]
    assert_transforms_close(compiled(*args), fn(*args), double_tolerance=1e-12)


def test_long_fourier_transforms_of_other_lengths(device, tmp_path):
    """Dimensions longer than 4096 that are not powers of two transform by
    Bluestein's chirp convolution (power-of-two FFTs of 2n or more):
    rfft and irfft of 5000 samples, a complex transform and its inverse
    along 6001, in f32 and f64; and a complex 2-d transform of 11 x 544
    (a direct sum along each dimension in turn)."""
    def fn(u, z, w):
        return (torch.fft.rfft(u), torch.fft.irfft(torch.fft.rfft(u), n=u.shape[-1]),
                torch.fft.irfft(z, n=12000), torch.fft.rfft(w),
                torch.fft.fft(z), torch.fft.ifft(z, norm="ortho"),
                torch.fft.fft2(z.reshape(17, 353)[:, :352].reshape(11, 544)))

    generator = torch.Generator().manual_seed(9)

    def inputs():
        return [torch.randn(2, 5000, generator=generator).to(device),
                torch.randn(6001, dtype=torch.complex64, generator=generator).to(device),
                torch.randn(4097, dtype=torch.float64, generator=generator).to(device)]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    assert_transforms_close(compiled(*args), fn(*args), double_tolerance=1e-11)


class _SpectralConv2d(torch.nn.Module):
    """A Fourier neural operator's layer: the lowest modes of the input's
    2-d spectrum times complex weights (einsum, so complex batched
    products), written into a zero spectrum, transformed back."""

    def __init__(self, channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / channels ** 2
        shape = (channels, channels, modes, modes)
        self.low = torch.nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat))
        self.high = torch.nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat))

    def forward(self, x):
        m = self.modes
        spectrum = torch.fft.rfft2(x)
        out = torch.zeros(x.shape[0], self.low.shape[1], x.shape[-2], x.shape[-1] // 2 + 1,
                          dtype=torch.cfloat, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", spectrum[:, :, :m, :m], self.low)
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", spectrum[:, :, -m:, :m], self.high)
        return torch.fft.irfft2(out, s=x.shape[-2:])


def test_fourier_neural_operator_layer(device, tmp_path):
    torch.manual_seed(3)
    layer = _SpectralConv2d(4, 6).to(device)
    x = torch.randn(2, 4, 32, 32, device=device)
    with torch.no_grad():
        compiled = kiln.compile(layer, [x], cache_dir=tmp_path)
        fresh = torch.randn(2, 4, 32, 32, device=device)
        want = layer(fresh)
        torch.testing.assert_close(compiled(fresh), want, rtol=0,
                                   atol=2e-5 * want.abs().max().item())


def test_welford_variances(device, tmp_path):
    """With the pipeline option `welford`, variances and the normalizations'
    statistics sum squared deviations in one pass (Welford's update, Chan's
    merge across threads): rows long enough to reduce across a block, and
    values far from zero, where E[x²] - E[x]² would lose every digit."""
    def fn(x, h, w, b, n):
        offset = x + 1000.0
        var, mean = torch.var_mean(offset, dim=1)
        normalized = torch.nn.functional.layer_norm(h, [2048], w, b)
        batch = torch.nn.functional.batch_norm(n, None, None, training=True)
        groups = torch.nn.functional.group_norm(n, 2)
        return var, mean, offset.std(dim=0), normalized, batch, groups

    # A serial Welford update rounds the running mean at every step: over
    # 5000 values near 1000, M2 keeps about four digits where PyTorch's
    # cascaded sums keep five (E[x²] - E[x]² would keep about one).
    tolerances = {**TOLERANCES, F32: (1e-4, 1e-4)}
    check(fn, [((6, 5000), F32), ((8, 2048), torch.bfloat16), ((2048,), torch.bfloat16),
               ((2048,), torch.bfloat16), ((4, 6, 5, 7), F32)],
          device=device, options={"welford": True}, tmp_path=tmp_path, tolerances=tolerances)


@pytest.mark.filterwarnings("ignore:scatter_reduce\\(\\) is in beta")
def test_scatter_reduce(device, tmp_path):
    # Duplicate indices combine atomically; without include_self the
    # receiving elements start from the reduction's identity.
    def fn(x, index, src, ints, int_src):
        return tuple(x.scatter_reduce(1, index, src, reduce, include_self=include)
                     for reduce in ("sum", "amax", "amin", "mean")
                     for include in (True, False)) + (
            ints.scatter_reduce(0, index[:3, :6] % 4, int_src, "amax", include_self=False),
            ints.scatter_reduce(0, index[:3, :6] % 4, int_src, "amin"),
            ints.scatter_reduce(0, index[:3, :6] % 4, int_src % 5, "prod"),
            x.scatter_reduce(1, index, src, "prod"),
            x.scatter_reduce(0, index[:3, :6] % 4, src[:3, :6], "prod", include_self=False),
            x.bfloat16().scatter_reduce(1, index[:2], src[:2].bfloat16(), "prod"),
            ints.scatter_reduce(1, index[:, :5], int_src[:1, :5].expand(4, 5) - 2, "prod",
                                include_self=False))

    generator = torch.Generator().manual_seed(10)
    inputs = [torch.randn(4, 6, generator=generator),
              torch.randint(0, 6, (4, 9), generator=generator),
              torch.randn(4, 9, generator=generator),
              torch.randint(-50, 50, (4, 6), generator=generator).int(),
              torch.randint(-50, 50, (3, 6), generator=generator).int()]
    compiled = kiln.compile(fn, [t.to(device) for t in inputs], cache_dir=tmp_path)
    args = [t.to(device) for t in inputs]
    for got, want in zip(compiled(*args), fn(*args)):
        # bf16 products: Kiln multiplies in f32 and rounds once.
        tolerance = 1e-2 if want.dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.filterwarnings("ignore:scatter_reduce\\(\\) is in beta")
def test_long_scatter_products(device, tmp_path):
    """Float products along more than 4096 elements (which Kiln would gather
    quadratically) scatter by compare-and-swap on the elements' bits: many
    duplicates per element, a zero, a NaN, an infinity, and bf16."""
    def fn(x, y, index, wide_index, src):
        return (x.scatter_reduce(0, index, src, "prod"),
                x.scatter_reduce(0, index, src.flip(0), "prod", include_self=False),
                y.bfloat16().scatter_reduce(0, wide_index, src.bfloat16(), "prod"))

    generator = torch.Generator().manual_seed(11)
    n = 6000
    # Factors near 1 keep 600 of them per element within range.
    src = 1 + 0.01 * torch.randn(n, generator=generator)
    src[7], src[123], src[4000] = 0.0, float("nan"), float("inf")
    inputs = [torch.randn(10, generator=generator), torch.randn(3000, generator=generator),
              torch.randint(0, 10, (n,), generator=generator),
              torch.randint(0, 3000, (n,), generator=generator), src]
    compiled = kiln.compile(fn, [t.to(device) for t in inputs], cache_dir=tmp_path)
    args = [t.to(device) for t in inputs]
    for got, want in zip(compiled(*args), fn(*args)):
        # The threads multiply in any order, which rounds differently (bf16
        # at each of a few steps).
        tolerance = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance, equal_nan=True)


def test_as_strided_scatter(device, tmp_path):
    # src's elements go to self's row-major positions offset + Σ index·stride;
    # overlapping positions (stride 0) keep one of the values.
    def fn(x, src, column):
        y = x * 2
        return (torch.as_strided_scatter(y, src, (3, 2), (4, 1), 2),
                torch.as_strided_scatter(y + 1, src.t(), (2, 3), (1, 5)),
                torch.as_strided_scatter(y - 1, column, (4, 1), (5, 0), 3))

    generator = torch.Generator().manual_seed(13)
    inputs = [torch.randn(4, 5, generator=generator), torch.randn(3, 2, generator=generator),
              torch.randn(4, 1, generator=generator)]
    compiled = kiln.compile(fn, [t.to(device) for t in inputs], cache_dir=tmp_path)
    args = [torch.randn(t.shape, generator=generator).to(device) for t in inputs]
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_cdist(device, tmp_path):
    # Each norm PyTorch treats on its own (0, 1, 2, inf) and a general one;
    # torch.cdist traces as _cdist_forward where it does not use a product.
    aten = torch.ops.aten

    def fn(x1, x2):
        return tuple(aten._cdist_forward(x1, x2, p, None) for p in (0.0, 1.0, 2.0, 3.5,
                                                                   float("inf")))

    generator = torch.Generator().manual_seed(11)
    x1 = torch.randn(2, 5, 7, generator=generator)
    x2 = torch.randn(2, 4, 7, generator=generator)
    x2[0, 1] = x1[0, 2]  # A zero distance.
    compiled = kiln.compile(fn, [x1.to(device), x2.to(device)], cache_dir=tmp_path)
    for got, want in zip(compiled(x1.to(device), x2.to(device)), fn(x1, x2)):
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_pdist(device, tmp_path):
    # Every pair of 23 rows (253 pairs: the row of a pair is found from a
    # square root, corrected by one), for PyTorch's special norms and a
    # general one.
    def fn(x):
        return tuple(torch.nn.functional.pdist(x, p) for p in (0.0, 1.0, 2.0, 3.5,
                                                             float("inf")))

    generator = torch.Generator().manual_seed(13)
    x = torch.randn(23, 6, generator=generator)
    x[7] = x[3]  # A zero distance.
    compiled = kiln.compile(fn, [x.to(device)], cache_dir=tmp_path)
    assert "fx.pdist_forward" in compiled.graph_text
    for got, want in zip(compiled(x.to(device)), fn(x)):
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_masked_scatter(device, tmp_path):
    # Source elements fill the masked positions in row-major order; the mask
    # broadcasts; integers too. Past 4096 elements the counts of the mask
    # are a long scan (in blocks; doubling past 65536): image features
    # merged into a sequence's embeddings, as vision-language models do.
    # Self broadcasts against the mask too (a column against rows).
    def fn(x, mask, source, ints, row_mask, int_source, embeddings, is_image, features):
        return (x.masked_scatter(mask, source),
                ints.masked_scatter(row_mask, int_source),
                embeddings.masked_scatter(is_image, features),
                x[:, :1].masked_scatter(row_mask[:3].repeat(2), source))

    generator = torch.Generator().manual_seed(15)
    inputs = [torch.randn(4, 6, generator=generator),
              torch.rand(4, 6, generator=generator) > 0.5,
              torch.randn(30, generator=generator),
              torch.randint(-9, 9, (3, 5), generator=generator),
              torch.rand(5, generator=generator) > 0.3,
              torch.randint(-9, 9, (4, 5), generator=generator),
              torch.randn(2, 600, 64, generator=generator),
              torch.rand(2, 600, 1, generator=generator) > 0.6,
              torch.randn(2 * 600 * 64, generator=generator)]
    compiled = kiln.compile(fn, [t.to(device) for t in inputs], cache_dir=tmp_path)
    args = [t.to(device) for t in inputs]
    for got, want in zip(compiled(*args), fn(*args)):
        assert torch.equal(got, want)


def test_scatters(device, tmp_path):
    """embedding's gradient (also scaled by the indices' frequencies),
    scatter_add and index_put with accumulate add their values atomically:
    duplicate indices (and negative ones) sum, as in PyTorch; scatter and
    index_put without accumulate replace elements."""
    aten = torch.ops.aten

    def fn(g, ids, x, index, src, rows, values, gh, xi, si):
        columns = torch.arange(0, 8, 4, device=index.device)
        return (aten.embedding_dense_backward(g, ids, 12, 3, False),
                aten.scatter_add(x, 1, index, src),
                aten.index_put(x, [rows], values, True),
                aten.embedding_dense_backward(gh, ids, 12, -1, False),
                aten.scatter_add(xi, 0, index[:, :2] % 4, si),
                # Replacing scatters, at distinct indices (duplicates race).
                aten.scatter.src(x, 1, index[:, :1], src[:, :1]),
                aten.scatter.value(x, 0, index[:6, :2] % 4 + columns, -2.5),
                aten.index_put(x, [rows[2:4]], values),
                # Scaled by how often each index occurs.
                aten.embedding_dense_backward(g, ids, 12, 3, True))
    generator = torch.Generator().manual_seed(12)

    def inputs():
        ids = torch.randint(0, 12, (5, 7), generator=generator)
        ids[0, :4] = 3  # The padding index, and duplicates.
        return [t.to(device) for t in [
            torch.randn(5, 7, 16, generator=generator), ids,
            torch.randn(10, 6, generator=generator),
            torch.randint(0, 6, (10, 3), generator=generator),
            torch.randn(10, 3, generator=generator),
            torch.tensor([1, -1, 4, 1, 9, 1]),
            torch.randn(1, 6, generator=generator),
            torch.randn(5, 7, 16, generator=generator).bfloat16(),
            torch.randint(-50, 50, (4, 2), generator=generator).int(),
            torch.randint(-50, 50, (10, 2), generator=generator).int()]]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype == torch.bfloat16:
            # Atomic additions round to bf16 after each one.
            torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
        elif want.dtype.is_floating_point:
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        else:
            assert torch.equal(got, want)


def test_index_put_through_several_index_tensors(device, tmp_path):
    """`x[i, j] += v` (duplicate positions sum, negative indices count from
    the end), `y[:, i, j] = w` with broadcast indices, and `z[i, :, j] = v`,
    whose separate index dimensions lead the written space."""
    aten = torch.ops.aten

    def fn(x, i, j, v, y, w, z):
        added = x.index_put((i, j), v, accumulate=True)
        # Replacing writes at distinct positions (duplicates race).
        placed = aten.index_put(y, [None, i[:3, None], j[:3]], w)
        apart = aten.index_put(z, [i[:2], None, j[:2]], v[0])
        return added, placed, apart

    generator = torch.Generator().manual_seed(5)

    def inputs():
        return [t.to(device) for t in [
            torch.randn(6, 5, generator=generator),
            torch.tensor([0, 2, -1, 2, 5, 0]), torch.tensor([1, 4, 3, 4, -5, 1]),
            torch.randn(6, generator=generator),
            torch.randn(2, 6, 5, 4, generator=generator),
            torch.randn(2, 3, 3, 4, generator=generator),
            torch.randn(6, 3, 5, generator=generator)]]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_long_sorts(device, tmp_path):
    """Rows longer than 4096 sort through a bitonic network: stably (ties
    and NaNs, which go last, keep their order), in both directions, for
    unsigned integers along a leading dimension, and as topk over a
    vocabulary's logits."""
    def fn(x, ties, counts, logits):
        return (torch.sort(x, dim=-1, descending=True),
                torch.sort(ties, dim=-1, stable=True),
                torch.sort(counts, dim=0, stable=True),
                torch.topk(logits, 5))
    generator = torch.Generator().manual_seed(21)

    def inputs():
        ties = torch.randint(0, 7, (2, 6000), generator=generator).float()
        ties[0, ::13] = float("nan")
        return [t.to(device) for t in [
            torch.randn(3, 5000, generator=generator),
            ties,
            torch.randint(0, 256, (4100, 3), generator=generator).to(torch.uint8),
            torch.randn(2, 50257, generator=generator)]]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for (got_values, got_indices), (want_values, want_indices) in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got_values, want_values, equal_nan=True, rtol=0, atol=0)
        assert torch.equal(got_indices, want_indices)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_max_and_min_propagate_nan(device, tmp_path, dtype):
    """A NaN anywhere in a row (in any of the interleaved vector
    accumulators, the last vector, the scalar tail, first or last) makes the
    row's max and min NaN, and its softmax; rows without one are exact."""
    generator = torch.Generator().manual_seed(42)
    length = 263  # 8 vectors of 32 bytes' lanes and more, then a tail
    positions = [0, 5, 17, 40, 100, 200, 255, 256, 262]
    x = torch.randn(len(positions) + 2, length, generator=generator)
    for row, position in enumerate(positions):
        x[row, position] = float("nan")
    x[-1, 3], x[-1, 250] = float("inf"), float("-inf")
    x = x.to(dtype)

    def fn(x):
        return x.amax(-1), x.amin(-1), torch.softmax(x.float(), -1)

    compiled = kiln.compile(fn, [x.to(device)], cache_dir=tmp_path)
    for got, want in zip(compiled(x.to(device)), fn(x)):
        torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=1e-5, atol=1e-6)
