"""Kiln: a deep-learning compiler on MLIR.

This package is pure Python. It drives Kiln's command-line tools (``kiln-opt``)
in subprocesses, so it works on any Python that has the tools next to it: in a
source checkout (``build/bin``) or in an unpacked bundle (``bin``).

The importer (``kiln.importer``: ``capture``, ``import_graph``, ...) and
``kiln.compile`` need PyTorch; their names are exported here but loaded on
first use, so ``import kiln`` works without torch.
"""

import importlib
import importlib.util

from kiln.diagnostics import Diagnostic, KilnError
from kiln.tools import find_tool, run_opt

# The project's one version: CMake and the wheel read it from here.
__version__ = "0.1.0"

# Names of modules that import torch: loaded when first accessed.
_LAZY_NAMES = {
    "KilnImportError": "kiln.importer",
    "UnsupportedOpError": "kiln.importer",
    "capture": "kiln.importer",
    "check_supported": "kiln.importer",
    "import_function": "kiln.importer",
    "import_graph": "kiln.importer",
    "lift_constants": "kiln.importer",
    "is_supported": "kiln.importer",
    "compile": "kiln.compiler",
}
_IMPORTER_NAMES = tuple(_LAZY_NAMES)

__all__ = ["Diagnostic", "KilnError", "find_tool", "run_opt", "__version__"]
# `from kiln import *` loads every name in __all__: list the importer's only
# where torch is installed.
if importlib.util.find_spec("torch") is not None:
    __all__ += _IMPORTER_NAMES


def __getattr__(name):
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    raise AttributeError(f"module 'kiln' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_IMPORTER_NAMES))
