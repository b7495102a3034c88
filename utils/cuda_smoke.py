"""What the CUDA runtime's smoke tests (utils/gemm-smoke.py,
utils/conv-smoke.py) share: the runtime's dtype codes and its error channel.
"""

import ctypes

import torch

DTYPES = {0: torch.float32, 1: torch.float16, 2: torch.bfloat16}
NAMES = {0: "f32", 1: "f16", 2: "bf16"}


def error_reader(lib):
    """A function that returns the runtime's recorded error
    (kiln_cuda_take_error), or None, and clears it."""
    take = lib.kiln_cuda_take_error
    take.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    take.restype = ctypes.c_int

    def take_error():
        buffer = ctypes.create_string_buffer(1024)
        if take(buffer, len(buffer)):
            return buffer.value.decode(errors="replace")
        return None

    return take_error
