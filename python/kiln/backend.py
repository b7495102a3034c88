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

Options (``torch.compile(model, backend="kiln", options={...})``):

* ``fallback``: ``"eager"`` (default) or ``"error"``;
* ``pipeline_options``: the target pipeline's options, as kiln.compile takes;
* ``cache_dir``: where artifacts are cached (default: kiln.compiler's).

Shapes are static: Dynamo guards them and recompiles when they change. Graphs
with symbolic sizes (``dynamic=True``) run their symbolic nodes in PyTorch.
"""

from __future__ import annotations

import collections
import logging
import operator
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.tools_common import legalize_graph
from torch.fx.passes.utils.fuser_utils import fuse_as_graphmodule

from kiln.compiler import compile_graph_text
from kiln.diagnostics import KilnError
from kiln.guards import GraphGuards
from kiln.importer import (DECOMPOSITIONS, UnsupportedOpError, canonicalize,
                           check_supported, fake_mode_of, import_graph, running_in)
from kiln.runtime import Artifact

__all__ = ["BackendOptions", "FallbackError", "GraphReport", "REPORTS", "compile_aten_graph",
           "kiln_backend", "register"]

log = logging.getLogger("kiln")

# The reports of the graphs compiled last, newest last: what a benchmark or a
# test reads after torch.compile, which keeps the compiled modules to itself.
REPORTS: "collections.deque[GraphReport]" = collections.deque(maxlen=256)

aten = torch.ops.aten

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


# The importer's decompositions, less those that AOTAutograd must not apply
# to a graph's tensor constants: ``lift_fresh`` (of ``torch.tensor(...)``)
# would become an alias of a real tensor while tracing with fake ones.
_BACKEND_DECOMPOSITIONS = {
    op: fn for op, fn in DECOMPOSITIONS.items()
    if not str(op).startswith(("aten.lift_fresh.", "aten.lift."))}


class FallbackError(RuntimeError):
    """Raised with ``fallback="error"`` when a node would run in PyTorch."""


@dataclass(frozen=True)
class BackendOptions:
    """How compile_aten_graph and kiln_backend compile (module docstring)."""

    fallback: str = "eager"
    pipeline_options: Optional[Mapping[str, Any]] = None
    cache_dir: Optional[Path] = None

    @staticmethod
    def parse(options: Optional[Mapping[str, Any]]) -> "BackendOptions":
        """Options from torch.compile's ``options`` dict; unknown keys and
        values are errors, not silently ignored."""
        options = dict(options or {})
        known = {"fallback", "pipeline_options", "cache_dir"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown Kiln backend options {unknown}; "
                             f"known: {sorted(known)}")
        parsed = BackendOptions(**options)
        if parsed.fallback not in ("eager", "error"):
            raise ValueError(f"Kiln backend option fallback={parsed.fallback!r}: "
                             "expected 'eager' or 'error'")
        return parsed


@dataclass
class GraphReport:
    """What compile_aten_graph did with one graph."""

    name: str
    compiled_ops: int = 0
    kernels: int = 0
    # (op, reason) -> how many nodes ran in PyTorch for it.
    fallbacks: Dict[Tuple[str, str], int] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [f"kiln: {self.name}: {self.compiled_ops} ops compiled into "
                 f"{self.kernels} artifact(s)"]
        if self.fallbacks:
            count = sum(self.fallbacks.values())
            lines[0] += f"; {count} op(s) ran in PyTorch:"
            for (op, reason), n in sorted(self.fallbacks.items()):
                lines.append(f"  {op} x{n}: {reason}")
        return "\n".join(lines)


# ===----------------------------------------------------------------------=== #
# What a node is: values and support
# ===----------------------------------------------------------------------=== #


class _ValueRecorder(torch.fx.Interpreter):
    """Runs a graph on its example inputs (in their fake mode, if they are
    fake) and keeps every node's value."""

    def __init__(self, gm: torch.fx.GraphModule, fake_mode: Any):
        super().__init__(gm)
        self.fake_mode = fake_mode
        self.values: Dict[torch.fx.Node, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        if self.fake_mode is not None and n.op == "get_attr" and \
                isinstance(result, torch.Tensor):
            result = self.fake_mode.from_tensor(result)
        self.values[n] = result
        return result


def _record_values(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]
                   ) -> Dict[torch.fx.Node, Any]:
    fake_mode = fake_mode_of(example_inputs)
    recorder = _ValueRecorder(gm, fake_mode)
    with torch.no_grad(), running_in(fake_mode):
        recorder.run(*example_inputs, enable_io_processing=False)
    return recorder.values


def _is_static_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and all(isinstance(s, int) for s in value.shape)


def _graph_device(values: Mapping[torch.fx.Node, Any], gm: torch.fx.GraphModule) -> str:
    """Where the graph's compiled regions run: CUDA if any input is there."""
    devices = {values[n].device.type for n in gm.graph.nodes
               if n.op == "placeholder" and isinstance(values.get(n), torch.Tensor)}
    return "cuda" if "cuda" in devices else "cpu"


def _node_problem(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any],
                  device: str) -> Optional[str]:
    """Why `node` cannot join a compiled region, or None if it can."""
    results = values.get(node)
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    if not any(isinstance(r, torch.Tensor) for r in results):
        return "its value is not a tensor"
    for value in results:
        if isinstance(value, torch.Tensor):
            if not _is_static_tensor(value):
                return "symbolic sizes are not compiled by the backend yet"
            if value.device.type != device:
                return f"its value is on {value.device.type}, the graph's regions on {device}"
    for arg in pytree.tree_flatten((node.args, node.kwargs))[0]:
        if not isinstance(arg, torch.fx.Node):
            continue
        value = values.get(arg)
        if isinstance(value, (tuple, list)) and node.target is operator.getitem:
            continue
        if not _is_static_tensor(value):
            return "it reads a value that is not a tensor of static sizes"
        if value.device.type != device:
            return f"it reads a tensor on {value.device.type}, the graph's regions run on {device}"
    try:
        check_supported(node)
    except UnsupportedOpError as error:
        return error.problem
    return None


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


@dataclass
class _Region:
    """A compiled region: what was imported, and its artifact."""

    source: _ImportedRegion
    artifact: Artifact


def _import_region(gm: torch.fx.GraphModule, nodes: List[torch.fx.Node],
                   values: Mapping[torch.fx.Node, Any]) -> _ImportedRegion:
    """The region's fx-dialect text; _RegionFailure if it does not import."""
    sub_gm, inputs, outputs = fuse_as_graphmodule(gm, nodes, "kiln_region")[:3]
    copies = [n for n in sub_gm.graph.nodes if n.op not in ("placeholder", "output")]
    original = dict(zip(copies, nodes))
    copy_lines: Dict[int, torch.fx.Node] = {}
    try:
        text = import_graph(sub_gm, [values[n] for n in inputs], name=_KERNEL_GRAPH,
                            op_lines=copy_lines)
    except UnsupportedOpError as error:
        node = next((original[n] for n in copies if n.name == error.node_name), None)
        raise _RegionFailure({node: error.problem} if node is not None else
                             {n: error.problem for n in nodes}) from error
    except Exception as error:  # The importer refusing the region's inputs, say.
        reason = f"its region failed to import: {_first_line(str(error))}"
        raise _RegionFailure({n: reason for n in nodes}) from error
    op_lines = {line: original[copy] for line, copy in copy_lines.items()}
    return _ImportedRegion(nodes, tuple(inputs), tuple(outputs), text, op_lines)


def _compile_region(region: _ImportedRegion, device: str,
                    options: BackendOptions) -> _Region:
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
        raise _RegionFailure(blamed) from error
    artifact = Artifact(path, graph=_KERNEL_GRAPH,
                        guards=GraphGuards.parse(region.text, _KERNEL_GRAPH))
    return _Region(region, artifact)


class KilnRegion(torch.nn.Module):
    """A compiled region in the partitioned graph: calls its artifact."""

    def __init__(self, artifact: Artifact, text: str, returns_tuple: bool):
        super().__init__()
        self.artifact = artifact
        self.graph_text = text
        self.returns_tuple = returns_tuple

    def forward(self, *args):
        results = self.artifact(*args)
        return tuple(results) if self.returns_tuple else results[0]


def _install(gm: torch.fx.GraphModule, region: _Region, index: int,
             replaced: Dict[torch.fx.Node, torch.fx.Node]) -> None:
    """Replaces the region's nodes by a call of its artifact. `replaced`
    maps the outputs of regions installed before to what replaced them (an
    input of this region may be one)."""
    source = region.source
    name = f"kiln_region_{index}"
    gm.add_submodule(name, KilnRegion(region.artifact, source.text,
                                      len(source.outputs) > 1))
    graph = gm.graph
    inputs = tuple(replaced.get(n, n) for n in source.inputs)
    with graph.inserting_after(source.nodes[-1]):
        call = graph.call_module(name, inputs)
    if len(source.outputs) == 1:
        results = [call]
    else:
        results, anchor = [], call
        for i in range(len(source.outputs)):
            with graph.inserting_after(anchor):
                anchor = graph.call_function(operator.getitem, (call, i))
            results.append(anchor)
    for output, result in zip(source.outputs, results):
        output.replace_all_uses_with(result)
        replaced[output] = result
    for node in reversed(source.nodes):
        graph.erase_node(node)


def _propose_regions(gm: torch.fx.GraphModule, supported) -> List[List[torch.fx.Node]]:
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    partitioner = CapabilityBasedPartitioner(gm, _Supported(supported),
                                             allows_single_node_partition=True)
    regions = []
    for partition in partitioner.propose_partitions():
        nodes = sorted(partition.nodes, key=order.__getitem__)
        if any(n.target not in _VIEW_OPS for n in nodes):
            regions.append(nodes)
    return sorted(regions, key=lambda r: order[r[0]])


def compile_aten_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *,
                       name: str = "graph",
                       options: Optional[BackendOptions] = None) -> torch.fx.GraphModule:
    """Partitions an ATen-level graph (AOTAutograd's, or make_fx's with
    kiln.importer.DECOMPOSITIONS) into regions that Kiln compiles and nodes
    that run in PyTorch; returns the graph module that runs both, called like
    `gm`. `example_inputs` (real or fake tensors) give every value its type.
    The returned module's ``kiln_report`` (a GraphReport) says what ran where.
    Modifies `gm`.
    """
    options = options or BackendOptions()
    canonicalize(gm)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    values = _record_values(gm, list(example_inputs))
    device = _graph_device(values, gm)
    ops = [n for n in gm.graph.nodes if n.op == "call_function"]
    problems: Dict[torch.fx.Node, str] = {}
    for node in ops:
        problem = _node_problem(node, values, device)
        if problem is not None:
            problems[node] = problem

    # Each failed round moves at least one node out of the supported set.
    # Regions import one after another (Python, fake tensors) and compile
    # in parallel (kiln-compile processes).
    while True:
        imported, failures = [], []
        supported = {n for n in ops if n not in problems}
        for nodes in _propose_regions(gm, supported):
            try:
                imported.append(_import_region(gm, nodes, values))
            except _RegionFailure as failure:
                failures.append(failure)
        regions = []
        if imported:
            with ThreadPoolExecutor(max_workers=min(len(imported), os.cpu_count() or 1)) as pool:
                futures = [pool.submit(_compile_region, r, device, options) for r in imported]
            for future in futures:
                try:
                    regions.append(future.result())
                except _RegionFailure as failure:
                    failures.append(failure)
        for failure in failures:
            problems.update(failure.blamed)
        if not failures:
            break

    report = GraphReport(name)
    in_regions = {n for r in regions for n in r.source.nodes}
    report.kernels = len(regions)
    report.compiled_ops = sum(1 for n in in_regions if n.target is not operator.getitem)
    fallbacks = collections.Counter(
        (str(n.target), problems[n]) for n in ops
        if n not in in_regions and n in problems and n.target is not operator.getitem)
    report.fallbacks = dict(fallbacks)
    if fallbacks and options.fallback == "error":
        raise FallbackError(report.summary())

    replaced: Dict[torch.fx.Node, torch.fx.Node] = {}
    for index, region in enumerate(regions):
        _install(gm, region, index, replaced)
    legalize_graph(gm)
    gm.graph.lint()
    gm.recompile()
    gm.kiln_report = report
    REPORTS.append(report)
    (log.warning if fallbacks else log.info)("%s", report.summary())
    return gm


# ===----------------------------------------------------------------------=== #
# The TorchDynamo backend
# ===----------------------------------------------------------------------=== #


def kiln_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *,
                 options: Optional[Mapping[str, Any]] = None, **unused: Any) -> Callable:
    """The ``"kiln"`` backend of torch.compile (torch 2.x): AOTAutograd with
    Kiln's decompositions, compile_aten_graph for the forward, backward and
    inference graphs."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    parsed = BackendOptions.parse(options)
    counter = collections.Counter()

    def compiler(kind):
        def compile_graph(graph_module, inputs):
            counter[kind] += 1
            compiled = compile_aten_graph(graph_module, inputs,
                                          name=f"{kind} graph {counter[kind]}",
                                          options=parsed)
            # AOTAutograd's runtime passes the arguments as one list.
            return make_boxed_func(compiled)
        return compile_graph

    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                        inference_compiler=compiler("inference"),
                        decompositions=_BACKEND_DECOMPOSITIONS)(gm, example_inputs)


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
