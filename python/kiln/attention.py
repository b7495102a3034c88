"""Explicit attention in ATen graphs, rewritten into one fused call.

Models that write attention out (``softmax(q @ k.transpose(-1, -2) * c +
mask) @ v``: T5, DistilBERT and RoBERTa without PyTorch's fused attention)
trace to two batched products around a softmax. As Kiln lowers them, the
scores are stored between the products; PyTorch's fused attention kernels
(flash, memory-efficient, cuDNN) keep them on chip. The torch.compile
backend rewrites such a chain into ``aten.scaled_dot_product_attention``
where that op is one of its library ops, as Inductor's attention patterns
do.

CUDA's memory-efficient attention without dropout hands out a Philox state
on the CPU that it never reads; detach_philox_state frees such attention
and its gradient from it, so that both can join regions on the GPU.

A match needs, in the traced graph (``torch.matmul`` on 4-d tensors traces
to ``expand``, ``view`` or ``clone`` + ``_unsafe_view``, ``bmm`` and
``_unsafe_view``):

    scores  = bmm(q viewed [B·H, S, D], kᵀ viewed [B·H, D, T]) viewed [B, H, S, T]
    scaled  = scores * c, scores / c, or scores
    biased  = scaled + mask (broadcast to [B, H, S, T]), or scaled
    weights = _softmax(biased, -1, False), or for 16-bit scores
              _softmax(biased cast to f32, -1, False) cast back
    out     = bmm(weights viewed [B·H, S, T], v viewed [B·H, T, E]) viewed [B, H, S, E]

with q, k and v 4-d and static, of one floating dtype, kᵀ a transpose of
the last two dimensions of k, no broadcast in the views, and the weights
used only on their way to the second product (a training graph keeps them
for the backward pass, and is left alone). The operands may reach the
products scaled by numbers (the factors multiply into c) and cast to wider
float dtypes, and the product cast back; the weights may be PyTorch's
_safe_softmax, where(all(eq(biased, -inf), -1), zeros, weights). That
covers PyTorch's math attention as AOTAutograd traces a masked
``scaled_dot_product_attention`` of a 16-bit model: q and kᵀ cast to f32
and each scaled by √c, v cast to f32, the result cast back.
"""

from __future__ import annotations

import numbers
import operator
from dataclasses import dataclass
from typing import Any, Callable, Collection, List, Mapping, Optional, Sequence, Tuple

import torch
import torch.fx

from kiln.importer import eliminate_dead_code

aten = torch.ops.aten

_CONVERT_ELEMENT_TYPE = getattr(getattr(torch.ops, "prims", None), "convert_element_type",
                                None)
_CONVERT_ELEMENT_TYPE = getattr(_CONVERT_ELEMENT_TYPE, "default", None)

# A product or quotient by a number, as captures spell it.
_MULTIPLIES = {aten.mul.Tensor, aten.mul.Scalar}
_DIVIDES = {aten.div.Tensor, aten.div.Scalar}

# Views and copies that torch.matmul's decomposition puts between a 4-d
# operand and its batched product.
_MATMUL_RESHAPES = {aten.expand.default, aten.view.default, aten._unsafe_view.default,
                    aten.reshape.default, aten.clone.default}


@dataclass
class AttentionMatch:
    """One explicit attention: its operands, the scale of its scores, and
    the node whose value it computes (the second product, viewed 4-d)."""
    query: torch.fx.Node
    key: torch.fx.Node
    value: torch.fx.Node
    mask: Optional[torch.fx.Node]
    scale: float
    output: torch.fx.Node


def _shape(values: Mapping[torch.fx.Node, Any], node: Any) -> Optional[List[int]]:
    value = values.get(node) if isinstance(node, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor):
        return None
    shape = list(value.shape)
    return shape if all(isinstance(size, int) for size in shape) else None


def _only_user(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _source_4d(node: torch.fx.Node, values: Mapping[torch.fx.Node, Any]
               ) -> Optional[torch.fx.Node]:
    """The 4-d tensor [B, H, S, D] that `node` (a product's operand, [B·H, S,
    D]) reshapes, through reshapes, copies and expands that keep its shape,
    each read only by the next."""
    batched = _shape(values, node)
    if batched is None or len(batched) != 3:
        return None
    while node.target in _MATMUL_RESHAPES and isinstance(node.args[0], torch.fx.Node):
        source = node.args[0]
        shape = _shape(values, source)
        if shape is None or _only_user(source) is not node:
            return None
        if len(shape) == 4:
            if shape[0] * shape[1] != batched[0] or shape[2:] != batched[1:]:
                return None
            while source.target in (aten.expand.default, aten.clone.default) and \
                    isinstance(source.args[0], torch.fx.Node) and \
                    _shape(values, source.args[0]) == shape and \
                    _only_user(source.args[0]) is source:
                source = source.args[0]
            return source
        node = source
    return None


def _transposed_key(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    """k where `node` is k with its last two dimensions swapped."""
    if node.target is aten.permute.default and list(node.args[1]) == [0, 1, 3, 2]:
        return node.args[0]
    if node.target is aten.transpose.int and sorted(d % 4 for d in node.args[1:3]) == [2, 3]:
        return node.args[0]
    return None


def _holds(wide: torch.dtype, narrow: torch.dtype) -> bool:
    """Whether every value of floating-point dtype `narrow` is one of
    `wide`'s (f32 holds bf16 and f16; neither 16-bit type holds the
    other)."""
    wide_info, narrow_info = torch.finfo(wide), torch.finfo(narrow)
    return wide_info.eps <= narrow_info.eps and wide_info.max >= narrow_info.max and \
        wide_info.tiny <= narrow_info.tiny


def _cast_of(node: Any, values: Mapping[torch.fx.Node, Any],
             widening: bool = False) -> Optional[torch.fx.Node]:
    """x where `node` only converts x, floating-point, to another
    floating-point dtype (on its device); with `widening`, to one at least as
    wide, so that computing in x's dtype instead loses nothing."""
    if not isinstance(node, torch.fx.Node) or not node.args or \
            not isinstance(node.args[0], torch.fx.Node):
        return None
    source, result = values.get(node.args[0]), values.get(node)
    if not isinstance(source, torch.Tensor) or not isinstance(result, torch.Tensor) or \
            not source.dtype.is_floating_point or not result.dtype.is_floating_point or \
            (widening and not _holds(result.dtype, source.dtype)):
        return None
    if node.target is aten._to_copy.default and len(node.args) == 1 and \
            set(node.kwargs) <= {"dtype", "layout", "device"} and \
            node.kwargs.get("layout", torch.strided) == torch.strided and \
            node.kwargs.get("device", source.device) == source.device:
        return node.args[0]
    if node.target is _CONVERT_ELEMENT_TYPE:
        return node.args[0]
    return None


def _scaled_by(node: Any) -> Optional[tuple]:
    """(x, c) where `node` is x multiplied by a number c (or divided by
    1/c)."""
    if not isinstance(node, torch.fx.Node) or not (
            node.target in _MULTIPLIES or node.target in _DIVIDES):
        return None
    factor = node.args[1] if len(node.args) == 2 else None
    if node.kwargs or not isinstance(factor, numbers.Real) or isinstance(factor, bool) or \
            factor == 0 or not isinstance(node.args[0], torch.fx.Node):
        return None
    return node.args[0], float(factor) if node.target in _MULTIPLIES else 1.0 / float(factor)


def _strip(node: Any, values: Mapping[torch.fx.Node, Any]) -> tuple:
    """(x, c) where `node` is x times c through multiplications and
    divisions by numbers and widening casts (the operands of the products,
    in whatever wider dtype they are computed)."""
    factor = 1.0
    while True:
        scaled = _scaled_by(node)
        if scaled is not None:
            node, factor = scaled[0], factor * scaled[1]
            continue
        cast = _cast_of(node, values, widening=True)
        if cast is not None:
            node = cast
            continue
        return node, factor


def _is_fully_masked_rows(node: Any, scores: Sequence[Any]) -> bool:
    """Whether `node` is all(eq(x, -inf), -1, keepdim=True) of one of
    `scores` (the softmax's input, or what it was cast from)."""
    if not isinstance(node, torch.fx.Node) or node.target is not aten.all.dim or \
            tuple(node.args[1:]) not in ((-1, True), (3, True)) or node.kwargs:
        return False
    equal = node.args[0]
    return isinstance(equal, torch.fx.Node) and equal.target is aten.eq.Scalar and \
        equal.args[0] in scores and equal.args[1] == float("-inf")


def _safe_softmax_result(softmax: torch.fx.Node,
                         values: Mapping[torch.fx.Node, Any]) -> Optional[torch.fx.Node]:
    """The weights of a softmax that fully masked rows set to zero
    (PyTorch's _safe_softmax: where(all(eq(x, -inf)), zeros, softmax)), or
    the softmax itself when nothing else reads it."""
    users = list(softmax.users)
    if len(users) == 1:
        return softmax
    if len(users) != 2:
        return None
    where = next((u for u in users if u.target is aten.where.self), None)
    zeros = next((u for u in users if u is not where), None)
    if where is None or zeros is None or list(zeros.users) != [where] or \
            zeros.target not in (aten.full_like.default, aten.zeros_like.default) or \
            (zeros.target is aten.full_like.default and zeros.args[1] != 0) or \
            where.args[1:] != (zeros, softmax):
        return None
    scores = softmax.args[0]
    if not _is_fully_masked_rows(where.args[0], (scores, _cast_of(scores, values))):
        return None
    return where


def _is_scores_product(node: Any) -> bool:
    """Whether `node` views a batched product 4-d."""
    return isinstance(node, torch.fx.Node) and \
        node.target in (aten._unsafe_view.default, aten.view.default) and \
        isinstance(node.args[0], torch.fx.Node) and node.args[0].target is aten.bmm.default


def _match(softmax: torch.fx.Node, values: Mapping[torch.fx.Node, Any]
           ) -> Optional[AttentionMatch]:
    if softmax.target is not aten._softmax.default or softmax.args[2] or \
            softmax.args[1] not in (-1, 3) or not isinstance(softmax.args[0], torch.fx.Node):
        return None
    weights_shape = _shape(values, softmax)
    if weights_shape is None or len(weights_shape) != 4:
        return None

    # Down: the weights (cast back, for a softmax computed in f32), their
    # product with v, viewed 4-d, and cast back.
    node = _safe_softmax_result(softmax, values)
    while node is not None:
        user = _only_user(node)
        if user is None:
            return None
        if user.target is aten.bmm.default:
            break
        if user.target not in _MATMUL_RESHAPES and _cast_of(user, values) is not node:
            return None
        node = user
    if node is None:
        return None
    product = user
    if product.args[0] is not node or _source_4d(node, values) is None:
        return None
    value_operand = _source_4d(product.args[1], values)
    output = _only_user(product)
    if value_operand is None or output is None or output.target not in (
            aten._unsafe_view.default, aten.view.default):
        return None
    value, value_factor = _strip(value_operand, values)
    dtype = values[value].dtype
    if values[output].dtype != dtype:
        downcast = _only_user(output)
        if _cast_of(downcast, values) is not output or values[downcast].dtype != dtype:
            return None
        output = downcast

    # Up: the mask, the scale and the scores' product.
    biased = _cast_of(softmax.args[0], values, widening=True) or softmax.args[0]
    mask, scores = None, biased
    if biased.target is aten.add.Tensor and len(biased.args) == 2 and not biased.kwargs:
        for side, other in (biased.args, reversed(biased.args)):
            if isinstance(side, torch.fx.Node) and isinstance(other, torch.fx.Node) and \
                    _is_scores_product(_strip(side, values)[0]):
                scores, mask = side, other
                break
        else:
            return None
    first, scale = _strip(scores, values)
    if not _is_scores_product(first):
        return None
    first = first.args[0]
    query_operand = _source_4d(first.args[0], values)
    key_operand = _source_4d(first.args[1], values)
    if query_operand is None or key_operand is None:
        return None
    query, query_factor = _strip(query_operand, values)
    key_transposed, key_factor = _strip(key_operand, values)
    key = _transposed_key(key_transposed)
    if key is None:
        return None
    key, cast_factor = _strip(key, values)
    scale *= query_factor * key_factor * cast_factor
    if value_factor != 1.0:
        return None

    # Shapes and dtypes: q [B, H, S, D], k [B, H, T, D], v [B, H, T, E].
    q, k, v = (_shape(values, n) for n in (query, key, value))
    if q is None or k is None or v is None or len(q) != 4 or len(k) != 4 or len(v) != 4:
        return None
    batch, heads, length, _ = q
    if k[:2] != [batch, heads] or v[:2] != [batch, heads] or k[3] != q[3] or \
            v[2] != k[2] or weights_shape != [batch, heads, length, k[2]] or \
            _shape(values, output) != [batch, heads, length, v[3]]:
        return None
    if not dtype.is_floating_point or \
            any(values[n].dtype != dtype for n in (query, key, value, output)):
        return None
    if mask is not None:
        # A number added to the scores (a bool would be a mask to SDPA),
        # broadcast to them.
        mask_shape = _shape(values, mask)
        if mask_shape is None or values[mask].dtype != dtype or len(mask_shape) > 4 or \
                any(size not in (1, full)
                    for size, full in zip(reversed(mask_shape), reversed(weights_shape))):
            return None
    return AttentionMatch(query, key, value, mask, scale, output)


def find_explicit_attention(gm: torch.fx.GraphModule,
                            values: Mapping[torch.fx.Node, Any]) -> List[AttentionMatch]:
    """The explicit attentions of `gm`, whose nodes' example values are
    `values` (real or fake tensors)."""
    matches = []
    for node in gm.graph.nodes:
        if node.op == "call_function":
            match = _match(node, values)
            if match is not None:
                matches.append(match)
    return matches


def fuse_explicit_attention(gm: torch.fx.GraphModule, values: Mapping[torch.fx.Node, Any],
                            target: Callable) -> int:
    """Replaces each explicit attention of `gm` with one call of `target`
    (``aten.scaled_dot_product_attention.default``, or a function of the
    same signature); the chain it replaces is left for dead-code
    elimination. Returns how many it replaced."""
    replaced = 0
    # One at a time: a fused call may be the next attention's operand, and
    # the chain it replaces must be gone before that one matches.
    while True:
        matches = find_explicit_attention(gm, values)
        if not matches:
            break
        match = matches[0]
        with gm.graph.inserting_before(match.output):
            fused = gm.graph.call_function(
                target, (match.query, match.key, match.value),
                {"attn_mask": match.mask, "dropout_p": 0.0, "is_causal": False,
                 "scale": match.scale})
        fused.meta.update({key: value for key, value in match.output.meta.items()
                           if key in ("stack_trace", "nn_module_stack")})
        # The fused call's value is the one it replaces (as the matcher
        # reads it for a later attention).
        values = {**values, fused: values[match.output]}
        match.output.replace_all_uses_with(fused)
        eliminate_dead_code(gm)
        replaced += 1
    if replaced:
        gm.recompile()
    return replaced


def _efficient_attention_ops() -> Tuple[Any, Any]:
    """CUDA's memory-efficient attention and its gradient (None before torch
    2.1)."""
    forward = getattr(aten, "_scaled_dot_product_efficient_attention", None)
    backward = getattr(aten, "_scaled_dot_product_efficient_attention_backward", None)
    return (getattr(forward, "default", None), getattr(backward, "default", None))


def unused_philox_state() -> torch.Tensor:
    """A memory-efficient attention's Philox seed or offset without dropout,
    which nothing reads: 0, on the CPU, as eager's kernel hands it out."""
    return torch.zeros((), dtype=torch.int64)


def _argument(node: torch.fx.Node, index: int, name: str, default: Any) -> Any:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def detach_philox_state(gm: torch.fx.GraphModule, values: Mapping[torch.fx.Node, Any],
                        device: str, library_ops: Collection[str] = ()) -> bool:
    """Frees CUDA's memory-efficient attention without dropout from its
    Philox state, which such an op neither draws nor reads, so that the
    attention and its gradient can join regions on `device`: the state is a
    pair of CPU tensors. The forward's seed and offset that the graph
    returns (saved for the backward) become unused_philox_state calls,
    which stay in Python; the gradient reads zeros on `device` instead of
    CPU tensors. Ops named in `library_ops` stay as they are. Returns
    whether `gm` changed."""
    forward, backward = _efficient_attention_ops()
    if forward is None or backward is None:
        return False

    def on_cpu(node: Any) -> bool:
        if not isinstance(node, torch.fx.Node):
            return False
        value = values.get(node)
        return node.target is unused_philox_state or (
            isinstance(value, torch.Tensor) and value.device.type == "cpu")

    graph = gm.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or str(node.target) in library_ops:
            continue
        if node.target is forward and _argument(node, 5, "dropout_p", 0.0) == 0.0:
            for user in list(node.users):
                if user.target is operator.getitem and user.args[1] in (2, 3) \
                        and on_cpu(user):
                    with graph.inserting_after(user):
                        state = graph.call_function(unused_philox_state, ())
                    state.meta.update(user.meta)
                    user.replace_all_uses_with(state)
                    graph.erase_node(user)
                    changed = True
        elif node.target is backward and _argument(node, 9, "dropout_p", None) == 0.0:
            for index in (7, 8):
                state = node.args[index]
                if not on_cpu(state):
                    continue
                with graph.inserting_before(node):
                    zero = graph.call_function(
                        aten.full.default, ([], 0),
                        {"dtype": torch.int64, "device": torch.device(device)})
                node.update_arg(index, zero)
                changed = True
    if changed:
        gm.recompile()
    return changed


def reference_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attn_mask: Optional[torch.Tensor] = None, dropout_p: float = 0.0,
                        is_causal: bool = False, scale: Optional[float] = None
                        ) -> torch.Tensor:
    """scaled_dot_product_attention's arithmetic (no dropout, not causal),
    for torch versions without it and for tests."""
    assert dropout_p == 0.0 and not is_causal
    scores = query @ key.transpose(-1, -2)
    scores = scores * (query.shape[-1] ** -0.5 if scale is None else scale)
    if attn_mask is not None:
        scores = scores + attn_mask
    return torch.softmax(scores, dim=-1) @ value


__all__: Sequence[str] = ["AttentionMatch", "detach_philox_state", "find_explicit_attention",
                          "fuse_explicit_attention", "reference_attention",
                          "unused_philox_state"]
