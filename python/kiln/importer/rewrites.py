"""Rewrites of captured graphs into the op table's ops (canonicalize): ops
that the table spells differently (_EQUIVALENT_OPS), scalars as tensors,
in-place ops that nothing observes as their functional overloads, writes
into fresh tensors' views as scatters; and dead-code elimination.
"""

from __future__ import annotations

import fractions
import functools
import math
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.fx

from kiln.importer.errors import _unsupported
from kiln.importer.op_table import _OPS, _RESAMPLING_MODES
from kiln.rng import aten_target

aten = torch.ops.aten


def _scaled_size(size: Any, scale: float) -> Any:
    """⌊size · scale⌋ as ATen computes it, in f64. For a symbolic size and a
    scale p/q with q a power of two up to 1024, in integers, (size · p) // q,
    which size inference follows: the f64 product's rounding cannot cross
    an integer then (the fraction is 0 or at least 1/q)."""
    if isinstance(size, int):
        return int(size * scale)
    p, q = fractions.Fraction(scale).as_integer_ratio()
    if q > 1024:
        return torch.sym_int(torch.sym_float(size) * scale)
    return size * p // q


_NUMBER = (bool, int, float)


def _rewrite_scalar_first(graph: torch.fx.Graph, node: torch.fx.Node) -> bool:
    """``s + x`` and ``s * x`` as ``x + s`` and ``x * s``; ``s - x`` as
    ``-x + s`` (exact: negation does not round). Tracing records them with
    the Python number first (``aten.rsub`` decomposes to ``sub(s, x)``)."""
    if node.target not in (aten.add.Tensor, aten.mul.Tensor, aten.sub.Tensor):
        return False
    if len(node.args) != 2 or node.kwargs.get("alpha", 1) != 1:
        return False
    lhs, rhs = node.args
    if not (isinstance(lhs, _NUMBER) and isinstance(rhs, torch.fx.Node)):
        return False
    if node.target is aten.sub.Tensor:
        with graph.inserting_before(node):
            negated = graph.call_function(aten.neg.default, (rhs,))
        negated.meta.update(node.meta)
        node.target, rhs = aten.add.Tensor, negated
    node.args, node.kwargs = (rhs, lhs), {}
    return True


def _device_of(node: torch.fx.Node) -> Optional[torch.device]:
    """The device of `node`'s traced value, if it has one."""
    value = node.meta.get("val")
    return value.device if isinstance(value, torch.Tensor) else None


def _scalar_tensor(anchor: torch.fx.Node, value: Any, dtype: torch.dtype) -> torch.fx.Node:
    """A zero-dim tensor of `dtype` holding the Python number `value`, made
    before `anchor` (on its device): ``scalar_tensor``, or for a complex
    `dtype` (no fx attribute holds a complex number) ``complex`` of its two
    parts. A real `dtype` takes a complex number's real part, as casts do."""
    if not dtype.is_complex:
        value = value.real if isinstance(value, complex) else value
        kwargs = {"dtype": dtype}
        if _device_of(anchor) is not None:
            kwargs["device"] = _device_of(anchor)
        return _new_node(anchor, aten.scalar_tensor.default, (value,), kwargs)
    return _new_node(anchor, *_complex_of_parts(anchor, complex(value), dtype))


# The dtype of a complex dtype's parts.
_COMPLEX_PARTS = {torch.complex128: torch.float64, torch.complex64: torch.float32,
                  torch.complex32: torch.float16}


def _complex_of_parts(anchor: torch.fx.Node, value: complex,
                      dtype: torch.dtype) -> Tuple[Any, tuple]:
    """``complex(re, im)`` of zero-dim tensors made before `anchor` (on its
    device) that hold `value`'s parts, for a complex number of `dtype`."""
    return aten.complex.default, tuple(
        _scalar_tensor(anchor, p, _COMPLEX_PARTS[dtype]) for p in (value.real, value.imag))


def _complex_scalars_as_tensors(node: torch.fx.Node) -> None:
    """The Python complex numbers that tracing records as tensor operands
    (``z * 1j`` is ``aten.mul.Tensor(z, 1j)``) as zero-dim tensors of the
    dtype the number promotes the first tensor operand to, which promotes
    alike."""
    if not any(isinstance(a, complex) for a in node.args):
        return
    # A functional .Scalar overload (eq.Scalar) takes the number as a tensor
    # in its .Tensor overload. (In-place ones stay: writes match by name; so
    # do those that _EQUIVALENT_OPS rewrites, masked_fill.Scalar.)
    if getattr(node.target, "_overloadname", None) == "Scalar" \
            and node.target not in _EQUIVALENT_OPS \
            and not node.target.overloadpacket.__name__.endswith("_"):
        tensor_overload = getattr(node.target.overloadpacket, "Tensor", None)
        if tensor_overload is not None:
            node.target = tensor_overload
    schema = getattr(node.target, "_schema", None)
    tensors = [a for a in node.args if isinstance(a, torch.fx.Node)]
    if schema is None or not tensors:
        return
    arguments = schema.arguments
    args = list(node.args)
    for index, value in enumerate(args):
        if not isinstance(value, complex) or index >= len(arguments) \
                or not isinstance(arguments[index].type, torch.TensorType):
            continue
        dtype = torch.result_type(torch.empty((), dtype=_meta_of(tensors[0]).dtype), value)
        args[index] = _scalar_tensor(node, value, dtype)
    node.args = tuple(args)


def _scalar_tensor_of_complex(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``scalar_tensor(s)`` of a complex `s` as ``complex`` of its parts."""
    value = node.args[0] if node.args else node.kwargs.get("s")
    if not isinstance(value, complex):
        return node.target, node.args, node.kwargs
    dtype = node.kwargs.get("dtype") or _meta_of(node).dtype
    return (*_complex_of_parts(node, value, dtype), {})


def _full_of_complex(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``full(size, z)`` of a complex `z` (and static sizes) as the complex
    number expanded to `size`."""
    size, value = node.args[:2]
    if not isinstance(value, complex) or not all(isinstance(d, int) for d in size):
        return node.target, node.args, node.kwargs
    number = _scalar_tensor(node, value, node.kwargs.get("dtype") or _meta_of(node).dtype)
    shaped = _new_node(node, aten.view.default, (number, [1] * len(size)))
    return aten.expand.default, (shaped, list(size)), {}


def _masked_fill(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``masked_fill(x, mask, v)`` as ``where(mask, v, x)``, with `v` a zero-dim
    tensor of x's dtype (``masked_fill`` casts it), made by a new node."""
    x, mask, value = node.args
    fill = _scalar_tensor(node, value, _meta_of(x).dtype)
    return aten.where.self, (mask, fill, x), {}


def _split_with_sizes(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``split(x, size, dim)`` as ``split_with_sizes``: pieces of `size`
    along `dim`, the last one shorter if `size` does not divide it."""
    names = ("self", "split_size", "dim")
    bound = {**dict(zip(names, node.args)), **node.kwargs}
    dim = bound.get("dim", 0)
    length = _meta_of(bound["self"]).shape[dim]
    size = bound["split_size"]
    sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
    return aten.split_with_sizes.default, (bound["self"], sizes, dim), {}


def _is_scaled_size(size: Any, scale: float, output: Any) -> bool:
    """Whether `output` is ⌊size · scale⌋, the size a resampling by `scale`
    gives: for symbolic sizes (torch 2.x's composites compute the output
    size of a scaled resampling from the input's), when the shape
    environment proves it."""
    if isinstance(size, int) and isinstance(output, int):
        return math.floor(size * scale) == output
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_true
    except ImportError:
        return False
    candidates = [lambda: _scaled_size(size, scale),
                  lambda: torch.sym_int(torch.sym_float(size) * scale)]
    for candidate in candidates:
        try:
            if statically_known_true(candidate() == output):
                return True
        except Exception:  # An expression the shape environment cannot compare.
            continue
    return False


def _upsample_vec(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """An ``upsample_*.default`` overload (``output_size``, then
    ``align_corners`` for interpolating modes, then a scale per spatial
    dimension) as its ``.vec`` overload, which takes an output size or
    scales that give it; with only some scales given, or scales that do not
    give the output size (which then only set the sampling ratio), the node
    stays as it is and is refused."""
    arguments = node.target._schema.arguments
    bound = {**{a.name: a.default_value for a in arguments if a.has_default_value()},
             **dict(zip((a.name for a in arguments), node.args)), **node.kwargs}
    scales = [bound[a.name] for a in arguments if a.name.startswith("scales")]
    output_size = list(bound["output_size"])
    if all(scale is None for scale in scales):
        scales = None
    else:
        sizes = list(_meta_of(bound["self"]).shape[-len(scales):])
        outputs = list(_meta_of(node).shape[-len(scales):])
        if not all(scale is not None and _is_scaled_size(n, scale, out)
                   for n, scale, out in zip(sizes, scales, outputs)):
            return node.target, node.args, node.kwargs
        output_size = None
    align = [bound["align_corners"]] if "align_corners" in bound else []
    vec = getattr(getattr(aten, node.target.__name__.split(".")[0]), "vec", None)
    if vec is None:
        return node.target, node.args, node.kwargs
    return vec, (bound["self"], output_size, *align, scales), {}


def _index_put_by_mask(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``x[mask] = v`` with one bool mask over x's leading dimensions and a
    single value (``loss[ignored] = 0``) as ``where(mask, v, x)``, the mask
    unsqueezed over the trailing dimensions and `v` in x's dtype (or ``x +
    where(mask, v, 0)`` when it accumulates): which elements are selected
    changes no size. Other index_puts stay as they are."""
    x, indices, value = node.args[:3]
    accumulate = node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False)
    unchanged = (node.target, node.args, node.kwargs)
    if len(indices) != 1 or not isinstance(indices[0], torch.fx.Node) \
            or not isinstance(value, torch.fx.Node):
        return unchanged
    mask, x_meta = indices[0], _meta_of(x)
    mask_meta, value_meta = _meta_of(mask), _meta_of(value)
    if mask_meta.dtype != torch.bool or len(value_meta.shape) != 0 \
            or tuple(mask_meta.shape) != tuple(x_meta.shape[:len(mask_meta.shape)]):
        return unchanged
    for _ in range(len(x_meta.shape) - len(mask_meta.shape)):
        mask = _new_node(node, aten.unsqueeze.default, (mask, -1))
    if value_meta.dtype != x_meta.dtype:
        value = _new_node(node, aten._to_copy.default, (value,), {"dtype": x_meta.dtype})
    if not accumulate:
        return aten.where.self, (mask, value, x), {}
    zero = _new_node(node, aten.scalar_tensor.default, (0,), {"dtype": x_meta.dtype})
    return aten.add.Tensor, (x, _new_node(node, aten.where.self, (mask, value, zero))), {}


@functools.lru_cache(maxsize=None)
def _complex_to_bool_reads_both_parts() -> bool:
    """Whether this PyTorch casts a complex number to bool as ``re != 0 or
    im != 0`` (Kiln's fx.to_copy), not by its real part alone (torch 1.x,
    which warns that it discards the imaginary part)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(torch.tensor([1j]).to(torch.bool).item())


def _to_copy_of_complex(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """A cast of complex numbers to bool as this PyTorch casts them: of their
    real parts where it discards the imaginary ones (torch 1.x). Other casts
    stay as they are."""
    unchanged = (node.target, node.args, node.kwargs)
    source = node.args[0]
    if node.kwargs.get("dtype") is not torch.bool or not isinstance(source, torch.fx.Node) \
            or not _meta_of(source).dtype.is_complex or _complex_to_bool_reads_both_parts():
        return unchanged
    parts = _new_node(node, aten.view_as_real.default, (source,))
    real = _new_node(node, aten.select.int, (parts, -1, 0))
    return node.target, (real, *node.args[1:]), node.kwargs


def _meta_of(node: torch.fx.Node) -> Any:
    """A traced node's value (or TensorMetadata): it has shape and dtype.
    torch 1.13 records none for a constant (``get_attr``), which is its
    module's tensor."""
    if "val" in node.meta or "tensor_meta" in node.meta:
        return node.meta["val"] if "val" in node.meta else node.meta["tensor_meta"]
    if node.op == "get_attr":
        value = node.graph.owning_module
        for name in node.target.split("."):
            value = getattr(value, name)
        return value
    raise KeyError(f"tracing recorded no value of {node.format_node()}")


def _new_node(anchor: torch.fx.Node, target: Any, args: tuple,
              kwargs: Optional[dict] = None) -> torch.fx.Node:
    """A call of `target` inserted before `anchor`, with its stack trace."""
    with anchor.graph.inserting_before(anchor):
        node = anchor.graph.call_function(target, args, kwargs or {})
    if "stack_trace" in anchor.meta:
        node.meta["stack_trace"] = anchor.meta["stack_trace"]
    return node


def _where_with_scalars(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``where(c, x, 0.0)`` with its Python numbers as zero-dim tensors of the
    result's dtype: where casts them to it, so the values are the same."""
    dtype = _meta_of(node).dtype
    args = tuple(_scalar_tensor(node, a, dtype) if isinstance(a, (*_NUMBER, complex)) else a
                 for a in node.args)
    return aten.where.self, args, {}


def _broadcast_in_dim(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``prims.broadcast_in_dim(x, shape, dims)``: x viewed with size-1
    dimensions where `dims` has none, then expanded to `shape`."""
    x, shape, dims = node.args
    sizes = list(_meta_of(x).shape)
    viewed = [1] * len(shape)
    for size, dim in zip(sizes, dims):
        viewed[dim] = size
    source = x
    if viewed != sizes:
        source = _new_node(node, aten.view.default, (x, viewed))
        source.meta["val"] = torch.empty(viewed, dtype=_meta_of(x).dtype, device="meta")
    return aten.expand.default, (source, list(shape)), {}


def _prims_div(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``prims.div``: true division of floating values, truncating division of
    integers (its operands share a dtype)."""
    if _meta_of(node).dtype.is_floating_point or _meta_of(node).dtype.is_complex:
        return aten.div.Tensor, node.args, {}
    return aten.div.Tensor_mode, node.args, {"rounding_mode": "trunc"}


def _fill_with_tensor(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``fill(x, v)`` with a zero-dim tensor `v` (functionalized ``x[i] =
    0``): `v` in `x`'s dtype, expanded to `x`'s shape."""
    x, value = node.args[:2]
    meta = _meta_of(x)
    cast = _new_node(node, aten._to_copy.default, (value,), {"dtype": meta.dtype})
    cast.meta["val"] = torch.empty((), dtype=meta.dtype, device="meta")
    return aten.expand.default, (cast, list(meta.shape)), {}


def _all_dims(node: torch.fx.Node) -> List[int]:
    """Every dimension of `node`'s value."""
    return list(range(len(_meta_of(node).shape)))


def _full_dtype(node: torch.fx.Node) -> Dict[str, Any]:
    """The dtype that ``zeros``/``ones`` fill with, as ``full`` must be told,
    and their device, where the graph runs them."""
    return {"dtype": node.kwargs.get("dtype") or torch.get_default_dtype(),
            "device": node.kwargs.get("device")}


def _contiguous_empty(node: torch.fx.Node) -> Tuple[Any, tuple, dict]:
    """``empty_strided`` with the contiguous strides of its sizes (which
    decompositions create to write into) as ``empty``, whose sizes a size
    symbol can name where they are dynamic; other strides stay."""
    sizes, strides = node.args[0], node.args[1]
    if not all(isinstance(n, int) for n in [*sizes, *strides]):
        return node.target, node.args, node.kwargs  # Symbolic (torch 2.x's).
    contiguous = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    if any(size > 1 and stride != expected
           for size, stride, expected in zip(sizes, strides, contiguous)):
        return node.target, node.args, node.kwargs
    return aten.empty.memory_format, (sizes,), {
        k: v for k, v in node.kwargs.items() if k in ("dtype", "device")}


# ATen and prims ops that decompositions or factory functions leave in a
# graph, as the table's op that means the same: op -> (op, new args, new
# kwargs) from the node. ``zeros``/``ones`` name their dtype, which ``full``
# would otherwise take from the fill value.
_EQUIVALENT_OPS: Dict[Any, Callable[[torch.fx.Node], Tuple[Any, tuple, dict]]] = {
    torch.ops.prims.convert_element_type.default:
        lambda n: (aten._to_copy.default, (n.args[0],), {"dtype": n.args[1]}),
    torch.ops.prims.where.default: _where_with_scalars,
    torch.ops.prims.scalar_tensor.default:
        lambda n: (aten.scalar_tensor.default, n.args[:1],
                   {"dtype": n.kwargs.get("dtype") or torch.get_default_dtype()}),
    torch.ops.prims.ne.default: lambda n: (aten.ne.Tensor, n.args, {}),
    torch.ops.prims.add.default: lambda n: (aten.add.Tensor, n.args, {}),
    torch.ops.prims.sub.default: lambda n: (aten.sub.Tensor, n.args, {}),
    torch.ops.prims.mul.default: lambda n: (aten.mul.Tensor, n.args, {}),
    torch.ops.prims.sqrt.default: lambda n: (aten.sqrt.default, n.args, {}),
    torch.ops.prims.erfc.default: lambda n: (aten.erfc.default, n.args, {}),
    torch.ops.prims.div.default: _prims_div,
    torch.ops.prims.var.default:
        lambda n: (aten.var.correction, (n.args[0], list(n.args[1])),
                   {"correction": n.args[2] if len(n.args) > 2 else n.kwargs["correction"]}),
    torch.ops.prims.broadcast_in_dim.default: _broadcast_in_dim,
    aten.where.self: _where_with_scalars,
    torch.ops.prims.sum.default:
        lambda n: (aten.sum.dim_IntList, (n.args[0], list(n.args[1])),
                   {"dtype": n.kwargs.get("output_dtype")}),
    aten.floor_divide.default:
        lambda n: (aten.div.Tensor_mode, n.args, {"rounding_mode": "floor"}),
    aten.masked_fill.Scalar: _masked_fill,
    aten.index_put.default: _index_put_by_mask,
    # What an in-place clamp_min_ (cosine_similarity's) becomes.
    aten.clamp_min.default: lambda n: (aten.clamp.default, (n.args[0], n.args[1]), {}),
    aten.clamp_max.default: lambda n: (aten.clamp.default, (n.args[0], None, n.args[1]), {}),
    aten.clamp_min.Tensor: lambda n: (aten.clamp.Tensor, (n.args[0], n.args[1]), {}),
    aten.clamp_max.Tensor: lambda n: (aten.clamp.Tensor, (n.args[0], None, n.args[1]), {}),
    # The unsafe splits differ only in autograd's view tracking (RNN cells).
    aten.unsafe_split.Tensor: _split_with_sizes,
    aten.unsafe_split_with_sizes.default:
        lambda n: (aten.split_with_sizes.default, n.args, n.kwargs),
    # Kiln's sort is stable either way.
    aten.sort.stable:
        lambda n: (aten.sort.default,
                   (n.args[0], n.kwargs.get("dim", -1), n.kwargs.get("descending", False)), {}),
    aten.fill.Tensor: _fill_with_tensor,
    aten._to_copy.default: _to_copy_of_complex,
    aten.scalar_tensor.default: _scalar_tensor_of_complex,
    aten.full.default: _full_of_complex,
    # Python's << and >> on tensors.
    aten.__lshift__.Scalar:
        lambda n: (aten.bitwise_left_shift.Tensor_Scalar, n.args, {}),
    aten.__rshift__.Scalar:
        lambda n: (aten.bitwise_right_shift.Tensor_Scalar, n.args, {}),
    aten.__lshift__.Tensor: lambda n: (aten.bitwise_left_shift.Tensor, n.args, {}),
    aten.__rshift__.Tensor: lambda n: (aten.bitwise_right_shift.Tensor, n.args, {}),
    # The maximum (minimum) of every element.
    aten.max.default: lambda n: (aten.amax.default, (n.args[0], _all_dims(n.args[0])), {}),
    aten.min.default: lambda n: (aten.amin.default, (n.args[0], _all_dims(n.args[0])), {}),
    aten.zeros.default:
        lambda n: (aten.full.default, (n.args[0], 0), _full_dtype(n)),
    aten.empty_strided.default: _contiguous_empty,
    # torch 2.x's empty_like: a layout is not a value.
    **({aten.empty_permuted.default:
        lambda n: (aten.empty.memory_format, (n.args[0],),
                   {k: v for k, v in n.kwargs.items() if k in ("dtype", "device")})}
       if hasattr(aten, "empty_permuted") else {}),
    aten.ones.default:
        lambda n: (aten.full.default, (n.args[0], 1), _full_dtype(n)),
    aten.zeros_like.default:
        lambda n: (aten.full_like.default, (n.args[0], 0), {"dtype": n.kwargs.get("dtype")}),
    # What functionalization makes of an in-place zero_.
    aten.zero.default: lambda n: (aten.full_like.default, (n.args[0], 0), {}),
    aten.ones_like.default:
        lambda n: (aten.full_like.default, (n.args[0], 1), {"dtype": n.kwargs.get("dtype")}),
}


# torch 2.x spells resampling with a scale argument per dimension.
_EQUIVALENT_OPS.update({getattr(aten, f"upsample_{mode}").default: _upsample_vec
                        for mode in _RESAMPLING_MODES})


# torch 1.13's linspace converts with prims.to_dtype, which later versions
# lack.
if hasattr(torch.ops.prims, "to_dtype"):
    _EQUIVALENT_OPS[torch.ops.prims.to_dtype.default] = \
        _EQUIVALENT_OPS[torch.ops.prims.convert_element_type.default]


# In-place overloads whose functional counterpart has another overload name.
_FUNCTIONAL_OVERLOADS = {aten.bernoulli_.float: aten.bernoulli.p}


def _functionalize_unobserved(node: torch.fx.Node) -> bool:
    """``x.op_(...)`` as ``op(x, ...)`` where nothing can observe the
    mutation: `x` is a fresh tensor (not a view, not an input) that only this
    node reads. torch 1.13 traces dropout so: ``empty``, ``bernoulli_``,
    ``div_``."""
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        return False
    packet = target.overloadpacket.__name__
    if not packet.endswith("_") or packet.startswith("_") or not node.args:
        return False
    functional = _FUNCTIONAL_OVERLOADS.get(target) or getattr(
        getattr(aten, packet[:-1], None), target._overloadname, None)
    mutated = node.args[0]
    if not isinstance(mutated, torch.fx.Node) or mutated.op != "call_function":
        return False
    returns = getattr(getattr(mutated.target, "_schema", None), "returns", None)
    if not returns or any(r.alias_info is not None for r in returns):
        return False
    if target is aten.copy_.default:
        return _copy_into_fresh(node, mutated)
    if functional is None or len(mutated.users) != 1:
        return False
    # ATen's defaults of the in-place overload, which the other may lack
    # (torch 1.13's bernoulli.p has no default p).
    args = list(node.args)
    for argument in target._schema.arguments[len(args):]:
        if argument.kwarg_only or argument.name in node.kwargs \
                or not argument.has_default_value():
            break
        args.append(argument.default_value)
    node.target, node.args = functional, tuple(args)
    return True


def _precedes(earlier: torch.fx.Node, later: torch.fx.Node) -> bool:
    """Whether `earlier` comes before `later` in their graph's order."""
    node = later.prev
    while node.op != "root":
        if node is earlier:
            return True
        node = node.prev
    return False


def _copy_into_fresh(node: torch.fx.Node, fresh: torch.fx.Node) -> bool:
    """``fresh.copy_(src)`` as `src` converted to `fresh`'s dtype, when the
    shapes agree and every other reader of `fresh` comes before the copy
    (later ones read the copy's result). torch 2.x traces in-place ops on
    fresh tensors so: dropout on the CPU is ``noise = bernoulli(empty, p)``
    then ``copy_(noise, noise / (1 - p))``."""
    if len(node.args) != 2 or not isinstance(node.args[1], torch.fx.Node):
        return False
    if any(user is not node and not _precedes(user, node) for user in fresh.users):
        return False
    source = node.args[1]
    if not all("val" in n.meta or "tensor_meta" in n.meta for n in (fresh, source)):
        return False
    want, have = _meta_of(fresh), _meta_of(source)
    if tuple(want.shape) != tuple(have.shape) \
            or getattr(want, "device", None) != getattr(have, "device", None):
        return False
    node.target = aten._to_copy.default
    node.args, node.kwargs = (node.args[1],), {"dtype": want.dtype}
    return True


# Views whose writes a scatter of the same arguments states.
_SCATTERS_OF_VIEWS = {aten.select.int: aten.select_scatter.default,
                      aten.slice.Tensor: aten.slice_scatter.default}


def _scatter_into_fresh_views(gm: torch.fx.GraphModule) -> None:
    """Writes into selects and slices of a fresh tensor (``copy_`` or
    ``fill_`` of ``empty(...)[..., k]``), as scatters of the written values
    into the tensor's value so far, when each view only takes its write and
    every other reader of the tensor comes after the last write. A
    composite gradient builds its coordinates so (affine_grid's); the
    scatters keep autograd's graph functional, where retracing under
    functionalization would lose it."""
    graph = gm.graph
    order = {node: index for index, node in enumerate(graph.nodes)}
    for base in list(graph.nodes):
        if base.op != "call_function" or base.target in _SCATTERS_OF_VIEWS.values():
            continue
        returns = getattr(getattr(base.target, "_schema", None), "returns", None)
        if not returns or any(r.alias_info is not None for r in returns) \
                or "tensor_meta" not in base.meta and "val" not in base.meta:
            continue
        writes, readers = [], []
        for user in base.users:
            write = next(iter(user.users)) if len(user.users) == 1 else None
            if user.target in _SCATTERS_OF_VIEWS and user.args[0] is base and write is not None \
                    and write.target in (aten.copy_.default, aten.fill_.Scalar) \
                    and write.args[0] is user and not write.users \
                    and ("tensor_meta" in user.meta or "val" in user.meta):
                writes.append((user, write))
            else:
                readers.append(user)
        if not writes:
            continue
        writes.sort(key=lambda pair: order[pair[1]])
        last = writes[-1][1]
        if any(not _precedes(last, reader) for reader in readers):
            continue
        dtype = _meta_of(base).dtype
        value = base
        for view, write in writes:
            with graph.inserting_before(write):
                if write.target is aten.fill_.Scalar:
                    region = graph.call_function(view.target, (value, *view.args[1:]),
                                                 view.kwargs)
                    written = graph.call_function(aten.fill.Scalar, (region, write.args[1]))
                else:
                    shape = list(_meta_of(view).shape)
                    written = graph.call_function(aten.expand.default, (write.args[1], shape))
                    written = graph.call_function(aten._to_copy.default, (written,),
                                                  {"dtype": dtype})
                value = graph.call_function(_SCATTERS_OF_VIEWS[view.target],
                                            (value, written, *view.args[1:]), view.kwargs)
            for node in (write, view):
                graph.erase_node(node)
        for reader in readers:
            reader.replace_input_with(base, value)


def _writes_an_argument(node: torch.fx.Node) -> bool:
    """Whether `node` calls an op that writes one of its arguments in place
    (``copy_``, ``add_``, ``index_put_``, an ``out=`` overload)."""
    schema = getattr(node.target, "_schema", None)
    return schema is not None and any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def eliminate_dead_code(gm: torch.fx.GraphModule) -> None:
    """Drops nodes whose values nothing reads, keeping those that write an
    argument in place: ``x[2:6] = y`` traces to a ``copy_`` into a view of
    `x` that nothing reads, and dropping it would lose the write (torch
    1.13's Graph.eliminate_dead_code counts only a few Python functions as
    side effects)."""
    graph = gm.graph
    for node in reversed(graph.nodes):
        if node.op in ("placeholder", "output") or node.users:
            continue
        if node.op == "call_function" and _writes_an_argument(node):
            continue
        if node.is_impure():
            continue
        graph.erase_node(node)


def drop_implied_assertions(gm: torch.fx.GraphModule) -> None:
    """Erases the runtime assertions (``aten._assert_scalar``) that torch.export
    adds about input sizes when Kiln's guards already check them: an equality
    of sizes that share a symbol (equal sizes share a Kiln size symbol, whose
    values the runtime compares) or a bound within the symbols' ranges (which
    the runtime checks). Raises UnsupportedOpError for any other assertion,
    which Kiln would not check. The size arithmetic that fed an erased
    assertion is left for dead code elimination."""
    assert_scalar = getattr(getattr(aten, "_assert_scalar", None), "default", None)
    if assert_scalar is None:
        return
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or aten_target(node) is not assert_scalar:
            continue
        condition = node.args[0]
        value = condition.meta.get("val") if isinstance(condition, torch.fx.Node) \
            else condition
        if not _implied_by_guards(value):
            raise _unsupported(node, f"the graph asserts {value} at run time, which "
                                     "Kiln's size guards do not imply")
        gm.graph.erase_node(node)


def _implied_by_guards(condition: Any) -> bool:
    """Whether a traced condition (a bool or a SymBool) holds for every size
    that Kiln's guards admit: it is true, or true over the ranges of its
    symbols (the ranges the guards check, _size_symbol)."""
    if isinstance(condition, bool):
        return condition
    node = getattr(condition, "node", None)
    expr = getattr(node, "expr", None)
    if expr is None:
        return False
    if str(expr) == "True":
        return True
    bound = node.shape_env.bound_sympy(expr)
    return str(bound.lower) == "True"


def _view_of_copy_op(target: Any) -> Optional[Any]:
    """The view op whose copying variant `target` is (``expand_copy`` ->
    ``expand``), which functionalization emits: with value semantics the two
    are the same op."""
    if not isinstance(target, torch._ops.OpOverload) or target in _OPS:
        return None
    packet = target.overloadpacket.__name__
    if not packet.endswith("_copy") or packet.startswith("_"):
        return None
    view = getattr(getattr(aten, packet[:-len("_copy")], None), target._overloadname, None)
    returns = getattr(getattr(view, "_schema", None), "returns", None)
    if not returns or returns[0].alias_info is None:
        return None
    return view


def canonicalize(gm: torch.fx.GraphModule) -> None:
    """Rewrites nodes that the table spells differently (_EQUIVALENT_OPS,
    _rewrite_scalar_first, _functionalize_unobserved) into the table's ops,
    keeping their metadata, and drops in-place detaches."""
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is aten.detach_.default:
            # Values do not change (torch 2.x detaches a torch.tensor(...)
            # constant's fresh copy in place).
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
            continue
        view = _view_of_copy_op(node.target)
        if view is not None:
            node.target = view
        # An unobserved in-place op becomes its functional overload, which
        # the table may spell differently in turn (masked_fill_).
        _complex_scalars_as_tensors(node)
        functionalized = node.target not in _EQUIVALENT_OPS and \
            _functionalize_unobserved(node)
        equivalent = _EQUIVALENT_OPS.get(node.target)
        if equivalent is not None:
            node.target, node.args, node.kwargs = equivalent(node)
            node.kwargs = {k: v for k, v in node.kwargs.items() if v is not None}
        if not functionalized:
            # Also after an equivalent: prims.sub(2.0, x) is sub(2.0, x).
            _rewrite_scalar_first(graph, node)
        _complex_scalars_as_tensors(node)
