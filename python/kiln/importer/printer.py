"""Printing MLIR text: attribute values, symbol names, the SSA names and
types of a graph's values (_Printer), and the ``dialect_resources`` section
of frozen constants.
"""

from __future__ import annotations

import math
import operator
import re
import struct
from typing import Any, Dict, Optional

import torch
import torch.fx

from kiln.importer.value_types import TensorType


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


def _is_getitem(node: Any) -> bool:
    """Whether `node` takes one result of a multi-result op."""
    return (isinstance(node, torch.fx.Node) and node.op == "call_function"
            and node.target is operator.getitem)


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
