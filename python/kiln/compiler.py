"""Compiling PyTorch functions with Kiln: capture, import, compile, load.

Compilation runs ``kiln-compile`` in a subprocess, which dies with the
process that started it. Artifacts are cached on disk (kiln.cache), keyed by
the graph's text, the options, the compiler itself and the host CPU (code is
generated for its features), so the second compilation of the same graph
only verifies and loads a shared object.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple, Union)

import kiln
from kiln.cache import open_cache, private_cache_dir
from kiln.chips import with_device_chip
from kiln.diagnostics import KilnError, parse_diagnostics
from kiln.guards import GraphGuards
from kiln.logs import log
from kiln.runtime import Artifact
from kiln.tools import find_tool

if TYPE_CHECKING:  # kiln.options imports this module.
    from kiln.options import Options


def default_cache_dir() -> Path:
    """Where artifacts are cached: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln
    or ~/.cache/kiln. With KILN_CACHE=0 (or off, false, no), a directory of
    this process's own, removed at its exit: nothing is kept for others."""
    if os.environ.get("KILN_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
        return private_cache_dir()
    explicit = os.environ.get("KILN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "kiln"


def _pipeline_options(options: Optional[Mapping[str, Any]]) -> str:
    """kiln-cpu-pipeline options in MLIR's `key=value` form, sorted."""
    if not options:
        return ""
    parts = []
    for key in sorted(options):
        value = options[key]
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{key}={value}")
    return " ".join(parts)


def check_pipeline_options(target: str, options: Optional[Mapping[str, Any]]) -> None:
    """Raises ValueError unless `options` are options of `target`'s pipeline
    ("cpu" or "cuda"), with kiln-compile's message (which names the closest
    option to a misspelt one): a check before any capture or compile."""
    pipeline = _pipeline_options(options)
    if pipeline:
        _check_pipeline_text(str(find_tool("kiln-compile")), target, pipeline)


def pipeline_pass_options(target: str, options: Optional[Mapping[str, Any]],
                          pass_name: str) -> Dict[str, str]:
    """The options of pass `pass_name` in `target`'s pipeline with `options`,
    as kiln-compile --print-pipeline prints them (each pass option's value,
    default or given): the compiler's values, not a copy of them."""
    return dict(_pipeline_pass_options(str(find_tool("kiln-compile")), target,
                                       _pipeline_options(options), pass_name))


@functools.lru_cache(maxsize=64)
def _pipeline_pass_options(tool: str, target: str, pipeline: str,
                           pass_name: str) -> Tuple[Tuple[str, str], ...]:
    result = subprocess.run([tool, "--print-pipeline", f"--target={target}",
                             f"--pipeline-options={pipeline}"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise ValueError(result.stderr.strip().removeprefix("kiln-compile: "))
    found = re.search(re.escape(pass_name) + r"\{([^}]*)\}", result.stdout)
    if not found:
        raise ValueError(f"{target}'s pipeline has no {pass_name} with options")
    return tuple(tuple(item.split("=", 1)) for item in found.group(1).split()
                 if "=" in item)


@functools.lru_cache(maxsize=64)
def _check_pipeline_text(tool: str, target: str, pipeline: str) -> None:
    result = subprocess.run([tool, "--check-options", f"--target={target}",
                             f"--pipeline-options={pipeline}"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        message = result.stderr.strip().removeprefix("kiln-compile: ")
        raise ValueError(f"Kiln {target} pipeline options: {message}")


def _compiler_fingerprint(tool: Path) -> str:
    """Identifies the compiler build: a rebuilt kiln-compile misses the cache."""
    stat = tool.stat()
    return f"{kiln.__version__}:{tool.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


@functools.lru_cache(maxsize=None)
def _host_cpu_fingerprint() -> str:
    """Identifies the host CPU's model and features: artifacts are compiled
    for them (AVX-512 vectors, say), so a cache shared by several machines
    must not hand one machine's code to another."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            lines = cpuinfo.read().split("\n\n", 1)[0].splitlines()
    except OSError:
        return ""
    wanted = ("vendor_id", "cpu family", "model", "model name", "flags")
    return "|".join(line for line in lines if line.split(":")[0].strip() in wanted)


def torch_allows_tf32() -> bool:
    """Whether PyTorch multiplies f32 matrices on CUDA in TF32
    (``torch.backends.cuda.matmul.allow_tf32``, or a float32 matmul
    precision below "highest")."""
    try:
        import torch
    except ImportError:
        return False
    with warnings.catch_warnings():
        # Newer torch reads the flag through its fp32_precision settings and
        # may warn that the old spelling is going away.
        warnings.simplefilter("ignore")
        return bool(torch.backends.cuda.matmul.allow_tf32) or \
            torch.get_float32_matmul_precision() != "highest"


def _with_torch_tf32(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The CUDA pipeline's `options` with ``tf32-products`` on where
    PyTorch multiplies f32 matrices in TF32 and they do not say."""
    options = dict(options)
    if "tf32-products" not in options and torch_allows_tf32():
        options["tf32-products"] = True
    return options


def compile_graph_text(
    text: str,
    *,
    target: str = "cpu",
    options: Optional[Mapping[str, Any]] = None,
    cache_dir: Optional[Path] = None,
    tool_dir: Optional[Path] = None,
    extra_args: Sequence[str] = (),
) -> Path:
    """Compiles fx-dialect text into a shared object for `target` ("cpu" or
    "cuda"); returns its path. `options` are the target pipeline's options
    (for "cuda", the chip is the current device's unless they name one:
    kiln.chips; and f32 products multiply in TF32 where PyTorch's do, unless
    ``tf32-products`` says otherwise); `extra_args`, more arguments for kiln-compile (``["-O2"]``,
    ``["--mcpu=x86-64"]``, MLIR's and LLVM's own options), which are part of
    the cache key.

    The path is a verified copy (a hard link where it can) of the cache's
    entry, private to this process and removed at its exit: see kiln.cache
    for how entries are verified, rebuilt, published and cleaned up, and for
    the fallback when `cache_dir` is not writable.

    Raises KilnError with kiln-compile's diagnostics when compilation fails.
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"unknown Kiln target '{target}' (expected 'cpu' or 'cuda')")
    tool = find_tool("kiln-compile", tool_dir)
    if target == "cuda":
        options = _with_torch_tf32(with_device_chip(options))
    pipeline = _pipeline_options(options)
    if pipeline:
        _check_pipeline_text(str(tool), target, pipeline)
    extra_args = [str(arg) for arg in extra_args]
    full_key = hashlib.sha256(
        "\0".join([text, target, pipeline, _compiler_fingerprint(tool),
                   _host_cpu_fingerprint(), *extra_args]).encode()
    ).hexdigest()
    key = full_key[:32]
    debug = Path(os.environ["KILN_DEBUG_DIR"]) / key if os.environ.get("KILN_DEBUG_DIR") \
        else None
    if debug is not None:
        _write_debug_folder(debug, text, tool, target, pipeline, extra_args)
    cache = open_cache(cache_dir if cache_dir is not None else default_cache_dir())
    found = cache.lookup(key, full_key)
    if found is not None:
        log.debug("artifact %s: from the cache", key)
        if debug is not None:
            (debug / "compile.log").write_text(f"served from the cache: {found}\n")
        return found

    with cache.work_dir() as work:
        source = work / "graph.mlir"
        source.write_text(text)
        built = work / "graph.so"
        command = _compile_command(tool, str(source), target, pipeline, extra_args) + [
            "-o", str(built)]
        # kiln-compile's own temporary files (the object file) go to the
        # compile's folder, which is removed however the compile ends.
        env = dict(os.environ, TMPDIR=str(work))
        # subprocess.run kills the child if this thread is interrupted
        # (KeyboardInterrupt); _die_with_parent, if this process is killed.
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, check=False,
                                env=env, preexec_fn=_child_setup())
        log.debug("artifact %s: kiln-compile --target=%s took %.1f s", key, target,
                  time.monotonic() - start)
        if debug is not None:
            (debug / "compile.log").write_text(
                f"exit status {result.returncode}\n{result.stdout}{result.stderr}")
        if result.returncode != 0:
            # The compile's folder goes: diagnostics point into the debug
            # folder's copy of the graph, or say how to keep one.
            kept = debug / "graph.mlir" if debug is not None else None
            stderr = result.stderr.replace(
                str(source), str(kept) if kept is not None else "<kiln graph>")
            message = f"kiln-compile failed with exit code {result.returncode}"
            if kept is None:
                message += " (KILN_DEBUG_DIR=<dir> keeps the graph its lines point into)"
            diagnostics = parse_diagnostics(stderr)
            error = KilnError(message, diagnostics, stderr)
            if result.returncode < 0 or not any(d.severity == "error" for d in diagnostics):
                # A crash, or a failure that says nothing: keep what reproduces it.
                error.reproducer = _keep_reproducer(cache.failed_dir(), key, source,
                                                    result.stderr)
            raise error
        # Atomic publish: concurrent compilers of one graph both succeed.
        return cache.publish(key, full_key, built, work, source)


def _compile_command(tool: Path, source: str, target: str, pipeline: str,
                     extra_args: Sequence[str]) -> List[str]:
    """kiln-compile's command line for `source`, without its output."""
    command = [str(tool), source, f"--target={target}"]
    if pipeline:
        command.append(f"--pipeline-options={pipeline}")
    return command + list(extra_args)


def _write_debug_folder(folder: Path, text: str, tool: Path, target: str,
                        pipeline: str, extra_args: Sequence[str]) -> None:
    """What KILN_DEBUG_DIR keeps of a compile, in `folder` (named by its cache
    key): the fx source (graph.mlir), the graphs after the target's fusion
    (loop.mlir, or loop.log with the diagnostics that stopped them) and their
    kernels (fusion-report.txt), and command.sh, which compiles graph.mlir
    into graph.so there as Kiln does; compile_graph_text adds compile.log,
    what the compile printed."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.mlir").write_text(text)
    command = _compile_command(tool, "graph.mlir", target, pipeline, extra_args)
    script = folder / "command.sh"
    script.write_text("#!/bin/sh\ncd \"$(dirname \"$0\")\"\nexec " +
                      " ".join(shlex.quote(part) for part in command + ["-o", "graph.so"]) +
                      "\n")
    script.chmod(0o755)
    loop = subprocess.run(command + ["--emit=loop", "-o", "loop.mlir"], cwd=folder,
                          capture_output=True, text=True, check=False)
    if loop.returncode != 0:
        (folder / "loop.log").write_text(loop.stderr)
        return
    report = subprocess.run([str(find_tool("kiln-opt", tool.parent)), "loop.mlir",
                             "--kiln-fusion-report", "-o", os.devnull], cwd=folder,
                            capture_output=True, text=True, check=False)
    (folder / "fusion-report.txt").write_text(report.stdout + report.stderr)


_PR_SET_PDEATHSIG = 1


@functools.lru_cache(maxsize=None)
def _prctl() -> Optional[Callable]:
    """libc's prctl (Linux), looked up before any fork, or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _child_setup() -> Optional[Callable[[], None]]:
    """A preexec_fn that makes kiln-compile die with the thread that starts
    it (this process's, killed or not), or None where Linux's prctl is
    missing."""
    prctl = _prctl()
    if prctl is None:
        return None
    return functools.partial(_die_with_parent, prctl, os.getpid())


def _die_with_parent(prctl: Callable, parent: int) -> None:
    # Runs in the forked child before exec: SIGKILL when the parent dies,
    # kept across exec. A parent dead already would never send it.
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _keep_reproducer(failed: Path, key: str, source: Path, stderr: str) -> Path:
    """Copies a graph that kiln-compile failed on without an error
    diagnostic to ``<cache>/failed/<key>.mlir``, its stderr beside it."""
    kept = failed / f"{key}.mlir"
    shutil.copyfile(source, kept)
    kept.with_suffix(".log").write_text(stderr)
    return kept


class CompiledFunction:
    """A function compiled by Kiln; call it like the original."""

    def __init__(self, artifact: Artifact, graph_text: str, output_spec: Any,
                 constants: Sequence[Any] = (), seed_device: Optional[str] = None,
                 none_results: Sequence[bool] = (), input_updates: Sequence[int] = (),
                 scalar_device: Optional[str] = None):
        self.artifact = artifact
        self.graph_text = graph_text
        self.constants = list(constants)
        self.seed_device = seed_device
        self._output_spec = output_spec
        # Per flattened result, whether it is None: the artifact returns
        # the tensors only.
        self._none_results = tuple(none_results)
        # The inputs that the function writes into: the graph returns their
        # new values after the function's results (kiln.importer.capture).
        self._input_updates = tuple(input_updates)
        # Where zero-dim CPU inputs go at each call (a CUDA graph reads them
        # there), or None.
        self._scalar_device = scalar_device

    def __call__(self, *args):
        import torch.utils._pytree as pytree

        from kiln.rng import draw_seed

        if self._input_updates:
            _check_unaliased_writes(args, self._input_updates)
        # A graph with random ops samples anew at each call.
        seed = [draw_seed(self.seed_device)] if self.seed_device else []
        inputs = _scalars_to(args, self._scalar_device) if self._scalar_device else args
        results = self.artifact(*inputs, *self.constants, *seed)
        if any(self._none_results):
            tensors = iter(results)
            results = [None if none else next(tensors) for none in self._none_results]
        results = pytree.tree_unflatten(results, self._output_spec)
        if not self._input_updates:
            return results
        results, updates = results
        for index, value in zip(self._input_updates, updates):
            args[index].copy_(value)
        return results


def _memory_range(tensor) -> Tuple[int, int]:
    """The bytes [first, last) that `tensor`'s elements span (PyTorch's
    strides are never negative)."""
    if tensor.numel() == 0:
        return (0, 0)
    extent = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return (tensor.data_ptr(), tensor.data_ptr() + (extent + 1) * tensor.element_size())


def _check_unaliased_writes(args: Sequence[Any], written: Sequence[int]) -> None:
    """Raises GuardError if an input that the function writes into shares
    memory with another input: the compiled graph reads every input before
    it writes, where eager's later reads of the other would see the write."""
    import torch

    from kiln.runtime import GuardError

    ranges = [_memory_range(a) if isinstance(a, torch.Tensor) else (0, 0) for a in args]
    for index in written:
        first, last = ranges[index]
        for other, (begin, end) in enumerate(ranges):
            if other != index and first < end and begin < last and \
                    args[other].device == args[index].device:
                raise GuardError(
                    f"input {index}, which the function writes into, shares memory with "
                    f"input {other}; the compiled function reads every input before "
                    "writing, so pass separate tensors (e.g. a .clone())")


def _output_spec(gm) -> Any:
    """How the function's results nest: the graph returns them flattened."""
    import torch.utils._pytree as pytree

    output = next(n for n in gm.graph.nodes if n.op == "output")
    return pytree.tree_flatten(output.args[0])[1]


def _none_results(gm) -> Tuple[bool, ...]:
    """Per flattened result of the graph, whether it is None."""
    import torch.utils._pytree as pytree

    output = next(n for n in gm.graph.nodes if n.op == "output")
    return tuple(leaf is None for leaf in pytree.tree_flatten(output.args[0])[0])


def compile(
    fn: Callable,
    example_inputs: Sequence[Any] = (),
    *,
    device: Optional[str] = None,
    dynamic: Union[bool, Dict[int, Sequence[int]]] = False,
    options: Optional[Dict[str, Any]] = None,
    cache_dir: Optional[Path] = None,
    freeze: bool = False,
    capture: str = "make_fx",
    extra_args: Sequence[str] = (),
) -> CompiledFunction:
    """Compiles `fn` (a function or nn.Module) for inputs like `example_inputs`,
    or a ``torch.export.ExportedProgram`` (torch 2.x), whose own example
    values and dynamic shapes say what it takes (see
    kiln.importer.import_exported).

    The graph is captured with make_fx, imported into the fx dialect, compiled
    by kiln-compile for `device` ("cpu", "cuda"; by default the inputs'
    device, where zero-dim CPU tensors do not count: like PyTorch's CUDA ops,
    a CUDA graph reads them, and the result moves them to the GPU at each
    call) and loaded. The parameters, buffers and tensor constants that `fn`
    reads become inputs of the graph after the function's own, which the
    result passes at every call (see kiln.importer.lift_constants).
    `options` are Kiln's options, as the torch.compile backend takes them
    (kiln.options): here the target pipeline's options, e.g.
    ``{"openmp": False}`` on the CPU or ``{"block-size": 128}`` on the GPU
    (or the same under ``"pipeline_options"``), and ``cache_dir``; the
    backend's others are errors. They are checked before any capture.
    With `dynamic` (True: every input dimension of size 2 or more; or
    ``{flat input index: [dims]}``), those dimensions are compiled as dynamic
    sizes; see kiln.importer.import_function for what graphs allow it.

    A function that writes into its inputs (``x[0] = 0``, ``y.add_(1)``)
    is captured functionalized: the compiled function writes the inputs'
    new values into the caller's tensors after each call, as eager would
    (see kiln.importer.capture).

    With `freeze`, the parameters, buffers and tensor
    constants are frozen into the artifact instead (their values at compile
    time; see kiln.importer.freeze_constants), so that calls pass only the
    function's own inputs.

    `capture` says how: ``"make_fx"`` (kiln.importer.capture, on any
    torch), or ``"export"`` (torch 2.x: ``torch.export.export`` of `fn`, a
    module or a function, then as for an exported program; `dynamic`
    dimensions become ``Dim.AUTO``, so that the symbols, their ranges and
    their relations are Dynamo's shape environment's).

    `extra_args` are more arguments for kiln-compile (``["-O2"]``,
    ``["--mlir-print-ir-after-all"]``; see compile_graph_text).

    Calling the result checks its inputs against the dtypes and the guards
    that the importer emitted (sizes, size symbols, device) and raises
    kiln.runtime.GuardError on a mismatch.
    """
    import torch

    from kiln.importer import graph_device, import_function
    from kiln.options import Options

    parsed = Options.parse(options).for_kiln_compile(cache_dir)
    if capture not in ("make_fx", "export"):
        raise ValueError(f"capture must be 'make_fx' or 'export', not {capture!r}")
    exported = getattr(torch, "export", None)
    if capture == "export" and not isinstance(fn, getattr(exported, "ExportedProgram", ())):
        if exported is None:
            raise NotImplementedError("capture='export' needs torch.export (torch 2.x); "
                                      f"torch {torch.__version__} captures with make_fx")
        fn = _export(fn, example_inputs, dynamic)
    if exported is not None and isinstance(fn, exported.ExportedProgram):
        if freeze:
            raise NotImplementedError("freeze=True applies to functions and modules that "
                                      "kiln.compile captures with make_fx, not to exported "
                                      "programs")
        return _compile_exported(fn, device=device, options=parsed, extra_args=extra_args)
    tensors = [t for t in example_inputs if isinstance(t, torch.Tensor)]
    # A zero-dim CPU tensor is a scalar that PyTorch lets other devices' ops
    # read: it does not choose the device (graph_device).
    inputs_device = graph_device(example_inputs, single=True)
    target = torch.device(device).type if device else inputs_device
    if target not in ("cpu", "cuda"):
        raise NotImplementedError(f"Kiln compiles for 'cpu' and 'cuda', not '{target}'")
    parsed.check_pipeline(target)
    scalar_device = target if target != "cpu" and any(map(_is_cpu_scalar, tensors)) else None
    if scalar_device:
        example_inputs = _scalars_to(example_inputs, scalar_device)

    imported = import_function(fn, example_inputs, dynamic=dynamic, device=target,
                               freeze=freeze)
    text = imported.text
    path = compile_graph_text(text, target=target, options=parsed.pipeline_options,
                              cache_dir=parsed.cache_dir, extra_args=extra_args)
    artifact = Artifact(path, guards=GraphGuards.parse(text))
    return CompiledFunction(artifact, text, _output_spec(imported.gm), imported.constants,
                            imported.seed_device, _none_results(imported.gm),
                            getattr(imported.gm, "kiln_input_updates", ()), scalar_device)


def _is_cpu_scalar(value: Any) -> bool:
    """Whether `value` is a zero-dim CPU tensor."""
    import torch

    return isinstance(value, torch.Tensor) and value.dim() == 0 and value.device.type == "cpu"


def _scalars_to(inputs: Sequence[Any], device: str) -> List[Any]:
    """`inputs` with their zero-dim CPU tensors on `device`."""
    return [value.to(device) if _is_cpu_scalar(value) else value for value in inputs]


def _export(fn: Callable, example_inputs: Sequence[Any],
            dynamic: Union[bool, Dict[int, Sequence[int]]]) -> Any:
    """``torch.export.export`` of `fn` (a module, or a function wrapped in
    one) on `example_inputs`, with kiln.compile's `dynamic` dimensions as
    ``Dim.AUTO`` (a named Dim each before torch 2.5)."""
    import torch

    from kiln.importer import _dynamic_dims

    class _Function(torch.nn.Module):
        def __init__(self, function):
            super().__init__()
            self.function = function

        def forward(self, *args):
            return self.function(*args)

    module = fn if isinstance(fn, torch.nn.Module) else _Function(fn)
    shapes = None
    if dynamic:
        auto = getattr(torch.export.Dim, "AUTO", None)
        shapes = [{} for _ in example_inputs]
        for index, dim in _dynamic_dims(list(example_inputs), dynamic):
            shapes[index][dim] = auto if auto is not None else torch.export.Dim(f"d{index}_{dim}")
        shapes = [spec or None for spec in shapes]
        # The wrapper's forward takes them all as *args.
        shapes = tuple(shapes) if module is fn else {"args": tuple(shapes)}
    return torch.export.export(module, tuple(example_inputs), dynamic_shapes=shapes)


def _compile_exported(program: Any, *, device: Optional[str], options: "Options",
                      extra_args: Sequence[str] = ()) -> CompiledFunction:
    """kiln.compile of a torch.export ExportedProgram: its own example
    values give the types, its dynamic_shapes the size symbols."""
    import torch

    from kiln.importer import graph_device, import_exported

    placeholders = [n for n in program.graph_module.graph.nodes if n.op == "placeholder"]
    target = (torch.device(device).type if device
              else graph_device([n.meta.get("val") for n in placeholders]))
    options.check_pipeline(target)
    imported = import_exported(program, device=target)
    path = compile_graph_text(imported.text, target=target, options=options.pipeline_options,
                              cache_dir=options.cache_dir, extra_args=extra_args)
    artifact = Artifact(path, guards=GraphGuards.parse(imported.text))
    return CompiledFunction(artifact, imported.text,
                            imported.output_spec or _output_spec(imported.gm),
                            imported.constants, imported.seed_device,
                            _none_results(imported.gm))

