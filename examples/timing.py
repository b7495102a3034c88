"""Wall-clock timing for the examples: the median of repeated calls after a
warm-up, synchronizing the GPU around each call."""

import statistics
import time

import torch


def median_ms(fn, args, device, repeats=30):
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)
