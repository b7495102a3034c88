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

Importing is a table lookup (``op_table._OPS``): one row per supported ATen overload,
naming the ``fx`` op that prints it. Anything the table does not cover raises
``UnsupportedOpError``, naming the ATen op and, when the node recorded one, the
line of user code that produced it.

The package's modules, in the order they build on each other: errors,
value_types, printer, symbols (symbolic integers, size symbols), op_table,
constants, support (checking nodes), rewrites (canonicalize), tracing
(capture), graph (import_graph), size_inference (dynamic sizes from several
traces) and functions (import_function, import_exported). This module gives
their names that the rest of Kiln, its tests and its users import.

This package imports torch; ``import kiln`` does not import it until one of
its names is used, so the rest of the kiln package works without torch.
"""

# The names that other kiln modules (backend, attention, compiler), the tests
# and users import from kiln.importer: __all__, and a few more.
from kiln.importer.constants import freeze_constants, lift_constants
from kiln.importer.errors import (KilnImportError, UnsupportedDtypeError,  # noqa: F401
                                  UnsupportedOpError, source_location)
from kiln.importer.functions import (ImportedGraph, graph_device, import_exported,
                                     import_function)
from kiln.importer.graph import (ValueInterpreter, fake_mode_of, import_graph,  # noqa: F401
                                 input_guards, running_in)
from kiln.importer.op_table import RESAMPLING_OPS, _TableOp  # noqa: F401
from kiln.importer.printer import _Printer  # noqa: F401
from kiln.importer.rewrites import (canonicalize, drop_implied_assertions,  # noqa: F401
                                    eliminate_dead_code)
from kiln.importer.size_inference import _FloorChain, _dynamic_dims  # noqa: F401
from kiln.importer.support import check_supported, is_supported
from kiln.importer.symbols import SymbolValue, SymbolicIntType, _finite_int  # noqa: F401
from kiln.importer.tracing import (DECOMPOSITIONS, as_composites, capture,  # noqa: F401
                                   efficient_attention_kernel, keeping_resampling_whole)
from kiln.importer.value_types import TensorType  # noqa: F401

__all__ = [
    "KilnImportError",
    "UnsupportedOpError",
    "UnsupportedDtypeError",
    "capture",
    "check_supported",
    "DECOMPOSITIONS",
    "graph_device",
    "ImportedGraph",
    "import_function",
    "import_exported",
    "import_graph",
    "input_guards",
    "is_supported",
    "freeze_constants",
    "lift_constants",
]

