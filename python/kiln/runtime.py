"""Loading and running Kiln artifacts: shared objects with Kiln's C ABI.

An artifact built from graph ``@g`` exports (see docs/ABI.md)::

    int32_t kiln_abi_version;
    const char kiln_g_signature[];      // "(tensor<?x64xf32>, ...) -> ..."
    const char kiln_g_device[];         // "cpu" or "cuda"
    int32_t kiln_g_run(void *const *inputs, void *const *outputs,
                       const int64_t *input_sizes, void *stream);
    int32_t kiln_g_result_sizes(const int64_t *input_sizes,
                                int64_t *result_sizes);
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from kiln.dtypes import torch_dtype

ABI_VERSION = 1


_TENSOR_RE = re.compile(r"tensor<((?:(?:\?|\d+)x)*)([a-z0-9]+(?:<[a-z0-9]+>)?)>")


# Kiln's ABI: every buffer is 16-byte aligned (kernels use 16-byte accesses).
ALIGNMENT = 16


def _aligned(tensor):
    """`tensor`, or an aligned copy if its data (a view's, say) is not."""
    return tensor if tensor.data_ptr() % ALIGNMENT == 0 else tensor.clone()


class GuardError(ValueError):
    """Inputs that the compiled graph was not compiled for."""


@dataclass(frozen=True)
class TensorSpec:
    """A tensor type of a graph's signature; None marks a dynamic dimension."""

    dtype: str
    shape: Tuple[Optional[int], ...]

    @property
    def dynamic_dims(self) -> List[int]:
        return [i for i, size in enumerate(self.shape) if size is None]

    def __str__(self) -> str:
        dims = "".join(("?" if s is None else str(s)) + "x" for s in self.shape)
        return f"tensor<{dims}{self.dtype}>"


def _parse_tensors(text: str) -> List[TensorSpec]:
    specs = []
    for dims, dtype in _TENSOR_RE.findall(text):
        shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1])
        specs.append(TensorSpec(dtype, shape))
    return specs


def parse_signature(text: str) -> Tuple[List[TensorSpec], List[TensorSpec]]:
    """Splits an MLIR function type over tensors into input and result specs."""
    match = re.fullmatch(r"\s*\((.*?)\)\s*->\s*(.*?)\s*", text)
    if not match:
        raise ValueError(f"not a graph signature: {text!r}")
    return _parse_tensors(match.group(1)), _parse_tensors(match.group(2))


class Artifact:
    """A loaded artifact; calling it runs graph `graph` on PyTorch tensors."""

    def __init__(self, path: Union[str, Path], graph: str = "forward"):
        self.path = Path(path)
        self.graph = graph
        self._lib = ctypes.CDLL(str(self.path))
        try:
            version = ctypes.c_int32.in_dll(self._lib, "kiln_abi_version").value
            text = self._string(f"kiln_{graph}_signature")
            self.device = self._string(f"kiln_{graph}_device").decode()
            self._run = getattr(self._lib, f"kiln_{graph}_run")
            self._result_sizes = getattr(self._lib, f"kiln_{graph}_result_sizes")
        except (ValueError, AttributeError) as err:
            raise ValueError(f"{self.path} is not a Kiln artifact for graph '{graph}': {err}") from None
        if version != ABI_VERSION:
            raise ValueError(
                f"{self.path} has Kiln ABI version {version}; this runtime reads {ABI_VERSION}"
            )
        self.inputs, self.results = parse_signature(text.decode())
        if self.device == "cuda":
            self._take_error = self._lib.kiln_cuda_take_error
            self._take_error.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            self._take_error.restype = ctypes.c_int
        pointers = ctypes.POINTER(ctypes.c_void_p)
        sizes = ctypes.POINTER(ctypes.c_int64)
        self._run.argtypes = [pointers, pointers, sizes, ctypes.c_void_p]
        self._run.restype = ctypes.c_int32
        self._result_sizes.argtypes = [sizes, sizes]
        self._result_sizes.restype = ctypes.c_int32

    def _string(self, symbol: str) -> bytes:
        return ctypes.cast(getattr(self._lib, symbol), ctypes.c_char_p).value

    def _raise_cuda_error(self) -> None:
        message = ctypes.create_string_buffer(1024)
        if self._take_error(message, len(message)):
            raise RuntimeError(f"Kiln CUDA runtime: {message.value.decode()}")

    def _expected_device(self):
        import torch

        if self.device == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(f"{self.path} runs on CUDA GPUs, and PyTorch sees none")
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")

    def check_guards(self, tensors: Sequence) -> None:
        """Raises GuardError naming the first input that breaks an assumption."""
        import torch

        if len(tensors) != len(self.inputs):
            raise GuardError(f"expected {len(self.inputs)} inputs, got {len(tensors)}")
        for index, (tensor, spec) in enumerate(zip(tensors, self.inputs)):
            where = f"input {index} (expected {spec})"
            if not isinstance(tensor, torch.Tensor):
                raise GuardError(f"{where}: got {type(tensor).__name__}, not a tensor")
            if tensor.dtype != torch_dtype(spec.dtype):
                raise GuardError(f"{where}: dtype is {tensor.dtype}")
            if tensor.device != self._expected_device():
                raise GuardError(
                    f"{where}: tensor is on {tensor.device}, the graph runs on "
                    f"{self._expected_device()}"
                )
            if tensor.dim() != len(spec.shape):
                raise GuardError(f"{where}: rank is {tensor.dim()}")
            for dim, (size, expected) in enumerate(zip(tensor.shape, spec.shape)):
                if expected is not None and size != expected:
                    raise GuardError(f"{where}: size {size} at dimension {dim}")
                if expected is None and size < 2:
                    # Sizes 0 and 1 are specialised, never dynamic.
                    raise GuardError(f"{where}: dynamic dimension {dim} has size {size}")

    def _check_results(self, out: Sequence, shapes, device, inputs) -> None:
        """Raises GuardError unless `out` can receive the results: kernels
        write them through raw pointers, with sizes computed from the inputs."""
        import torch

        if len(out) != len(self.results):
            raise GuardError(f"expected {len(self.results)} result buffers, got {len(out)}")
        for index, (tensor, shape, spec) in enumerate(zip(out, shapes, self.results)):
            where = f"result buffer {index} (expected {spec} of shape {list(shape)})"
            if not isinstance(tensor, torch.Tensor):
                raise GuardError(f"{where}: got {type(tensor).__name__}")
            if tuple(tensor.shape) != tuple(shape) or tensor.dtype != torch_dtype(spec.dtype):
                raise GuardError(f"{where}: got {tensor.dtype} of shape {list(tensor.shape)}")
            if tensor.device != device:
                raise GuardError(f"{where}: tensor is on {tensor.device}, not {device}")
            if not tensor.is_contiguous():
                raise GuardError(f"{where}: result buffers must be contiguous")
            if tensor.data_ptr() % ALIGNMENT:
                raise GuardError(f"{where}: result buffers must be {ALIGNMENT}-byte aligned")
            if tensor.numel() and any(
                    t.numel() and t.data_ptr() < tensor.data_ptr() + tensor.numel() * tensor.element_size()
                    and tensor.data_ptr() < t.data_ptr() + t.numel() * t.element_size()
                    for t in inputs):
                raise GuardError(f"{where}: result buffers must not overlap the inputs")

    def _input_sizes(self, tensors: Sequence):
        sizes = [t.shape[d] for t, spec in zip(tensors, self.inputs) for d in spec.dynamic_dims]
        return (ctypes.c_int64 * max(len(sizes), 1))(*sizes)

    def result_shapes(self, tensors: Sequence) -> List[Tuple[int, ...]]:
        """The shapes of the results for these inputs."""
        count = sum(len(spec.dynamic_dims) for spec in self.results)
        dynamic = (ctypes.c_int64 * max(count, 1))()
        status = self._result_sizes(self._input_sizes(tensors), dynamic)
        if status != 0:
            raise RuntimeError(f"kiln_{self.graph}_result_sizes failed with status {status}")
        values = iter(dynamic[:count])
        return [tuple(next(values) if s is None else s for s in spec.shape) for spec in self.results]

    def __call__(self, *tensors, out: Optional[Sequence] = None):
        """Runs the graph; returns its results as a list of new tensors (or
        fills `out`, tensors of the right shapes and dtypes, and returns it).

        On the GPU the work is queued on PyTorch's current stream, as eager
        ops are; nothing waits for it."""
        import torch

        self.check_guards(tensors)
        inputs = [_aligned(t.contiguous()) for t in tensors]
        device = self._expected_device()
        shapes = self.result_shapes(inputs)
        if out is None:
            out = [
                torch.empty(shape, dtype=torch_dtype(spec.dtype), device=device)
                for shape, spec in zip(shapes, self.results)
            ]
        else:
            self._check_results(out, shapes, device, inputs)
        in_ptrs = (ctypes.c_void_p * max(len(inputs), 1))(*[t.data_ptr() for t in inputs])
        out_ptrs = (ctypes.c_void_p * max(len(out), 1))(*[t.data_ptr() for t in out])
        stream = torch.cuda.current_stream().cuda_stream if self.device == "cuda" else None
        status = self._run(in_ptrs, out_ptrs, self._input_sizes(inputs), stream)
        if status != 0:
            raise RuntimeError(f"kiln_{self.graph}_run failed with status {status}")
        if self.device == "cuda":
            self._raise_cuda_error()
        return list(out)
