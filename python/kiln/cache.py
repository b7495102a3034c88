"""Kiln's on-disk artifact cache.

An entry of key ``K`` (the first 32 hex digits of the sha256 that
kiln.compiler.compile_graph_text computes from the graph text, target,
options, compiler build and host CPU) is two files in the cache directory:

* ``K.so``, the shared object;
* ``K.json``, its record: the full key, the shared object's size and sha256.

Publication is atomic: a compile writes both into its own temporary folder
and moves them in with ``os.replace`` (the shared object first), so many
processes may share a cache and compile the same graph at once; a reader
sees whole files, the old ones or the new ones.

Before anything is loaded, the entry is verified: the record must name this
key, and the shared object must have the recorded size and sha256 and be an
ELF shared object whose segments lie inside the file. An entry that fails
(no record, an unreadable one, another key's, a truncated or junk shared
object) is compiled again and replaced; it is never dlopen'ed.

What is verified is what is loaded: the entry's shared object is first
hard-linked (copied where links fail: another file system, a file of another
user) into a folder private to this process, ``kiln-load-<pid>-*``, and that
link is verified and returned. Nobody else writes there, and Kiln never
writes into a published file (it only replaces names), so a concurrent
rebuild that replaces ``K.so`` between the verification and ``dlopen``
cannot change the bytes that this process loads. The private folder is
removed when the process exits (a loaded library stays mapped).

A cache directory that cannot be created or written (read-only, say) is
still read, and new artifacts go to a private temporary cache directory
instead, removed at exit; this is logged once per directory on the ``kiln``
logger.

Each entry also keeps its source, ``K.mlir``, the fx graph it was compiled
from (for reading and for reproducing the compile by hand).

The cache holds at most ``KILN_CACHE_MAX_MB`` megabytes of entries (2048 by
default; 0: no limit): a lookup that finds an entry marks it used (its
record's modification time), and a publish that takes the cache past its
size removes the entries used least recently until it fits. A process that
finds an entry gone compiles it again. ``python -m kiln cache info`` tells
where the cache is and what it holds, ``python -m kiln cache clear`` empties
it (a running process's private folders stay).

A compile's temporary folder, ``kiln-compile-<pid>-*`` in the cache, is
removed when the compile ends, however it ends (an error, KeyboardInterrupt).
A process killed outright leaves its folders behind: each holds a ``lock``
file that its process keeps locked (``flock``) while it lives, and the first
use of a cache by a process removes the folders older than STALE_AGE_S whose
lock it can take, that is whose process is gone (the kernel drops a dead
process's locks, whatever pid namespace it ran in); folders of older Kiln
versions, without a lock, only after a day.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import logging
import os
import secrets
import shutil
import struct
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

from kiln.logs import log


# The record's format; a record of another format is rebuilt.
RECORD_FORMAT = 1
# A temporary folder of a process that is gone is removed once this old.
STALE_AGE_S = 600.0
# A temporary folder without a lock file (older Kiln versions) once this old.
UNLOCKED_STALE_AGE_S = 24 * 3600.0

# The default size of a cache, in megabytes (KILN_CACHE_MAX_MB).
DEFAULT_MAX_MB = 2048

_COMPILE_PREFIX = "kiln-compile-"
_LOAD_PREFIX = "kiln-load-"
_LOCK_NAME = "lock"
_NO_RECORD = "no record of its size and checksum"


def elf_problem(path: Union[str, Path]) -> Optional[str]:
    """Why the file at `path` is not a loadable ELF shared object (not
    ELF, not ET_DYN, program headers or loaded segments past its end: a
    truncated file), or None. Reads only the headers."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            header = file.read(64)
            if len(header) < 16 or header[:4] != b"\x7fELF":
                return "not an ELF file"
            wide, order = header[4], header[5]
            if wide not in (1, 2) or order not in (1, 2):
                return "not an ELF file (bad class or byte order)"
            end = "<" if order == 1 else ">"
            if wide == 2:
                layout, phdr_layout = end + "HHIQQQIHHHHHH", end + "IIQQQQQQ"
            else:
                layout, phdr_layout = end + "HHIIIIIHHHHHH", end + "IIIIIIII"
            need = 16 + struct.calcsize(layout)
            if len(header) < need:
                return "truncated ELF header"
            (e_type, _machine, _version, _entry, phoff, shoff, _flags, _ehsize,
             phentsize, phnum, shentsize, shnum, _shstrndx) = struct.unpack(
                layout, header[16:need])
            if e_type != 3:  # ET_DYN
                return f"not an ELF shared object (e_type {e_type})"
            if phnum == 0 or phentsize < struct.calcsize(phdr_layout):
                return "no program headers"
            if phoff + phnum * phentsize > size:
                return f"truncated: program headers end past the file's {size} bytes"
            if shoff and shoff + shnum * shentsize > size:
                return f"truncated: section headers end past the file's {size} bytes"
            file.seek(phoff)
            table = file.read(phnum * phentsize)
            for index in range(phnum):
                entry = table[index * phentsize:(index + 1) * phentsize]
                if wide == 2:
                    p_type, _pflags, offset, _vaddr, _paddr, filesz, _memsz, _align = \
                        struct.unpack(phdr_layout, entry[:struct.calcsize(phdr_layout)])
                else:
                    p_type, offset, _vaddr, _paddr, filesz, _memsz, _pflags, _align = \
                        struct.unpack(phdr_layout, entry[:struct.calcsize(phdr_layout)])
                if p_type == 1 and offset + filesz > size:  # PT_LOAD
                    return f"truncated: a segment ends past the file's {size} bytes"
    except OSError as error:
        return f"unreadable: {error}"
    return None


def file_digest(path: Union[str, Path]) -> Tuple[int, str]:
    """The size and sha256 (hex) of the file at `path`."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _verify(path: Path, size: int, sha256: str) -> Optional[str]:
    """Why the file at `path` is not the recorded shared object, or None."""
    try:
        actual = os.stat(path).st_size
    except OSError as error:
        return f"unreadable: {error}"
    if actual != size:
        return f"{actual} bytes, {size} recorded (truncated or replaced)"
    problem = elf_problem(path)
    if problem:
        return problem
    try:
        actual, digest = file_digest(path)
    except OSError as error:
        return f"unreadable: {error}"
    if actual != size or digest != sha256:
        return "its sha256 differs from the recorded one"
    return None


def _lock_folder(folder: Path) -> int:
    """Creates `folder`/lock and locks it for as long as the returned file
    descriptor stays open (the kernel unlocks it if the process dies)."""
    fd = os.open(folder / _LOCK_NAME, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def remove_stale_folders(directory: Union[str, Path], *, age: float = STALE_AGE_S,
                         unlocked_age: float = UNLOCKED_STALE_AGE_S) -> List[Path]:
    """Removes the temporary folders in cache `directory` that killed
    processes left (see the module's comment); returns them. A folder whose
    lock is held, by a live process, is never removed."""
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith((_COMPILE_PREFIX, _LOAD_PREFIX)):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        folder = Path(entry.path)
        try:
            fd = os.open(folder / _LOCK_NAME, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            # An older Kiln's folder, or one whose process has not locked it
            # yet: only a day-old one is taken for dead.
            if now - mtime >= unlocked_age:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
            continue
        except OSError:
            continue
        try:
            if now - mtime < age:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # Its process lives.
            # Removed while this process holds the lock: no one else can
            # take it for a live folder meanwhile.
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(fd)
    if removed:
        log.info("removed %d temporary folders that killed processes left in %s",
                 len(removed), directory)
    return removed


class _Private:
    """A folder private to this process, locked while it lives, removed at
    exit."""

    def __init__(self, parent: Path, prefix: str):
        self.pid = os.getpid()
        self.path = Path(tempfile.mkdtemp(prefix=f"{prefix}{self.pid}-", dir=parent))
        try:
            self._fd = _lock_folder(self.path)
        except OSError:
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        atexit.register(self.remove)

    def remove(self) -> None:
        if os.getpid() != self.pid:  # A forked child's exit: the parent's.
            return
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Cache:
    """An artifact cache directory, as this process uses it: `root` is
    read; new entries go to `write_dir`, which is `root` unless it is not
    writable (then a private temporary directory)."""

    def __init__(self, root: Path):
        self.root = root
        self.read_dirs = [root]
        self._load: Optional[_Private] = None
        self._reported: Set[Tuple[Path, str]] = set()
        try:
            root.mkdir(parents=True, exist_ok=True)
            # Creating it is this process's test of writing there.
            self._load = _Private(root, _LOAD_PREFIX)
            self.write_dir = root
        except OSError as error:
            self.write_dir = _fallback_dir()
            self.read_dirs.append(self.write_dir)
            log.warning("the artifact cache %s is not writable (%s); this process "
                        "caches artifacts in %s instead", root, error, self.write_dir)
            self._load = _Private(self.write_dir, _LOAD_PREFIX)
        remove_stale_folders(self.write_dir)

    @property
    def load_dir(self) -> Path:
        return self._load.path

    def failed_dir(self) -> Path:
        """Where reproducers of failed compiles are kept."""
        failed = self.write_dir / "failed"
        failed.mkdir(exist_ok=True)
        return failed

    def lookup(self, key: str, full_key: str) -> Optional[Path]:
        """The verified private link of the entry `key`, or None when it
        is missing or fails verification (then it should be rebuilt)."""
        for directory in self.read_dirs:
            problem = None
            # Twice: a concurrent rebuild may replace the shared object
            # between our reading of the record and of it.
            for _ in range(2):
                path, problem = self._lookup_in(directory, key, full_key)
                if path is not None:
                    return path
                if problem is None:  # Missing.
                    break
            if problem is not None:
                # An older Kiln's entries have no record: no cause for alarm.
                # Nor is a bad entry of a read-only cache found again.
                seen = (directory, key) in self._reported
                self._reported.add((directory, key))
                level = logging.INFO if problem == _NO_RECORD or seen else logging.WARNING
                log.log(level, "the cached artifact %s fails verification (%s); "
                        "compiling it again", directory / f"{key}.so", problem)
        return None

    def _lookup_in(self, directory: Path, key: str,
                   full_key: str) -> Tuple[Optional[Path], Optional[str]]:
        so = directory / f"{key}.so"
        try:
            record = json.loads((directory / f"{key}.json").read_text())
        except FileNotFoundError:
            return None, (_NO_RECORD if so.exists() else None)
        except (OSError, ValueError) as error:
            return None, f"unreadable record: {error}"
        if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
            return None, "a record of another format"
        size, sha256 = record.get("size"), record.get("sha256")
        if not isinstance(size, int) or not isinstance(sha256, str) or len(sha256) != 64:
            return None, "a malformed record"
        if record.get("key") != full_key:
            return None, f"recorded for another key ({record.get('key')!r})"
        link = self._private_link(so)
        if link is None:
            return None, "its shared object is missing"
        problem = _verify(link, size, sha256)
        if problem:
            _unlink(link)
            return None, problem
        _mark_used(directory / f"{key}.json")
        return self._name_private(link, key, sha256), None

    def _private_link(self, source: Path) -> Optional[Path]:
        """A new name in this process's load folder for the file at `source`
        (a hard link, or a copy), or None if there is none."""
        temporary = self.load_dir / f".{secrets.token_hex(8)}.so"
        try:
            os.link(source, temporary)
        except FileNotFoundError:
            return None
        except OSError:  # Another file system, protected hard links...
            try:
                shutil.copyfile(source, temporary)
            except FileNotFoundError:
                _unlink(temporary)
                return None
        return temporary

    def _name_private(self, link: Path, key: str, sha256: str) -> Path:
        # Named by content: loading one name twice loads the same bytes.
        final = self.load_dir / f"{key}-{sha256[:16]}.so"
        os.replace(link, final)
        return final

    @contextmanager
    def work_dir(self) -> Iterator[Path]:
        """A temporary folder for one compile, locked while it is in use,
        removed when the block ends, however it ends."""
        folder = Path(tempfile.mkdtemp(prefix=f"{_COMPILE_PREFIX}{os.getpid()}-",
                                       dir=self.write_dir))
        fd = None
        try:
            fd = _lock_folder(folder)
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            if fd is not None:
                os.close(fd)

    def publish(self, key: str, full_key: str, built: Path, work: Path,
                source: Optional[Path] = None) -> Path:
        """Publishes the shared object `built` (in the compile's folder
        `work`) as entry `key`, with the fx graph at `source` beside it;
        returns its verified private link."""
        problem = elf_problem(built)
        if problem:
            from kiln.diagnostics import KilnError
            raise KilnError(f"kiln-compile wrote no loadable shared object: {problem}", [], "")
        size, sha256 = file_digest(built)
        link = self._private_link(built)
        if link is None or _verify(link, size, sha256):
            raise OSError(f"cannot keep a private copy of {built}")
        private = self._name_private(link, key, sha256)
        record = work / "record.json"
        record.write_text(json.dumps({"format": RECORD_FORMAT, "key": full_key,
                                      "size": size, "sha256": sha256}))
        try:
            if source is not None:
                os.replace(source, self.write_dir / f"{key}.mlir")
            # The shared object first: a reader that sees the new record
            # sees the new shared object.
            os.replace(built, self.write_dir / f"{key}.so")
            os.replace(record, self.write_dir / f"{key}.json")
        except OSError as error:
            log.warning("cannot store the artifact in the cache %s (%s); "
                        "using it uncached", self.write_dir, error)
            return private
        evict(self.write_dir, max_bytes(), keep=key)
        return private


def max_bytes() -> int:
    """The most bytes of entries a cache keeps (KILN_CACHE_MAX_MB; 0 or
    less: no limit)."""
    value = os.environ.get("KILN_CACHE_MAX_MB", "")
    try:
        megabytes = float(value) if value else DEFAULT_MAX_MB
    except ValueError:
        log.warning("KILN_CACHE_MAX_MB=%r is not a number; keeping %d MB", value,
                    DEFAULT_MAX_MB)
        megabytes = DEFAULT_MAX_MB
    return int(megabytes * 2**20) if megabytes > 0 else 0


def _mark_used(record: Path) -> None:
    try:
        os.utime(record)
    except OSError:  # A read-only cache: its order of use stays as it was.
        pass


def entries(directory: Union[str, Path]) -> List[Tuple[str, float, int]]:
    """The cache's entries as (key, last use, bytes of all its files), the
    least recently used first. An entry is a shared object and its record;
    a shared object without one (an older Kiln's) counts as used when it
    was written."""
    directory = Path(directory)
    found: Dict[str, List] = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:
        key, dot, suffix = name.rpartition(".")
        if not dot or suffix not in ("so", "json", "mlir") or key.startswith("."):
            continue
        try:
            stat = os.stat(directory / name)
        except OSError:
            continue
        entry = found.setdefault(key, [0.0, 0, False])
        entry[1] += stat.st_size
        if suffix == "json" or (suffix == "so" and not entry[2]):
            entry[0] = stat.st_mtime
            entry[2] = entry[2] or suffix == "json"
    return sorted(((key, used, size) for key, (used, size, _) in found.items()),
                  key=lambda entry: entry[1])


def remove_entry(directory: Union[str, Path], key: str) -> None:
    """Removes entry `key`: its record first, so that no reader takes the
    shared object for a whole entry meanwhile."""
    for suffix in ("json", "so", "mlir"):
        _unlink(Path(directory) / f"{key}.{suffix}")


def evict(directory: Union[str, Path], limit: int, keep: Optional[str] = None) -> int:
    """Removes the least recently used entries of the cache at `directory`
    until its entries take at most `limit` bytes (0: no limit), never entry
    `keep`; returns how many it removed."""
    if limit <= 0:
        return 0
    listed = entries(directory)
    total = sum(size for _, _, size in listed)
    removed = 0
    for key, _, size in listed:
        if total <= limit:
            break
        if key == keep:
            continue
        remove_entry(directory, key)
        total -= size
        removed += 1
    if removed:
        log.info("removed %d least recently used artifacts from %s to keep it "
                 "under %d MB (KILN_CACHE_MAX_MB)", removed, directory, limit >> 20)
    return removed


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_lock = threading.Lock()
_caches: Dict[Tuple[int, str], Cache] = {}
_fallback: Dict[int, Path] = {}


def _after_fork() -> None:
    # Another thread may have held the lock when this process forked.
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def private_cache_dir() -> Path:
    """A cache directory of this process's own, removed at its exit (where
    KILN_CACHE=0 puts artifacts)."""
    return _fallback_dir()


def _fallback_dir() -> Path:
    """This process's private temporary cache directory (removed at exit)."""
    pid = os.getpid()
    path = _fallback.get(pid)
    if path is None:
        path = _fallback[pid] = Path(tempfile.mkdtemp(prefix=f"kiln-cache-{pid}-"))

        def remove(path=path, pid=pid):
            if os.getpid() == pid:
                shutil.rmtree(path, ignore_errors=True)
        atexit.register(remove)
    return path


def open_cache(directory: Union[str, Path]) -> Cache:
    """The Cache of `directory` for this process (made at the first use:
    falling back when the directory is not writable, removing stale
    temporary folders)."""
    root = Path(os.path.abspath(directory))
    with _lock:
        key = (os.getpid(), str(root))
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = Cache(root)
        return cache
