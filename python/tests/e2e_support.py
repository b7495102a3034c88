"""What the end-to-end tests (test_e2e*.py and others) share: tolerances
by dtype, fresh random inputs, poisoned result buffers, the device fixture,
`check`, which compiles a function and compares it with eager, and
`partitioned`, which compiles one with the torch.compile backend's
partitioning."""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.backend import KilnRegion, compile_aten_graph  # noqa: E402
from kiln.importer import capture  # noqa: E402
from kiln.options import Options  # noqa: E402

# (rtol, atol) by result dtype, against eager.
TOLERANCES = {
    torch.float32: (1e-5, 1e-6),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 5e-2),
    torch.complex64: (1e-5, 1e-6),
    torch.complex128: (1e-12, 1e-12),
}
# Kiln computes f16/bf16 in f32 and rounds once, where eager rounds after every
# op; against eager run in f32 and rounded at the end, it must agree to about
# one rounding.
ROUNDED_F32_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (8e-3, 1e-5),
}
LOW_PRECISION = (torch.float16, torch.bfloat16)


def upcast(tensor):
    return tensor.float() if tensor.dtype in LOW_PRECISION else tensor


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU on this machine"))]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def fresh(shape, dtype, generator, device="cpu"):
    """Random inputs for `dtype`: normal floats (and complex parts), integers
    in [-50, 50], bools."""
    if dtype.is_floating_point:
        value = torch.randn(shape, generator=generator).to(dtype)
    elif dtype.is_complex:
        value = torch.randn(shape, dtype=dtype, generator=generator)
    elif dtype == torch.bool:
        value = torch.randint(0, 2, shape, generator=generator).bool()
    else:
        low = 0 if dtype == torch.uint8 else -50
        value = torch.randint(low, 50, shape, generator=generator).to(dtype)
    return value.to(device)


def poisoned_like(tensor):
    """A buffer whose every element differs from what a kernel should write."""
    # Contiguous, as Kiln's results are (eager's may be views with strides).
    tensor = tensor.contiguous()
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        return torch.full_like(tensor, float("nan"))
    if tensor.dtype == torch.bool:
        return ~tensor
    return torch.full_like(tensor, 123)


def check(fn, shapes_dtypes, *, device="cpu", options=None, tmp_path, tolerances=None,
          rounded_f32=True):
    generator = torch.Generator().manual_seed(0)
    example = [fresh(s, d, generator, device) for s, d in shapes_dtypes]
    compiled = kiln.compile(fn, example, options=options, cache_dir=tmp_path)
    inputs = [fresh(s, d, generator, device) for s, d in shapes_dtypes]
    expected = fn(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    out = [poisoned_like(e) for e in expected]
    results = compiled.artifact(*inputs, out=out)
    if device == "cuda":
        torch.cuda.synchronize()
    as_f32 = fn(*[upcast(t) for t in inputs])
    as_f32 = list(as_f32) if isinstance(as_f32, (tuple, list)) else [as_f32]
    for got, want, want_f32 in zip(results, expected, as_f32):
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype in LOW_PRECISION and rounded_f32:
            rtol, atol = ROUNDED_F32_TOLERANCES[want.dtype]
            torch.testing.assert_close(got, want_f32.to(want.dtype), rtol=rtol, atol=atol)
        if want.dtype in TOLERANCES:
            rtol, atol = (tolerances or TOLERANCES)[want.dtype]
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=False)
        else:
            assert torch.equal(got, want), (got, want)
    return compiled


F32 = torch.float32

# Matrix products sum K products in another order than eager's library (and
# GPU libraries may split K): f32 agrees to a few ulps of the sum's terms.
GEMM_TOLERANCES = {**TOLERANCES, torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10)}


def partitioned(fn, inputs, tmp_path, **options):
    """`fn` captured (make_fx) on `inputs` and partitioned as the backend
    does, with Kiln's options."""
    gm = capture(fn, inputs)
    return compile_aten_graph(gm, inputs, options=Options(cache_dir=tmp_path, **options))


def regions(gm):
    """The compiled regions of a partitioned graph module."""
    return [m for m in gm.modules() if isinstance(m, KilnRegion)]
