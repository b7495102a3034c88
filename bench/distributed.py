#!/usr/bin/env python3
"""A GPT-2-sized model's training step under PyTorch's distributed stack:
DDP, FSDP2 (``fully_shard``) and tensor parallelism (``parallelize_module``),
eager vs Inductor vs Kiln, in one run.

    torchrun --nproc-per-node 2 bench/distributed.py [--modes ddp,fsdp2,tp]
        [--systems inductor,kiln] [--device cuda|cpu] [--small] [--steps 10]
        [--out docs/perf]

Every rank builds the same model (same seed), wraps it for the mode and
compiles it (``torch.compile``, with ``backend="kiln"`` for Kiln); eager
is the same wrapper uncompiled. A step is a forward and backward pass of a
language model's cross-entropy on the rank's batch (DDP and FSDP2: each
rank its own; tensor parallelism: one batch for all). The answer is the
loss and every parameter's gradient, gathered whole (DTensor shards too);
each system's is compared with eager's, within the dtype's tolerance. Step
times are medians after warm-up, the slowest rank's. Rank 0 prints one
markdown table (and writes it with --out).

With --device cpu the ranks talk through gloo: the graphs, the collectives
in them and the numerics run on one machine without GPUs (--small: a few
layers of width 128).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

TOLERANCES = {torch.float32: 1e-3, torch.bfloat16: 3e-2}


class Block(nn.Module):
    """A pre-norm transformer layer; its query, key and value projections
    are separate linear layers, so that tensor parallelism can split them
    by heads (and the layer infers its local heads from their width)."""

    def __init__(self, width, head_size):
        super().__init__()
        self.head_size = head_size
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.q, self.k, self.v = (nn.Linear(width, width) for _ in range(3))
        self.proj = nn.Linear(width, width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        batch, length, _ = x.shape
        h = self.norm1(x)

        def heads(linear):
            return linear(h).view(batch, length, -1, self.head_size).transpose(1, 2)

        attention = F.scaled_dot_product_attention(heads(self.q), heads(self.k),
                                                   heads(self.v), is_causal=True)
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, length, -1))
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))


class LanguageModel(nn.Module):
    def __init__(self, vocabulary, width, layers, head_size, length):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.position = nn.Parameter(torch.randn(length, width) * 0.02)
        self.blocks = nn.ModuleList(Block(width, head_size) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary, bias=False)

    def forward(self, tokens, targets):
        x = self.embedding(tokens) + self.position[:tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().flatten(0, 1), targets.flatten())


def sizes(small):
    """(vocabulary, width, layers, head size, batch, length)."""
    return (1000, 128, 2, 32, 2, 64) if small else (50257, 768, 12, 64, 8, 512)


def build(args, device, dtype):
    vocabulary, width, layers, head_size, _, length = sizes(args.small)
    torch.manual_seed(0)
    return LanguageModel(vocabulary, width, layers, head_size, length).to(device, dtype)


def wrap(mode, model, device):
    """`model` made ready for `mode` (its parameters sharded or replicated)."""
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model, device_ids=[device.index] if
                                       device.type == "cuda" else None)
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    if mode == "fsdp2":
        from torch.distributed.fsdp import fully_shard
        for block in model.blocks:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)
        return model
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)
    plan = {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(),
            "proj": RowwiseParallel(), "up": ColwiseParallel(), "down": RowwiseParallel()}
    for block in model.blocks:
        parallelize_module(block, mesh, plan)
    return model


def compile_system(system, model, kiln_options):
    if system == "eager":
        return model
    if system.startswith("kiln"):
        import kiln.backend  # noqa: F401  (registers "kiln")
        options = {"cache_dir": tempfile.mkdtemp(prefix="kiln-dist-"), **kiln_options}
        return torch.compile(model, backend="kiln", options=options)
    return torch.compile(model)


def batch_of(args, device, rank, shared):
    vocabulary, _, _, _, batch, length = sizes(args.small)
    generator = torch.Generator().manual_seed(1 if shared else 1 + rank)
    tokens = torch.randint(0, vocabulary, (batch, length + 1), generator=generator)
    return tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def whole(tensor):
    """A gradient or parameter, gathered whole if it is a DTensor's shard."""
    full = getattr(tensor, "full_tensor", None)
    # A copy: a gradient may be a view of a buffer that later steps reuse.
    return (full() if full is not None else tensor).detach().float().clone()


def step(module, model, inputs):
    model.zero_grad(set_to_none=True)
    loss = module(*inputs)
    loss.backward()
    return loss.detach().float().clone(), [whole(p.grad) for p in model.parameters()
                                   if p.grad is not None]


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def relative_error(got, want):
    scale = want.abs().max().item() or 1.0
    return (got - want).abs().max().item() / scale


def measure(args, mode, system, device, dtype, reference):
    """(record, the answer) of one system in one mode."""
    model = wrap(mode, build(args, device, dtype), device)
    module = compile_system(system, model, args.kiln_options)
    inputs = batch_of(args, device, dist.get_rank(), shared=mode == "tp")
    record = {"mode": mode, "system": system}
    start = time.perf_counter()
    try:
        loss, grads = step(module, model, inputs)
    except Exception as error:  # A failure is a row of the table, not the end.
        record["failure"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
        return record, None
    synchronize(device)
    record["first_call_s"] = time.perf_counter() - start
    for _ in range(2):
        step(module, model, inputs)
    times = []
    for _ in range(args.steps):
        synchronize(device)
        dist.barrier()
        start = time.perf_counter()
        step(module, model, inputs)
        synchronize(device)
        times.append((time.perf_counter() - start) * 1e3)
    slowest = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    record["step_ms"] = slowest.item()
    if reference is not None:
        want_loss, want_grads = reference
        errors = [relative_error(loss, want_loss)] + [
            relative_error(g, w) if g.shape == w.shape else float("inf")
            for g, w in zip(grads, want_grads)]
        if len(grads) != len(want_grads):
            errors.append(float("inf"))
        worst = torch.tensor([max(errors)], dtype=torch.float64)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        record["error"] = worst.item()
        record["ok"] = worst.item() <= TOLERANCES[dtype]
    return record, (loss, grads)


def table(records, eager_ms):
    lines = ["| mode | system | step ms | ÷ eager | first call s | error vs eager | right |",
             "|---|---|---|---|---|---|---|"]
    for r in records:
        if "failure" in r:
            lines.append(f"| {r['mode']} | {r['system']} | — | — | — | — | failed: "
                         f"{r['failure']} |")
            continue
        base = eager_ms.get(r["mode"])
        ratio = f"{base / r['step_ms']:.2f}×" if base else "—"
        error = f"{r['error']:.1e}" if "error" in r else "—"
        right = ("yes" if r["ok"] else "**no**") if "ok" in r else "(reference)"
        lines.append(f"| {r['mode']} | {r['system']} | {r['step_ms']:.2f} | {ratio} | "
                     f"{r['first_call_s']:.1f} | {error} | {right} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="ddp,fsdp2,tp")
    parser.add_argument("--systems", default="inductor,kiln")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default=None, choices=["bf16", "fp32"],
                        help="default: bf16 on CUDA, fp32 on the CPU")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--kiln-options", type=json.loads, default={})
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if args.device == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
        world = dist.get_world_size()
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[
        args.dtype or ("bf16" if args.device == "cuda" else "fp32")]

    records, eager_ms, failed = [], {}, False
    for mode in args.modes.split(","):
        eager, reference = measure(args, mode, "eager", device, dtype, None)
        records.append(eager)
        if reference is None:
            failed = True
            continue
        eager_ms[mode] = eager["step_ms"]
        for system in args.systems.split(","):
            torch._dynamo.reset()
            record, _ = measure(args, mode, system, device, dtype, reference)
            records.append(record)
            failed |= "failure" in record or not record.get("ok", True)
    if dist.get_rank() == 0:
        header = (f"`torchrun --nproc-per-node {dist.get_world_size()} bench/distributed.py "
                  f"{' '.join(sys.argv[1:])}`\n\ntorch {torch.__version__}, "
                  f"{dist.get_world_size()} ranks, {args.device}"
                  + (f" ({torch.cuda.get_device_name(device)})" if args.device == "cuda" else "")
                  + f", {dtype}, {'small' if args.small else 'GPT-2 size'}\n\n")
        text = header + table(records, eager_ms)
        print(text, flush=True)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            name = f"distributed-{args.device}-{dist.get_world_size()}x.md"
            (args.out / name).write_text(text + "\n")
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
