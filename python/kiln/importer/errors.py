"""The importer's errors, and where in the user's code a node comes from.

UnsupportedOpError names the ATen op and, when the node recorded a stack
trace, the line of user code that produced it (source_location).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Tuple

import torch
import torch.fx

from kiln.rng import aten_target


class KilnImportError(Exception):
    """The importer cannot turn a graph into ``fx`` dialect text."""


class UnsupportedOpError(KilnImportError):
    """A node uses an op, operand or value the importer does not support yet.

    Attributes:
        op: what the node does, e.g. ``aten.sin.default`` or ``get_attr``.
        node_name: the FX node's name.
        location: ``(file, line)`` of the user code that created the node,
            from its recorded stack trace, or None when it has none.
        problem: what is not supported, without the location (the same for
            every node with the same problem).
        errors: every node's error, where one error names several (a
            graph's unsupported nodes all at once); else just this one.
    """

    def __init__(self, message: str, op: str, node_name: str,
                 location: Optional[Tuple[str, int]], problem: Optional[str] = None):
        super().__init__(message)
        self.op = op
        self.node_name = node_name
        self.location = location
        self.problem = problem if problem is not None else message
        self.errors = [self]


def raise_all(errors: "list[UnsupportedOpError]") -> None:
    """Raises the one error of `errors`, or one that names them all (the
    first's `op`, `node_name` and `location`, every error in `errors`), so
    that a graph's unsupported ops show at once; nothing if it is empty."""
    if not errors:
        return
    if len(errors) == 1:
        raise errors[0]
    first = errors[0]
    combined = type(first)(f"{len(errors)} unsupported nodes: " +
                           "; ".join(str(error) for error in errors),
                           first.op, first.node_name, first.location, first.problem)
    combined.errors = list(errors)
    raise combined


class UnsupportedDtypeError(UnsupportedOpError):
    """A node's tensor has a dtype that the ``fx`` dialect does not represent."""


_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


_TORCH_DIR = Path(torch.__file__).resolve().parent


_KILN_DIR = Path(__file__).resolve().parent.parent


def _is_library_file(filename: str) -> bool:
    """Whether a stack frame is inside torch or kiln rather than user code."""
    path = Path(filename).resolve()
    return any(directory in path.parents for directory in (_TORCH_DIR, _KILN_DIR))


def source_location(node: torch.fx.Node) -> Optional[Tuple[str, int]]:
    """Returns ``(file, line)`` of the user code that created `node`.

    Reads the stack trace that tracing recorded in ``node.meta`` (innermost
    frame last, as Python prints tracebacks) and takes the innermost frame
    outside torch and kiln, else the innermost frame. None without a trace.
    """
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = [(m.group("file"), int(m.group("line"))) for m in _FRAME_RE.finditer(trace)]
    if not frames:
        return None
    user_frames = [f for f in frames if not _is_library_file(f[0])]
    return (user_frames or frames)[-1]


def _describe_op(node: torch.fx.Node) -> str:
    """Names what `node` does: the ATen overload (``aten.sin.default``), another
    callable's qualified name, or the node kind (``get_attr``)."""
    if node.op == "call_function":
        target = aten_target(node)
        if isinstance(target, torch._ops.OpOverload):
            return str(target)
        return torch.fx.node._get_qualified_name(target)  # type: ignore[arg-type]
    if node.op in ("call_module", "call_method", "get_attr"):
        return f"{node.op} {node.target}"
    return node.op


def _unsupported(node: torch.fx.Node, problem: str,
                 error: type = UnsupportedOpError) -> UnsupportedOpError:
    """Builds an error: `problem`, then where the node came from."""
    location = source_location(node)
    where = f" at {location[0]}:{location[1]}" if location else ""
    message = f"{problem}{where} (FX node '{node.name}')"
    return error(message, _describe_op(node), node.name, location, problem)
