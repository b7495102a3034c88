"""Kiln's command line in Python:

    python -m kiln cache info     where the artifact cache is, what it holds
    python -m kiln cache clear    removes its entries and leftovers

The cache is the one kiln.compile and the backend use by default
($KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln or ~/.cache/kiln); --dir names
another.
"""

import argparse
import shutil
import sys
from pathlib import Path

from kiln.cache import entries, max_bytes, remove_entry, remove_stale_folders


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


def cache_info(directory: Path) -> int:
    listed = entries(directory)
    total = sum(size for _, _, size in listed)
    limit = max_bytes()
    print(f"cache: {directory}{'' if directory.is_dir() else ' (not made yet)'}")
    print(f"entries: {len(listed)}, {_megabytes(total)} "
          f"(limit {_megabytes(limit) if limit else 'none'}: KILN_CACHE_MAX_MB)")
    failed = directory / "failed"
    if failed.is_dir():
        print(f"reproducers of failed compiles: {len(list(failed.glob('*.mlir')))} in {failed}")
    return 0


def cache_clear(directory: Path) -> int:
    if not directory.is_dir():
        print(f"cache: {directory} does not exist; nothing to clear")
        return 0
    listed = entries(directory)
    for key, _, _ in listed:
        remove_entry(directory, key)
    shutil.rmtree(directory / "failed", ignore_errors=True)
    # Folders of compiles whose process is gone; live processes keep theirs.
    remove_stale_folders(directory, age=0.0)
    print(f"cache: removed {len(listed)} entries from {directory}")
    return 0


def main(argv=None) -> int:
    from kiln.compiler import default_cache_dir

    parser = argparse.ArgumentParser(prog="python -m kiln", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cache = commands.add_parser("cache", help="the artifact cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.add_argument("--dir", type=Path, help="the cache directory (default: Kiln's)")
    args = parser.parse_args(argv)
    directory = (args.dir or default_cache_dir()).resolve()
    return cache_info(directory) if args.action == "info" else cache_clear(directory)


if __name__ == "__main__":
    sys.exit(main())
