"""Which NVIDIA chip the CUDA pipeline generates code for.

``kiln-compile --target=cuda`` builds for sm_90a (H100, H200) unless told
otherwise. Compiling from Python, Kiln builds for the GPU the process runs
on: the current CUDA device's compute capability names the chip (sm_80 for
an A100, sm_90a for an H100) and the PTX version it needs. ``chip`` (and
``features``) in the pipeline options, or ``KILN_CUDA_CHIP``, choose another.

Every artifact's fatbinary carries the PTX beside the machine code, so code
for an older chip runs on a newer one through the driver's JIT compiler: the
GPU check runs the test suite with ``KILN_CUDA_CHIP=sm_80`` on an H100.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any, Dict, Mapping, Optional, Tuple

# The least PTX ISA version that knows each chip (the PTX ISA's release
# notes). Kiln asks for no less than 8.0, which its default chip needs.
_LEAST_PTX = {
    "sm_100": 86, "sm_101": 86, "sm_103": 88, "sm_110": 90,
    "sm_120": 87, "sm_121": 88, "sm_88": 90,
}
_DEFAULT_PTX = 80
# The oldest chip CUDA 13's ptxas assembles for.
_OLDEST = (7, 5)
# A device newer than any chip named here runs the PTX of the newest
# portable one, compiled by the driver.
_NEWEST_KNOWN = (12, 1)
_PORTABLE_FALLBACK = "sm_90"
_CHIP = re.compile(r"sm_(\d+)([af]?)")


def chip_for_capability(capability: Tuple[int, int]) -> str:
    """The chip Kiln compiles for on a device of compute capability
    `capability` (major, minor)."""
    if tuple(capability) < _OLDEST:
        raise ValueError(
            f"Kiln generates code for CUDA devices of compute capability "
            f"{_OLDEST[0]}.{_OLDEST[1]} and newer, not {capability[0]}.{capability[1]}")
    if tuple(capability) > _NEWEST_KNOWN:
        return _PORTABLE_FALLBACK
    major, minor = capability
    # Hopper's wgmma and TMA need its architecture-specific target; its code
    # runs only on 9.0, which is the device at hand.
    return "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"


def ptx_features(chip: str) -> str:
    """The `features` pipeline option `chip` needs (its PTX version)."""
    match = _CHIP.fullmatch(chip)
    if match is None:
        raise ValueError(f"'{chip}' is not an NVIDIA chip name like sm_80 or sm_90a")
    version = max(_DEFAULT_PTX, _LEAST_PTX.get(f"sm_{match.group(1)}", _DEFAULT_PTX))
    return f"+ptx{version}"


@functools.lru_cache(maxsize=None)
def _device_chip(index: int) -> str:
    import torch
    return chip_for_capability(torch.cuda.get_device_capability(index))


def current_device_chip() -> Optional[str]:
    """$KILN_CUDA_CHIP, else the current CUDA device's chip; None without a
    CUDA device (compiling for CUDA on a machine that has none)."""
    chosen = os.environ.get("KILN_CUDA_CHIP", "").strip()
    if chosen:
        return chosen
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return _device_chip(torch.cuda.current_device())


def with_device_chip(options: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The CUDA pipeline's `options` with `chip` and `features` for the
    device this process runs on, where `options` name no chip; the features
    of a chip they name, where they name none."""
    options = dict(options or {})
    if "chip" not in options:
        chip = current_device_chip()
        if chip is None:
            return options
        options["chip"] = chip
    if "features" not in options:
        options["features"] = ptx_features(str(options["chip"]))
    return options
