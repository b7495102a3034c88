#!/usr/bin/env python3
"""GPU smoke test of kiln_cuda_convolution, against PyTorch.

    python3 utils/conv-smoke.py build/lib/libkiln_cuda_runtime.so

Runs the runtime's convolution (cuDNN, channels-last operands) on torch.cuda
tensors for f32, f16 and bf16: plain, strided, padded, dilated, grouped and
depthwise filters, 1x1 and 7x7 windows, a 1-d convolution (height 1), on
PyTorch's current stream and on a side stream; compares each result, its
buffer poisoned first, with a float64 reference and checks
kiln_cuda_take_error after each case. Also checks the empty and
zero-channel cases and that bad arguments are reported. Prints one line per
case; exits 1 on any failure.
"""

import ctypes
import sys

import torch
import torch.nn.functional as F

from cuda_smoke import DTYPES, NAMES, error_reader

# Relative to the largest reference element: 16-bit results round once.
TOLERANCES = {0: 1e-5, 1: 2e-3, 2: 1e-2}


def load(path):
    lib = ctypes.CDLL(path)
    convolution = lib.kiln_cuda_convolution
    convolution.argtypes = [ctypes.c_int32] + [ctypes.c_int64] * 16 + \
        [ctypes.c_void_p] * 4
    convolution.restype = None
    return convolution, error_reader(lib)


def outputs(size, kernel, stride, pad, dilation):
    span, reach = dilation * (kernel - 1) + 1, size + 2 * pad
    return 0 if reach < span else (reach - span) // stride + 1


def run_case(convolution, take_error, dtype, batch, channels, filters, size, kernel,
             stride=(1, 1), pad=(0, 0), dilation=(1, 1), groups=1):
    height, width = size
    torch_dtype = DTYPES[dtype]
    x = torch.randn(batch, channels, height, width, device="cuda").to(torch_dtype)
    w = torch.randn(filters, channels // groups, *kernel, device="cuda").to(torch_dtype)
    out_h = outputs(height, kernel[0], stride[0], pad[0], dilation[0])
    out_w = outputs(width, kernel[1], stride[1], pad[1], dilation[1])
    result = torch.full((batch, out_h, out_w, filters), float("nan"),
                        device="cuda", dtype=torch_dtype)
    x_nhwc = x.permute(0, 2, 3, 1).contiguous()
    w_nhwc = w.permute(0, 2, 3, 1).contiguous()
    convolution(dtype, batch, height, width, channels, filters, kernel[0],
                kernel[1], out_h, out_w, stride[0], stride[1], pad[0], pad[1],
                dilation[0], dilation[1], groups, x_nhwc.data_ptr(),
                w_nhwc.data_ptr(), result.data_ptr(),
                torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    error = take_error()
    if channels == 0:  # Every sum is empty.
        reference = torch.zeros(result.shape, device="cuda", dtype=torch.float64)
    else:
        reference = F.conv2d(x.double(), w.double(), stride=stride, padding=pad,
                             dilation=dilation, groups=groups).permute(0, 2, 3, 1)
    if result.numel() == 0:
        return error is None, 0.0, error
    scale = max(reference.abs().max().item(), 1.0)
    max_err = (result.double() - reference).abs().max().item() / scale
    ok = error is None and not result.isnan().any().item() and \
        max_err <= TOLERANCES[dtype]
    return ok, max_err, error


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("conv-smoke: no CUDA device", file=sys.stderr)
        return 2
    convolution, take_error = load(sys.argv[1])
    torch.manual_seed(0)
    results = []

    def report(ok, label, detail):
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {label} {detail}", flush=True)

    def case(dtype, batch, channels, filters, size, kernel, **geometry):
        ok, max_err, error = run_case(convolution, take_error, dtype, batch,
                                      channels, filters, size, kernel,
                                      **geometry)
        label = (f"{NAMES[dtype]:4} {batch}x{channels}x{size[0]}x{size[1]} "
                 f"* {filters}x{kernel[0]}x{kernel[1]} {geometry}")
        detail = f"rel_err={max_err:.3g}" + (f" error: {error}" if error else "")
        report(ok, label, detail)

    for dtype in (0, 1, 2):
        case(dtype, 2, 16, 32, (14, 14), (3, 3), pad=(1, 1))
        case(dtype, 3, 24, 40, (17, 13), (3, 3), stride=(2, 2), pad=(1, 1))
        case(dtype, 2, 32, 64, (9, 9), (1, 1))
        case(dtype, 2, 8, 16, (20, 20), (3, 3), dilation=(2, 2), pad=(2, 2))
        case(dtype, 2, 32, 32, (12, 12), (3, 3), pad=(1, 1), groups=32)
        case(dtype, 2, 32, 64, (12, 12), (3, 3), pad=(1, 1), groups=4)
        case(dtype, 1, 3, 64, (56, 56), (7, 7), stride=(2, 2), pad=(3, 3))
        case(dtype, 4, 16, 24, (1, 50), (1, 5), pad=(0, 2))  # 1-d
    # ResNet-50's, MobileNetV3's and RegNetY-1.6GF's shapes, in bf16 (for
    # RegNetY's two groups of 24 channels, the heuristic's first engines
    # build none).
    case(2, 8, 64, 256, (56, 56), (1, 1))
    case(2, 8, 240, 240, (28, 28), (5, 5), pad=(2, 2), groups=240)
    case(2, 64, 48, 48, (112, 112), (3, 3), stride=(2, 2), pad=(1, 1), groups=2)

    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        case(2, 2, 16, 32, (14, 14), (3, 3), pad=(1, 1))
        case(0, 2, 32, 32, (12, 12), (3, 3), pad=(1, 1), groups=32)

    # An empty batch does nothing; no channels zero-fill the result.
    case(2, 0, 16, 32, (14, 14), (3, 3))
    case(0, 2, 0, 8, (5, 5), (3, 3))

    stream = torch.cuda.current_stream().cuda_stream
    result = torch.zeros(1, 3, 3, 8, device="cuda")
    x = torch.zeros(1, 5, 5, 4, device="cuda")
    w = torch.zeros(8, 3, 3, 4, device="cuda")
    for label, args, expected in [
            ("bad dtype", (7,) + (1,) * 16, "dtype"),
            ("wrong result size", (0, 1, 5, 5, 4, 8, 3, 3, 4, 3, 1, 1, 0, 0, 1, 1, 1),
             "geometry"),
            ("groups not dividing", (0, 1, 5, 5, 4, 8, 3, 3, 3, 3, 1, 1, 0, 0, 1, 1, 3),
             "groups"),
            ("zero stride", (0, 1, 5, 5, 4, 8, 3, 3, 3, 3, 0, 1, 0, 0, 1, 1, 1),
             "positive")]:
        convolution(*args, x.data_ptr(), w.data_ptr(), result.data_ptr(), stream)
        error = take_error()
        report(error is not None and expected in error, label, f"error: {error}")
    case(2, 2, 16, 32, (14, 14), (3, 3), pad=(1, 1))  # Works after an error.

    failed = results.count(False)
    print(f"conv-smoke: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
