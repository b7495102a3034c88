"""Capturing functions with make_fx (capture): Kiln's decompositions
(DECOMPOSITIONS), the compositions of a few PyTorch functions that tracing
runs (as_composites), the resampling ops kept whole, stack traces that
point at the user's code, and functionalizing functions that write into
their inputs.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import threading
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch.fx.experimental.proxy_tensor import PythonKeyTracer, make_fx
from torch.overrides import TorchFunctionMode
from torch.fx.passes.shape_prop import ShapeProp

from kiln import decompositions as kiln_decompositions
from kiln import ctc, recurrent
from kiln.importer.errors import _TORCH_DIR
from kiln.importer.op_table import RESAMPLING_OPS, _OPS
from kiln.importer.rewrites import (_scaled_size, _scatter_into_fresh_views, _writes_an_argument,
                                    canonicalize, eliminate_dead_code)

aten = torch.ops.aten


_TORCH_MAJOR = int(re.findall(r"\d+", torch.__version__)[0])


# torch 1.13's Tracer records `traceback.walk_stack(user_frame)`, innermost
# frame first; later versions and Dynamo print innermost last, like Python.
_TRACES_INNERMOST_FIRST = _TORCH_MAJOR < 2


_FRAME_START_RE = re.compile(r'^  File "', re.MULTILINE)


def _innermost_last(trace: str) -> str:
    """Reorders a stack trace recorded innermost-first into Python's order."""
    starts = [m.start() for m in _FRAME_START_RE.finditer(trace)]
    frames = [trace[a:b] for a, b in zip(starts, starts[1:] + [len(trace)])]
    return "".join(f if f.endswith("\n") else f + "\n" for f in reversed(frames))


# What tracing changes for its duration is the process's (cuDNN's and
# oneDNN's switches, the attention backend, the resampling ops' Python
# kernels): one thread traces at a time.
_TRACING_LOCK = threading.RLock()


def _resampling_by_default(vec: Any) -> Callable:
    """A kernel of a resampling op's ``.vec`` overload (an output size or
    scale factors) that calls its ``.default`` overload (the output size and
    a scale per spatial dimension), as ATen's composite does, with sizes
    that may be symbolic: ATen's own composite takes concrete sizes only."""
    default = vec.overloadpacket.default

    def kernel(input, output_size, *rest):
        # Linear modes take align_corners between the size and the factors.
        *align_corners, scale_factors = rest
        spatial = input.dim() - 2
        if output_size is not None:
            sizes, scales = list(output_size), [None] * spatial
        else:
            scales = list(scale_factors)
            sizes = [_scaled_size(input.shape[2 + d], scales[d]) for d in range(spatial)]
        return default(input, sizes, *align_corners, *scales)
    return kernel


@contextlib.contextmanager
def keeping_resampling_whole() -> Iterator[None]:
    """Makes make_fx record the resampling ops whole: torch 2.x registers
    Python kernels of them at the CompositeImplicitAutograd and Autograd
    keys, which its python dispatcher runs while tracing, and which
    decompose them. In their place the ``.vec`` overloads reach
    ``.default`` through _resampling_by_default, and autograd records
    ``upsample_*_backward``."""
    keys = [getattr(torch._C.DispatchKey, name) for name in
            ("CompositeImplicitAutograd", "Autograd")]
    with _TRACING_LOCK:
        removed = [(op, key, op.py_kernels.pop(key)) for op in RESAMPLING_OPS
                   for key in keys if key in getattr(op, "py_kernels", {})]
        replaced = {op for op, _, _ in removed if op._overloadname == "vec"}
        for op in replaced:
            op.py_kernels[keys[0]] = _resampling_by_default(op)

        def forget_dispatch() -> None:
            for op in {op for op, _, _ in removed}:
                getattr(op, "_dispatch_cache", {}).clear()

        forget_dispatch()
        try:
            yield
        finally:
            for op in replaced:
                del op.py_kernels[keys[0]]
            for op, key, kernel in removed:
                op.py_kernels[key] = kernel
            forget_dispatch()


# A torch function mode sees a Python function (F.affine_grid) and not the
# ops it calls, so both are here.
_COMPOSITE_FUNCTIONS = {
    torch.nn.functional.affine_grid: kiln_decompositions.affine_grid,
    torch.affine_grid_generator: kiln_decompositions.checked_affine_grid_generator,
    torch.nn.functional.ctc_loss: ctc.ctc_loss,
    torch.ctc_loss: ctc.ctc_loss_reduced,
}


class _Composites(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        composite = _COMPOSITE_FUNCTIONS.get(func) or recurrent.cells_of(func, args, kwargs)
        return (composite or func)(*args, **kwargs)


def as_composites() -> TorchFunctionMode:
    """A context in which a few PyTorch functions run as compositions of
    other ops while tracing: above autograd, which then differentiates the
    composition rather than recording the function's own gradient.
    Recurrent layers and cells run their cells' arithmetic
    (kiln.recurrent), not fused CUDA cells or oneDNN's layer;
    affine_grid_generator runs Kiln's decomposition, whose gradient is a
    product with the pixels' coordinates, not PyTorch's gradient, which
    builds them by writes into a fresh tensor (and would need
    functionalizing, which loses autograd's graph of a training step on
    torch 2.x); the CTC loss runs its recursion (kiln.ctc), which no fx op
    holds."""
    return _Composites()


@contextlib.contextmanager
def _recording_stack_traces() -> Iterator[None]:
    """Makes make_fx's tracer record each node's stack trace (torch 1.13,
    whose make_fx has no option for it)."""
    overridden = "record_stack_traces" in PythonKeyTracer.__dict__
    saved = PythonKeyTracer.record_stack_traces
    PythonKeyTracer.record_stack_traces = True
    try:
        yield
    finally:
        if overridden:
            PythonKeyTracer.record_stack_traces = saved
        else:
            del PythonKeyTracer.record_stack_traces  # Inherit Tracer's default again.


@functools.lru_cache(maxsize=None)
def _is_torch_file(filename: str) -> bool:
    return _TORCH_DIR in Path(filename).resolve().parents


# Whether this thread's make_fx keeps the user's frames (_keeping_user_frames).
_USER_FRAMES = threading.local()


def _install_user_frame_filter() -> bool:
    """Gives PythonKeyTracer (torch 2.x) a frame filter that keeps every
    frame outside torch while _keeping_user_frames holds on this thread, and
    is torch's own filter elsewhere (other threads' traces included). Its
    own keeps the frames from the first ``forward`` on, and none where no
    module's forward is on the stack, as when the traced function is a
    plain function: the nodes would lose their source locations. False
    where the tracer has no filter (torch 1.13)."""
    inherited = getattr(PythonKeyTracer, "_filter_traceback_frames", None)
    if inherited is None:
        return False
    if getattr(inherited, "kiln_keeps_user_frames", False):
        return True

    def filter_frames(tracer: Any, frames: traceback.StackSummary) -> traceback.StackSummary:
        if not getattr(_USER_FRAMES, "active", False):
            return inherited(tracer, frames)
        # The user's frames, wherever they are, and Kiln's (which
        # _unrolled_hint reads).
        return traceback.StackSummary.from_list(
            [frame for frame in frames if not _is_torch_file(frame.filename)])

    filter_frames.kiln_keeps_user_frames = True  # type: ignore[attr-defined]
    PythonKeyTracer._filter_traceback_frames = filter_frames
    return True


@contextlib.contextmanager
def _keeping_user_frames() -> Iterator[None]:
    """Makes this thread's make_fx (torch 2.x) keep the user's frames in
    each node's stack trace (_install_user_frame_filter)."""
    with _TRACING_LOCK:
        installed = _install_user_frame_filter()
    saved = getattr(_USER_FRAMES, "active", False)
    _USER_FRAMES.active = installed
    try:
        yield
    finally:
        _USER_FRAMES.active = saved


def _input_list(example_inputs: Sequence[Any]) -> List[Any]:
    """The example inputs as a list, one entry per argument of the function."""
    if isinstance(example_inputs, torch.Tensor) or not isinstance(example_inputs, (tuple, list)):
        raise TypeError("example_inputs must be a tuple or list of the function's "
                        f"arguments, not {type(example_inputs).__name__}")
    return list(example_inputs)


def _tensor_copies(example_inputs: Sequence[Any]) -> List[Any]:
    """The inputs with every tensor copied, for tracing on real values.

    Tracing runs the function: on the caller's tensors an in-place write
    would change them. And make_fx tracks tensors by identity: given one
    tensor as two inputs, it binds every use to the last placeholder, and
    the graph computes `y + y` for `x + y`; copies give each input its own.
    """
    flat, spec = pytree.tree_flatten(_input_list(example_inputs))
    flat = [leaf.detach().clone().requires_grad_(leaf.requires_grad)
            if isinstance(leaf, torch.Tensor) else leaf for leaf in flat]
    return pytree.tree_unflatten(flat, spec)


# Ops whose decomposition in PyTorch's table leaves prims ops that have no
# fx equivalent (``prims.signbit``) or scalars where fx wants tensors
# (``where(mask, 0.0, x)``); capture rewrites them itself (_EQUIVALENT_OPS).
_NOT_DECOMPOSED = ("aten.floor_divide.", "aten.masked_fill.")


# Ops of the table that Kiln lowers best as their decompositions: torch
# 2.x's batch norms, and the gradients of softmax and of normalizations
# (elementwise arithmetic and row reductions that fuse with their
# neighbours).
_DECOMPOSED_ANYWAY = ("aten._native_batch_norm_legit", "aten._softmax_backward_data.",
                      "aten._log_softmax_backward_data.", "aten.native_layer_norm_backward.",
                      "aten.native_group_norm_backward.", "aten.native_batch_norm_backward.")


def _kept_whole(op: Any) -> bool:
    """Whether tracing keeps `op` whole: an op of the fx table (less those
    Kiln lowers best decomposed), or one whose decomposition leaves prims
    without an fx op, or a resampling."""
    return (op in _OPS and not str(op).startswith(_DECOMPOSED_ANYWAY)) \
        or str(op).startswith(_NOT_DECOMPOSED) or op in RESAMPLING_OPS


def _decompositions() -> Dict[Any, Callable]:
    """PyTorch's decompositions (``torch._decomp``, ``torch._refs``) of the
    ATen ops that the fx dialect lacks (``aten.t``, ``aten.transpose``,
    ``aten.stack``, ``aten.rsub``, ``aten.native_batch_norm``, ...): the ops
    the table has are kept whole. The few prims ops that the decompositions
    leave become fx ops in canonicalize."""
    from torch._decomp import decomposition_table

    table = {op: fn for op, fn in decomposition_table.items() if not _kept_whole(op)}
    table[aten.cudnn_grid_sampler.default] = _cudnn_grid_sampler
    table[aten.cudnn_grid_sampler_backward.default] = _cudnn_grid_sampler_backward
    # Rearrangements that torch 1.13 has no decomposition of: views,
    # permutes and gathers, which lower to index arithmetic.
    table[aten.pixel_shuffle.default] = _pixel_shuffle
    table[aten.pixel_unshuffle.default] = _pixel_unshuffle
    table[aten.channel_shuffle.default] = _channel_shuffle
    table[aten.unfold.default] = _unfold
    table[aten.roll.default] = _roll
    table[aten.repeat.default] = _repeat
    table.setdefault(aten.smooth_l1_loss.default, _smooth_l1_loss)
    # Gradients of resampling and padding, adaptive max pooling, index_add:
    # where PyTorch has no decomposition, or (index_add, torch 1.13) one that
    # does not trace; and affine_grid, whose coordinates Kiln's builds
    # without the writes into a fresh tensor that torch 2.x's makes (which
    # would need functionalizing, losing autograd's graph of a training step).
    preferred = {aten.affine_grid_generator.default}
    for op, fn in kiln_decompositions.table().items():
        if op not in table or op in preferred \
                or (op is aten.index_add.default and _TORCH_MAJOR < 2):
            table[op] = fn
    return table


def _smooth_l1_loss(x: torch.Tensor, y: torch.Tensor, reduction: int = 1,
                    beta: float = 1.0) -> torch.Tensor:
    """Squared below `beta` (halved and over `beta`), absolute above (less
    half `beta`); `beta` 0 is the L1 loss. `reduction` is ATen's: 0 none,
    1 mean, 2 sum."""
    difference = (x - y).abs()
    if beta == 0:
        loss = difference
    else:
        loss = torch.where(difference < beta, 0.5 * difference * difference / beta,
                           difference - 0.5 * beta)
    return loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss


def _repeat(x: torch.Tensor, repeats: Sequence[int]) -> torch.Tensor:
    """Tensor.repeat as an expand of `x` with a unit dimension before each of
    its own, merged back: [d] repeated r times is [1, d] expanded to [r, d],
    viewed as [r*d]. The same index arithmetic as a repeat's, and a count
    that follows a dynamic size (instance norm's ``weight.repeat(N)``) is
    then an expand's size, which a size symbol names."""
    shape = [1] * (len(repeats) - x.dim()) + list(x.shape)
    if 0 in repeats:  # Nothing to expand: an empty result.
        return x.new_zeros([count * own for count, own in zip(repeats, shape)])
    units = [size for own in shape for size in (1, own)]
    stretched = [size for count, own in zip(repeats, shape) for size in (count, own)]
    return x.reshape(units).expand(stretched).reshape(
        [count * own for count, own in zip(repeats, shape)])


# The end of a slice that runs to the end of its dimension (ATen's INT64_MAX),
# which means the same at every size.
_FULL_SLICE_END = 2 ** 63 - 1


def _roll(x: torch.Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> torch.Tensor:
    """torch.roll as the concatenation of a dimension's last `shift`
    elements and the others: slices with bounds counted from the end, which
    mean the same at every size (PyTorch's decomposition slices at `size -
    shift`, which a dynamic size changes). Without dimensions, the flattened
    tensor rolls."""
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: {len(shifts)} shifts need as many dims")
        return _roll(x.reshape(-1), shifts, [0]).view(x.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
    for shift, dim in zip(shifts, dims):
        if x.shape[dim] == 0:
            continue  # Nothing to move.
        if abs(shift) >= x.shape[dim]:
            shift %= x.shape[dim]  # A static size's; a dynamic one refuses.
        if shift:
            # A positive shift puts the last `shift` elements first (bounds
            # from the end), a negative one the first `-shift` last (bounds
            # from the start): the same two slices.
            x = torch.cat([aten.slice.Tensor(x, dim, -shift, _FULL_SLICE_END),
                           aten.slice.Tensor(x, dim, 0, -shift)], dim)
    return x


def _pixel_shuffle(x: torch.Tensor, factor: int) -> torch.Tensor:
    """[..., C·r², H, W] -> [..., C, H·r, W·r]: channel c·r² + i·r + j
    moves to row h·r + i, column w·r + j."""
    *batch, channels, height, width = x.shape
    lead = len(batch)
    grouped = x.reshape(*batch, channels // (factor * factor), factor, factor, height, width)
    moved = grouped.permute(*range(lead), lead, lead + 3, lead + 1, lead + 4, lead + 2)
    return moved.reshape(*batch, channels // (factor * factor), height * factor, width * factor)


def _pixel_unshuffle(x: torch.Tensor, factor: int) -> torch.Tensor:
    """pixel_shuffle's inverse: [..., C, H·r, W·r] -> [..., C·r², H, W]."""
    *batch, channels, height, width = x.shape
    lead = len(batch)
    split = x.reshape(*batch, channels, height // factor, factor, width // factor, factor)
    moved = split.permute(*range(lead), lead, lead + 2, lead + 4, lead + 1, lead + 3)
    return moved.reshape(*batch, channels * factor * factor, height // factor, width // factor)


def _channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    """[N, C, ...]: channel g·(C/G) + k moves to k·G + g."""
    batch, channels, *extent = x.shape
    grouped = x.reshape(batch, groups, channels // groups, *extent)
    return grouped.transpose(1, 2).reshape(batch, channels, *extent)


def _unfold(x: torch.Tensor, dimension: int, size: int, step: int) -> torch.Tensor:
    """Tensor.unfold: the windows of `size` elements every `step` along
    `dimension`, as a new last dimension. A gather of the windows' elements
    (the graph's values have no storage to view), so writes into the result
    do not reach `x`."""
    if x.dim() == 0:
        return x.reshape(1)[:size]
    dimension %= x.dim()
    count = (x.shape[dimension] - size) // step + 1
    starts = torch.arange(count, device=x.device) * step
    positions = starts.unsqueeze(1) + torch.arange(size, device=x.device)
    windows = x.index_select(dimension, positions.reshape(-1))
    windows = windows.reshape(*x.shape[:dimension], count, size, *x.shape[dimension + 1:])
    return windows.movedim(dimension + 1, -1)


def _cudnn_grid_sampler(input: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """What ``grid_sampler`` dispatches to on CUDA for the cases cuDNN has:
    bilinear sampling, zeros padding, aligned corners."""
    return aten.grid_sampler_2d.default(input, grid, 0, 0, True)


def _cudnn_grid_sampler_backward(input: torch.Tensor, grid: torch.Tensor,
                                 grad: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The gradient of _cudnn_grid_sampler, which autograd records when it
    differentiates grid sampling on CUDA."""
    return aten.grid_sampler_2d_backward.default(grad, input, grid, 0, 0, True, [True, True])


# What capture decomposes while tracing: ATen overload -> its decomposition.
DECOMPOSITIONS: Dict[Any, Callable] = _decompositions()


def capture(fn: Callable, example_inputs: Sequence[Any], *,
            math_attention: bool = False) -> torch.fx.GraphModule:
    """Traces `fn` (a function or an nn.Module) to an ATen-level graph.

    Runs ``make_fx(fn)(*example_inputs)`` on copies of the inputs (so that
    tracing leaves the caller's tensors as they were; a tensor passed twice
    stays two inputs) with DECOMPOSITIONS, so that ops the fx dialect lacks
    become ops it has, recording each node's stack trace (innermost frame
    last) so that errors can point at the user's code, then drops dead nodes
    (such as the ``aten.detach`` that autograd adds when an input requires
    grad). Parameters, buffers and tensor constants that `fn` reads become
    ``get_attr`` nodes: lift_constants turns them into graph inputs.

    A function that writes into its inputs (``x[0] = 0``, ``y.add_(1)``) is
    traced again, functionalized: the graph computes each written input's
    new value and returns them after the function's own results, as
    ``(results, (new values...))``; the graph module's
    ``kiln_input_updates`` lists which inputs they are (see
    _return_input_updates). Writes into anything else (a module's buffer)
    stay in-place ops, which the importer refuses.

    With `math_attention`, ``scaled_dot_product_attention`` (torch 2.x)
    traces as its math, matrix products around a softmax, rather than as
    the op of a fused kernel: Kiln lowers those ops for static sizes only.
    Otherwise, on CUDA, it traces as the memory-efficient kernel's op where
    that kernel takes the call, else as its math: Kiln lowers both, and not
    the flash and cuDNN kernels' ops. There, attention that `fn` writes out
    (products around a softmax, kiln.attention's matcher) is traced again
    as ``scaled_dot_product_attention``, as the backend rewrites it.
    """
    on_cuda = any(isinstance(t, torch.Tensor) and t.is_cuda
                  for t in pytree.tree_flatten(list(example_inputs))[0])
    if math_attention:
        attention = _math_attention()
    elif on_cuda:
        attention = efficient_attention_kernel()
    else:
        attention = contextlib.nullcontext()
    with _TRACING_LOCK, attention:
        gm = _trace(fn, example_inputs)
        if on_cuda and not math_attention:
            gm = _fuse_written_out_attention(gm, example_inputs)
        if any(n.op == "call_function" and _writes_an_argument(n) for n in gm.graph.nodes):
            try:
                functional = _trace(_functionalize(fn), example_inputs)
            except RuntimeError as error:
                # Autograd inside `fn` (torch.autograd.grad of a training
                # step) sees functionalization's wrappers, which do not
                # require grad. The first trace's graph has the gradients
                # as ops already, and functionalizes without autograd.
                try:
                    functional = _trace(_functionalize(_replaying(gm)), example_inputs)
                except Exception:
                    raise error from None
            gm = functional
            _return_input_updates(gm)
    return gm


def _replaying(gm: torch.fx.GraphModule) -> Callable:
    """A function that runs `gm`'s graph op by op on its flattened
    arguments, each op recording the stack trace of the node it replays, so
    that a trace of it points at the user's code as `gm` did."""
    preserving = getattr(torch.fx.traceback, "preserve_node_meta", None)
    if preserving is None:  # torch 1.13: traces are recorded innermost first.
        for node in gm.graph.nodes:
            if node.stack_trace and _TRACES_INNERMOST_FIRST:
                node.stack_trace = _innermost_last(node.stack_trace)
        preserving = torch.fx.traceback.override_stack_trace

    def replay(*args: Any) -> Any:
        with preserving():
            results = torch.fx.Interpreter(gm).run(*pytree.tree_flatten(list(args))[0],
                                                   enable_io_processing=False)
        return gm.graph.process_outputs(results)
    return replay


def _math_attention() -> contextlib.AbstractContextManager:
    """Makes scaled_dot_product_attention choose its math backend (torch
    2.x; torch 1.13 has no fused attention)."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel(SDPBackend.MATH)
    except ImportError:
        pass
    choose = getattr(getattr(torch.backends, "cuda", None), "sdp_kernel", None)  # torch < 2.2
    if choose is None or _TORCH_MAJOR < 2:
        return contextlib.nullcontext()
    return choose(enable_flash=False, enable_mem_efficient=False, enable_math=True)


def efficient_attention_kernel() -> contextlib.AbstractContextManager:
    """Makes scaled_dot_product_attention choose the memory-efficient
    kernel, else its math (torch 2.3 and later; others choose as they
    would): on CUDA, the fused kernel whose ops Kiln lowers."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])
    except (ImportError, TypeError):
        return contextlib.nullcontext()


def _fuse_written_out_attention(gm: torch.fx.GraphModule,
                                example_inputs: Sequence[Any]) -> torch.fx.GraphModule:
    """`gm` traced again with each attention it writes out replaced by one
    ``scaled_dot_product_attention`` call (kiln.attention); `gm` itself
    where it writes none, or where torch's fused attention takes no scale
    (before 2.1)."""
    from kiln.attention import find_explicit_attention, fuse_explicit_attention

    fused = getattr(getattr(torch.ops.aten, "scaled_dot_product_attention", None),
                    "default", None)
    if fused is None or not any(a.name == "scale" for a in fused._schema.arguments):
        return gm
    # The matcher reads every node's value: run the graph only where it has
    # a softmax to match around.
    if not any(n.op == "call_function" and "softmax" in str(n.target)
               for n in gm.graph.nodes):
        return gm
    values: Dict[torch.fx.Node, Any] = {}

    class _Recorder(torch.fx.Interpreter):
        def run_node(self, node: torch.fx.Node) -> Any:
            values[node] = super().run_node(node)
            return values[node]

    with torch.no_grad():
        _Recorder(gm).run(*pytree.tree_flatten(list(example_inputs))[0],
                          enable_io_processing=False)
    if not find_explicit_attention(gm, values):
        return gm
    fuse_explicit_attention(gm, values, fused)
    return _trace(_replaying(gm), example_inputs)


def _functionalize(fn: Callable) -> Callable:
    """`fn` with its in-place writes turned into values and copied back into
    its inputs at the end (torch.func on torch 2.x, functorch on 1.13)."""
    try:
        from torch.func import functionalize
    except ImportError:
        from functorch import functionalize
    return functionalize(fn)


def _trace(fn: Callable, example_inputs: Sequence[Any]) -> torch.fx.GraphModule:
    """capture's trace of `fn`, on copies of the inputs."""
    inputs = _tensor_copies(example_inputs)
    options = {"tracing_mode": "real", "decomposition_table": DECOMPOSITIONS}
    # Without cuDNN and oneDNN, grid sampling traces as grid_sampler_2d.
    with torch.backends.cudnn.flags(enabled=False), \
            torch.backends.mkldnn.flags(enabled=False), as_composites():
        if "record_stack_traces" in inspect.signature(make_fx).parameters:
            # torch 2.x: the tracer is configured per call.
            with keeping_resampling_whole(), _keeping_user_frames():
                gm = make_fx(fn, record_stack_traces=True, **options)(*inputs)
        else:
            with _recording_stack_traces():
                gm = make_fx(fn, **options)(*inputs)
    for node in gm.graph.nodes:
        if _TRACES_INNERMOST_FIRST and node.meta.get("stack_trace"):
            node.meta["stack_trace"] = _innermost_last(node.meta["stack_trace"])
    canonicalize(gm)
    writes = [n for n in gm.graph.nodes if n.op == "call_function" and _writes_an_argument(n)]
    if writes:
        if any("val" not in n.meta for n in writes):
            # torch 1.13 records no values while tracing; _copy_into_fresh
            # and _scatter_into_fresh_views need the shapes. Without
            # autograd, which refuses writes into a split's pieces that the
            # unsafe splits (now split_with_sizes) allowed.
            with torch.no_grad():
                ShapeProp(gm).propagate(*pytree.tree_flatten(_input_list(inputs))[0])
            canonicalize(gm)
        _scatter_into_fresh_views(gm)
    eliminate_dead_code(gm)
    gm.recompile()
    return gm


def _return_input_updates(gm: torch.fx.GraphModule) -> None:
    """Turns a functionalized graph's write-backs into its inputs
    (``copy_(input, new value)`` at the end) into results:
    ``gm.kiln_input_updates`` lists the indices of the inputs written, and
    if there are any, the output becomes ``(results, (new values...))``,
    which the caller copies into those inputs (kiln.compile's callable
    does)."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    updates = []
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is aten.copy_.default \
                and not node.users and node.args[0] in placeholders \
                and isinstance(node.args[1], torch.fx.Node):
            updates.append((placeholders.index(node.args[0]), node.args[1]))
            graph.erase_node(node)
    gm.kiln_input_updates = tuple(index for index, _ in updates)
    if updates:
        output = next(n for n in graph.nodes if n.op == "output")
        output.args = ((output.args[0], tuple(value for _, value in updates)),)
    gm.recompile()
