"""CUDA graphs for the graphs the backend compiles (its ``cuda_graphs`` option).

With ``torch.compile(model, backend="kiln", options={"cuda_graphs": True})``,
or ``mode="reduce-overhead"``, every AOT graph that compile_aten_graph
partitioned (Kiln's artifacts, the library calls and the ops left to PyTorch
between them) runs as one CUDA graph per set of input sizes, recorded and
replayed by PyTorch's CUDA graph trees, the machinery behind Inductor's
``reduce-overhead`` mode, so that a model behaves as it does under Inductor:

* a graph's first call per set of sizes runs it as it is (kernels load,
  GEMM algorithms are timed), the next records it, later ones replay it;
* parameters and buffers are read where they live; other inputs are copied
  into the graph's own buffers, unless they are outputs of an earlier graph
  of the same tree (a forward's activations that its backward reads);
* the graphs of a model (inference, or a training step's forward and
  backward) share one memory pool; their outputs live in it and stay valid
  until the same graph runs again (``torch.compiler.cudagraph_mark_step_begin``
  starts a new step; the ``clone_outputs`` option returns copies);
* a graph whose symbolic sizes took more than ``cuda_graph_limit`` sets of
  values runs new ones without graphs (said once on the ``kiln`` logger).

A graph that a CUDA graph cannot hold runs without one, and its report says
why (recording_problem): CPU tensors, more than one device, ops that read
device data on the host or size their results from it. A backward graph is
recorded only when its forward is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import torch
import torch.fx
import torch.utils._pytree as pytree

from kiln.logs import log
from kiln.rng import aten_target

__all__ = ["CudaGraphState", "graph_mode_options", "output_stack_traces",
           "record_graphs", "recording_problem"]


aten = torch.ops.aten


def _overloads(*names: str) -> frozenset:
    """The ATen overload packets named, those this torch has."""
    return frozenset(p for p in (getattr(aten, n, None) for n in names) if p is not None)


# Ops that read device data on the host (a synchronization, which a capture
# cannot hold) or whose result sizes depend on the data.
_HOST_READING_OPS = _overloads(
    "_local_scalar_dense", "item", "is_nonzero", "equal", "_assert_scalar", "nonzero",
    "nonzero_static", "masked_select", "_unique", "_unique2", "unique_dim",
    "unique_consecutive", "bincount", "histc", "repeat_interleave")

# Collectives in graphs (FSDP2's all-gathers, tensor parallelism's
# all-reduces, and their waits): they run in PyTorch between regions, and
# stay out of CUDA graphs.
_COLLECTIVE_NAMESPACES = ("_c10d_functional.", "c10d_functional.", "_dtensor.")


def _unbacked(value: Any) -> bool:
    """Whether `value`'s sizes depend on data (torch 2.x's unbacked symbols)."""
    try:
        from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    except ImportError:  # torch 1.x has no symbolic sizes.
        return False
    try:
        return bool(free_unbacked_symbols(value))
    except (AssertionError, TypeError):
        return False


def _describe(node: torch.fx.Node) -> str:
    if node.op == "placeholder":
        return f"input '{node.name}'"
    return f"'{node.name}' ({aten_target(node)})"


def recording_problem(gm: torch.fx.GraphModule, values: Mapping[torch.fx.Node, Any],
                      device: str) -> Optional[str]:
    """Why the ATen graph `gm`, whose nodes computed `values`, cannot run as
    a CUDA graph, or None if it can."""
    if device != "cuda":
        return f"the graph runs on the {device}"
    for node in gm.graph.nodes:
        if node.op == "call_function":
            target = aten_target(node)
            if getattr(target, "overloadpacket", target) in _HOST_READING_OPS:
                return (f"{_describe(node)} reads device data on the host or sizes its "
                        "result from it")
            if str(target).startswith(_COLLECTIVE_NAMESPACES):
                return (f"{_describe(node)} communicates with other processes, which "
                        "Kiln does not record in CUDA graphs")
        if any(_unbacked(v) for v in pytree.tree_flatten(values.get(node))[0]):
            return f"the sizes of {_describe(node)} depend on data"
    devices = set()
    for node in gm.graph.nodes:
        for value in pytree.tree_flatten(values.get(node))[0]:
            if isinstance(value, torch.Tensor):
                if value.device.type != "cuda":
                    return f"{_describe(node)} is a tensor on the {value.device.type}"
                devices.add(value.device)
    if len(devices) > 1:
        return f"the graph uses {len(devices)} devices: {sorted(map(str, devices))}"
    return None


def graph_mode_options(mode: Optional[str]) -> Dict[str, Any]:
    """The backend options that torch.compile's `mode` implies: Inductor's
    CUDA-graph modes (``reduce-overhead``, ``max-autotune``) turn
    ``cuda_graphs`` on; ``default`` and ``max-autotune-no-cudagraphs``
    leave it off."""
    if mode in (None, "default", "max-autotune-no-cudagraphs"):
        return {}
    if mode in ("reduce-overhead", "max-autotune"):
        return {"cuda_graphs": True}
    raise ValueError(f"torch.compile mode={mode!r} is not one Kiln knows: 'default', "
                     "'reduce-overhead', 'max-autotune' or 'max-autotune-no-cudagraphs'")


@dataclass
class CudaGraphState:
    """What the graphs of one Dynamo graph share: whether its forward runs
    as CUDA graphs (its backward may only then) and on which device."""

    forward_recorded: Optional[bool] = None
    device_index: Optional[int] = None


def _static_inputs(kind: str, gm: torch.fx.GraphModule, dynamo_inputs: int,
                   inputs: int) -> List[int]:
    """The inputs whose addresses stay the same from call to call:
    parameters and buffers (AOTAutograd's metadata says which, else they
    are the inputs it lifted ahead of Dynamo's), or a backward graph's
    saved values (every input before the tangents)."""
    if kind == "backward":
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        fixed = next((i for i, n in enumerate(placeholders)
                      if n.name.startswith("tangents")), len(placeholders))
        return list(range(fixed))
    context = torch._guards.TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None) if context is not None else None
    indices = getattr(metadata, "static_input_indices", None)
    if indices is not None:
        return list(indices)
    return list(range(max(inputs - dynamo_inputs, 0)))


def output_stack_traces(gm: torch.fx.GraphModule) -> List[Optional[str]]:
    """Per output of the ATen graph `gm`, where the model computes it: what
    the CUDA graph trees name when a caller reads an overwritten output.
    Taken before partitioning, which replaces the nodes that carry them."""
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    results = output.args[0]
    if not isinstance(results, (list, tuple)):
        results = [results]
    return [r.meta.get("stack_trace") if isinstance(r, torch.fx.Node) else None
            for r in results]


def _placeholder_info(gm: torch.fx.GraphModule) -> Sequence[Any]:
    try:
        from torch._inductor.cudagraph_utils import get_placeholder_info
    except ImportError:
        return ()
    return get_placeholder_info(gm.graph)


def _steal_inputs(compiled: torch.fx.GraphModule) -> Callable[[List[Any]], Any]:
    """`compiled` called with a list of arguments that it empties, as the
    CUDA graph trees expect of the functions they record (so that inputs
    they no longer need can be freed)."""
    def run(args: List[Any]) -> Any:
        inputs = list(args)
        args.clear()
        return compiled(*inputs)
    run._boxed_call = True  # type: ignore[attr-defined]
    return run


class _SizeBoundGraphs:
    """Runs a compiled graph (`plain`, called with a list of arguments that
    it empties) through the CUDA graph trees, one recording per
    set of symbolic sizes (the graph's integer inputs), up to `limit` sets;
    calls with further sets run without graphs."""

    def __init__(self, plain: Callable[[List[Any]], Any], name: str, record: Callable,
                 limit: int):
        self._plain = plain
        self._name = name
        self._record = record
        self._limit = limit
        self._graphed: Optional[Callable] = None
        self._sizes: set = set()
        self._warned = False
        self._boxed_call = True

    def __call__(self, args: List[Any]) -> Any:
        key = tuple(a for a in args if isinstance(a, int) and not isinstance(a, bool))
        if key not in self._sizes:
            if len(self._sizes) >= self._limit:
                if not self._warned:
                    self._warned = True
                    log.warning("%s recorded CUDA graphs for %d sets of sizes "
                                "(cuda_graph_limit); new sizes run without graphs",
                                self._name, self._limit)
                return self._plain(args)
            self._sizes.add(key)
        if self._graphed is None:
            # The trees record at run time, from real inputs.
            self._graphed = self._record(self._plain, args)
        return self._graphed(args)


def record_graphs(compiled: torch.fx.GraphModule, example_inputs: Sequence[Any], *,
                  kind: str, name: str, problem: Optional[str], state: CudaGraphState,
                  dynamo_inputs: int, limit: int,
                  stack_traces: List[Optional[str]]) -> "tuple[Callable, str]":
    """The boxed function that runs `compiled` (compile_aten_graph's module
    for an AOT graph of `kind`: "inference", "forward" or "backward") as
    CUDA graphs, and what its report says of them; or, when it cannot (the
    `problem` recording_problem found, a forward that runs without graphs,
    a torch without CUDA graph trees), the function that runs it plainly."""
    plain = _steal_inputs(compiled)
    if kind == "backward" and not state.forward_recorded:
        return plain, "not used: the forward graph runs without CUDA graphs"
    try:
        from torch._inductor import cudagraph_trees
    except ImportError:
        problem = problem or "this torch has no CUDA graph trees (torch 2.1 or later)"
    if problem is None and not torch.cuda.is_available():
        problem = "PyTorch sees no CUDA device"
    if problem is not None:
        if kind == "forward":
            state.forward_recorded = False
        if kind == "backward" and state.device_index is not None:
            # The trees follow the step's phase: a backward that runs
            # plainly after a recorded forward must say it has begun.
            manager = cudagraph_trees.get_manager(state.device_index,
                                                  create_if_none_exists=False)
            if manager is not None:
                def run_backward(args: List[Any]) -> Any:
                    manager.set_to_running_backward()
                    return plain(args)
                run_backward._boxed_call = True  # type: ignore[attr-defined]
                return run_backward, f"not used: {problem}"
        return plain, f"not used: {problem}"

    device_index = next((v.device.index for v in example_inputs
                         if isinstance(v, torch.Tensor) and v.device.type == "cuda"
                         and v.device.index is not None), torch.cuda.current_device())
    if kind == "forward":
        state.forward_recorded = True
        state.device_index = device_index
    static = _static_inputs(kind, compiled, dynamo_inputs, len(example_inputs))
    placeholders = _placeholder_info(compiled)

    def record(model: Callable, args: List[Any]) -> Callable:
        return cudagraph_trees.cudagraphify_impl(
            model, args, static, device_index=device_index,
            is_backward=kind == "backward", is_inference=kind == "inference",
            stack_traces=stack_traces, placeholders=placeholders)

    runner = _SizeBoundGraphs(plain, name, record, limit)
    return runner, f"recorded per set of input sizes (at most {limit})"
