"""Diagnostics that Kiln's tools print, parsed into structured form."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

# MLIR prints `file:line:col: severity: message`; locations that are not in a
# file (for example in bytecode) still carry the `severity:` part.
_DIAGNOSTIC_RE = re.compile(
    r"^(?:(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): )?"
    r"(?P<severity>error|warning|note|remark): (?P<message>.*)$"
)


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic: where it points and what it says."""

    severity: str
    message: str
    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        return f"{where}{self.severity}: {self.message}"


def parse_diagnostics(text: str) -> List[Diagnostic]:
    """Returns the diagnostics found in a tool's stderr, in order."""
    found = []
    for raw in text.splitlines():
        match = _DIAGNOSTIC_RE.match(raw.strip())
        if not match:
            continue
        line = match.group("line")
        col = match.group("col")
        found.append(
            Diagnostic(
                severity=match.group("severity"),
                message=match.group("message"),
                file=match.group("file"),
                line=int(line) if line else None,
                column=int(col) if col else None,
            )
        )
    return found


class KilnError(RuntimeError):
    """A Kiln tool refused its input; `diagnostics` says where and why."""

    def __init__(self, message: str, diagnostics: List[Diagnostic], output: str = ""):
        self.diagnostics = diagnostics
        self.output = output
        # Where the input that made a tool crash (or fail without an error
        # diagnostic) was kept, if it was.
        self.reproducer: Optional[Path] = None
        details = "\n".join(str(d) for d in diagnostics) or output.strip()
        super().__init__(f"{message}\n{details}" if details else message)
