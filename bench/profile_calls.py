"""Where one call of a compiled model spends its time on the GPU machine:
wall time per call next to the time the GPU is busy, the kernels that keep
it busy and the ATen ops the host dispatches, for eager, Inductor and Kiln.
A call much longer than its GPU time is the host's.

    PYTHONPATH=python:bench python3 bench/profile_calls.py mobilenetv3_large_100

Models are bench/models.py's, at their small ("anchors", not big) sizes, in
bf16 on CUDA.
"""

import argparse
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import kiln.backend  # noqa: F401  (registers "kiln")
from models import model_factories

CALLS = 30
PROFILED_CALLS = 5


def per_call_ms(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / CALLS * 1e3


def report(system, fn):
    for _ in range(3):
        fn()
    print(f"== {system}: {per_call_ms(fn):.3f} ms per call", flush=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiled:
        for _ in range(PROFILED_CALLS):
            fn()
        torch.cuda.synchronize()
    events = profiled.key_averages()
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    busy = sum(e.self_device_time_total for e in kernels) / PROFILED_CALLS / 1e3
    launches = sum(e.count for e in kernels) / PROFILED_CALLS
    print(f"  GPU busy {busy:.3f} ms in {launches:.0f} kernels per call")
    for e in sorted(kernels, key=lambda e: -e.self_device_time_total)[:12]:
        print(f"  gpu {e.key[:70]:70} {e.count / PROFILED_CALLS:6.1f}/call "
              f"{e.self_device_time_total / PROFILED_CALLS:8.1f} us/call")
    host = [e for e in events
            if e.device_type != torch.autograd.DeviceType.CUDA and e.key.startswith("aten::")]
    for e in sorted(host, key=lambda e: -e.count)[:14]:
        print(f"  cpu {e.key[:50]:50} {e.count / PROFILED_CALLS:6.1f}/call "
              f"{e.self_cpu_time_total / PROFILED_CALLS:8.1f} us/call (self)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a name of bench/models.py's anchor models")
    args = parser.parse_args()
    model, inputs = model_factories(False, "anchors")[args.model]()
    model = model.cuda().to(torch.bfloat16).eval()
    inputs = [t.cuda().to(torch.bfloat16) if t.is_floating_point() else t.cuda()
              for t in inputs]
    print("inputs", [tuple(t.shape) for t in inputs])
    with torch.no_grad():
        for system in ["eager", "inductor", "kiln"]:
            torch._dynamo.reset()
            compiled = model if system == "eager" else torch.compile(
                model, **({"backend": "kiln"} if system == "kiln" else {}))
            report(system, lambda: compiled(*inputs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
