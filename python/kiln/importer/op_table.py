"""The op table: one row per supported ATen overload, naming the ``fx`` op
that prints it (_OPS). The generated signatures (kiln._fx_signatures) give
most rows (_TableOp); the argument adapters bind the ATen overloads that an
fx op also represents to its arguments. RESAMPLING_OPS are the resampling
ops, which the fx dialect has whole.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import torch
import torch.fx

from kiln._fx_signatures import OPS as _FX_SIGNATURES
from kiln.importer.errors import _describe_op, _unsupported
from kiln.importer.printer import _Printer, _format_alpha, _format_float
from kiln.importer.symbols import _SIZE_SYMBOLS_META, _is_symbolic_int, _symbolic_size_names
from kiln.importer.value_types import _ELEMENT_TYPES
from kiln.rng import aten_target, seeded

aten = torch.ops.aten


# The resampling ops, which the fx dialect has whole: torch 2.x decomposes
# their ``.default`` overloads (the ``.vec`` ones call) into gathers with
# the sizes baked in, in its table and as Python kernels at the Autograd
# key (keeping_resampling_whole).
_RESAMPLING_MODES = ("nearest1d", "nearest2d", "nearest3d", "linear1d", "bilinear2d",
                     "trilinear3d", "bicubic2d")


RESAMPLING_OPS = tuple(op for mode in _RESAMPLING_MODES
                        for op in (getattr(getattr(aten, f"upsample_{mode}"), "vec", None),
                                   getattr(aten, f"upsample_{mode}").default) if op is not None)


@dataclass(frozen=True)
class _Unary:
    """An elementwise op with one tensor operand and a result of its type:
    ``%r = fx.relu %x : tensor<4xf32>``."""

    mnemonic: str

    def check(self, node: torch.fx.Node) -> None:
        if len(node.args) != 1 or node.kwargs:
            raise _unsupported(node, f"{node.target} with arguments {node.args} "
                                     f"{node.kwargs} is not supported")
        _check_tensor_operands(node, node.args)

    def emit(self, p: _Printer, node: torch.fx.Node) -> str:
        (operand,) = node.args
        return f"{p.declare(node)} = {self.mnemonic} {p.value(operand)} : {p.type(node)}"


@dataclass(frozen=True)
class _Binary:
    """An elementwise op on two broadcast tensors, optionally with ATen's
    ``alpha`` scalar as an attribute:
    ``%r = fx.add %a, %b {alpha = 2 : i64} : (tensor<..>, tensor<..>) -> tensor<..>``.
    """

    mnemonic: str
    has_alpha: bool = False

    def alpha(self, node: torch.fx.Node) -> Any:
        """The alpha argument (keyword-only in ATen, accepted positionally)."""
        if len(node.args) > 2:
            return node.args[2]
        return node.kwargs.get("alpha", 1)

    def check(self, node: torch.fx.Node) -> None:
        allowed_kwargs = {"alpha"} if self.has_alpha else set()
        max_args = 3 if self.has_alpha else 2
        if not 2 <= len(node.args) <= max_args or set(node.kwargs) - allowed_kwargs:
            raise _unsupported(node, f"{node.target} with arguments {node.args} "
                                     f"{node.kwargs} is not supported")
        _check_tensor_operands(node, node.args[:2])
        if self.has_alpha:
            alpha = self.alpha(node)
            if not isinstance(alpha, (bool, int, float)):
                raise _unsupported(node, f"{node.target} with alpha {alpha!r} is not "
                                         "supported: alpha must be a Python number")

    def emit(self, p: _Printer, node: torch.fx.Node) -> str:
        lhs, rhs = node.args[:2]
        alpha = _format_alpha(self.alpha(node)) if self.has_alpha else None
        attrs = f" {alpha}" if alpha else ""
        return (f"{p.declare(node)} = {self.mnemonic} {p.value(lhs)}, {p.value(rhs)}{attrs}"
                f" : ({p.type(lhs)}, {p.type(rhs)}) -> {p.type(node)}")


def _check_tensor_operands(node: torch.fx.Node, operands: Sequence[Any]) -> None:
    """Rejects operands that are not graph values, such as the Python scalar in
    ``x + 1.0`` (which make_fx records as ``aten.add.Tensor(x, 1.0)``)."""
    for operand in operands:
        if not isinstance(operand, torch.fx.Node):
            raise _unsupported(node, f"{node.target} with the Python scalar operand "
                                     f"{operand!r} is not supported: scalar operands "
                                     "are not supported yet")


def _strip_wrapper(ods: str, wrapper: str) -> Optional[str]:
    """`X` for ``wrapper<X>`` or ``wrapper<X, "default">``, else None."""
    if not ods.startswith(wrapper + "<"):
        return None
    inner = ods[len(wrapper) + 1:-1]
    if wrapper == "DefaultValuedAttr":
        inner = inner.rsplit(", \"", 1)[0]
    return inner


def _format_scalar(value: Any) -> Optional[str]:
    """A PyTorch Scalar as an attribute (bool, i64 or f64), or None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{_format_float(value)} : f64"
    return None


def _format_attribute(ods: str, value: Any) -> Optional[str]:
    """`value` as an attribute of ODS type `ods`, or None if it cannot be one."""
    def all_of(kind):
        return isinstance(value, (list, tuple)) and all(isinstance(v, kind) for v in value)

    if ods in ("I64Attr",) and isinstance(value, int) and not isinstance(value, bool):
        return f"{value} : i64"
    if ods == "F64Attr" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{_format_float(float(value))} : f64"
    if ods == "BoolAttr" and isinstance(value, bool):
        return "true" if value else "false"
    if (ods == "DenseI64ArrayAttr" or ods.startswith("FX_PaddingAttr<")) and all_of(int):
        return "array<i64" + "".join(f"{', ' if i else ': '}{v}" for i, v in enumerate(value)) + ">"
    if ods == "DenseF64ArrayAttr" and all_of((int, float)):
        return "array<f64" + "".join(f"{', ' if i else ': '}{_format_float(float(v))}"
                                     for i, v in enumerate(value)) + ">"
    if ods in ("DenseBoolArrayAttr", "FX_OutputMaskAttr") and all_of(bool):
        return "array<i1" + "".join(f"{', ' if i else ': '}{str(v).lower()}"
                                    for i, v in enumerate(value)) + ">"
    if ods in ("FX_ScalarAttr", "AnyAttrOf<[F64Attr, I64Attr]>"):
        if ods != "FX_ScalarAttr" and isinstance(value, bool):
            return None
        return _format_scalar(value)
    if ods == "FX_DtypeAttr" and isinstance(value, torch.dtype):
        return _ELEMENT_TYPES.get(value)
    if ods == "StrArrayAttr" and all_of(str):
        return "[" + ", ".join(_format_attribute("FX_Attr", v) for v in value) + "]"
    if ods.startswith("FX_") and ods.endswith("Attr") and isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return None


class _TableOp:
    """An op of the generated table (python/kiln/_fx_signatures.py): ATen's
    arguments are matched by name to the fx op's operands and attributes;
    arguments the fx op does not keep (sizes its result type states, layout,
    device, ...) are dropped."""

    def __init__(self, entry):
        self.mnemonic, self.same_type, self.args, self.results = entry
        self.has_optional = any(kind == "operand" and ods.startswith("Optional<")
                                for kind, _, ods in self.args)

    @staticmethod
    def _bind(node: torch.fx.Node) -> Dict[str, Any]:
        """ATen's arguments of `node` by name (defaults left out)."""
        op, args, seed = node.target, node.args, {}
        if op is seeded:
            op = aten_target(node)
            seed["seed"], seed["offset"], *args = node.args[1:]
        names = [a.name for a in op._schema.arguments]
        unknown = set(node.kwargs) - set(names)
        if unknown or len(args) > len(names):
            raise _unsupported(node, f"{op} with arguments {tuple(args)} "
                                     f"{node.kwargs} does not match its schema")
        bound = dict(zip(names, args))
        bound.update(node.kwargs)
        bound.update(seed)
        adapt = _ARGUMENT_ADAPTERS.get(str(op))
        if adapt is not None:
            adapt(node, bound)
        if "index_positions" not in bound and isinstance(bound.get("indices"), (list, tuple)):
            _bind_index_positions(bound)
        return bound

    def _bind_symbolic(self, node: torch.fx.Node) -> Dict[str, Any]:
        """_bind, with a symbolic integer argument moved to the operand that
        takes it (``end`` to ``dynamic_end``) where the op has one."""
        bound = self._bind(node)
        operands = {name for kind, name, _ in self.args if kind == "operand"}
        for name, value in list(bound.items()):
            if _is_symbolic_int(value) and f"dynamic_{name}" in operands:
                bound[f"dynamic_{name}"] = bound.pop(name)
        return bound

    def _attributes(self, node: torch.fx.Node, bound: Dict[str, Any]) -> List[str]:
        attrs = []
        for kind, name, ods in self.args:
            if kind != "attribute":
                continue
            value = bound.get(name)
            inner = _strip_wrapper(ods, "OptionalAttr") or _strip_wrapper(ods, "DefaultValuedAttr")
            if value is None:
                if inner is None:
                    raise _unsupported(node, f"{aten_target(node)} needs argument '{name}'")
                continue
            text = _format_attribute(inner or ods, value)
            if text is None:
                raise _unsupported(node, f"{aten_target(node)} with {name}={value!r} is not "
                                         "supported: symbolic or non-constant arguments "
                                         "are not supported yet")
            attrs.append(f"{name} = {text}")
        return attrs

    def _operands(self, node: torch.fx.Node, bound: Dict[str, Any]):
        """(positional operand nodes, {optional name: node}), each in the
        fx op's operand order."""
        positional, optional = [], {}
        for kind, name, ods in self.args:
            if kind != "operand":
                continue
            value = bound.get(name)
            if ods == "Optional<I64>":
                if value is not None:
                    if not _is_symbolic_int(value):
                        raise _unsupported(node, f"{aten_target(node)}'s '{name}' must be "
                                                 f"a symbolic integer, not {value!r}")
                    optional[name] = value
            elif ods.startswith("Optional<"):
                if value is not None:
                    _check_tensor_operands(node, [value])
                    optional[name] = value
            elif ods.startswith("Variadic<"):
                values = [v for v in (value or []) if v is not None]
                if len(values) != len(value or []):
                    raise _unsupported(node, f"{aten_target(node)} with None in '{name}' is "
                                             "not supported")
                _check_tensor_operands(node, values)
                positional.extend(values)
            else:
                if value is None and name == "seed":
                    raise _unsupported(node, f"{aten_target(node)} draws random numbers: "
                                             "seed it with kiln.rng.seed_random_ops")
                if value is None:
                    raise _unsupported(node, f"{aten_target(node)} needs tensor '{name}'")
                _check_tensor_operands(node, [value])
                positional.append(value)
        return positional, optional

    def check(self, node: torch.fx.Node) -> None:
        bound = self._bind_symbolic(node)
        self._operands(node, bound)
        self._attributes(node, bound)

    def emit(self, p: _Printer, node: torch.fx.Node) -> str:
        bound = self._bind_symbolic(node)
        positional, optional = self._operands(node, bound)
        attrs = self._attributes(node, bound)
        attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
        results = p.declare_results(node)
        if self.same_type:
            (operand,) = positional
            return f"{results} = fx.{self.mnemonic} {p.value(operand)}{attr_text} : {p.type(node)}"
        # Operands in the op's order: positional ones separated by commas,
        # a present optional one as ` name(%v)` where the op declares it.
        operand_text, operands, remaining = "", [], iter(positional)
        separator = " "
        for kind, name, ods in self.args:
            if kind != "operand":
                continue
            if ods.startswith("Optional<"):
                if name in optional:
                    operand_text += f" {name}({p.value(optional[name])})"
                    operands.append(optional[name])
                continue
            count = len(bound.get(name) or []) if ods.startswith("Variadic<") else 1
            for value in [next(remaining) for _ in range(count)]:
                operand_text += separator + p.value(value)
                separator = ", "
                operands.append(value)
        operand_types = ", ".join(p.type(v) for v in operands)
        operand_text = f" {operand_text.strip()}" if operands else ""
        return (f"{results} = fx.{self.mnemonic}{operand_text}{attr_text} : "
                f"({operand_types}) -> {p.result_types(node)}")


def _rank_of(node: torch.fx.Node, value: Any) -> int:
    """The rank of operand `value` of `node`, from its traced metadata."""
    for key in ("val", "tensor_meta"):
        meta = value.meta.get(key) if isinstance(value, torch.fx.Node) else None
        if meta is not None and getattr(meta, "shape", None) is not None:
            return len(meta.shape)
    raise _unsupported(node, f"{node.target} needs the rank of its operand, which "
                             "tracing did not record")


def _adapt_squeeze_dim(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    bound["dim"] = [bound["dim"]]


def _adapt_squeeze_default(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    bound["dim"] = list(range(_rank_of(node, bound["self"])))


def _adapt_var_dim(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    unbiased = bound.pop("unbiased", True)
    bound["correction"] = 1 if unbiased else 0


def _adapt_arange_default(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    bound["start"] = 0


# Ops whose results alias their operand though their schemas do not say so:
# all of its storage, or pieces of it (a list that getitem picks from).
_UNANNOTATED_WHOLE_ALIASES = ("aten._unsafe_view.default", "aten.lift.default")


_UNANNOTATED_PIECES = ("aten.unsafe_split.", "aten.unsafe_split_with_sizes.",
                       "aten.unsafe_chunk.")


def _adapt_as_strided(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    """fx.as_strided reads its operand's elements in row-major order: that
    is eager's storage only when the operand is contiguous and owns exactly
    that storage (not a slice of a larger one), which the traced value says
    (torch 2.x records it; TensorMetadata does not). An alias that the
    schema does not annotate reads its operand's storage, which must be
    such; its traced value may be a copy."""
    operand = bound["self"]
    while isinstance(operand, torch.fx.Node) and operand.op == "call_function" and \
            str(operand.target) in _UNANNOTATED_WHOLE_ALIASES:
        operand = operand.args[0]
    if isinstance(operand, torch.fx.Node) and operand.target is operator.getitem and \
            isinstance(operand.args[0], torch.fx.Node):
        pieces = operand.args[0].target
        piece_returns = getattr(getattr(pieces, "_schema", None), "returns", ())
        if str(pieces).startswith(_UNANNOTATED_PIECES) or \
                any(r.alias_info is not None for r in piece_returns):
            raise _unsupported(node, f"{node.target} of a view, which may share a larger "
                                     "storage, is not supported")
    if isinstance(operand, torch.fx.Node) and operand.op == "placeholder":
        raise _unsupported(node, f"{node.target} of a graph input reads the storage of "
                                 "whatever tensor each call passes, which Kiln does not see")
    # A view's traced value may be a copy that owns its storage: the op
    # says what the value is.
    returns = getattr(getattr(getattr(operand, "target", None), "_schema", None),
                      "returns", ())
    if any(r.alias_info is not None for r in returns):
        raise _unsupported(node, f"{node.target} of a view, which may share a larger "
                                 "storage, is not supported")
    value = operand.meta.get("val") if isinstance(operand, torch.fx.Node) else None
    storage = getattr(value, "untyped_storage", None)
    if not isinstance(value, torch.Tensor) or storage is None:
        # torch 1.13 records no values: an op whose result aliases nothing
        # allocates it, and owns that storage, when it is contiguous.
        meta = operand.meta.get("tensor_meta") if isinstance(operand, torch.fx.Node) else None
        if getattr(operand, "op", None) == "call_function" and returns and \
                getattr(meta, "memory_format", None) == torch.contiguous_format:
            return
        raise _unsupported(node, f"{node.target} needs its operand's storage, which "
                                 "tracing did not record")
    if not (value.is_contiguous() and value.storage_offset() == 0 and
            storage().nbytes() == value.numel() * value.element_size()):
        raise _unsupported(node, f"{node.target} of a tensor that is not contiguous "
                                 "or shares a larger storage is not supported")


def _adapt_as_strided_scatter(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    """fx.as_strided_scatter places src by offsets into self's elements in
    row-major order: that is eager's (a clone of self keeps self's strides)
    only for a contiguous self, which a graph input need not be at every
    call."""
    operand = bound["self"]
    meta = operand.meta if isinstance(operand, torch.fx.Node) else {}
    if isinstance(operand, torch.fx.Node) and operand.op == "placeholder":
        raise _unsupported(node, f"{node.target} into a graph input places by the strides "
                                 "of whatever tensor each call passes, which Kiln does not see")
    value, tensor_meta = meta.get("val"), meta.get("tensor_meta")
    contiguous = value.is_contiguous() if isinstance(value, torch.Tensor) else \
        getattr(tensor_meta, "memory_format", None) == torch.contiguous_format
    if not contiguous:
        raise _unsupported(node, f"{node.target} into a tensor that is not contiguous "
                                 "is not supported")


def _naming_size_symbols(least: int) -> Callable[[torch.fx.Node, Dict[str, Any]], None]:
    """An adapter for an op whose sizes are its result type's (torch 2.x):
    with at least `least` symbolic sizes, each a size symbol, a multiple
    of one plus a constant or a product (``s1``, ``3*s0``, ``s0-1``,
    ``s0*s1``; not ``s0+s1``), it
    names them (``size_symbols``), from symbols the graph's guards must
    bind. A view needs them to split ``[s0*s1, 64] -> [s0, s1, 64]`` or to
    merge ``[s0, 3, s1] -> [3*s0, s1]``, which the types leave ambiguous; a
    creation op for any ``?``."""
    def adapt(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
        names = _symbolic_size_names(node)
        if names is not None and len(names) >= least:
            bound["size_symbols"] = names
    return adapt


def _naming_view_sizes(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    """_naming_size_symbols(2) for a view, unless its symbolic sizes are its
    operand's, in order: the lowering pairs a view's dynamic dimensions in
    order unless it names their sizes (``[s0, s1] -> [s1, s0]`` must)."""
    def symbolic(value):
        return [s for s in getattr(value, "shape", ()) if not isinstance(s, int)]
    source = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    before, after = symbolic(source), symbolic(node.meta.get("val"))
    if _SIZE_SYMBOLS_META not in node.meta and before and len(before) == len(after) and all(
            a.node.expr == b.node.expr for a, b in zip(before, after)):
        return
    _naming_size_symbols(2)(node, bound)
    if len(after) > 1 and "size_symbols" not in bound:
        # Unnamed, its sizes would pair in order, which they do not.
        raise _unsupported(node, f"{_describe_op(node)} moves dynamic sizes that are not "
                                 "each a size symbol or a multiple of one plus a constant, "
                                 "which Kiln cannot name; compile with static sizes")


def _adapt_expand(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    """Names the sizes of an expand that stretches a size-1 (or a new)
    dimension to a symbolic one, which has no other source for its size
    (import_function names them wherever it can)."""
    names = _symbolic_size_names(node)
    if names and (_SIZE_SYMBOLS_META in node.meta or _stretches_to_symbolic(node)):
        bound["size_symbols"] = names


def _adapt_upsampling(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    """Names the sizes of a resampling to an output size (``size=
    x.shape[-2:]`` in a feature pyramid), which no scale factor gives."""
    if bound.get("scale_factors") is None:
        _naming_size_symbols(1)(node, bound)


def _naming_incoming_gradient(node: torch.fx.Node, bound: Dict[str, Any]) -> None:
    """The memory-efficient attention gradient's schema names its incoming
    gradient ``grad_out_``; the fx op's operand is ``grad_out``."""
    if "grad_out_" in bound:
        bound["grad_out"] = bound.pop("grad_out_")


def _stretches_to_symbolic(node: torch.fx.Node) -> bool:
    """Whether an expand makes a symbolic size of a size-1 or a new dimension."""
    source = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    result = node.meta.get("val")
    if source is None or result is None:
        return False
    leading = len(result.shape) - len(source.shape)
    return any(not isinstance(size, int) and (d < leading or source.shape[d - leading] == 1)
               for d, size in enumerate(result.shape))


# How the ATen overloads that an fx op also represents (the table's `also`,
# docs/Dialects/RationaleFX.md) bind to the fx op's arguments, and what
# their arguments must be beyond their types.
_ARGUMENT_ADAPTERS: Dict[str, Callable[[torch.fx.Node, Dict[str, Any]], None]] = {
    "aten.as_strided.default": _adapt_as_strided,
    "aten.as_strided_scatter.default": _adapt_as_strided_scatter,
    "aten.view.default": _naming_view_sizes,
    "aten._unsafe_view.default": _naming_view_sizes,
    "aten.full.default": _naming_size_symbols(1),
    "aten.empty.memory_format": _naming_size_symbols(1),
    "aten.rand.default": _naming_size_symbols(1),
    "aten.randn.default": _naming_size_symbols(1),
    "aten.expand.default": _adapt_expand,
    "aten._scaled_dot_product_efficient_attention_backward.default": _naming_incoming_gradient,
    "aten.squeeze.dim": _adapt_squeeze_dim,
    "aten.squeeze.default": _adapt_squeeze_default,
    "aten.var.dim": _adapt_var_dim,
    "aten.arange.default": _adapt_arange_default,
    **{f"aten.upsample_{mode}.vec": _adapt_upsampling for mode in _RESAMPLING_MODES},
}


def _bind_index_positions(bound: Dict[str, Any]) -> None:
    """ATen's ``Tensor?[] indices`` as the fx ops take them: the present
    tensors, and ``index_positions`` when some are None (full slices)."""
    indices = list(bound["indices"])
    present = [i for i, index in enumerate(indices) if index is not None]
    if len(present) != len(indices):
        bound["indices"] = [indices[i] for i in present]
        bound["index_positions"] = present


def _scalar_overload(node: torch.fx.Node) -> Optional[_TableOp]:
    """For ``x + 1.0``, which tracing records as ``aten.add.Tensor(x, 1.0)``
    (and ``x // 3`` as ``aten.div.Tensor_mode``): the fx op of the ``.Scalar``
    (``.Scalar_mode``) overload, whose scalar is an attribute with
    PyTorch's wrapped-number promotion, or None."""
    packet, _, overload = str(node.target).rpartition(".")
    if overload not in ("Tensor", "Tensor_mode") or len(node.args) < 2:
        return None
    lhs, rhs = node.args[:2]
    if not (isinstance(lhs, torch.fx.Node) and isinstance(rhs, (bool, int, float))):
        return None
    entry = _FX_SIGNATURES.get(f"{packet}.{overload.replace('Tensor', 'Scalar')}")
    return _TableOp(entry) if entry else None


def _spec_for(node: torch.fx.Node) -> Any:
    """How `node` imports: its op's entry, or the scalar overload's."""
    return _scalar_overload(node) or _OPS.get(aten_target(node))


def _table_ops() -> Dict[Any, Any]:
    """The generated table's ops, by ATen overload object."""
    ops = {}
    for name, entry in _FX_SIGNATURES.items():
        _, op_name, overload = name.split(".")
        packet = getattr(torch.ops.aten, op_name, None)
        overload_op = getattr(packet, overload, None) if packet is not None else None
        if overload_op is not None:  # An op this torch does not have is skipped.
            ops[overload_op] = _TableOp(entry)
    return ops


# The supported ATen overloads and the fx op each one imports as: the five
# first ops by hand (with their own checks), every other op of the fx dialect
# from the generated table.
_OPS: Dict[torch._ops.OpOverload, Union[_Unary, _Binary]] = {
    aten.add.Tensor: _Binary("fx.add", has_alpha=True),
    aten.sub.Tensor: _Binary("fx.sub", has_alpha=True),
    aten.mul.Tensor: _Binary("fx.mul"),
    aten.neg.default: _Unary("fx.neg"),
    aten.relu.default: _Unary("fx.relu"),
}


_OPS = {**_table_ops(), **_OPS}
