#!/usr/bin/env python3
"""How kiln-compile's time grows with the graph: graphs of 250 to 4000 ops,
each compiled cold (no cache) in three stops of the same pipeline — the MLIR
passes (``--emit=mlir``), then LLVM's optimization (``--emit=llvm``), then
code generation and linking (a shared object) — with the peak memory of the
whole compile. Time per op that stays flat as graphs grow is linear.

    PYTHONPATH=python python3 bench/compile_time.py [--sizes 250,500,1000,2000,4000] \\
        [--kinds chain,mlp] [--target cpu|cuda] [--json out.json]

Kinds:
* ``chain``: an elementwise chain (sin, mul, add, ... of one [64, 256] f32
  tensor and its running value), which fuses into few kernels;
* ``mlp``: linear layers of 64 features with relu between them (an
  ``fx.mm``, an add and a relu each: three ops a layer).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from kiln.importer import import_function
from kiln.tools import find_tool


def chain(ops):
    """An elementwise function of about `ops` ops."""
    steps = [torch.sin, lambda v: v * 1.0001, lambda v: v + 0.5, torch.tanh]

    def fn(x):
        value = x
        for index in range(ops):
            value = steps[index % len(steps)](value)
        return value
    return fn, [torch.randn(64, 256)]


def mlp(ops):
    """Linear layers with relu, three ops each, about `ops` ops in all."""
    layers = torch.nn.ModuleList(torch.nn.Linear(64, 64) for _ in range(max(ops // 3, 1)))

    def fn(x, *weights):
        for index in range(len(layers)):
            x = torch.relu(x @ weights[2 * index] + weights[2 * index + 1])
        return x
    weights = [w for layer in layers for w in (layer.weight.detach().t().contiguous(),
                                               layer.bias.detach())]
    return fn, [torch.randn(8, 64), *weights]


KINDS = {"chain": chain, "mlp": mlp}


def timed(command):
    """(seconds, peak resident MiB) of running `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{stderr[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def measure(kind, ops, target, tool):
    fn, inputs = KINDS[kind](ops)
    graph = import_function(fn, inputs, device=target)
    record = {"kind": kind, "requested_ops": ops, "target": target,
              "fx_ops": graph.text.count(" = fx.")}
    with tempfile.TemporaryDirectory(prefix="kiln-compile-time-") as folder:
        source = Path(folder) / "graph.mlir"
        source.write_text(graph.text)
        base = [str(tool), str(source), f"--target={target}"]
        record["mlir_s"], _ = timed(base + ["--emit=mlir", "-o", str(Path(folder) / "out.mlir")])
        record["llvm_s"], _ = timed(base + ["--emit=llvm", "-o", str(Path(folder) / "out.ll")])
        record["total_s"], record["peak_mib"] = timed(base + ["-o", str(Path(folder) / "g.so")])
    record["llvm_opt_s"] = record["llvm_s"] - record["mlir_s"]
    record["codegen_s"] = record["total_s"] - record["llvm_s"]
    record["ms_per_op"] = record["total_s"] / max(record["fx_ops"], 1) * 1e3
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="250,500,1000,2000,4000")
    parser.add_argument("--kinds", default="chain,mlp")
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--json", type=Path, help="where to write the records")
    args = parser.parse_args()
    tool = find_tool("kiln-compile")
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; known: {sorted(KINDS)}")
    records = []
    print("| kind | fx ops | MLIR passes s | LLVM opt s | codegen + link s | total s | "
          "ms per op | peak MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        for ops in [int(s) for s in args.sizes.split(",") if s]:
            r = measure(kind, ops, args.target, tool)
            records.append(r)
            print(f"| {kind} | {r['fx_ops']} | {r['mlir_s']:.1f} | {r['llvm_opt_s']:.1f} | "
                  f"{r['codegen_s']:.1f} | {r['total_s']:.1f} | {r['ms_per_op']:.1f} | "
                  f"{r['peak_mib']:.0f} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), "records": records},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
