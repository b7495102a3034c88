"""Dynamic sizes by comparing traces (import_function's `dynamic`).

make_fx of torch 1.13 traces with concrete sizes, so import_function traces
a function twice (a third time when a size needs it) on inputs whose
dynamic sizes differ, and infers each value's size as an expression of the
size symbols (_merge_types); slice bounds, aranges and element counts that
follow the symbols become run-time values (_make_symbolic_arguments,
_make_symbolic_counts), created tensors name their sizes' symbols
(_name_size_symbols), and static bounds narrow the symbols' ranges
(_symbol_ranges).
"""

from __future__ import annotations

import dataclasses
import fractions
import functools
import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import torch
import torch.fx
import torch.utils._pytree as pytree

from kiln.guards import SizeSymbol
from kiln.importer.errors import KilnImportError, UnsupportedOpError, _describe_op, _unsupported
from kiln.importer.op_table import RESAMPLING_OPS
from kiln.importer.symbols import (SymbolValue, SymbolicIntType, _SIZE_SYMBOLS_META,
                                   _SYMBOLIC_ARGUMENT_META)
from kiln.importer.tracing import _FULL_SLICE_END
from kiln.importer.value_types import TensorType
from kiln.rng import aten_target

aten = torch.ops.aten


# Ops that read their operand's sizes against static bounds (an index, a
# slice's end, k, a padding): on a dynamic dimension, slice, select and topk
# need a range of its symbol (_symbol_ranges), a constant padding only that
# its sizes stay at least 2; the others are refused.
_SIZE_BOUNDED_OPS = {
    aten.select.int, aten.slice.Tensor, aten.topk.default, aten.diagonal.default,
    aten.as_strided.default, aten.constant_pad_nd.default, aten.narrow.default,
}


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
