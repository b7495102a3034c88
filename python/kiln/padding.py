"""Matrix products padded to aligned sizes while AOTAutograd traces.

cuBLASLt's kernels for a product whose contiguous extents are not a
multiple of 16 bytes (GPT-2's vocabulary of 50257 columns) load one element
at a time and run several times slower than for the aligned size below it;
padded rows alone do not help while the extent itself is odd. So, as
Inductor does, a large product with such a size is computed on operands
padded with zeros to the next multiple and its result sliced back:
``mm(a, b)`` becomes ``mm(pad(a), pad(b))[:m, :n]``. Done as decompositions
of ``aten.mm`` and ``aten.addmm`` while AOTAutograd traces the joint graph,
the backward's products read the padded gradient too (the slice's gradient
is a pad), the padding fuses into the kernels of the regions around it, and
a forward output that is such a slice is a view of the padded result.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import torch

aten = torch.ops.aten

__all__ = ["padded_product_decompositions"]

# Padded products multiply at least this many times (2^28: a 512 x 768 x
# 768 linear layer; padding costs a copy of each padded operand, which such
# a product amortizes).
MIN_PADDED_PRODUCT = 1 << 28

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _round_up(size: int, multiple: int) -> int:
    return (size + multiple - 1) // multiple * multiple


def _is_transposed(x: torch.Tensor) -> bool:
    """Whether matrix `x` is stored column by column (a transposed view)."""
    return x.dim() == 2 and x.stride(0) == 1 and x.stride(1) != 1


def _padded_sizes(a: torch.Tensor, b: torch.Tensor,
                  devices: Sequence[str]) -> Optional[Tuple[int, int, int]]:
    """(m, k, n) padded, for ``a @ b``, or None where nothing needs padding
    or padding would not pay."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return None
    if a.dim() != 2 or b.dim() != 2 or a.dtype != b.dtype or a.dtype not in _DTYPES:
        return None
    if a.device.type not in devices or b.device != a.device:
        return None
    sizes = (*a.shape, b.shape[1])
    if not all(type(size) is int for size in sizes):
        return None  # symbolic sizes: the guards would need padding too
    m, k, n = sizes
    if m * k * n < MIN_PADDED_PRODUCT:
        return None
    per_vector = 16 // a.element_size()
    # K is contiguous in at least one operand unless both are stored along
    # their other dimension; N is contiguous in the result; M only in a
    # transposed `a`.
    padded = (_round_up(m, per_vector) if _is_transposed(a) else m,
              _round_up(k, per_vector), _round_up(n, per_vector))
    return None if padded == (m, k, n) else padded


def _pad(x: torch.Tensor, rows: int, columns: int) -> torch.Tensor:
    """Matrix `x` with zero rows and columns added up to the given sizes,
    stored as `x` is (row by row, or column by column)."""
    extra_rows, extra_columns = rows - x.shape[0], columns - x.shape[1]
    if extra_rows == 0 and extra_columns == 0:
        return x
    if _is_transposed(x):
        return aten.constant_pad_nd(aten.t(x), [0, extra_rows, 0, extra_columns]).t()
    return aten.constant_pad_nd(x, [0, extra_columns, 0, extra_rows])


def _slice(result: torch.Tensor, m: int, n: int) -> torch.Tensor:
    if result.shape[0] != m:
        result = aten.slice(result, 0, 0, m)
    if result.shape[1] != n:
        result = aten.slice(result, 1, 0, n)
    return result


def padded_product_decompositions(
        devices: Sequence[str] = ("cuda",),
        others: Optional[Mapping[Any, Callable]] = None) -> Dict[Any, Callable]:
    """Decompositions of ``aten.mm`` and ``aten.addmm`` that pad large
    products on `devices` to sizes of whole 16-byte vectors; the rest they
    leave to the decomposition of the op in `others`, if any, or to PyTorch
    (NotImplemented)."""
    others = others or {}

    def otherwise(op: Any, *args: Any, **kwargs: Any) -> Any:
        other = others.get(op)
        return NotImplemented if other is None else other(*args, **kwargs)

    def mm(a: torch.Tensor, b: torch.Tensor) -> Any:
        padded = _padded_sizes(a, b, devices)
        if padded is None:
            return otherwise(aten.mm.default, a, b)
        mp, kp, np_ = padded
        product = aten.mm(_pad(a, mp, kp), _pad(b, kp, np_))
        return _slice(product, a.shape[0], b.shape[1])

    def addmm(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *,
              beta: Any = 1, alpha: Any = 1) -> Any:
        padded = _padded_sizes(a, b, devices)
        # A bias along the result's columns (nn.Linear's) pads with them.
        if padded is None or not isinstance(bias, torch.Tensor) or \
                bias.dim() != 1 or bias.shape[0] != b.shape[1]:
            return otherwise(aten.addmm.default, bias, a, b, beta=beta, alpha=alpha)
        mp, kp, np_ = padded
        if np_ != bias.shape[0]:
            bias = aten.constant_pad_nd(bias, [0, np_ - bias.shape[0]])
        product = aten.addmm(bias, _pad(a, mp, kp), _pad(b, kp, np_),
                             beta=beta, alpha=alpha)
        return _slice(product, a.shape[0], b.shape[1])

    return {aten.mm.default: mm, aten.addmm.default: addmm}
