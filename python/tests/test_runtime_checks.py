"""Run-time checks on the CPU: where eager PyTorch raises on the values it is
given (an integer division by zero, an index out of range), a compiled
function raises the same exception; where eager computes, it computes the
same answer (negative indices that advanced indexing allows, empty
divisors, float divisions by zero)."""

import subprocess
import sys

import pytest

import kiln

torch = pytest.importorskip("torch")


def outcome(fn, *args):
    """What `fn(*args)` gives: its result, or the exception's type and text."""
    try:
        return fn(*args)
    except (RuntimeError, IndexError) as err:
        return type(err), str(err)


def assert_same_outcome(fn, valid, *cases):
    """Compiles `fn` for the inputs `valid` and checks each input tuple of
    `cases` against eager: the same result or the same exception."""
    compiled = kiln.compile(fn, list(valid))
    torch.testing.assert_close(compiled(*valid), fn(*valid))
    for args in cases:
        expected, got = outcome(fn, *args), outcome(compiled, *args)
        if isinstance(expected, tuple):
            assert got == expected
        else:
            assert not isinstance(got, tuple), f"Kiln raised {got}, eager did not"
            torch.testing.assert_close(got, expected, equal_nan=True)


def with_zero(tensor, index=3):
    tensor = tensor.clone()
    tensor.view(-1)[index] = 0
    return tensor


@pytest.mark.parametrize("op", [
    torch.remainder, torch.fmod,
    lambda x, y: torch.div(x, y, rounding_mode="trunc"),
    lambda x, y: torch.div(x, y, rounding_mode="floor"),
    lambda x, y: x // y,
], ids=["remainder", "fmod", "trunc", "floor", "floordiv"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_division_by_zero_raises_as_eager(op, dtype):
    x = torch.randint(-50, 50, (4, 8), dtype=dtype)
    y = torch.randint(1, 9, (4, 8), dtype=dtype) * (1 - 2 * torch.randint(0, 2, (4, 8), dtype=dtype))
    assert_same_outcome(lambda a, b: op(a, b) + 1, (x, y), (x, with_zero(y)),
                        (x, with_zero(y, 31)), (x, y.flip(0)))


def test_a_broadcast_divisor_is_checked_once_per_element():
    x = torch.randint(-50, 50, (6, 8))
    y = torch.randint(1, 9, (8,))
    assert_same_outcome(torch.remainder, (x, y), (x, with_zero(y, 7)))


def test_float_divisions_by_zero_do_not_raise():
    # (A zero Scalar divisor cannot be traced with real inputs: eager raises
    # while tracing. Its lowering's check has a lit test.)
    f = torch.randn(5)
    assert_same_outcome(lambda a, b: torch.fmod(a, b), (f, torch.randn(5)),
                        (f, with_zero(torch.randn(5), 2)))


def test_an_empty_divisor_divides_nothing():
    x = torch.randint(-5, 5, (0, 3))
    assert_same_outcome(torch.remainder, (x, torch.randint(1, 4, (0, 3))))


def test_embedding_and_index_select_raise_on_indices_out_of_range():
    weight = torch.randn(10, 4)
    indices = torch.tensor([1, 9, 0])
    assert_same_outcome(lambda w, i: torch.nn.functional.embedding(i, w) * 2,
                        (weight, indices), (weight, torch.tensor([1, 10, 0])),
                        (weight, torch.tensor([-1, 2, 3])))
    assert_same_outcome(lambda w, i: torch.index_select(w, 0, i) + 1,
                        (weight, indices), (weight, torch.tensor([3, 12, 0])))


def test_gather_raises_on_indices_out_of_range():
    x = torch.randn(3, 5)
    index = torch.randint(0, 5, (3, 2))
    compiled = kiln.compile(lambda a, i: torch.gather(a, 1, i), [x, index])
    torch.testing.assert_close(compiled(x, index), torch.gather(x, 1, index))
    bad = index.clone()
    bad[1, 1] = 5
    with pytest.raises(RuntimeError, match="index"):
        torch.gather(x, 1, bad)
    with pytest.raises(RuntimeError, match="gather\\(\\): index out of bounds for dimension 1"):
        compiled(x, bad)


def test_advanced_indexing_takes_negative_indices_and_raises_past_them():
    x = torch.randn(6, 4)
    rows = torch.tensor([0, 5, 2])
    compiled = kiln.compile(lambda a, i: a[i] * 3, [x, rows])
    torch.testing.assert_close(compiled(x, rows), x[rows] * 3)
    negative = torch.tensor([-6, -1, 3])
    torch.testing.assert_close(compiled(x, negative), x[negative] * 3)
    for bad in (torch.tensor([0, 6, 1]), torch.tensor([-7, 0, 1])):
        with pytest.raises(IndexError):
            x[bad]
        with pytest.raises(IndexError, match="index out of bounds for dimension 0"):
            compiled(x, bad)


@pytest.mark.parametrize("op", [
    lambda x, i, s: x.scatter(0, i, s),
    lambda x, i, s: x.scatter_add(0, i, s),
    lambda x, i, s: x.scatter_reduce(0, i, s, "amax"),
    lambda x, i, s: x.scatter_reduce(0, i, s, "prod"),
], ids=["scatter", "scatter_add", "scatter_reduce_amax", "scatter_reduce_prod"])
def test_scatters_raise_on_indices_out_of_range(op):
    x = torch.randn(6, 3)
    # Distinct rows per column: which of two writes to one element wins is
    # PyTorch's choice, not a value to compare.
    index = torch.stack([torch.randperm(6)[:4] for _ in range(3)], dim=1)
    src = torch.randn(4, 3)
    compiled = kiln.compile(op, [x, index, src])
    torch.testing.assert_close(compiled(x, index, src), op(x, index, src))
    for position, value in (((1, 2), 6), ((3, 0), -1)):
        bad = index.clone()
        bad[position] = value
        with pytest.raises(RuntimeError, match="out of bounds"):
            op(x, bad, src)
        with pytest.raises(RuntimeError, match="scatter\\(\\): index out of bounds for dimension 0"):
            compiled(x, bad, src)


def test_index_put_takes_negative_indices_and_raises_past_them():
    x = torch.randn(5, 2)
    values = torch.randn(2, 2)

    def put(a, i, v):
        return a.index_put((i,), v, accumulate=True)

    rows = torch.tensor([-5, 4])
    compiled = kiln.compile(put, [x, rows, values])
    torch.testing.assert_close(compiled(x, rows, values), put(x, rows, values))
    bad = torch.tensor([0, 5])
    with pytest.raises(IndexError):
        put(x, bad, values)
    with pytest.raises(IndexError, match="index out of bounds for dimension 0"):
        compiled(x, bad, values)


# On the GPU, eager's indexing kernels report an index out of range with a
# device assert, which leaves the CUDA context unusable: so do Kiln's
# kernels (kiln-gpu-pipeline's `device-asserts`), each case in a process of
# its own. Where eager computes (negative indices that advanced indexing
# allows), the same answer.
_DEVICE_ASSERT_PROGRAM = """
import sys, torch, kiln
case = sys.argv[1]
w = torch.randn(10, 4, device="cuda")
x = torch.randn(6, 3, device="cuda")
src = torch.randn(4, 3, device="cuda")
cases = {
    "embedding": (lambda w, i: torch.nn.functional.embedding(i, w) * 2,
                  (w, torch.tensor([1, 9, 0], device="cuda")),
                  (w, torch.tensor([1, 10, 0], device="cuda"))),
    "index": (lambda w, i: w[i] * 3,
              (w, torch.tensor([-10, 9, -1], device="cuda")),
              (w, torch.tensor([0, -11, 1], device="cuda"))),
    "gather": (lambda x, i: torch.gather(x, 1, i),
               (x, torch.tensor([[0, 2], [1, 1]] * 3, device="cuda")),
               (x, torch.tensor([[0, 2], [1, 3]] * 3, device="cuda"))),
    "scatter_add": (lambda x, i, s: x.scatter_add(0, i, s),
                    (x, torch.tensor([[0, 1, 2]] * 4, device="cuda"), src),
                    (x, torch.tensor([[0, 1, 2]] * 3 + [[0, 6, 2]],
                                     device="cuda"), src)),
}
fn, valid, bad = cases[case]
compiled = kiln.compile(fn, list(valid))
torch.testing.assert_close(compiled(*valid), fn(*valid))
print("valid inputs: right", flush=True)
try:
    compiled(*bad)
    torch.cuda.synchronize()
except RuntimeError as err:
    print("raised:", err, flush=True)
    sys.exit(3)
print("no error", flush=True)
"""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
@pytest.mark.parametrize("case, message", [
    ("embedding", "IndexError: index out of range in self"),
    ("index", "IndexError: index out of bounds for dimension 0"),
    ("gather", "RuntimeError: gather(): index out of bounds for dimension 1"),
    ("scatter_add", "RuntimeError: scatter(): index out of bounds for dimension 0"),
])
def test_cuda_kernels_assert_on_indices_out_of_range(case, message):
    run = subprocess.run([sys.executable, "-c", _DEVICE_ASSERT_PROGRAM, case],
                         capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert "valid inputs: right" in run.stdout, output
    assert run.returncode == 3, output
    assert "device-side assert" in output, output
    assert message in output, output
