#!/usr/bin/env python3
"""Whole models under torch.compile: eager vs Inductor vs Kiln, in one run.

The workloads are those of the anchor table (TIMM and HuggingFace models
built from their configs, without weights and without dropout, and the two
micro-graphs), or with --suite attention models whose attention PyTorch's
fused kernels cannot run (Gemma 2's soft-capped scores), or with --suite
extra nine more (EfficientNet, ResNeXt,
RegNet, DeiT; DistilBERT, RoBERTa, T5's encoder, OPT, a Mistral with
grouped-query attention), in inference mode, or with --train as training steps (a
forward and a backward pass of a loss reading every output; the answer is
the output and every parameter's gradient). For each, in one process on the
same inputs:

* eager time; the times of the systems compared (``--systems``):
  ``inductor`` (torch.compile, default mode), ``inductor-cudagraphs``
  (``mode="reduce-overhead"``), ``kiln`` (torch.compile(backend="kiln")) and
  ``kiln-cudagraphs`` (its ``cuda_graphs`` option), ``kiln-cudnn`` and
  ``kiln-cudnn-cudagraphs`` (the same with ``cudnn_in_regions``: convolutions
  compiled into the regions, calling cuDNN), each with the host time
  of one call (from the call to its return, the GPU idle before it: what a
  model waits for when the host is the bottleneck), and their answers
  against eager, taken from a call after warm-up (a replay, under CUDA
  graphs);
  an answer is right if each of its tensors is within the dtype's tolerance
  of eager's or, as PyTorch's own accuracy checks judge, no further from a
  float64 run of the same model (same rounded weights and inputs) than
  twice eager's distance from it: a training step's gradients through many
  batch norms amplify rounding, eager's included;
* cold compile time (first call, empty Kiln artifact cache) and warm compile
  time (Dynamo reset, the same artifact cache: what a second process pays);
* peak memory of each (CUDA) and what Kiln ran in PyTorch (op, count): its
  fallbacks, and the ops it leaves to PyTorch's library kernels by choice
  (the backend's ``library_ops`` option, marked "lib").

    PYTHONPATH=python python3 bench/models.py --device cuda --dtype bf16 \\
        [--models resnet50,bert_base] [--out docs/perf] \\
        [--kiln-options '{"library_ops": []}'] [--profile] [--systems kiln --small --check] \\
        [--systems inductor,inductor-cudagraphs,kiln,kiln-cudagraphs] [--train]

--check exits with status 1 unless every Kiln answer was right: with
--systems kiln --small, a quick check that every model runs under Kiln.
--profile prints, per model, the GPU kernels that took the most time in one
call of Inductor's and of Kiln's compiled model (torch.profiler).

Prints a table; with --out writes models-<device>-<dtype>[-train].json and
.md (and a .png of the speedups where matplotlib is installed).
"""

import argparse
import collections
import copy
import json
import math
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
import torch.utils._pytree as pytree

import kiln.backend


def model_factories(big, suite="anchors"):
    """name -> () -> (module, inputs on the CPU in f32/int64), at the anchor
    table's sizes if `big`, else at small ones (the CPU's, and checks): the
    anchor table's workloads, or (`suite` "extra") more TIMM and HuggingFace
    models at the same batch sizes."""
    batch, seq = (64, 512) if big else (8, 128)

    def timm_model(name):
        def make():
            import timm
            return timm.create_model(name, pretrained=False).eval(), \
                [torch.randn(batch, 3, 224, 224)]
        return make

    def hf_model(kind, batch_size, vocab):
        def make():
            import transformers as tf
            # No dropout: training steps must give eager's gradients.
            if kind == "bert":
                model = tf.BertModel(tf.BertConfig(hidden_dropout_prob=0.0,
                                                   attention_probs_dropout_prob=0.0))
            elif kind == "gpt2":
                model = tf.GPT2LMHeadModel(tf.GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0,
                                                         attn_pdrop=0.0))
            else:
                model = tf.LlamaForCausalLM(tf.LlamaConfig(
                    hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                    num_attention_heads=16, num_key_value_heads=16, vocab_size=vocab))
            return model.eval(), [torch.randint(0, vocab, (batch_size, seq))]
        return make

    class LayerNormGelu(torch.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.norm = torch.nn.LayerNorm(width)

        def forward(self, x, r):
            return torch.nn.functional.gelu(self.norm(x + r)) * 0.5 + x

    class ScaledSoftmax(torch.nn.Module):
        def forward(self, x):
            return torch.softmax(x * 0.125, dim=-1)

    def hf_extra(kind):
        """More HuggingFace families, at base sizes: encoders (DistilBERT,
        RoBERTa, T5's encoder) and decoders (OPT-125m, a Mistral with
        grouped-query attention)."""
        def make():
            import transformers as tf
            batch_size = 8 if big else 1
            if kind == "distilbert":
                model, vocab = tf.DistilBertModel(tf.DistilBertConfig(
                    dropout=0.0, attention_dropout=0.0)), 30000
            elif kind == "roberta":
                model, vocab = tf.RobertaModel(tf.RobertaConfig(
                    vocab_size=50265, max_position_embeddings=514,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)), 50000
            elif kind == "t5_encoder":
                model, vocab = tf.T5EncoderModel(tf.T5Config(dropout_rate=0.0)), 32000
            elif kind == "opt":
                model, vocab = tf.OPTForCausalLM(tf.OPTConfig(dropout=0.0)), 50000
            else:
                model, vocab = tf.MistralForCausalLM(tf.MistralConfig(
                    hidden_size=1024, intermediate_size=3584, num_hidden_layers=8,
                    num_attention_heads=16, num_key_value_heads=4,
                    vocab_size=32000)), 32000
            return model.eval(), [torch.randint(0, vocab, (batch_size, seq))]
        return make

    def gemma2_softcap():
        """Gemma 2's decoder at 8 layers of 1024 (8 heads of 128, 4 key and
        value heads), its attention written out as transformers' eager path
        does: scores soft-capped by tanh, which PyTorch's fused attention
        cannot do, plus the causal mask."""
        import transformers as tf
        model = tf.Gemma2ForCausalLM(tf.Gemma2Config(
            hidden_size=1024, intermediate_size=4096, num_hidden_layers=8,
            num_attention_heads=8, num_key_value_heads=4, head_dim=128,
            vocab_size=32000, attention_dropout=0.0, attn_implementation="eager"))
        batch_size, length = (2, 2048) if big else (1, 128)
        return model.eval(), [torch.randint(0, 32000, (batch_size, length))]

    if suite == "attention":
        return {"gemma2_softcap_8l_1024": gemma2_softcap}

    if suite == "extra":
        return {
            "efficientnet_b0": timm_model("efficientnet_b0"),
            "resnext50_32x4d": timm_model("resnext50_32x4d"),
            "regnety_016": timm_model("regnety_016"),
            "deit_small_patch16_224": timm_model("deit_small_patch16_224"),
            "distilbert": hf_extra("distilbert"),
            "roberta_base": hf_extra("roberta"),
            "t5_small_encoder": hf_extra("t5_encoder"),
            "opt_125m": hf_extra("opt"),
            "mistral_8l_1024_gqa": hf_extra("mistral"),
        }

    rows = 16384 if big else 1024
    return {
        "micro_ln_gelu": lambda: (LayerNormGelu(4096).eval(),
                                  [torch.randn(rows, 4096), torch.randn(rows, 4096)]),
        "micro_softmax": lambda: (ScaledSoftmax(),
                                  [torch.randn(64 if big else 4, 16, 1024, 1024 if big else 256)]),
        "resnet50": timm_model("resnet50"),
        "vit_base_patch16_224": timm_model("vit_base_patch16_224"),
        "convnext_tiny": timm_model("convnext_tiny"),
        "mobilenetv3_large_100": timm_model("mobilenetv3_large_100"),
        "bert_base": hf_model("bert", 16 if big else 2, 30000),
        "gpt2": hf_model("gpt2", 8 if big else 1, 50000),
        "llama_8l_1024": hf_model("llama", 8 if big else 1, 32000),
    }


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def median_time(fn, device, budget_s=1.0):
    """Median seconds of one call, after warm-up; CUDA events on the GPU."""
    for _ in range(3):
        fn()
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    count = max(5, min(100, int(budget_s / max(time.perf_counter() - start, 1e-6))))
    times = []
    for _ in range(count):
        if device == "cuda":
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(begin.elapsed_time(end) / 1e3)
        else:
            begin = time.perf_counter()
            fn()
            times.append(time.perf_counter() - begin)
    return sorted(times)[len(times) // 2]


def host_time(fn, device, count=20):
    """Median seconds from the call of `fn` to its return, with the GPU idle
    before each call: the host's part of a call."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(count):
        synchronize(device)
        begin = time.perf_counter()
        fn()
        times.append(time.perf_counter() - begin)
    synchronize(device)
    return sorted(times)[len(times) // 2]


SYSTEMS = ("inductor", "inductor-cudagraphs", "kiln", "kiln-cudagraphs", "kiln-cudnn",
           "kiln-cudnn-cudagraphs")


def compile_system(system, model, kiln_options):
    """(compiled model, the Kiln options it uses, if Kiln) for `system`."""
    if system.startswith("kiln"):
        options = {"cache_dir": tempfile.mkdtemp(prefix="kiln-bench-"), **kiln_options}
        if system.endswith("-cudagraphs"):
            options["cuda_graphs"] = True
        if system.startswith("kiln-cudnn"):
            options["cudnn_in_regions"] = True
        return torch.compile(model, backend="kiln", options=options), options
    if system == "inductor-cudagraphs":
        return torch.compile(model, mode="reduce-overhead"), None
    return torch.compile(model), None


def tensors_of(output):
    return [t for t in pytree.tree_flatten(output)[0] if isinstance(t, torch.Tensor)]


def relative_errors(got, want):
    """Per output tensor: largest |got - want| over largest |want|."""
    got, want = tensors_of(got), tensors_of(want)
    if len(got) != len(want):
        return [math.inf]
    errors = []
    for g, w in zip(got, want):
        if g.shape != w.shape:
            errors.append(math.inf)
            continue
        scale = w.double().abs().max().item() or 1.0
        errors.append((g.double() - w.double()).abs().max().item() / scale)
    return errors


def judge(got, want, reference, tolerance):
    """(ok, errors against eager, errors against the float64 reference):
    ok if every tensor is within `tolerance` of eager's or no further from
    the reference than twice eager's distance (plus a tenth of
    `tolerance`)."""
    errors = relative_errors(got, want)
    if reference is None:
        return all(e <= tolerance for e in errors), errors, None
    errors64 = relative_errors(got, reference)
    eager64 = relative_errors(want, reference)
    ok = len(errors) == len(errors64) == len(eager64) and all(
        e <= tolerance or e64 <= 2 * r64 + tolerance / 10
        for e, e64, r64 in zip(errors, errors64, eager64))
    return ok, errors, errors64


def float64_step(model, inputs, train):
    """One step of a float64 copy of `model` on float64 copies of `inputs`
    (their values as rounded to the benchmark's dtype)."""
    reference = copy.deepcopy(model).double()
    inputs = [t.detach().double().requires_grad_(train) if t.is_floating_point() else t
              for t in inputs]
    with torch.set_grad_enabled(train):
        result = training_step(reference, reference, inputs) if train else reference(*inputs)
    return pytree.tree_map(lambda t: t.detach() if isinstance(t, torch.Tensor) else t, result)


def worst_tensors(errors, names, count=5):
    """The names and errors of the `count` tensors that differ most."""
    ranked = sorted(range(len(errors)), key=lambda i: -errors[i])[:count]
    return [f"{names[i] if i < len(names) else i}: {errors[i]:.2e}" for i in ranked]


def first_call(fn, device):
    """(output, seconds): the call that compiles."""
    start = time.perf_counter()
    output = fn()
    synchronize(device)
    return output, time.perf_counter() - start


def training_step(module, model, inputs):
    """A forward and backward pass of `module` (`model` or its compiled
    form): the output and the gradients of the model's parameters and of its
    floating inputs, for a loss that reads every floating output."""
    model.zero_grad(set_to_none=True)
    for tensor in inputs:
        tensor.grad = None
    output = module(*inputs)
    loss = sum(t.float().mean() for t in tensors_of(output) if t.requires_grad)
    loss.backward()
    leaves = [*model.parameters(), *inputs]
    return [output, [t.grad for t in leaves if t.grad is not None]]


def step_tensor_names(model, inputs, output, train):
    """Names of tensors_of(one step's result), in order."""
    names = [f"output {i}" for i in range(len(tensors_of(output[0] if train else output)))]
    if train:
        names += [f"grad {n}" for n, p in model.named_parameters() if p.grad is not None]
        names += [f"grad input {i}" for i, t in enumerate(inputs) if t.grad is not None]
    return names


def peak_memory(fn, device):
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**20


def profile_kernels(fn, device, top=24):
    """The `top` kernels by total time over one call of `fn`, as text."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        fn()
        synchronize(device)
    key = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=top, max_name_column_width=60)


def measure(name, make, device, dtype, tolerance, systems, kiln_options, profile, train):
    record = {"model": name, "device": device, "dtype": str(dtype)[6:],
              "mode": "train" if train else "inference"}
    model, inputs = make()
    model = model.to(device=device, dtype=dtype).train(train)
    inputs = [t.to(device=device, dtype=dtype).requires_grad_(train)
              if t.is_floating_point() else t.to(device) for t in inputs]

    def step(module):
        """One call (inference), or a training step's output and gradients."""
        if train:
            return lambda: training_step(module, model, inputs)
        return lambda: module(*inputs)

    reference = float64_step(model, inputs, train)
    with torch.set_grad_enabled(train):
        expected = step(model)()
        record["eager_ms"] = median_time(step(model), device) * 1e3
        record["eager_mib"] = peak_memory(step(model), device)

        for system in systems:
            try:
                torch._dynamo.reset()
                kiln.backend.REPORTS.clear()
                compiled, options = compile_system(system, model, kiln_options)
                _, record[f"{system}_compile_s"] = first_call(step(compiled), device)
                # Warm-up and recording (CUDA graphs); the answer judged is a
                # replay's, before the next call overwrites it.
                for _ in range(2):
                    step(compiled)()
                output = step(compiled)()
                synchronize(device)
                ok, errors, errors64 = judge(output, expected, reference, tolerance)
                del output
                record[f"{system}_error"] = max(errors)
                record[f"{system}_ok"] = ok
                if errors64 is not None:
                    record[f"{system}_error_f64"] = max(errors64)
                    record["eager_error_f64"] = max(relative_errors(expected, reference))
                if not ok:
                    names = step_tensor_names(model, inputs, expected, train)
                    record[f"{system}_worst"] = worst_tensors(errors, names)
                    if errors64 is not None:
                        record[f"{system}_worst_f64"] = worst_tensors(errors64, names)
                record[f"{system}_ms"] = median_time(step(compiled), device) * 1e3
                record[f"{system}_host_ms"] = host_time(step(compiled), device) * 1e3
                record[f"{system}_mib"] = peak_memory(step(compiled), device)
                if profile:
                    print(f"== {name}, {system}: kernels of one call\n"
                          f"{profile_kernels(step(compiled), device)}", flush=True)
                if options is not None:
                    fallbacks, reasons, library = (collections.Counter() for _ in range(3))
                    for report in kiln.backend.REPORTS:
                        fallbacks.update({op: n for (op, _), n in report.fallbacks.items()})
                        reasons.update(report.fallbacks)
                        library.update(report.library_calls)
                    record[f"{system}_fallbacks"] = dict(fallbacks)
                    record[f"{system}_library_calls"] = dict(library)
                    record[f"{system}_fallback_reasons"] = [
                        f"{op} x{n}: {reason}" for (op, reason), n in sorted(reasons.items())]
                    record[f"{system}_compiled_ops"] = sum(
                        r.compiled_ops for r in kiln.backend.REPORTS)
                    record[f"{system}_artifacts"] = sum(r.kernels for r in kiln.backend.REPORTS)
                    record[f"{system}_cuda_graphs"] = sorted(
                        {f"{r.name}: {r.cuda_graphs}" for r in kiln.backend.REPORTS
                         if r.cuda_graphs is not None})
                if system == "kiln":  # Warm compiles are the same with graphs.
                    del compiled
                    torch._dynamo.reset()
                    warm = torch.compile(model, backend="kiln", options=options)
                    record[f"{system}_warm_compile_s"] = first_call(step(warm), device)[1]
            except Exception as error:  # Report and go on with the next.
                record[f"{system}_failure"] = f"{type(error).__name__}: {str(error)[:400]}"
                traceback.print_exc()
            finally:
                compiled = warm = None
                torch._dynamo.reset()
        record["eager_host_ms"] = host_time(step(model), device) * 1e3
    for system in SYSTEMS:
        if f"{system}_ms" in record:
            record[f"{system}_speedup"] = record["eager_ms"] / record[f"{system}_ms"]
    return record


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def ratio(record, numerator, denominator):
    """How many times faster `denominator`'s system is than `numerator`'s."""
    if f"{numerator}_ms" in record and f"{denominator}_ms" in record:
        return record[f"{numerator}_ms"] / record[f"{denominator}_ms"]
    return None


def table(records, systems):
    """Markdown: per model, eager and each system's time (speedup over
    eager; host ms per call), the Kiln ÷ Inductor ratios, compile times,
    peak memory, whether Kiln's answers were right and what it left to
    PyTorch."""
    names = {"inductor": "Inductor", "inductor-cudagraphs": "Inductor graphs",
             "kiln": "Kiln", "kiln-cudagraphs": "Kiln graphs",
             "kiln-cudnn": "Kiln cuDNN", "kiln-cudnn-cudagraphs": "Kiln cuDNN graphs"}
    pairs = [(a, b) for a, b in (("inductor", "kiln"),
                                 ("inductor-cudagraphs", "kiln-cudagraphs"),
                                 ("inductor", "kiln-cudnn"),
                                 ("inductor-cudagraphs", "kiln-cudnn-cudagraphs"))
             if a in systems and b in systems]
    kilns = [s for s in systems if s.startswith("kiln")]
    header = ["workload", "eager ms (host)"]
    header += [f"{names[s]} ms (÷ eager; host)" for s in systems]
    header += [f"{names[b]} ÷ {names[a]}" for a, b in pairs]
    header += ["compile s: " + " / ".join(names[s] for s in systems),
               "peak MiB: eager / " + " / ".join(names[s] for s in systems),
               "Kiln correct (error vs eager; vs f64)", "ran in PyTorch"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in records:
        cells = [r["model"], f"{fmt(r.get('eager_ms'), '.3f')} ({fmt(r.get('eager_host_ms'), '.2f')})"]
        cells += [f"{fmt(r.get(f'{s}_ms'), '.3f')} ({fmt(r.get(f'{s}_speedup'), '.2f')}×; "
                  f"{fmt(r.get(f'{s}_host_ms'), '.2f')})" for s in systems]
        cells += [f"{fmt(ratio(r, a, b), '.2f')}×" for a, b in pairs]
        cells.append(" / ".join(fmt(r.get(f"{s}_compile_s"), ".1f") for s in systems))
        cells.append(" / ".join(fmt(r.get(f"{s}_mib"), ".0f") for s in ("eager", *systems)))
        correct = []
        for s in kilns:
            if f"{s}_failure" in r:
                correct.append(f"{names[s]} failed: {r[f'{s}_failure'][:120]}")
            elif f"{s}_error" in r:
                text = ("yes" if r.get(f"{s}_ok") else "NO") + f" ({fmt(r[f'{s}_error'], '.1e')}"
                if f"{s}_error_f64" in r:
                    text += (f"; f64: {fmt(r[f'{s}_error_f64'], '.1e')}, "
                             f"eager {fmt(r.get('eager_error_f64'), '.1e')}")
                correct.append(text + ")")
        cells.append("; ".join(correct) or "—")
        kiln_system = kilns[0] if kilns else None
        fallbacks = ", ".join(f"{op.replace('aten.', '')} ×{n}" for op, n in sorted(
            r.get(f"{kiln_system}_fallbacks", {}).items()))
        library = ", ".join(f"{op.replace('aten.', '')} ×{n} (lib)" for op, n in sorted(
            r.get(f"{kiln_system}_library_calls", {}).items()))
        cells.append(", ".join(part for part in (fallbacks, library) if part) or
                     ("—" if kiln_system is None else "nothing"))
        lines.append("| " + " | ".join(cells) + " |")
    means = ["**geomean**", ""]
    means += [f"({fmt(geomean(r.get(f'{s}_speedup') for r in records), '.2f')}×)"
              for s in systems]
    means += [f"{fmt(geomean(ratio(r, a, b) for r in records), '.2f')}×" for a, b in pairs]
    means += [""] * 4
    lines.append("| " + " | ".join(means) + " |")
    return "\n".join(lines)


def plot(records, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = [r["model"] for r in records]
    fig, ax = plt.subplots(figsize=(max(6, len(names) * 1.1), 4))
    systems = [s for s in SYSTEMS if any(f"{s}_speedup" in r for r in records)]
    width = 0.8 / max(len(systems), 1)
    for index, system in enumerate(systems):
        offset = (index - (len(systems) - 1) / 2) * width
        ax.bar([i + offset for i in range(len(names))],
               [r.get(f"{system}_speedup") or 0 for r in records], width, label=system)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("speedup over eager")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    parser.add_argument("--models", default="", help="comma-separated; default: all")
    parser.add_argument("--suite", default="anchors", choices=["anchors", "extra", "attention"],
                        help="the anchor table's workloads, models with attention "
                             "PyTorch cannot fuse, or more TIMM and HuggingFace models")
    parser.add_argument("--out", type=Path, help="folder for the JSON, markdown and plot")
    parser.add_argument("--kiln-options", type=json.loads, default={},
                        help="JSON object of Kiln backend options")
    parser.add_argument("--profile", action="store_true",
                        help="print each compiled model's slowest kernels")
    parser.add_argument("--systems", default="inductor,kiln",
                        help="compilers to compare with eager, comma-separated: "
                             + ", ".join(SYSTEMS))
    parser.add_argument("--small", action="store_true",
                        help="small batches and sequences, also on the GPU")
    parser.add_argument("--train", action="store_true",
                        help="time training steps (forward and backward; gradients "
                             "checked as the answer is) instead of inference")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 unless every Kiln answer is right")
    args = parser.parse_args()
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    tolerance = {"bf16": 5e-2, "fp16": 1e-2, "fp32": 1e-3}[args.dtype]
    factories = model_factories(args.device == "cuda" and not args.small, args.suite)
    systems = [s for s in args.systems.split(",") if s]
    if not set(systems) <= set(SYSTEMS):
        parser.error(f"unknown systems {systems}; known: {', '.join(SYSTEMS)}")
    names = [n for n in args.models.split(",") if n] or list(factories)
    unknown = [n for n in names if n not in factories]
    if unknown:
        parser.error(f"unknown models {unknown}; known: {list(factories)}")

    records = []
    for name in names:
        record = measure(name, factories[name], args.device, dtype, tolerance, systems,
                         args.kiln_options, args.profile, args.train)
        records.append(record)
        print(json.dumps(record), flush=True)
        if args.device == "cuda":
            torch.cuda.empty_cache()

    title = (f"torch {torch.__version__}, {args.device}"
             f"{' (' + torch.cuda.get_device_name() + ')' if args.device == 'cuda' else ''}"
             f", {args.dtype}, {'training steps' if args.train else 'inference'}")
    command = "PYTHONPATH=python python3 bench/models.py " + " ".join(sys.argv[1:])
    text = f"{title}; host {platform.node() or 'unknown'}\n\n{table(records, systems)}\n"
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.out / (f"models-{'' if args.suite == 'anchors' else args.suite + '-'}"
                           f"{args.device}-{args.dtype}{'-train' if args.train else ''}")
        stem.with_suffix(".json").write_text(json.dumps(
            {"command": command, "title": title, "records": records}, indent=1))
        stem.with_suffix(".md").write_text(f"`{command}`\n\n{text}")
        plot(records, stem.with_suffix(".png"), title)
    checked = [s for s in systems if s.startswith("kiln")]
    if args.check and checked:
        wrong = [f"{r['model']} ({s})" for r in records for s in checked
                 if not r.get(f"{s}_ok")]
        runs = len(records) * len(checked)
        print(f"models: {runs - len(wrong)} of {runs} right under Kiln"
              + (f"; wrong or failed: {', '.join(wrong)}" if wrong else ""))
        sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
