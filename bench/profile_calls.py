"""Where one call of a compiled model spends its time on the GPU machine:
wall time per call next to the time the GPU is busy, the kernels that keep
it busy and the ATen ops the host dispatches, for eager, Inductor and Kiln.
A call much longer than its GPU time is the host's. For Kiln, the host time
is split: its artifact calls (the Python that checks and prepares a call,
and the native run that launches kernels and library products) and the
PyTorch ops between them.

    PYTHONPATH=python:bench python3 bench/profile_calls.py mobilenetv3_large_100 \
        [--suite extra] [--big] [--systems eager,inductor,kiln,kiln-cudagraphs] \
        [--python]

With --python, the Python functions that take the host's time in a call
(cProfile over the timed calls) follow each system's profile.

Models are bench/models.py's, at their small sizes unless --big, in bf16 on
CUDA.
"""

import argparse
import contextlib
import cProfile
import io
import pstats
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

import kiln.backend  # noqa: F401  (registers "kiln")
from kiln.runtime import Artifact
from models import SYSTEMS, compile_system, model_factories

CALLS = 30
PROFILED_CALLS = 5


def per_call_ms(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / CALLS * 1e3


@contextlib.contextmanager
def labelled_artifact_calls():
    """Marks each artifact call, and the native run inside it, as profiler
    ranges (kiln::call, kiln::run)."""
    call = Artifact.__call__

    def labelled(self, *args, **kwargs):
        run = self._run

        def labelled_run(*run_args):
            with record_function("kiln::run"):
                return run(*run_args)
        self._run = labelled_run
        try:
            with record_function("kiln::call"):
                return call(self, *args, **kwargs)
        finally:
            self._run = run

    Artifact.__call__ = labelled
    try:
        yield
    finally:
        Artifact.__call__ = call


def python_profile(fn, rows=25):
    """The Python functions with the most own time over CALLS calls, per call."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    total = stats.total_tt / CALLS * 1e3
    stats.sort_stats("tottime").print_stats(rows)
    print(f"  python profile: {total:.3f} ms per call under cProfile "
          f"(own times below are for {CALLS} calls)")
    lines = text.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), len(lines))
    for line in lines[start:]:
        if line.strip():
            print("  py " + line.rstrip()[:150])


def report(system, fn, with_python=False):
    for _ in range(3):
        fn()
    print(f"== {system}: {per_call_ms(fn):.3f} ms per call", flush=True)
    if with_python:
        python_profile(fn)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiled:
        for _ in range(PROFILED_CALLS):
            fn()
        torch.cuda.synchronize()
    events = profiled.key_averages()
    # The GPU spans of labelled ranges (kiln::call, Inductor's graph calls)
    # are not kernels: counted, they would count their kernels twice.
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA
               and not getattr(e, "is_user_annotation", False)
               and not e.key.startswith(("kiln::", "## "))]
    busy = sum(e.self_device_time_total for e in kernels) / PROFILED_CALLS / 1e3
    launches = sum(e.count for e in kernels) / PROFILED_CALLS
    print(f"  GPU busy {busy:.3f} ms in {launches:.0f} kernels per call")
    for e in sorted(kernels, key=lambda e: -e.self_device_time_total)[:12]:
        print(f"  gpu {e.key[:70]:70} {e.count / PROFILED_CALLS:6.1f}/call "
              f"{e.self_device_time_total / PROFILED_CALLS:8.1f} us/call")
    ranges = {e.key: e for e in events if e.key.startswith("kiln::")}
    if ranges:
        calls, runs = ranges.get("kiln::call"), ranges.get("kiln::run")
        total_cpu = sum(e.self_cpu_time_total for e in events
                        if e.device_type != torch.autograd.DeviceType.CUDA)
        aten = sum(e.self_cpu_time_total for e in events if e.key.startswith("aten::"))
        per = 1e3 * PROFILED_CALLS
        print(f"  host per call: {total_cpu / per:.3f} ms profiled; artifact calls "
              f"{(calls.count if calls else 0) / PROFILED_CALLS:.0f} taking "
              f"{(calls.cpu_time_total if calls else 0) / per:.3f} ms, of which native runs "
              f"{(runs.cpu_time_total if runs else 0) / per:.3f} ms; ATen ops (self) "
              f"{aten / per:.3f} ms")
    host = [e for e in events
            if e.device_type != torch.autograd.DeviceType.CUDA and e.key.startswith("aten::")]
    for e in sorted(host, key=lambda e: -e.count)[:14]:
        print(f"  cpu {e.key[:50]:50} {e.count / PROFILED_CALLS:6.1f}/call "
              f"{e.self_cpu_time_total / PROFILED_CALLS:8.1f} us/call (self)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a name of bench/models.py's models")
    parser.add_argument("--suite", default="anchors", choices=["anchors", "extra"])
    parser.add_argument("--big", action="store_true", help="the models' full sizes")
    parser.add_argument("--systems", default="eager,inductor,kiln",
                        help="comma-separated: eager, " + ", ".join(SYSTEMS))
    parser.add_argument("--python", action="store_true",
                        help="also profile the host's Python per call (cProfile)")
    args = parser.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    if not set(systems) <= {"eager", *SYSTEMS}:
        parser.error(f"unknown systems {systems}")
    model, inputs = model_factories(args.big, args.suite)[args.model]()
    model = model.cuda().to(torch.bfloat16).eval()
    inputs = [t.cuda().to(torch.bfloat16) if t.is_floating_point() else t.cuda()
              for t in inputs]
    print("inputs", [tuple(t.shape) for t in inputs])
    with torch.no_grad(), labelled_artifact_calls():
        for system in systems:
            torch._dynamo.reset()
            compiled = model if system == "eager" else compile_system(system, model, {})[0]
            report(system, lambda: compiled(*inputs), args.python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
