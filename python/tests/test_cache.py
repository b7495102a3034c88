"""The artifact cache's reliability: entries are verified before they are
loaded and rebuilt when they fail, an unwritable cache falls back to a
private one, and killed compiles leave neither processes nor folders."""

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kiln.cache
import kiln.compiler
from kiln.cache import open_cache, remove_stale_folders
from kiln.compiler import compile_graph_text

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.guards import GraphGuards  # noqa: E402
from kiln.runtime import Artifact  # noqa: E402

PACKAGE_ROOT = Path(kiln.__file__).resolve().parent.parent


def double_relu(x):
    return torch.relu(x) * 2


def double_sigmoid(x):
    return torch.sigmoid(x) * 2


def graph_text(fn, shape=(5, 7)):
    """fx-dialect text of `fn` on a CPU tensor of `shape`."""
    from kiln.importer import import_function

    return import_function(fn, [torch.randn(*shape)], device="cpu").text


def check_runs(path, fn, text, shape=(5, 7)):
    """The artifact at `path` computes `fn` on fresh random inputs."""
    artifact = Artifact(path, guards=GraphGuards.parse(text))
    for _ in range(2):
        x = torch.randn(*shape)
        (got,) = artifact(x)
        torch.testing.assert_close(got, fn(x))


def assert_whole(so):
    """The entry's shared object `so` is whole and as its record says."""
    record = json.loads(so.with_suffix(".json").read_text())
    assert kiln.cache.elf_problem(so) is None
    assert kiln.cache.file_digest(so) == (record["size"], record["sha256"])


def entry(cache, path_or_key):
    """The shared object and record of `path_or_key`'s entry in `cache`."""
    key = Path(path_or_key).name.split("-")[0].split(".")[0]
    return cache / f"{key}.so", cache / f"{key}.json"


def test_an_entry_is_recorded_verified_and_reused(tmp_path):
    text = graph_text(double_relu)
    path = compile_graph_text(text, cache_dir=tmp_path)
    so, record = entry(tmp_path, path)
    data = json.loads(record.read_text())
    assert data["size"] == so.stat().st_size
    assert data["sha256"] == kiln.cache.file_digest(so)[1]
    assert data["key"].startswith(so.stem) and len(data["key"]) == 64
    # What is loaded is a private link to the verified bytes.
    assert path.parent.name.startswith(f"kiln-load-{os.getpid()}-")
    assert path.read_bytes() == so.read_bytes()
    stamp = so.stat().st_mtime_ns
    again = compile_graph_text(text, cache_dir=tmp_path)
    assert again == path and so.stat().st_mtime_ns == stamp
    check_runs(again, double_relu, text)
    # The graph's source is kept beside it, and nothing else is left in the
    # cache: no temporary folders.
    assert so.with_suffix(".mlir").read_text() == text
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {so.name, record.name, so.with_suffix(".mlir").name, path.parent.name}


def test_a_truncated_artifact_is_rebuilt(tmp_path):
    text = graph_text(double_relu)
    path = compile_graph_text(text, cache_dir=tmp_path)
    so, record = entry(tmp_path, path)
    whole = so.read_bytes()
    so.write_bytes(whole[:len(whole) // 2])
    rebuilt = compile_graph_text(text, cache_dir=tmp_path)
    assert so.stat().st_size == len(whole)
    assert json.loads(record.read_text())["sha256"] == kiln.cache.file_digest(so)[1]
    check_runs(rebuilt, double_relu, text)


def corrupted_copy(source, target, corrupt):
    """A copy of cache `source` at `target` (never loaded from), its shared
    objects passed through `corrupt`."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("kiln-*"))
    for so in target.glob("*.so"):
        so.write_bytes(corrupt(so.read_bytes()))


@pytest.mark.parametrize("corrupt", [
    lambda data: data[:len(data) // 3],                       # truncated
    lambda data: os.urandom(len(data)),                       # junk, right size
    lambda data: data[:4096] + os.urandom(len(data) - 4096),  # junk after the headers
    lambda data: b"",                                         # empty
], ids=["truncated", "junk", "junk-body", "empty"])
def test_a_corrupted_artifact_is_rebuilt_not_loaded(tmp_path, corrupt):
    """In a cache that this process never loaded from (dlopen would crash,
    or fail, there)."""
    text = graph_text(double_relu)
    compile_graph_text(text, cache_dir=tmp_path / "a")
    corrupted_copy(tmp_path / "a", tmp_path / "b", corrupt)
    path = compile_graph_text(text, cache_dir=tmp_path / "b")
    so, record = entry(tmp_path / "b", path)
    assert_whole(so)
    check_runs(path, double_relu, text)


def test_an_artifact_recorded_for_another_key_is_rebuilt(tmp_path):
    relu, sigmoid = graph_text(double_relu), graph_text(double_sigmoid)
    relu_so, relu_record = entry(tmp_path, compile_graph_text(relu, cache_dir=tmp_path))
    sigmoid_so, sigmoid_record = entry(tmp_path, compile_graph_text(sigmoid, cache_dir=tmp_path))
    # Another graph of the same signature, whole and with its own record,
    # under the sigmoid's name.
    cache = tmp_path / "b"
    cache.mkdir()
    shutil.copyfile(relu_so, cache / sigmoid_so.name)
    shutil.copyfile(relu_record, cache / sigmoid_record.name)
    path = compile_graph_text(sigmoid, cache_dir=cache)
    check_runs(path, double_sigmoid, sigmoid)
    assert_whole(cache / sigmoid_so.name)
    assert json.loads((cache / sigmoid_record.name).read_text())["key"] == \
        json.loads(sigmoid_record.read_text())["key"]


def test_an_entry_without_a_record_is_rebuilt(tmp_path):
    """An older Kiln's entry, or one whose record was lost."""
    text = graph_text(double_relu)
    compile_graph_text(text, cache_dir=tmp_path / "a")
    cache = tmp_path / "b"
    cache.mkdir()
    for so in (tmp_path / "a").glob("*.so"):
        shutil.copyfile(so, cache / so.name)
    path = compile_graph_text(text, cache_dir=cache)
    assert len(list(cache.glob("*.json"))) == 1
    check_runs(path, double_relu, text)


def test_artifact_refuses_a_file_that_is_no_shared_object(tmp_path):
    junk = tmp_path / "junk.so"
    junk.write_bytes(os.urandom(4096))
    with pytest.raises(ValueError, match="not an ELF file"):
        Artifact(junk)
    whole = compile_graph_text(graph_text(double_relu), cache_dir=tmp_path).read_bytes()
    truncated = tmp_path / "truncated.so"
    truncated.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(ValueError, match="truncated"):
        Artifact(truncated)


def test_an_unwritable_cache_falls_back_to_a_private_one(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(kiln.cache, "_fallback", {})  # This test's own.
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    cache = blocker / "cache"  # Cannot be made, even by root.
    text = graph_text(double_relu)
    with caplog.at_level(logging.WARNING, logger="kiln"):
        first = compile_graph_text(text, cache_dir=cache)
        second = compile_graph_text(text, cache_dir=cache)
    warnings = [r for r in caplog.records if "not writable" in r.getMessage()]
    assert len(warnings) == 1 and str(cache) in warnings[0].getMessage()
    fallback = open_cache(cache).write_dir
    assert fallback != cache and first == second
    assert len(list(fallback.glob("*.so"))) == 1
    check_runs(second, double_relu, text)


def make_read_only(cache, monkeypatch):
    """Makes writes into `cache` fail as on a read-only file system: tests
    run as root, for whom chmod does not forbid, so mkdtemp is patched."""
    monkeypatch.setattr(kiln.cache, "_fallback", {})
    mkdtemp = kiln.cache.tempfile.mkdtemp

    def read_only(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == cache:
            raise PermissionError(13, "Read-only file system", str(dir))
        return mkdtemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(kiln.cache.tempfile, "mkdtemp", read_only)


def test_a_read_only_cache_is_still_read(tmp_path, monkeypatch, caplog):
    text = graph_text(double_relu)
    cache = tmp_path / "shared"
    compile_graph_text(text, cache_dir=cache)
    monkeypatch.setattr(kiln.cache, "_caches", {})  # As a new process.
    make_read_only(cache, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="kiln"):
        path = compile_graph_text(text, cache_dir=cache)
    assert any("not writable" in r.getMessage() for r in caplog.records)
    fallback = open_cache(cache).write_dir
    assert not list(fallback.glob("*.so"))  # Read from the shared cache.
    check_runs(path, double_relu, text)


def test_a_junk_entry_of_a_read_only_cache_is_rebuilt_privately(tmp_path, monkeypatch,
                                                                 caplog):
    text = graph_text(double_relu)
    compile_graph_text(text, cache_dir=tmp_path / "a")
    cache = tmp_path / "shared"
    corrupted_copy(tmp_path / "a", cache, lambda data: os.urandom(len(data)))
    junk = {so: so.read_bytes() for so in cache.glob("*.so")}
    make_read_only(cache, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="kiln"):
        for _ in range(2):
            check_runs(compile_graph_text(text, cache_dir=cache), double_relu, text)
    failed = [r for r in caplog.records if "fails verification" in r.getMessage()]
    assert len(failed) == 1
    assert {so: so.read_bytes() for so in cache.glob("*.so")} == junk  # Left alone.
    (rebuilt,) = open_cache(cache).write_dir.glob("*.so")
    assert_whole(rebuilt)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_chmod_read_only_cache_falls_back(tmp_path):
    text = graph_text(double_relu)
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o555)
    try:
        check_runs(compile_graph_text(text, cache_dir=cache), double_relu, text)
    finally:
        cache.chmod(0o755)


def fake_tool(folder, script):
    folder.mkdir()
    tool = folder / "kiln-compile"
    tool.write_text("#!/bin/sh\n" + script)
    tool.chmod(0o755)
    return folder


def process_gone(pid):
    """Whether `pid` is dead (gone, or a zombie that nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_parent_takes_its_compile_along(tmp_path):
    tools = fake_tool(tmp_path / "tools", 'echo $$ > "$KILN_TEST_PIDFILE.tmp"\n'
                      'mv "$KILN_TEST_PIDFILE.tmp" "$KILN_TEST_PIDFILE"\nexec sleep 60\n')
    pidfile, cache = tmp_path / "pid", tmp_path / "cache"
    program = ("import sys; sys.path.insert(0, sys.argv[1]);"
               "from kiln.compiler import compile_graph_text;"
               "compile_graph_text('fx.graph', cache_dir=sys.argv[2], tool_dir=sys.argv[3])")
    parent = subprocess.Popen([sys.executable, "-c", program, str(PACKAGE_ROOT),
                               str(cache), str(tools)],
                              env=dict(os.environ, KILN_TEST_PIDFILE=str(pidfile)))
    child = None
    try:
        deadline = time.monotonic() + 30
        while not pidfile.exists():
            assert parent.poll() is None, "the compile ended before the test killed it"
            assert time.monotonic() < deadline, "the fake kiln-compile never started"
            time.sleep(0.02)
        child = int(pidfile.read_text())
        # The compile runs in its folder, locked by the parent: not stale.
        assert remove_stale_folders(cache, age=0) == []
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while not process_gone(child):
            assert time.monotonic() < deadline, "kiln-compile outlived its parent"
            time.sleep(0.02)
        child = None
        (folder,) = cache.glob(f"kiln-compile-{parent.pid}-*")
        # A killed process's folder goes at the next use of the cache, once
        # it is old enough.
        assert remove_stale_folders(cache) == []
        old = time.time() - kiln.cache.STALE_AGE_S - 60
        os.utime(folder, (old, old))
        compile_graph_text(graph_text(double_relu), cache_dir=cache)
        assert not folder.exists()
        assert not list(cache.glob("kiln-compile-*"))
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child is not None and not process_gone(child):
            os.kill(child, signal.SIGKILL)


def test_stale_folders_go_and_live_ones_stay(tmp_path):
    old = time.time() - kiln.cache.STALE_AGE_S - 60
    ancient = time.time() - kiln.cache.UNLOCKED_STALE_AGE_S - 60

    def folder(name, when, lock=True):
        path = tmp_path / name
        path.mkdir()
        (path / "graph.mlir").write_text("")
        if lock:
            (path / "lock").write_text("")
        os.utime(path, (when, when))
        return path

    dead = folder("kiln-compile-4000001-dead", old)
    dead_load = folder("kiln-load-4000002-dead", old)
    recent = folder("kiln-compile-4000003-recent", time.time())
    legacy = folder("kiln-compile-legacy", ancient, lock=False)
    young_legacy = folder("kiln-compile-young", old, lock=False)
    live = folder(f"kiln-compile-{os.getpid()}-live", old)
    other = folder("not-kiln", ancient, lock=False)
    # A live process holds its folder's lock.
    holder = subprocess.Popen([sys.executable, "-c",
                               "import fcntl, os, sys, time\n"
                               "fd = os.open(sys.argv[1], os.O_RDWR)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                               "print('locked', flush=True)\n"
                               "time.sleep(60)\n", str(live / "lock")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        open_cache(tmp_path)  # The first use of the cache in this process.
        assert not dead.exists() and not dead_load.exists() and not legacy.exists()
        assert recent.exists() and young_legacy.exists() and live.exists()
        assert other.exists()
    finally:
        holder.kill()
        holder.wait()
    # Its process gone, its lock is free.
    assert remove_stale_folders(tmp_path, age=0) and not live.exists()


def test_failed_and_interrupted_compiles_leave_no_folder(tmp_path, monkeypatch):
    tools = fake_tool(tmp_path / "tools", 'echo "$1:1:1: error: no" >&2\nexit 1\n')
    cache = tmp_path / "cache"
    with pytest.raises(kiln.KilnError):
        compile_graph_text("fx.graph", cache_dir=cache, tool_dir=tools)
    assert not list(cache.glob("kiln-compile-*"))

    junk = fake_tool(tmp_path / "junk", 'echo junk > "$4"\n')
    with pytest.raises(kiln.KilnError, match="no loadable shared object"):
        compile_graph_text("fx.graph", cache_dir=cache, tool_dir=junk)
    assert not list(cache.glob("*.so")) and not list(cache.glob("kiln-compile-*"))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    text = graph_text(double_relu)
    monkeypatch.setattr(kiln.compiler.subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compile_graph_text(text, cache_dir=cache)
    assert not list(cache.glob("kiln-compile-*"))


def test_the_compiler_writes_its_temporary_files_in_the_compile_folder(tmp_path,
                                                                      monkeypatch):
    tools = fake_tool(tmp_path / "tools", 'echo "$TMPDIR" > "$KILN_TEST_OUT"\nexit 1\n')
    out = tmp_path / "tmpdir"
    monkeypatch.setenv("KILN_TEST_OUT", str(out))
    with pytest.raises(kiln.KilnError):
        compile_graph_text("fx.graph", cache_dir=tmp_path / "cache", tool_dir=tools)
    assert Path(out.read_text().strip()).name.startswith(f"kiln-compile-{os.getpid()}-")


def test_processes_sharing_a_cache_rebuild_a_junk_entry_together(tmp_path):
    """Several processes find the same junk entry at once: each rebuilds it
    (publishing atomically) and loads what it verified."""
    text = graph_text(double_relu)
    compile_graph_text(text, cache_dir=tmp_path / "a")
    corrupted_copy(tmp_path / "a", tmp_path / "b", lambda data: os.urandom(len(data)))
    source = tmp_path / "graph.mlir"
    source.write_text(text)
    program = ("import sys; sys.path.insert(0, sys.argv[1]);"
               "from pathlib import Path;"
               "from kiln.compiler import compile_graph_text;"
               "from kiln.runtime import Artifact;"
               "path = compile_graph_text(Path(sys.argv[3]).read_text(), cache_dir=sys.argv[2]);"
               "Artifact(path)")
    processes = [subprocess.Popen([sys.executable, "-c", program, str(PACKAGE_ROOT),
                                   str(tmp_path / "b"), str(source)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(6)]
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    cache = tmp_path / "b"
    (so,) = cache.glob("*.so")
    assert_whole(so)
    assert not list(cache.glob("kiln-compile-*"))
    # The processes' private folders went with them.
    assert not list(cache.glob("kiln-load-*"))
    check_runs(compile_graph_text(text, cache_dir=cache), double_relu, text)


def double_tanh(x):
    return torch.tanh(x) * 2


def test_the_cache_directory_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "mine"))
    assert kiln.compiler.default_cache_dir() == tmp_path / "mine"
    text = graph_text(double_relu)
    path = compile_graph_text(text)
    assert (tmp_path / "mine" / f"{path.name.split('-')[0]}.so").is_file()
    # KILN_CACHE=0: a directory of this process's own, never the shared one.
    monkeypatch.setenv("KILN_CACHE", "0")
    private = kiln.compiler.default_cache_dir()
    assert private != tmp_path / "mine" and private.is_dir()
    check_runs(compile_graph_text(graph_text(double_sigmoid)), double_sigmoid,
               graph_text(double_sigmoid))
    assert len(list((tmp_path / "mine").glob("*.so"))) == 1


def test_the_least_recently_used_entries_go_past_the_size_limit(tmp_path, monkeypatch):
    texts = {fn: graph_text(fn) for fn in (double_relu, double_sigmoid, double_tanh)}
    keys = {}
    for fn in (double_relu, double_sigmoid):
        keys[fn] = compile_graph_text(texts[fn], cache_dir=tmp_path).name.split("-")[0]
    now = time.time()
    for fn, age in ((double_relu, 100), (double_sigmoid, 50)):
        os.utime(tmp_path / f"{keys[fn]}.json", (now - age, now - age))
    # A hit marks its entry used: relu is now the most recent.
    compile_graph_text(texts[double_relu], cache_dir=tmp_path)
    sizes = {key: size for key, _, size in kiln.cache.entries(tmp_path)}
    assert [key for key, _, _ in kiln.cache.entries(tmp_path)] == \
        [keys[double_sigmoid], keys[double_relu]]
    # Room for relu's and tanh's entries, not for sigmoid's too: tanh's
    # arrival evicts sigmoid, used least recently.
    compile_graph_text(texts[double_tanh], cache_dir=tmp_path / "probe")
    ((_, _, tanh_size),) = kiln.cache.entries(tmp_path / "probe")
    limit = sizes[keys[double_relu]] + tanh_size + sizes[keys[double_sigmoid]] // 2
    monkeypatch.setenv("KILN_CACHE_MAX_MB", str(limit / 2**20))
    tanh = compile_graph_text(texts[double_tanh], cache_dir=tmp_path)
    left = {key for key, _, _ in kiln.cache.entries(tmp_path)}
    assert left == {keys[double_relu], tanh.name.split("-")[0]}
    assert not list(tmp_path.glob(f"{keys[double_sigmoid]}.*"))
    check_runs(tanh, double_tanh, texts[double_tanh])
    # An evicted entry is compiled again when asked for.
    check_runs(compile_graph_text(texts[double_sigmoid], cache_dir=tmp_path),
               double_sigmoid, texts[double_sigmoid])


def test_python_m_kiln_tells_and_clears_the_cache(tmp_path):
    compile_graph_text(graph_text(double_relu), cache_dir=tmp_path)
    (tmp_path / "failed").mkdir()
    (tmp_path / "failed" / "0123.mlir").write_text("fx.graph")

    def run(action):
        result = subprocess.run([sys.executable, "-m", "kiln", "cache", action, "--dir",
                                 str(tmp_path)], capture_output=True, text=True,
                                cwd=PACKAGE_ROOT, check=True)
        return result.stdout

    info = run("info")
    assert f"cache: {tmp_path}" in info and "entries: 1," in info
    assert "reproducers of failed compiles: 1" in info
    assert "removed 1 entries" in run("clear")
    assert not list(tmp_path.glob("*.so")) and not (tmp_path / "failed").exists()
    assert "entries: 0," in run("info")
