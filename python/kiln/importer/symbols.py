"""Symbolic integers and size symbols.

A symbolic integer is an i64 computed from the size symbols (torch 2.x's
SymInts, the fx.symbol_value nodes that import_function inserts): their
types, checks and the arith ops that print them. Size symbols: the meta
keys and expressions that name a node's ``?`` sizes, and the helpers that
turn the shape environment's symbolic sizes into the guards' SizeSymbols.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx

from kiln.guards import SizeSymbol
from kiln.importer.errors import KilnImportError, _describe_op, _unsupported
from kiln.importer.printer import _Printer

aten = torch.ops.aten


class SymbolValue:
    """The target of a node that stands for the run-time value of the size
    symbol `name` (``fx.symbol_value``): import_function puts one where an
    argument equals a symbol in both traces. Calling it gives `value`, the
    symbol's value in the trace the node belongs to."""

    def __init__(self, name: str, value: int):
        self.name, self.value = name, value
        self.__name__ = f"symbol_value_{name}"

    def __call__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"symbol_value({self.name!r})"


@dataclass(frozen=True)
class SymbolicIntType:
    """The type of a symbolic integer value (an i64 computed from the size
    symbols): `symbol` names it when it is one symbol's value, `constant`
    gives it when it is static."""

    symbol: Optional[str] = None
    constant: Optional[int] = None

    @staticmethod
    def of(value: Any) -> "SymbolicIntType":
        if isinstance(value, int):
            return SymbolicIntType(constant=value)
        expr = getattr(getattr(value, "node", None), "expr", None)
        name = str(expr) if getattr(expr, "is_Symbol", False) else None
        return SymbolicIntType(symbol=name)

    def to_mlir(self) -> str:
        return "i64"


# Python's integer arithmetic on SymInts, as the arith op that computes it.
_SYMBOLIC_ARITHMETIC = {
    operator.add: "arith.addi", operator.sub: "arith.subi", operator.mul: "arith.muli",
    operator.floordiv: "arith.floordivsi",
}


def _is_symbolic_int_value(value: Any) -> bool:
    """Whether `value` is a SymInt (torch 2.x)."""
    sym_int = getattr(torch, "SymInt", None)
    return sym_int is not None and isinstance(value, sym_int)


def _is_symbolic_int(node: Any) -> bool:
    """Whether `node` computes a symbolic integer that the importer prints
    (fx.symbol_value and arith on i64), or is a graph input that is one
    (Dynamo's ``s0`` placeholders)."""
    if not isinstance(node, torch.fx.Node):
        return False
    if node.op == "placeholder":
        return _is_symbolic_int_value(node.meta.get("val"))
    return node.op == "call_function" and (
        isinstance(node.target, SymbolValue) or node.target in _SYMBOLIC_ARITHMETIC
        or node.target is getattr(getattr(aten, "sym_size", None), "int", None))


def _check_symbolic_int(node: torch.fx.Node) -> None:
    """Raises UnsupportedOpError unless the symbolic integer `node` reads
    what it can: a size of a tensor, or integers and other symbolic ones."""
    if node.op == "placeholder" or isinstance(node.target, SymbolValue):
        return
    if node.target in _SYMBOLIC_ARITHMETIC:
        if len(node.args) == 2 and not node.kwargs and all(
                isinstance(a, int) or _is_symbolic_int(a) for a in node.args):
            return
        raise _unsupported(node, f"{_describe_op(node)} on {node.args} is not supported: "
                                 "symbolic integer arithmetic takes integers")
    tensor, dim = (list(node.args) + [None, None])[:2]
    if not (isinstance(tensor, torch.fx.Node) and isinstance(dim, int)):
        raise _unsupported(node, f"{_describe_op(node)} on {node.args} is not supported")


def _emit_symbolic_int(p: "_Printer", node: torch.fx.Node,
                       types: Dict[torch.fx.Node, Any]) -> List[str]:
    """The lines that compute the symbolic integer `node`: a size symbol's
    value, a constant, or arith on i64."""
    value_type = types[node]
    if isinstance(node.target, SymbolValue) or value_type.symbol is not None:
        symbol = node.target.name if isinstance(node.target, SymbolValue) else value_type.symbol
        return [f'{p.declare(node)} = fx.symbol_value "{symbol}"']
    # Arithmetic on a symbol's value that import_function inserted computes
    # at run time, whatever one trace's value.
    if value_type.constant is not None and _SYMBOLIC_ARGUMENT_META not in node.meta:
        return [f"{p.declare(node)} = arith.constant {value_type.constant} : i64"]
    if node.target not in _SYMBOLIC_ARITHMETIC:
        raise _unsupported(node, f"{_describe_op(node)} is a size that is no size symbol "
                                 "of the graph; Kiln reads symbolic sizes only from the "
                                 "guarded inputs")
    lines, operands = [], []
    for index, arg in enumerate(node.args):
        if isinstance(arg, torch.fx.Node):
            operands.append(p.value(arg))
            continue
        constant = f"%{node.name}_c{index}"
        lines.append(f"{constant} = arith.constant {int(arg)} : i64")
        operands.append(constant)
    lines.append(f"{p.declare(node)} = {_SYMBOLIC_ARITHMETIC[node.target]} "
                 f"{', '.join(operands)} : i64")
    return lines


# The size symbols of a node's `?`s that import_function found comparing
# its traces (torch 2.x's graphs say them in their SymInts).
_SIZE_SYMBOLS_META = "kiln_size_symbols"


# A size that ``size_symbols`` can name: a size symbol, or a positive
# multiple of one plus a constant, or a product of symbols (each maybe with
# an offset), as fx::parseSizeExpression reads it.
_SIZE_SYMBOL_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"


_SIZE_FACTOR_PATTERN = rf"(?:{_SIZE_SYMBOL_PATTERN}|\({_SIZE_SYMBOL_PATTERN}[+-][0-9]+\))"


_SIZE_EXPRESSION_RE = re.compile(
    rf"(?:[1-9][0-9]*\*)?{_SIZE_SYMBOL_PATTERN}(?:[+-][0-9]+)?"
    rf"|(?:[1-9][0-9]*\*)?{_SIZE_FACTOR_PATTERN}(?:\*{_SIZE_FACTOR_PATTERN})+")


def _symbolic_size_names(node: torch.fx.Node) -> Optional[List[str]]:
    """The size of each ``?`` of `node`'s result as ``size_symbols`` names
    it, or None unless each is a size symbol, a multiple of one plus a
    constant or a product of them (``s1``, ``2*s1``, ``s1-1``, ``s0*s1``;
    not ``s0+s1``)."""
    if _SIZE_SYMBOLS_META in node.meta:
        return node.meta[_SIZE_SYMBOLS_META]
    value = node.meta.get("val")
    symbolic = [s for s in getattr(value, "shape", ()) if not isinstance(s, int)]
    names = [str(getattr(getattr(s, "node", None), "expr", s)).replace(" ", "")
             for s in symbolic]
    return names if all(_SIZE_EXPRESSION_RE.fullmatch(name) for name in names) else None


def _guard_device(device: torch.device) -> str:
    """A tensor's device as a guard names it: ``cpu``, or ``cuda`` for the
    current CUDA device, which is where an artifact runs (docs/ABI.md)."""
    if device.type not in ("cpu", "cuda"):
        raise KilnImportError(f"inputs on {device} cannot be guarded: Kiln runs on the "
                              "CPU and on CUDA GPUs")
    return device.type


def _finite_int(bound: Any) -> Optional[int]:
    """A range bound of the shape environment as an int; None when it is
    unbounded (sympy's or PyTorch's infinity)."""
    if getattr(bound, "is_finite", True) is False:
        return None
    try:
        value = int(bound)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
    return value if abs(value) < 2 ** 62 else None


def _size_symbol(size: Any, symbols: Dict[str, SizeSymbol]) -> str:
    """The name of the size symbol for a symbolic size (a SymInt of fake
    inputs with symbolic shapes), added to `symbols` on first use: the
    SymInt's own symbol (``s0``), or for an expression (``2*s0``) a symbol
    of its own (``e0``, its relation to the others unknown to Kiln), with
    the range the shape environment knows (``mark_dynamic``'s or an export
    ``Dim``'s min and max), which the runtime checks. Equal sizes share a
    symbol, so the runtime checks that they stay equal."""
    node = getattr(size, "node", None)
    expr = getattr(node, "expr", None)
    if expr is None:
        raise KilnImportError(f"size {size!r} of an example input is neither an int nor "
                              "a symbolic size")
    key = str(expr)
    if key not in symbols:
        # Kiln's symbols are at least 2 (sizes 0 and 1 are specialised, as
        # PyTorch does): a size that may be smaller cannot be one.
        bound = node.shape_env.bound_sympy(expr)
        lower = bound.lower
        if not lower >= 2:
            raise KilnImportError(f"symbolic size {key} may be {lower}: Kiln's size symbols "
                                  "are at least 2 (sizes 0 and 1 are specialised)")
        expressions = sum(1 for k in symbols if not k.isidentifier())
        of, scale, offset = _affine_relation(expr) or (None, 1, 0)
        symbols[key] = SizeSymbol(key if key.isidentifier() else f"e{expressions}",
                                  min=max(_finite_int(lower) or 2, 2),
                                  max=_finite_int(bound.upper), of=of, scale=scale,
                                  offset=offset)
    return symbols[key].name


def _affine_relation(expr: Any) -> Optional[Tuple[str, int, int]]:
    """(symbol, scale, offset) when the shape environment's `expr` is
    ``scale * symbol + offset`` of one symbol with a positive integer scale
    (``2*s0``, ``s0 + 1``), else None."""
    free = getattr(expr, "free_symbols", set())
    if getattr(expr, "is_Symbol", False) or len(free) != 1:
        return None
    import sympy
    (base,) = free
    try:
        coefficients = sympy.Poly(expr, base).all_coeffs()
    except sympy.PolynomialError:
        return None
    if len(coefficients) != 2 or not all(c.is_Integer for c in coefficients) \
            or coefficients[0] < 1:
        return None
    return str(base), int(coefficients[0]), int(coefficients[1])


def _related_within(symbols: Sequence[SizeSymbol]) -> Tuple[SizeSymbol, ...]:
    """`symbols`, keeping the relations whose base symbol is among them (one
    that no input size binds cannot be checked)."""
    names = {s.name for s in symbols}
    return tuple(s if s.of is None or s.of in names
                 else dataclasses.replace(s, of=None, scale=1, offset=0) for s in symbols)


# Nodes that _make_symbolic_arguments inserts, which the other traces lack.
_SYMBOLIC_ARGUMENT_META = "kiln_symbolic_argument"
