"""Checking nodes against the op table: check_supported and is_supported
(which the torch.compile backend asks of each node), and the structural and
type checks that import_graph makes before it prints.
"""

from __future__ import annotations

from typing import Any, Callable, List, Tuple

import torch
import torch.fx
import torch.utils._pytree as pytree

from kiln.importer.constants import _FROZEN_META
from kiln.importer.errors import (UnsupportedDtypeError, UnsupportedOpError, _describe_op,
                                  _unsupported)
from kiln.importer.op_table import _OPS, _TableOp, _spec_for
from kiln.importer.printer import _is_getitem
from kiln.importer.symbols import SymbolicIntType, _check_symbolic_int, _is_symbolic_int
from kiln.importer.value_types import TensorType, _ELEMENT_TYPES
from kiln.rng import aten_target

aten = torch.ops.aten


_UNKNOWN = object()  # A node's value type when nothing says what it is.


def _output_values(node: torch.fx.Node) -> List[torch.fx.Node]:
    """The tensors an output node returns, flattened in pytree order: one
    node, or the leaves of nested tuples and lists (``var_mean`` and ``sort``
    return pairs, ``split`` a list). `None` leaves (a backward graph's
    gradient of an input that needs none) are no results of the graph; the
    caller puts them back (kiln.compiler.CompiledFunction)."""
    (result,) = node.args
    flat = [r for r in pytree.tree_flatten(result)[0] if r is not None]
    if flat and all(isinstance(r, torch.fx.Node) for r in flat):
        return flat
    raise _unsupported(node, f"graph output {result!r} is not supported: a graph must "
                             "return tensors (and Nones), in nested tuples or lists, "
                             "at least one tensor")


# Ops whose result's size depends on their operands' values, which no fx op
# represents (and indexing by a boolean mask: _indexes_by_mask).
_SIZED_BY_VALUES = ("aten.nonzero.", "aten.masked_select.", "aten.unique_dim.",
                    "aten.unique_consecutive.", "aten._unique.", "aten._unique2.",
                    "aten.unique_dim_consecutive.", "aten.repeat_interleave.Tensor",
                    "aten.bincount.", "aten.argwhere.")


def _indexes_by_mask(node: torch.fx.Node) -> bool:
    """Whether `node` is ``x[mask]`` (aten.index.Tensor with a bool or uint8
    index), whose result has as many elements as the mask has true ones.
    (index_put through a mask keeps its size.)"""
    if aten_target(node) is not aten.index.Tensor:
        return False
    # Nodes that Kiln's own rewrites made have no value yet: never masks.
    return any(isinstance(index, torch.fx.Node)
               and getattr(index.meta.get("val", index.meta.get("tensor_meta")), "dtype",
                           None) in (torch.bool, torch.uint8)
               for index in node.args[1])


def _check_structure(node: torch.fx.Node) -> None:
    """Raises UnsupportedOpError unless the importer knows `node`'s op and
    arguments. Types are checked separately (_check_type)."""
    if node.op == "placeholder":
        return
    if node.op == "output":
        _output_values(node)
        return
    if node.op == "get_attr":
        if node.meta.get(_FROZEN_META) is not None:
            return
        raise _unsupported(node, f"get_attr {node.target} is not supported: parameters, "
                                 "buffers and constants must be graph inputs (lift them "
                                 "with kiln.importer.lift_constants) or frozen "
                                 "(kiln.importer.freeze_constants)")
    if node.op != "call_function":
        raise _unsupported(node, f"{_describe_op(node)} is not supported")
    if _is_symbolic_int(node):
        _check_symbolic_int(node)
        return
    if _is_getitem(node):
        source, index = node.args
        if not (isinstance(source, torch.fx.Node) and source.op == "call_function"
                and aten_target(source) in _OPS and isinstance(index, int)):
            raise _unsupported(node, "getitem is supported only on the results of an "
                                     "imported op")
        return
    if str(aten_target(node)).startswith(_SIZED_BY_VALUES) or _indexes_by_mask(node):
        raise _unsupported(node, f"unsupported op {_describe_op(node)}: the size of its result "
                                 "depends on its operands' values, which no compiled kernel's "
                                 "type can say (torch.where keeps a mask's size)")
    spec = _spec_for(node)
    if spec is None:
        raise _unsupported(node, f"unsupported op {_describe_op(node)}")
    spec.check(node)


def _check_type(node: torch.fx.Node, value_type: Any) -> None:
    """Raises UnsupportedOpError unless `node` (a placeholder or an op) produces a
    tensor of a supported dtype. `value_type` is a TensorType, None for a
    non-tensor value, or _UNKNOWN."""
    if node.op not in ("placeholder", "call_function") or value_type is _UNKNOWN \
            or isinstance(value_type, SymbolicIntType):
        return
    if isinstance(value_type, tuple):
        for element in value_type:
            _check_type(node, element)
        return
    if value_type is None:
        what = "graph input" if node.op == "placeholder" else f"result of {_describe_op(node)}"
        raise _unsupported(node, f"non-tensor {what} is not supported: graph inputs and "
                                 "values must be strided tensors")
    if value_type.dtype not in _ELEMENT_TYPES:
        raise _unsupported(node, f"dtype {value_type.dtype} of {_describe_op(node)} is "
                                 "not supported", error=UnsupportedDtypeError)


def _masked_result_types(node: torch.fx.Node, types: Tuple[Any, ...],
                         type_of: Callable[[Any], Any]) -> Tuple[Any, ...]:
    """A multi-result op's `types` with those of the results its
    ``output_mask`` (or ``grad_input_mask``) leaves out (None in PyTorch)
    filled in: the fx op still has them, undefined. `type_of` gives an
    argument's type."""
    if None not in types:
        return types
    target = aten_target(node)
    efficient_backward = getattr(aten, "_scaled_dot_product_efficient_attention_backward", None)
    if efficient_backward is not None and target is efficient_backward.default:
        # The bias's gradient, wanted only where the bias needs one: empty.
        query = type_of(node.args[1])
        if not isinstance(query, TensorType):
            return types
        return types[:3] + (TensorType((0,), query.dtype),)
    if target is not aten.convolution_backward.default:
        return types
    grad, input, weight = (type_of(a) for a in node.args[:3])
    if not all(isinstance(t, TensorType) for t in (grad, input, weight)):
        return types
    # grad_input, grad_weight, and grad_bias of one element per output
    # channel (per filter, or a transposed convolution's groups times its
    # weight's second dimension).
    filled = (input, weight, TensorType(grad.shape[1:2], grad.dtype))
    return tuple(t if t is not None else f for t, f in zip(types, filled))


def _type_from_meta(node: torch.fx.Node) -> Any:
    """A node's type as tracing recorded it in ``node.meta``."""
    for key in ("val", "tensor_meta"):
        if key in node.meta:
            value = node.meta[key]
            value_type = TensorType.of(value)  # TensorMetadata is a tuple too.
            if value_type is None and isinstance(value, (tuple, list)):
                # A multi-result op's.
                return _masked_result_types(
                    node, tuple(TensorType.of(v) for v in value),
                    lambda a: _type_from_meta(a) if isinstance(a, torch.fx.Node) else None)
            return value_type
    # make_fx records no metadata for a non-tensor placeholder.
    return None if node.op == "placeholder" else _UNKNOWN


def check_supported(node: torch.fx.Node) -> None:
    """Raises UnsupportedOpError unless import_graph can import `node`.

    The error names the op (``aten.nonzero.default``), the line of user code
    that created the node when tracing recorded it, and the FX node; its
    ``op``, ``node_name`` and ``location`` say the same for programs. Judges
    the op and its arguments, and the value's dtype from ``node.meta`` where
    tracing recorded it (make_fx and Dynamo do); a placeholder without
    tensor metadata counts as a non-tensor input. Needs no example inputs, so
    a partitioner can ask it of every node of a graph.
    """
    _check_structure(node)
    _check_type(node, _type_from_meta(node))
    spec = _spec_for(node) if node.op == "call_function" else None
    if isinstance(spec, _TableOp) and any(
            key.startswith("dynamic_") for key in spec._bind_symbolic(node)):
        # A partition would get the integer as an input, which is no tensor.
        raise _unsupported(node, f"{_describe_op(node)} has a symbolic integer argument, "
                                 "which Kiln imports only within a whole graph")


def is_supported(node: torch.fx.Node) -> bool:
    """Whether import_graph can import `node` (check_supported says why not)."""
    try:
        check_supported(node)
    except UnsupportedOpError:
        return False
    return True
