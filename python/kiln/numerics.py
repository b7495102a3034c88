"""Checking compiled regions against PyTorch, to find the first bad op.

With the backend option ``check_numerics``, every call of a compiled region
also runs the region's ATen graph in PyTorch on the same inputs and compares
the results. A region is judged on the inputs it was given, so an error that
earlier regions made does not spread to later ones: every region reported
computes wrongly on its own, and its report names the ATen node of each bad
output and the line of the user's code that made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

import torch

from kiln.logs import log

__all__ = ["DEFAULT_TOLERANCES", "Mismatch", "NumericsError", "compare", "RegionCheck"]


# Largest error relative to the reference's largest magnitude that a region
# output may have: one region's rounding differences (reduction order,
# fused intermediates kept in f32), not a model's accumulated ones.
DEFAULT_TOLERANCES = {torch.float64: 1e-6, torch.float32: 1e-4, torch.float16: 1e-2,
                      torch.bfloat16: 2e-2}


class NumericsError(RuntimeError):
    """Raised by ``check_numerics="error"`` when a region's result differs."""


@dataclass(frozen=True)
class Mismatch:
    """How one output of a compiled region differs from PyTorch's."""

    error: float  # Largest |got - want|, relative to max |want| for floats.
    tolerance: float
    index: tuple  # Where the largest error is.
    got: float
    want: float

    def describe(self) -> str:
        return (f"relative error {self.error:.3g} (tolerance {self.tolerance:g}) at "
                f"index {list(self.index)}: {self.got:.6g} instead of {self.want:.6g}")


def compare(got: torch.Tensor, want: torch.Tensor,
            tolerance: Optional[float] = None) -> Optional[Mismatch]:
    """How `got` differs from `want` beyond `tolerance` (by default the
    dtype's, or its parts' for complex numbers; exact for integers and
    booleans), or None. NaNs must be where the reference has them."""
    if got.shape != want.shape or got.dtype != want.dtype:
        raise NumericsError(f"a result of shape {list(got.shape)} and dtype {got.dtype}, "
                            f"PyTorch's of shape {list(want.shape)} and dtype {want.dtype}")
    # Most results are bit for bit PyTorch's: nothing to measure.
    if got.numel() == 0 or torch.equal(got, want):
        return None
    if want.is_complex():
        # Each part as a float of the parts' dtype (the index gains a last
        # dimension: 0 for the real part, 1 for the imaginary one).
        got, want = torch.view_as_real(got.detach()), torch.view_as_real(want.detach())
    floating = want.is_floating_point()
    if tolerance is None:
        tolerance = DEFAULT_TOLERANCES.get(want.dtype, 0.0) if floating else 0.0
    got64, want64 = got.detach().double(), want.detach().double()
    if floating:
        # Infinities and NaNs must be where the reference has them.
        same = (got64 == want64) | (got64.isnan() & want64.isnan())
        finite = got64.isfinite() & want64.isfinite()
        difference = torch.where(finite, (got64 - want64).abs(),
                                 torch.where(same, 0.0, float("inf")))
        scale = want64.abs().where(want64.isfinite(), torch.zeros_like(want64)).max().item()
        scale = scale if scale > 0 else 1.0
    else:
        difference, scale = (got64 - want64).abs(), 1.0
    worst = int(difference.reshape(-1).argmax().item())
    error = difference.reshape(-1)[worst].item() / scale
    if error <= tolerance:
        return None
    return Mismatch(error, tolerance, _unravel(worst, want.shape), got64.reshape(-1)[worst].item(),
                    want64.reshape(-1)[worst].item())


def _unravel(flat: int, shape: Sequence[int]) -> tuple:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))


class RegionCheck:
    """Runs a compiled region (its artifact) and its ATen graph (`reference`)
    on the same inputs and compares their results, and the inputs before and
    after: logs each output that differs, and each input the artifact
    changed, once; with ``mode="error"`` raises NumericsError instead."""

    def __init__(self, reference: Callable, name: str, output_names: Sequence[str],
                 mode: str, tolerance: Optional[float] = None):
        self.reference = reference
        self.name = name
        self.output_names = list(output_names)
        self.mode = mode
        self.tolerance = tolerance
        self.reported: set = set()
        # Every difference seen: (what differs, Mismatch); tests and tools read it.
        self.mismatches: List[tuple] = []

    def run(self, artifact: Callable, args: Sequence[Any]) -> List[torch.Tensor]:
        """`artifact`'s results for `args`, after checking them."""
        with torch.no_grad():
            expected = self.reference(*args)
        expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        saved = [a.clone() if isinstance(a, torch.Tensor) else None for a in args]
        results = artifact(*args)
        for name, got, want in zip(self.output_names, results, expected):
            self._judge(name, compare(got, want, self.tolerance))
        for i, (before, after) in enumerate(zip(saved, args)):
            if before is not None:
                self._judge(f"input {i} (which it must only read)", compare(after, before, 0.0))
        return results

    def _judge(self, name: str, mismatch: Optional[Mismatch]) -> None:
        if mismatch is None:
            return
        self.mismatches.append((name, mismatch))
        message = f"{self.name}: {name} differs from PyTorch: {mismatch.describe()}"
        if self.mode == "error":
            raise NumericsError(message)
        if name not in self.reported:
            self.reported.add(name)
            log.warning("%s", message)
