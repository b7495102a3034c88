"""Runs one bench.py workload's compiled graphs, for a kernel profiler.

Compiles the first workload whose name contains WORKLOAD under Kiln and
under Inductor and runs each three times, so that a profiler such as Nsight
Compute sees both systems' kernels side by side, e.g.:

    PYTHONPATH=python:bench ncu -k 'regex:kiln_rows|triton' \\
        --launch-skip 2 --launch-count 2 --section SpeedOfLight \\
        --section Occupancy --section WarpStateStats \\
        python3 bench/ncu_workload.py "GELU(LN" [row-cache=false,...]

Kiln compiles with the pipeline options given as key=value pairs, if any.
"""
import argparse

import torch

import kiln
from bench import workloads
from sweep import parse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a substring of the workload's name")
    parser.add_argument("options", nargs="?", default="",
                        help="comma-separated key=value pipeline options for Kiln")
    args = parser.parse_args()
    options = dict(parse(o) for o in args.options.split(",") if o)
    for name, fn, factory, *_ in workloads("cuda"):
        if args.workload in name:
            inputs = factory()
            systems = [kiln.compile(fn, inputs, options=options), torch.compile(fn)]
            for _ in range(3):
                for compiled in systems:
                    compiled(*inputs)
            torch.cuda.synchronize()
            return
    parser.error(f"no workload matches {args.workload!r}")


if __name__ == "__main__":
    main()
