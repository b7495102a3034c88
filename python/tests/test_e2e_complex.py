"""End to end (see test_e2e.py): complex numbers, and math at the edges of its range.
"""

import math

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from e2e_support import TOLERANCES, device, check, F32  # noqa: E402,F401


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
