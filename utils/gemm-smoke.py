#!/usr/bin/env python3
"""GPU smoke test of kiln_cuda_gemm, against PyTorch.

    python3 utils/gemm-smoke.py build/lib/libkiln_cuda_runtime.so

Runs the runtime's GEMM on torch.cuda tensors (on PyTorch's current stream,
and once on a side stream) for f32, f16 and bf16, both transposes, batch 1
and 3, with and without a bias, no activation, relu and gelu; compares each
result with a float64 reference and checks kiln_cuda_take_error after each
case. Also checks the empty and k = 0 cases, misaligned operands and that a
bad dtype is reported. Prints one line per case; exits 1 on any failure.
"""

import ctypes
import itertools
import sys

import torch
import torch.nn.functional as F

from cuda_smoke import DTYPES, NAMES, error_reader

# (rtol, atol) on results of size ~sqrt(k); gelu's epilogue may use a fast
# tanh, hence a looser f32 tolerance with it.
TOLERANCES = {0: (1e-4, 1e-4), 1: (5e-3, 5e-3), 2: (2e-2, 2e-2)}
GELU_F32_TOLERANCE = (2e-3, 2e-3)
ACTIVATIONS = {0: "none", 1: "relu", 2: "gelu"}


def load(path):
    lib = ctypes.CDLL(path)
    gemm = lib.kiln_cuda_gemm
    gemm.argtypes = [
        ctypes.c_int32,  # dtype
        ctypes.c_int32,  # resultDtype
        ctypes.c_int64,  # batch
        ctypes.c_int64,  # m
        ctypes.c_int64,  # n
        ctypes.c_int64,  # k
        ctypes.c_void_p,  # a
        ctypes.c_int32,  # transposeA
        ctypes.c_void_p,  # b
        ctypes.c_int32,  # transposeB
        ctypes.c_void_p,  # bias
        ctypes.c_int32,  # activation
        ctypes.c_void_p,  # c
        ctypes.c_void_p,  # stream
    ]
    gemm.restype = None
    return gemm, error_reader(lib)


def pointer(tensor):
    return None if tensor is None else tensor.data_ptr()


def stream_handle():
    return torch.cuda.current_stream().cuda_stream


def offset_tensor(shape, dtype, offset):
    """A contiguous tensor starting `offset` elements into its storage."""
    count = 1
    for size in shape:
        count *= size
    storage = torch.randn(count + offset, device="cuda").to(dtype)
    return storage[offset:].view(shape)


def run_case(gemm, take_error, dtype, batch, m, n, k, ta, tb, with_bias, activation,
             offset=0, result_dtype=None):
    torch_dtype = DTYPES[dtype]
    result_dtype = dtype if result_dtype is None else result_dtype
    result_torch_dtype = DTYPES[result_dtype]
    a = offset_tensor((batch, k, m) if ta else (batch, m, k), torch_dtype,
                      offset)
    b = offset_tensor((batch, n, k) if tb else (batch, k, n), torch_dtype,
                      offset)
    bias = offset_tensor((n,), result_torch_dtype, offset) if with_bias else None
    c = torch.full((batch, m, n), float("nan"), device="cuda",
                   dtype=result_torch_dtype)
    gemm(dtype, result_dtype, batch, m, n, k, pointer(a), ta, pointer(b), tb,
         pointer(bias),
         activation, pointer(c), stream_handle())
    torch.cuda.synchronize()
    error = take_error()

    op_a = (a.transpose(1, 2) if ta else a).double()
    op_b = (b.transpose(1, 2) if tb else b).double()
    ref = torch.matmul(op_a, op_b)
    if bias is not None:
        ref = ref + bias.double()
    if activation == 1:
        ref = torch.relu(ref)
    elif activation == 2:
        ref = F.gelu(ref, approximate="tanh")
    rtol, atol = TOLERANCES[result_dtype]
    if activation == 2 and result_dtype == 0:
        rtol, atol = GELU_F32_TOLERANCE
    got = c.double()
    if m * n * batch == 0:
        max_err = 0.0
        ok = error is None
    else:
        max_err = (got - ref).abs().max().item()
        ok = error is None and torch.allclose(got, ref, rtol=rtol, atol=atol)
    return ok, max_err, error


def report(results, ok, label, detail):
    results.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {label} {detail}", flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gemm-smoke: no CUDA device", file=sys.stderr)
        return 2
    gemm, take_error = load(sys.argv[1])
    torch.manual_seed(0)
    results = []

    def case(dtype, batch, m, n, k, ta, tb, with_bias, activation, offset=0,
             result_dtype=None):
        ok, max_err, error = run_case(gemm, take_error, dtype, batch, m, n, k, ta,
                                      tb, with_bias, activation, offset,
                                      result_dtype)
        result = "" if result_dtype is None else f"->{NAMES[result_dtype]}"
        label = (f"{NAMES[dtype]:4}{result} b={batch} {m}x{n}x{k} tA={ta} tB={tb} "
                 f"bias={int(with_bias)} act={ACTIVATIONS[activation]:4}"
                 + (f" offset={offset}" if offset else ""))
        detail = f"max_err={max_err:.3g}"
        if error:
            detail += f" error: {error}"
        report(results, ok, label, detail)

    shapes = [(64, 96, 80), (37, 45, 29)]
    for dtype, batch, (m, n, k), ta, tb, with_bias, activation in (
            itertools.product([0, 2], [1, 3], shapes, [0, 1], [0, 1],
                              [False, True], [0, 1, 2])):
        case(dtype, batch, m, n, k, ta, tb, with_bias, activation)

    # f16, a few cases.
    for ta, tb, with_bias, activation in [(0, 0, False, 0), (1, 1, True, 2),
                                          (0, 1, True, 1)]:
        case(1, 3, 64, 96, 80, ta, tb, with_bias, activation)

    # Unrounded f32 results of 16-bit operands.
    for dtype, with_bias, activation in [(2, False, 0), (2, True, 1), (1, True, 0)]:
        case(dtype, 3, 37, 45, 29, 1, 0, with_bias, activation, result_dtype=0)

    # Operands that are only element-aligned, and a larger square GEMM.
    case(0, 3, 64, 96, 80, 0, 0, True, 1, offset=1)
    case(2, 3, 64, 96, 80, 1, 0, True, 2, offset=1)
    case(2, 1, 512, 1024, 768, 0, 1, True, 2)

    # Results with rows of an odd number of elements, large enough to be
    # computed with padded rows and copied into place (a vocabulary's
    # logits), batched, with a bias, and in f32; unbatched, their columns up
    # to the last multiple of 16 bytes are one product, the rest another.
    case(2, 1, 300, 1001, 64, 0, 1, False, 0)
    case(2, 1, 300, 1001, 64, 1, 0, True, 2)
    case(2, 2, 100, 1001, 64, 0, 0, True, 1)
    case(0, 1, 257, 259, 33, 1, 0, True, 0)
    case(2, 1, 300, 1001, 64, 0, 1, False, 0, result_dtype=0)

    # Operands with rows of an odd number of elements, large enough to be
    # copied into padded rows first (a vocabulary's logits gradient):
    # A row-major and transposed, B transposed, batched. Unbatched, a
    # transposed A's aligned columns (C's rows) are one product, the rest
    # another; with C's columns split too, four.
    case(2, 1, 300, 64, 1001, 0, 0, False, 0)
    case(2, 1, 1001, 64, 300, 1, 0, True, 0)
    case(2, 1, 64, 300, 1001, 0, 1, False, 1)
    case(2, 2, 100, 96, 1001, 0, 0, True, 2)
    case(0, 1, 257, 33, 259, 1, 1, False, 0)
    case(2, 1, 1001, 1001, 300, 1, 0, True, 1)
    case(0, 1, 259, 257, 300, 1, 1, False, 0)

    # A side stream: its own workspace.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        case(2, 3, 64, 96, 80, 0, 0, True, 2)
        case(0, 1, 37, 45, 29, 1, 1, False, 1)

    # Empty C: nothing happens.
    case(0, 0, 8, 8, 8, 0, 0, False, 0)
    case(2, 2, 0, 8, 8, 0, 0, True, 1)
    case(2, 2, 8, 0, 8, 0, 0, False, 0)
    # k = 0: zero-filled C, with an activation too (relu(0) = gelu(0) = 0).
    case(0, 2, 8, 16, 0, 0, 0, False, 0)
    case(2, 2, 8, 16, 0, 1, 1, False, 2)

    # Errors are reported, and the next GEMM works once taken.
    gemm(7, 7, 1, 8, 8, 8, None, 0, None, 0, None, 0, None, stream_handle())
    error = take_error()
    report(results, error is not None and "dtype" in error, "bad dtype",
           f"error: {error}")
    c = torch.zeros(8, 8, device="cuda")
    gemm(2, 1, 1, 8, 8, 8, None, 0, None, 0, None, 0, c.data_ptr(),
         stream_handle())
    error = take_error()
    report(results, error is not None and "result dtype" in error,
           "bad result dtype", f"error: {error}")
    gemm(0, 0, 1, 8, 8, 0, None, 0, None, 0, c.data_ptr(), 0, c.data_ptr(),
         stream_handle())
    error = take_error()
    report(results, error is not None and "k = 0" in error, "k = 0 with bias",
           f"error: {error}")
    case(0, 1, 37, 45, 29, 0, 0, True, 2)

    failures = results.count(False)
    print(f"gemm-smoke: {len(results) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
