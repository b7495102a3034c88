"""Importing functions and exported programs: import_function (capture, then
lift or freeze the constants, seed the random ops, and with `dynamic`,
infer the sizes from several traces) and import_exported (a
``torch.export.ExportedProgram``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.fx
import torch.utils._pytree as pytree

from kiln.guards import GraphGuards, TensorGuard
from kiln.importer.constants import _frozen_values, freeze_constants, lift_constants
from kiln.importer.errors import KilnImportError
from kiln.importer.graph import (_flatten_inputs, _print_graph, _propagate_types, import_graph,
                                 input_guards)
from kiln.importer.rewrites import canonicalize, drop_implied_assertions, eliminate_dead_code
from kiln.importer.size_inference import (_SizeTerms, _ThirdTrace, _baked_counts,
                                          _divisor_candidates, _dynamic_dims, _free_size_symbol,
                                          _growths, _make_symbolic_arguments,
                                          _make_symbolic_counts, _merge_types, _name_size_symbols,
                                          _resized, _symbol_ranges, _unrolled_hint, _without_types)
from kiln.importer.symbols import _SYMBOLIC_ARGUMENT_META
from kiln.importer.tracing import (DECOMPOSITIONS, _input_list, _kept_whole, capture,
                                   keeping_resampling_whole)
from kiln.rng import draw_seed, seed_random_ops


@dataclass
class ImportedGraph:
    """A function imported by import_function.

    Attributes:
        text: the ``fx.graph`` text.
        gm: the captured graph, its constants lifted into inputs.
        constants: the lifted parameters, buffers and constants, which follow
            the function's own inputs at every call.
        guards: the graph's guards, as `text` prints them.
    """

    text: str
    gm: torch.fx.GraphModule
    constants: List[torch.Tensor]
    guards: Optional[GraphGuards]
    # The device of the seed that follows the constants at every call
    # (kiln.rng.draw_seed), or None when the graph draws no random numbers.
    seed_device: Optional[str] = None
    # How the results nest (a pytree spec), where the graph's flat outputs
    # do not say it (an exported program's).
    output_spec: Any = None


def graph_device(example_inputs: Sequence[Any], *, single: bool = False) -> str:
    """The type of the device that a graph of these example inputs runs on:
    that of their tensors (nested ones too; real, fake or a placeholder's
    ``meta["val"]``), where a zero-dim CPU tensor does not count unless all
    are such (PyTorch's CUDA ops read one as a scalar: kiln.compile moves it
    to the GPU). Among several devices CUDA wins, then the CPU; without
    tensors, the CPU. With `single`, tensors on several devices raise
    ValueError.

    The one rule for kiln.compile (when not given a device), the random
    seed of import_function and import_exported (when not given one), and
    the torch.compile backend's regions."""
    tensors = [value for value in pytree.tree_flatten(list(example_inputs))[0]
               if isinstance(value, torch.Tensor)]
    devices = ({t.device.type for t in tensors if t.dim() != 0 or t.device.type != "cpu"}
               or {t.device.type for t in tensors})
    if single and len(devices) > 1:
        raise ValueError(f"example inputs are on several devices: {sorted(devices)}")
    for device in ("cuda", "cpu"):
        if device in devices:
            return device
    return min(devices, default="cpu")


def _lift_seed(gm: torch.fx.GraphModule, device: str) -> List[torch.Tensor]:
    """Seeds the random ops of `gm` (kiln.rng.seed_random_ops) from a new
    last input, ``rng_seed``; returns an example seed for it on `device`,
    or nothing when `gm` draws no random numbers."""
    def make_seed(graph: torch.fx.Graph) -> torch.fx.Node:
        last = [n for n in graph.nodes if n.op == "placeholder"][-1:]
        context = (graph.inserting_after(last[0]) if last
                   else graph.inserting_before(next(iter(graph.nodes))))
        with context:
            return graph.placeholder("rng_seed")

    return [draw_seed(device)] if seed_random_ops(gm, make_seed) else []


def _on_inputs_device(constants: List[torch.Tensor],
                      example_inputs: Sequence[Any]) -> List[torch.Tensor]:
    """The constants, with zero-dim CPU ones (``x * torch.tensor(2.0)``,
    which PyTorch lets CUDA ops read) moved to the inputs' device when all
    of those are on one other device: an artifact reads all its inputs on
    the device it runs on."""
    devices = {t.device for t in pytree.tree_flatten(_input_list(example_inputs))[0]
               if isinstance(t, torch.Tensor)}
    if len(devices) != 1 or next(iter(devices)).type == "cpu":
        return constants
    (device,) = devices
    return [c.to(device) if c.dim() == 0 and c.device.type == "cpu" else c for c in constants]


def import_function(fn: Callable, example_inputs: Sequence[Any], *, name: str = "forward",
                    guards: bool = True,
                    dynamic: Union[bool, Dict[int, Sequence[int]]] = False,
                    device: Optional[str] = None, freeze: bool = False) -> ImportedGraph:
    """Captures `fn`, lifts its constants into inputs and imports the graph.

    With `dynamic`, chosen dimensions of the inputs are dynamic (``?``, named
    by ``#fx.symbol``s with min 2): True chooses every dimension of size 2 or
    more, a dict ``{flat input index: [dims]}`` the listed ones. Sizes 0 and 1
    stay static, as PyTorch specialises them, and equal sizes share a symbol
    (duck sizing), so the runtime checks that they stay equal.

    make_fx of torch 1.13 traces with concrete sizes, so the graph is traced a
    second time on inputs whose dynamic sizes differ (each grown by at least
    the largest dynamic size, by repeating its elements; so the second trace
    costs up to twice the memory per dynamic dimension; each symbol grows by
    its own amount, prime to 2, 3, 5 and 7: _growths): the two graphs must
    be the same op for op, with the same attributes, and a value's size may differ between them only as
    ``scale * s + offset`` of one symbol s (_merge_dim; the symbol's range
    then keeps it at least 2). A slice bound or an arange end that is a
    symbol's value in both traces (``pe[:x.shape[0]]``) becomes that
    symbol's ``fx.symbol_value``; created tensors and stretched expands name
    their sizes' symbols. A static index, slice bound or top-k on a dynamic
    dimension narrows its symbol's range so that it means what it did in the
    traces (``x[:, 3]`` needs at least 4 elements, ``pe[:s0]`` at most pe's);
    the other ops that compare a dynamic size with a static bound
    (``diagonal``, ``as_strided``) are refused. Raises UnsupportedOpError
    naming the node otherwise. Attention traces as its math (capture's
    `math_attention`).

    A graph with random ops reads a seed after the constants, on `device`
    (by default graph_device of the inputs): ImportedGraph.seed_device.

    With `freeze`, the parameters, buffers and tensor constants are frozen
    into the graph as ``fx.constant`` values (freeze_constants) instead of
    lifted into inputs; ImportedGraph.constants then holds only those that
    cannot be frozen (bool, complex).
    """
    # Dynamic imports trace attention as its math, whose sizes all follow the
    # sequence length: CUDA's fused kernel pads its logsumexp to a multiple of
    # 32, which the traces' size inference cannot follow. (The fused ops
    # lower for dynamic sizes too: the backend takes Dynamo's.)
    gm = capture(fn, example_inputs, math_attention=bool(dynamic))
    take_constants = freeze_constants if freeze else lift_constants
    constants = _on_inputs_device(take_constants(gm), example_inputs)
    seed_device = device or graph_device(example_inputs)
    inputs = [*example_inputs, *constants, *_lift_seed(gm, seed_device)]
    seed_device = seed_device if len(inputs) > len(example_inputs) + len(constants) else None
    if not dynamic:
        return ImportedGraph(import_graph(gm, inputs, name=name, guards=guards), gm,
                             constants, input_guards(gm, inputs) if guards else None,
                             seed_device)

    flat, spec = pytree.tree_flatten(_input_list(example_inputs))
    chosen = _dynamic_dims(flat, dynamic)
    values = sorted(set(chosen.values()), key=list(chosen.values()).index)
    names = {value: f"s{i}" for i, value in enumerate(values)}
    all_sizes = {int(s) for t in [*flat, *constants, *_frozen_values(gm)]
                 if isinstance(t, torch.Tensor) for s in t.shape}
    divisors = {v: 1 for v in values}
    growth = _growths(values, all_sizes, max(values))

    def grown_trace(growth: Dict[int, int]) -> Tuple[torch.fx.GraphModule, List[Any]]:
        """The graph of `fn` on the example inputs with each dynamic size
        grown by `growth` of it, and its inputs."""
        grown = list(flat)
        for index, value in enumerate(flat):
            dims = {d: s + growth[s] for (i, d), s in chosen.items() if i == index}
            if dims:
                shape = [dims.get(d, s) for d, s in enumerate(value.shape)]
                grown[index] = _resized(value, shape)
        grown_inputs = pytree.tree_unflatten(grown, spec)
        try:
            gm_grown = capture(fn, grown_inputs, math_attention=True)
        except Exception as error:
            raise KilnImportError(
                f"the function fails on inputs whose dynamic dimensions have other sizes "
                f"({error}): some of them must stay static; choose the dynamic dimensions "
                "with dynamic={input index: [dimensions]}") from error
        constants_grown = _on_inputs_device(take_constants(gm_grown), grown_inputs)
        return gm_grown, [*grown_inputs, *constants_grown,
                          *_lift_seed(gm_grown, device or graph_device(grown_inputs))]

    @functools.lru_cache(maxsize=None)
    def third_trace() -> _ThirdTrace:
        """A trace whose sizes grow by yet other amounts, by the first
        trace's nodes (traced once, when a size needs it)."""
        growth_c = _growths(values, all_sizes, 2 * max(growth.values()) + 1, growth,
                            divisors)
        gm_c, inputs_c = grown_trace(growth_c)
        types_c = _propagate_types(gm_c, _flatten_inputs(gm_c, inputs_c))
        # The first trace's nodes less the symbolic arguments it gained since.
        nodes_a = [n for n in gm.graph.nodes if _SYMBOLIC_ARGUMENT_META not in n.meta]
        nodes_c = list(gm_c.graph.nodes)
        if len(nodes_a) != len(nodes_c) or any(
                a.op != c.op or a.target != c.target for a, c in zip(nodes_a, nodes_c)):
            raise KilnImportError("the graph depends on the dynamic input sizes: it has other "
                                  "ops when they change; compile with static sizes")
        return _ThirdTrace({a: types_c.get(c) for a, c in zip(nodes_a, nodes_c)},
                           {names[v]: v + growth_c[v] for v in values},
                           dict(zip(nodes_a, nodes_c)))

    try:
        gm_b, inputs_b = grown_trace(growth)
    except KilnImportError as refusal:
        # Sizes that work as multiples of a power of two only (a U-Net's):
        # the smallest divisors that the function takes, which the size
        # symbols' guards then require.
        for divisors in _divisor_candidates(values):
            growth = _growths(values, all_sizes, max(values), divisors=divisors)
            try:
                gm_b, inputs_b = grown_trace(growth)
                break
            except KilnImportError:
                continue
        else:
            raise refusal
        # Then each symbol's as small as the function takes with the others'
        # kept: a batch need not be a multiple of what an image's sizes are.
        for value in values:
            while divisors[value] > 1:
                fewer = {**divisors, value: divisors[value] // 2}
                growth_fewer = _growths(values, all_sizes, max(values), divisors=fewer)
                try:
                    gm_b, inputs_b = grown_trace(growth_fewer)
                except KilnImportError:
                    break
                divisors, growth = fewer, growth_fewer
    symbols = {names[v]: (v, v + growth[v]) for v in values}
    _make_symbolic_arguments(gm, gm_b, symbols, third_trace)
    if _baked_counts(gm, gm_b):
        # The sizes' terms tell which element counts the graph scales by.
        terms: _SizeTerms = {}
        types_a = _propagate_types(gm, _flatten_inputs(gm, inputs))
        _merge_types(gm, types_a, gm_b, _propagate_types(gm_b, _flatten_inputs(gm_b, inputs_b)),
                     symbols, {}, third_trace, terms, {names[v]: d for v, d in divisors.items()})
        _make_symbolic_counts(gm, gm_b, symbols, terms, types_a, third_trace)
    text_a = import_graph(gm, inputs, name=name, guards=False)
    text_b = import_graph(gm_b, inputs_b, name=name, guards=False)
    for line_a, line_b in zip(_without_types(text_a), _without_types(text_b)):
        if line_a != line_b:
            raise KilnImportError(
                f"the graph depends on the dynamic input sizes beyond its types: "
                f"'{line_a.strip()}' becomes '{line_b.strip()}' when they change; "
                f"compile with static sizes{_unrolled_hint(gm, gm_b)}")
    if len(_without_types(text_a)) != len(_without_types(text_b)):
        raise KilnImportError("the graph depends on the dynamic input sizes: it has other "
                              f"ops when they change; compile with static sizes"
                              f"{_unrolled_hint(gm, gm_b)}")

    types_a = _propagate_types(gm, _flatten_inputs(gm, inputs))
    types_b = _propagate_types(gm_b, _flatten_inputs(gm_b, inputs_b))
    minimums: Dict[str, int] = {}
    terms: _SizeTerms = {}
    types = _merge_types(gm, types_a, gm_b, types_b, symbols, minimums, third_trace, terms,
                         {names[v]: d for v, d in divisors.items()})
    _name_size_symbols(gm, gm_b, types_a, types_b, types, symbols, third_trace, terms)
    ranges = _symbol_ranges(gm, gm_b, types_a, types_b, types, symbols, minimums,
                            third_trace)
    for symbol, (low, high) in ranges.items():
        value = symbols[symbol][0]
        if low > value or (high is not None and high < symbols[symbol][1]):
            raise KilnImportError(f"the graph's bounds keep size symbol {symbol} within "
                                  f"[{low}, {high}], which its example size {value} or "
                                  "its second trace leaves; compile with static sizes")
    graph_guards = None
    if guards:
        static = input_guards(gm, inputs)
        arguments = list(static.arguments)
        for index, guard in enumerate(arguments):
            sizes = tuple(names[size] if (index, d) in chosen else size
                          for d, size in enumerate(guard.sizes)) if guard else None
            if guard is not None:
                arguments[index] = TensorGuard(sizes, guard.strides, guard.align, guard.device)
        graph_guards = GraphGuards(tuple(_free_size_symbol(names[v], *ranges[names[v]], divisors[v])
                                         for v in values), tuple(arguments))
    return ImportedGraph(_print_graph(gm, types, name, graph_guards), gm, constants,
                         graph_guards, seed_device)


def import_exported(program: Any, *, name: str = "forward", guards: bool = True,
                    device: Optional[str] = None) -> ImportedGraph:
    """Imports a ``torch.export.ExportedProgram`` (torch 2.x).

    The program's graph is decomposed to the ops the fx table has
    (``run_decompositions`` with _export_decompositions); its parameters,
    buffers and constant tensors become inputs after the user's, as
    lift_constants makes them (ImportedGraph.constants); the sizes that
    ``dynamic_shapes`` made symbolic become size symbols. A program that updates buffers or inputs
    (a module exported in training mode) is refused. Random ops read a seed
    on `device` (by default graph_device of the user inputs) after the constants.
    """
    from torch.export.graph_signature import InputKind, OutputKind

    with keeping_resampling_whole():
        program = program.run_decompositions(_export_decompositions())
    signature = program.graph_signature
    updates = [spec for spec in signature.output_specs if spec.kind != OutputKind.USER_OUTPUT]
    if updates:
        raise KilnImportError(
            f"the program updates {', '.join(str(u.target or u.arg) for u in updates)} "
            f"({updates[0].kind.name.lower()}), which Kiln does not compile; export the "
            "module in eval mode")
    gm = program.graph_module
    canonicalize(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    user, lifted, constants = [], [], []
    lifted_kinds = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    for node, spec in zip(placeholders, signature.input_specs):
        if spec.kind == InputKind.USER_INPUT:
            user.append(node)
        elif spec.kind in lifted_kinds:
            tensors = program.state_dict if spec.target in program.state_dict \
                else program.constants
            lifted.append(node)
            constants.append(tensors[spec.target])
        else:
            raise KilnImportError(f"program input {spec.arg} ({spec.kind.name.lower()}) "
                                  "is not supported")
    # The user's inputs first, as kiln.compile's callable passes them.
    anchor = user[-1] if user else None
    for node in lifted if anchor is not None else ():
        anchor.append(node)
        anchor = node
    user_values = [n.meta["val"] for n in user]
    constants = _on_inputs_device(constants, user_values)
    seed_device = device or graph_device(user_values)
    seed = _lift_seed(gm, seed_device)
    drop_implied_assertions(gm)
    eliminate_dead_code(gm)
    gm.recompile()
    inputs = [*user_values, *constants, *seed]
    return ImportedGraph(import_graph(gm, inputs, name=name, guards=guards), gm, constants,
                         input_guards(gm, inputs) if guards else None,
                         seed_device if seed else None, _exported_out_spec(program))


def _export_decompositions() -> Dict[Any, Callable]:
    """What run_decompositions applies to an exported program: torch.export's
    defaults (Core ATen, which also decomposes composite ops that export
    keeps, such as ``aten.linear`` and ``aten.conv2d``) less the ops the fx
    table has, then DECOMPOSITIONS."""
    try:
        from torch.export import default_decompositions
        table = default_decompositions()
    except ImportError:  # torch < 2.6
        from torch._decomp import core_aten_decompositions
        table = core_aten_decompositions()
    for op in list(table.keys()):
        if _kept_whole(op):
            table.pop(op)
    table.update(DECOMPOSITIONS)
    return table


def _exported_out_spec(program: Any) -> Any:
    """How an exported program's results nest: the out_spec of its root
    module's call signature (or of its call_spec), None if unknown."""
    for entry in getattr(program, "module_call_graph", ()):
        if entry.fqn == "" and entry.signature is not None:
            return entry.signature.out_spec
    return getattr(getattr(program, "call_spec", None), "out_spec", None)
