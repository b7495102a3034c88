"""Matrix products that read the same operand become one product.

A transformer layer multiplies its input by the query, key and value
weights, and a gated MLP by its gate and up weights: separate products of
one matrix ``x`` by several ``Bᵢ`` (``aten.mm``, or ``aten.addmm`` with a
bias, as AOTAutograd writes ``nn.Linear``). One product by the matrix
``[B₀ B₁ …]`` computes them all, with slices of its result in their place:
one library call instead of several (host time per call), and a larger
product that keeps the GPU busier. The weights are concatenated at every
call (their copy is small next to the product that reads them).

Operands count as the same when they are one tensor viewed to one shape:
AOTAutograd gives each ``nn.Linear`` its own ``view`` of the input.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import torch
import torch.fx

aten = torch.ops.aten

_RESHAPES = {aten.view.default, aten._unsafe_view.default, aten.reshape.default}
_TRANSPOSES = {aten.t.default}


def _operand_key(node: Any) -> Tuple[Any, Any]:
    """What a product's left operand reads: a tensor, and the shape it is
    viewed to (None: as it is)."""
    if isinstance(node, torch.fx.Node) and node.target in _RESHAPES:
        return node.args[0], tuple(node.args[1])
    return node, None


def _transposed(node: Any) -> Optional[torch.fx.Node]:
    """W where `node` is Wᵀ of a matrix W (``permute(W, [1, 0])``, ``t(W)``)."""
    if not isinstance(node, torch.fx.Node):
        return None
    if node.target in _TRANSPOSES or (node.target is aten.permute.default and
                                      list(node.args[1]) == [1, 0]):
        source = node.args[0]
        return source if isinstance(source, torch.fx.Node) else None
    return None


class _Product:
    """One ``mm(a, b)`` or ``addmm(bias, a, b)`` node and its operands."""

    def __init__(self, node: torch.fx.Node, values: Mapping[torch.fx.Node, Any]):
        self.node = node
        if node.target is aten.mm.default:
            self.bias, (self.a, self.b) = None, node.args
        else:
            self.bias, self.a, self.b = node.args
        self.columns = values[node].shape[1]


def _product(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any]) -> Optional[_Product]:
    """The product `node` computes, if it is one that can merge: static
    sizes, a bias (if any) of one row."""
    if node.op != "call_function" or node.kwargs:
        return None
    if node.target is aten.mm.default and len(node.args) == 2:
        operands = node.args
    elif node.target is aten.addmm.default and len(node.args) == 3:
        operands = node.args
    else:
        return None
    if not all(isinstance(o, torch.fx.Node) for o in operands):
        return None
    result = values.get(node)
    tensors = [values.get(o) for o in operands]
    if not isinstance(result, torch.Tensor) or \
            not all(isinstance(t, torch.Tensor) for t in tensors) or \
            not all(isinstance(s, int) for t in (result, *tensors) for s in t.shape):
        return None
    if any(t.dtype != result.dtype for t in tensors):
        return None
    if node.target is aten.addmm.default and tuple(tensors[0].shape) != (result.shape[1],):
        return None
    return _Product(node, values)


def merge_shared_operand_products(gm: torch.fx.GraphModule,
                                  values: Mapping[torch.fx.Node, Any],
                                  check: Callable[[], Any]) -> int:
    """Merges the products of `gm` that read the same left operand (and
    all have a bias, or none) into one each; `values` are the nodes'
    example values. `check` runs after the rewrite (recording the new
    values, say); if it raises, the rewrite is undone. Returns how many
    products were merged away."""
    graph = gm.graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    groups: Dict[Tuple, List[_Product]] = collections.defaultdict(list)
    for node in graph.nodes:
        product = _product(node, values)
        if product is not None:
            groups[(node.target, values[node].dtype, _operand_key(product.a))].append(product)

    replaced: List[Tuple[torch.fx.Node, torch.fx.Node]] = []
    created: List[torch.fx.Node] = []
    for products in groups.values():
        if len(products) < 2:
            continue
        first = products[0].node

        def before_first(node):
            return node is None or order[node] < order[first]

        weights = [_transposed(p.b) for p in products]
        transposed = all(w is not None and before_first(w) for w in weights)
        if not transposed and not all(before_first(p.b) for p in products):
            continue
        if not all(before_first(p.bias) for p in products):
            continue
        with graph.inserting_before(first):
            if transposed:
                stacked = graph.call_function(aten.cat.default, (weights, 0))
                right = graph.call_function(aten.permute.default, (stacked, [1, 0]))
                created += [stacked, right]
            else:
                right = graph.call_function(aten.cat.default, ([p.b for p in products], 1))
                created.append(right)
            if first.target is aten.addmm.default:
                bias = graph.call_function(aten.cat.default, ([p.bias for p in products], 0))
                merged = graph.call_function(aten.addmm.default, (bias, products[0].a, right))
                created += [bias, merged]
            else:
                merged = graph.call_function(aten.mm.default, (products[0].a, right))
                created.append(merged)
            merged.meta.update({k: v for k, v in first.meta.items()
                                if k in ("stack_trace", "nn_module_stack")})
            start = 0
            for product in products:
                part = graph.call_function(aten.slice.Tensor,
                                           (merged, 1, start, start + product.columns))
                created.append(part)
                start += product.columns
                product.node.replace_all_uses_with(part)
                replaced.append((product.node, part))
    if not replaced:
        return 0
    try:
        gm.recompile()
        check()
    except Exception:  # A view of a slice that PyTorch cannot make, say.
        for node, part in replaced:
            part.replace_all_uses_with(node)
        for node in reversed(created):
            graph.erase_node(node)
        gm.recompile()
        return 0
    for node, _ in replaced:
        graph.erase_node(node)
    gm.recompile()
    return len(replaced)


__all__ = ["merge_shared_operand_products"]
