"""End to end: PyTorch function -> Kiln artifact -> the same answer as eager.

Every case compiles a function, runs it on fresh random inputs (not the
example inputs, never zeros) into result buffers poisoned beforehand, and
compares with eager PyTorch under a tolerance for the dtype. Cases run on the
CPU, and on the GPU where there is one.
"""

import math

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.runtime import GuardError  # noqa: E402

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


def test_bias_relu_scale(device, tmp_path):
    check(lambda x, b, s: torch.relu(x + b) * s - x,
          [((37, 64), F32), ((64,), F32), ((37, 1), F32)], device=device, tmp_path=tmp_path)


def test_cpu_artifacts_use_pytorchs_thread_count(tmp_path):
    """A CPU artifact's parallel loops run on as many OpenMP threads as
    PyTorch uses, set before each call."""
    import ctypes

    x = torch.randn(256, 1024)
    compiled = kiln.compile(lambda x: torch.relu(x) * 2, [x], cache_dir=tmp_path)
    library = ctypes.CDLL(str(compiled.artifact.path))
    saved = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            torch.testing.assert_close(compiled(x), torch.relu(x) * 2)
            assert library.omp_get_max_threads() == threads
    finally:
        torch.set_num_threads(saved)


def test_cpu_parallel_loops_share_pytorchs_openmp_runtime(tmp_path):
    """CPU artifacts run their parallel loops on the OpenMP runtime PyTorch
    already has (one thread pool for both), and split loops whose trip
    counts the threads do not divide (257 rows over 3 threads) exactly."""
    import ctypes
    import os

    def fn(x, y):
        return torch.softmax(x * 2 + y, -1).sum(0), (x @ y.t()).relu()

    x, y = torch.randn(257, 300), torch.randn(257, 300)
    compiled = kiln.compile(fn, [x, y], cache_dir=tmp_path)
    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        for _ in range(3):
            x, y = torch.randn(257, 300), torch.randn(257, 300)
            for got, want in zip(compiled(x, y), fn(x, y)):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    finally:
        torch.set_num_threads(saved)
    library = ctypes.CDLL(str(compiled.artifact.path)).kiln_openmp_library
    library.restype = ctypes.c_char_p
    used = os.path.realpath(library().decode())
    with open("/proc/self/maps") as maps:
        runtimes = {os.path.realpath(line.split()[-1]) for line in maps
                    if "/libgomp" in line or "/libomp" in line or "/libiomp" in line}
    assert runtimes == {used}


def test_single_op(device, tmp_path):
    check(lambda x: torch.neg(x), [((1000,), F32)], device=device, tmp_path=tmp_path)


def test_broadcast_leading_and_unit_dims(device, tmp_path):
    check(lambda a, b: a * b, [((4, 1, 3), F32), ((5, 1), F32)], device=device, tmp_path=tmp_path)


def test_rank0_operand(device, tmp_path):
    check(lambda a, b: a - b, [((3, 7), F32), ((), F32)], device=device, tmp_path=tmp_path)


def test_alpha(device, tmp_path):
    check(lambda a, b: torch.sub(torch.add(a, b, alpha=2.5), b, alpha=0.5),
          [((16, 16), F32), ((16, 16), F32)], device=device, tmp_path=tmp_path)


def test_multiple_outputs_and_shared_producer(device, tmp_path):
    def fn(x, y):
        t = x * y
        return t + x, torch.relu(t), t

    check(fn, [((8, 32), F32), ((8, 32), F32)], device=device, tmp_path=tmp_path)


def test_returns_an_input(device, tmp_path):
    check(lambda x, y: (x + y, x), [((5, 5), F32), ((5, 5), F32)], device=device, tmp_path=tmp_path)


def test_serial_loops(tmp_path):
    device = "cpu"
    check(lambda x, y: torch.relu(x) * y, [((33, 17), F32), ((33, 17), F32)],
          options={"openmp": False}, device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("vector_bytes", [0, 16, 64])
def test_cpu_vector_widths_and_tails(vector_bytes, tmp_path):
    # 1003 and 29 leave tails after whole vectors of every width.
    check(lambda x, y, z: torch.relu(x * y) - z,
          [((3, 29), F32), ((29,), F32), ((3, 1), F32)],
          options={"vector-bytes": vector_bytes}, tmp_path=tmp_path)
    check(lambda x: -x, [((1003,), torch.bfloat16)],
          options={"vector-bytes": vector_bytes}, tmp_path=tmp_path)


def test_without_inlining(device, tmp_path):
    check(lambda x, y: torch.relu(x + y) - y, [((9, 9), F32), ((9,), F32)],
          options={"inline": False}, device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_float_dtypes(dtype, device, tmp_path):
    check(lambda x, y: -(x * y + x) - y, [((64, 64), dtype), ((64,), dtype)],
          device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_relu_float_dtypes(dtype, device, tmp_path):
    # PyTorch 1.13 has no CPU relu for float16.
    check(lambda x, y: torch.relu(x * y + x) - y, [((64, 64), dtype), ((64,), dtype)],
          device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_integer_dtypes(dtype, device, tmp_path):
    check(lambda x, y: torch.relu(x * y - x), [((10, 12), dtype), ((12,), dtype)],
          device=device, tmp_path=tmp_path)


def test_integer_alpha_and_neg(device, tmp_path):
    check(lambda x, y: torch.neg(torch.add(x, y, alpha=3)),
          [((20,), torch.int32), ((20,), torch.int32)], device=device, tmp_path=tmp_path)


def test_bool_logic(device, tmp_path):
    check(lambda p, q: (p + q, p * q), [((40,), torch.bool), ((40,), torch.bool)],
          device=device, tmp_path=tmp_path)


def test_type_promotion(device, tmp_path):
    def fn(i, h, u, p, x):
        return i * h, u + i, p * x

    check(fn, [((6,), torch.int32), ((6,), torch.float16), ((6,), torch.uint8),
               ((6,), torch.bool), ((6,), F32)], device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("name, fn, shapes", [
    ("scalars", lambda x: x * 0.5 + 1.0 - 3, [((8, 33), F32)]),
    ("division", lambda x, y: x / (y.abs() + 0.5), [((8, 33), F32), ((33,), F32)]),
    ("integer division", lambda x, y: x / (y.abs() + 1), [((7,), torch.int32), ((7,), torch.int32)]),
    ("compare and select", lambda x, y: torch.where(x > y, x, y * 2), [((4, 17), F32), ((17,), F32)]),
    ("compare with a scalar", lambda x: (x >= 0.25).to(torch.float32), [((5, 9), F32)]),
    ("math", lambda x: torch.exp(x) + torch.tanh(x) + torch.sigmoid(x) + torch.sqrt(x.abs())
     + torch.log(x.abs() + 1), [((6, 40), F32)]),
    ("extrema", lambda x, y: torch.maximum(x, y) - torch.minimum(x, y), [((3, 10), F32), ((3, 10), F32)]),
    ("cast to bf16", lambda x: x.to(torch.bfloat16), [((9, 16), F32)]),
    ("cast to int", lambda x: (x * 10).to(torch.int32), [((9, 16), F32)]),
    ("rsqrt and reciprocal", lambda x: torch.rsqrt(x.abs() + 1) * torch.reciprocal(x.abs() + 2),
     [((9, 16), F32)]),
    ("silu", lambda x: torch.nn.functional.silu(x), [((4, 33), F32)]),
    ("activations", lambda x: (
        torch.nn.functional.elu(x * 3), torch.nn.functional.leaky_relu(x, 0.2),
        torch.nn.functional.hardswish(x * 3), torch.nn.functional.softplus(x),
        torch.nn.functional.mish(x), torch.nn.functional.hardtanh(x),
        torch.nn.functional.hardsigmoid(x * 3), torch.nn.functional.selu(x),
        torch.nn.functional.softplus(x, beta=2, threshold=1)), [((4, 50), F32)]),
    ("logical ops", lambda x, y: (torch.logical_and(x, y), torch.logical_or(x > 0, y),
                                  torch.logical_xor(x, y > 0), torch.logical_not(x)),
     [((4, 5), F32), ((4, 5), F32)]),
    ("creation", lambda x: (x + torch.ones(4, device=x.device), torch.zeros_like(x),
                            torch.full((2, 4), 3.0, device=x.device),
                            torch.arange(0, 8, 2, device=x.device),
                            x * torch.arange(4, device=x.device),
                            torch.arange(0.5, 2.5, 0.5, device=x.device)), [((2, 4), F32)]),
    ("masked fill and where with scalars", lambda x: (x.masked_fill(x < 0, 0.0),
                                                      torch.where(x > 0, x, 1.5)),
     [((4, 6), F32)]),
    ("clamps", lambda x: (torch.clamp(x, -0.5, 0.5), x.clamp(min=0.1), x.clamp(max=-0.2)),
     [((4, 50), F32)]),
    ("integer clamp", lambda x: torch.clamp(x, -2, 3), [((4, 50), torch.int32)]),
    ("log1p, expm1, log2", lambda x: (torch.log1p(x.abs()), torch.expm1(x),
                                      torch.log2(x.abs() + 1)), [((4, 50), F32)]),
    ("bf16 silu", lambda x: torch.nn.functional.silu(x), [((4, 33), torch.bfloat16)]),
    ("special powers", lambda x: (x ** 2, x.pow(3), x.abs() ** 0.5, x ** -1, x ** -2,
                                  x.abs() ** -0.5), [((4, 33), F32)]),
    ("general power", lambda x: x.abs() ** 1.7, [((4, 33), F32)]),
    ("atan2", lambda x, y: torch.atan2(x, y), [((4, 33), F32), ((4, 33), F32)]),
    ("integer powers", lambda x: (x ** 3, x ** 0, x ** 1), [((4, 9), torch.int64)]),
    ("rms norm", lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
     [((4, 64), F32), ((64,), F32)]),
    ("bitwise", lambda x, y: (x & y, x | y, x ^ y, ~x, x & 6),
     [((4, 5), torch.int32), ((4, 5), torch.int32)]),
    ("bool logic", lambda x: ((x > 0) & (x < 1), (x > 0) | (x < -1), (x > 0) ^ (x < 0.5),
                              ~(x > 0)), [((4, 5), F32)]),
    ("inverse trigonometry", lambda x: (torch.acos(x.sin()), torch.asin(x.sin()), torch.atan(x),
                                        torch.atanh(x.sin() * 0.9)), [((4, 50), F32)]),
    ("hyperbolic", lambda x: (torch.sinh(x), torch.cosh(x), torch.asinh(x),
                              torch.acosh(x.abs() + 1), torch.tan(x * 0.5)), [((4, 50), F32)]),
    ("exp2 and log10", lambda x, i: (torch.exp2(x), torch.log10(x.abs() + 0.1), torch.exp2(i % 8)),
     [((4, 50), F32), ((4, 50), torch.int32)]),
    ("rounding", lambda x: (torch.floor(x * 3), torch.ceil(x * 3), torch.round(x * 3),
                            torch.round(torch.arange(-5, 6, device=x.device) + 0.5),
                            torch.trunc(x * 3), torch.frac(x * 3), torch.sign(x)),
     [((4, 50), F32)]),
    ("integer rounding and sign", lambda i, u: (torch.floor(i), torch.ceil(i), torch.round(i),
                                                torch.trunc(i), torch.sign(i), torch.sign(u)),
     [((4, 50), torch.int32), ((4, 50), torch.uint8)]),
    ("nan and inf tests", lambda x, i: (torch.isnan(x.log()), torch.isinf(torch.exp(x * 100)),
                                        torch.isnan(i), torch.isinf(i)),
     [((4, 50), F32), ((4, 50), torch.int64)]),
    ("powers with tensor exponents", lambda x, y: (x.abs() ** y, torch.ops.aten.pow.Scalar(2.5, x),
                                                   torch.ops.aten.pow.Scalar(2, x)),
     [((4, 50), F32), ((50,), F32)]),
    # Integer bases and exponents (negative ones too: 0 but for bases 1
    # and -1), and products that wrap.
    ("integer powers with tensor exponents",
     lambda i, u: (i ** (i % 7), (i % 3 - 1) ** (i - 40), torch.ops.aten.pow.Scalar(3, i % 50),
                   u ** (u % 5)),
     [((4, 50), torch.int64), ((4, 50), torch.uint8)]),
    ("tensor clamps", lambda x, low, high: (torch.clamp(x, low, high), x.clamp(min=low),
                                            x.clamp(max=high)),
     [((4, 50), F32), ((50,), F32), ((4, 1), F32)]),
    ("integer tensor clamp", lambda x, low: x.clamp(min=low), [((4, 50), torch.int32),
                                                               ((50,), torch.int32)]),
    ("lerp", lambda x, y, w: (torch.lerp(x, y, w), torch.lerp(x, y, 0.25), torch.lerp(x, y, 0.75)),
     [((4, 50), F32), ((4, 50), F32), ((50,), F32)]),
    ("addcmul and addcdiv", lambda x, y, z: (torch.addcmul(x, y, z, value=0.5),
                                             torch.addcdiv(x, y, z.abs() + 1, value=-2),
                                             torch.addcmul(x, y, z)),
     [((4, 50), F32), ((4, 50), F32), ((50,), F32)]),
    ("integer addcmul", lambda x, y: torch.addcmul(x, y, y, value=3),
     [((4, 50), torch.int64), ((4, 50), torch.int64)]),
    ("elu gradients", lambda g, x: (torch.ops.aten.elu_backward(g, 1.5, 1.0, 2.0, False, x),
                                    torch.ops.aten.elu_backward(g, 1.0, 1.05, 1.0, True,
                                                                torch.nn.functional.elu(x))),
     [((4, 50), F32), ((4, 50), F32)]),
])
def test_more_elementwise_ops(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path)


def test_bilinear_upsampling(device, tmp_path):
    # Sizes, scale factors (which set the scale instead of the size ratio)
    # and aligned corners, each as PyTorch computes its weights.
    interpolate = torch.nn.functional.interpolate

    def fn(x, h):
        return (interpolate(x, size=(6, 9), mode="bilinear", align_corners=False),
                interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
                interpolate(x, scale_factor=1.7, mode="bilinear"),
                interpolate(x, size=(2, 3), mode="bilinear"),
                interpolate(h, scale_factor=2, mode="bilinear"))

    check(fn, [((2, 3, 5, 7), F32), ((1, 4, 8, 8), torch.bfloat16)], device=device,
          tmp_path=tmp_path)


def test_resampling_of_one_to_three_spatial_dimensions(device, tmp_path):
    """Nearest, linear and trilinear resampling of 1-d and 3-d inputs and
    bicubic of 2-d ones: sizes, fractional scale factors and aligned
    corners; bicubic reads past the edges at clamped positions; nearest
    resamples integers."""
    interpolate = torch.nn.functional.interpolate

    def fn(x, v, i, h):
        return (interpolate(x, scale_factor=2.5, mode="nearest"),
                interpolate(x, size=5, mode="linear"),
                interpolate(x, scale_factor=1.6, mode="linear", align_corners=True),
                # 7 · 1.1 rounds down to 7: an unchanged size reads in place.
                interpolate(x, scale_factor=1.1, mode="linear"),
                interpolate(v, scale_factor=(2, 1.5, 0.5), mode="nearest"),
                interpolate(v, size=(3, 7, 2), mode="trilinear"),
                interpolate(v, scale_factor=2, mode="trilinear", align_corners=True),
                interpolate(h, size=(9, 4), mode="bicubic"),
                interpolate(h, scale_factor=1.7, mode="bicubic", align_corners=True),
                interpolate(i, scale_factor=(3, 2), mode="nearest"))

    check(fn, [((2, 3, 7), F32), ((1, 2, 4, 5, 6), F32), ((1, 2, 3, 4), torch.uint8),
               ((2, 3, 5, 6), F32)], device=device, tmp_path=tmp_path)


def test_resampling_with_a_scale_per_dimension(device, tmp_path):
    """torch 2.x spells resampling as ``upsample_*.default`` with a scale
    argument per dimension: as the ``.vec`` overloads when no scale is given
    or all give the output size; a mix, or scales that only set the sampling
    ratio, have no fx form and are refused."""
    aten = torch.ops.aten

    def fn(x, v):
        return (aten.upsample_bicubic2d.default(x, [7, 9], False, 1.5, 1.6),
                aten.upsample_nearest3d.default(v, [6, 3, 5]),
                aten.upsample_linear1d.default(x[0], [12], True, 2.0),
                aten.upsample_nearest2d.default(x, [4, 4]))

    check(fn, [((2, 3, 5, 6), F32), ((1, 2, 3, 4, 5), F32)], device=device, tmp_path=tmp_path)
    x = torch.randn(1, 2, 4, 4, device=device)
    for scales in [(2.0, None), (2.0, 1.4)]:  # 4 · 1.4 is not 6: a ratio only
        with pytest.raises(kiln.UnsupportedOpError, match="upsample_bilinear2d.default"):
            kiln.compile(lambda x: aten.upsample_bilinear2d.default(x, [8, 6], False, *scales),
                         [x], cache_dir=tmp_path)


def test_bf16_bicubic_resampling_computes_in_f32(device, tmp_path):
    """bf16 bicubic resampling blends in f32 and rounds once: it matches the
    f32 result rounded to bf16 (PyTorch's CPU kernel keeps its weights in
    bf16, so its own bf16 result is no reference)."""
    def fn(x):
        return torch.nn.functional.interpolate(x, scale_factor=2, mode="bicubic")

    generator = torch.Generator().manual_seed(3)
    example = torch.randn(2, 3, 5, 6, generator=generator).to(device, torch.bfloat16)
    compiled = kiln.compile(fn, [example], cache_dir=tmp_path)
    x = torch.randn(2, 3, 5, 6, generator=generator).to(device, torch.bfloat16)
    rtol, atol = ROUNDED_F32_TOLERANCES[torch.bfloat16]
    torch.testing.assert_close(compiled(x), fn(x.float()).bfloat16(), rtol=rtol, atol=atol)


def test_ops_that_capture_decomposes_lower_too(device, tmp_path):
    """Graphs written in the fx dialect may hold ops that capture decomposes
    (the softmax gradients) or that PyTorch's decompositions remove (the
    diagonal view): they compile as they are."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    text = """fx.graph @forward(%g: tensor<4x33xf32>, %y: tensor<4x33xf32>, %ly: tensor<4x33xf32>, %h: tensor<4x33xbf16>, %hy: tensor<4x33xbf16>, %m: tensor<2x5x6xf32>) -> (tensor<4x33xf32>, tensor<4x33xf32>, tensor<4x33xbf16>, tensor<5x2xf32>, tensor<2x5xf32>, tensor<2x3xf32>) {
  %0 = fx.softmax_backward_data %g, %y {dim = 1 : i64, input_dtype = f32} : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  %1 = fx.log_softmax_backward_data %g, %ly {dim = -1 : i64, input_dtype = f32} : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
  %2 = fx.softmax_backward_data %h, %hy {dim = 1 : i64, input_dtype = bf16} : (tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
  %3 = fx.diagonal %m {offset = 0 : i64, dim1 = 0 : i64, dim2 = 2 : i64} : (tensor<2x5x6xf32>) -> tensor<5x2xf32>
  %4 = fx.diagonal %m {offset = 1 : i64, dim1 = 1 : i64, dim2 = 2 : i64} : (tensor<2x5x6xf32>) -> tensor<2x5xf32>
  %5 = fx.diagonal %m {offset = -3 : i64, dim1 = 2 : i64, dim2 = 1 : i64} : (tensor<2x5x6xf32>) -> tensor<2x3xf32>
  fx.output %0, %1, %2, %3, %4, %5 : tensor<4x33xf32>, tensor<4x33xf32>, tensor<4x33xbf16>, tensor<5x2xf32>, tensor<2x5xf32>, tensor<2x3xf32>
}
"""
    aten = torch.ops.aten
    generator = torch.Generator().manual_seed(3)
    g = torch.randn(4, 33, generator=generator)
    y = torch.randn(4, 33, generator=generator).softmax(1)
    m = torch.randn(2, 5, 6, generator=generator)
    h, hy = g.bfloat16(), y.bfloat16()
    want = [aten._softmax_backward_data(g, y, 1, torch.float32),
            aten._log_softmax_backward_data(g, y.log(), -1, torch.float32),
            aten._softmax_backward_data(h.float(), hy.float(), 1, torch.float32).bfloat16(),
            torch.diagonal(m, 0, 0, 2), torch.diagonal(m, 1, 1, 2), torch.diagonal(m, -3, 2, 1)]
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[t.to(device) for t in (g, y, y.log(), h, hy, m)])
    for result, expected in zip(got, want):
        tolerance = 1e-2 if expected.dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(result.cpu(), expected, rtol=tolerance, atol=tolerance)


def test_batch_norms_as_written(device, tmp_path):
    """The batch normalizations that capture decomposes compile as they are
    from the fx dialect: evaluation mode, training mode with the running
    statistics' updates (unbiased variance), and without statistics."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    t = "tensor<3x4x5x6xf32>"
    text = f"""fx.graph @forward(%x: {t}, %w: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> ({t}, {t}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, {t}, tensor<4xf32>) {{
  %0:3 = fx.native_batch_norm_legit_no_training %x weight(%w) bias(%b), %rm, %rv {{momentum = 0.1, eps = 1.0e-05}} : ({t}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ({t}, tensor<0xf32>, tensor<0xf32>)
  %1:5 = fx.native_batch_norm_legit_functional %x weight(%w) bias(%b), %rm, %rv {{training = true, momentum = 0.25, eps = 1.0e-03}} : ({t}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ({t}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %2:3 = fx.native_batch_norm_legit_no_stats %x bias(%b) {{training = true, momentum = 0.1, eps = 1.0e-05}} : ({t}, tensor<4xf32>) -> ({t}, tensor<4xf32>, tensor<4xf32>)
  fx.output %0#0, %1#0, %1#1, %1#2, %1#3, %1#4, %2#0, %2#2 : {t}, {t}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, {t}, tensor<4xf32>
}}
"""
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(3, 4, 5, 6, generator=generator) * 2 + 1
    w, b, rm = (torch.randn(4, generator=generator) for _ in range(3))
    rv = torch.rand(4, generator=generator) + 0.5
    F = torch.nn.functional
    mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False)
    new_rm, new_rv = rm.clone(), rv.clone()
    trained = F.batch_norm(x, new_rm, new_rv, w, b, True, 0.25, 1e-3)
    want = [F.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5), trained, mean,
            (var + 1e-3).rsqrt(), new_rm, new_rv,
            F.batch_norm(x, None, None, None, b, True, 0.1, 1e-5), (var + 1e-5).rsqrt()]
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[v.to(device) for v in (x, w, b, rm, rv)])
    for result, expected in zip(got, want):
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_normalization_gradients_as_written(device, tmp_path):
    """native_batch_norm_backward (training and evaluation) and
    native_layer_norm_backward compile as they are from the fx dialect and
    match ATen's kernels."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    t, c, r = "tensor<3x4x5x6xf32>", "tensor<4xf32>", "tensor<3x4x1x1xf32>"
    text = f"""fx.graph @forward(%dy: {t}, %x: {t}, %w: {c}, %rm: {c}, %rv: {c}, %sm: {c}, %si: {c}, %m: {r}, %rs: {r}, %lw: tensor<5x6xf32>) -> ({t}, {c}, {c}, {t}, {t}, tensor<5x6xf32>, tensor<5x6xf32>, {t}) {{
  %0:3 = fx.native_batch_norm_backward %dy, %x weight(%w) running_mean(%rm) running_var(%rv) save_mean(%sm) save_invstd(%si) {{train = true, eps = 1.0e-05, output_mask = array<i1: true, true, true>}} : ({t}, {t}, {c}, {c}, {c}, {c}, {c}) -> ({t}, {c}, {c})
  %1:3 = fx.native_batch_norm_backward %dy, %x weight(%w) running_mean(%rm) running_var(%rv) {{train = false, eps = 1.0e-03, output_mask = array<i1: true, false, false>}} : ({t}, {t}, {c}, {c}, {c}) -> ({t}, {c}, {c})
  %2:3 = fx.native_layer_norm_backward %dy, %x, %m, %rs weight(%lw) {{normalized_shape = array<i64: 5, 6>, output_mask = array<i1: true, true, true>}} : ({t}, {t}, {r}, {r}, tensor<5x6xf32>) -> ({t}, tensor<5x6xf32>, tensor<5x6xf32>)
  %3:3 = fx.native_layer_norm_backward %dy, %x, %m, %rs {{normalized_shape = array<i64: 5, 6>, output_mask = array<i1: true, false, false>}} : ({t}, {t}, {r}, {r}) -> ({t}, tensor<5x6xf32>, tensor<5x6xf32>)
  fx.output %0#0, %0#1, %0#2, %1#0, %2#0, %2#1, %2#2, %3#0 : {t}, {c}, {c}, {t}, {t}, tensor<5x6xf32>, tensor<5x6xf32>, {t}
}}
"""
    aten = torch.ops.aten
    generator = torch.Generator().manual_seed(6)
    x = torch.randn(3, 4, 5, 6, generator=generator) * 2 + 1
    dy = torch.randn(3, 4, 5, 6, generator=generator)
    w, rm = torch.randn(4, generator=generator), torch.randn(4, generator=generator)
    rv = torch.rand(4, generator=generator) + 0.5
    sm = x.mean((0, 2, 3))
    si = (x.var((0, 2, 3), unbiased=False) + 1e-5).rsqrt()
    m = x.mean((2, 3), keepdim=True)
    rs = (x.var((2, 3), unbiased=False, keepdim=True) + 1e-5).rsqrt()
    lw = torch.randn(5, 6, generator=generator)
    trained = aten.native_batch_norm_backward(dy, x, w, rm, rv, sm, si, True, 1e-5,
                                              [True, True, True])
    evaluated = aten.native_batch_norm_backward(dy, x, w, rm, rv, None, None, False, 1e-3,
                                                [True, False, False])
    layer = aten.native_layer_norm_backward(dy, x, [5, 6], m, rs, lw, None,
                                            [True, True, False])
    unweighted = aten.native_layer_norm_backward(dy, x, [5, 6], m, rs, None, None,
                                                 [True, False, False])
    want = [*trained, evaluated[0], layer[0], layer[1], dy.sum((0, 1)), unweighted[0]]
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[v.to(device) for v in (dy, x, w, rm, rv, sm, si, m, rs, lw)])
    for result, expected in zip(got, want):
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_group_norm_gradient_as_written(device, tmp_path):
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    t, s = "tensor<2x6x4x5xf32>", "tensor<2x3xf32>"
    text = f"""fx.graph @forward(%dy: {t}, %x: {t}, %m: {s}, %r: {s}, %w: tensor<6xf32>) -> ({t}, tensor<6xf32>, tensor<6xf32>, {t}) {{
  %0:3 = fx.native_group_norm_backward %dy, %x, %m, %r weight(%w) {{group = 3 : i64, output_mask = array<i1: true, true, true>}} : ({t}, {t}, {s}, {s}, tensor<6xf32>) -> ({t}, tensor<6xf32>, tensor<6xf32>)
  %1:3 = fx.native_group_norm_backward %dy, %x, %m, %r {{group = 3 : i64, output_mask = array<i1: true, false, false>}} : ({t}, {t}, {s}, {s}) -> ({t}, tensor<6xf32>, tensor<6xf32>)
  fx.output %0#0, %0#1, %0#2, %1#0 : {t}, tensor<6xf32>, tensor<6xf32>, {t}
}}
"""
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(2, 6, 4, 5, generator=generator) * 2 + 1
    dy = torch.randn(2, 6, 4, 5, generator=generator)
    w = torch.randn(6, generator=generator)
    grouped = x.reshape(2, 3, -1)
    m = grouped.mean(-1)
    r = (grouped.var(-1, unbiased=False) + 1e-5).rsqrt()
    aten = torch.ops.aten
    weighted = aten.native_group_norm_backward(dy, x, m, r, w, 2, 6, 20, 3, [True, True, True])
    plain = aten.native_group_norm_backward(dy, x, m, r, None, 2, 6, 20, 3, [True, False, False])
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    got = Artifact(path)(*[v.to(device) for v in (dy, x, m, r, w)])
    for result, expected in zip(got, [*weighted, plain[0]]):
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_group_norm_gradient_of_a_dynamic_batch_and_extent(device, tmp_path):
    from kiln.compiler import compile_graph_text
    from kiln.guards import GraphGuards
    from kiln.runtime import Artifact

    t, s = "tensor<?x6x?xf32>", "tensor<?x3xf32>"

    def guard(sizes):
        return f'{{fx.guard = #fx.tensor_guard<sizes = [{sizes}], align = 16, device = "{device}">}}'

    text = f"""fx.graph @forward(%dy: {t} {guard("s0, 6, s1")}, %x: {t} {guard("s0, 6, s1")},
    %m: {s} {guard("s0, 3")}, %r: {s} {guard("s0, 3")}, %w: tensor<6xf32> {guard("6")})
    -> ({t}, tensor<6xf32>, tensor<6xf32>)
    attributes {{symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 2>]}} {{
  %0:3 = fx.native_group_norm_backward %dy, %x, %m, %r weight(%w) {{group = 3 : i64, output_mask = array<i1: true, true, true>}} : ({t}, {t}, {s}, {s}, tensor<6xf32>) -> ({t}, tensor<6xf32>, tensor<6xf32>)
  fx.output %0#0, %0#1, %0#2 : {t}, tensor<6xf32>, tensor<6xf32>
}}
"""
    path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                              cache_dir=tmp_path)
    artifact = Artifact(path, guards=GraphGuards.parse(text))
    generator = torch.Generator().manual_seed(11)
    for batch, extent in [(2, 20), (5, 3)]:
        x = torch.randn(batch, 6, extent, generator=generator) * 2 + 1
        dy = torch.randn(batch, 6, extent, generator=generator)
        w = torch.randn(6, generator=generator)
        grouped = x.reshape(batch, 3, -1)
        m = grouped.mean(-1)
        r = (grouped.var(-1, unbiased=False) + 1e-5).rsqrt()
        want = torch.ops.aten.native_group_norm_backward(
            dy, x, m, r, w, batch, 6, extent, 3, [True, True, True])
        got = artifact(*[v.to(device) for v in (dy, x, m, r, w)])
        for result, expected in zip(got, want):
            torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_rotary_embeddings_with_complex_numbers(device, tmp_path):
    # Llama's reference rotary embeddings: pairs of features as complex
    # numbers, turned by e^{iθ}, and back; one kernel that stores no complex
    # number. Complex sums, quotients and scalars too.
    def rope(x, freqs):
        turned = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2)) * freqs
        return torch.view_as_real(turned).flatten(-2).type_as(x)

    check(rope, [((2, 8, 4, 16), torch.bfloat16), ((1, 8, 1, 8), torch.complex64)],
          device=device, tmp_path=tmp_path / "rope")

    def arithmetic(z, w, r):
        return (z + w * 2, torch.sub(z, r, alpha=3), z / w, -z * 0.5, r / z,
                torch.view_as_real(z * w), torch.view_as_complex(torch.stack([r, r * 2], -1)))

    check(arithmetic, [((5, 7), torch.complex64), ((5, 7), torch.complex64), ((7,), F32)],
          device=device, tmp_path=tmp_path / "arithmetic")


def test_complex_numbers_from_and_to_reals(device, tmp_path):
    def fn(r, t, z):
        return (torch.polar(r.abs(), t), torch.complex(r, t[0]), z.conj() * z,
                torch.conj_physical(z), z.abs(), z.angle(), r.angle(),
                torch.real(z) - torch.imag(z), torch.exp(z * 0.5))

    check(fn, [((4, 6), F32), ((4, 6), F32), ((4, 6), torch.complex64)],
          device=device, tmp_path=tmp_path / "math")

    def reductions_and_copies(z, r):
        return (z.sum(1), z.mean(), z.sum((0, 1), keepdim=True),
                torch.where(r > 0, z, r), torch.cat([z, z * 2], 0),
                torch.nn.functional.pad(z, (1, 2)), torch.roll(z, 1, 1))

    check(reductions_and_copies, [((4, 6), torch.complex64), ((6,), F32)],
          device=device, tmp_path=tmp_path / "reductions")


def test_complex_logarithms_roots_powers_and_equality(device, tmp_path):
    def roots_and_powers(z, w, r):
        return (torch.log(z), torch.sqrt(z), torch.sqrt(-z), z ** 2, z ** 3,
                z ** -1, z ** -2, z ** 0.5, z ** -0.5, z ** 1.5, z ** 0,
                torch.pow(z, w), torch.pow(r.abs() + 0.5, w))

    # Powers other than the special exponents go through exp(w log z): a
    # few roundings more than eager's std::pow.
    check(roots_and_powers,
          [((4, 6), torch.complex64), ((4, 6), torch.complex64), ((4, 6), F32)],
          device=device, tmp_path=tmp_path / "powers",
          tolerances={**TOLERANCES, torch.complex64: (1e-4, 1e-5)})

    def equality(z, w, r):
        same = torch.where(r > 0, z, w)
        return z == same, z != same, z == r, z != 1, torch.real(z) == z

    check(equality, [((4, 6), torch.complex64), ((4, 6), torch.complex64), ((4, 6), F32)],
          device=device, tmp_path=tmp_path / "equality")


def test_complex_trigonometric_and_hyperbolic_functions(device, tmp_path):
    def functions(z):
        return (torch.sin(z), torch.cos(z), torch.tan(z), torch.sinh(z), torch.cosh(z),
                torch.tanh(z), torch.sigmoid(z))

    for dtype in (torch.complex64, torch.complex128):
        check(functions, [((4, 6), dtype)], device=device, tmp_path=tmp_path / str(dtype))

    # tanh past |Re z| = 44 (f32's), where sinh^2 would overflow, and tan
    # past |Im z| = 44; near 0, where the parts are tiny.
    def far_and_near(z):
        return (torch.tanh(z * 30), torch.tanh(z * 1e-4), torch.tan(z * 30),
                torch.tanh(torch.complex(z.real * 300, z.imag)))

    check(far_and_near, [((8, 16), torch.complex64)], device=device, tmp_path=tmp_path / "far")

    # A real part past where cosh overflows, on the real axis: sinh and cosh
    # are inf + 0i there (not inf + NaN i), sin and cos of i times it too,
    # as C99 and eager on the CPU have them on both devices (eager's CUDA
    # kernels give NaN parts). (Eager's own sigmoid(-100 + 0i) is NaN;
    # Kiln's is 0.)
    def circular(z):
        return torch.sin(z), torch.cos(z), torch.sinh(z), torch.cosh(z), torch.tanh(z)

    z = torch.tensor([100 + 0j, -100 + 0j, 100j, -100j, 1 + 0j], dtype=torch.complex64,
                     device=device)
    compiled = kiln.compile(circular, [z], cache_dir=tmp_path / "overflow")
    for got, want in zip(compiled(z), circular(z.cpu())):
        torch.testing.assert_close(got.cpu(), want, equal_nan=False)
    sigmoid = kiln.compile(torch.sigmoid, [z], cache_dir=tmp_path / "sigmoid")(z)
    assert torch.equal(sigmoid[1], torch.zeros((), dtype=torch.complex64, device=device))


def test_math_keeps_its_digits_at_the_extremes(device, tmp_path):
    """asinh, acosh and atanh of tiny and huge numbers and next to 1; f64
    log1p and expm1 of tiny ones; f32 sin and cos near multiples of π (-0
    included) and of large arguments; tanh of tiny and huge ones; f32 log
    and log2 of subnormal numbers; erfc's tails (where 1 - erf would be 0)
    and near 0; f32 powers of tiny and huge bases (where e^(y ln x) in f32
    errs by |y ln x| ulp): relative errors of a few ulp against f64
    eager, where the textbook forms lose every digit or overflow."""
    tiny = torch.tensor([1e-30, -1e-20, 3e-12, -1e-7, 1e-4], dtype=torch.float64)
    huge = torch.tensor([1e5, -3e9, 1e20, -3e38], dtype=torch.float64)
    near_one = torch.tensor([1 + 1e-6, 1 + 1e-3, 1.5], dtype=torch.float64)
    # 505.7964172 and 42781604 are f32 numbers next to multiples of π/2.
    angles = torch.cat([-tiny, tiny, torch.tensor([math.pi, -math.pi, 2 * math.pi, 100 * math.pi,
                                                   1e4 + 0.5, -3e5, 1e7 + 1, 505.7964172,
                                                   42781604.0, 252.8982086],
                                                  dtype=torch.float64)])

    def functions(small, large, close, below_one, angle, small64, tails):
        return (torch.asinh(small), torch.asinh(large), torch.acosh(close),
                torch.acosh(large.abs()), torch.atanh(small), torch.atanh(below_one),
                torch.sin(angle), torch.cos(angle), torch.log1p(small64),
                torch.expm1(small64), torch.tanh(small), torch.tanh(small64),
                torch.tanh(large), torch.log(small.abs() * 1e-10), torch.log2(small.abs() * 1e-10),
                torch.erfc(tails), torch.erfc(small64), torch.pow(small.abs() * 1e-8, 0.375),
                torch.pow(large.abs(), -0.3125))

    inputs = [tiny.float(), huge.float(), near_one.float(),
              torch.tensor([0.5, -0.999999, 0.9999], dtype=torch.float32),
              angles.float(), tiny, torch.tensor([3.0, 5.005, 7.5, 9.0])]
    compiled = kiln.compile(functions, [v.to(device) for v in inputs], cache_dir=tmp_path)
    got = compiled(*[v.to(device) for v in inputs])
    # The reference: f64 eager on the very same (rounded) inputs.
    want = functions(*[v.double() for v in inputs])
    for index, (g, w) in enumerate(zip(got, want)):
        ulps = 4 * (2.0 ** -52 if g.dtype == torch.float64 else 2.0 ** -23)
        error = (g.cpu().double() - w).abs() / w.abs().clamp_min(1e-300)
        assert error.max() <= ulps, (index, g, w)
    # sin keeps the sign of a zero.
    zeros = torch.tensor([0.0, -0.0], device=device)
    signs = torch.sign(1 / kiln.compile(torch.sin, [zeros], cache_dir=tmp_path / "zeros")(zeros))
    assert signs.tolist() == [1.0, -1.0]


def test_powers_of_special_values(device, tmp_path):
    """f32 pow of every pair of special values (signed zeros, ±1, negative
    bases with odd, even and fractional exponents, infinities, NaN, a
    subnormal) is eager's, signs of zeros included."""
    special = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1e-45, -1e-45,
               float("inf"), -float("inf"), float("nan")]
    bases = torch.tensor([a for a in special for _ in special], device=device)
    exponents = torch.tensor([b for _ in special for b in special], device=device)
    compiled = kiln.compile(torch.pow, [bases, exponents], cache_dir=tmp_path)
    got, want = compiled(bases, exponents), torch.pow(bases, exponents)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=0, equal_nan=True)
    numbers = ~want.isnan()
    assert torch.equal(torch.signbit(got[numbers]), torch.signbit(want[numbers]))


def _cmath_reference(name, z):
    """cmath's `name` of every element of `z` (C99's branch cuts, accurate
    to an ulp or two) as complex128; NaN where cmath raises (the poles)."""
    import cmath

    def value(v):
        try:
            return getattr(cmath, name)(v)
        except ValueError:
            return complex("nan")

    return torch.tensor([value(v) for v in z.cpu().tolist()], dtype=torch.complex128)


def _part_errors(got, want):
    """The larger of the parts' errors relative to |want|, where want's part
    is finite; 0 where an infinite part is matched exactly, inf where not."""
    errors = []
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        relative = (g - w).abs() / want.abs().clamp_min(1e-300)
        errors.append(torch.where(w.isfinite(), relative,
                                  torch.where(g == w, 0.0, math.inf).double()))
    return torch.maximum(*errors)


def test_complex_inverse_trigonometric_and_hyperbolic_functions(device, tmp_path):
    """asin, acos, atan and their hyperbolic kin against cmath: random
    numbers up to |z| ~ 10, tiny, huge and infinite ones, points next to the
    poles ±1 and ±i, and both signed zeros on each branch cut (eager's complex64
    kernels cancel there, so cmath is the reference)."""
    import cmath
    generator = torch.Generator().manual_seed(7)
    parts = torch.randn(2, 500, generator=generator, dtype=torch.float64) * 3
    special = [complex(x, y) for x in (0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 1e-20, 1e20)
               for y in (0.0, -0.0, 1e-20, 2.0, -2.0, 1e20)]
    infinity = float("inf")
    special += [complex(infinity, 0.0), complex(-infinity, -0.0), complex(1.0, infinity),
                complex(-infinity, 2.0), complex(infinity, -infinity)]
    special += [1 + 1e-7j, -1 - 1e-7j, 1e-7 + 1j, -0.0153 + 0.983j, 1e30 - 1e30j]
    z128 = torch.cat([torch.complex(parts[0], parts[1]),
                      torch.complex(parts[0], parts[1]) * 1e-6,
                      torch.tensor(special, dtype=torch.complex128)])
    names = ("asin", "acos", "atan", "asinh", "acosh", "atanh")

    def inverses(z):
        return tuple(getattr(torch, name)(z) for name in names)

    for dtype, tolerance in ((torch.complex64, 1e-6), (torch.complex128, 1e-14)):
        z = z128.to(dtype)
        compiled = kiln.compile(inverses, [z.to(device)], cache_dir=tmp_path / str(dtype))
        for name, got in zip(names, compiled(z.to(device))):
            want = _cmath_reference(name, z)
            got = got.cpu().to(torch.complex128)
            # cmath raises at the poles; C99 (and Kiln) give infinities.
            defined = ~want.isnan()
            error = _part_errors(got, want)[defined]
            assert error.max() < tolerance, (name, dtype, z[defined][error.argmax()])
            # The sign of each zero part says which side of a cut a value is.
            on_cuts = slice(-len(special), -5)
            for g, w in zip(got[on_cuts].tolist(), want[on_cuts].tolist()):
                if cmath.isnan(w):
                    continue
                assert math.copysign(1, g.real) == math.copysign(1, w.real), (name, g, w)
                assert math.copysign(1, g.imag) == math.copysign(1, w.imag), (name, g, w)


def test_complex_logarithms_reciprocals_and_activation_gradients(device, tmp_path):
    """log2, log10, rsqrt, reciprocal and tanh's and sigmoid's gradients
    against eager; log1p, expm1 and exp2 (which torch 1.13's CPU kernels
    lack) against their cmath forms, near 0 too, as fx text."""
    from kiln.compiler import compile_graph_text
    from kiln.runtime import Artifact

    aten = torch.ops.aten

    def functions(z, w):
        return (torch.log2(z), torch.log10(z), torch.rsqrt(z), torch.reciprocal(z),
                aten.tanh_backward(w, z), aten.sigmoid_backward(w, z))

    for dtype in (torch.complex64, torch.complex128):
        check(functions, [((4, 6), dtype), ((4, 6), dtype)], device=device,
              tmp_path=tmp_path / str(dtype))

    import cmath
    generator = torch.Generator().manual_seed(8)
    z = torch.randn(200, dtype=torch.complex128, generator=generator) * 2
    z = torch.cat([z, z * 1e-9, torch.tensor([0j, -1e-8 + 0j, -0.5 + 0.5j, 1e-30 + 1e-30j])])
    series = {  # Taylor series where the closed forms would cancel.
        "log1p": (lambda v: cmath.log(1 + v), lambda v: v - v * v / 2 + v ** 3 / 3),
        "expm1": (lambda v: cmath.exp(v) - 1, lambda v: v + v * v / 2 + v ** 3 / 6),
        "exp2": (lambda v: 2 ** v, lambda v: 2 ** v),
    }
    for part, dtype, tolerance in (("f32", torch.complex64, 1e-6),
                                   ("f64", torch.complex128, 1e-14)):
        t = f"tensor<{len(z)}xcomplex<{part}>>"
        text = f"""fx.graph @forward(%z: {t}) -> ({t}, {t}, {t}) {{
  %0 = fx.log1p %z : ({t}) -> {t}
  %1 = fx.expm1 %z : ({t}) -> {t}
  %2 = fx.exp2 %z : ({t}) -> {t}
  fx.output %0, %1, %2 : {t}, {t}, {t}
}}
"""
        values = z.to(dtype)
        path = compile_graph_text(text, target="cuda" if device == "cuda" else "cpu",
                                  cache_dir=tmp_path / part)
        results = Artifact(path)(values.to(device))
        for (name, (closed, near_zero)), got in zip(series.items(), results):
            want = torch.tensor([closed(v) if abs(v) > 1e-3 else near_zero(v)
                                 for v in values.tolist()], dtype=torch.complex128)
            error = (got.cpu().to(torch.complex128) - want).abs() / want.abs().clamp_min(1e-300)
            # 0 maps to 0 (log1p, expm1): no relative error to take.
            error = error[want != 0]
            assert error.max() < tolerance, (name, part, values[want != 0][error.argmax()])


def test_complex_casts_classes_variances_moves_and_addmm(device, tmp_path):
    """Complex casts (between complex dtypes, from and to real ones and
    bool), isnan and isinf, var, std and var_mean, index_put, index_add,
    index_copy, scatter, scatter_add, masked_scatter, a complex sum into
    complex128, and addmm and baddbmm: on the parts, against eager."""
    def casts_and_classes(z, x):
        # NaN and inf in either part, alone; parts zero alone and together.
        special = torch.where(x > 1, float("nan"), torch.where(x < -1, float("inf"), x))
        odd = torch.where(x > 0, torch.complex(special, x), torch.complex(x, special))
        zeros = torch.zeros_like(x)
        sparse = torch.where(x > 0.5, torch.complex(zeros, x),
                             torch.where(x < -0.5, torch.complex(x, zeros), 0 * z))
        return (z.to(torch.complex128), x.to(torch.complex64) + z, z.to(torch.bfloat16),
                (z * 10).to(torch.int32), z.to(torch.float64), sparse.to(torch.bool),
                torch.isnan(odd), torch.isinf(odd), z.sum(1, dtype=torch.complex128))

    def statistics(z):
        return (z.var(1), z.std(0), *torch.var_mean(z, 1, correction=0),
                z.var((0, 1), keepdim=True))

    def moves(z, v):
        device = z.device
        # Computed, not constants: distinct rows 2, 1, 0; columns r, r + 2.
        index = (torch.arange(3, device=device) * 3 + 2) % 4
        columns = (torch.arange(4, device=device)[:, None]
                   + torch.arange(2, device=device) * 2) % 4
        mask = torch.arange(16, device=device).view(4, 4) % 3 == 0
        # Adding forms take duplicate indices too.
        twice = index % 2
        return (z.index_put((index,), v), z.index_put((twice,), v, accumulate=True),
                z.index_add(0, twice, v * 2), z.index_copy(0, index, v),
                z.scatter_add(1, columns % 2, z[:, :2]),
                z.scatter(1, columns, z[:, :2]), z.scatter_add(1, columns, z[:, :2]),
                z.masked_scatter(mask, v.flatten()))

    def products(b, m1, m2, bb, b1, b2):
        # beta = 0 ignores self, NaNs too.
        return (torch.addmm(b, m1, m2, beta=0.5, alpha=2),
                torch.addmm(b * float("nan"), m1, m2, beta=0), torch.baddbmm(bb, b1, b2))

    c64 = torch.complex64
    check(casts_and_classes, [((4, 6), c64), ((4, 6), F32)], device=device,
          tmp_path=tmp_path / "casts")
    for dtype in (c64, torch.complex128):
        check(statistics, [((4, 6), dtype)], device=device, tmp_path=tmp_path / str(dtype))
    check(moves, [((4, 4), c64), ((3, 4), c64)], device=device, tmp_path=tmp_path / "moves")
    check(products, [((3,), c64), ((4, 5), c64), ((5, 3), c64), ((2, 4, 3), c64),
                     ((2, 4, 5), c64), ((2, 5, 3), c64)],
          device=device, tmp_path=tmp_path / "products")


def test_complex_python_scalars(device, tmp_path):
    """Python complex numbers (``z * 1j``, ``1j * x``, ``(1 + 2j) - z``,
    ``z == 1j``, fills, masks, ``torch.where`` with ``0j`` inside tril and
    sgn) become zero-dim complex tensors that promote as the numbers do."""
    def scalars(z, x):
        # A real dtype takes a complex number's real part (masked_fill's 0j).
        return (z * 1j, 1j * x, (1 + 2j) - z, z / (2 - 1j), x.double() * (1 + 1j),
                x.masked_fill(x > 0, 2 + 0j),
                torch.full((4, 6), 1 + 1j, device=z.device) + z, z.masked_fill(x > 0, 1j),
                torch.tril(z), torch.sgn(z), torch.where(x > 0, z, 2j),
                (z * 0 + 1j) == 1j, z != 2j, torch.exp(1j * x) * z)

    check(scalars, [((4, 6), torch.complex64), ((4, 6), F32)], device=device,
          tmp_path=tmp_path)


def test_complex_cumulative_sums(device, tmp_path):
    # Along a short dimension, a long one (a blocked scan) and the first.
    def sums(z, w):
        return torch.cumsum(z, -1), torch.cumsum(w, 1), torch.cumsum(z, 0)

    for dtype in (torch.complex64, torch.complex128):
        check(sums, [((4, 6), dtype), ((2, 3000), dtype)], device=device,
              tmp_path=tmp_path / str(dtype))


def test_complex_products(device, tmp_path):
    # Trees of pairwise products (the reduced dimension even, odd, empty,
    # every dimension at once) and a cumulative product scanned in
    # ⌈log2 n⌉ steps; a number's; in a wider dtype.
    def products(z, w):
        return (z.prod(-1), w.prod(0, keepdim=True), z.prod(), z[:, :0].prod(1),
                torch.cumprod(w, 1), torch.cumprod(z, 0), torch.cumprod(z[0, 0], 0),
                z.prod(1, dtype=torch.complex128), torch.cumprod(w, 0, dtype=torch.complex128))

    for dtype in (torch.complex64, torch.complex128):
        check(products, [((4, 6), dtype), ((5, 37), dtype)], device=device,
              tmp_path=tmp_path / str(dtype))


def test_complex_products_of_dynamic_sizes(device, tmp_path):
    """Products along a dynamic dimension multiply chunks of 32 numbers in
    turn, eight nodes deep, and cumulative ones scan within chunks, then
    the chunks' products: lengths of one chunk, a few, more than 32^2, a
    static dimension beside it (a tree, a scan in steps), every dimension
    at once, keepdim, a wider dtype."""
    def products(z):
        return (z.prod(0), (z * 0.999).prod(), torch.prod(z, 1, keepdim=True),
                torch.cumprod(z, 0), torch.cumprod(z, 1),
                torch.cumprod(z, 0, dtype=torch.complex128))

    def numbers(n):
        return torch.polar(1 + 0.01 * torch.randn(n, 4), 0.1 * torch.randn(n, 4)).to(device)

    compiled = kiln.compile(products, [numbers(7)], dynamic={0: [0]}, cache_dir=tmp_path)
    for n in (2, 5, 33, 1100):
        z = numbers(n)
        for got, want in zip(compiled(z), products(z)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_pixel_and_channel_shuffles_and_sliding_windows(device, tmp_path):
    # Rearrangements the importer decomposes into views, permutes and
    # gathers: pixel (un)shuffles with leading dimensions, ShuffleNet's
    # channel shuffle, Tensor.unfold's windows (negative dimension, a step
    # shorter and longer than the window) and rolls (both ways, flattened,
    # by more than the size).
    def rearrangements(x, y, s):
        return (torch.nn.functional.pixel_shuffle(x, 2), torch.nn.functional.pixel_unshuffle(y, 3),
                torch.nn.functional.channel_shuffle(x, 4) + 1, s.unfold(1, 3, 2),
                s.unfold(-1, 2, 3) * 2, torch.roll(s, (1, -2), (0, 2)), torch.roll(s, -25),
                torch.roll(x, 7, 1))

    check(rearrangements, [((2, 8, 3, 5), F32), ((2, 2, 6, 9), F32), ((3, 10, 7), F32)],
          device=device, tmp_path=tmp_path)


def test_siblings_share_a_kernel(device, tmp_path):
    # Three results that read x: one kernel over x's rows (sibling fusion),
    # each result right, with or without the fusion.
    def fn(x, y):
        return x * 2 + 1, torch.sigmoid(x) * y, (x - y).abs()

    for options in (None, {"fuse-siblings": False}):
        compiled = check(fn, [((8, 512), F32), ((8, 512), F32)], device=device,
                         options=options, tmp_path=tmp_path / str(bool(options)))
    lowered = kiln.run_opt(compiled.graph_text, ["--kiln-lower-to-loop"])
    assert lowered.count("loop.kernel rows(1)") == 1


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
    multiple of 128 (4099 rows) read nothing twice."""
    if options and "column-kernels" in options and device != "cuda":
        pytest.skip("column-kernels is an option of the GPU pipeline")

    def fn(g, x, mean, rstd, image, tall):
        normalized = (x - mean) * rstd
        return (g.sum(0), (g * normalized).sum(0), g.amax(0),
                image.sum((0, 1, 2)), tall.sum(0))

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


def test_fold(device, tmp_path):
    # col2im sums the overlapping blocks back: strides, padding, dilation,
    # batched and not.
    fold = torch.nn.functional.fold

    def fn(blocks, single):
        return (fold(blocks, (7, 8), (3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
                fold(single, (5, 5), 2, stride=1))

    generator = torch.Generator().manual_seed(14)
    blocks = torch.randn(2, 3 * 6, 4 * 6, generator=generator)
    single = torch.randn(2 * 4, 16, generator=generator)
    compiled = kiln.compile(fn, [blocks.to(device), single.to(device)], cache_dir=tmp_path)
    assert compiled.graph_text.count("fx.col2im") == 2
    for got, want in zip(compiled(blocks.to(device), single.to(device)), fn(blocks, single)):
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_grid_sampling(device, tmp_path):
    # Bilinear, nearest and bicubic sampling, zeros, border and reflection
    # padding, with and without aligned corners; the grid reaches past the
    # input's edges, far enough to reflect more than once.
    grid_sample = torch.nn.functional.grid_sample

    def fn(x, grid):
        return tuple(grid_sample(x, grid, mode=mode, padding_mode=padding,
                                 align_corners=align)
                     for mode in ("bilinear", "nearest", "bicubic")
                     for padding in ("zeros", "border", "reflection")
                     for align in (False, True))

    generator = torch.Generator().manual_seed(12)
    x = torch.randn(2, 3, 5, 7, generator=generator)
    grid = torch.rand(2, 4, 6, 2, generator=generator) * 2.4 - 1.2
    grid[1, 0] = torch.linspace(-4.3, 3.9, 12).reshape(6, 2)
    compiled = kiln.compile(fn, [x.to(device), grid.to(device)], cache_dir=tmp_path)
    for got, want in zip(compiled(x.to(device), grid.to(device)), fn(x, grid)):
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_erfinv(device, tmp_path):
    # Giles' polynomial is within a few f32 ulps of erfinv; near ±1 the
    # function's slope magnifies the input's own rounding. ±1 give ±inf and
    # what lies beyond NaN, as in PyTorch.
    def fn(x):
        return (torch.erfinv(x.clamp(-1, 1) * 0.999), torch.isinf(torch.erfinv(x.clamp(-1, 1))),
                torch.isnan(torch.erfinv(x * 2)) == (x.abs() > 0.5))

    check(fn, [((4, 256), F32)], device=device, tmp_path=tmp_path,
          tolerances={F32: (2e-5, 2e-6)})
    # In f64, two Newton steps bring it to a few f64 ulps.
    check(fn, [((4, 256), torch.float64)], device=device, tmp_path=tmp_path / "f64",
          tolerances={torch.float64: (1e-13, 1e-15)})


@pytest.mark.parametrize("from_tail", [False, True])
def test_exact_gelu_over_the_f32_range(from_tail, device, tmp_path):
    # f32's exact GELU and its gradient, with Φ from erf or from its upper
    # tail (a polynomial and one exp; the GPU's default): against the exact
    # values (f64), the error stays within 4e-7 absolute over [-14, 14] and
    # beyond, with ±inf, NaN and ±0 as PyTorch; from the tail also within
    # 2e-6 relative where GELU exceeds 1e-6 (1 + erf cancels for x < -3, in
    # PyTorch's formula as in Kiln's erf one).
    aten = torch.ops.aten

    def fn(x, g):
        return torch.nn.functional.gelu(x), aten.gelu_backward(g, x)

    grid = torch.linspace(-14.0, 14.0, 1 << 18)
    special = torch.tensor([float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 1e-30,
                            -1e-30, 40.0, -40.0, 1e30, -1e30])
    x = torch.cat([grid, special])
    g = torch.rand(x.shape, generator=torch.Generator().manual_seed(3)) + 0.5
    compiled = kiln.compile(fn, [x.to(device), g.to(device)], cache_dir=tmp_path,
                            options={"normal-cdf-from-tail": from_tail})
    got_gelu, got_grad = (t.cpu() for t in compiled(x.to(device), g.to(device)))
    x64, g64 = x.double(), g.double()
    want_gelu, want_grad = (t.float() for t in fn(x64, g64))
    # PyTorch's own f32 formula rounds to the same absolute error.
    for got, want in ((got_gelu, want_gelu), (got_grad, want_grad)):
        torch.testing.assert_close(got, want, rtol=2e-6, atol=4e-7, equal_nan=True)
    if from_tail:
        big = want_gelu.isfinite() & (want_gelu.abs() > 1e-6)
        relative = (got_gelu[big].double() - want_gelu[big].double()) / want_gelu[big].double()
        assert relative.abs().max() < 2e-6
    assert torch.equal(torch.signbit(got_gelu[-8:-6]), torch.tensor([False, True]))


@pytest.mark.parametrize("name, fn, shapes", [
    ("row sums", lambda x, b: torch.exp(x + b).sum(dim=1), [((9, 64), F32), ((64,), F32)]),
    ("sum over all", lambda x: x.sum(), [((7, 5), F32)]),
    ("keepdim max", lambda x: x.amax(dim=-1, keepdim=True), [((6, 33), F32)]),
    ("min over leading dims", lambda x: x.amin(dim=[0, 2]), [((3, 4, 5), F32)]),
    ("integer sum to int64", lambda x: x.sum(dim=0), [((10, 3), torch.int32)]),
    ("bf16 sum in f32", lambda x: x.sum(dim=1), [((8, 256), torch.bfloat16)]),
    ("uint8 max", lambda x: x.amax(dim=1), [((4, 9), torch.uint8)]),
    ("row means", lambda x: x.mean(dim=-1, keepdim=True), [((5, 48), F32)]),
    ("bf16 mean", lambda x: x.mean(dim=[0, 1]), [((4, 64, 3), torch.bfloat16)]),
    ("layer-norm-like", lambda x: (x - x.mean(dim=1, keepdim=True)) * 2.0, [((6, 40), F32)]),
    ("long rows", lambda x: x.sum(dim=-1) + x.amax(dim=-1), [((3, 5000), F32)]),
    ("int64 sum", lambda x: x.sum(dim=1), [((5, 300), torch.int64)]),
    ("f64 max", lambda x: x.amax(dim=1), [((5, 70), torch.float64)]),
    ("products", lambda x: (x.prod(dim=2), torch.prod(x, 1, keepdim=True)), [((3, 4, 5), F32)]),
    ("integer product", lambda x: x.prod(dim=1), [((3, 7), torch.int32)]),
    ("f64 product over all", lambda x: x.prod(), [((2, 5), torch.float64)]),
    ("any and all", lambda x: ((x > 0).any(dim=1), (x > -1).all(), x.any(dim=0),
                               torch.all(x > 0, dim=1, keepdim=True)), [((4, 5), F32)]),
    ("uint8 any", lambda x: x.any(dim=1), [((4, 9), torch.uint8)]),
    ("logsumexp", lambda x: (torch.logsumexp(x, dim=1), torch.logsumexp(x, dim=(0, 2),
                                                                       keepdim=True)),
     [((3, 40, 5), F32)]),
    ("bf16 logsumexp", lambda x: torch.logsumexp(x, dim=-1), [((4, 300), torch.bfloat16)]),
])
def test_reductions(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("name, fn, shapes", [
    ("softmax", lambda x: torch.softmax(x * 0.125, dim=-1), [((7, 100), F32)]),
    ("softmax over a middle dim", lambda x: torch.softmax(x, dim=1), [((3, 9, 5), F32)]),
    ("bf16 softmax", lambda x: torch.softmax(x, dim=-1), [((16, 1024), torch.bfloat16)]),
    ("log_softmax", lambda x: torch.log_softmax(x, dim=-1), [((6, 33), F32)]),
    ("layer norm", lambda x, w, b: torch.nn.functional.layer_norm(x, (64,), w, b),
     [((10, 64), F32), ((64,), F32), ((64,), F32)]),
    ("layer norm without affine", lambda x: torch.nn.functional.layer_norm(x, (4, 8)),
     [((3, 4, 8), F32)]),
    ("variance", lambda x: torch.var(x, dim=1), [((6, 50), F32)]),
    ("variance without correction, kept dims",
     lambda x: torch.var(x, dim=(0, 2), correction=0, keepdim=True), [((3, 4, 5), F32)]),
    ("var_mean over everything", lambda x: torch.var_mean(x), [((7, 9), F32)]),
    ("bf16 std_mean", lambda x: torch.std_mean(x, dim=-1), [((4, 256), torch.bfloat16)]),
    ("gelu", lambda x: torch.nn.functional.gelu(x * 3), [((9, 100), F32)]),
    ("tanh gelu", lambda x: torch.nn.functional.gelu(x * 3, approximate="tanh"),
     [((9, 100), F32)]),
    ("erf", lambda x: torch.erf(x), [((4, 50), F32)]),
    ("layer norm, gelu, residual (the anchor graph), bf16",
     lambda x, r, w, b: torch.nn.functional.gelu(
         torch.nn.functional.layer_norm(x + r, (256,), w, b)) * 0.5 + x,
     [((16, 256), torch.bfloat16), ((16, 256), torch.bfloat16), ((256,), torch.bfloat16),
      ((256,), torch.bfloat16)]),
    ("residual layer norm, bf16",
     lambda x, r, w, b: torch.nn.functional.layer_norm(x + r, (512,), w, b) * 0.5 + x,
     [((8, 512), torch.bfloat16), ((8, 512), torch.bfloat16), ((512,), torch.bfloat16),
      ((512,), torch.bfloat16)]),
    ("group norm", lambda x, w, b: torch.nn.functional.group_norm(x, 4, w, b),
     [((2, 8, 5, 5), F32), ((8,), F32), ((8,), F32)]),
    ("group norm without affine, bf16", lambda x: torch.nn.functional.group_norm(x, 2),
     [((3, 6, 7), torch.bfloat16)]),
])
def test_normalizations(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path)


@pytest.mark.parametrize("name, fn, shapes", [
    ("permute", lambda x: x.permute(2, 0, 1) * 2, [((3, 4, 5), F32)]),
    ("transpose and add", lambda x, y: x.t() + y, [((6, 7), F32), ((7, 6), F32)]),
    ("attention head split", lambda x: x.view(2, 8, 4, 16).permute(0, 2, 1, 3) + 1,
     [((2, 8, 64), F32)]),
    ("head merge", lambda x: x.permute(0, 2, 1, 3).reshape(2, 8, 64) * 3,
     [((2, 4, 8, 16), F32)]),
    ("flatten", lambda x: x.flatten(1) - 1, [((3, 4, 5), F32)]),
    ("expand", lambda x, y: x.expand(4, 5, 6) * y, [((5, 1), F32), ((4, 5, 6), F32)]),
    ("squeeze and unsqueeze", lambda x: x.squeeze(1).unsqueeze(0) + 1, [((4, 1, 6), F32)]),
    ("slices", lambda x: x[:, 1:7:2] + x[:, -3:], [((5, 9), F32)]),
    ("select", lambda x: x[:, 2] * x[-1], [((5, 5), F32)]),
    ("view of a reduction", lambda x: x.sum(-1).view(2, 3), [((6, 8), F32)]),
    ("clone", lambda x: x.clone() + 0.5, [((4, 4), F32)]),
    ("flip", lambda x: (x.flip(0), x.flip(-1, 1)), [((3, 4, 5), F32)]),
    ("repeat", lambda x: (x.repeat(2, 3, 1), x.repeat(2, 1, 1, 2)), [((3, 4, 5), F32)]),
    ("split and chunk", lambda x: (*x.split([1, 3], dim=1), *x.chunk(2, dim=-1)),
     [((3, 4, 6), F32)]),
    ("constant padding and cropping", lambda x: (
        torch.nn.functional.pad(x, (1, 2)), torch.nn.functional.pad(x, (1, 1, 2, 0), value=3.5),
        torch.nn.functional.pad(x, (-1, 2))), [((3, 4, 5), F32)]),
    ("roll", lambda x: torch.roll(x, 2, 1), [((3, 4, 5), F32)]),
    ("reflection and replication padding", lambda x, y: (
        torch.nn.functional.pad(x, (2, 3), mode="reflect"),
        torch.nn.functional.pad(y, (1, 2, 3, 1), mode="reflect"),
        torch.nn.functional.pad(y, (1, 2, 3, 1), mode="replicate")),
     [((2, 3, 7), F32), ((2, 3, 6, 7), F32)]),
    ("nearest upsampling", lambda x: (
        torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"),
        torch.nn.functional.interpolate(x, size=(7, 5), mode="nearest"),
        torch.nn.functional.interpolate(x, scale_factor=1.5, mode="nearest")),
     [((2, 3, 4, 6), F32)]),
    ("slice and select scatters", lambda x, y, z: (
        torch.slice_scatter(x, y, 1, 2, 9, 3), torch.select_scatter(x, z, 0, -1),
        torch.slice_scatter(x, y[:, :2], 1, -4, None, 2), torch.select_scatter(x, z * 2, 0, 1)),
     [((5, 10), F32), ((5, 3), F32), ((10,), F32)]),
    # torch 1.13 reads an unset `step` of slice_scatter as garbage: set it.
    # On the GPU, reads that walk a source's rows across the result's rows
    # run in tiles; these sizes leave partial tiles on every side.
    ("transposes", lambda x, y: (x.t() * 2 + y, x.t().exp() - y.t().t()),
     [((70, 37), F32), ((37, 70), F32)]),
    ("channels to last, bf16", lambda x, r: x.permute(0, 2, 3, 1) + r,
     [((2, 40, 7, 9), torch.bfloat16), ((2, 7, 9, 40), torch.bfloat16)]),
    ("a selected plane, transposed", lambda x: x[:, 2].t() + 1, [((40, 3, 48), F32)]),
    ("two transposed sources, one shifted", lambda x, y: (
        x.transpose(1, 2)[:, 1:] * y.permute(0, 2, 1)[:, :-1]),
     [((3, 33, 65), F32), ((3, 33, 65), F32)]),
    ("bf16 slice scatters, one empty", lambda x, y, e: (
        torch.slice_scatter(x, y, dim=0, start=1, end=4, step=1),
        torch.slice_scatter(x, e, dim=1, start=4, end=4, step=1)),
     [((6, 4), torch.bfloat16), ((3, 4), torch.bfloat16), ((6, 0), torch.bfloat16)]),
])
def test_views(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path)


# Matrix products sum K products in another order than eager's library (and
# GPU libraries may split K): f32 agrees to a few ulps of the sum's terms.
GEMM_TOLERANCES = {**TOLERANCES, torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10)}


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


@pytest.mark.parametrize("name, fn, shapes", [
    ("conv2d, bias, padding", lambda x, w, b: torch.nn.functional.conv2d(x, w, b, padding=1),
     [((2, 3, 9, 11), F32), ((8, 3, 3, 3), F32), ((8,), F32)]),
    ("conv2d, stride and dilation", lambda x, w: torch.nn.functional.conv2d(
        x, w, stride=2, padding=2, dilation=2), [((2, 4, 13, 10), F32), ((6, 4, 3, 3), F32)]),
    ("grouped conv2d", lambda x, w, b: torch.nn.functional.conv2d(x, w, b, padding=1, groups=2),
     [((1, 4, 8, 8), F32), ((6, 2, 3, 3), F32), ((6,), F32)]),
    ("depthwise conv2d", lambda x, w: torch.nn.functional.conv2d(x, w, padding=3, groups=8),
     [((2, 8, 10, 10), F32), ((8, 1, 7, 7), F32)]),
    ("conv1d", lambda x, w, b: torch.nn.functional.conv1d(x, w, b, stride=3, padding=1),
     [((2, 5, 20), F32), ((7, 5, 4), F32), ((7,), F32)]),
    # Filters that read more than 64 inputs are a product of patches; the
    # others sum their windows directly.
    ("conv2d past the direct depth, stride and dilation",
     lambda x, w: torch.nn.functional.conv2d(x, w, stride=2, padding=2, dilation=2),
     [((2, 8, 13, 10), F32), ((6, 8, 3, 3), F32)]),
    ("depthwise conv2d, channel multiplier, stride, bf16 + silu",
     lambda x, w, b: torch.nn.functional.silu(
         torch.nn.functional.conv2d(x, w, b, stride=2, padding=2, groups=4)),
     [((2, 4, 11, 9), torch.bfloat16), ((8, 1, 5, 5), torch.bfloat16),
      ((8,), torch.bfloat16)]),
    # Rows of 45: whole vectors inside the row, windows at its ends, and a
    # tail on CPUs with 8 or 16 lanes.
    ("depthwise conv2d, wide rows, + relu", lambda x, w, b: torch.relu(
        torch.nn.functional.conv2d(x, w, b, padding=1, groups=3)),
     [((2, 3, 5, 45), F32), ((3, 1, 3, 3), F32), ((3,), F32)]),
    ("depthwise conv3d, dilation", lambda x, w: torch.nn.functional.conv3d(
        x, w, padding=1, dilation=(1, 2, 1), groups=3),
     [((2, 3, 5, 6, 4), F32), ((3, 1, 2, 2, 3), F32)]),
    ("conv2d + relu, bf16", lambda x, w, b: torch.relu(torch.nn.functional.conv2d(x, w, b)),
     [((2, 16, 6, 6), torch.bfloat16), ((8, 16, 3, 3), torch.bfloat16),
      ((8,), torch.bfloat16)]),
])
def test_convolutions(name, fn, shapes, device, tmp_path):
    # On the GPU, cuDNN rounds a bf16 convolution's sums to bf16 before the
    # bias and the activation, as eager's does: within one rounding of the
    # f32 result only where no bias cancels the sums. Compared with eager.
    check(fn, shapes, device=device, tmp_path=tmp_path, tolerances=GEMM_TOLERANCES,
          rounded_f32=device != "cuda")


@pytest.mark.parametrize("name, fn, shapes", [
    ("conv_transpose2d, stride, padding, output padding, groups",
     lambda x, w, b: torch.nn.functional.conv_transpose2d(
         x, w, b, stride=2, padding=1, output_padding=1, groups=2),
     [((2, 4, 5, 7), F32), ((4, 3, 3, 3), F32), ((6,), F32)]),
    ("conv_transpose2d, dilation, padding past the kernel",
     lambda x, w: torch.nn.functional.conv_transpose2d(
         x, w, stride=(3, 2), padding=(2, 0), output_padding=(1, 0), dilation=(2, 1)),
     [((2, 4, 5, 7), F32), ((4, 3, 3, 2), F32)]),
    ("depthwise conv_transpose2d + relu", lambda x, w: torch.relu(
        torch.nn.functional.conv_transpose2d(x, w, stride=2, groups=4)),
     [((2, 4, 5, 5), F32), ((4, 1, 4, 4), F32)]),
    ("conv_transpose1d", lambda x, w: torch.nn.functional.conv_transpose1d(
        x, w, stride=3, padding=4), [((3, 5, 9), F32), ((5, 2, 7), F32)]),
    ("conv_transpose3d", lambda x, w, b: torch.nn.functional.conv_transpose3d(x, w, b, stride=2),
     [((1, 2, 3, 4, 3), F32), ((2, 3, 2, 2, 2), F32), ((3,), F32)]),
    # PyTorch's CPU kernels compute bf16 transposed convolutions wrongly
    # (torch 1.13 gives a 1x1 result here), so bf16 is checked on CUDA.
    ("bf16 conv_transpose2d", lambda x, w, b: torch.nn.functional.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1),
     [((2, 16, 6, 6), torch.bfloat16), ((16, 8, 3, 3), torch.bfloat16),
      ((8,), torch.bfloat16)]),
])
def test_transposed_convolutions(name, fn, shapes, device, tmp_path):
    """Transposed convolutions lower as the input gradient of the
    convolution that swaps their shapes (col2im of weightsᵀ·input)."""
    if device == "cpu" and shapes[0][1] == torch.bfloat16:
        pytest.skip("PyTorch's CPU bf16 transposed convolution is not a reference")
    check(fn, shapes, device=device, tmp_path=tmp_path, tolerances=GEMM_TOLERANCES)


def test_gradients_of_resampling_padding_and_adaptive_max_pooling(device, tmp_path):
    """Kiln's decompositions of the gradients that torch 1.13 leaves whole:
    nearest (integer and fractional factors), linear, bilinear, trilinear
    and bicubic (aligned corners or not) upsampling, reflection and replication padding, adaptive max
    pooling, each summing the output's gradient back into the positions
    read; smooth_l1_loss."""
    functional = torch.nn.functional

    def fn(x, w):
        parts = (functional.interpolate(x, scale_factor=2, mode="nearest"),
                 functional.interpolate(x, size=(7, 9), mode="nearest"),
                 # Out = 2 in and out = in: the CPU kernel's special cases.
                 functional.interpolate(x, scale_factor=2.1, mode="nearest"),
                 functional.interpolate(x, scale_factor=1.1, mode="nearest"),
                 functional.interpolate(x, scale_factor=2, mode="bilinear"),
                 functional.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True),
                 functional.interpolate(x, scale_factor=1.5, mode="bicubic"),
                 # Unchanged sizes pass their gradients through.
                 functional.interpolate(x, scale_factor=1.1, mode="bilinear"),
                 functional.interpolate(x, scale_factor=1.1, mode="bicubic"),
                 functional.interpolate(x, size=(2, 9), mode="bicubic", align_corners=True),
                 functional.interpolate(x.flatten(1, 2), size=7, mode="linear"),
                 functional.interpolate(x[None], size=(3, 7, 6), mode="trilinear")[0],
                 functional.pad(x, (2, 1, 1, 2), mode="reflect"),
                 functional.pad(x, (2, 1, 3, 2), mode="replicate"),
                 functional.adaptive_max_pool2d(x, (3, 2)))
        loss = sum((part * w[:part.shape[-1]]).sum() for part in parts)
        loss = loss + functional.smooth_l1_loss(x, x.flip(0), beta=0.5)
        return torch.autograd.grad(loss, x)[0]

    generator = torch.Generator().manual_seed(16)
    example = [torch.randn(2, 3, 4, 5, generator=generator).to(device).requires_grad_(),
               torch.randn(10, generator=generator).to(device)]
    compiled = kiln.compile(fn, example, cache_dir=tmp_path)
    x = torch.randn(2, 3, 4, 5, generator=generator).to(device).requires_grad_()
    w = torch.randn(10, generator=generator).to(device)
    torch.testing.assert_close(compiled(x, w), fn(x, w), rtol=1e-5, atol=1e-5)


def _check_on_fresh_inputs(fn, inputs, tmp_path, rtol, atol):
    """Compiles `fn` on one draw of `inputs()` and checks it against eager
    on another; returns that one."""
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    fresh = inputs()
    for got, want in zip(compiled(*fresh), fn(*fresh)):
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol)
    return fresh


def test_affine_grid_checks_its_arguments_as_pytorch_does(tmp_path):
    """While tracing, F.affine_grid runs Kiln's composition, with PyTorch's
    argument checks: the same exception types, and the warning when
    align_corners is not given."""
    theta = torch.randn(2, 2, 3)
    cases = [(theta.long(), [2, 1, 4, 4], ValueError, "floating point"),
             (theta, [2, 1, 4, 4, 4], ValueError, "Nx3x4"),
             (theta, [2, 1, 4], NotImplementedError, "4-d or 5-d"),
             (theta, [2, 1, 0, 4], ValueError, "positive"),
             (theta, [3, 1, 4, 4], RuntimeError, "2 transforms for a batch of 3")]
    for bad_theta, size, error, message in cases:
        with pytest.raises(error):
            torch.nn.functional.affine_grid(bad_theta, size, align_corners=False)
        with pytest.raises(error, match=message):
            kiln.compile(lambda t: torch.nn.functional.affine_grid(t, size, align_corners=False),
                         [bad_theta], cache_dir=tmp_path)
    with pytest.raises(RuntimeError, match="2 transforms for a batch of 3"):
        kiln.compile(lambda t: torch.affine_grid_generator(t, [3, 1, 4, 4], False), [theta],
                     cache_dir=tmp_path)
    with pytest.warns(UserWarning, match="align_corners"):
        compiled = kiln.compile(lambda t: torch.nn.functional.affine_grid(t, [2, 1, 3, 5]),
                                [theta], cache_dir=tmp_path)
    torch.testing.assert_close(
        compiled(theta), torch.nn.functional.affine_grid(theta, [2, 1, 3, 5], align_corners=False))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sampling_gradients(mode, device, tmp_path):
    """grid_sampler_2d's gradients (Kiln's decomposition) with zeros, border
    and reflection padding, aligned corners or not, on grids that reach
    past the image: the input's sums each tap's weighted gradient into its
    pixel, the grid's (bilinear) differentiates the weights and the padding
    (0 where border padding clamps)."""
    functional = torch.nn.functional

    def fn(x, grid):
        loss = sum((functional.grid_sample(x, grid, mode=mode, padding_mode=padding,
                                           align_corners=align) * weight).sum()
                   for weight, (padding, align) in enumerate(
                       [(p, a) for p in ("zeros", "border", "reflection")
                        for a in (False, True)], 1))
        return torch.autograd.grad(loss, [x, grid])

    generator = torch.Generator().manual_seed(21)

    def inputs():
        x = torch.randn(2, 3, 5, 6, generator=generator)
        grid = torch.rand(2, 4, 7, 2, generator=generator) * 2.6 - 1.3
        return [x.to(device).requires_grad_(), grid.to(device).requires_grad_()]

    _check_on_fresh_inputs(fn, inputs, tmp_path, rtol=1e-4, atol=1e-4)


def test_training_a_spatial_transformer(device, tmp_path):
    """An affine grid sampled bilinearly, differentiated with respect to the
    image and theta: autograd's gradient of Kiln's affine_grid (PyTorch's
    own gradient builds its coordinates by writes into a fresh tensor, which
    would need functionalizing, and become scatters) and grid sampling's.
    Bicubic sampling's gradient is refused."""
    functional = torch.nn.functional

    def fn(x, theta):
        grid = functional.affine_grid(theta, list(x.shape), align_corners=False)
        out = functional.grid_sample(x, grid, align_corners=False)
        return torch.autograd.grad(out.pow(2).sum(), [x, theta])

    generator = torch.Generator().manual_seed(22)

    def inputs():
        x = torch.randn(2, 3, 8, 9, generator=generator)
        theta = torch.eye(2, 3).repeat(2, 1, 1) + 0.1 * torch.randn(2, 2, 3, generator=generator)
        return [x.to(device).requires_grad_(), theta.to(device).requires_grad_()]

    x, theta = _check_on_fresh_inputs(fn, inputs, tmp_path, rtol=1e-4, atol=1e-3)
    targets = {str(n.target) for n in kiln.importer.capture(fn, inputs()).graph.nodes}
    assert not targets & {"aten.copy_.default", "aten.select_scatter.default",
                          "aten.slice_scatter.default"}, targets

    def bicubic(x, grid):
        out = functional.grid_sample(x, grid, mode="bicubic", align_corners=False)
        return torch.autograd.grad(out.sum(), x)

    with pytest.raises(NotImplementedError, match="gradient of bicubic grid sampling"):
        kiln.compile(bicubic, [x, torch.rand(2, 3, 3, 2, device=device)], cache_dir=tmp_path)


def test_embedding_bag_gradients(device, tmp_path):
    """The gradients of embedding_bag (Kiln's decompositions): the weight's
    for sums, means with a padding index and maxima, with an empty bag; the
    per-sample weights'; scaling by frequency is refused."""
    functional = torch.nn.functional
    offsets = torch.tensor([0, 2, 2, 5], device=device)

    def fn(weight, indices, columns):
        bags = (functional.embedding_bag(indices, weight, offsets, mode="sum"),
                functional.embedding_bag(indices, weight, offsets, mode="mean", padding_idx=3),
                functional.embedding_bag(indices, weight, offsets, mode="max"))
        loss = sum((bag * columns).sum() for bag in bags)
        return torch.autograd.grad(loss, weight)[0]

    generator = torch.Generator().manual_seed(17)

    def inputs():
        return [torch.randn(10, 4, generator=generator).to(device).requires_grad_(),
                torch.randint(0, 10, (8,), generator=generator).to(device),
                torch.randn(4, generator=generator).to(device)]

    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    torch.testing.assert_close(compiled(*args), fn(*args), rtol=1e-5, atol=1e-5)

    def weighted(weight, indices, columns, sample_weights):
        bags = functional.embedding_bag(indices, weight, offsets, mode="sum",
                                        per_sample_weights=sample_weights, padding_idx=3)
        return torch.autograd.grad((bags * columns).sum(), [weight, sample_weights])

    def weighted_inputs():
        return [*inputs(), torch.randn(8, generator=generator).to(device).requires_grad_()]

    compiled = kiln.compile(weighted, weighted_inputs(), cache_dir=tmp_path)
    args = weighted_inputs()
    for got, want in zip(compiled(*args), weighted(*args)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)

    def scaled(weight, indices):
        bags = functional.embedding_bag(indices, weight, offsets, scale_grad_by_freq=True)
        return torch.autograd.grad(bags.sum(), weight)[0]

    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        kiln.compile(scaled, inputs()[:2], cache_dir=tmp_path)


def test_embedding_bag_maxima_keep_the_first_of_ties(device, tmp_path):
    """Among equal maxima in a bag PyTorch's kernel keeps the first entry's
    row (and 0 for an empty bag), and a NaN only when it comes first: the
    rows returned, and where the gradient goes; include_last_offset ignores
    entries after the last offset."""
    aten = torch.ops.aten
    weight = torch.zeros(6, 4, device=device)
    weight[0] = weight[1] = 1
    weight[3] = 2
    indices = torch.tensor([1, 0, 5, 3, 2, 1, 4], device=device)
    offsets = torch.tensor([0, 3, 3, 6], device=device)

    def fn(weight, indices):
        maxima = aten._embedding_bag(weight, indices, offsets[:3], False, 2)
        last = torch.nn.functional.embedding_bag(indices, weight, offsets, mode="sum",
                                                 include_last_offset=True)
        # (PyTorch's own gradient of `last` reaches the ignored entries.)
        loss = (maxima[0] * torch.arange(1., 5., device=weight.device)).sum()
        return (*maxima, last, torch.autograd.grad(loss, weight)[0])

    example = [weight.clone().requires_grad_(), indices]
    compiled = kiln.compile(fn, example, cache_dir=tmp_path)
    for got, want in zip(compiled(*example), fn(*example)):
        torch.testing.assert_close(got, want)
    # A NaN first in its bag stays; later NaNs never win.
    weight[0, :2] = float("nan")
    example = [weight.clone().requires_grad_(), torch.tensor([0, 1, 5, 3, 0, 2, 4],
                                                             device=device)]
    for got, want in zip(compiled(*example), fn(*example)):
        torch.testing.assert_close(got, want, equal_nan=True)


def test_writes_into_views_under_autograd(device, tmp_path):
    """In-place writes into views of intermediates (a row set to zero, a
    column scaled, an in-place relu and masked_fill) in a function that
    differentiates through them: functionalizing the function would hide
    autograd's inputs, so the first trace's graph, whose gradients are ops
    already, is functionalized instead, its nodes keeping their places in
    the user's code."""
    import kiln.importer

    def fn(x, w):
        y = x * w
        y[0] = 0
        y[:, 1] *= 3
        y.relu_()
        z = y @ w.t()
        z.masked_fill_(z > 2, 2.0)
        return torch.autograd.grad((z * z).sum() + y.sum(), [x, w])

    generator = torch.Generator().manual_seed(30)

    def inputs():
        return [torch.randn(4, 5, generator=generator).to(device).requires_grad_(),
                torch.randn(3, 5, generator=generator)[:1].expand(4, 5).contiguous()
                .to(device).requires_grad_()]

    _check_on_fresh_inputs(fn, inputs, tmp_path, rtol=1e-5, atol=1e-5)
    gm = kiln.importer.capture(fn, inputs())
    located = [n for n in gm.graph.nodes if n.op == "call_function"
               and __file__ in (n.meta.get("stack_trace") or "")]
    assert len(located) > len(list(gm.graph.nodes)) // 2

    # A module's gradient with respect to its own weight (no input requires
    # grad).
    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(5, 4)

        def forward(self, x):
            y = self.linear(x)
            y[0] = 0
            y.relu_()
            return torch.autograd.grad(y.pow(2).sum(), [self.linear.weight])[0]

    step = Step().to(device)
    x = torch.randn(3, 5, generator=generator).to(device)
    compiled = kiln.compile(step, [x], cache_dir=tmp_path / "module")
    x = torch.randn(3, 5, generator=generator).to(device)
    torch.testing.assert_close(compiled(x), step(x), rtol=1e-5, atol=1e-5)


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


# Convolution gradients with every filter through the forward's im2col
# matrices (0), and with filters that read at most 64 inputs as direct sums.
DIRECT_DEPTHS = [pytest.param(0, id="patches"), pytest.param(64, id="direct")]


@pytest.mark.parametrize("direct_depth", DIRECT_DEPTHS)
def test_convolution_gradients(device, direct_depth, tmp_path):
    """convolution_backward lowers through the forward's im2col matrices,
    or for shallow filters (the 2-d and 1-d ones here, not the 3-d and bf16
    ones) as direct sums: grouped, strided, dilated and padded 2-d, 1-d
    without a bias (a masked result), 3-d, and bf16."""
    aten = torch.ops.aten

    def fn(g2, x2, w2, g1, x1, w1, g3, x3, w3, gh, xh, wh):
        two = aten.convolution_backward(g2, x2, w2, [4], [2, 1], [1, 2], [2, 1], False,
                                        [0, 0], 2, [True, True, True])
        one = aten.convolution_backward(g1, x1, w1, None, [1], [0], [1], False, [0], 1,
                                        [True, True, False])
        three = aten.convolution_backward(g3, x3, w3, [2], [1, 1, 1], [1, 1, 1], [1, 1, 1],
                                          False, [0, 0, 0], 1, [False, True, True])
        half = aten.convolution_backward(gh, xh, wh, [8], [1, 1], [1, 1], [1, 1], False,
                                         [0, 0], 1, [True, True, True])
        return (*two, one[0], one[1], three[1], three[2], *half)

    generator = torch.Generator().manual_seed(14)
    shapes = [(2, 4, 4, 10), (2, 4, 9, 8), (4, 2, 3, 3), (3, 6, 8), (3, 5, 10), (6, 5, 3),
              (1, 2, 4, 5, 3), (1, 3, 4, 5, 3), (2, 3, 3, 3, 3), (2, 8, 6, 6), (2, 16, 6, 6),
              (8, 16, 3, 3)]
    inputs = [torch.randn(*shape, generator=generator) for shape in shapes]
    inputs[9:] = [t.bfloat16() for t in inputs[9:]]
    check_gradients(fn, inputs, generator, device, tmp_path,
                    {"direct-convolution-depth": direct_depth})


def test_images_stored_channels_last(device, tmp_path, monkeypatch):
    """With the pipeline option channels-last every 4-d image node computes
    and stores [N, H, W, C] (kiln-loop-channels-last, as the GPU's library
    convolutions have it): a ResNet-like block with batch norm, a residual,
    max pooling, a squeeze-and-excitation mean and a result of another rank
    computes what eager does; its inputs and 4-d results keep PyTorch's
    layout. (Convolutions as products: their results are nodes that move.)"""
    monkeypatch.setenv("KILN_DEBUG_DIR", str(tmp_path / "debug"))
    F = torch.nn.functional

    def fn(x, w1, w2, scale, shift):
        h = torch.relu(F.conv2d(x, w1, padding=1) * scale + shift)
        h = F.max_pool2d(h + F.conv2d(h, w2, padding=1, groups=2), 2)
        gate = torch.sigmoid(h.mean((2, 3), keepdim=True))
        return h * gate, (h * gate).flatten(1).softmax(-1)

    generator = torch.Generator().manual_seed(16)
    shapes = [(2, 3, 8, 6), (4, 3, 3, 3), (4, 2, 3, 3), (1, 4, 1, 1), (1, 4, 1, 1)]
    example = [torch.randn(*shape, generator=generator) for shape in shapes]
    compiled = kiln.compile(fn, [t.to(device) for t in example], cache_dir=tmp_path,
                            options={"channels-last": True, "direct-convolution-depth": 0})
    # Before fusion inlines them, the images are [N, H, W, C] nodes.
    (graph,) = (tmp_path / "debug").glob("*/graph.mlir")
    unfused = kiln.run_opt(graph.read_text(), [
        "--kiln-lower-to-loop=channels-last=true inline=false fuse-rows=false "
        "fuse-siblings=false direct-convolution-depth=0"])
    assert "loop.pointwise : tensor<2x8x6x4xf32>" in unfused
    args = [torch.randn(*shape, generator=generator) for shape in shapes]
    got = compiled(*[t.to(device) for t in args])
    for index, (result, expected) in enumerate(zip(got, fn(*args))):
        assert result.is_contiguous()
        torch.testing.assert_close(result.cpu(), expected, rtol=1e-4, atol=1e-4,
                                   msg=lambda m: f"result {index}: {m}")


def check_gradients(fn, example, generator, device, tmp_path, options=None):
    """Compiles `fn` for inputs like `example` and checks it on fresh ones
    against eager, bf16 results within a rounding or two."""
    compiled = kiln.compile(fn, [t.to(device) for t in example], cache_dir=tmp_path,
                            options=options)
    args = [torch.randn(t.shape, generator=generator).to(t.dtype) for t in example]
    got = compiled(*[t.to(device) for t in args])
    for index, (result, expected) in enumerate(zip(got, fn(*args))):
        tolerance = 2e-2 if expected.dtype == torch.bfloat16 else 1e-4
        torch.testing.assert_close(result.cpu(), expected, rtol=tolerance, atol=tolerance,
                                   msg=lambda m: f"result {index}: {m}")


@pytest.mark.parametrize("direct_depth", DIRECT_DEPTHS)
def test_transposed_convolution_gradients(device, direct_depth, tmp_path):
    """A transposed convolution's gradients: the input's is a convolution of
    the output's gradient, the weight's a product of the input and the
    output gradient's patches (both direct sums for these shallow filters,
    unless direct_depth is 0). Strided, padded, dilated with an output
    padding; grouped without a bias (a masked result); 1-d."""
    aten = torch.ops.aten

    def fn(g2, x2, w2, gg, xg, wg, g1, x1, w1):
        two = aten.convolution_backward(g2, x2, w2, [3], [2, 1], [1, 0], [1, 2], True,
                                        [1, 0], 1, [True, True, True])
        grouped = aten.convolution_backward(gg, xg, wg, None, [2, 2], [1, 1], [1, 1], True,
                                            [0, 1], 2, [True, True, False])
        one = aten.convolution_backward(g1, x1, w1, [2], [3], [4], [1], True, [0], 1,
                                        [False, True, True])
        return (*two, grouped[0], grouped[1], one[1], one[2])

    # The output gradients have the transposed convolutions' result shapes.
    shapes = [(2, 3, 10, 8), (2, 4, 5, 6), (4, 3, 3, 2), (2, 6, 9, 12), (2, 4, 5, 6),
              (4, 3, 3, 3), (3, 2, 23), (3, 5, 9), (5, 2, 7)]
    generator = torch.Generator().manual_seed(15)
    example = [torch.randn(*shape, generator=generator).to(device) for shape in shapes]
    compiled = kiln.compile(fn, example, cache_dir=tmp_path,
                            options={"direct-convolution-depth": direct_depth})
    args = [torch.randn(*shape, generator=generator).to(device) for shape in shapes]
    for index, (result, expected) in enumerate(zip(compiled(*args), fn(*args))):
        torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-4,
                                   msg=lambda m: f"result {index}: {m}")


def test_depthwise_convolution_gradients(device, tmp_path):
    """Depthwise filters' gradients are direct sums: strided and padded with a
    bias, two filters per channel with dilation, bf16 (summed in f32), 1-d,
    and a transposed depthwise convolution with an output padding."""
    aten = torch.ops.aten

    def fn(gs, xs, ws, gm, xm, wm, gh, xh, wh, g1, x1, w1, gt, xt, wt):
        strided = aten.convolution_backward(gs, xs, ws, [6], [2, 2], [1, 1], [1, 1], False,
                                            [0, 0], 6, [True, True, True])
        multiplied = aten.convolution_backward(gm, xm, wm, None, [1, 1], [2, 2], [2, 2],
                                               False, [0, 0], 3, [True, True, False])
        half = aten.convolution_backward(gh, xh, wh, [8], [1, 1], [1, 1], [1, 1], False,
                                         [0, 0], 8, [True, True, True])
        one = aten.convolution_backward(g1, x1, w1, None, [3], [2], [1], False, [0], 4,
                                        [True, True, False])
        transposed = aten.convolution_backward(gt, xt, wt, None, [2, 2], [1, 1], [1, 1], True,
                                               [1, 1], 5, [True, True, False])
        return (*strided, multiplied[0], multiplied[1], *half, one[0], one[1],
                transposed[0], transposed[1])

    # The output gradients have the convolutions' result shapes.
    shapes = [(2, 6, 5, 4), (2, 6, 9, 7), (6, 1, 3, 3),
              (2, 6, 7, 9), (2, 3, 7, 9), (6, 1, 3, 3),
              (2, 8, 6, 6), (2, 8, 6, 6), (8, 1, 3, 3),
              (3, 4, 6), (3, 4, 17), (4, 1, 5),
              (2, 5, 10, 8), (2, 5, 5, 4), (5, 1, 3, 3)]
    generator = torch.Generator().manual_seed(16)
    half = range(6, 9)
    example = [torch.randn(*shape, generator=generator) for shape in shapes]
    example = [t.bfloat16() if i in half else t for i, t in enumerate(example)]
    check_gradients(fn, example, generator, device, tmp_path)


@pytest.mark.parametrize("name, fn, shapes", [
    ("max pool", lambda x: torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
     [((2, 3, 9, 10), F32)]),
    ("max pool, ceil mode and dilation", lambda x: torch.nn.functional.max_pool2d(
        x, 2, stride=2, dilation=2, ceil_mode=True), [((1, 2, 9, 9), F32)]),
    ("average pool without the padding", lambda x: torch.nn.functional.avg_pool2d(
        x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True), [((1, 2, 7, 7), F32)]),
    ("average pool with the padding", lambda x: torch.nn.functional.avg_pool2d(
        x, 3, stride=1, padding=1), [((2, 3, 8, 8), F32)]),
    ("average pool, divisor override", lambda x: torch.nn.functional.avg_pool2d(
        x, 2, divisor_override=3), [((1, 2, 7, 7), F32)]),
    ("adaptive average pool", lambda x: torch.nn.functional.adaptive_avg_pool2d(x, (3, 5)),
     [((2, 3, 7, 7), F32)]),
    ("global average pool, bf16", lambda x: torch.nn.functional.adaptive_avg_pool2d(x, 1),
     [((2, 16, 7, 7), torch.bfloat16)]),
    ("3-d average pools", lambda x: (
        torch.nn.functional.avg_pool3d(x, 3, stride=2, padding=1, count_include_pad=False),
        torch.nn.functional.avg_pool3d(x, (2, 3, 2), ceil_mode=True),
        torch.nn.functional.adaptive_avg_pool3d(x, (2, 3, 4))), [((2, 3, 5, 7, 6), F32)]),
    ("3-d max pool with indices", lambda x: torch.nn.functional.max_pool3d(
        x, 3, stride=2, padding=1, return_indices=True), [((2, 3, 5, 7, 6), F32)]),
])
def test_pooling(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path)


def test_f64_matrix_products_on_the_cpu(tmp_path):
    check(lambda a, b: a @ b, [((9, 13), torch.float64), ((13, 21), torch.float64)],
          tmp_path=tmp_path, tolerances=GEMM_TOLERANCES)


@pytest.mark.parametrize("vector_bytes", [0, 16, 64])
def test_matrix_product_tiles_at_every_vector_width(vector_bytes, tmp_path):
    # 13 x 37 leaves partial row tiles and column panels at every width.
    check(lambda a, b: a @ b.t(), [((13, 24), F32), ((37, 24), F32)],
          options={"vector-bytes": vector_bytes}, tmp_path=tmp_path,
          tolerances=GEMM_TOLERANCES)


def test_indexing(device, tmp_path):
    def fn(weight, tokens, x, rows, positions):
        embedded = torch.nn.functional.embedding(tokens, weight) * 2
        picked = torch.index_select(x, 1, rows)
        gathered = torch.gather(x, 1, positions)
        return embedded, picked + 1, gathered
    generator = torch.Generator().manual_seed(1)
    weight, x = torch.randn(50, 16, generator=generator), torch.randn(4, 10, generator=generator)
    tokens = torch.randint(0, 50, (3, 7), generator=generator)
    rows = torch.randint(0, 10, (6,), generator=generator)
    positions = torch.randint(0, 10, (4, 5), generator=generator)
    args = [t.to(device) for t in (weight, tokens, x, rows, positions)]
    compiled = kiln.compile(fn, args, cache_dir=tmp_path)
    fresh_tokens = torch.randint(0, 50, (3, 7), generator=generator).to(device)
    args[1] = fresh_tokens
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_advanced_indexing(device, tmp_path):
    """x[i], x[:, i, j] (adjacent), x[i, :, j] (separated), broadcast index
    tensors and negative indices, on fresh indices at the second call."""
    def fn(x, i, j):
        return x[i], x[:, i, j], x[i, :, j], x[j.unsqueeze(1), :, j] * 2
    generator = torch.Generator().manual_seed(2)

    def inputs():
        x = torch.randn(4, 5, 6, generator=generator)
        # Negative indices count from the end of the indexed dimension.
        i = torch.randint(-4, 4, (2, 3), generator=generator)
        j = torch.randint(-4, 4, (3,), generator=generator)
        return [t.to(device) for t in (x, i, j)]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_modulus_and_rounded_division(device, tmp_path):
    """fmod, remainder and floor/trunc division, of floats and of integers,
    with both signs; PyTorch's exact results."""
    def fn(a, b, i, j):
        return (torch.fmod(a, b), torch.remainder(a, b), torch.remainder(a, -2.5),
                torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                a // 0.75, torch.fmod(i, j), torch.remainder(i, j), i % 7, i // j,
                torch.div(i, j, rounding_mode="trunc"), i // -3)
    generator = torch.Generator().manual_seed(3)

    def inputs():
        a = torch.randn(64, generator=generator) * 10
        b = torch.randn(64, generator=generator) * 3
        i = torch.randint(-100, 100, (64,), generator=generator)
        j = torch.randint(1, 9, (64,), generator=generator) * (
            torch.randint(0, 2, (64,), generator=generator) * 2 - 1)
        return [t.to(device) for t in (a, b, i, j)]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_gradients_of_activations(device, tmp_path):
    """The elementwise gradient ops of backward graphs, against PyTorch's
    own kernels: relu (threshold), hardtanh, leaky_relu, sigmoid, tanh,
    silu, both GELUs and dropout, in f32 and bf16."""
    aten = torch.ops.aten
    # torch 1.13 traces silu_backward as its decomposition.
    silu_backward = aten.silu_backward if hasattr(torch, "compile") else \
        (lambda g, x: g * torch.sigmoid(x) * (1 + x * (1 - torch.sigmoid(x))))

    def fn(g, x, mask, gh, xh):
        y = torch.sigmoid(x)
        t = torch.tanh(x)
        return (aten.threshold_backward(g, x, 0.0), aten.threshold_backward(g, x, 0.5),
                aten.hardtanh_backward(g, x, -1.0, 1.0),
                aten.leaky_relu_backward(g, x, 0.01, False),
                aten.sigmoid_backward(g, y), aten.tanh_backward(g, t),
                silu_backward(g, x), aten.gelu_backward(g, x),
                aten.gelu_backward(g, x, approximate="tanh"),
                aten.native_dropout_backward(g, mask, 1.25),
                aten.gelu_backward(gh, xh), silu_backward(gh, xh),
                aten.threshold_backward(gh, xh, 0.0))
    generator = torch.Generator().manual_seed(6)

    def inputs():
        g, x = (torch.randn(33, 40, generator=generator) * 3 for _ in range(2))
        x[0, :4] = torch.tensor([0.0, 1.0, -1.0, 0.5])  # The boundaries.
        mask = torch.rand(33, 40, generator=generator) > 0.2
        gh, xh = (torch.randn(8, 64, generator=generator).bfloat16() for _ in range(2))
        return [t.to(device) for t in (g, x, mask, gh, xh)]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        tolerance = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance)


def test_gradients_of_softmax_and_normalizations(device, tmp_path):
    """The backward ops of softmax, log_softmax, layer, batch and group norm
    compile as their decompositions (elementwise arithmetic and row
    reductions) and match PyTorch's kernels."""
    aten = torch.ops.aten

    def fn(g, x, w, rm, rv, g4, x4):
        y, ls = torch.softmax(x, -1), torch.log_softmax(x, -1)
        _, mean, rstd = aten.native_layer_norm(x, [5], w[:5], w[5:10], 1e-5)
        # Without running statistics: updating them is a mutation of inputs.
        _, bmean, invstd = aten.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)
        _, gmean, grstd = aten.native_group_norm(x4, w[:8], None, 2, 8, 12, 2, 1e-5)
        return (aten._softmax_backward_data(g, y, -1, x.dtype),
                aten._log_softmax_backward_data(g, ls, -1, x.dtype),
                *aten.native_layer_norm_backward(g, x, [5], mean, rstd, w[:5], w[5:10],
                                                 [True, True, True]),
                *aten.native_batch_norm_backward(g, x, w, rm, rv, bmean, invstd, True, 1e-5,
                                                 [True, True, True]),
                *aten.native_group_norm_backward(g4, x4, gmean, grstd, w[:8], 2, 8, 12, 2,
                                                 [True, True, False])[:2])
    generator = torch.Generator().manual_seed(7)

    def inputs():
        shapes = [(4, 16, 5), (4, 16, 5), (16,), (16,), (16,), (2, 8, 3, 4), (2, 8, 3, 4)]
        values = [torch.randn(s, generator=generator) for s in shapes]
        values[4] = values[4].abs() + 0.5  # A variance.
        return [t.to(device) for t in values]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_max_pool_indices(device, tmp_path):
    """max_pool2d's indices (h * W + w in the input plane): the first of
    equal maxima, the last NaN of a window with NaN (as PyTorch's pooling),
    padding, strides and dilation, f32 and bf16."""
    def fn(x, h):
        pool = torch.nn.functional.max_pool2d
        return (*pool(x, 3, 2, 1, return_indices=True),
                *pool(x, 2, 1, 0, 2, return_indices=True),
                *pool(h, 2, return_indices=True))
    generator = torch.Generator().manual_seed(8)

    def inputs():
        x = torch.randn(2, 3, 9, 10, generator=generator)
        x[0, 0, 2:4, 2:4] = 5.0  # Ties.
        x[1, 2, 4, 5] = x[1, 2, 5, 6] = float("nan")
        x = x.round(decimals=1)  # More ties.
        h = torch.randn(1, 4, 8, 8, generator=generator).bfloat16()
        return [t.to(device) for t in (x, h)]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(got.nan_to_num(), want.nan_to_num()), (got, want)


def test_max_pool_backward(device, tmp_path):
    """max_pool2d's gradient, gathered: every input position sums the
    gradients of the outputs whose index names it (overlapping windows,
    padding, strides, dilation, ceil mode), against PyTorch's scatter."""
    aten = torch.ops.aten
    configs = [((3, 3), (2, 2), (1, 1), (1, 1), False), ((2, 2), (1, 1), (0, 0), (2, 2), False),
               ((3, 3), (2, 2), (0, 0), (1, 1), True)]

    def fn(x, *grads):
        results = []
        for (kernel, stride, padding, dilation, ceil), g in zip(configs, grads):
            _, indices = aten.max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil)
            results.append(aten.max_pool2d_with_indices_backward(
                g, x, kernel, stride, padding, dilation, ceil, indices))
        return results
    generator = torch.Generator().manual_seed(9)

    def inputs():
        x = torch.randn(2, 3, 9, 10, generator=generator).round(decimals=1)
        shapes = [aten.max_pool2d_with_indices(x, *c)[0].shape for c in configs]
        grads = [torch.randn(s, generator=generator) for s in shapes]
        return [x.to(device), *[g.to(device) for g in grads]]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_avg_pool_backward(device, tmp_path):
    """avg_pool2d's gradient, gathered: each input position sums the
    gradients of the outputs whose windows cover it over their divisors
    (padding counted or not, ceil mode, divisor_override)."""
    aten = torch.ops.aten
    configs = [((3, 3), (2, 2), (1, 1), False, True, None),
               ((3, 2), (1, 2), (1, 0), True, False, None),
               ((2, 2), (2, 2), (0, 0), True, True, 3)]

    def fn(x, *grads):
        return [aten.avg_pool2d_backward(g, x, *config) for config, g in zip(configs, grads)]
    generator = torch.Generator().manual_seed(11)

    def inputs():
        x = torch.randn(2, 3, 9, 10, generator=generator)
        shapes = [aten.avg_pool2d(x, *c).shape for c in configs]
        return [x.to(device), *[torch.randn(s, generator=generator).to(device) for s in shapes]]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_adaptive_avg_pool_backward(device, tmp_path):
    """adaptive_avg_pool2d's gradient, gathered from the outputs whose
    (possibly overlapping) windows hold each input, in f32 and bf16."""
    aten = torch.ops.aten

    def fn(x, g1, g2, g3, h, gh):
        return (aten._adaptive_avg_pool2d_backward(g1, x),
                aten._adaptive_avg_pool2d_backward(g2, x),
                aten._adaptive_avg_pool2d_backward(g3, x),
                aten._adaptive_avg_pool2d_backward(gh, h))
    generator = torch.Generator().manual_seed(10)

    def inputs():
        shapes = [(2, 3, 7, 9), (2, 3, 1, 1), (2, 3, 3, 4), (2, 3, 5, 9), (1, 4, 6, 6),
                  (1, 4, 4, 5)]
        values = [torch.randn(s, generator=generator) for s in shapes]
        values[4], values[5] = values[4].bfloat16(), values[5].bfloat16()
        return [t.to(device) for t in values]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        tolerance = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(got, want, rtol=tolerance, atol=tolerance)


def test_argmax_argmin_and_extrema_with_indices(device, tmp_path):
    """The first extremum's index along a dimension or over all elements,
    and max/min along a dimension with those indices: kept dimensions, ties,
    NaN (the first NaN wins, as in PyTorch), integers and bf16."""
    def fn(x, i, h):
        return (torch.argmax(x, dim=1), torch.argmin(x, dim=0, keepdim=True),
                torch.argmax(x), torch.argmin(x, dim=-1), torch.argmax(i, 1),
                torch.argmin(i), torch.argmax(h, 2), (x.argmax(1) * 2 + 1).float(),
                *torch.max(x, 1), *torch.min(h, -1, keepdim=True), *torch.max(i, 0),
                torch.max(x, 0).values * 2)
    generator = torch.Generator().manual_seed(5)

    def inputs():
        x = torch.randn(37, 45, generator=generator)
        x[3, 7] = x[3, 20] = 9.0  # A tie: the first index wins.
        x[5, 11] = x[5, 2] = float("nan")
        x[10, 4] = float("nan")
        i = torch.randint(-5, 5, (6, 40), generator=generator)  # Many ties.
        h = torch.randn(4, 3, 64, generator=generator).bfloat16()
        return [t.to(device) for t in (x, i, h)]
    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    args = inputs()
    for got, want in zip(compiled(*args), fn(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(got.nan_to_num(), want.nan_to_num()), (got, want)
        assert torch.equal(got.isnan(), want.isnan())


@pytest.mark.parametrize("name, fn, shapes", [
    ("cat", lambda x, y: torch.cat([x, y * 2], dim=1) + 1, [((3, 4), F32), ((3, 5), F32)]),
    ("cat of three, promoted", lambda x, y, z: torch.cat([x, y, z]),
     [((2, 6), F32), ((1, 6), torch.float16), ((3, 6), F32)]),
    ("rotary-style halves", lambda x: torch.cat([-x[..., 8:], x[..., :8]], dim=-1) * x,
     [((2, 3, 16), F32)]),
])
def test_concatenation(name, fn, shapes, device, tmp_path):
    check(fn, shapes, device=device, tmp_path=tmp_path)


def test_nan_propagates_through_relu(tmp_path):
    compiled = kiln.compile(lambda x: torch.relu(x), [torch.randn(4)], cache_dir=tmp_path)
    x = torch.tensor([float("nan"), -1.0, 2.0, float("-inf")])
    (got,) = compiled.artifact(x)
    torch.testing.assert_close(got, torch.relu(x), equal_nan=True)


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


def test_logsumexp_of_infinite_rows(tmp_path):
    f = lambda x: torch.logsumexp(x, dim=1)  # noqa: E731
    x = torch.randn(3, 6)
    x[0] = -float("inf")
    x[1, 2] = float("inf")
    compiled = kiln.compile(f, [x], cache_dir=tmp_path)
    torch.testing.assert_close(compiled(x), f(x))


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


def test_max_and_min_of_every_element(device, tmp_path):
    """torch.max(x) and torch.min(x) without a dimension are amax and amin
    over every dimension (NaN wins, as in PyTorch)."""
    def fn(x, bytes_, flags):
        return torch.max(x), torch.min(x), torch.max(bytes_), torch.min(flags)
    x = torch.randn(3, 4)
    x[1, 2] = float("nan")
    args = [t.to(device) for t in [x, torch.tensor([3, 250, 7], dtype=torch.uint8),
                                   torch.tensor([[True, False], [True, True]])]]
    compiled = kiln.compile(fn, args, cache_dir=tmp_path)
    for got, want in zip(compiled(*args), fn(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)


def test_reductions_of_zero_dim_tensors(device, tmp_path):
    """Every reduction of a zero-dim tensor: the element itself, in the
    result's dtype (NaN kept; var with one degree of freedom removed is
    NaN), index 0, the element's truth."""
    def fn(x, n):
        return (x.sum(), x.mean(0), x.amax(-1, keepdim=True), x.prod(), x.argmax(),
                torch.max(x, 0), x.any(), x.var(), torch.var_mean(x, 0, correction=0),
                torch.logsumexp(x, 0), n.sum(), (n > 0).all())
    for value in (1.5, float("nan")):
        args = [torch.tensor(value, device=device), torch.tensor(3, device=device)]
        compiled = kiln.compile(fn, args, cache_dir=tmp_path)
        got = torch.utils._pytree.tree_flatten(compiled(*args))[0]
        want = torch.utils._pytree.tree_flatten(fn(*args))[0]
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)


def test_batches_of_zero(device, tmp_path):
    """Graphs over a batch of 0, whose temporaries take zero bytes: a linear
    layer summed over the batch (PyTorch's identity, 0), a softmax and a
    log-softmax of no rows, a batched product of no rows."""
    def fn(x, w, b, s, q, k):
        return (torch.relu(x @ w + b).sum(0), torch.log_softmax(s * 2, -1),
                torch.softmax(s + 1, -1), (q @ k).softmax(-1))
    generator = torch.Generator().manual_seed(17)
    shapes = [(0, 16), (16, 8), (8,), (0, 10), (2, 0, 4), (2, 4, 5)]
    args = [torch.randn(*s, generator=generator).to(device) for s in shapes]
    compiled = kiln.compile(fn, args, cache_dir=tmp_path)
    expected = fn(*args)
    out = [poisoned_like(e) for e in expected]
    results = compiled.artifact(*args, out=out)
    if device == "cuda":
        torch.cuda.synchronize()
    for got, want in zip(results, expected):
        assert got.shape == want.shape
        torch.testing.assert_close(got, want)


def test_conjugate_and_negative_views_are_read_as_their_values(device, tmp_path):
    """x.conj() and its .imag are views whose data PyTorch leaves as it was,
    with a bit saying to conjugate or negate on reading; the compiled
    function sees their values, also after calls with plain tensors of the
    same shapes."""
    def fn(z, r):
        return z * 2 + 1, r * 3 - 1
    generator = torch.Generator().manual_seed(18)

    def fresh_complex():
        return torch.randn(4, 3, dtype=torch.complex64, generator=generator).to(device)

    args = [fresh_complex(), torch.randn(4, 3, generator=generator).to(device)]
    compiled = kiln.compile(fn, args, cache_dir=tmp_path)
    for z, r in [args, (fresh_complex().conj(), fresh_complex().conj().imag), args]:
        assert not (z.is_conj() or r.is_neg()) or (z.is_conj() and r.is_neg())
        for got, want in zip(compiled(z, r), fn(z, r)):
            torch.testing.assert_close(got, want)


def test_an_artifact_reads_and_writes_tensors_in_another_dimension_order(device,
                                                                          tmp_path):
    """Artifact.permuted: a graph over NHWC buffers called with NCHW
    tensors in channels-last memory reads and writes them in place; NCHW
    tensors in other memory are copied first; result buffers given by the
    caller are in the caller's order."""
    def fn(x):
        return torch.relu(x) * 2, x.sum(-1)
    generator = torch.Generator().manual_seed(19)
    nhwc = torch.randn(2, 4, 5, 3, generator=generator).to(device)
    artifact = kiln.compile(fn, [nhwc], cache_dir=tmp_path).artifact.permuted(
        [(0, 2, 3, 1)], [(0, 2, 3, 1), None])

    def want(x):
        y, z = fn(x.permute(0, 2, 3, 1))
        return y.permute(0, 3, 1, 2), z

    for _ in range(2):  # The second call takes the kept plan.
        x = torch.randn(2, 3, 4, 5, generator=generator).to(device).contiguous(
            memory_format=torch.channels_last)
        y, z = artifact(x)
        assert y.shape == (2, 3, 4, 5) and y.is_contiguous(memory_format=torch.channels_last)
        for got, expected in zip((y, z), want(x)):
            torch.testing.assert_close(got, expected)
    x = torch.randn(2, 3, 4, 5, generator=generator).to(device)  # NCHW memory.
    out = [poisoned_like(e) for e in want(x)]
    out[0] = out[0].contiguous(memory_format=torch.channels_last)
    for got, expected in zip(artifact(x, out=out), want(x)):
        torch.testing.assert_close(got, expected)
    with pytest.raises(kiln.runtime.GuardError):
        artifact(torch.randn(2, 3, 4, 6).to(device))


def test_shifts(device, tmp_path):
    """<< and >> as PyTorch shifts within [0, bits) (outside it torch 1.13's
    CPU kernels wrap the amount, torch 2.x gives 0 or the sign, as Kiln
    does); signed right shifts are arithmetic, unsigned ones logical; int4
    nibbles unpacked as quantized weights are."""
    def fn(x, amounts, packed, small):
        return (x << amounts, x >> amounts, (packed >> 4) & 0xF, packed & 0xF,
                packed << 3, small >> 2)
    generator = torch.Generator().manual_seed(16)
    x = torch.randint(-1000, 1000, (4, 5), generator=generator)
    amounts = torch.tensor([0, 1, 31, 62, 63])
    packed = torch.randint(0, 256, (4, 5), generator=generator).to(torch.uint8)
    small = torch.randint(-100, 100, (6,), generator=generator).to(torch.int8)
    args = [t.to(device) for t in (x, amounts, packed, small)]
    compiled = kiln.compile(fn, args, cache_dir=tmp_path)
    for index, (got, want) in enumerate(zip(compiled(*args), fn(*args))):
        assert got.dtype == want.dtype and torch.equal(got, want), index


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
def test_a_zero_dim_cpu_input_is_read_by_a_cuda_graph(tmp_path):
    # PyTorch lets CUDA ops read a zero-dim CPU tensor: the compiled function
    # takes it to the GPU at each call, and the graph guards it there.
    def fn(x, scale):
        return x * scale + scale

    x = torch.randn(4, 8, device="cuda")
    compiled = kiln.compile(fn, [x, torch.tensor(2.5)], cache_dir=tmp_path)
    assert 'device = "cpu"' not in compiled.graph_text
    for value in [2.5, -1.0]:
        scale = torch.tensor(value)
        torch.testing.assert_close(compiled(x, scale), fn(x, scale))


def test_results_start_poisoned_in_tests():
    """The suite runs with kiln.runtime.poison_results (conftest.py): every
    result an artifact allocates is filled with a value kernels are unlikely
    to write before the kernels run."""
    assert kiln.runtime.poison_results
    for dtype, poison in [(torch.float32, None), (torch.bfloat16, None), (torch.int64, -77),
                          (torch.int8, -77), (torch.uint8, 165), (torch.bool, True)]:
        tensor = torch.zeros(3, 2, dtype=dtype).t()
        kiln.runtime._poison(tensor)
        if poison is None:
            assert tensor.isnan().all()
        else:
            assert (tensor == poison).all()


@pytest.mark.parametrize("device", DEVICES)
def test_variances_keep_their_digits_on_a_large_offset(tmp_path, device):
    """1e4 + 0.01·randn: the f32 mean of 10^5 such values is off by about
    1e-3, and squaring deviations from it alone gave variances 9% off
    (n·(m - mean)² against n·σ²). The deviations' own sum corrects that:
    eager's accuracy (Welford's, in double on the CPU)."""
    generator = torch.Generator().manual_seed(21)
    x = (1e4 + 0.01 * torch.randn(4, 100000, generator=generator)).to(device)

    def moments(x):
        variance, mean = torch.var_mean(x, 1)
        return variance, mean, x.std(1), torch.nn.functional.layer_norm(x, x.shape[-1:])

    compiled = kiln.compile(moments, [x], cache_dir=tmp_path)
    fresh = (1e4 + 0.01 * torch.randn(4, 100000, generator=generator)).to(device)
    got = compiled(fresh)
    want = moments(fresh.double())
    for name, g, w, tolerance in zip(["var", "mean", "std", "layer_norm"], got, want,
                                     [1e-5, 1e-7, 1e-5, 5e-3]):
        error = float((g.double() - w).abs().max() / w.abs().max())
        assert error <= tolerance, f"{name}: relative error {error:.2e}"


# Rows of one sign: an extremum that starts from 0 instead of its identity
# (the type's least or greatest value, or an infinity) is right on mixed
# rows and wrong on these; so is a product or a sum that starts from the
# wrong value.
ONE_SIGN_REDUCTIONS = [
    ("amax", lambda x: x.amax(-1)),
    ("amin", lambda x: x.amin(-1)),
    ("max", lambda x: x.max(-1).values),
    ("min", lambda x: x.min(-1).values),
    ("argmax", lambda x: x.argmax(-1)),
    ("argmin", lambda x: x.argmin(-1)),
    ("whole amax", lambda x: x.amax()),
    ("whole amin", lambda x: x.amin()),
    ("sum", lambda x: x.sum(-1)),
    ("prod", lambda x: x.prod(-1)),
    ("cumsum", lambda x: x.cumsum(-1)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.float32,
                                   torch.bfloat16], ids=str)
@pytest.mark.parametrize("sign", [-1, 1], ids=["negative", "positive"])
def test_reductions_of_rows_of_one_sign(tmp_path, device, dtype, sign):
    generator = torch.Generator().manual_seed(17)
    supported = []
    for name, fn in ONE_SIGN_REDUCTIONS:
        if name == "prod" and dtype == torch.bfloat16:
            continue  # Eager's CPU has no such kernel before torch 2.
        supported.append((name, fn))

    def make():
        # Magnitudes 1..5: products of 7 stay inside int8 only as int64
        # results (PyTorch widens integer products and sums).
        magnitude = torch.randint(1, 6, (5, 7), generator=generator)
        return (sign * magnitude).to(dtype).to(device)

    def fn(x):
        return tuple(f(x) for _, f in supported)

    compiled = kiln.compile(fn, [make()], cache_dir=tmp_path)
    x = make()
    for (name, _), got, want in zip(supported, compiled(x), fn(x)):
        assert got.dtype == want.dtype, name
        torch.testing.assert_close(got, want, rtol=1e-2 if dtype == torch.bfloat16 else 0,
                                   atol=0, msg=lambda m: f"{name}: {m}")


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
}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("name", list(TENSOR_CORE_PRODUCTS))
def test_cuda_tensor_core_products(tmp_path, name, dtype):
    """Kiln's tensor-core kernels (mma.sync) against eager's cuBLAS, on
    poisoned outputs; the products rounded to the operands' dtype first, as
    eager's are, before the epilogue."""
    fn, shapes = TENSOR_CORE_PRODUCTS[name]
    check(fn, [(shape, dtype) for shape in shapes], device="cuda", tmp_path=tmp_path,
          options={"matmul-kernels": True}, rounded_f32=False,
          tolerances={**TOLERANCES, torch.bfloat16: (2e-2, 2e-1),
                      torch.float16: (2e-3, 2e-2),
                      # An f32 result of a 16-bit product rounded once.
                      torch.float32: (2e-2, 2e-1) if dtype == torch.bfloat16
                      else (2e-3, 2e-2)})


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
