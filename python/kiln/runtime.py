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

import copy
import ctypes
import functools
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from kiln.dtypes import torch_dtype
from kiln.guards import ALIGNMENT, GraphGuards, GuardError, SizeSymbol, TensorGuard

__all__ = ["ABI_VERSION", "ALIGNMENT", "Artifact", "GuardError", "TensorSpec",
           "parse_signature", "signature_guards"]

ABI_VERSION = 1

# Fill the results a call allocates with values no kernel should write
# before running it (NaN, -77, True), so that elements a kernel leaves
# unwritten show in tests: KILN_POISON_RESULTS=1, or set it here. It costs a
# fill per result, so it is off by default.
poison_results = os.environ.get("KILN_POISON_RESULTS", "") not in ("", "0")


_TENSOR_RE = re.compile(r"tensor<((?:(?:\?|\d+)x)*)([a-z0-9]+(?:<[a-z0-9]+>)?)>")


def _current_stream_function():
    """device -> the raw CUstream of PyTorch's current stream on it, by
    PyTorch's own fast accessor where it has one (as compiled code calls
    it), else through torch.cuda.current_stream."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return lambda device: raw(device.index)
    return lambda device: torch.cuda.current_stream(device).cuda_stream


@functools.lru_cache(maxsize=None)
def _current_cuda_device_function():
    """torch.cuda.current_device, or PyTorch's own accessor where it has one
    (the public function checks CUDA's initialization on every call)."""
    import torch

    return getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device


@functools.lru_cache(maxsize=None)
def _cuda_available() -> bool:
    """torch.cuda.is_available(), asked once: it reads the environment and
    may ask NVML, which costs microseconds on every call of an artifact."""
    import torch

    return torch.cuda.is_available()


# Per thread: threads whose runs fail at once each keep their own message.
_error_buffers = threading.local()


def _poison(tensor) -> None:
    """Fills `tensor` with a value that kernels are unlikely to compute."""
    import torch

    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(True)
    else:
        tensor.fill_(-77 if tensor.dtype.is_signed else 165)


def _aligned(tensor):
    """`tensor`, or an aligned copy if its data (a view's, say) is not."""
    return tensor if tensor.data_ptr() % ALIGNMENT == 0 else tensor.clone()


def _as_stored(tensor):
    """`tensor` with its values in memory: a conjugate or negative view
    (``x.conj()``, its ``.imag``) keeps its data unchanged and a bit that
    PyTorch's kernels read; Kiln's read the data, so such views are
    materialized first."""
    return tensor.resolve_conj().resolve_neg()


@dataclass(frozen=True)
class _CallPlan:
    """What a checked call found: where results go, their shapes and dtypes,
    and the inputs' dynamic sizes as the C entry takes them. With result
    orders (Artifact.permuted), `result_layouts` holds, per result, the
    caller's (shape, strides) of the graph's contiguous result, or None."""

    device: Any
    result_shapes: List[Tuple[int, ...]]
    result_dtypes: List[Any]
    input_sizes: Any
    result_layouts: Optional[List[Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]]] = None

    @functools.cached_property
    def allocations(self) -> List[Tuple[Tuple[int, ...], Tuple[int, ...], Any]]:
        """(shape, strides, dtype) of each result as the caller gets it."""
        layouts = self.result_layouts or [None] * len(self.result_shapes)
        return [layout + (dtype,) if layout is not None else
                (shape, _contiguous_strides(shape), dtype)
                for shape, layout, dtype in zip(self.result_shapes, layouts,
                                                self.result_dtypes)]


def _contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _caller_layout(shape: Sequence[int], order: Sequence[int]):
    """(shape, strides) of the tensor whose ``.permute(order)`` is a
    contiguous tensor of `shape`: the caller's dimension order[d] is the
    graph's d."""
    strides = _contiguous_strides(shape)
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return tuple(shape[i] for i in inverse), tuple(strides[i] for i in inverse)


# Plans an artifact keeps: enough for a few shapes of dynamic inputs.
_MAX_PLANS = 16


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


def signature_guards(inputs: Sequence[TensorSpec], device: str) -> GraphGuards:
    """The guards that Kiln's ABI implies for a graph without guards: every
    input on `device`, contiguous and 16-byte aligned, static sizes as typed,
    and a `?` dimension of at least 2, each its own symbol."""
    symbols, arguments = [], []
    for index, spec in enumerate(inputs):
        sizes = []
        for dim, size in enumerate(spec.shape):
            if size is None:
                symbols.append(SizeSymbol(f"arg{index}_dim{dim}"))
                size = symbols[-1].name
            sizes.append(size)
        arguments.append(TensorGuard(tuple(sizes), align=ALIGNMENT, device=device))
    return GraphGuards(tuple(symbols), tuple(arguments))


def _check_guards_fit(guards: GraphGuards, inputs: Sequence[TensorSpec], device: str) -> None:
    """Raises ValueError unless `guards` describe inputs of these types on
    `device` ("cpu" or "cuda")."""
    if len(guards.arguments) != len(inputs):
        raise ValueError(f"the guards describe {len(guards.arguments)} inputs, the "
                         f"signature has {len(inputs)}")
    for index, (guard, spec) in enumerate(zip(guards.arguments, inputs)):
        if guard is None:
            continue
        if len(guard.sizes) != len(spec.shape) or any(
                isinstance(g, int) != isinstance(s, int) or (isinstance(g, int) and g != s)
                for g, s in zip(guard.sizes, spec.shape)):
            raise ValueError(f"the guard {guard.to_mlir()} of input {index} does not fit "
                             f"its type {spec}")
        if guard.device is not None and guard.device.split(":")[0] != device:
            raise ValueError(f"the guard {guard.to_mlir()} of input {index} does not fit "
                             f"an artifact that runs on {device}")


def _with_abi_guards(guards: GraphGuards, inputs: Sequence[TensorSpec],
                     device: str) -> GraphGuards:
    """`guards`, checked against the signature, with the ABI's guards for
    the arguments that have none."""
    _check_guards_fit(guards, inputs, device)
    implied = signature_guards(inputs, device)
    symbols, arguments = list(guards.symbols), []
    for guard, default in zip(guards.arguments, implied.arguments):
        if guard is None:
            guard = default
            symbols += [implied.symbol(name) for name in default.symbols]
        arguments.append(guard)
    return GraphGuards(tuple(symbols), tuple(arguments))


def _raise_check(message: str) -> None:
    """Raises what eager raises for a failed run-time check: `message` is
    "<exception>: <text>" (loop.check)."""
    kind, _, text = message.partition(": ")
    exception = {"IndexError": IndexError, "ValueError": ValueError}.get(kind, RuntimeError)
    raise exception(text)


class Artifact:
    """A loaded artifact; calling it runs graph `graph` on PyTorch tensors.

    `guards` are the graph's shape guards as the importer emitted them
    (``GraphGuards.parse(graph_text)``); without them, the runtime checks what
    the signature and the ABI imply (``signature_guards``). An argument
    without a guard gets the ABI's. Either way the inputs are made contiguous
    and 16-byte aligned (copied where they are not) before the call."""

    def __init__(self, path: Union[str, Path], graph: str = "forward",
                 guards: Optional[GraphGuards] = None):
        from kiln.cache import elf_problem

        self.path = Path(path)
        self.graph = graph
        # A cheap guard before dlopen, which may crash the process on a
        # truncated file (kiln.compiler's artifacts are verified in full).
        problem = elf_problem(self.path)
        if problem:
            raise ValueError(f"{self.path} is not a Kiln artifact: {problem}")
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
        # Run-time checks (kiln_<graph>_checks): their flags are the last
        # results, which the caller never sees; a positive one fails the run.
        checks = f"kiln_{graph}_checks"
        self.checks: Tuple[str, ...] = tuple(
            self._string(checks).decode().split("\n")) if hasattr(self._lib, checks) else ()
        if self.checks:
            self.results = self.results[:-len(self.checks)]
        if guards is None:
            guards = signature_guards(self.inputs, self.device)
        else:
            guards = _with_abi_guards(guards, self.inputs, self.device)
        self.guards = guards
        # The artifact runs parallel loops on PyTorch's own OpenMP runtime
        # (Kiln's OpenMP layer finds it): each call uses as many threads as
        # PyTorch does (torch.set_num_threads, OMP_NUM_THREADS), set for
        # the calling thread, as OpenMP keeps it.
        self._set_omp_threads = getattr(self._lib, "omp_set_num_threads", None) \
            if self.device == "cpu" else None
        if self.device == "cuda":
            self._take_error = self._lib.kiln_cuda_take_error
            self._take_error.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            self._take_error.restype = ctypes.c_int
            self._current_stream = _current_stream_function()
        # Per argument, the order of the caller's dimensions that gives the
        # graph's (Artifact.permuted), or None: the caller's tensor as it is.
        self._input_orders: Tuple[Optional[Tuple[int, ...]], ...] = (None,) * len(self.inputs)
        self._result_orders: Tuple[Optional[Tuple[int, ...]], ...] = (None,) * len(self.results)
        self._input_array = ctypes.c_void_p * max(len(self.inputs), 1)
        self._output_array = ctypes.c_void_p * max(len(self.results) + len(self.checks), 1)
        # What the checks of a call found, by everything they depend on
        # (dtypes, shapes, strides, devices, alignment): a repeated call
        # with the same kind of inputs skips them.
        self._plans: Dict[Tuple, _CallPlan] = {}
        pointers = ctypes.POINTER(ctypes.c_void_p)
        sizes = ctypes.POINTER(ctypes.c_int64)
        self._run.argtypes = [pointers, pointers, sizes, ctypes.c_void_p]
        self._run.restype = ctypes.c_int32
        self._result_sizes.argtypes = [sizes, sizes]
        self._result_sizes.restype = ctypes.c_int32

    def permuted(self, input_orders: Sequence[Optional[Sequence[int]]],
                 result_orders: Sequence[Optional[Sequence[int]]]) -> "Artifact":
        """This artifact for callers whose tensors hold the graph's arguments
        and results in another order of dimensions: the graph's argument i
        is ``tensors[i].permute(input_orders[i])``, and its result j is
        ``result.permute(result_orders[j])`` of the tensor returned (None:
        the tensor as it is). An NCHW tensor in channels-last memory is an
        NHWC argument with order (0, 2, 3, 1), without a view made per call."""
        if len(input_orders) != len(self.inputs) or len(result_orders) != len(self.results):
            raise ValueError(f"{self.path}: expected {len(self.inputs)} input and "
                             f"{len(self.results)} result orders")
        permuted = copy.copy(self)
        permuted._input_orders = tuple(None if o is None else tuple(o) for o in input_orders)
        permuted._result_orders = tuple(None if o is None else tuple(o) for o in result_orders)
        permuted._plans = {}
        return permuted

    def _string(self, symbol: str) -> bytes:
        return ctypes.cast(getattr(self._lib, symbol), ctypes.c_char_p).value

    def _raise_cuda_error(self) -> None:
        message = getattr(_error_buffers, "message", None)
        if message is None:
            message = _error_buffers.message = ctypes.create_string_buffer(1024)
        if self._take_error(message, len(message)):
            raise RuntimeError(f"Kiln CUDA runtime: {message.value.decode()}")

    def _plan_key(self, tensors: Sequence) -> Optional[Tuple]:
        """What the guard and layout checks of a call depend on; None when
        an argument is not a tensor (the checks then say why)."""
        # Every call of a compiled model computes this: it is kept lean.
        # Only complex tensors can be conjugate views; any may be negative.
        try:
            key = [(t.dtype, t.shape, t.stride(), t.device, t.data_ptr() % ALIGNMENT,
                    t.is_neg() or (t.dtype.is_complex and t.is_conj())) for t in tensors]
        except (AttributeError, TypeError):  # Not a tensor: the checks say why.
            return None
        if self.device == "cuda" and _cuda_available():
            key.append(_current_cuda_device_function()())
        return tuple(key)

    def _plan(self, tensors: Sequence) -> Tuple[List, "_CallPlan"]:
        """Checks the inputs (or finds that a call with the same kind of
        inputs did); returns the inputs to pass, contiguous and aligned, and
        what the call needs besides."""
        key = self._plan_key(tensors)
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            return list(tensors), plan
        tensors = [t.permute(order) if order is not None and getattr(t, "ndim", None) ==
                   len(order) else t for t, order in zip(tensors, self._input_orders)] + \
            list(tensors[len(self._input_orders):])
        self.check_guards(tensors)
        inputs = [_aligned(_as_stored(t).contiguous()) for t in tensors]
        self.guards.check_layout(inputs, describe=self._describe_input)
        shapes = self.result_shapes(inputs)
        layouts = None
        if any(order is not None for order in self._result_orders):
            layouts = [None if order is None else _caller_layout(shape, order)
                       for shape, order in zip(shapes, self._result_orders)]
        plan = _CallPlan(self._expected_device(), shapes,
                         [torch_dtype(spec.dtype) for spec in self.results],
                         self._input_sizes(inputs), layouts)
        # Inputs used as they are (the caller's, or views of them in the
        # graph's order, at the same address) make the plan valid for the
        # same key.
        if key is not None and all(a is b for a, b in zip(inputs, tensors)):
            if len(self._plans) >= _MAX_PLANS:
                self._plans.clear()
            self._plans[key] = plan
        return inputs, plan

    def _expected_device(self):
        import torch

        if self.device == "cuda":
            if not _cuda_available():
                raise RuntimeError(f"{self.path} runs on CUDA GPUs, and PyTorch sees none")
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")

    def check_guards(self, tensors: Sequence) -> None:
        """Raises GuardError naming the first input that breaks an assumption:
        the dtype, then the guards (device, rank, sizes, size symbols)."""
        import torch

        if len(tensors) != len(self.inputs):
            raise GuardError(f"expected {len(self.inputs)} inputs, got {len(tensors)}")
        for index, (tensor, spec) in enumerate(zip(tensors, self.inputs)):
            if not isinstance(tensor, torch.Tensor):
                raise GuardError(f"{self._describe_input(index)}: got {type(tensor).__name__}, not a tensor")
            if tensor.dtype != torch_dtype(spec.dtype):
                raise GuardError(f"{self._describe_input(index)}: dtype is {tensor.dtype}")
        current = None
        if self.device == "cuda":
            current = self._expected_device().index
        elif self.device == "cpu":
            for index, tensor in enumerate(tensors):
                # Guards may leave the device out; the artifact still runs on the CPU.
                if tensor.device.type != "cpu":
                    raise GuardError(f"{self._describe_input(index)}: tensor is on "
                                     f"{tensor.device}, the graph runs on cpu")
        self.guards.check(tensors, current_cuda=current, describe=self._describe_input)

    def _describe_input(self, index: int) -> str:
        return f"input {index} (expected {self.inputs[index]})"

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

        inputs, plan = self._plan(tensors)
        if out is None:
            device = plan.device
            out = [torch.empty_strided(shape, strides, dtype=dtype, device=device)
                   for shape, strides, dtype in plan.allocations]
            if poison_results:
                for result in out:
                    _poison(result)
        else:
            written = out
            if plan.result_layouts is not None and len(out) == len(self._result_orders):
                # The graph writes views of the results in its own order.
                written = [o.permute(order) if order is not None and
                           getattr(o, "ndim", None) == len(order) else o
                           for o, order in zip(out, self._result_orders)]
            self._check_results(written, plan.result_shapes, plan.device, inputs)
        in_ptrs = self._input_array(*[t.data_ptr() for t in inputs])
        flags = [torch.empty((), dtype=torch.int32) for _ in self.checks]
        # A permuted view starts where its tensor does: the results' own
        # addresses are the graph's buffers.
        out_ptrs = self._output_array(*[t.data_ptr() for t in out],
                                      *[f.data_ptr() for f in flags])
        stream = self._current_stream(plan.device) if self.device == "cuda" else None
        if self._set_omp_threads is not None:
            # Per calling thread, as OpenMP keeps it (autograd's threads too).
            self._set_omp_threads(torch.get_num_threads())
        status = self._run(in_ptrs, out_ptrs, plan.input_sizes, stream)
        if status != 0:
            raise RuntimeError(f"kiln_{self.graph}_run failed with status {status}")
        if self.device == "cuda":
            self._raise_cuda_error()
        for message, flag in zip(self.checks, flags):
            if int(flag) > 0:
                _raise_check(message)
        return list(out)
