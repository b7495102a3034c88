"""Importing ATen-level FX graphs into Kiln's ``fx`` dialect.

The importer turns a ``torch.fx.GraphModule`` whose nodes call ATen ops (as
``make_fx``, AOTAutograd or TorchDynamo capture them) into the text of one
``fx.graph`` op, which ``kiln-opt`` parses and verifies::

    gm = capture(fn, example_inputs)
    text = import_graph(gm, example_inputs)
    kiln.run_opt(text, ["--kiln-lower-to-loop"])

Every value's type is exact: the importer runs the graph on the example inputs
and reads each node's shape and dtype from the tensor it produced, so the
verifiers of the ``fx`` ops check the importer against PyTorch itself.

Importing is a table lookup (``_OPS``): one row per supported ATen overload,
naming the ``fx`` op that prints it. Anything the table does not cover raises
``UnsupportedOpError``, naming the ATen op and, when the node recorded one, the
line of user code that produced it.

This module imports torch; ``import kiln`` does not import this module until
one of its names is used, so the rest of the package works without torch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fractions
import functools
import inspect
import math
import operator
import re
import struct
import threading
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple,
                    Union)

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch.fx.experimental.proxy_tensor import PythonKeyTracer, make_fx
from torch.overrides import TorchFunctionMode
from torch.fx.passes.shape_prop import ShapeProp

from kiln import decompositions as kiln_decompositions
from kiln import ctc, recurrent
from kiln._fx_signatures import OPS as _FX_SIGNATURES
from kiln.dtypes import mlir_element_types
from kiln.guards import ALIGNMENT, GraphGuards, SizeSymbol, TensorGuard
from kiln.rng import aten_target, draw_seed, seed_random_ops, seeded

__all__ = [
    "KilnImportError",
    "UnsupportedOpError",
    "UnsupportedDtypeError",
    "capture",
    "check_supported",
    "DECOMPOSITIONS",
    "ImportedGraph",
    "import_function",
    "import_exported",
    "import_graph",
    "input_guards",
    "is_supported",
    "freeze_constants",
    "lift_constants",
]

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


# ===----------------------------------------------------------------------=== #
# Errors
# ===----------------------------------------------------------------------=== #


class KilnImportError(Exception):
    """The importer cannot turn a graph into ``fx`` dialect text."""


class UnsupportedOpError(KilnImportError):
    """A node uses an op, operand or value the importer does not support yet.

    Attributes:
        op: what the node does, e.g. ``aten.sin.default`` or ``get_attr``.
        node_name: the FX node's name.
        location: ``(file, line)`` of the user code that created the node,
            from its recorded stack trace, or None when it has none.
        problem: what is not supported, without the location (the same for
            every node with the same problem).
    """

    def __init__(self, message: str, op: str, node_name: str,
                 location: Optional[Tuple[str, int]], problem: Optional[str] = None):
        super().__init__(message)
        self.op = op
        self.node_name = node_name
        self.location = location
        self.problem = problem if problem is not None else message


class UnsupportedDtypeError(UnsupportedOpError):
    """A node's tensor has a dtype that the ``fx`` dialect does not represent."""


# ===----------------------------------------------------------------------=== #
# Types
# ===----------------------------------------------------------------------=== #

# PyTorch dtype -> MLIR element type, as docs/Dialects/RationaleFX.md fixes it.
_ELEMENT_TYPES: Dict[torch.dtype, str] = mlir_element_types()


def _static_sizes(shape: Sequence[Any]) -> Tuple[Optional[int], ...]:
    """Sizes, None for a symbolic one (a SymInt of a traced graph: asking
    for its int would specialise the graph on it)."""
    return tuple(s if isinstance(s, int) else None for s in shape)


@dataclass(frozen=True)
class TensorType:
    """The type of a tensor value: its sizes (None for a dynamic one) and dtype."""

    shape: Tuple[Optional[int], ...]
    dtype: torch.dtype

    @staticmethod
    def of(value: Any) -> Optional["TensorType"]:
        """Returns the type of a tensor (real or fake) or TensorMetadata; None
        for anything else."""
        if isinstance(value, torch.Tensor):
            if value.layout != torch.strided:
                return None
            return TensorType(_static_sizes(value.shape), value.dtype)
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if isinstance(dtype, torch.dtype) and shape is not None:  # TensorMetadata
            return TensorType(_static_sizes(shape), dtype)
        return None

    def to_mlir(self) -> str:
        """Prints as a builtin ranked tensor type, e.g. ``tensor<4x8xf32>``."""
        element = _ELEMENT_TYPES[self.dtype]
        dims = "".join(f"{'?' if size is None else size}x" for size in self.shape)
        return f"tensor<{dims}{element}>"


# ===----------------------------------------------------------------------=== #
# Source locations and error messages
# ===----------------------------------------------------------------------=== #

_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_TORCH_DIR = Path(torch.__file__).resolve().parent
_KILN_DIR = Path(__file__).resolve().parent.parent


def _is_library_file(filename: str) -> bool:
    """Whether a stack frame is inside torch or kiln rather than user code."""
    path = Path(filename).resolve()
    return any(directory in path.parents for directory in (_TORCH_DIR, _KILN_DIR))


def source_location(node: torch.fx.Node) -> Optional[Tuple[str, int]]:
    """Returns ``(file, line)`` of the user code that created `node`.

    Reads the stack trace that tracing recorded in ``node.meta`` (innermost
    frame last, as Python prints tracebacks) and takes the innermost frame
    outside torch and kiln, else the innermost frame. None without a trace.
    """
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = [(m.group("file"), int(m.group("line"))) for m in _FRAME_RE.finditer(trace)]
    if not frames:
        return None
    user_frames = [f for f in frames if not _is_library_file(f[0])]
    return (user_frames or frames)[-1]


def _describe_op(node: torch.fx.Node) -> str:
    """Names what `node` does: the ATen overload (``aten.sin.default``), another
    callable's qualified name, or the node kind (``get_attr``)."""
    if node.op == "call_function":
        target = aten_target(node)
        if isinstance(target, torch._ops.OpOverload):
            return str(target)
        return torch.fx.node._get_qualified_name(target)  # type: ignore[arg-type]
    if node.op in ("call_module", "call_method", "get_attr"):
        return f"{node.op} {node.target}"
    return node.op


def _unsupported(node: torch.fx.Node, problem: str,
                 error: type = UnsupportedOpError) -> UnsupportedOpError:
    """Builds an error: `problem`, then where the node came from."""
    location = source_location(node)
    where = f" at {location[0]}:{location[1]}" if location else ""
    message = f"{problem}{where} (FX node '{node.name}')"
    return error(message, _describe_op(node), node.name, location, problem)


# ===----------------------------------------------------------------------=== #
# Printing
# ===----------------------------------------------------------------------=== #

_BARE_ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_SSA_INVALID_RE = re.compile(r"[^A-Za-z0-9_$.\-]")


def _format_float(value: float) -> str:
    """Prints an f64 attribute value that parses back to the same double.

    Uses MLIR's own form (``2.000000e+00``) when it is exact, else Python's
    shortest round-trip form, and IEEE bits in hex for infinities and NaN.
    """
    if math.isinf(value) or math.isnan(value):
        (bits,) = struct.unpack("<Q", struct.pack("<d", value))
        return f"0x{bits:016X}"
    text = f"{value:.6e}"
    if float(text) == value:
        return text
    # A shortest form without a '.' (`1e-07`) always passes the test above.
    return repr(value)


def _format_alpha(alpha: Any) -> Optional[str]:
    """The ``alpha`` attribute for fx.add/fx.sub, or None when alpha is 1."""
    if alpha == 1:
        return None
    if isinstance(alpha, float):
        return f"{{alpha = {_format_float(alpha)} : f64}}"
    return f"{{alpha = {int(alpha)} : i64}}"


def _format_symbol(name: str) -> str:
    """``@name``, quoted when `name` is not a bare MLIR identifier."""
    if _BARE_ID_RE.match(name):
        return f"@{name}"
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'@"{escaped}"'


class _Printer:
    """Names and types of the values of one graph, for the emitters."""

    def __init__(self, types: Dict[torch.fx.Node, TensorType]):
        self._types = types
        self._names: Dict[torch.fx.Node, str] = {}
        self._used: set = set()

    def declare(self, node: torch.fx.Node) -> str:
        """Gives `node` an SSA name derived from its FX name; returns it."""
        base = _SSA_INVALID_RE.sub("_", node.name) or "v"
        if base[0].isdigit() and not base.isdigit():
            base = f"v{base}"
        name, suffix = base, 0
        while name in self._used:
            suffix += 1
            name = f"{base}_{suffix}"
        self._used.add(name)
        self._names[node] = f"%{name}"
        return self._names[node]

    def value(self, node: torch.fx.Node) -> str:
        """The SSA name of an already declared node, e.g. ``%add``, or of the
        result a ``getitem`` takes from a multi-result op, e.g. ``%ln#1``."""
        if _is_getitem(node):
            source, index = node.args
            return f"{self._names[source]}#{index}"
        return self._names[node]

    def declare_results(self, node: torch.fx.Node) -> str:
        """Declares `node` and returns its result list, ``%ln:3`` for several."""
        name = self.declare(node)
        value_type = self._types[node]
        if isinstance(value_type, tuple):
            return f"{name}:{len(value_type)}"
        return name

    def type(self, node: torch.fx.Node) -> str:
        """The MLIR type of a node's value, e.g. ``tensor<4x8xf32>``."""
        value_type = self._types[node]
        if isinstance(value_type, tuple):
            return ", ".join(t.to_mlir() for t in value_type)
        return value_type.to_mlir()

    def result_types(self, node: torch.fx.Node) -> str:
        """The result types of an op, as a functional type prints them."""
        value_type = self._types[node]
        if isinstance(value_type, tuple) and len(value_type) != 1:
            return f"({self.type(node)})"
        return self.type(node)


# ===----------------------------------------------------------------------=== #
# Symbolic integers
# ===----------------------------------------------------------------------=== #


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


# ===----------------------------------------------------------------------=== #
# Op table
# ===----------------------------------------------------------------------=== #


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


def _is_getitem(node: Any) -> bool:
    """Whether `node` takes one result of a multi-result op."""
    return (isinstance(node, torch.fx.Node) and node.op == "call_function"
            and node.target is operator.getitem)


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


# ===----------------------------------------------------------------------=== #
# Checking nodes
# ===----------------------------------------------------------------------=== #

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
    ``output_mask`` leaves out (None in PyTorch) filled in: the fx op still
    has them, undefined. `type_of` gives an argument's type."""
    if None not in types or aten_target(node) is not aten.convolution_backward.default:
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


# ===----------------------------------------------------------------------=== #
# Capturing and importing
# ===----------------------------------------------------------------------=== #

_TORCH_MAJOR = int(re.findall(r"\d+", torch.__version__)[0])
# torch 1.13's Tracer records `traceback.walk_stack(user_frame)`, innermost
# frame first; later versions and Dynamo print innermost last, like Python.
_TRACES_INNERMOST_FIRST = _TORCH_MAJOR < 2
_FRAME_START_RE = re.compile(r'^  File "', re.MULTILINE)


def _innermost_last(trace: str) -> str:
    """Reorders a stack trace recorded innermost-first into Python's order."""
    starts = [m.start() for m in _FRAME_START_RE.finditer(trace)]
    frames = [trace[a:b] for a, b in zip(starts, starts[1:] + [len(trace)])]
    return "".join(f if f.endswith("\n") else f + "\n" for f in reversed(frames))


# What tracing changes for its duration is the process's (cuDNN's and
# oneDNN's switches, the attention backend, the resampling ops' Python
# kernels): one thread traces at a time.
_TRACING_LOCK = threading.RLock()


def _resampling_by_default(vec: Any) -> Callable:
    """A kernel of a resampling op's ``.vec`` overload (an output size or
    scale factors) that calls its ``.default`` overload (the output size and
    a scale per spatial dimension), as ATen's composite does, with sizes
    that may be symbolic: ATen's own composite takes concrete sizes only."""
    default = vec.overloadpacket.default

    def kernel(input, output_size, *rest):
        # Linear modes take align_corners between the size and the factors.
        *align_corners, scale_factors = rest
        spatial = input.dim() - 2
        if output_size is not None:
            sizes, scales = list(output_size), [None] * spatial
        else:
            scales = list(scale_factors)
            sizes = [_scaled_size(input.shape[2 + d], scales[d]) for d in range(spatial)]
        return default(input, sizes, *align_corners, *scales)
    return kernel


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


@contextlib.contextmanager
def keeping_resampling_whole() -> Iterator[None]:
    """Makes make_fx record the resampling ops whole: torch 2.x registers
    Python kernels of them at the CompositeImplicitAutograd and Autograd
    keys, which its python dispatcher runs while tracing, and which
    decompose them. In their place the ``.vec`` overloads reach
    ``.default`` through _resampling_by_default, and autograd records
    ``upsample_*_backward``."""
    keys = [getattr(torch._C.DispatchKey, name) for name in
            ("CompositeImplicitAutograd", "Autograd")]
    with _TRACING_LOCK:
        removed = [(op, key, op.py_kernels.pop(key)) for op in RESAMPLING_OPS
                   for key in keys if key in getattr(op, "py_kernels", {})]
        replaced = {op for op, _, _ in removed if op._overloadname == "vec"}
        for op in replaced:
            op.py_kernels[keys[0]] = _resampling_by_default(op)

        def forget_dispatch() -> None:
            for op in {op for op, _, _ in removed}:
                getattr(op, "_dispatch_cache", {}).clear()

        forget_dispatch()
        try:
            yield
        finally:
            for op in replaced:
                del op.py_kernels[keys[0]]
            for op, key, kernel in removed:
                op.py_kernels[key] = kernel
            forget_dispatch()


# A torch function mode sees a Python function (F.affine_grid) and not the
# ops it calls, so both are here.
_COMPOSITE_FUNCTIONS = {
    torch.nn.functional.affine_grid: kiln_decompositions.affine_grid,
    torch.affine_grid_generator: kiln_decompositions.checked_affine_grid_generator,
    torch.nn.functional.ctc_loss: ctc.ctc_loss,
    torch.ctc_loss: ctc.ctc_loss_reduced,
}


class _Composites(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        composite = _COMPOSITE_FUNCTIONS.get(func) or recurrent.cells_of(func, args, kwargs)
        return (composite or func)(*args, **kwargs)


def as_composites() -> TorchFunctionMode:
    """A context in which a few PyTorch functions run as compositions of
    other ops while tracing: above autograd, which then differentiates the
    composition rather than recording the function's own gradient.
    Recurrent layers and cells run their cells' arithmetic
    (kiln.recurrent), not fused CUDA cells or oneDNN's layer;
    affine_grid_generator runs Kiln's decomposition, whose gradient is a
    product with the pixels' coordinates, not PyTorch's gradient, which
    builds them by writes into a fresh tensor (and would need
    functionalizing, which loses autograd's graph of a training step on
    torch 2.x); the CTC loss runs its recursion (kiln.ctc), which no fx op
    holds."""
    return _Composites()


@contextlib.contextmanager
def _recording_stack_traces() -> Iterator[None]:
    """Makes make_fx's tracer record each node's stack trace (torch 1.13,
    whose make_fx has no option for it)."""
    overridden = "record_stack_traces" in PythonKeyTracer.__dict__
    saved = PythonKeyTracer.record_stack_traces
    PythonKeyTracer.record_stack_traces = True
    try:
        yield
    finally:
        if overridden:
            PythonKeyTracer.record_stack_traces = saved
        else:
            del PythonKeyTracer.record_stack_traces  # Inherit Tracer's default again.


@functools.lru_cache(maxsize=None)
def _is_torch_file(filename: str) -> bool:
    return _TORCH_DIR in Path(filename).resolve().parents


# Whether this thread's make_fx keeps the user's frames (_keeping_user_frames).
_USER_FRAMES = threading.local()


def _install_user_frame_filter() -> bool:
    """Gives PythonKeyTracer (torch 2.x) a frame filter that keeps every
    frame outside torch while _keeping_user_frames holds on this thread, and
    is torch's own filter elsewhere (other threads' traces included). Its
    own keeps the frames from the first ``forward`` on, and none where no
    module's forward is on the stack, as when the traced function is a
    plain function: the nodes would lose their source locations. False
    where the tracer has no filter (torch 1.13)."""
    inherited = getattr(PythonKeyTracer, "_filter_traceback_frames", None)
    if inherited is None:
        return False
    if getattr(inherited, "kiln_keeps_user_frames", False):
        return True

    def filter_frames(tracer: Any, frames: traceback.StackSummary) -> traceback.StackSummary:
        if not getattr(_USER_FRAMES, "active", False):
            return inherited(tracer, frames)
        # The user's frames, wherever they are, and Kiln's (which
        # _unrolled_hint reads).
        return traceback.StackSummary.from_list(
            [frame for frame in frames if not _is_torch_file(frame.filename)])

    filter_frames.kiln_keeps_user_frames = True  # type: ignore[attr-defined]
    PythonKeyTracer._filter_traceback_frames = filter_frames
    return True


@contextlib.contextmanager
def _keeping_user_frames() -> Iterator[None]:
    """Makes this thread's make_fx (torch 2.x) keep the user's frames in
    each node's stack trace (_install_user_frame_filter)."""
    with _TRACING_LOCK:
        installed = _install_user_frame_filter()
    saved = getattr(_USER_FRAMES, "active", False)
    _USER_FRAMES.active = installed
    try:
        yield
    finally:
        _USER_FRAMES.active = saved


def _input_list(example_inputs: Sequence[Any]) -> List[Any]:
    """The example inputs as a list, one entry per argument of the function."""
    if isinstance(example_inputs, torch.Tensor) or not isinstance(example_inputs, (tuple, list)):
        raise TypeError("example_inputs must be a tuple or list of the function's "
                        f"arguments, not {type(example_inputs).__name__}")
    return list(example_inputs)


def _tensor_copies(example_inputs: Sequence[Any]) -> List[Any]:
    """The inputs with every tensor copied, for tracing on real values.

    Tracing runs the function: on the caller's tensors an in-place write
    would change them. And make_fx tracks tensors by identity: given one
    tensor as two inputs, it binds every use to the last placeholder, and
    the graph computes `y + y` for `x + y`; copies give each input its own.
    """
    flat, spec = pytree.tree_flatten(_input_list(example_inputs))
    flat = [leaf.detach().clone().requires_grad_(leaf.requires_grad)
            if isinstance(leaf, torch.Tensor) else leaf for leaf in flat]
    return pytree.tree_unflatten(flat, spec)


# Ops whose decomposition in PyTorch's table leaves prims ops that have no
# fx equivalent (``prims.signbit``) or scalars where fx wants tensors
# (``where(mask, 0.0, x)``); capture rewrites them itself (_EQUIVALENT_OPS).
_NOT_DECOMPOSED = ("aten.floor_divide.", "aten.masked_fill.")
# Ops of the table that Kiln lowers best as their decompositions: torch
# 2.x's batch norms, and the gradients of softmax and of normalizations
# (elementwise arithmetic and row reductions that fuse with their
# neighbours).
_DECOMPOSED_ANYWAY = ("aten._native_batch_norm_legit", "aten._softmax_backward_data.",
                      "aten._log_softmax_backward_data.", "aten.native_layer_norm_backward.",
                      "aten.native_group_norm_backward.", "aten.native_batch_norm_backward.")


def _kept_whole(op: Any) -> bool:
    """Whether tracing keeps `op` whole: an op of the fx table (less those
    Kiln lowers best decomposed), or one whose decomposition leaves prims
    without an fx op, or a resampling."""
    return (op in _OPS and not str(op).startswith(_DECOMPOSED_ANYWAY)) \
        or str(op).startswith(_NOT_DECOMPOSED) or op in RESAMPLING_OPS


def _decompositions() -> Dict[Any, Callable]:
    """PyTorch's decompositions (``torch._decomp``, ``torch._refs``) of the
    ATen ops that the fx dialect lacks (``aten.t``, ``aten.transpose``,
    ``aten.stack``, ``aten.rsub``, ``aten.native_batch_norm``, ...): the ops
    the table has are kept whole. The few prims ops that the decompositions
    leave become fx ops in canonicalize."""
    from torch._decomp import decomposition_table

    table = {op: fn for op, fn in decomposition_table.items() if not _kept_whole(op)}
    table[aten.cudnn_grid_sampler.default] = _cudnn_grid_sampler
    table[aten.cudnn_grid_sampler_backward.default] = _cudnn_grid_sampler_backward
    # Rearrangements that torch 1.13 has no decomposition of: views,
    # permutes and gathers, which lower to index arithmetic.
    table[aten.pixel_shuffle.default] = _pixel_shuffle
    table[aten.pixel_unshuffle.default] = _pixel_unshuffle
    table[aten.channel_shuffle.default] = _channel_shuffle
    table[aten.unfold.default] = _unfold
    table[aten.roll.default] = _roll
    table[aten.repeat.default] = _repeat
    table.setdefault(aten.smooth_l1_loss.default, _smooth_l1_loss)
    # Gradients of resampling and padding, adaptive max pooling, index_add:
    # where PyTorch has no decomposition, or (index_add, torch 1.13) one that
    # does not trace; and affine_grid, whose coordinates Kiln's builds
    # without the writes into a fresh tensor that torch 2.x's makes (which
    # would need functionalizing, losing autograd's graph of a training step).
    preferred = {aten.affine_grid_generator.default}
    for op, fn in kiln_decompositions.table().items():
        if op not in table or op in preferred \
                or (op is aten.index_add.default and _TORCH_MAJOR < 2):
            table[op] = fn
    return table


def _smooth_l1_loss(x: torch.Tensor, y: torch.Tensor, reduction: int = 1,
                    beta: float = 1.0) -> torch.Tensor:
    """Squared below `beta` (halved and over `beta`), absolute above (less
    half `beta`); `beta` 0 is the L1 loss. `reduction` is ATen's: 0 none,
    1 mean, 2 sum."""
    difference = (x - y).abs()
    if beta == 0:
        loss = difference
    else:
        loss = torch.where(difference < beta, 0.5 * difference * difference / beta,
                           difference - 0.5 * beta)
    return loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss


def _repeat(x: torch.Tensor, repeats: Sequence[int]) -> torch.Tensor:
    """Tensor.repeat as an expand of `x` with a unit dimension before each of
    its own, merged back: [d] repeated r times is [1, d] expanded to [r, d],
    viewed as [r*d]. The same index arithmetic as a repeat's, and a count
    that follows a dynamic size (instance norm's ``weight.repeat(N)``) is
    then an expand's size, which a size symbol names."""
    shape = [1] * (len(repeats) - x.dim()) + list(x.shape)
    if 0 in repeats:  # Nothing to expand: an empty result.
        return x.new_zeros([count * own for count, own in zip(repeats, shape)])
    units = [size for own in shape for size in (1, own)]
    stretched = [size for count, own in zip(repeats, shape) for size in (count, own)]
    return x.reshape(units).expand(stretched).reshape(
        [count * own for count, own in zip(repeats, shape)])


def _roll(x: torch.Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> torch.Tensor:
    """torch.roll as the concatenation of a dimension's last `shift`
    elements and the others: slices with bounds counted from the end, which
    mean the same at every size (PyTorch's decomposition slices at `size -
    shift`, which a dynamic size changes). Without dimensions, the flattened
    tensor rolls."""
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: {len(shifts)} shifts need as many dims")
        return _roll(x.reshape(-1), shifts, [0]).view(x.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
    for shift, dim in zip(shifts, dims):
        if x.shape[dim] == 0:
            continue  # Nothing to move.
        if abs(shift) >= x.shape[dim]:
            shift %= x.shape[dim]  # A static size's; a dynamic one refuses.
        if shift:
            # A positive shift puts the last `shift` elements first (bounds
            # from the end), a negative one the first `-shift` last (bounds
            # from the start): the same two slices.
            x = torch.cat([aten.slice.Tensor(x, dim, -shift, _FULL_SLICE_END),
                           aten.slice.Tensor(x, dim, 0, -shift)], dim)
    return x


def _pixel_shuffle(x: torch.Tensor, factor: int) -> torch.Tensor:
    """[..., C·r², H, W] -> [..., C, H·r, W·r]: channel c·r² + i·r + j
    moves to row h·r + i, column w·r + j."""
    *batch, channels, height, width = x.shape
    lead = len(batch)
    grouped = x.reshape(*batch, channels // (factor * factor), factor, factor, height, width)
    moved = grouped.permute(*range(lead), lead, lead + 3, lead + 1, lead + 4, lead + 2)
    return moved.reshape(*batch, channels // (factor * factor), height * factor, width * factor)


def _pixel_unshuffle(x: torch.Tensor, factor: int) -> torch.Tensor:
    """pixel_shuffle's inverse: [..., C, H·r, W·r] -> [..., C·r², H, W]."""
    *batch, channels, height, width = x.shape
    lead = len(batch)
    split = x.reshape(*batch, channels, height // factor, factor, width // factor, factor)
    moved = split.permute(*range(lead), lead, lead + 2, lead + 4, lead + 1, lead + 3)
    return moved.reshape(*batch, channels * factor * factor, height // factor, width // factor)


def _channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    """[N, C, ...]: channel g·(C/G) + k moves to k·G + g."""
    batch, channels, *extent = x.shape
    grouped = x.reshape(batch, groups, channels // groups, *extent)
    return grouped.transpose(1, 2).reshape(batch, channels, *extent)


def _unfold(x: torch.Tensor, dimension: int, size: int, step: int) -> torch.Tensor:
    """Tensor.unfold: the windows of `size` elements every `step` along
    `dimension`, as a new last dimension. A gather of the windows' elements
    (the graph's values have no storage to view), so writes into the result
    do not reach `x`."""
    if x.dim() == 0:
        return x.reshape(1)[:size]
    dimension %= x.dim()
    count = (x.shape[dimension] - size) // step + 1
    starts = torch.arange(count, device=x.device) * step
    positions = starts.unsqueeze(1) + torch.arange(size, device=x.device)
    windows = x.index_select(dimension, positions.reshape(-1))
    windows = windows.reshape(*x.shape[:dimension], count, size, *x.shape[dimension + 1:])
    return windows.movedim(dimension + 1, -1)


def _cudnn_grid_sampler(input: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """What ``grid_sampler`` dispatches to on CUDA for the cases cuDNN has:
    bilinear sampling, zeros padding, aligned corners."""
    return aten.grid_sampler_2d.default(input, grid, 0, 0, True)


def _cudnn_grid_sampler_backward(input: torch.Tensor, grid: torch.Tensor,
                                 grad: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The gradient of _cudnn_grid_sampler, which autograd records when it
    differentiates grid sampling on CUDA."""
    return aten.grid_sampler_2d_backward.default(grad, input, grid, 0, 0, True, [True, True])


# What capture decomposes while tracing: ATen overload -> its decomposition.
DECOMPOSITIONS: Dict[Any, Callable] = _decompositions()


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


def capture(fn: Callable, example_inputs: Sequence[Any], *,
            math_attention: bool = False) -> torch.fx.GraphModule:
    """Traces `fn` (a function or an nn.Module) to an ATen-level graph.

    Runs ``make_fx(fn)(*example_inputs)`` on copies of the inputs (so that
    tracing leaves the caller's tensors as they were; a tensor passed twice
    stays two inputs) with DECOMPOSITIONS, so that ops the fx dialect lacks
    become ops it has, recording each node's stack trace (innermost frame
    last) so that errors can point at the user's code, then drops dead nodes
    (such as the ``aten.detach`` that autograd adds when an input requires
    grad). Parameters, buffers and tensor constants that `fn` reads become
    ``get_attr`` nodes: lift_constants turns them into graph inputs.

    A function that writes into its inputs (``x[0] = 0``, ``y.add_(1)``) is
    traced again, functionalized: the graph computes each written input's
    new value and returns them after the function's own results, as
    ``(results, (new values...))``; the graph module's
    ``kiln_input_updates`` lists which inputs they are (see
    _return_input_updates). Writes into anything else (a module's buffer)
    stay in-place ops, which the importer refuses.

    With `math_attention`, ``scaled_dot_product_attention`` (torch 2.x)
    traces as its math, matrix products around a softmax, rather than as
    the op of a fused kernel: Kiln lowers those ops for static sizes only.
    """
    with _TRACING_LOCK, _math_attention() if math_attention else contextlib.nullcontext():
        gm = _trace(fn, example_inputs)
        if any(n.op == "call_function" and _writes_an_argument(n) for n in gm.graph.nodes):
            try:
                functional = _trace(_functionalize(fn), example_inputs)
            except RuntimeError as error:
                # Autograd inside `fn` (torch.autograd.grad of a training
                # step) sees functionalization's wrappers, which do not
                # require grad. The first trace's graph has the gradients
                # as ops already, and functionalizes without autograd.
                try:
                    functional = _trace(_functionalize(_replaying(gm)), example_inputs)
                except Exception:
                    raise error from None
            gm = functional
            _return_input_updates(gm)
    return gm


def _replaying(gm: torch.fx.GraphModule) -> Callable:
    """A function that runs `gm`'s graph op by op on its flattened
    arguments, each op recording the stack trace of the node it replays, so
    that a trace of it points at the user's code as `gm` did."""
    preserving = getattr(torch.fx.traceback, "preserve_node_meta", None)
    if preserving is None:  # torch 1.13: traces are recorded innermost first.
        for node in gm.graph.nodes:
            if node.stack_trace and _TRACES_INNERMOST_FIRST:
                node.stack_trace = _innermost_last(node.stack_trace)
        preserving = torch.fx.traceback.override_stack_trace

    def replay(*args: Any) -> Any:
        with preserving():
            results = torch.fx.Interpreter(gm).run(*pytree.tree_flatten(list(args))[0],
                                                   enable_io_processing=False)
        return gm.graph.process_outputs(results)
    return replay


def _math_attention() -> contextlib.AbstractContextManager:
    """Makes scaled_dot_product_attention choose its math backend (torch
    2.x; torch 1.13 has no fused attention)."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel(SDPBackend.MATH)
    except ImportError:
        pass
    choose = getattr(getattr(torch.backends, "cuda", None), "sdp_kernel", None)  # torch < 2.2
    if choose is None or _TORCH_MAJOR < 2:
        return contextlib.nullcontext()
    return choose(enable_flash=False, enable_mem_efficient=False, enable_math=True)


def _functionalize(fn: Callable) -> Callable:
    """`fn` with its in-place writes turned into values and copied back into
    its inputs at the end (torch.func on torch 2.x, functorch on 1.13)."""
    try:
        from torch.func import functionalize
    except ImportError:
        from functorch import functionalize
    return functionalize(fn)


def _trace(fn: Callable, example_inputs: Sequence[Any]) -> torch.fx.GraphModule:
    """capture's trace of `fn`, on copies of the inputs."""
    inputs = _tensor_copies(example_inputs)
    options = {"tracing_mode": "real", "decomposition_table": DECOMPOSITIONS}
    # Without cuDNN and oneDNN, grid sampling traces as grid_sampler_2d.
    with torch.backends.cudnn.flags(enabled=False), \
            torch.backends.mkldnn.flags(enabled=False), as_composites():
        if "record_stack_traces" in inspect.signature(make_fx).parameters:
            # torch 2.x: the tracer is configured per call.
            with keeping_resampling_whole(), _keeping_user_frames():
                gm = make_fx(fn, record_stack_traces=True, **options)(*inputs)
        else:
            with _recording_stack_traces():
                gm = make_fx(fn, **options)(*inputs)
    for node in gm.graph.nodes:
        if _TRACES_INNERMOST_FIRST and node.meta.get("stack_trace"):
            node.meta["stack_trace"] = _innermost_last(node.meta["stack_trace"])
    canonicalize(gm)
    writes = [n for n in gm.graph.nodes if n.op == "call_function" and _writes_an_argument(n)]
    if writes:
        if any("val" not in n.meta for n in writes):
            # torch 1.13 records no values while tracing; _copy_into_fresh
            # and _scatter_into_fresh_views need the shapes. Without
            # autograd, which refuses writes into a split's pieces that the
            # unsafe splits (now split_with_sizes) allowed.
            with torch.no_grad():
                ShapeProp(gm).propagate(*pytree.tree_flatten(_input_list(inputs))[0])
            canonicalize(gm)
        _scatter_into_fresh_views(gm)
    eliminate_dead_code(gm)
    gm.recompile()
    return gm


def _return_input_updates(gm: torch.fx.GraphModule) -> None:
    """Turns a functionalized graph's write-backs into its inputs
    (``copy_(input, new value)`` at the end) into results:
    ``gm.kiln_input_updates`` lists the indices of the inputs written, and
    if there are any, the output becomes ``(results, (new values...))``,
    which the caller copies into those inputs (kiln.compile's callable
    does)."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    updates = []
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is aten.copy_.default \
                and not node.users and node.args[0] in placeholders \
                and isinstance(node.args[1], torch.fx.Node):
            updates.append((placeholders.index(node.args[0]), node.args[1]))
            graph.erase_node(node)
    gm.kiln_input_updates = tuple(index for index, _ in updates)
    if updates:
        output = next(n for n in graph.nodes if n.op == "output")
        output.args = ((output.args[0], tuple(value for _, value in updates)),)
    gm.recompile()


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


def _resources_section(frozen: Dict[str, torch.Tensor]) -> str:
    """The ``dialect_resources`` section that holds `frozen`'s bytes: each a
    little-endian 32-bit alignment, then the elements in row-major order."""
    if not frozen:
        return ""
    lines = []
    for key, tensor in frozen.items():
        data = tensor.detach().to("cpu").contiguous().reshape(-1)
        blob = data.view(torch.uint8).numpy().tobytes() if data.numel() else b""
        alignment = max(data.element_size(), 1).to_bytes(4, "little")
        lines.append(f'      {key}: "0x{(alignment + blob).hex().upper()}"')
    return ("\n{-#\n  dialect_resources: {\n    builtin: {\n" + ",\n".join(lines)
            + "\n    }\n  }\n#-}\n")


class _TypeRecorder(torch.fx.Interpreter):
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


def _guard_device(device: torch.device) -> str:
    """A tensor's device as a guard names it: ``cpu``, or ``cuda`` for the
    current CUDA device, which is where an artifact runs (docs/ABI.md)."""
    if device.type not in ("cpu", "cuda"):
        raise KilnImportError(f"inputs on {device} cannot be guarded: Kiln runs on the "
                              "CPU and on CUDA GPUs")
    return device.type


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
    UnsupportedOpError for the first node the importer cannot import, and
    KilnImportError when the inputs do not fit the graph.
    """
    for node in gm.graph.nodes:
        _check_structure(node)
    types = _propagate_types(gm, _flatten_inputs(gm, example_inputs))
    for node in gm.graph.nodes:
        _check_type(node, types.get(node))
    graph_guards = input_guards(gm, example_inputs) if guards else None
    return _print_graph(gm, types, name, graph_guards, op_lines)


# ===----------------------------------------------------------------------=== #
# Importing functions, with dynamic sizes
# ===----------------------------------------------------------------------=== #


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


# Ops that read their operand's sizes against static bounds (an index, a
# slice's end, k, a padding): on a dynamic dimension, slice, select and topk
# need a range of its symbol (_symbol_ranges), a constant padding only that
# its sizes stay at least 2; the others are refused.
_SIZE_BOUNDED_OPS = {
    aten.select.int, aten.slice.Tensor, aten.topk.default, aten.diagonal.default,
    aten.as_strided.default, aten.constant_pad_nd.default, aten.narrow.default,
}
_FULL_SLICE_END = 2 ** 63 - 1


def _dynamic_dims(flat: List[Any], dynamic: Union[bool, Dict[int, Sequence[int]]]
                  ) -> Dict[Tuple[int, int], int]:
    """(input, dimension) -> size of the dimensions to make dynamic: every
    dimension of size 2 or more for True, or those `dynamic` lists by flat
    input index (which must not be 0 or 1: those sizes are specialised)."""
    chosen = {}
    if dynamic is True:
        for index, value in enumerate(flat):
            if isinstance(value, torch.Tensor):
                chosen.update({(index, d): int(s) for d, s in enumerate(value.shape) if s >= 2})
        return chosen
    for index, dims in dynamic.items():
        value = flat[index] if 0 <= index < len(flat) else None
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"dynamic names input {index}, which is not a tensor input")
        for dim in dims:
            dim = dim % value.dim() if -value.dim() <= dim < value.dim() else dim
            if not 0 <= dim < value.dim():
                raise ValueError(f"dynamic names dimension {dim} of input {index}, which "
                                 f"has rank {value.dim()}")
            if value.shape[dim] < 2:
                raise ValueError(f"dimension {dim} of input {index} has size "
                                 f"{value.shape[dim]}; sizes 0 and 1 are specialised "
                                 "and cannot be dynamic")
            chosen[(index, dim)] = int(value.shape[dim])
    return chosen


def _resized(tensor: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    """`tensor` with its dimensions grown to `shape` by repeating its own
    elements, so that values stay valid (indices in range, masks of bools)."""
    for dim, size in enumerate(shape):
        if size != tensor.shape[dim]:
            index = torch.arange(size, device=tensor.device) % tensor.shape[dim]
            tensor = tensor.index_select(dim, index)
    return tensor.clone()


def _without_types(text: str) -> List[str]:
    """The lines of a graph's body with every tensor type blanked."""
    body = text.split("{\n", 1)[1] if "{\n" in text else text
    return [re.sub(r"tensor<(?:[^<>]|<[^<>]*>)*>", "tensor", line) for line in body.splitlines()]


def _canonical_steps(steps: Tuple[Tuple[Any, ...], ...]) -> Tuple[Tuple[Any, ...], ...]:
    """_FloorChain steps in a canonical form: adjacent affine steps and
    adjacent divisions composed, ``⌊x / q⌋ + b`` as ``⌊(x + b·q) / q⌋``,
    ``⌊(a·x + b) / q⌋`` reduced by gcd(a, q) (to ``(a / q)·x + ⌊b / q⌋``
    where q divides a), identities dropped."""
    steps = list(steps)
    changed = True
    while changed:
        changed = False
        for i, step in enumerate(steps):
            if step in (("affine", 1, 0), ("floordiv", 1)):
                del steps[i]
                changed = True
                break
            if i + 1 == len(steps):
                break
            after = steps[i + 1]
            if step[0] == after[0] == "affine":
                steps[i:i + 2] = [("affine", after[1] * step[1], after[1] * step[2] + after[2])]
            elif step[0] == after[0] == "floordiv":
                steps[i:i + 2] = [("floordiv", step[1] * after[1])]
            elif step[0] == "floordiv" and after[0] == "affine" and after[1] == 1:
                steps[i:i + 2] = [("affine", 1, after[2] * step[1]), step]
            elif step[0] == "affine" and after[0] == "floordiv" \
                    and math.gcd(step[1], after[1]) > 1:
                # ⌊(a·x + b) / q⌋ is ⌊((a/g)·x + ⌊b/g⌋) / (q/g)⌋ for g = gcd(a, q):
                # the dropped b mod g adds less than 1 to an integer.
                g = math.gcd(step[1], after[1])
                steps[i:i + 2] = [("affine", step[1] // g, step[2] // g),
                                  ("floordiv", after[1] // g)]
            else:
                continue
            changed = True
            break
    return tuple(steps)


@dataclasses.dataclass(frozen=True)
class _FloorChain:
    """A dynamic size as steps applied to size symbol `symbol`'s value:
    ``("affine", a, b)`` takes x to a·x + b (a >= 1), ``("floordiv", q)`` to
    ⌊x / q⌋ (a strided window's count). Canonical (_canonical_steps), so
    that the sizes that windows and their inverses give compare equal when
    they are (chains that still differ are refused where they meet);
    non-decreasing in the symbol."""
    symbol: str
    steps: Tuple[Tuple[Any, ...], ...] = ()

    def then(self, *steps: Tuple[Any, ...]) -> "_FloorChain":
        return _FloorChain(self.symbol, _canonical_steps(self.steps + steps))

    def evaluate(self, value: int) -> int:
        for step in self.steps:
            value = value * step[1] + step[2] if step[0] == "affine" else value // step[1]
        return value

    def divides(self) -> bool:
        """Whether a step is a floor division (a window's count)."""
        return any(step[0] == "floordiv" for step in self.steps)

    def text(self) -> str:
        """The chain as `size_symbols` writes it (fx::parseSizeExpression):
        ``s0``, ``3*s0-1``, ``(s0+1)//2``, ``2*((s0-1)//4)+1``."""
        text = self.symbol
        for step in self.steps:
            if step[0] == "floordiv":
                text = f"({text})//{step[1]}"
                continue
            if step[1] != 1:
                text = f"{step[1]}*" + (text if text == self.symbol else f"({text})")
            if step[2]:
                text += f"{step[2]:+d}"
        return text

    def at(self, node: torch.fx.Node, value: int
           ) -> Callable[[Callable[..., torch.fx.Node]], torch.fx.Node]:
        """A builder of the chain's nodes (by `add(target, args)`): the
        symbol's run-time value (`value` in `node`'s trace), then each step
        as integer arithmetic."""
        def build(add: Callable[..., torch.fx.Node]) -> torch.fx.Node:
            size = add(SymbolValue(self.symbol, value), ())
            for step in self.steps:
                if step[0] == "floordiv":
                    size = add(operator.floordiv, (size, step[1]))
                    continue
                if step[1] != 1:
                    size = add(operator.mul, (size, step[1]))
                if step[2]:
                    size = add(operator.add, (size, step[2]))
            return size
        return build

    def least(self, size: int) -> int:
        """The least value of the symbol, 2 at least, whose size is `size`
        or more."""
        low, high = 2, 2
        while self.evaluate(high) < size:
            low, high = high + 1, high * 2
        while low < high:
            middle = (low + high) // 2
            low, high = (middle + 1, high) if self.evaluate(middle) < size else (low, middle)
        return low


class _OpaqueSize:
    """A dynamic size that no _FloorChain or _ProductSize states (a sum of
    sizes): equal only to itself, so values inherit it as they are."""


@dataclasses.dataclass(frozen=True)
class _ProductSize:
    """A dynamic size that is `scale` times the product of two chains' sizes
    (a flatten's B*T rows), its factors in a canonical order: named in
    ``size_symbols`` as ``s0*s1`` or ``2*s0*(s1-1)``."""
    factors: Tuple[_FloorChain, _FloorChain]
    scale: int = 1

    @staticmethod
    def of(x: _FloorChain, y: _FloorChain, scale: int) -> "_ProductSize":
        return _ProductSize(tuple(sorted((x, y), key=_FloorChain.text)), scale)

    def evaluate(self, values: Dict[str, int]) -> int:
        x, y = self.factors
        return self.scale * x.evaluate(values[x.symbol]) * y.evaluate(values[y.symbol])

    def text(self) -> str:
        """The product as `size_symbols` writes it (fx::parseSizeExpression):
        each factor parenthesized unless it is a symbol."""
        factors = [f.text() if not f.steps else f"({f.text()})" for f in self.factors]
        return "*".join(([str(self.scale)] if self.scale != 1 else []) + factors)


_SizeTerm = Union[_FloorChain, _ProductSize, _OpaqueSize]


def _is_linear_in_one(x: _FloorChain, y: _FloorChain) -> bool:
    """Whether x + y is linear in one symbol, a chain that fits states."""
    return x.symbol == y.symbol and all(step[0] == "affine" for step in x.steps + y.steps)


def _window_counts(node: torch.fx.Node, shape_of: Callable[[torch.fx.Node], Sequence[int]]
                   ) -> Optional[Tuple[List[List[Tuple[Any, ...]]], int, bool]]:
    """For an op whose result's trailing spatial sizes a window or a scale
    computes from its first operand's (a convolution, pooling, upsampling
    by integer factors): each spatial dimension's size as _FloorChain steps
    over the operand's, the number of spatial dimensions, and whether the
    count rounds up (pooling's ``ceil_mode``, whose count also steps back
    where the last window would start in the padding: no chain states it);
    None for other ops."""
    target = node.target
    ceil_mode = False
    if target is aten.convolution.default:
        stride, padding, dilation, transposed, output_padding = (
            _argument(node, name) for name in
            ("stride", "padding", "dilation", "transposed", "output_padding"))
        kernel = list(shape_of(_argument(node, "weight"))[2:])
        if transposed:
            return [[("affine", s, -s - 2 * p + d * (k - 1) + o + 1)]
                    for k, s, p, d, o in zip(kernel, stride, padding, dilation,
                                             output_padding)], len(kernel), False
    elif target in _POOLING_WINDOWS:
        spatial = _POOLING_WINDOWS[target]
        names = [a.name for a in target._schema.arguments]
        bound = {a.name: a.default_value for a in target._schema.arguments
                 if a.has_default_value()}
        bound.update(zip(names, node.args))
        bound.update(node.kwargs)
        ceil_mode = bool(bound.get("ceil_mode"))

        def expand(values: Any, default: int) -> List[int]:
            values = list(values) if values else [default] * spatial
            return values * spatial if len(values) == 1 else values

        kernel = expand(bound["kernel_size"], 1)
        stride = expand(bound.get("stride"), 0) if bound.get("stride") else kernel
        padding, dilation = expand(bound.get("padding"), 0), expand(bound.get("dilation"), 1)
    elif target in _UPSAMPLINGS:
        # floor(s * f) is exact in doubles for a factor p / q with a small
        # power of two q (2, 1.5, 0.25): (p * s) // q.
        factors = [fractions.Fraction(float(f)) for f in _argument(node, "scale_factors") or ()]
        if not factors or any(f <= 0 or f.denominator > 1024 for f in factors):
            return None
        return [[("affine", f.numerator, 0)] + ([("floordiv", f.denominator)]
                                                 if f.denominator > 1 else [])
                for f in factors], len(factors), False
    else:
        return None
    return [[("affine", 1, 2 * p - d * (k - 1) - 1), ("floordiv", s), ("affine", 1, 1)]
            for k, s, p, d in zip(kernel, stride, padding, dilation)], len(kernel), ceil_mode


# Pooling ops whose window counts _window_counts states, by spatial rank.
_POOLING_WINDOWS = {
    aten.max_pool2d_with_indices.default: 2, aten.max_pool3d_with_indices.default: 3,
    aten.avg_pool2d.default: 2, aten.avg_pool3d.default: 3,
}
_UPSAMPLINGS = {op for op in RESAMPLING_OPS if op._overloadname == "vec"}


def _window_term(node: torch.fx.Node, dim: int, rank: int,
                 operand_term: Callable[[torch.fx.Node, int], Optional[_SizeTerm]],
                 shape_of: Callable[[torch.fx.Node], Sequence[int]]) -> Optional[_FloorChain]:
    """The size term of dimension `dim` (of `rank`) of a window op's result
    whose operand's dimension is dynamic (_window_counts), else None.
    Refuses an operand size that no _FloorChain states."""
    counts = _window_counts(node, shape_of) if node.op == "call_function" else None
    if counts is None:
        return None
    steps, spatial, ceil_mode = counts
    if dim < rank - spatial:
        return None
    term = operand_term(node.args[0], dim)
    if term is None:
        return None
    if ceil_mode:
        raise _unsupported(node, f"{_describe_op(node)} with ceil_mode on a dynamic size is "
                                 "not supported: its window count steps back where the last "
                                 "window would start in the padding; compile with static "
                                 "sizes")
    if not isinstance(term, _FloorChain):
        raise _unsupported(node, f"dimension {dim} of {_describe_op(node)} slides a window "
                                 "over a dynamic size that is not a multiple of one size "
                                 "symbol plus a constant, which Kiln's guards cannot follow; "
                                 "compile with static sizes")
    return term.then(*steps[dim - (rank - spatial)])


def _merge_dim(node: torch.fx.Node, dim: int, size_a: int, size_b: int,
               symbols: Dict[str, Tuple[int, int]], minimums: Dict[str, int],
               third_size: Callable[[], Tuple[int, Dict[str, int]]],
               divisors: Dict[str, int]) -> Tuple[Optional[int], Optional["_SizeTerm"]]:
    """A value's dimension from the two traces, and its size term where it
    is dynamic (a _FloorChain where one symbol's fit is known, else an
    _OpaqueSize): static where they agree, else
    None (dynamic) if it is ``scale * s + offset`` of one symbol s in both
    (``4 * s0`` after a flatten, ``s0 - 1`` after ``x[1:]``), with a positive
    integer scale; each symbol grows by another amount between the traces, so
    rarely more than one fits, and then only where none needs a narrower
    range; or if it is a product or a sum of two symbols' values in both (a
    matmul's ``[s0*s1, K]`` rows, a cat's ``[s0+s1]``). Where both kinds fit
    (``s0*s1`` can fit ``15*s0-60`` too), `third_size` (the size and the
    symbols' values in a third trace) tells. `minimums` receives the least
    value of the symbol that keeps the size at least 2, as a ``?`` is. A
    symbol whose values are multiples of d (`divisors`) may also scale by a
    fraction p/q with q dividing d (``s0 // 2`` in a view that halves)."""
    if size_a == size_b:
        return size_a, None
    fits = []
    for name, (value_a, value_b) in symbols.items():
        growth, delta = value_b - value_a, size_b - size_a
        divisor = divisors.get(name, 1)
        if delta * divisor % growth == 0 and delta * divisor // growth >= 1:
            numerator = delta * divisor // growth
            common = math.gcd(numerator, divisor)
            # (p * s) // q + offset: exact where q divides s.
            scale, quotient = numerator // common, divisor // common
            fits.append((name, scale, size_a - scale * value_a // quotient, quotient))
    # A product of two symbols (a matmul's rows [s0*s1, K] of a [s0, s1, K]
    # operand) or a sum (a cat of [s0] and [s1]): dynamic, at least 4, and
    # what only the operands' sizes give (element counts, the cat's parts);
    # an op that needs it named finds no name and is refused.
    names = sorted(symbols)
    combined = [(combine, x, y) for combine in (operator.mul, operator.add)
                for i, x in enumerate(names) for y in names[i:]
                if combine(symbols[x][0], symbols[y][0]) == size_a
                and combine(symbols[x][1], symbols[y][1]) == size_b]
    if fits and combined:
        size_c, values_c = third_size()
        fits = [(name, scale, offset, quotient) for name, scale, offset, quotient in fits
                if scale * values_c[name] // quotient + offset == size_c]
        combined = [(combine, x, y) for combine, x, y in combined
                    if combine(values_c[x], values_c[y]) == size_c]
    # The least value of each fitting symbol that keeps the size at least 2.
    leasts = [(name, -(-(2 - offset) * quotient // scale))
              for name, scale, offset, quotient in fits]
    if len(fits) == 1 and size_a >= 2 and not combined:
        name, least = leasts[0]
        minimums[name] = max(minimums.get(name, 2), least)
        name, scale, offset, quotient = fits[0]
        if quotient == 1:
            return None, _FloorChain(name).then(("affine", scale, offset))
        return None, _FloorChain(name).then(("affine", scale, 0), ("floordiv", quotient),
                                            ("affine", 1, offset))
    if fits and size_a >= 2 and all(least <= 2 for _, least in leasts):
        return None, _OpaqueSize()  # Whichever symbol it follows, it is at least 2.
    if combined and not fits:
        return None, _OpaqueSize()
    raise _unsupported(node, f"dimension {dim} of {_describe_op(node)} depends on the "
                             f"dynamic sizes in a way the guards cannot express "
                             f"(size {size_a}, then {size_b} with other input sizes); "
                             "only a multiple of one size symbol plus a constant, or a "
                             "product or sum of two, can be dynamic")


# The size term of each dynamic dimension and its sizes in the two traces:
# (node, result, dim) -> (term, size a, size b).
_SizeTerms = Dict[Tuple[torch.fx.Node, int, int], Tuple[_SizeTerm, int, int]]


def _merge_types(gm_a: torch.fx.GraphModule, types_a: Dict, gm_b: torch.fx.GraphModule,
                 types_b: Dict, symbols: Dict[str, Tuple[int, int]],
                 minimums: Dict[str, int],
                 third_trace: Callable[[], Tuple[Dict, Dict[str, int]]],
                 terms: Optional[_SizeTerms] = None,
                 divisors: Optional[Dict[str, int]] = None) -> Dict:
    """Each value's type of trace a, dynamic where it differs from trace b
    (_merge_dim_term, which fills `minimums` and may ask for `third_trace`:
    _name_size_symbols says what it returns); `terms` receives the size
    terms. `divisors` holds the symbols whose values are multiples of one."""
    merged = {}
    terms = {} if terms is None else terms

    def operand_term(operand: Any, dim: int) -> Optional[_SizeTerm]:
        entry = terms.get((operand, 0, dim)) if isinstance(operand, torch.fx.Node) else None
        return entry[0] if entry else None

    for node_a, node_b in zip(gm_a.graph.nodes, gm_b.graph.nodes):
        type_a, type_b = types_a.get(node_a), types_b.get(node_b)
        if isinstance(type_a, SymbolicIntType) and type_a != type_b:
            merged[node_a] = SymbolicIntType()  # Computed at run time.
            continue
        if not isinstance(type_a, (TensorType, tuple)):
            merged[node_a] = type_a
            continue
        pairs = zip(type_a, type_b) if isinstance(type_a, tuple) else [(type_a, type_b)]
        results = []
        for a, b in pairs:
            if a is None or b is None or len(a.shape) != len(b.shape) or a.dtype != b.dtype:
                if a is None and b is None:
                    results.append(None)
                    continue
                raise _unsupported(node_a, f"the type of {_describe_op(node_a)} depends on "
                                           "the dynamic sizes beyond its sizes")

            def third_size(dim: int, result: int = len(results)) -> Tuple[int, Dict[str, int]]:
                trace_c = third_trace()
                types_c, values_c = trace_c.types, trace_c.values
                type_c = types_c.get(node_a)
                type_c = type_c[result] if isinstance(type_c, tuple) else type_c
                return type_c.shape[dim], values_c

            shape = []
            for d, (x, y) in enumerate(zip(a.shape, b.shape)):
                size, term = _merge_dim_term(
                    node_a, len(results), d, len(a.shape), x, y, symbols, minimums,
                    functools.partial(third_size, d), operand_term,
                    _operand_terms(node_a, terms),
                    lambda n: types_a[n].shape, terms, divisors or {})
                shape.append(size)
                if term is not None:
                    terms[(node_a, len(results), d)] = (term, x, y)
            results.append(TensorType(tuple(shape), a.dtype))
        merged[node_a] = tuple(results) if isinstance(type_a, tuple) else results[0]
    return merged


def _operand_terms(node: torch.fx.Node,
                   terms: Dict[Tuple[torch.fx.Node, int, int], Tuple[_SizeTerm, int, int]]
                   ) -> List[Tuple[_SizeTerm, int, int]]:
    """The size terms of the dynamic dimensions of `node`'s tensor operands,
    each with its sizes in the two traces."""
    operands = {n for n in pytree.tree_flatten((node.args, node.kwargs))[0]
                if isinstance(n, torch.fx.Node)}
    return [entry for (operand, result, _), entry in terms.items()
            if operand in operands and result == 0]


def _distinct_on_multiples(chains: List[_FloorChain],
                           divisors: Dict[str, int]) -> List[_FloorChain]:
    """`chains` less those that agree with a shorter one on every multiple of
    their symbol's divisor. A chain is linear up to a term periodic in its
    symbol, with a period dividing the product of its floor divisors, so two
    that agree over two such periods of multiples agree on all of them."""
    distinct: List[_FloorChain] = []
    for chain in sorted(chains, key=lambda c: len(c.steps)):
        divisor = divisors.get(chain.symbol, 1)
        def agrees(other: _FloorChain) -> bool:
            period = math.lcm(*(math.prod(step[1] for step in c.steps if step[0] == "floordiv")
                                for c in (chain, other)))
            return divisor > 1 and other.symbol == chain.symbol and period <= 4096 and all(
                chain.evaluate(divisor * q) == other.evaluate(divisor * q)
                for q in range(1, 2 * period + 2))
        if not any(agrees(other) for other in distinct):
            distinct.append(chain)
    return distinct


def _merge_dim_term(node: torch.fx.Node, result: int, dim: int, rank: int, size_a: int,
                    size_b: int, symbols: Dict[str, Tuple[int, int]],
                    minimums: Dict[str, int],
                    third_size: Callable[[], Tuple[int, Dict[str, int]]],
                    operand_term: Callable[[Any, int], Optional[_SizeTerm]],
                    operand_terms: List[Tuple[_SizeTerm, int, int]],
                    shape_of: Callable[[torch.fx.Node], Sequence[int]],
                    terms: _SizeTerms, divisors: Dict[str, int]
                    ) -> Tuple[Optional[int], Optional[_SizeTerm]]:
    """A value's dimension from the two traces and its size term
    (_merge_dim's), from what its operands' sizes say first:

    * a strided window's count over a dynamic size (_window_term) is
      dynamic (refused where the traces count alike: its readers would take
      it for static), and its symbol must keep it at least 2;
    * a size that is ``k * t + c`` of an operand's term t in both traces is
      that term's chain, or t itself where k = 1 and c = 0 (an opaque term
      is only ever itself). Where different terms fit, a third trace tells;
      where they still do, the operands' sizes agree for the traces' sizes
      only (a skip connection around a strided window), and the graph is
      refused, unless they agree on every multiple of their symbol's
      divisor (`divisors`; a U-Net's).

    Otherwise _merge_dim fits the symbols' values."""
    window = _window_term(node, dim, rank, operand_term, shape_of) if result == 0 or \
        node.target in _POOLING_WINDOWS else None
    if window is not None:
        values_a = {name: pair[0] for name, pair in symbols.items()}
        values_b = {name: pair[1] for name, pair in symbols.items()}
        if (window.evaluate(values_a[window.symbol]), window.evaluate(values_b[window.symbol])) \
                != (size_a, size_b):
            raise KilnImportError(f"internal error: dimension {dim} of {_describe_op(node)} "
                                  f"is {size_a}, then {size_b}, not the window count "
                                  f"{window}")
        if size_a == size_b:
            # Its readers would take it for static.
            raise _unsupported(node, f"dimension {dim} of {_describe_op(node)} counts "
                                     f"{size_a} windows in both traces, though its input's "
                                     "size is dynamic: compile with larger example sizes")
        minimums[window.symbol] = max(minimums.get(window.symbol, 2), window.least(2))
        return None, window
    if size_a == size_b:
        return size_a, None
    symbol = _symbol_valued(symbols, (size_a, size_b))
    if node.op == "placeholder" and symbol is not None:
        return None, _FloorChain(symbol)
    def in_third_trace(terms: List[_SizeTerm]) -> List[_SizeTerm]:
        """`terms` less the chains that the third trace's size refutes."""
        size_c, values_c = third_size()
        return [term for term in terms if isinstance(term, _OpaqueSize)
                or (term.evaluate(values_c[term.symbol]) if isinstance(term, _FloorChain)
                    else term.evaluate(values_c)) == size_c]

    def keep_at_least_2(chain: _FloorChain) -> None:
        minimums[chain.symbol] = max(minimums.get(chain.symbol, 2), chain.least(2))

    # An operand's size as it is (an elementwise op's, a concatenation's
    # other dimensions).
    same = []
    for term, operand_a, operand_b in operand_terms:
        if (operand_a, operand_b) == (size_a, size_b) and term not in same:
            same.append(term)
    if len(same) > 1:
        # Chains that differ are sizes that differ somewhere; an opaque term
        # says less than a chain, and may be any of them.
        same = in_third_trace(same)
        chains = _distinct_on_multiples(
            [term for term in same if isinstance(term, _FloorChain)], divisors)
        if len(chains) > 1:
            raise _unsupported(node, f"dimension {dim} of {_describe_op(node)} joins sizes of "
                                     "its operands that agree for the traced sizes only (such "
                                     "as a skip connection around a strided window); compile "
                                     "with static sizes")
        same = chains or same
    if same:
        return None, same[0]
    # A multiple of one plus a constant (a slice's, a padding's, a
    # repeat's): several chains may fit by chance, as symbols grow by
    # similar amounts; then the size stays dynamic, kept at least 2
    # whichever it follows, but unnamed.
    fits: List[_FloorChain] = []
    for term, operand_a, operand_b in operand_terms:
        if not isinstance(term, _FloorChain) or operand_a == operand_b \
                or (size_b - size_a) % (operand_b - operand_a) \
                or (size_b - size_a) // (operand_b - operand_a) < 1:
            continue
        scale = (size_b - size_a) // (operand_b - operand_a)
        fit = term.then(("affine", scale, size_a - scale * operand_a))
        if fit not in fits:
            fits.append(fit)
    # A product or a sum of two sizes (a flatten's, a concatenation's), of
    # the operands or the symbols: a chain may fit it by chance too.
    chains = [(term, operand_a, operand_b) for term, operand_a, operand_b in operand_terms
              if isinstance(term, _FloorChain)]
    chains += [(_FloorChain(name), value_a, value_b)
               for name, (value_a, value_b) in symbols.items()]
    # An op that states its sizes names them after its term.
    named = aten_target(node) in _NAMED_SIZE_OPS
    if named:
        # It may take them from anywhere in the graph (the count of a loss
        # over x[:, 1:], B*(T-1)).
        chains += list({term: (term, term_a, term_b) for term, term_a, term_b in terms.values()
                        if isinstance(term, _FloorChain) and term.steps}.values())
    def scale_of(combine: Callable, x_a: int, y_a: int, x_b: int, y_b: int) -> int:
        """k where the size is k times the product (a group norm's [N, G,
        C/G * H * W]), 1 for a sum; 0 if it is neither."""
        if combine is operator.add:
            return int(x_a + y_a == size_a and x_b + y_b == size_b)
        scale = size_a // (x_a * y_a) if x_a * y_a > 0 else 0
        return scale if scale * x_a * y_a == size_a and scale * x_b * y_b == size_b else 0

    combined = [(combine, x, y, scale) for combine in (operator.mul, operator.add)
                for i, (x, x_a, x_b) in enumerate(chains) for y, y_a, y_b in chains[i:]
                for scale in [scale_of(combine, x_a, y_a, x_b, y_b)]
                if scale and not (combine is operator.add and _is_linear_in_one(x, y))]
    distinct = {(combine, *sorted((x, y), key=_FloorChain.text), scale)
                for combine, x, y, scale in combined}
    if len(fits) > 1 or (fits and combined) or len(distinct) > 1:
        fits = in_third_trace(fits)
        if combined:
            size_c, values_c = third_size()
            combined = [(combine, x, y, scale) for combine, x, y, scale in combined
                        if scale * combine(x.evaluate(values_c[x.symbol]),
                                           y.evaluate(values_c[y.symbol])) == size_c]
    # What two traces fit, a third must confirm where it names a size (the
    # sizes of windows of stride 4 fit other chains at two sizes).
    if named and fits:
        fits = in_third_trace(fits)
    for fit in fits:
        keep_at_least_2(fit)
    if len(fits) == 1 and not combined:
        return None, fits[0]
    # One product (of chains, or of a chain and a symbol, which may be the
    # same chain twice) names the size: ``s0*s1``.
    products = {_ProductSize.of(x, y, scale) for combine, x, y, scale in combined
                if combine is operator.mul}
    if named and products:
        products = set(in_third_trace(list(products)))
    if not fits and len(products) == 1 and all(c is operator.mul for c, *_ in combined):
        return None, products.pop()
    if fits or any(combine is operator.mul and (x.divides() or y.divides())
                   for combine, x, y, _ in combined):
        return None, _OpaqueSize()
    # An op that states its sizes (an expand back over pooled sizes, in a
    # mean's gradient; a resampling to another map's size) may take a
    # window count that no operand has.
    if named:
        counts = []
        for term, term_a, term_b in terms.values():
            if isinstance(term, _FloorChain) and term.divides() \
                    and (term_a, term_b) == (size_a, size_b) and term not in counts:
                counts.append(term)
        counts = in_third_trace(counts) if counts else counts
        if len(counts) == 1:
            return None, counts[0]
    return _merge_dim(node, dim, size_a, size_b, symbols, minimums, third_size, divisors)


def _symbol_valued(symbols: Dict[str, Tuple[int, int]], values: Tuple[Any, Any]
                   ) -> Optional[str]:
    """The size symbol whose values in the two traces are `values`, if any."""
    return next((name for name, pair in symbols.items() if pair == values), None)


# Arguments that may be a size symbol's value: where one differs between the
# traces exactly as a symbol does, it becomes that symbol's fx.symbol_value.
_SYMBOLIC_ARGUMENTS = {
    aten.slice.Tensor: ("start", "end"),
    aten.arange.default: ("end",),
    aten.arange.start: ("end",),
    aten.arange.start_step: ("end",),
}


def _argument(node: torch.fx.Node, name: str, default: Any = None) -> Any:
    """`node`'s ATen argument `name`, positional or keyword."""
    names = [a.name for a in node.target._schema.arguments]
    index = names.index(name)
    return node.args[index] if index < len(node.args) else node.kwargs.get(name, default)


def _set_argument(node: torch.fx.Node, name: str, value: Any) -> None:
    names = [a.name for a in node.target._schema.arguments]
    index = names.index(name)
    if index < len(node.args):
        node.args = node.args[:index] + (value,) + node.args[index + 1:]
    else:
        node.kwargs = {**node.kwargs, name: value}


# The primes up to 7, which no trace's growth is a multiple of.
_SMALL_PRIMES = 2 * 3 * 5 * 7


def _growths(values: Sequence[int], taken: Set[int], least: int,
             unlike: Optional[Dict[int, int]] = None,
             divisors: Optional[Dict[int, int]] = None) -> Dict[int, int]:
    """How much a trace grows each dynamic size in `values`: by at least
    `least` (at least the largest of them, so that a size computed as s // c
    with c <= s differs between the traces, not only s), by an amount prime to 2,
    3, 5 and 7 (so that s moves to another residue modulo every stride or
    divisor a net is likely to have: traces at 16 and 32 would find a U-Net's
    2*((s+1)//2) equal to s), and each by another amount (so that sizes of
    two symbols that the first trace finds equal, as in x[1:] + y with y one
    shorter than x, grow apart unless the function relates them: then the
    trace fails). No grown size is one the inputs have, or another's. With
    `unlike` (another trace's growths), each differs from it by 2 modulo 4,
    so that three traces meet three residues modulo 4 (a window count of
    stride 4, (s+3)//4, then fits no other chain in all three). With
    `divisors`, a size whose symbol takes multiples of d only grows by d
    times such an amount: the residues are then those of s / d."""
    growth: Dict[int, int] = {}
    amount = least
    for value in values:
        divisor = divisors[value] if divisors else 1
        # A quotient of 1 would take the second size for a multiple of any
        # size that the first trace's is.
        amount = -(-max(amount, 2 * divisor) // divisor) * divisor
        while math.gcd(amount // divisor, _SMALL_PRIMES) != 1 or value + amount in taken \
                or value + amount in {v + g for v, g in growth.items()} \
                or (unlike is not None and (amount - unlike[value]) // divisor % 4 != 2):
            amount += divisor
        growth[value] = amount
        amount += 1
    return growth


_RECURRENT_FRAME = re.compile(r"kiln[\\/]recurrent\.py")


def _unrolled_hint(*traces: torch.fx.GraphModule) -> str:
    """Why two traces differ where a recurrent layer unrolled over its
    sequence (kiln.recurrent), which their node counts tell."""
    def steps(gm: torch.fx.GraphModule) -> int:
        return sum(1 for n in gm.graph.nodes
                   if _RECURRENT_FRAME.search(n.meta.get("stack_trace") or ""))
    counts = [steps(gm) for gm in traces]
    if counts[0] and len(set(counts)) > 1:
        return (" (a recurrent layer unrolls over its sequence's time steps, so the "
                "sequence length must stay static; its batch may be dynamic)")
    return ""


def _free_size_symbol(name: str, low: int, high: Optional[int], divisor: int) -> SizeSymbol:
    """A free size symbol; with a divisor, its least value a multiple."""
    if divisor == 1:
        return SizeSymbol(name, low, high)
    return SizeSymbol(name, max(2, -(-low // divisor) * divisor), high, divisor)


def _divisor_candidates(values: Sequence[int]) -> Iterator[Dict[int, int]]:
    """Divisors to try for the size symbols of `values` (by value) when the
    function fails on other sizes: 2, 4, 8, ... for each size that many
    divide (a U-Net's skip connections join s with 2*((s+1)//2), equal for
    even s only; with k poolings, multiples of 2**k), 1 for the others."""
    largest = max(v & -v for v in values)  # The largest power of two dividing one.
    divisor = 2
    while divisor <= largest:
        yield {v: math.gcd(v, divisor) for v in values}
        divisor *= 2


@dataclass(frozen=True)
class _ThirdTrace:
    """A third trace of a function with dynamic sizes: its values' types and
    nodes by the first trace's nodes, and each size symbol's value in it."""
    types: Dict[torch.fx.Node, Any]
    values: Dict[str, int]
    nodes: Dict[torch.fx.Node, torch.fx.Node]


# Nodes that _make_symbolic_arguments inserts, which the other traces lack.
_SYMBOLIC_ARGUMENT_META = "kiln_symbolic_argument"
# Arguments that may also be a multiple of a symbol plus a constant, which a
# third trace confirms: an arange's end (``arange(0, n * L, L)``, the bag
# offsets of a 2-d embedding_bag input).
_EXPRESSION_ARGUMENTS = {aten.arange.start_step, aten.arange.start, aten.arange.default}


def _make_symbolic_arguments(gm_a: torch.fx.GraphModule, gm_b: torch.fx.GraphModule,
                             symbols: Dict[str, Tuple[int, int]],
                             third_trace: Callable[[], _ThirdTrace]) -> None:
    """Replaces, in both traces, each _SYMBOLIC_ARGUMENTS argument whose values
    are a size symbol's (``pe[:x.shape[0]]``, ``arange(x.shape[1])``) by a
    SymbolValue node, which imports as the symbol's fx.symbol_value, and an
    arange's end that is ``k*s + c`` in three traces by that arithmetic on
    one."""
    for node_a, node_b in zip(list(gm_a.graph.nodes), list(gm_b.graph.nodes)):
        names = _SYMBOLIC_ARGUMENTS.get(node_a.target) if node_a.op == "call_function" \
            else None
        if not names or node_b.target is not node_a.target:
            continue
        for name in names:
            value_a, value_b = _argument(node_a, name), _argument(node_b, name)
            if value_a == value_b or not isinstance(value_a, int) \
                    or not isinstance(value_b, int):
                continue
            fit = None
            symbol = _symbol_valued(symbols, (value_a, value_b))
            if symbol is not None:
                fit = (symbol, 1, 0)
            elif node_a.target in _EXPRESSION_ARGUMENTS:
                trace_c = third_trace()
                value_c = _argument(trace_c.nodes[node_a], name)
                if isinstance(value_c, int):
                    fit = _expression_fit({s: (*symbols[s], trace_c.values[s]) for s in symbols},
                                          (value_a, value_b, value_c))
            if fit is None:
                continue
            symbol, scale, offset = fit
            for node, trace in ((node_a, 0), (node_b, 1)):
                with node.graph.inserting_before(node):
                    read = node.graph.call_function(SymbolValue(symbol, symbols[symbol][trace]),
                                                    ())
                    read.meta[_SYMBOLIC_ARGUMENT_META] = True
                    for op, constant, identity in ((operator.mul, scale, 1),
                                                   (operator.add, offset, 0)):
                        if constant != identity:
                            read = node.graph.call_function(op, (read, constant))
                            read.meta[_SYMBOLIC_ARGUMENT_META] = True
                _set_argument(node, name, read)
    gm_a.recompile()
    gm_b.recompile()


# Ops that scale by a number: a mean's gradient divides by its element
# count, a normalization's multiplies by its reciprocal.
_COUNT_SCALINGS = {aten.div.Scalar, aten.div.Tensor, aten.mul.Scalar, aten.mul.Tensor}


def _count_of(value: Any, divides: bool) -> Optional[int]:
    """The element count that scaling by `value` divides by: `value` itself
    for a division, its reciprocal for a product; None if it is none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    if divides and not float(value).is_integer():
        return None
    count = int(value) if divides else round(1 / value)
    if count < 1 or (not divides and 1 / count != value):
        return None
    return count


def _counted(node: torch.fx.Node) -> Optional[Tuple[Any, bool]]:
    """The number that may be an element count, and whether it divides: a
    scaling's (_COUNT_SCALINGS), a zero-dim fill's (nll_loss's total
    weight); None for other nodes."""
    if node.op != "call_function" or len(node.args) != 2:
        return None
    if node.target in _COUNT_SCALINGS:
        return node.args[1], node.target not in (aten.mul.Scalar, aten.mul.Tensor)
    if node.target is aten.full.default and list(node.args[0]) == []:
        return node.args[1], True
    return None


def _baked_counts(gm_a: torch.fx.GraphModule, gm_b: torch.fx.GraphModule
                  ) -> List[Tuple[torch.fx.Node, torch.fx.Node, Tuple[int, int]]]:
    """The nodes of the two traces that scale by, or fill with, an element
    count that differs between them: (node a, node b, (count a, count b))."""
    found = []
    for node_a, node_b in zip(gm_a.graph.nodes, gm_b.graph.nodes):
        counted_a, counted_b = _counted(node_a), _counted(node_b)
        if counted_a is None or counted_b is None or node_a.target is not node_b.target:
            continue
        counts = (_count_of(*counted_a), _count_of(*counted_b))
        if None not in counts and counts[0] != counts[1]:
            found.append((node_a, node_b, counts))
    return found


def _count_fit(chains: List[Tuple[_FloorChain, int, int, int]],
               counts: Tuple[int, int, int]) -> Optional[Tuple[int, Tuple[_FloorChain, ...]]]:
    """(k, chains) such that k times one size or the product of two (perhaps
    the same) is `counts` in three traces, k a positive integer, from
    `chains` (each a size term with its sizes in the three traces); None
    when none fits, or products that differ do."""
    def value(fit: Tuple[int, Tuple[_FloorChain, ...]], at: Dict[str, int]) -> int:
        return fit[0] * math.prod(chain.evaluate(at[chain.symbol]) for chain in fit[1])

    # Fits that agree at many sizes are the same count written two ways
    # (10 * s0 * s1 and s0 * (10 * s1)).
    names = sorted({chain.symbol for chain, *_ in chains})
    probes = [{name: 2 + 7919 * (i + 1) * (j + 3) % 4093 for j, name in enumerate(names)}
              for i in range(16)]
    chains = [chain for chain in chains if min(chain[1:]) >= 1]
    fits = []
    for i, (x, *x_sizes) in enumerate(chains):
        for factors in [((x, x_sizes),)] + [((x, x_sizes), (y, y_sizes))
                                            for y, *y_sizes in chains[i:]]:
            sizes = [math.prod(f[1][t] for f in factors) for t in range(3)]
            if counts[0] % sizes[0] == 0 and all(
                    counts[0] // sizes[0] * size == count for size, count in zip(sizes, counts)):
                fit = (counts[0] // sizes[0], tuple(f[0] for f in factors))
                if not any(all(value(fit, at) == value(other, at) for at in probes)
                           for other in fits):
                    fits.append(fit)
    return fits[0] if len(fits) == 1 else None


def _make_symbolic_counts(gm_a: torch.fx.GraphModule, gm_b: torch.fx.GraphModule,
                          symbols: Dict[str, Tuple[int, int]], terms: _SizeTerms,
                          types_a: Dict, third_trace: Callable[[], _ThirdTrace]) -> None:
    """Replaces, in both traces, a division by an element count of dynamic
    sizes (a mean's gradient: ``grad / (B * (T - 1))``) or a product with
    its reciprocal (a normalization's ``1 / N``) by the same arithmetic on a
    zero-dim f64 tensor of the count, and a zero-dim fill with the count
    (nll_loss's total weight) by that tensor, computed at run time from the
    size symbols: k times one dynamic size of the graph (`terms`' chains)
    or the product of two, in three traces. f64 holds the count exactly,
    and its reciprocal is what PyTorch multiplies by, rounded to the
    operand's dtype as the scalar would be (`types_a` gives the operands'
    dtypes: a zero-dim one takes the count in its own dtype, so that the
    result keeps it; 16-bit floats scale in f32, as PyTorch's scalars do).
    Counts that nothing fits, and scalings of integers, stay, for the
    comparison of the traces to refuse."""
    baked = _baked_counts(gm_a, gm_b)
    if not baked:
        return
    trace_c = third_trace()  # Before the nodes change, as it matches them.
    chains = list({term: (term, a, b, term.evaluate(trace_c.values[term.symbol]))
                   for term, a, b in terms.values() if isinstance(term, _FloorChain)}.values())
    for node_a, node_b, counts in baked:
        counted_c = _counted(trace_c.nodes[node_a])
        count_c = _count_of(*counted_c) if counted_c else None
        fit = _count_fit(chains, (*counts, count_c)) if count_c is not None else None
        scaling = node_a.target in _COUNT_SCALINGS
        operand = types_a.get(node_a.args[0]) if scaling else None
        result = types_a.get(node_a)
        if fit is None or not isinstance(operand if scaling else result, TensorType) \
                or (scaling and not operand.dtype.is_floating_point):
            continue
        scale, factors = fit
        for node, trace in ((node_a, 0), (node_b, 1)):
            _count_at_run_time(node, [factor.at(node, symbols[factor.symbol][trace])
                                      for factor in factors], scale, operand, result)
    gm_a.recompile()
    gm_b.recompile()


def _count_at_run_time(node: torch.fx.Node,
                       factors: List[Callable[[Callable[..., torch.fx.Node]], torch.fx.Node]],
                       scale: int, operand: Optional[TensorType],
                       result: Optional[TensorType]) -> None:
    """Rewrites `node` (a _counted node; a scaling of a floating `operand`,
    or a fill whose value has type `result`) to take its count from the
    product of `factors` (each builds its size's nodes) and `scale`."""
    graph = node.graph

    def add(target: Any, args: tuple, kwargs: Optional[dict] = None) -> torch.fx.Node:
        with graph.inserting_before(node):
            new = graph.call_function(target, args, kwargs or {})
        new.meta[_SYMBOLIC_ARGUMENT_META] = True
        return new

    count = None
    for factor in factors:
        size = factor(add)
        count = size if count is None else add(operator.mul, (count, size))
    if scale != 1:
        count = add(operator.mul, (count, scale))
    if node.target is aten.full.default:
        node.target, node.args = aten.scalar_tensor.default, (count,)
        node.kwargs = {"dtype": result.dtype}
        return
    # PyTorch scales 16-bit floats by a scalar in f32 (its opmath), and a
    # zero-dim operand would promote with a count in f64.
    x = node.args[0]
    narrow = operand.dtype in (torch.float16, torch.bfloat16)
    if narrow:
        x = add(aten._to_copy.default, (x,), {"dtype": torch.float32})
    if len(operand.shape) == 0:
        dtype = torch.float64 if operand.dtype == torch.float64 else torch.float32
    else:
        dtype = torch.float64
    tensor = add(aten.scalar_tensor.default, (count,), {"dtype": dtype})
    if node.target in (aten.div.Scalar, aten.div.Tensor):
        node.target, node.args = aten.div.Tensor, (x, tensor)
    else:
        node.target = aten.mul.Tensor
        node.args = (x, add(aten.reciprocal.default, (tensor,)))
    if narrow:
        with graph.inserting_after(node):
            cast = graph.call_function(aten._to_copy.default, (node,),
                                       {"dtype": operand.dtype})
        cast.meta[_SYMBOLIC_ARGUMENT_META] = True
        node.replace_all_uses_with(cast, delete_user_cb=lambda user: user is not cast)


# Ops whose `?`s a `size_symbols` attribute names: views that split
# dynamic sizes, creation ops, expand's stretched dimensions and
# resamplings to an output size.
_VIEW_TARGETS = {aten.view.default, aten._unsafe_view.default}
_NAMED_SIZE_OPS = {aten.view.default, aten._unsafe_view.default, aten.full.default,
                   aten.empty.memory_format, aten.rand.default, aten.randn.default,
                   aten.expand.default, *_UPSAMPLINGS}


def _name_size_symbols(gm_a: torch.fx.GraphModule, gm_b: torch.fx.GraphModule,
                       types_a: Dict, types_b: Dict, types: Dict,
                       symbols: Dict[str, Tuple[int, int]],
                       third_trace: Callable[[], Tuple[Dict, Dict[str, int]]],
                       terms: _SizeTerms) -> None:
    """Records, for each _NAMED_SIZE_OPS node whose every ``?`` has a name,
    those names, for its ``size_symbols``: a size symbol whose values the
    two traces show (``torch.zeros(x.shape[0], 4)`` is ``[s0, 4]``), a
    window count's chain or a product (`terms`: ``(s0+1)//2``, ``s0*s1``),
    else a
    multiple of one plus a constant that a third trace confirms
    (`third_trace`, asked only then: its types by the first trace's nodes
    and each symbol's value in it). Refuses a view whose dynamic sizes
    neither pair with its operand's in order nor have names."""
    for node_a, node_b in zip(gm_a.graph.nodes, gm_b.graph.nodes):
        merged = types.get(node_a)
        if node_a.op != "call_function" or aten_target(node_a) not in _NAMED_SIZE_OPS \
                or not isinstance(merged, TensorType) or None not in merged.shape:
            continue
        dims = [dim for dim, size in enumerate(merged.shape) if size is None]
        pairs = [(types_a[node_a].shape[dim], types_b[node_b].shape[dim]) for dim in dims]
        if aten_target(node_a) in _VIEW_TARGETS:
            # A view's dynamic dimensions pair in order unless named.
            source_a, source_b = node_a.args[0], node_b.args[0]
            source = types.get(source_a)
            if isinstance(source, TensorType) and pairs == [
                    (types_a[source_a].shape[dim], types_b[source_b].shape[dim])
                    for dim, size in enumerate(source.shape) if size is None]:
                continue
        names = [_symbol_valued(symbols, pair) for pair in pairs]
        for index, dim in enumerate(dims):
            term = terms.get((node_a, 0, dim), (None,))[0]
            if not names[index] and (isinstance(term, _ProductSize) or (
                    isinstance(term, _FloorChain) and term.divides())):
                names[index] = term.text()
        if not all(names):
            # Two traces cannot tell a multiple of a symbol (3*s0) from other
            # growth (s1*s1 fits 13*s1-36 as well); a third can.
            trace_c = third_trace()
            types_c, values_c = trace_c.types, trace_c.values
            shape_c = getattr(types_c.get(node_a), "shape", None)
            names = [name or (shape_c is not None and _expression_valued(
                {s: (*symbols[s], values_c[s]) for s in symbols},
                (*pair, shape_c[dim])))
                for name, pair, dim in zip(names, pairs, dims)]
        if all(names):
            node_a.meta[_SIZE_SYMBOLS_META] = names
        elif aten_target(node_a) in _VIEW_TARGETS and len(pairs) > 1:
            # Unnamed, its sizes would pair in order, which they do not.
            raise _unsupported(node_a, f"{_describe_op(node_a)} moves dynamic sizes that "
                                       "are not each a size symbol or a multiple of one "
                                       "plus a constant; compile with static sizes")


def _expression_fit(symbols: Dict[str, Tuple[int, int, int]],
                    values: Tuple[int, int, int]) -> Optional[Tuple[str, int, int]]:
    """(s, k, c) such that ``k*s + c`` gives `values` in three traces, k a
    positive integer and s the one size symbol whose values there are
    `symbols`'; None when no symbol fits, or more than one."""
    fits = []
    for name, (value_a, value_b, value_c) in symbols.items():
        growth, delta = value_b - value_a, values[1] - values[0]
        if delta <= 0 or delta % growth:
            continue
        scale = delta // growth
        offset = values[0] - scale * value_a
        if scale * value_c + offset == values[2]:
            fits.append((name, scale, offset))
    return fits[0] if len(fits) == 1 else None


def _expression_valued(symbols: Dict[str, Tuple[int, int, int]],
                       values: Tuple[int, int, int]) -> Optional[str]:
    """_expression_fit as size_symbols writes it (``3*s0``, ``s0-1``)."""
    fit = _expression_fit(symbols, values)
    if fit is None:
        return None
    name, scale, offset = fit
    return (name if scale == 1 else f"{scale}*{name}") + (f"{offset:+d}" if offset else "")


def _symbol_ranges(gm_a: torch.fx.GraphModule, gm_b: torch.fx.GraphModule,
                   types_a: Dict, types_b: Dict, types: Dict,
                   symbols: Dict[str, Tuple[int, int]], minimums: Dict[str, int],
                   third_trace: Callable[[], _ThirdTrace]
                   ) -> Dict[str, Tuple[int, Optional[int]]]:
    """The range each size symbol must keep for the graph's static bounds to
    mean what they meant in the traces, as Dynamo's guards would, from
    `minimums` (_merge_dim's) on: ``x[:, 3]`` on a dynamic dimension needs
    at least 4 elements, ``x[:, :8]`` and a top 8 at least 8 (their results
    are then static), ``pe[:s0]`` of a static ``pe`` of 512 rows at most 512
    (its result is then s0). Raises UnsupportedOpError for the ops that
    compare a dynamic size with a bound in a way no range of one symbol
    expresses."""
    ranges = {name: (minimums.get(name, 2), None) for name in symbols}

    def narrow(name: str, low: int = 2, high: Optional[int] = None) -> None:
        old_low, old_high = ranges[name]
        highs = [h for h in (old_high, high) if h is not None]
        ranges[name] = (max(old_low, low), min(highs) if highs else None)

    def symbol_of(node_a: torch.fx.Node, node_b: torch.fx.Node, dim: int) -> Optional[str]:
        return _symbol_valued(symbols, (types_a[node_a].shape[dim], types_b[node_b].shape[dim]))

    def refuse(node: torch.fx.Node, source: torch.fx.Node) -> UnsupportedOpError:
        return _unsupported(node, f"{_describe_op(node)} on a tensor with dynamic sizes "
                                  f"{types[source].to_mlir()} needs a relation between size "
                                  "symbols that Kiln's guards do not express; compile with "
                                  "static sizes")

    for node_a, node_b in zip(gm_a.graph.nodes, gm_b.graph.nodes):
        if node_a.op != "call_function" or node_a.target not in _SIZE_BOUNDED_OPS:
            continue
        source_a, source_b = node_a.args[0], node_b.args[0]
        operand_a, operand_b = types_a.get(source_a), types_b.get(source_b)
        if not isinstance(operand_a, TensorType):
            continue
        dynamic = [d for d, (x, y) in enumerate(zip(operand_a.shape, operand_b.shape))
                   if x != y]
        target = node_a.target
        if target is aten.slice.Tensor:
            dim = _argument(node_a, "dim", 0) % len(operand_a.shape)
            start, end = _argument(node_a, "start"), _argument(node_a, "end")
            step = _argument(node_a, "step", 1)
            if isinstance(end, torch.fx.Node):
                symbol = end.target.name
                if dim not in dynamic:
                    narrow(symbol, high=operand_a.shape[dim])
                elif symbol_of(source_a, source_b, dim) != symbol:
                    raise refuse(node_a, source_a)
                continue
            if isinstance(start, torch.fx.Node) or dim not in dynamic:
                continue
            bounds = [b for b in (start, end) if b is not None and abs(b) < _FULL_SLICE_END]
            if not any(bounds) and step == 1:
                continue  # The whole dimension.
            # The bounds clamp nowhere from the largest of them on, so the
            # result's size is linear in the symbol, as the traces saw it: a
            # static size (x[:8], x[-3:]) or the symbol plus a constant
            # (x[1:], x[:-1]), which _merge_dim keeps at least 2. A size
            # that is k*s + c (a third trace tells) needs s large enough.
            least = max([abs(b) for b in bounds] + [2])
            symbol = symbol_of(source_a, source_b, dim)
            if symbol is not None:
                narrow(symbol, low=least)
                continue
            trace_c = third_trace()
            shape_c = getattr(trace_c.types.get(source_a), "shape", None)
            fit = shape_c is not None and _expression_fit(
                {s: (*symbols[s], trace_c.values[s]) for s in symbols},
                (operand_a.shape[dim], operand_b.shape[dim], shape_c[dim]))
            if not fit:
                raise refuse(node_a, source_a)
            symbol, scale, offset = fit
            narrow(symbol, low=-(-(least - offset) // scale))
        elif target is aten.topk.default:
            dim = _argument(node_a, "dim", -1) % len(operand_a.shape)
            if dim not in dynamic:
                continue
            symbol = symbol_of(source_a, source_b, dim)
            if symbol is None:
                raise refuse(node_a, source_a)
            narrow(symbol, low=max(_argument(node_a, "k"), 2))
        elif target is aten.constant_pad_nd.default:
            continue  # Its sizes, s plus the pads, are _merge_dim's to keep >= 2.
        elif target is aten.select.int:
            dim = _argument(node_a, "dim") % len(operand_a.shape)
            if dim not in dynamic:
                continue
            symbol, index = symbol_of(source_a, source_b, dim), _argument(node_a, "index")
            if symbol is None or not isinstance(index, int):
                raise refuse(node_a, source_a)
            narrow(symbol, low=index + 1 if index >= 0 else -index)
        elif dynamic:
            raise refuse(node_a, source_a)
    return ranges


def _inputs_device(example_inputs: Sequence[Any]) -> str:
    """The device of the example inputs' tensors (the first one's), or the
    CPU without tensors."""
    for value in pytree.tree_flatten(_input_list(example_inputs))[0]:
        if isinstance(value, torch.Tensor):
            return value.device.type
    return "cpu"


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
    (by default the inputs'): ImportedGraph.seed_device.

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
    seed_device = device or _inputs_device(example_inputs)
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
                          *_lift_seed(gm_grown, device or _inputs_device(grown_inputs))]

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
    on `device` (by default the user inputs') after the constants.
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
    seed_device = device or _inputs_device(user_values)
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

