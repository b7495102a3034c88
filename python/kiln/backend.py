"""Kiln as a ``torch.compile`` backend: ``torch.compile(model, backend="kiln")``.

TorchDynamo captures a model's Python into FX graphs and hands each to
kiln_backend. AOTAutograd, with the decompositions that Kiln's importer uses
(kiln.importer.DECOMPOSITIONS), turns it into ATen-level graphs: one for
inference, or a forward and a backward graph for training. Each of those goes
to compile_aten_graph, which partitions it:

* every node the importer and Kiln's lowerings support joins a region of
  such nodes (torch.fx's CapabilityBasedPartitioner keeps regions free of
  cycles), and each region is compiled by ``kiln-compile`` into one artifact;
* every other node runs in PyTorch, between the compiled regions, so that
  every model runs.

A region that fails to compile names the node its diagnostic points at; that
node leaves the supported set and the graph is partitioned again (compiled
regions that did not change come from the on-disk cache). What ran in
PyTorch, and why, is logged once per graph on the ``kiln`` logger, and kept
as the compiled module's ``kiln_report``. With ``options={"fallback":
"error"}`` any fallback raises instead.

Options (``torch.compile(model, backend="kiln", options={...})``) are
kiln.options.Options, listed with their defaults in docs/TorchCompile.md.

Shapes: a static size is part of a region's type; a symbolic one (Dynamo's
``dynamic=True``, ``mark_dynamic``, or its automatic dynamic shapes after a
size changed) is a dynamic dimension of the region, guarded by a Kiln size
symbol (``s0`` for Dynamo's ``s0``), so one artifact serves every size that
Dynamo's guards let through. Sizes computed from symbolic sizes (``2*s0``)
get symbols of their own. Size arithmetic (``sym_size``, ``s0 * 64``) runs
in Python; view-like ops take their sizes from their result's type.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import operator
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import (Any, Callable, Collection, Dict, List, Mapping, Optional,
                    Sequence, Set, Tuple)

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.tools_common import legalize_graph
from torch.fx.passes.utils.fuser_utils import fuse_as_graphmodule

from kiln.attention import detach_philox_state, fuse_explicit_attention, unused_philox_state
from kiln.compiler import compile_graph_text, pipeline_pass_options
from kiln.cudagraphs import (CudaGraphState, graph_mode_options,
                             output_stack_traces, record_graphs, recording_problem)
from kiln.diagnostics import KilnError
from kiln.guards import GraphGuards
from kiln.layouts import (NCHW_TO_NHWC, ChannelsLastPlan, convert_operands,
                          convolution_gradients_as_run, copy_restrided_storage_reads,
                          dense_order, plan_channels_last, running_layouts, static_strides)
from kiln.logs import log, register_with_torch
from kiln.importer import (DECOMPOSITIONS, RESAMPLING_OPS, UnsupportedOpError,
                           ValueInterpreter, canonicalize, check_supported, eliminate_dead_code,
                           efficient_attention_kernel, fake_mode_of, graph_device, import_graph,
                           keeping_resampling_whole, running_in, source_location)
from kiln.numerics import NumericsError, RegionCheck
from kiln.options import Options
from kiln.padding import padded_product_decompositions
from kiln.products import merge_shared_operand_products
from kiln.rng import aten_target, draw_seed, seed_random_ops, seeded
from kiln.runtime import Artifact

__all__ = ["FallbackError", "GraphReport", "NumericsError", "REPORTS",
           "compile_aten_graph", "kiln_backend", "register"]


# The reports of the graphs compiled last, newest last: what a benchmark or a
# test reads after torch.compile, which keeps the compiled modules to itself.
REPORTS: "collections.deque[GraphReport]" = collections.deque(maxlen=256)

aten = torch.ops.aten

# TORCH_LOGS="kiln" turns Kiln's logger on like PyTorch's (torch 2.x).
register_with_torch()

# The artifact's graph name: the same for every region, so that a region's
# text (and its cache entry) does not depend on where the graph has it.
_KERNEL_GRAPH = "kernel"

# Ops that only reinterpret their operand's memory in eager mode: a region of
# nothing else would turn free views into copies, so it stays in PyTorch.
_VIEW_OPS = {
    aten.view.default, aten._unsafe_view.default, aten.reshape.default,
    aten.permute.default, aten.expand.default, aten.squeeze.default,
    aten.squeeze.dim, aten.unsqueeze.default, aten.slice.Tensor, aten.select.int,
    aten.t.default, aten.transpose.int, aten.alias.default, aten.detach.default,
    aten.as_strided.default, operator.getitem,
}
if hasattr(aten.squeeze, "dims"):
    _VIEW_OPS.add(aten.squeeze.dims)

# Views that keep every element of their operand, and no more (not those
# that select, repeat or reinterpret): a region that would write one as a
# result writes the tensor it views instead (as many elements, without a
# transpose), and PyTorch makes the view.
_WHOLE_VIEWS = _VIEW_OPS - {aten.expand.default, aten.slice.Tensor, aten.select.int,
                            aten.as_strided.default, operator.getitem}


# The importer's decompositions, less those that AOTAutograd must not apply
# to a graph's tensor constants: ``lift_fresh`` (of ``torch.tensor(...)``)
# would become an alias of a real tensor while tracing with fake ones.
_BACKEND_DECOMPOSITIONS = {
    op: fn for op, fn in DECOMPOSITIONS.items()
    if not str(op).startswith(("aten.lift_fresh.", "aten.lift."))}


class FallbackError(RuntimeError):
    """Raised with ``fallback="error"`` when a node would run in PyTorch."""




@dataclass
class GraphReport:
    """What compile_aten_graph did with one graph."""

    name: str
    compiled_ops: int = 0
    kernels: int = 0
    # (op, reason) -> how many nodes ran in PyTorch for it.
    fallbacks: Dict[Tuple[str, str], int] = field(default_factory=dict)
    # op -> how many nodes called PyTorch's library kernel by choice
    # (Options.library_ops), not counted as fallbacks.
    library_calls: Dict[str, int] = field(default_factory=dict)
    # With the cuda_graphs option: why the graph cannot run as CUDA graphs
    # (None if it can), and what the backend did ("recorded ..." or "not
    # used: ...").
    cuda_graph_problem: Optional[str] = None
    cuda_graphs: Optional[str] = None
    # Matrix products merged into others that read the same operand
    # (Options.merge_products).
    merged_products: int = 0

    def summary(self) -> str:
        lines = [f"{self.name}: {self.compiled_ops} ops compiled into "
                 f"{self.kernels} artifact(s)"]
        if self.fallbacks:
            count = sum(self.fallbacks.values())
            lines[0] += f"; {count} op(s) ran in PyTorch:"
            for (op, reason), n in sorted(self.fallbacks.items()):
                lines.append(f"  {op} x{n}: {reason}")
        if self.library_calls:
            calls = ", ".join(f"{op} x{n}" for op, n in sorted(self.library_calls.items()))
            lines.append(f"  library kernels (option library_ops): {calls}")
        if self.merged_products:
            lines.append(f"  {self.merged_products} matrix products merged with others that "
                         "read the same operand (option merge_products)")
        if self.cuda_graphs is not None:
            lines.append(f"  CUDA graphs: {self.cuda_graphs}")
        return "\n".join(lines)


# ===----------------------------------------------------------------------=== #
# What a node is: values and support
# ===----------------------------------------------------------------------=== #


class _ValueRecorder(ValueInterpreter):
    """Runs a graph on its example inputs (in their fake mode, if they are
    fake) and keeps every node's value as it will be when the graph runs: a
    node in `layouts` gets its value in that memory format, the operands of
    `converted` (convolution, position) are made channels-last first, and a
    convolution's gradients have the layout that the library gives them. A
    view that those layouts make impossible is then a reshape
    (ValueInterpreter): the regions compute it so. Without them the graph
    runs as PyTorch will run it; with `copy_unviewable`, a view that the
    example inputs' strides cannot make (of a saved tensor that the forward
    laid out otherwise than eager) is then made of a contiguous copy, in the
    graph too (a region copies nothing)."""

    def __init__(self, gm: torch.fx.GraphModule, fake_mode: Any,
                 layouts: Mapping[torch.fx.Node, torch.memory_format],
                 converted: Sequence[Tuple[torch.fx.Node, int]] = (),
                 copy_unviewable: bool = False):
        super().__init__(gm)
        self.fake_mode = fake_mode
        self.layouts = layouts
        self.converted: Dict[torch.fx.Node, Set[int]] = collections.defaultdict(set)
        for node, position in converted:
            self.converted[node].add(position)
        self.reshape_views = bool(layouts) or bool(converted)
        self.copy_unviewable = copy_unviewable
        self.copied = False
        self.values: Dict[torch.fx.Node, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        if n in self.converted:
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            args = tuple(a.contiguous(memory_format=torch.channels_last)
                         if i in self.converted[n] else a for i, a in enumerate(args))
            result = n.target(*args, **kwargs)
        else:
            try:
                result = super().run_node(n)
            except (RuntimeError, ValueError):
                if not self.copy_unviewable or n.target not in (aten.view.default,
                                                                aten._unsafe_view.default):
                    raise
                with self.module.graph.inserting_before(n):
                    copy = self.module.graph.call_function(
                        aten.clone.default, (n.args[0],),
                        {"memory_format": torch.contiguous_format})
                self.env[copy] = self.values[copy] = self.env[n.args[0]].contiguous()
                n.args = (copy, *n.args[1:])
                self.copied = True
                result = super().run_node(n)
            args = None
        if self.fake_mode is not None and n.op == "get_attr" and \
                isinstance(result, torch.Tensor):
            result = self.fake_mode.from_tensor(result)
        if n.target is aten.convolution_backward.default and self.fake_mode is not None:
            if args is None:
                args = self.fetch_args_kwargs_from_env(n)[0]
            result = convolution_gradients_as_run(args, result)
        layout = self.layouts.get(n)
        if layout is not None and isinstance(result, torch.Tensor):
            result = result.contiguous(memory_format=layout)
        self.values[n] = result
        return result


def _record_values(gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                   layouts: Optional[Mapping[torch.fx.Node, torch.memory_format]] = None,
                   converted: Sequence[Tuple[torch.fx.Node, int]] = (), *,
                   copy_unviewable: bool = False) -> Dict[torch.fx.Node, Any]:
    fake_mode = fake_mode_of(example_inputs)
    recorder = _ValueRecorder(gm, fake_mode, layouts or {}, converted, copy_unviewable)
    with torch.no_grad(), running_in(fake_mode):
        recorder.run(*example_inputs, enable_io_processing=False)
    if recorder.copied:
        gm.recompile()
    return recorder.values


# Ops whose fx form takes its sizes from its result's type, and which of
# their arguments is the size: it may be symbolic (nodes computing SymInts),
# which a region drops.
_SIZED_BY_RESULT = {aten.view.default: 1, aten._unsafe_view.default: 1,
                    aten.reshape.default: 1, aten.expand.default: 1,
                    aten.full.default: 0, aten.empty.memory_format: 0,
                    aten.rand.default: 0, aten.randn.default: 0,
                    # The output size of a resampling: its spatial sizes.
                    **{op: 1 for op in RESAMPLING_OPS}}


# The creation ops of _SIZED_BY_RESULT: the importer names their symbolic
# sizes (size_symbols), which must be size symbols of their own.
_CREATION_OPS = {aten.full.default, aten.empty.memory_format, aten.rand.default,
                 aten.randn.default}


def _size_argument(node: torch.fx.Node) -> Optional[int]:
    """The position of the size among `node`'s arguments, for an op of
    _SIZED_BY_RESULT (a seeded random op's come after its three)."""
    index = _SIZED_BY_RESULT.get(aten_target(node)) if node.op == "call_function" else None
    if index is None:
        return None
    return index + 3 if node.target is seeded else index


# Symbolic sizes (torch 2.x; torch 1.13 traces concrete sizes).
_SYMBOLIC_NUMBERS = tuple(getattr(torch, name) for name in ("SymInt", "SymFloat", "SymBool")
                          if hasattr(torch, name))


def _is_size(value: Any) -> bool:
    """Whether `value` is a size computation's result (a number, possibly
    symbolic, or a list of them): Python computes those between the graph's
    tensor ops."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_size(v) for v in value)
    return isinstance(value, (int, float, bool, *_SYMBOLIC_NUMBERS))


def _seed_random_ops(gm: torch.fx.GraphModule, device: str) -> Optional[torch.fx.Node]:
    """Seeds the graph's random ops (kiln.rng) from a seed that PyTorch
    draws at every call of the graph; returns the seed's node, if any."""
    def make_seed(graph: torch.fx.Graph) -> torch.fx.Node:
        first_op = next(n for n in graph.nodes if n.op != "placeholder")
        with graph.inserting_before(first_op):
            return graph.call_function(draw_seed, (device,))

    seeded_any = seed_random_ops(gm, make_seed)
    return next(n for n in gm.graph.nodes if n.target is draw_seed) if seeded_any else None


def _unseed_fallbacks(gm: torch.fx.GraphModule, seed: torch.fx.Node) -> None:
    """Random ops that run in PyTorch call their ATen op again; the seed
    goes when no region reads it."""
    for node in list(seed.users):
        if node.target is seeded:
            node.target, node.args = aten_target(node), node.args[3:]
    if not seed.users:
        gm.graph.erase_node(seed)


def _move_scalars_to_device(gm: torch.fx.GraphModule, values: Mapping[torch.fx.Node, Any],
                           device: str) -> bool:
    """Makes the graph's 0-dim CPU constants that only ops on `device` read
    (``torch.tensor(0.5)``, ``scalar_tensor`` in decompositions) on
    `device` instead, so that regions there can hold them; PyTorch promotes
    a 0-dim tensor alike on every device. Returns whether any moved."""
    if device == "cpu":
        return False
    copies = {aten.lift_fresh_copy.default, aten.clone.default}

    def users_device(node: torch.fx.Node) -> Optional[torch.device]:
        """Where `node`'s users' results are, if all on one `device`."""
        places = {values[u].device if isinstance(values.get(u), torch.Tensor) else None
                  for u in node.users}
        place = places.pop() if len(places) == 1 else None
        return place if place is not None and place.type == device else None

    def movable(node: torch.fx.Node) -> bool:
        value = values.get(node)
        if not (node.op == "call_function" and isinstance(value, torch.Tensor)
                and value.dim() == 0 and value.device.type == "cpu"
                and users_device(node) is not None):
            return False
        operands = node.all_input_nodes
        if not operands:
            return _takes_device(node)  # a creation op
        # A copy of a constant that nothing else reads (another get_attr of
        # the same target would see the moved tensor too).
        constant = operands[0]
        return (aten_target(node) in copies and len(operands) == 1
                and constant.op == "get_attr" and len(constant.users) == 1
                and sum(n.op == "get_attr" and n.target == constant.target
                        for n in gm.graph.nodes) == 1
                and isinstance(values.get(constant), torch.Tensor)
                and not isinstance(_attribute(gm, constant.target), torch.nn.Parameter))

    moved = False
    for node in [n for n in gm.graph.nodes if movable(n)]:
        moved = True
        place = users_device(node)
        if not node.all_input_nodes:
            node.kwargs = {**node.kwargs, "device": place}
            continue
        owner, _, attribute = node.all_input_nodes[0].target.rpartition(".")
        module = gm.get_submodule(owner) if owner else gm
        # The copy is the module's, real, even while AOTAutograd's fake mode
        # is active around its compilers.
        with _outside_fake_mode():
            setattr(module, attribute, getattr(module, attribute).to(place))
    return moved


def _split_convolution_biases(gm: torch.fx.GraphModule, values: Mapping[torch.fx.Node, Any],
                              device: str) -> bool:
    """Gives each CUDA convolution with a bias (which runs in cuDNN) none,
    and adds the bias after it: PyTorch adds it in a kernel of its own after
    cuDNN's anyway (``output.add_(bias)``), and as an op of the graph the add
    joins the region that reads the result, as in Inductor, one launch fewer
    a convolution. The sum is rounded as PyTorch's. Returns whether any
    changed."""
    if device != "cuda":
        return False
    changed = False
    for node in list(gm.graph.nodes):
        if node.target is not aten.convolution.default or len(node.args) < 3 \
                or node.args[2] is None or not isinstance(values.get(node), torch.Tensor):
            continue
        spatial = values[node].dim() - 2
        with gm.graph.inserting_after(node):
            bias = gm.graph.call_function(aten.view.default,
                                          (node.args[2], [-1] + [1] * spatial))
        with gm.graph.inserting_after(bias):
            total = gm.graph.call_function(aten.add.Tensor, (node, bias))
        node.replace_all_uses_with(total, delete_user_cb=lambda user: user is not total)
        node.args = node.args[:2] + (None,) + node.args[3:]
        changed = True
    return changed


def _attribute(gm: torch.fx.GraphModule, target: str) -> Any:
    """The module attribute a get_attr node's `target` names."""
    owner, _, attribute = target.rpartition(".")
    return getattr(gm.get_submodule(owner) if owner else gm, attribute)


def _takes_device(node: torch.fx.Node) -> bool:
    """Whether `node`'s ATen op has a ``device`` argument."""
    schema = getattr(node.target, "_schema", None)
    return schema is not None and any(a.name == "device" for a in schema.arguments)


def _outside_fake_mode():
    """A context in which tensors are real while a fake mode is active
    (torch 2.x; torch 1.13's make_fx graphs meet none)."""
    unset = getattr(torch._subclasses.fake_tensor, "unset_fake_temporarily", None)
    return unset() if unset is not None else contextlib.nullcontext()


def _node_problem(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any],
                  device: str) -> Optional[str]:
    """Why `node` cannot join a compiled region, or None if it can."""
    results = values.get(node)
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    if not any(isinstance(r, torch.Tensor) for r in results):
        return "its value is not a tensor"
    # Results that nothing reads (the memory-efficient attention's CPU
    # Philox state, say) are not computed, wherever eager keeps them.
    read = None
    if len(results) > 1 and all(u.target is operator.getitem for u in node.users):
        read = {u.args[1] for u in node.users}
    for i, value in enumerate(results):
        if read is not None and i not in read:
            continue
        if isinstance(value, torch.Tensor) and value.device.type != device:
            return f"its value is on {value.device.type}, the graph's regions on {device}"
    for arg in pytree.tree_flatten((node.args, node.kwargs))[0]:
        if not isinstance(arg, torch.fx.Node):
            continue
        value = values.get(arg)
        if isinstance(value, (tuple, list)) and node.target is operator.getitem:
            continue
        if _is_size(value) and _size_argument(node) is not None:
            continue
        if _is_size(value):
            return "it reads a size that is known only at run time"
        if not isinstance(value, torch.Tensor):
            return "it reads a value that is not a tensor"
        if value.device.type != device:
            return f"it reads a tensor on {value.device.type}, the graph's regions run on {device}"
    if node.target in _REGROUPING_VIEWS and not _keeps_symbolic_sizes(
            values.get(node.args[0]), results[0]):
        return "it splits a symbolic size, which Kiln's views cannot follow yet"
    if aten_target(node) in _CREATION_OPS and not all(
            str(s.node.expr).isidentifier() for s in results[0].shape if not isinstance(s, int)):
        return "a symbolic size of its result is an expression, which Kiln cannot name yet"
    try:
        check_supported(node)
    except UnsupportedOpError as error:
        return error.problem
    return None


# Views whose fx form says only the result's type, where a symbolic size is
# just ``?``. Kiln's lowering derives a result's one dynamic size from the
# element count; with more, it pairs dynamic dimensions in order.
_REGROUPING_VIEWS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default}


def _keeps_symbolic_sizes(operand: Any, result: Any) -> bool:
    """Whether Kiln's lowering of a view from `operand` to `result` follows
    it: the result has at most one symbolic size (``[s0, s1, 32] -> [s0*s1,
    32]``), it keeps every symbolic size of the operand, in order (static
    sizes may regroup around them), or each of its symbolic sizes is a size
    symbol of its own (``[s0*s1, 32] -> [s0, s1, 32]``), which the importer
    names (``size_symbols``)."""
    def symbolic(value):
        return [s for s in value.shape if not isinstance(s, int)]
    if not (isinstance(operand, torch.Tensor) and isinstance(result, torch.Tensor)):
        return True
    before, after = symbolic(operand), symbolic(result)
    return len(after) <= 1 or (len(before) == len(after) and all(
        a.node.expr == b.node.expr for a, b in zip(before, after))) or all(
        str(s.node.expr).isidentifier() for s in after)


class _Supported(OperatorSupportBase):
    def __init__(self, nodes):
        super().__init__()
        self.nodes = nodes

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node in self.nodes


# ===----------------------------------------------------------------------=== #
# Compiling regions
# ===----------------------------------------------------------------------=== #


class _RegionFailure(Exception):
    """A region did not compile: the nodes to blame, and why."""

    def __init__(self, blamed: Dict[torch.fx.Node, str]):
        super().__init__(next(iter(blamed.values())))
        self.blamed = blamed


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


@dataclass
class _ImportedRegion:
    nodes: List[torch.fx.Node]  # In graph order.
    inputs: Tuple[torch.fx.Node, ...]
    outputs: Tuple[torch.fx.Node, ...]
    text: str
    # Line of the text -> the node of the graph it comes from.
    op_lines: Dict[int, torch.fx.Node]
    # Inputs and outputs that the artifact reads and writes in another order
    # of dimensions: the graph's argument (result) is ``value.permute(order)``
    # of the caller's tensor, dense in that order (NHWC buffers of NCHW
    # tensors; a library result with permuted strides).
    orders: Mapping[torch.fx.Node, Tuple[int, ...]] = field(default_factory=dict)
    # The region's ATen graph, called like its artifact (check_numerics);
    # None where PyTorch cannot compute the same (random ops, symbolic sizes).
    reference: Optional[torch.fx.GraphModule] = None


@dataclass
class _Region:
    """A compiled region: what was imported, and its artifact."""

    source: _ImportedRegion
    artifact: Artifact


def _import_region(gm: torch.fx.GraphModule, nodes: List[torch.fx.Node],
                   values: Mapping[torch.fx.Node, Any],
                   channels_last: Set[torch.fx.Node]) -> _ImportedRegion:
    """The region's fx-dialect text; _RegionFailure if it does not import.
    Its inputs and outputs in `channels_last` are NHWC buffers; other inputs
    dense in another order than PyTorch's contiguous one are read in that
    order (not copied at every call)."""
    sub_gm, inputs, outputs = fuse_as_graphmodule(gm, nodes, "kiln_region")[:3]
    copies = [n for n in sub_gm.graph.nodes if n.op not in ("placeholder", "output")]
    original = dict(zip(copies, nodes))
    inputs = _drop_size_inputs(sub_gm, inputs, original, values)
    orders: Dict[torch.fx.Node, Tuple[int, ...]] = {}
    for node in inputs:
        order = NCHW_TO_NHWC if node in channels_last else dense_order(values[node])
        if order is not None:
            orders[node] = tuple(order)
    orders.update((n, NCHW_TO_NHWC) for n in outputs if n in channels_last)
    _permute_boundaries(sub_gm, [orders.get(n) for n in inputs],
                        [orders.get(n) for n in outputs])
    examples = [values[n].permute(orders[n]) if n in orders else values[n] for n in inputs]
    copy_lines: Dict[int, torch.fx.Node] = {}
    try:
        text = import_graph(sub_gm, examples, name=_KERNEL_GRAPH, op_lines=copy_lines)
    except UnsupportedOpError as error:
        node = next((original[n] for n in copies if n.name == error.node_name), None)
        raise _RegionFailure({node: error.problem} if node is not None else
                             {n: error.problem for n in nodes}) from error
    except Exception as error:  # The importer refusing the region's inputs, say.
        reason = f"its region failed to import: {_first_line(str(error))}"
        raise _RegionFailure({n: reason for n in nodes}) from error
    # Lines of the boundary permutes name no node of the graph.
    op_lines = {line: original[copy] for line, copy in copy_lines.items() if copy in original}
    comparable = not any(n.target is seeded for n in copies) and not any(
        _is_size(s) and not isinstance(s, int) for e in examples for s in e.shape)
    if comparable:
        sub_gm.recompile()
    return _ImportedRegion(nodes, tuple(inputs), tuple(outputs), text, op_lines, orders,
                           sub_gm if comparable else None)


def _describe_output(node: torch.fx.Node) -> str:
    """Names a region output for a numerics report: its node, the ATen op
    that computed it, and the user's line that made it."""
    producer, of = node, ""
    if node.target is operator.getitem and isinstance(node.args[0], torch.fx.Node):
        producer, of = node.args[0], f"result {node.args[1]} of "
    location = source_location(producer)
    where = f" at {location[0]}:{location[1]}" if location is not None else ""
    return f"'{node.name}' ({of}{aten_target(producer)}{where})"


# ===----------------------------------------------------------------------=== #
# Region boundaries in other orders of dimensions
# ===----------------------------------------------------------------------=== #


def _inverse(order: Sequence[int]) -> List[int]:
    return sorted(range(len(order)), key=order.__getitem__)


def _permute_boundaries(sub_gm: torch.fx.GraphModule,
                        input_orders: Sequence[Optional[Sequence[int]]],
                        output_orders: Sequence[Optional[Sequence[int]]]) -> None:
    """Makes a region read each input that has an order as the caller's
    tensor permuted to it (NHWC buffers of NCHW tensors, say), and write each
    output that has one likewise: permutes, which the region's kernels fold
    into their indexing."""
    graph = sub_gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for placeholder, order in zip(placeholders, input_orders):
        if order is None:
            continue
        with graph.inserting_after(placeholder):
            caller = graph.call_function(aten.permute.default, (placeholder, _inverse(order)))
        placeholder.replace_all_uses_with(caller, delete_user_cb=lambda user: user is not caller)
    output = next(n for n in graph.nodes if n.op == "output")
    results = list(output.args[0]) if isinstance(output.args[0], (tuple, list)) \
        else [output.args[0]]
    for i, order in enumerate(output_orders):
        if order is not None:
            with graph.inserting_before(output):
                results[i] = graph.call_function(aten.permute.default, (results[i], list(order)))
    output.args = (tuple(results) if isinstance(output.args[0], (tuple, list))
                   else results[0],)


def _drop_size_inputs(sub_gm: torch.fx.GraphModule, inputs: Sequence[torch.fx.Node],
                      original: Mapping[torch.fx.Node, torch.fx.Node],
                      values: Mapping[torch.fx.Node, Any]) -> List[torch.fx.Node]:
    """Gives the region's _SIZED_BY_RESULT ops their result's sizes (SymInts
    where symbolic) for size arguments computed outside the region, and drops
    the region inputs that only they read: a region's inputs are tensors."""
    for copy, node in original.items():
        index = _size_argument(copy)
        if index is not None and any(
                isinstance(a, torch.fx.Node) for a in pytree.tree_flatten(copy.args[index])[0]):
            sizes = list(values[node].shape)
            if aten_target(node) in RESAMPLING_OPS:
                sizes = sizes[2:]  # After the batch and the channels.
            copy.args = (*copy.args[:index], sizes, *copy.args[index + 1:])
    kept = []
    for placeholder, node in zip([n for n in sub_gm.graph.nodes if n.op == "placeholder"],
                                 inputs):
        if placeholder.users:
            kept.append(node)
        else:
            sub_gm.graph.erase_node(placeholder)
    return kept


def _compile_region(region: _ImportedRegion, device: str,
                    options: Options) -> _Region:
    """Compiles an imported region (in a subprocess: threads may run several
    at once); _RegionFailure blames the nodes its diagnostics point at."""
    try:
        path = compile_graph_text(region.text, target=device,
                                  options=options.pipeline_options,
                                  cache_dir=options.cache_dir)
    except KilnError as error:
        blamed = {}
        for diagnostic in error.diagnostics:
            node = region.op_lines.get(diagnostic.line) \
                if diagnostic.severity == "error" else None
            if node is not None:
                blamed.setdefault(node, diagnostic.message)
        if not blamed:
            errors = [d.message for d in error.diagnostics if d.severity == "error"]
            reason = errors[0] if errors else _first_line(str(error))
            blamed = {n: f"its region failed to compile: {reason}" for n in region.nodes}
            if error.reproducer is not None:
                log.warning("a region of %d ops failed to compile (%s); to reproduce: "
                            "kiln-compile %s --target=%s", len(region.nodes), reason,
                            error.reproducer, device)
        raise _RegionFailure(blamed) from error
    artifact = Artifact(path, graph=_KERNEL_GRAPH,
                        guards=GraphGuards.parse(region.text, _KERNEL_GRAPH))
    return _Region(region, artifact)


class KilnRegion(torch.nn.Module):
    """A compiled region in the partitioned graph: calls its artifact."""

    def __init__(self, artifact: Artifact, text: str, returns_tuple: bool,
                 check: Optional[RegionCheck] = None):
        super().__init__()
        self.artifact = artifact
        self.graph_text = text
        self.returns_tuple = returns_tuple
        self.check = check

    def forward(self, *args):
        results = self.artifact(*args) if self.check is None else \
            self.check.run(self.artifact, args)
        return tuple(results) if self.returns_tuple else results[0]

    # Once per region per call of the model: straight to forward, without
    # nn.Module's hook dispatch (nothing hooks a region).
    __call__ = forward


def _install(gm: torch.fx.GraphModule, region: _Region, index: int,
             replaced: Dict[torch.fx.Node, torch.fx.Node],
             check: Optional[RegionCheck]) -> None:
    """Replaces the region's nodes by a call of its artifact. `replaced`
    maps the outputs of regions installed before to what replaced them (an
    input of this region may be one)."""
    source = region.source
    name = f"kiln_region_{index}"
    artifact, views = region.artifact, bool(source.orders)
    if views and check is None:
        # The artifact reads and writes the caller's tensors themselves in
        # its order of dimensions: no views made at every call.
        artifact = artifact.permuted([source.orders.get(n) for n in source.inputs],
                                     [source.orders.get(n) for n in source.outputs])
        views = False
    gm.add_submodule(name, KilnRegion(artifact, source.text, len(source.outputs) > 1, check))
    graph = gm.graph
    inputs = [replaced.get(n, n) for n in source.inputs]
    anchor = source.nodes[-1]
    for i, node in enumerate(source.inputs):
        if views and node in source.orders:  # A view, free in PyTorch.
            with graph.inserting_after(anchor):
                anchor = inputs[i] = graph.call_function(
                    aten.permute.default, (inputs[i], list(source.orders[node])))
    with graph.inserting_after(anchor):
        call = graph.call_module(name, tuple(inputs))
    if len(source.outputs) == 1:
        results = [call]
    else:
        results, anchor = [], call
        for i in range(len(source.outputs)):
            with graph.inserting_after(anchor):
                anchor = graph.call_function(operator.getitem, (call, i))
            results.append(anchor)
    for output, result in zip(source.outputs, results):
        if views and output in source.orders:
            with graph.inserting_after(result):
                result = graph.call_function(aten.permute.default,
                                             (result, _inverse(source.orders[output])))
        output.replace_all_uses_with(result)
        replaced[output] = result
    for node in reversed(source.nodes):
        graph.erase_node(node)


def _one_op_regions(regions: List[List[torch.fx.Node]]) -> List[List[torch.fx.Node]]:
    """The regions split into one op each (check_granularity="ops"): every
    op that is not a view, with the getitems of its results; views stay in
    PyTorch."""
    split = []
    for nodes in regions:
        members = set(nodes)
        for node in nodes:
            if node.target in _VIEW_OPS:
                continue
            split.append([node] + [u for u in node.users
                                   if u.target is operator.getitem and u in members])
    return split


def _region_check(region: _Region, name: str,
                  options: Options) -> Optional[RegionCheck]:
    """What compares the region with PyTorch under check_numerics."""
    if not options.check_numerics:
        return None
    source = region.source
    if source.reference is None:
        log.info("%s is not checked: PyTorch cannot compute the same (random ops "
                 "or symbolic sizes)", name)
        return None
    outputs = [f"output {i} {_describe_output(n)}" for i, n in enumerate(source.outputs)]
    return RegionCheck(source.reference, name, outputs, options.check_numerics,
                       options.check_tolerance)


_CONVOLUTIONS = (aten.convolution.default, aten.convolution_backward.default)


def _is_direct_convolution(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any],
                           depth: int) -> bool:
    """Whether `node` is a grouped convolution (a depthwise one, say) that
    Kiln computes as direct window sums: each filter reads at most `depth`
    inputs, no fewer than its group has filters. With the option
    direct_convolutions, those are compiled with the ops around them
    instead of calling the library between two regions."""
    if node.target is not aten.convolution.default or len(node.args) < 9:
        return False
    weight, transposed, groups = values.get(node.args[1]), node.args[6], node.args[8]
    if transposed or not isinstance(groups, int) or groups < 2 or \
            not isinstance(weight, torch.Tensor) or \
            not all(isinstance(s, int) for s in weight.shape):
        return False
    reads = 1
    for size in weight.shape[1:]:
        reads *= size
    return reads <= depth and weight.shape[0] // groups <= reads


def _is_region_convolution(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any]) -> bool:
    """Whether `node` is a convolution that a CUDA region computes with
    cuDNN, called from the artifact (pipeline option library-convolutions):
    a batched 1-d or 2-d one, not transposed, of f32, f16 or bf16."""
    if node.target is not aten.convolution.default or len(node.args) < 9:
        return False
    image, transposed = values.get(node.args[0]), node.args[6]
    return not transposed and isinstance(image, torch.Tensor) and \
        image.ndim in (3, 4) and \
        image.dtype in (torch.float32, torch.float16, torch.bfloat16)


# What `cudnn_in_regions="auto"` assumes of a GPU and of the host: a
# convolution's time is its multiply-adds at a tensor-core rate or its bytes
# at a memory rate, whichever is longer; the host spends about 20 µs on
# each convolution called through PyTorch and on the region call after it.
_CONVOLUTION_FLOPS_PER_US = 100e6
_MEMORY_BYTES_PER_US = 2.5e6
_HOST_US_PER_LIBRARY_CALL = 20.0


def _convolution_us(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any]) -> Optional[float]:
    """The GPU time a forward convolution takes, by the rates above; None
    when its operands' sizes are not known."""
    image, weight, result = (values.get(node.args[0]), values.get(node.args[1]),
                             values.get(node))
    tensors = (image, weight, result)
    if not all(isinstance(t, torch.Tensor) and
               all(isinstance(s, int) for s in t.shape) for t in tensors):
        return None
    window = 1
    for size in weight.shape[1:]:
        window *= size  # Inputs per filter: its group's channels times its window.
    flops = 2.0 * result.numel() * window
    moved = sum(t.numel() * t.element_size() for t in tensors)
    return max(flops / _CONVOLUTION_FLOPS_PER_US, moved / _MEMORY_BYTES_PER_US)


def _host_bound_convolutions(gm: torch.fx.GraphModule,
                             values: Mapping[torch.fx.Node, Any]) -> bool:
    """Whether a graph's convolutions are better called from its regions
    (one artifact call for the network) than through PyTorch between them:
    when at least a quarter of them take the GPU less than a quarter of the
    host's time to call them (the squeeze-and-excitation gates and the late
    depthwise convolutions of MobileNet, EfficientNet and RegNet), the graph
    waits for its host. Networks of larger convolutions (ResNet, ResNeXt,
    ConvNeXt) run faster on cuDNN's kernels as PyTorch picks them."""
    times = [_convolution_us(n, values) for n in gm.graph.nodes
             if n.op == "call_function" and _is_region_convolution(n, values)]
    if not times or None in times:
        return False
    tiny = sum(t < _HOST_US_PER_LIBRARY_CALL / 4 for t in times)
    return 4 * tiny >= len(times)


def _strided_library_operands(library: Sequence[torch.fx.Node],
                              values: Mapping[torch.fx.Node, Any]) -> Set[torch.fx.Node]:
    """The views whose strides a library kernel reads: those that feed one,
    directly or through other such views, and are not contiguous. They stay
    in PyTorch, over a region's buffer, because a region writes its results
    contiguously, and a kernel may need eager's strides: memory-efficient
    attention reads its bias through a slice of one padded to a multiple of
    8 elements, and refuses a bias whose rows are not aligned. Convolutions
    take any layout, and their inputs' is the channels-last pass's to
    choose."""
    strided: Set[torch.fx.Node] = set()
    pending = [a for n in library if n.target not in _CONVOLUTIONS
               for a in pytree.tree_flatten((n.args, n.kwargs))[0]]
    while pending:
        node = pending.pop()
        if not isinstance(node, torch.fx.Node) or node in strided or \
                node.target not in _VIEW_OPS or node.target is operator.getitem:
            continue
        value = values.get(node)
        if not isinstance(value, torch.Tensor) or value.is_contiguous():
            continue
        strided.add(node)
        pending.extend(a for a in node.args if isinstance(a, torch.fx.Node))
    return strided


def _keeps_most(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any]) -> bool:
    """Whether `node` slices off only the edge of its operand (at most one
    element in 64: a product's result padded to aligned rows), so that a
    region may write the operand instead of the slice."""
    if node.target is not aten.slice.Tensor:
        return False
    value, base = values.get(node), values.get(node.args[0])
    return isinstance(value, torch.Tensor) and isinstance(base, torch.Tensor) and \
        value.numel() * 64 >= base.numel() * 63


def _views_outside(gm: torch.fx.GraphModule, nodes: List[torch.fx.Node],
                   values: Dict[torch.fx.Node, Any]) -> List[torch.fx.Node]:
    """`nodes` (a region), with its views read outside it made by PyTorch: a
    region writes its results contiguously, so such a view would be a copy,
    where PyTorch makes it for free (a saved weight's transpose, a product's
    result reshaped for the backward). Views of tensors from outside the
    region, and whole views of its own (the region then writes the tensor
    viewed instead), leave the region, or, where the region reads them too,
    get a twin in PyTorch for their readers outside. So do slices that keep
    nearly all of a tensor (_keeps_most)."""
    members = set(nodes)
    twins: Dict[torch.fx.Node, torch.fx.Node] = {}
    pending = [n for n in nodes if n.target in _VIEW_OPS]
    while pending:
        node = pending.pop()
        if node not in members or node.target is operator.getitem:
            continue
        base = node.args[0] if node.args else None
        if isinstance(base, torch.fx.Node) and base in members and \
                node.target not in _WHOLE_VIEWS and not _keeps_most(node, values):
            continue
        outside = [user for user in node.users if user not in members]
        if outside and len(outside) < len(node.users):
            # The region reads it too: its readers outside get a twin.
            with gm.graph.inserting_after(node):
                twin = gm.graph.call_function(node.target, node.args, node.kwargs)
            twin.meta = dict(node.meta)
            if node in values:
                values[twin] = values[node]
            for user in outside:
                user.replace_input_with(node, twin)
            twins[twin] = node
        if all(user not in members for user in node.users):
            members.remove(node)
            # Its operand may now be a view that only the outside reads.
            if isinstance(base, torch.fx.Node) and base.target in _VIEW_OPS:
                pending.append(base)
    _keep_views_viewable(gm, nodes, members, twins, values)
    return [n for n in nodes if n in members]


def _keep_views_viewable(gm: torch.fx.GraphModule, nodes: List[torch.fx.Node],
                         members: Set[torch.fx.Node],
                         twins: Dict[torch.fx.Node, torch.fx.Node],
                         values: Mapping[torch.fx.Node, Any]) -> None:
    """Puts back into the region (`members`) the views that left it which
    PyTorch might not be able to make: a ``view`` (or ``as_strided``) is
    made outside only where its operand's strides are known, a chain of
    views of the region's own results, which the region writes contiguous
    (4-d ones perhaps channels-last: both are tried), and only where that
    chain works, as eager's did on its own strides (a ``view`` of a
    transpose back may not). The strides of the region's inputs are not
    known: a backward graph's saved tensors are what the forward's regions
    wrote, not what eager had. A view put back takes the views it is made
    of with it; the region then writes it (a copy, as before). A twin
    (`twins`: twin -> the view in the region) that might fail is undone:
    its readers read the region's view."""
    moved = [n for n in nodes if n not in members]
    for channels_last in (False, True):
        while True:
            failed = _first_unviewable(moved + list(twins), members, values,
                                       channels_last)
            if failed is None:
                break
            if failed in twins:
                failed.replace_all_uses_with(twins.pop(failed))
                gm.graph.erase_node(failed)
                continue
            keep = failed
            while isinstance(keep, torch.fx.Node) and keep in moved:
                members.add(keep)
                moved.remove(keep)
                keep = keep.args[0] if keep.args else None


# Views whose making depends on their operand's strides.
_STRIDED_VIEWS = {aten.view.default, aten._unsafe_view.default, aten.as_strided.default}


def _first_unviewable(moved: List[torch.fx.Node], members: Set[torch.fx.Node],
                      values: Mapping[torch.fx.Node, Any],
                      channels_last: bool) -> Optional[torch.fx.Node]:
    """The first of the `moved` views (in order; twins last) that PyTorch
    might fail to make on the region's results (written contiguous, or
    channels-last when 4-d), made on meta tensors; None if every one works."""
    metas: Dict[torch.fx.Node, Any] = {}
    unknown = object()

    def meta(arg: Any) -> Any:
        if not isinstance(arg, torch.fx.Node):
            return arg
        found = metas.get(arg, unknown if arg not in members else None)
        if found is unknown:
            raise _Unknown()
        if found is not None:
            return found
        value = values.get(arg)
        if not isinstance(value, torch.Tensor) or \
                not all(type(size) is int for size in value.shape):
            raise _Unknown()  # symbolic sizes
        tensor = torch.empty(tuple(value.shape), dtype=value.dtype, device="meta")
        if channels_last and tensor.dim() == 4:
            tensor = tensor.contiguous(memory_format=torch.channels_last)
        return tensor

    for node in moved:
        try:
            args, kwargs = pytree.tree_map(meta, (node.args, node.kwargs))
            metas[node] = node.target(*args, **kwargs)
        except _Unknown:
            if node.target in _STRIDED_VIEWS:
                return node
            metas[node] = unknown
        except RuntimeError:
            return node
    return None


class _Unknown(Exception):
    """A value whose strides _first_unviewable does not know."""


def _propose_regions(gm: torch.fx.GraphModule, supported,
                     values: Dict[torch.fx.Node, Any]) -> List[List[torch.fx.Node]]:
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    partitioner = CapabilityBasedPartitioner(gm, _Supported(supported),
                                             allows_single_node_partition=True)
    regions = []
    for partition in partitioner.propose_partitions():
        nodes = _views_outside(gm, sorted(partition.nodes, key=order.__getitem__), values)
        if any(n.target not in _VIEW_OPS for n in nodes):
            regions.append(nodes)
    return sorted(regions, key=lambda r: order[r[0]])


def _graph_outputs(gm: torch.fx.GraphModule) -> List[Any]:
    """The graph's results, flattened as AOTAutograd numbers them."""
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    return pytree.tree_flatten(output.args[0])[0]


def compile_aten_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *,
                       name: str = "graph", options: Optional[Options] = None,
                       saved_outputs: Collection[int] = ()) -> torch.fx.GraphModule:
    """Partitions an ATen-level graph (AOTAutograd's, or make_fx's with
    kiln.importer.DECOMPOSITIONS) into regions that Kiln compiles and nodes
    that run in PyTorch; returns the graph module that runs both, called like
    `gm`. `example_inputs` (real or fake tensors) give every value its type.
    The outputs at the indices `saved_outputs` are only a backward graph's
    to read (a forward's saved tensors): they may come in another layout
    than eager's (channels-last images, say); the others keep eager's
    (but that a region writes its results contiguous).
    The returned module's ``kiln_report`` (a GraphReport) says what ran
    where, and its ``kiln_output_strides`` the strides that each output
    will have (None where not a tensor or symbolic). Modifies `gm`.
    """
    options = options or Options()
    canonicalize(gm)
    eliminate_dead_code(gm)
    copy_restrided_storage_reads(gm, example_inputs)
    device = graph_device(example_inputs)
    if device in ("cpu", "cuda"):
        options.check_pipeline(device)
    seed = _seed_random_ops(gm, device)
    gm.recompile()
    values = _record_values(gm, list(example_inputs), copy_unviewable=True)
    if _move_scalars_to_device(gm, values, device):
        gm.recompile()
        values = _record_values(gm, list(example_inputs))
    library_ops = set(options.library_ops)
    if device == "cuda" and detach_philox_state(gm, values, device, library_ops):
        values = _record_values(gm, list(example_inputs))
    # Attention written out, on CUDA: one fused call (torch 2.1 and later,
    # whose fused attention takes a scale).
    fused_attention = getattr(getattr(aten, "scaled_dot_product_attention", None),
                              "default", None)
    if device == "cuda" and fused_attention is not None and \
            any(a.name == "scale" for a in fused_attention._schema.arguments) and \
            str(fused_attention) in library_ops and \
            fuse_explicit_attention(gm, values, fused_attention):
        values = _record_values(gm, list(example_inputs))
    merged = 0
    if options.merge_products:
        recorded: Dict[torch.fx.Node, Any] = {}
        merged = merge_shared_operand_products(
            gm, values, lambda: recorded.update(_record_values(gm, list(example_inputs))))
        if merged:
            eliminate_dead_code(gm)
            values = recorded
    if "aten.convolution.default" in library_ops and \
            _split_convolution_biases(gm, values, device):
        gm.recompile()
        values = _record_values(gm, list(example_inputs))
    # A convolution whose filters read at most this many inputs sums its
    # windows directly: the compiler's value, default or given.
    depth = int(pipeline_pass_options(device, options.pipeline_options,
                                      "kiln-fx-to-loop")["direct-convolution-depth"])
    # On CUDA a region calls cuDNN itself: a convolution network is one
    # region, not a region between every two library calls.
    pipeline = dict(options.pipeline_options or {})
    cudnn_regions = device == "cuda" and \
        str(pipeline.get("library-convolutions", True)).lower() not in ("false", "0") and (
            options.cudnn_in_regions is True or (
                options.cudnn_in_regions == "auto" and not options.cuda_graphs and
                not saved_outputs and _host_bound_convolutions(gm, values)))
    if device == "cuda" and options.direct_convolutions and not cudnn_regions and \
            "library-convolutions" not in pipeline:
        # The regions' convolutions are the direct ones, which Kiln sums
        # itself: the GPU pipeline would give them to cuDNN.
        options = dataclasses.replace(
            options, pipeline_options={**pipeline, "library-convolutions": False})
    library = [n for n in gm.graph.nodes
               if n.op == "call_function" and str(n.target) in library_ops and
               not (options.direct_convolutions and _is_direct_convolution(n, values, depth))
               and not (cudnn_regions and _is_region_convolution(n, values))]
    strided = _strided_library_operands(library, values)
    # Size arithmetic, the seed and attention's unused Philox state stay in
    # Python, neither compiled nor a fallback.
    ops = [n for n in gm.graph.nodes if n.op == "call_function" and n not in library
           and n not in strided and n is not seed and n.target is not unused_philox_state
           and not _is_size(values.get(n))]
    problems: Dict[torch.fx.Node, str] = {}
    for node in ops:
        problem = _node_problem(node, values, device)
        if problem is not None:
            problems[node] = problem

    # Each failed round moves at least one node out of the supported set.
    # Regions import one after another (Python, fake tensors) and compile
    # in parallel (kiln-compile processes).
    channels_last = options.channels_last
    if channels_last is None:
        channels_last = device == "cuda"
    while True:
        imported, failures = [], []
        supported = {n for n in ops if n not in problems}
        proposed = _propose_regions(gm, supported, values)
        if options.check_granularity == "ops":
            proposed = _one_op_regions(proposed)
        # Proposing regions may have given their outputs twins.
        outputs = _graph_outputs(gm)
        kept_outputs = {n for i, n in enumerate(outputs) if i not in saved_outputs}
        plan = plan_channels_last(gm, proposed, library, values, kept_outputs) \
            if channels_last else ChannelsLastPlan()
        # The layouts that values will have when the graph runs: regions
        # write their results contiguous (or NHWC), and the ops reading them
        # follow (cuDNN's attention, say, whose result then has the strides
        # a region must read it with).
        running = _record_values(gm, list(example_inputs),
                                 running_layouts(proposed, plan), plan.converted)
        for nodes in proposed:
            try:
                imported.append(_import_region(gm, nodes, running, plan.nhwc))
            except _RegionFailure as failure:
                failures.append(failure)
        regions = []
        if imported:
            start = time.monotonic()
            with ThreadPoolExecutor(max_workers=min(len(imported), os.cpu_count() or 1)) as pool:
                futures = [pool.submit(_compile_region, r, device, options) for r in imported]
                # Long compiles say how far they are.
                for done, future in enumerate(as_completed(futures), 1):
                    log.info("%s: %d of %d regions compiled (%.1f s)", name, done,
                             len(futures), time.monotonic() - start)
            for future in futures:
                try:
                    regions.append(future.result())
                except _RegionFailure as failure:
                    failures.append(failure)
        for failure in failures:
            problems.update(failure.blamed)
        if not failures:
            break

    report = GraphReport(name, merged_products=merged)
    in_regions = {n for r in regions for n in r.source.nodes}
    report.kernels = len(regions)
    report.compiled_ops = sum(1 for n in in_regions if n.target is not operator.getitem)
    fallbacks = collections.Counter(
        (str(aten_target(n)), problems[n]) for n in ops
        if n not in in_regions and n in problems and n.target is not operator.getitem)
    report.fallbacks = dict(fallbacks)
    report.library_calls = dict(collections.Counter(str(n.target) for n in library))
    if options.cuda_graphs:
        report.cuda_graph_problem = recording_problem(gm, values, device) or (
            "check_numerics reads results on the host" if options.check_numerics else None)
    if fallbacks and options.fallback == "error":
        raise FallbackError(report.summary())

    replaced: Dict[torch.fx.Node, torch.fx.Node] = {}
    for index, region in enumerate(regions):
        _install(gm, region, index, replaced, _region_check(region, f"{name}, region {index}",
                                                            options))
    if seed is not None:
        _unseed_fallbacks(gm, seed)
    convert_operands(gm, plan.converted)
    legalize_graph(gm)
    gm.graph.lint()
    gm.recompile()
    gm.kiln_report = report
    gm.kiln_output_strides = [static_strides(running.get(n)) if isinstance(n, torch.fx.Node)
                              else None for n in outputs]
    REPORTS.append(report)
    (log.warning if fallbacks else log.info)("%s", report.summary())
    return gm


# ===----------------------------------------------------------------------=== #
# The TorchDynamo backend
# ===----------------------------------------------------------------------=== #


def _saved_outputs(kind: str, gm: torch.fx.GraphModule) -> Collection[int]:
    """The indices of a forward graph's outputs that AOTAutograd saves for
    the backward (its metadata says which, where it numbers them as the
    graph has them)."""
    context = torch._guards.TracingContext.try_get() if kind == "forward" else None
    metadata = getattr(context, "fw_metadata", None)
    try:
        # Slices of the outputs, from the end where symbols follow.
        tensors = metadata.tensors_saved_for_backwards_slice
        symbols = metadata.num_symints_saved_for_bw
        outputs = len(_graph_outputs(gm))
        saved = range(*tensors.indices(outputs))
    except (AttributeError, AssertionError, TypeError):
        return ()
    # The graph's outputs must be those the metadata counts.
    if not saved or saved.stop + symbols != outputs or saved.start != metadata.num_forward:
        return ()
    return saved


def _report_output_strides(kind: str, strides: Sequence[Optional[Tuple[int, ...]]]) -> None:
    """Tells AOTAutograd the strides of a forward (or inference) graph's
    outputs as Kiln's kernels write them: it gives the backward graph its
    saved tensors with those strides, and Dynamo the outputs'."""
    context = torch._guards.TracingContext.try_get() if kind != "backward" else None
    reported = getattr(context, "output_strides", None)
    if reported is not None and not reported:
        reported.extend(strides)


def kiln_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *,
                 options: Optional[Mapping[str, Any]] = None, mode: Optional[str] = None,
                 **unused: Any) -> Callable:
    """The ``"kiln"`` backend of torch.compile (torch 2.x): AOTAutograd with
    Kiln's decompositions, compile_aten_graph for the forward, backward and
    inference graphs, run as CUDA graphs with the ``cuda_graphs`` option
    (which torch.compile's `mode` may imply: kiln.cudagraphs)."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    parsed = Options.parse({**graph_mode_options(mode), **(options or {})})
    counter = collections.Counter()
    graphs = CudaGraphState()

    def compiler(kind):
        def compile_graph(graph_module, inputs):
            counter[kind] += 1
            name = f"{kind} graph {counter[kind]}"
            stack_traces = output_stack_traces(graph_module)
            compiled = compile_aten_graph(graph_module, inputs, name=name, options=parsed,
                                          saved_outputs=_saved_outputs(kind, graph_module))
            _report_output_strides(kind, compiled.kiln_output_strides)
            if not parsed.cuda_graphs:
                # AOTAutograd's runtime passes the arguments as one list.
                return make_boxed_func(compiled)
            report = compiled.kiln_report
            run, report.cuda_graphs = record_graphs(
                compiled, inputs, kind=kind, name=name, problem=report.cuda_graph_problem,
                state=graphs, dynamo_inputs=len(example_inputs),
                limit=parsed.cuda_graph_limit, stack_traces=stack_traces)
            (log.info if report.cuda_graphs.startswith("recorded") else log.warning)(
                "%s: CUDA graphs %s", name, report.cuda_graphs)
            return run
        return compile_graph

    # Training graphs: with `recompute`, the forward saves for the backward
    # only what the backward cannot recompute cheaply from fewer tensors
    # (AOTAutograd's min-cut partition, as Inductor's), and the backward's
    # kernels recompute the pointwise rest as they read; else the forward
    # writes every intermediate the backward reads.
    partition = {}
    if parsed.recompute:
        from functorch.compile import min_cut_rematerialization_partition
        partition["partition_fn"] = min_cut_rematerialization_partition
    decompositions = _BACKEND_DECOMPOSITIONS
    if parsed.pad_products:
        decompositions = {**decompositions, **padded_product_decompositions(
            others=_BACKEND_DECOMPOSITIONS)}
    # Where Kiln compiles CUDA's memory-efficient attention, AOTAutograd
    # traces scaled_dot_product_attention as that kernel's ops (PyTorch would
    # choose flash's or cuDNN's, which Kiln does not lower).
    attention = contextlib.nullcontext()
    if "aten._scaled_dot_product_efficient_attention.default" not in parsed.library_ops \
            and graph_device(example_inputs) == "cuda":
        attention = efficient_attention_kernel()
    with keeping_resampling_whole(), attention:
        compiled_model = aot_autograd(
            fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
            inference_compiler=compiler("inference"),
            decompositions=decompositions, **partition)(gm, example_inputs)
    if not (parsed.cuda_graphs and parsed.clone_outputs):
        return compiled_model

    def cloning(*args):
        return pytree.tree_map_only(torch.Tensor, torch.clone, compiled_model(*args))
    return cloning


def register() -> None:
    """Registers kiln_backend as torch.compile's ``"kiln"`` backend (torch
    2.x). An installed package registers it through its entry point;
    importing kiln.backend registers it too."""
    from torch._dynamo import list_backends, register_backend

    if "kiln" not in list_backends(exclude_tags=()):
        register_backend(name="kiln")(kiln_backend)


try:
    import torch._dynamo  # noqa: F401  (torch 2.x)
except ImportError:  # torch 1.x has no torch.compile.
    pass
else:
    register()
