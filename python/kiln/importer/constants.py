"""A captured graph's constants (``get_attr`` nodes: parameters, buffers,
tensor constants): lifted into graph inputs (lift_constants) or frozen into
the graph as ``fx.constant`` values (freeze_constants).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

import torch
import torch.fx

from kiln.importer.errors import _unsupported


def lift_constants(gm: torch.fx.GraphModule) -> List[torch.Tensor]:
    """Turns the graph's ``get_attr`` nodes (a module's parameters and
    buffers, tensor constants) into graph inputs after the existing ones, in
    the order the graph first reads them; returns their tensors, which the
    caller passes after its own inputs::

        constants = lift_constants(gm)
        text = import_graph(gm, [*example_inputs, *constants])

    The tensors are the module's own (not copies), so updating a parameter in
    place changes what the next call reads. Raises UnsupportedOpError for an
    attribute that is not a tensor.
    """
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    constants, lifted = [], {}
    for node in list(graph.nodes):
        if node.op != "get_attr" or node.meta.get(_FROZEN_META) is not None:
            continue
        if node.target not in lifted:
            value = gm
            for part in node.target.split("."):
                value = getattr(value, part)
            if not isinstance(value, torch.Tensor):
                raise _unsupported(node, f"get_attr {node.target} is a "
                                         f"{type(value).__name__}, not a tensor")
            anchor = placeholders[-1] if placeholders else None
            context = (graph.inserting_after(anchor) if anchor is not None
                       else graph.inserting_before(next(iter(graph.nodes))))
            with context:
                placeholder = graph.placeholder(node.target.replace(".", "_"))
            placeholder.meta.update(node.meta)
            placeholders.append(placeholder)
            lifted[node.target] = placeholder
            constants.append(value)
        node.replace_all_uses_with(lifted[node.target])
        graph.erase_node(node)
    return constants


# The dense_resource key of a frozen get_attr node, in its meta.
_FROZEN_META = "kiln_frozen"


# Element types whose bytes a dense_resource blob holds as PyTorch does.
_FREEZABLE_DTYPES = {
    torch.float64, torch.float32, torch.float16, torch.bfloat16,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
}


def _constant_of(gm: torch.fx.GraphModule, node: torch.fx.Node) -> Any:
    """The value of a ``get_attr`` node."""
    value = gm
    for part in node.target.split("."):
        value = getattr(value, part)
    return value


def freeze_constants(gm: torch.fx.GraphModule) -> List[torch.Tensor]:
    """Marks the graph's ``get_attr`` nodes (parameters, buffers, tensor
    constants) to be frozen into the imported graph as ``fx.constant``
    values, whose bytes the text's ``dialect_resources`` section holds; the
    compiled artifact then carries them and the caller does not pass them.
    Constants of the float and integer dtypes are frozen (a tensor read under
    several names once); the others (bool, complex), whose constants the
    compiler does not place yet, are lifted into inputs as lift_constants
    does; returns those, which the caller passes after its
    own inputs. Later changes to the module's tensors do not reach the
    artifact: it holds the values they had at import."""
    # By tensor, so that a tensor read under two names (tied weights) is
    # stored once.
    keys: Dict[int, str] = {}
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        value = _constant_of(gm, node)
        if not isinstance(value, torch.Tensor) or value.dtype not in _FREEZABLE_DTYPES \
                or value.is_quantized or value.layout != torch.strided:
            continue
        if id(value) not in keys:
            base = re.sub(r"\W", "_", node.target)
            base = base if base[:1].isalpha() or base[:1] == "_" else f"c_{base}"
            key, suffix = base, 0
            while key in keys.values():
                suffix += 1
                key = f"{base}_{suffix}"
            keys[id(value)] = key
        node.meta[_FROZEN_META] = keys[id(value)]
    return lift_constants(gm)


def _frozen_values(gm: torch.fx.GraphModule) -> List[torch.Tensor]:
    """The tensors freeze_constants left in `gm` as frozen ``get_attr`` nodes."""
    return [_constant_of(gm, n) for n in gm.graph.nodes
            if n.op == "get_attr" and n.meta.get(_FROZEN_META) is not None]
