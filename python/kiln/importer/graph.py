"""Importing one captured graph (import_graph): running it on the example
inputs (real or fake) for every value's exact type, the guards of its
inputs (input_guards), and printing it as one ``fx.graph`` op.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Optional, Sequence

import torch
import torch.fx
import torch.utils._pytree as pytree

from kiln.guards import ALIGNMENT, GraphGuards, SizeSymbol, TensorGuard
from kiln.importer.constants import _FROZEN_META, _constant_of
from kiln.importer.errors import (KilnImportError, UnsupportedOpError, _describe_op,
                                  _unsupported, raise_all)
from kiln.importer.op_table import _spec_for
from kiln.importer.printer import _Printer, _format_symbol, _is_getitem, _resources_section
from kiln.importer.support import (_check_structure, _check_type, _masked_result_types,
                                   _output_values)
from kiln.importer.symbols import (SymbolValue, SymbolicIntType, _emit_symbolic_int, _guard_device,
                                   _is_symbolic_int, _is_symbolic_int_value, _related_within,
                                   _size_symbol)
from kiln.importer.tracing import _input_list
from kiln.importer.value_types import TensorType


class ValueInterpreter(torch.fx.Interpreter):
    """Runs a graph as Kiln reads it: ops on values, whatever their strides.
    A view that an input's strides cannot make (an input that comes laid
    out otherwise than it was traced with, as a region's result comes) is a
    reshape: the same values. With `reshape_views` False, such a view fails
    as in PyTorch."""

    reshape_views = True

    def run_node(self, n: torch.fx.Node) -> Any:
        try:
            return super().run_node(n)
        except (RuntimeError, ValueError):
            if not self.reshape_views or n.target not in (torch.ops.aten.view.default,
                                torch.ops.aten._unsafe_view.default):
                raise
            args, _ = self.fetch_args_kwargs_from_env(n)
            return torch.ops.aten.reshape.default(args[0], args[1])


class _TypeRecorder(ValueInterpreter):
    """Runs a graph and records the type of every value it computes."""

    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__(gm)
        self.types: Dict[torch.fx.Node, Optional[TensorType]] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        if _is_symbolic_int(n) or (n.op == "placeholder" and _is_symbolic_int_value(result)):
            self.types[n] = SymbolicIntType.of(result)
        elif isinstance(result, (tuple, list)) and n.op == "call_function":
            # A multi-result op: the types of its results, None where one is
            # not a tensor.
            self.types[n] = _masked_result_types(
                n, tuple(TensorType.of(r) for r in result),
                lambda a: self.types.get(a) if isinstance(a, torch.fx.Node) else None)
        else:
            self.types[n] = TensorType.of(result)
        return result


def fake_mode_of(values: Sequence[Any]) -> Any:
    """The FakeTensorMode of the first fake tensor among `values` (what
    AOTAutograd gives a backend's compilers), or None."""
    for value in values:
        mode = getattr(value, "fake_mode", None)
        if mode is not None:
            return mode
    return None


@contextlib.contextmanager
def running_in(fake_mode: Any) -> Iterator[None]:
    """Runs code in `fake_mode` (nothing if None), letting ops read real
    tensors too: graphs may create constants (``torch.tensor``) or hold
    them as attributes."""
    if fake_mode is None:
        yield
        return
    saved = getattr(fake_mode, "allow_non_fake_inputs", None)
    fake_mode.allow_non_fake_inputs = True
    try:
        with fake_mode:
            yield
    finally:
        fake_mode.allow_non_fake_inputs = saved


def _propagate_types(gm: torch.fx.GraphModule,
                     flat_inputs: List[Any]) -> Dict[torch.fx.Node, Optional[TensorType]]:
    """Runs `gm` on the flattened example inputs; returns each node's type.
    Fake inputs run in their fake mode, so that no op computes and the
    tensors that ops create are fake too."""
    recorder = _TypeRecorder(gm)
    fake_mode = fake_mode_of(flat_inputs)
    with torch.no_grad(), running_in(fake_mode):
        try:
            recorder.run(*flat_inputs, enable_io_processing=False)
        except Exception as error:
            raise KilnImportError(f"running the graph on the example inputs failed: "
                                  f"{error}") from error
    return recorder.types


def _flatten_inputs(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> List[Any]:
    """Flattens the example inputs as make_fx does (one placeholder per pytree
    leaf) and checks that there is one per placeholder."""
    flat, _ = pytree.tree_flatten(_input_list(example_inputs))
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(flat) != len(placeholders):
        raise KilnImportError(f"the graph has {len(placeholders)} inputs but "
                              f"{len(flat)} example inputs were given")
    return flat


def input_guards(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> GraphGuards:
    """The guards of a graph specialised on `example_inputs`: every argument's
    static sizes, contiguity and 16-byte alignment (what Kiln's ABI gives the
    compiled code: the runtime copies other inputs) and its device.

    A placeholder's type comes from its example input, so the guards restate
    the types where the types are static; they add the layout and the device.
    """
    arguments = []
    symbols: Dict[str, SizeSymbol] = {}
    for value in _flatten_inputs(gm, example_inputs):
        if _is_symbolic_int_value(value):
            continue  # Not an argument: the symbol's value (_print_graph).
        if not isinstance(value, torch.Tensor):
            arguments.append(None)  # Rejected by _check_type; never printed.
            continue
        sizes = tuple(s if isinstance(s, int) else _size_symbol(s, symbols)
                      for s in value.shape)
        arguments.append(TensorGuard(sizes, align=ALIGNMENT,
                                     device=_guard_device(value.device)))
    return GraphGuards(_related_within(list(symbols.values())), tuple(arguments))


def _print_graph(gm: torch.fx.GraphModule, types: Dict[torch.fx.Node, TensorType],
                 name: str, guards: Optional[GraphGuards],
                 op_lines: Optional[Dict[int, torch.fx.Node]] = None) -> str:
    """Prints the checked graph as one ``fx.graph`` op, with `guards` as the
    arguments' ``fx.guard`` attributes and the graph's ``symbols``. Fills
    `op_lines`, if given, with the node that each line of an op comes from
    (1-based, as diagnostics count)."""
    p = _Printer(types)
    args, body, results = [], [], []
    body_nodes = []
    frozen: Dict[str, torch.Tensor] = {}
    # The symbols that the guards bind, which symbolic integers may read.
    bound_symbols = {s.name for s in guards.symbols} if guards else None
    for node in gm.graph.nodes:
        if node.op == "placeholder" and isinstance(types.get(node), SymbolicIntType):
            # An integer input that a size symbol gives (Dynamo's s0) is no
            # argument: the graph reads the symbol, which the tensors bind.
            symbol = types[node].symbol
            if symbol is None or (bound_symbols is not None and symbol not in bound_symbols):
                raise _unsupported(node, f"integer input '{node.name}' is not a size of the "
                                         "tensor inputs, which Kiln's graphs read sizes from")
            body.append(f'{p.declare(node)} = fx.symbol_value "{symbol}"')
            body_nodes.append(node)
        elif node.op == "placeholder":
            arg = f"{p.declare(node)}: {p.type(node)}"
            guard = guards.arguments[len(args)] if guards else None
            if guard is not None:
                arg += f" {{fx.guard = {guard.to_mlir()}}}"
            args.append(arg)
        elif node.op == "get_attr":
            key = node.meta[_FROZEN_META]
            body.append(f"{p.declare(node)} = fx.constant dense_resource<{key}> : "
                        f"{p.type(node)}")
            body_nodes.append(node)
            frozen[key] = _constant_of(gm, node)
        elif _is_symbolic_int(node):
            symbol = node.target.name if isinstance(node.target, SymbolValue) \
                else types[node].symbol
            if bound_symbols is not None and symbol is not None \
                    and symbol not in bound_symbols:
                raise _unsupported(node, f"{_describe_op(node)} is the size {symbol}, "
                                         "which no guarded input dimension binds")
            body.extend(_emit_symbolic_int(p, node, types))
            body_nodes.extend([node] * (len(body) - len(body_nodes)))
        elif node.op == "call_function" and not _is_getitem(node):
            body.append(_spec_for(node).emit(p, node))
            body_nodes.append(node)
        elif node.op == "output":
            results = _output_values(node)
            for result in results:
                if isinstance(types.get(result), tuple):
                    raise _unsupported(
                        node, f"graph output '{result.name}' is every result of "
                              f"{_describe_op(result)} at once: a graph returns its "
                              "results one by one (getitem)")

    result_types = [p.type(r) for r in results]
    if guards and any(guards.arguments):
        # One guarded argument per line.
        signature = f"fx.graph {_format_symbol(name)}(\n    " + ",\n    ".join(args) + ")"
    else:
        signature = f"fx.graph {_format_symbol(name)}({', '.join(args)})"
    if len(result_types) == 1:
        signature += f" -> {result_types[0]}"
    elif result_types:
        signature += f" -> ({', '.join(result_types)})"
    symbols = guards.symbols_attribute() if guards else None
    if symbols:
        signature += f"\n    attributes {{{symbols}}}"
    output = "fx.output"
    if results:
        output += f" {', '.join(p.value(r) for r in results)} : {', '.join(result_types)}"

    lines = [signature + " {", *(f"  {line}" for line in body), f"  {output}", "}"]
    if op_lines is not None:
        line = signature.count("\n") + 2
        for node, text in zip(body_nodes, body):
            for _ in range(text.count("\n") + 1):
                op_lines[line] = node
                line += 1
    return "\n".join(lines) + "\n" + _resources_section(frozen)


def _errors_of(check, nodes) -> List[UnsupportedOpError]:
    """The UnsupportedOpError that `check` raises for each of `nodes`, but
    for the getitems of a node that failed (which fail with it)."""
    errors, failed = [], set()
    for node in nodes:
        try:
            check(node)
        except UnsupportedOpError as error:
            failed.add(node)
            if not (_is_getitem(node) and node.args[0] in failed):
                errors.append(error)
    return errors


def import_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *,
                 name: str = "forward", guards: bool = True,
                 op_lines: Optional[Dict[int, torch.fx.Node]] = None) -> str:
    """Returns the ``fx.graph @<name>`` text for an ATen-level graph.

    `example_inputs` are the inputs `gm` was captured with (nested as they were
    passed to capture); the graph runs on them to give every value its exact
    shape and dtype. With `guards`, every argument carries the guard of its
    example input (input_guards): what the graph is specialised on, which
    the runtime checks. The inputs may be fake tensors (of one
    FakeTensorMode). `op_lines`, if given, receives the node that each line
    of an op comes from, so that a diagnostic's line names its node. Raises
    UnsupportedOpError naming every node the importer cannot import, and
    KilnImportError when the inputs do not fit the graph.
    """
    # Every unsupported node at once: a user fixes them in one round.
    raise_all(_errors_of(lambda node: _check_structure(node), gm.graph.nodes))
    types = _propagate_types(gm, _flatten_inputs(gm, example_inputs))
    raise_all(_errors_of(lambda node: _check_type(node, types.get(node)), gm.graph.nodes))
    graph_guards = input_guards(gm, example_inputs) if guards else None
    return _print_graph(gm, types, name, graph_guards, op_lines)
