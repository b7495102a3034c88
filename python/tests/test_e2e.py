"""End to end: PyTorch function -> Kiln artifact -> the same answer as eager.

Every case compiles a function, runs it on fresh random inputs (not the
example inputs, never zeros) into result buffers poisoned beforehand, and
compares with eager PyTorch under a tolerance for the dtype. Cases run on the
CPU, and on the GPU where there is one. This file: elementwise ops, dtypes,
resampling, normalizations, indexing, views and the edges of each (empty
batches, zero-dim tensors, NaNs); the other test_e2e_*.py files: complex
numbers, products, long reductions and scatters, gradients, the runtime.
"""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from e2e_support import (  # noqa: E402,F401
    ROUNDED_F32_TOLERANCES, DEVICES, device, poisoned_like, check, F32)


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


def test_logsumexp_of_infinite_rows(tmp_path):
    f = lambda x: torch.logsumexp(x, dim=1)  # noqa: E731
    x = torch.randn(3, 6)
    x[0] = -float("inf")
    x[1, 2] = float("inf")
    compiled = kiln.compile(f, [x], cache_dir=tmp_path)
    torch.testing.assert_close(compiled(x), f(x))


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
