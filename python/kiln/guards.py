"""Shape guards: what a compiled graph assumes about its inputs.

The importer records the guards of an ``fx.graph`` (docs/Dialects/RationaleFX.md,
"Shape guards") as ``#fx.symbol`` and ``#fx.tensor_guard`` attributes; this
module holds them as Python values, prints them, parses them back from a
graph's text, and checks tensors against them, which is what the runtime does
before every call. One representation serves both ends, so the runtime checks
exactly what the importer claimed.

Kept free of torch imports (tensors are only read through ``shape``,
``stride()``, ``device`` and ``data_ptr()``), like the rest of the runtime.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

__all__ = [
    "ALIGNMENT",
    "GraphGuards",
    "GuardError",
    "SizeSymbol",
    "TensorGuard",
]

# Kiln's ABI: every buffer is 16-byte aligned (kernels use 16-byte accesses).
ALIGNMENT = 16


class GuardError(ValueError):
    """Inputs that the compiled graph was not compiled for."""


_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class SizeSymbol:
    """A size known at run time (``#fx.symbol``), with an inclusive range and
    an optional divisor. `min` is at least 2: sizes 0 and 1 are specialised.
    A symbol derived from another (`of`) equals ``scale * of + offset``."""

    name: str
    min: int = 2
    max: Optional[int] = None
    divisor: Optional[int] = None
    of: Optional[str] = None
    scale: int = 1
    offset: int = 0

    def __post_init__(self) -> None:
        if not _IDENTIFIER_RE.match(self.name):
            raise ValueError(f"size symbol name '{self.name}' is not an identifier")
        if self.min < 2:
            raise ValueError(f"size symbol '{self.name}' has min {self.min}; sizes 0 "
                             "and 1 are specialised, so a symbol's min is at least 2")
        if self.max is not None and self.max < self.min:
            raise ValueError(f"size symbol '{self.name}' has max {self.max} < min {self.min}")
        if self.divisor is not None and self.divisor <= 0:
            raise ValueError(f"size symbol '{self.name}' has divisor {self.divisor}")
        if self.of is None and (self.scale, self.offset) != (1, 0):
            raise ValueError(f"size symbol '{self.name}' has a scale or an offset but "
                             "derives from no symbol")
        if self.of is not None and (self.of == self.name or self.scale < 1):
            raise ValueError(f"size symbol '{self.name}' cannot be {self.relation()}")

    def relation(self) -> str:
        """``2*s0 + 1`` for a derived symbol; empty for a free one."""
        if self.of is None:
            return ""
        text = self.of if self.scale == 1 else f"{self.scale}*{self.of}"
        if self.offset:
            text += f" {'+' if self.offset > 0 else '-'} {abs(self.offset)}"
        return text

    def admits(self, size: int) -> bool:
        """Whether `size` is in the range and a multiple of the divisor."""
        if size < self.min or (self.max is not None and size > self.max):
            return False
        return self.divisor is None or size % self.divisor == 0

    def describe(self) -> str:
        """The range in words, e.g. ``2 <= s0 <= 64, a multiple of 8``."""
        text = f"{self.min} <= {self.name}"
        if self.max is not None:
            text += f" <= {self.max}"
        if self.divisor is not None:
            text += f", a multiple of {self.divisor}"
        return text

    def to_mlir(self) -> str:
        """Prints as ``#fx.symbol<"s0", min = 2, max = 64, divisor = 8>``."""
        fields = [f'"{self.name}"', f"min = {self.min}"]
        if self.max is not None:
            fields.append(f"max = {self.max}")
        if self.divisor is not None:
            fields.append(f"divisor = {self.divisor}")
        if self.of is not None:
            fields.append(f'of = "{self.of}"')
            if self.scale != 1:
                fields.append(f"scale = {self.scale}")
            if self.offset:
                fields.append(f"offset = {self.offset}")
        return f"#fx.symbol<{', '.join(fields)}>"


Size = Union[int, str]  # A static size, or the name of a size symbol.


@dataclass(frozen=True)
class TensorGuard:
    """What a graph assumes about one tensor argument (``#fx.tensor_guard``).

    `sizes` has one entry per dimension, an int or a symbol name. `strides`
    (None where a stride is not guarded) is None for a contiguous tensor.
    `align` is the data pointer's alignment in bytes, None for the element
    type's; `device` is ``"cpu"``, ``"cuda"`` (the current CUDA device) or
    ``"cuda:N"``, None when not guarded.
    """

    sizes: Tuple[Size, ...]
    strides: Optional[Tuple[Optional[int], ...]] = None
    align: Optional[int] = None
    device: Optional[str] = None

    def __post_init__(self) -> None:
        if self.strides is not None and len(self.strides) != len(self.sizes):
            raise ValueError(f"guard has {len(self.strides)} strides for "
                             f"{len(self.sizes)} sizes")
        if self.align is not None and (self.align <= 0 or self.align & (self.align - 1)):
            raise ValueError(f"guard alignment {self.align} is not a power of two")
        if self.device is not None and not re.fullmatch(r"cpu|cuda(:\d+)?", self.device):
            raise ValueError(f"guard device '{self.device}' is not cpu, cuda or cuda:N")

    @property
    def symbols(self) -> List[str]:
        """The symbol names of the dynamic dimensions, in order."""
        return [s for s in self.sizes if isinstance(s, str)]

    def to_mlir(self) -> str:
        """Prints as ``#fx.tensor_guard<sizes = [s0, 64], align = 16, device = "cpu">``."""
        fields = [f"sizes = [{', '.join(str(s) for s in self.sizes)}]"]
        if self.strides is not None:
            strides = ", ".join("?" if s is None else str(s) for s in self.strides)
            fields.append(f"strides = [{strides}]")
        if self.align is not None:
            fields.append(f"align = {self.align}")
        if self.device is not None:
            fields.append(f'device = "{self.device}"')
        return f"#fx.tensor_guard<{', '.join(fields)}>"


def _device_matches(guarded: str, device: Any, current_cuda: Optional[int]) -> bool:
    """Whether a tensor's torch.device `device` is the guarded one."""
    if guarded == "cpu":
        return device.type == "cpu"
    if device.type != "cuda":
        return False
    if guarded == "cuda":
        return current_cuda is None or device.index == current_cuda
    return device.index == int(guarded.split(":")[1])


@dataclass(frozen=True)
class GraphGuards:
    """The guards of one graph: its size symbols and one optional tensor
    guard per argument."""

    symbols: Tuple[SizeSymbol, ...] = ()
    arguments: Tuple[Optional[TensorGuard], ...] = ()

    def __post_init__(self) -> None:
        names = [s.name for s in self.symbols]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"size symbols defined more than once: {duplicates}")
        used = {name for guard in self.arguments if guard for name in guard.symbols}
        if used - set(names):
            raise ValueError(f"guards name undefined size symbols: {sorted(used - set(names))}")
        if set(names) - used:
            raise ValueError(f"size symbols that no guard names: {sorted(set(names) - used)}")

    def symbol(self, name: str) -> SizeSymbol:
        """The symbol called `name`."""
        return next(s for s in self.symbols if s.name == name)

    def symbols_attribute(self) -> Optional[str]:
        """``symbols = [...]`` for the graph's attribute dictionary, or None."""
        if not self.symbols:
            return None
        return f"symbols = [{', '.join(s.to_mlir() for s in self.symbols)}]"

    def check(self, tensors: Sequence[Any], *, current_cuda: Optional[int] = None,
              describe=lambda index: f"input {index}") -> Dict[str, int]:
        """Checks tensors against the argument guards; returns the symbols'
        values. Raises GuardError naming the first input that breaks a guard
        (`describe(i)` names input i). A ``device = "cuda"`` guard means the
        CUDA device `current_cuda` when given."""
        if len(tensors) != len(self.arguments):
            raise GuardError(f"expected {len(self.arguments)} inputs, got {len(tensors)}")
        bound: Dict[str, Tuple[int, int, int]] = {}  # name -> (size, input, dim)
        for index, (tensor, guard) in enumerate(zip(tensors, self.arguments)):
            if guard is None:
                continue
            if guard.device is not None and not _device_matches(guard.device, tensor.device,
                                                                current_cuda):
                expected = guard.device
                if guard.device == "cuda" and current_cuda is not None:
                    expected = f"cuda:{current_cuda}"
                raise GuardError(f"{describe(index)}: tensor is on {tensor.device}, the graph runs "
                                 f"on {expected}")
            if len(tensor.shape) != len(guard.sizes):
                raise GuardError(f"{describe(index)}: rank is {len(tensor.shape)}")
            for dim, (size, expected) in enumerate(zip(tensor.shape, guard.sizes)):
                size = int(size)
                if isinstance(expected, int):
                    if size != expected:
                        raise GuardError(f"{describe(index)}: size {size} at dimension {dim}")
                    continue
                symbol = self.symbol(expected)
                if not symbol.admits(size):
                    why = (" (sizes 0 and 1 are specialised, never dynamic)" if size < 2
                           else "")
                    raise GuardError(f"{describe(index)}: size {size} at dynamic dimension {dim} is "
                                     f"outside the guarded range {symbol.describe()}{why}")
                if expected in bound and bound[expected][0] != size:
                    other_size, other, other_dim = bound[expected]
                    raise GuardError(f"{describe(index)}: size {size} at dimension {dim} differs from "
                                     f"size {other_size} of {describe(other)} at dimension "
                                     f"{other_dim}; both are size symbol '{expected}'")
                bound.setdefault(expected, (size, index, dim))
            if guard.strides is not None:
                strides = tuple(tensor.stride())
                for dim, (stride, expected) in enumerate(zip(strides, guard.strides)):
                    if expected is not None and stride != expected and tensor.shape[dim] > 1:
                        raise GuardError(f"{describe(index)}: stride {stride} at dimension {dim}, "
                                         f"expected {expected}")
        for symbol in self.symbols:
            if symbol.of is None or symbol.name not in bound or symbol.of not in bound:
                continue
            (size, index, dim), base = bound[symbol.name], bound[symbol.of][0]
            if size != symbol.scale * base + symbol.offset:
                raise GuardError(f"{describe(index)}: size {size} at dimension {dim} is size "
                                 f"symbol '{symbol.name}' = {symbol.relation()}, which is "
                                 f"{symbol.scale * base + symbol.offset} for {symbol.of} = "
                                 f"{base}")
        return {name: value[0] for name, value in bound.items()}

    def check_layout(self, tensors: Sequence[Any],
                     describe=lambda index: f"input {index}") -> None:
        """Checks the contiguity and alignment guards of the tensors that are
        passed to the compiled code. Raises GuardError."""
        for index, (tensor, guard) in enumerate(zip(tensors, self.arguments)):
            if guard is None:
                continue
            if guard.strides is None and not tensor.is_contiguous():
                raise GuardError(f"{describe(index)}: the graph was compiled for a "
                                 "contiguous tensor")
            if guard.align is not None and tensor.data_ptr() % guard.align:
                raise GuardError(f"{describe(index)}: data is not {guard.align}-byte aligned")

    @staticmethod
    def parse(text: str, graph: str = "forward") -> "GraphGuards":
        """Reads the guards of ``fx.graph @<graph>`` from fx-dialect text (the
        importer's output or kiln-opt's). Raises ValueError when the graph is
        not in `text`."""
        header = _graph_header(text, graph)
        arguments = []
        for argument in _split_top_level(header.arguments):
            match = re.search(r"fx\.guard\s*=\s*#fx\.tensor_guard<", argument)
            if match is None:
                arguments.append(None)
                continue
            body = _balanced(argument, match.end() - 1)
            arguments.append(_parse_tensor_guard(body))
        symbols = []
        match = re.search(r"\bsymbols\s*=\s*\[", header.attributes)
        if match is not None:
            body = _balanced(header.attributes, match.end() - 1)
            for item in _split_top_level(body):
                symbols.append(_parse_symbol(item))
        return GraphGuards(tuple(symbols), tuple(arguments))


# ===----------------------------------------------------------------------=== #
# Parsing
# ===----------------------------------------------------------------------=== #


@dataclass(frozen=True)
class _Header:
    arguments: str  # Between the parentheses of the signature.
    attributes: str  # The `attributes {...}` dictionary's text, or "".


def _string_end(text: str, start: int) -> int:
    """The index after the string literal that opens at `start`."""
    i = start + 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _scan(text: str, start: int = 0) -> Iterator[Tuple[int, str, int]]:
    """(index, char, depth before the char) of the characters of `text` from
    `start`, outside string literals; depth counts (), [], {} and <>, and the
    '>' of '->' closes nothing."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char == '"':
            i = _string_end(text, i)
            continue
        if char in "([{<":
            yield i, char, depth
            depth += 1
        elif char in ")]}>" and not (char == ">" and i and text[i - 1] == "-"):
            depth -= 1
            yield i, char, depth
        else:
            yield i, char, depth
        i += 1


def _balanced(text: str, start: int) -> str:
    """The text between the bracket at `start` and its match."""
    for i, char, depth in _scan(text, start):
        if i > start and depth == 0 and char in ")]}>":
            return text[start + 1:i]
    raise ValueError(f"unbalanced {text[start]!r} in {text[start:start + 80]!r}")


def _split_top_level(text: str) -> List[str]:
    """`text` split at the commas outside brackets, stripped; [] when blank."""
    if not text.strip():
        return []
    cuts = [i for i, char, depth in _scan(text) if char == "," and depth == 0]
    bounds = zip([-1] + cuts, cuts + [len(text)])
    return [text[a + 1:b].strip() for a, b in bounds]


def _graph_header(text: str, graph: str) -> _Header:
    """The argument list and attribute dictionary of ``fx.graph @graph``."""
    quoted = re.escape(graph) if _IDENTIFIER_RE.match(graph) else re.escape(f'"{graph}"')
    match = re.search(rf"fx\.graph\s+@{quoted}\s*\(", text)
    if match is None:
        raise ValueError(f"no fx.graph @{graph} in the text")
    arguments = _balanced(text, match.end() - 1)
    rest = text[match.end() + len(arguments) + 1:]
    # The body is the first '{' outside brackets that does not open the
    # attribute dictionary.
    attributes = ""
    for i, char, depth in _scan(rest):
        if depth:
            continue
        if rest.startswith("attributes", i):
            start = rest.index("{", i)
            attributes = _balanced(rest, start)
            break
        if char == "{":
            break
    return _Header(arguments, attributes)


def _fields(body: str) -> Dict[str, str]:
    """``key = value`` fields of an attribute's struct, by key."""
    fields = {}
    for item in _split_top_level(body):
        key, _, value = item.partition("=")
        fields[key.strip()] = value.strip()
    return fields


def _parse_tensor_guard(body: str) -> TensorGuard:
    fields = _fields(body)
    sizes = tuple(int(s) if re.fullmatch(r"\d+", s) else s
                  for s in _split_top_level(fields["sizes"][1:-1]))
    strides = None
    if "strides" in fields:
        strides = tuple(None if s == "?" else int(s)
                        for s in _split_top_level(fields["strides"][1:-1]))
    align = int(fields["align"]) if "align" in fields else None
    device = fields["device"].strip('"') if "device" in fields else None
    return TensorGuard(sizes, strides, align, device)


def _parse_symbol(item: str) -> SizeSymbol:
    match = re.fullmatch(r'#fx\.symbol<\s*"([^"]*)"\s*,(.*)>', item, re.DOTALL)
    if match is None:
        raise ValueError(f"not a size symbol: {item!r}")
    fields = _fields(match.group(2))
    number = {key: int(value) for key, value in fields.items() if key != "of"}
    of = fields["of"].strip('"') if "of" in fields else None
    return SizeSymbol(match.group(1), number["min"], number.get("max"), number.get("divisor"),
                      of, number.get("scale", 1), number.get("offset", 0))
