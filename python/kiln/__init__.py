"""Kiln: a deep-learning compiler on MLIR.

This package is pure Python. It drives Kiln's command-line tools (``kiln-opt``)
in subprocesses, so it works on any Python that has the tools next to it: in a
source checkout (``build/bin``) or in an unpacked bundle (``bin``).
"""

from kiln.diagnostics import Diagnostic, KilnError
from kiln.tools import find_tool, run_opt

__version__ = "0.1.0"

__all__ = ["Diagnostic", "KilnError", "find_tool", "run_opt", "__version__"]
