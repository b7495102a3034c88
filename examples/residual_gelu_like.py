#!/usr/bin/env python3
"""Kiln's main job on an example: compile a PyTorch function and run it.

The function is a chain of elementwise ops that eager PyTorch runs as one
kernel per op; Kiln fuses it into one loop nest. Prints the result check and
the time of both.

    PYTHONPATH=python /usr/bin/python3 examples/residual_gelu_like.py [--device cuda]
"""

import argparse
import time

import torch

import kiln
from timing import median_ms


def block(x, residual, bias, scale):
    """relu(x + bias) * scale + residual, then a sigmoid gate."""
    h = torch.relu(x + bias) * scale + residual
    return h * torch.sigmoid(h)



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=4096)
    args = parser.parse_args()

    shape = (args.rows, args.cols)
    inputs = [torch.randn(shape), torch.randn(shape), torch.randn(args.cols),
              torch.randn(args.rows, 1)]
    inputs = [t.to(args.device) for t in inputs]

    start = time.perf_counter()
    compiled = kiln.compile(block, inputs)
    compile_s = time.perf_counter() - start
    print(compiled.graph_text)

    fresh = [torch.randn_like(t) for t in inputs]
    torch.testing.assert_close(compiled(*fresh), block(*fresh), rtol=1e-5, atol=1e-5)
    print(f"result matches eager PyTorch on fresh inputs ({args.device}, {shape[0]}x{shape[1]} f32)")

    eager_ms = median_ms(block, fresh, args.device)
    kiln_ms = median_ms(compiled, fresh, args.device)
    print(f"compile (or cache hit): {compile_s:.2f} s")
    print(f"eager PyTorch: {eager_ms:.3f} ms   Kiln: {kiln_ms:.3f} ms   "
          f"speed-up: {eager_ms / kiln_ms:.2f}x")


if __name__ == "__main__":
    main()
