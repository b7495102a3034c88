"""Times one of bench.py's workloads under several Kiln pipeline options, with
eager and Inductor in the same run: for choosing defaults.

    PYTHONPATH=python python3 bench/sweep.py "softmax" block-size=128 block-size=256
"""

import argparse
import sys

import torch

import kiln
from bench import matches, timeit, workloads


def parse(option):
    key, _, value = option.partition("=")
    return key, int(value) if value.lstrip("-").isdigit() else value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a substring of the workload's name")
    parser.add_argument("options", nargs="*", help="key=value pipeline options, one set each")
    parser.add_argument("--device", choices=["cuda", "cpu"],
                        default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--no-inductor", action="store_true", help="skip torch.compile")
    args = parser.parse_args()
    device = args.device
    # torch 1.x has no torch.compile: Kiln and eager only.
    has_inductor = hasattr(torch, "compile") and not args.no_inductor
    for name, fn, factory, ideal, *flops in workloads(device):
        if args.workload not in name:
            continue
        inputs = factory()
        eager = timeit(fn, inputs, device)
        inductor = None
        if has_inductor:
            torch._dynamo.reset()
            inductor = timeit(torch.compile(fn), inputs, device)
        print(f"{name}: eager {eager:.3f} ms"
              + (f", inductor {inductor:.3f} ms" if inductor else ""))
        for option in args.options or [""]:
            options = dict(parse(o) for o in option.split(",") if o)
            compiled = kiln.compile(fn, inputs, options=options)
            ok = matches(fn, inputs, compiled(*inputs),
                         bool(flops) or getattr(fn, "sums", False))
            ms = timeit(compiled, inputs, device)
            versus = f", {inductor / ms:.2f}x inductor" if inductor else \
                f", {eager / ms:.2f}x eager"
            print(f"  kiln {option or 'defaults':30} {ms:.3f} ms "
                  f"({ideal / ms / 1e6:.0f} GB/s{versus}) {'ok' if ok else 'WRONG'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
