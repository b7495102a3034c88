"""The types of the tensor values that the importer prints: PyTorch's
dtypes as MLIR element types (docs/Dialects/RationaleFX.md) and the
``tensor<...>`` type of a traced value (TensorType).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple

import torch

from kiln.dtypes import mlir_element_types


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
