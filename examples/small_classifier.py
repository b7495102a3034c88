#!/usr/bin/env python3
"""Kiln's main job on an example model: a small image classifier
(convolutions with batch norm and relu, pooling, an MLP head with GELU),
compiled for this CPU, checked against eager PyTorch and timed next to it.

    PYTHONPATH=python /usr/bin/python3 examples/small_classifier.py [--device cuda]
"""

import argparse
import time

import torch
from torch import nn

import kiln
from timing import median_ms


class SmallClassifier(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.GELU(),
                                  nn.Linear(128, classes))

    def forward(self, images):
        return self.head(self.features(images))



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = SmallClassifier().eval().to(args.device)
    # Batch norm statistics other than the initial ones, so that they matter.
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    images = torch.randn(args.batch, 3, 32, 32, device=args.device)

    start = time.perf_counter()
    compiled = kiln.compile(model, [images])
    compile_s = time.perf_counter() - start

    fresh = torch.randn_like(images)
    with torch.no_grad():
        expected = model(fresh)
    got = compiled(fresh)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    print(f"SmallClassifier: result matches eager PyTorch on fresh inputs "
          f"({args.device}, batch {args.batch}, 3x32x32 f32)")

    with torch.no_grad():
        eager_ms = median_ms(model, [fresh], args.device)
    kiln_ms = median_ms(compiled, [fresh], args.device)
    print(f"compile (or cache hit): {compile_s:.2f} s")
    print(f"eager PyTorch: {eager_ms:.3f} ms   Kiln: {kiln_ms:.3f} ms   "
          f"speed-up: {eager_ms / kiln_ms:.2f}x")


if __name__ == "__main__":
    main()
