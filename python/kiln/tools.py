"""Finding and running Kiln's command-line tools."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from kiln.diagnostics import KilnError, parse_diagnostics

_PACKAGE_DIR = Path(__file__).resolve().parent


def _candidate_dirs() -> Iterable[Path]:
    # Installed wheel (utils/make-wheel.sh): the tools inside the package.
    yield _PACKAGE_DIR / "_tools" / "bin"
    root = _PACKAGE_DIR.parent.parent
    # Unpacked bundle: <bundle>/python/kiln and <bundle>/bin.
    yield root / "bin"
    # Source checkout: <repo>/python/kiln and <repo>/build/bin.
    yield root / "build" / "bin"
    yield root / "build-static" / "bin"


def find_tool(name: str, tool_dir: Optional[Union[str, Path]] = None) -> Path:
    """Returns the path of Kiln tool `name` (for example ``kiln-opt``).

    Looks in `tool_dir` if given, else in $KILN_TOOLS_DIR if set (and only
    there), else in this package (a wheel's) or next to it (bundle or source
    checkout), else on PATH. Raises FileNotFoundError naming where it looked.
    """
    searched = []
    if tool_dir is None and os.environ.get("KILN_TOOLS_DIR"):
        tool_dir = os.environ["KILN_TOOLS_DIR"]
    dirs = [Path(tool_dir)] if tool_dir is not None else list(_candidate_dirs())
    for directory in dirs:
        candidate = directory / name
        searched.append(str(directory))
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    if tool_dir is None:
        on_path = shutil.which(name)
        if on_path:
            return Path(on_path)
        searched.append("PATH")
    raise FileNotFoundError(f"cannot find Kiln tool '{name}' in: {', '.join(searched)}")


def run_opt(
    source: str,
    args: Sequence[str] = (),
    *,
    filename: str = "input.mlir",
    tool_dir: Optional[Union[str, Path]] = None,
) -> str:
    """Runs ``kiln-opt`` with `args` on the IR text `source`; returns its output.

    The text is written to a temporary file named `filename` so diagnostics
    point at a file, line and column. Raises KilnError with the parsed
    diagnostics when kiln-opt fails.
    """
    tool = find_tool("kiln-opt", tool_dir)
    with tempfile.TemporaryDirectory(prefix="kiln-") as work:
        path = Path(work) / filename
        path.write_text(source)
        result = subprocess.run(
            [str(tool), str(path), *args],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise KilnError(
            f"kiln-opt failed with exit code {result.returncode}",
            parse_diagnostics(result.stderr),
            result.stderr,
        )
    return result.stdout
