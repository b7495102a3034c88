#!/usr/bin/env python3
"""Kiln's benchmark harness: Kiln vs eager PyTorch vs Inductor, in one run.

Each workload is run by all three on the same inputs; results are checked
against eager before timing. Times are medians of CUDA-event timings after
warm-up (or wall-clock on the CPU); inputs are larger than the L2 cache.

    PYTHONPATH=python python3 bench/bench.py [--device cuda] [--json out.json]

Prints a table; with --json writes every measurement.
"""

import argparse
import json
import platform
import statistics
import sys
import time

import torch

import kiln


def workloads(device):
    """(name, function, inputs factory, bytes a perfect kernel moves, and
    for matrix products the flops they do)."""

    def bias_relu_scale(x, b, s):
        return torch.relu(x + b) * s - x

    def residual_mul_add(x, r, w):
        return (x + r) * w + x

    def make(dtype, shapes):
        def factory():
            g = torch.Generator(device="cpu").manual_seed(0)
            return [torch.randn(s, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
                    for s in shapes]
        return factory

    rows, cols = (16384, 4096) if device == "cuda" else (2048, 4096)
    out = []
    for dtype in (torch.bfloat16, torch.float32):
        size = torch.tensor([], dtype=dtype).element_size()
        shapes = [(rows, cols), (cols,), (rows, 1)]
        ideal = size * (rows * cols * 2 + cols + rows)
        out.append((f"relu(x+b)*s-x {rows}x{cols} {str(dtype)[6:]}", bias_relu_scale,
                    make(dtype, shapes), ideal))
        shapes = [(rows, cols), (rows, cols), (cols,)]
        ideal = size * (rows * cols * 3 + cols)
        out.append((f"(x+r)*w+x {rows}x{cols} {str(dtype)[6:]}", residual_mul_add,
                    make(dtype, shapes), ideal))
    # The normalization micro-graphs of ANCHORS.md.
    def scaled_softmax(x):
        return torch.softmax(x * 0.125, dim=-1)

    def layer_norm_gelu(x, r, w, b):
        normalized = torch.nn.functional.layer_norm(x + r, (x.shape[-1],), w, b)
        return torch.nn.functional.gelu(normalized) * 0.5 + x

    dtype = torch.bfloat16
    size = 2
    shape = (64, 16, 1024, 1024) if device == "cuda" else (4, 16, 256, 256)
    elements = shape[0] * shape[1] * shape[2] * shape[3]
    out.append((f"softmax(x*.125) {'x'.join(map(str, shape))} bf16", scaled_softmax,
                make(dtype, [shape]), size * elements * 2))
    shapes = [(rows, cols), (rows, cols), (cols,), (cols,)]
    out.append((f"GELU(LN(x+r))*0.5+x {rows}x{cols} bf16", layer_norm_gelu,
                make(dtype, shapes), size * (rows * cols * 3 + 2 * cols)))

    # A layout change that moves the innermost dimension (NCHW to NHWC, as
    # ConvNeXt's blocks do), with a residual.
    def channels_last_add(x, r):
        return x.permute(0, 2, 3, 1) + r

    images, channels, side = (64, 256, 56) if device == "cuda" else (8, 64, 28)
    elements = images * channels * side * side
    out.append((f"permute(x,NHWC)+r {images}x{channels}x{side}x{side} bf16",
                channels_last_add,
                make(dtype, [(images, channels, side, side), (images, side, side, channels)]),
                size * 3 * elements))

    # Matrix products: a transformer's MLP and attention, bf16 on the GPU.
    def mlp(x, w1, b1, w2, b2):
        hidden = torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1))
        return torch.nn.functional.linear(hidden, w2, b2)

    def linear_relu(x, w, b):
        return torch.relu(torch.nn.functional.linear(x, w, b))

    def attention(q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
        return torch.matmul(torch.softmax(scores, dim=-1), v)

    gemm_dtype = torch.bfloat16 if device == "cuda" else torch.float32
    tag = str(gemm_dtype)[6:]
    size = torch.tensor([], dtype=gemm_dtype).element_size()
    tokens, width = (8192, 1024) if device == "cuda" else (512, 512)
    hidden = 4 * width
    out.append((f"MLP {tokens}x{width}->{hidden} GELU {tag}", mlp,
                make(gemm_dtype, [(tokens, width), (hidden, width), (hidden,), (width, hidden),
                                  (width,)]),
                size * (2 * tokens * width + 2 * hidden * width + hidden + width),
                2 * 2 * tokens * width * hidden))
    out.append((f"relu(linear) {tokens}x{width}->{hidden} {tag}", linear_relu,
                make(gemm_dtype, [(tokens, width), (hidden, width), (hidden,)]),
                size * (tokens * width + hidden * width + hidden + tokens * hidden),
                2 * tokens * width * hidden))
    # A language model's logits: a vocabulary whose size is no multiple of
    # 16 bytes' worth (GPT-2's 50257), which library GEMMs handle slowly.
    def logits(h, w):
        return h @ w.t()

    vocabulary = 50257 if device == "cuda" else 5003
    out.append((f"logits {tokens}x{width}->{vocabulary} {tag}", logits,
                make(gemm_dtype, [(tokens, width), (vocabulary, width)]),
                size * (tokens * width + vocabulary * width + tokens * vocabulary),
                2 * tokens * width * vocabulary))

    # A gated MLP (Llama's): two products that read one input, their gating,
    # and the product back.
    def swiglu(x, gate, up, down):
        linear = torch.nn.functional.linear
        return linear(torch.nn.functional.silu(linear(x, gate)) * linear(x, up), down)

    gated = (hidden * 2) // 3 // 64 * 64
    out.append((f"SwiGLU MLP {tokens}x{width}->{gated} {tag}", swiglu,
                make(gemm_dtype, [(tokens, width), (gated, width), (gated, width),
                                  (width, gated)]),
                size * (2 * tokens * width + 3 * gated * width),
                3 * 2 * tokens * width * gated))

    # A product, a residual and a cast to f32 (a block's output).
    def linear_residual_f32(x, w, r):
        return (torch.nn.functional.linear(x, w) + r).float()

    out.append((f"linear+residual->f32 {tokens}x{hidden}->{width} {tag}",
                linear_residual_f32,
                make(gemm_dtype, [(tokens, hidden), (width, hidden), (tokens, width)]),
                size * (tokens * hidden + width * hidden + tokens * width) + 4 * tokens * width,
                2 * tokens * hidden * width))

    # Attention's two batched products, written out (16 x 16 heads of 64 over
    # 1024 tokens on the GPU): scaled scores from queries and keys, and the
    # probabilities' product with the values.
    heads, seq, head = (16 * 16, 1024, 64) if device == "cuda" else (2 * 4, 256, 64)

    def scaled_scores(q, k):
        return q @ k.transpose(-1, -2) * 0.125

    def probabilities_by_values(p, v):
        return p @ v

    out.append((f"batched q@k^T*s {heads}x{seq}x{head}->{seq} {tag}", scaled_scores,
                make(gemm_dtype, [(heads, seq, head), (heads, seq, head)]),
                size * (2 * heads * seq * head + heads * seq * seq),
                2 * heads * seq * seq * head))
    out.append((f"batched p@v {heads}x{seq}x{seq}->{head} {tag}", probabilities_by_values,
                make(gemm_dtype, [(heads, seq, seq), (heads, seq, head)]),
                size * (heads * seq * seq + 2 * heads * seq * head),
                2 * heads * seq * seq * head))

    def conv_bn_relu(x, w, mean, var, gamma, beta):
        y = torch.nn.functional.conv2d(x, w, padding=1)
        return torch.relu(torch.nn.functional.batch_norm(y, mean, var, gamma, beta, False,
                                                         0.1, 1e-5))

    images, channels, side = (32, 64, 56) if device == "cuda" else (4, 32, 28)
    conv_inputs = make(gemm_dtype, [(images, channels, side, side),
                                    (channels, channels, 3, 3)] + [(channels,)] * 4)

    def conv_factory():
        inputs = conv_inputs()
        inputs[3] = inputs[3].abs() + 0.5  # variances
        return inputs

    out.append((f"conv3x3+BN+relu {images}x{channels}x{side}x{side} {tag}", conv_bn_relu,
                conv_factory, size * 2 * images * channels * side * side,
                2 * images * channels * side * side * channels * 9))
    # A depthwise convolution with its batch norm and activation (MobileNet's
    # and EfficientNet's blocks): memory-bound, so its floor is bytes.
    def depthwise_bn_silu(x, w, mean, var, gamma, beta):
        y = torch.nn.functional.conv2d(x, w, padding=1, groups=x.shape[1])
        return torch.nn.functional.silu(torch.nn.functional.batch_norm(
            y, mean, var, gamma, beta, False, 0.1, 1e-5))

    # Its sums round in another order than eager's: checked as products are.
    depthwise_bn_silu.sums = True
    images, channels, side = (64, 384, 28) if device == "cuda" else (8, 96, 56)
    depthwise_inputs = make(dtype, [(images, channels, side, side), (channels, 1, 3, 3)] +
                            [(channels,)] * 4)

    def depthwise_factory():
        inputs = depthwise_inputs()
        inputs[3] = inputs[3].abs() + 0.5  # variances
        return inputs

    out.append((f"dwconv3x3+BN+SiLU {images}x{channels}x{side}x{side} bf16", depthwise_bn_silu,
                depthwise_factory, 2 * 2 * images * channels * side * side))

    # The same convolution's input and weight gradients (a training step's
    # convolution_backward): the output's gradient, the input and the
    # weight in; the two gradients out.
    def depthwise_gradients(grad, x, w):
        return torch.ops.aten.convolution_backward(
            grad, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], x.shape[1],
            [True, True, False])[:2]

    depthwise_gradients.sums = True
    elements = images * channels * side * side
    out.append((f"dwconv3x3 gradients {images}x{channels}x{side}x{side} bf16",
                depthwise_gradients,
                make(dtype, [(images, channels, side, side)] * 2 + [(channels, 1, 3, 3)]),
                2 * (3 * elements + 2 * channels * 9)))
    batch, heads, seq, head = (16, 16, 1024, 64) if device == "cuda" else (2, 4, 256, 64)
    qkv = [(batch, heads, seq, head)] * 3
    out.append((f"attention {batch}x{heads}x{seq}x{head} {tag}", attention,
                make(gemm_dtype, qkv), size * 4 * batch * heads * seq * head,
                2 * 2 * batch * heads * seq * seq * head))
    if device == "cuda":
        # Attention as one op: eager and Inductor call PyTorch's fastest
        # fused kernel for it; Kiln traces the memory-efficient kernel's op
        # and computes it as products around a softmax, or, with
        # `attention-kernels` (the 'kiln own' column), in its own kernel.
        def sdpa(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

        def causal_sdpa(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

        for (batch, heads, seq, head), causal in [((16, 16, 1024, 64), False),
                                                  ((16, 16, 1024, 64), True),
                                                  ((8, 32, 4096, 128), False),
                                                  ((8, 32, 4096, 128), True)]:
            qkv = [(batch, heads, seq, head)] * 3
            flops = 2 * 2 * batch * heads * seq * seq * head // (2 if causal else 1)
            out.append((f"SDPA {batch}x{heads}x{seq}x{head}{' causal' if causal else ''} {tag}",
                        causal_sdpa if causal else sdpa, make(gemm_dtype, qkv),
                        size * 4 * batch * heads * seq * head, flops))

        # An additive mask per batch and query, shared by the heads (Kiln's
        # kernel adds it in its scores region).
        def masked_sdpa(q, k, v, mask):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)

        batch, heads, seq, head = 16, 16, 1024, 64
        out.append((f"SDPA {batch}x{heads}x{seq}x{head} mask {tag}", masked_sdpa,
                    make(gemm_dtype, [(batch, heads, seq, head)] * 3 + [(batch, 1, seq, seq)]),
                    size * (4 * batch * heads * seq * head + batch * seq * seq),
                    2 * 2 * batch * heads * seq * seq * head))
    return out


def timeit(fn, args, device, warmup=10, iters=50):
    for _ in range(warmup):
        fn(*args)
    if device == "cuda":
        # Calls are queued back to back, each between its own pair of events,
        # and nothing waits until the last: the host's per-call work overlaps
        # the previous call's kernels, so the times are the device's (what a
        # model's stream of calls sees), not the host's jitter.
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True),
                   torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
        for start, end in events:
            start.record()
            fn(*args)
            end.record()
        torch.cuda.synchronize()
        return statistics.median(start.elapsed_time(end) for start, end in events)
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def matches(fn, inputs, got, sums):
    """Whether Kiln's result is right: f32 results close to eager's; f16/bf16
    results (computed in f32 and rounded once, where eager rounds after every
    op) within about one rounding of eager run in f32 and rounded. Matrix
    products (`sums`) sum in another order than eager's library: their
    largest error against a float64 reference may be at most twice eager's
    own."""
    if isinstance(got, (tuple, list)):
        return all(matches(lambda *a, i=i: fn(*a)[i], inputs, result, sums)
                   for i, result in enumerate(got))
    dtype = got.dtype
    if sums:
        reference = fn(*[t.double() for t in inputs])
        kiln_error = (got.double() - reference).abs().max().item()
        eager_error = (fn(*inputs).double() - reference).abs().max().item()
        return kiln_error <= 2 * eager_error + 1e-6 * reference.abs().max().item()
    if dtype in (torch.float16, torch.bfloat16):
        reference = fn(*[t.float() for t in inputs]).to(dtype)
        rtol = 8e-3 if dtype == torch.bfloat16 else 1e-3
        return torch.allclose(got.float(), reference.float(), rtol=rtol, atol=1e-5)
    return torch.allclose(got, fn(*inputs), rtol=1e-5, atol=1e-6)


def copy_bandwidth(device):
    """Bytes per second of a copy of 1 GiB within `device`'s memory (read
    and written), measured as the workloads are: the floor's rate."""
    source = torch.empty(2**28, dtype=torch.float32, device=device).normal_()
    dest = torch.empty_like(source)
    ms = timeit(lambda a, b: b.copy_(a), [source, dest], device)
    return 2 * source.numel() * source.element_size() / (ms * 1e-3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--json", help="write all measurements here")
    parser.add_argument("--no-inductor", action="store_true", help="skip torch.compile")
    parser.add_argument("--only", default="",
                        help="run the workloads whose names contain this text")
    parser.add_argument("--max-autotune", action="store_true",
                        help="also time Inductor's max-autotune mode on the matrix products")
    parser.add_argument("--own-options", type=json.loads, default={},
                        help="JSON object of more Kiln options for its own tensor-core "
                             "products (the 'kiln own' column), e.g. "
                             "'{\"warpgroup-tile-n\": 128}'")
    args = parser.parse_args()
    device = args.device

    results = []
    for name, fn, factory, ideal_bytes, *flops in workloads(device):
        if args.only not in name:
            continue
        inputs = factory()
        start = time.perf_counter()
        compiled = kiln.compile(fn, inputs)
        kiln_compile_s = time.perf_counter() - start
        got = compiled(*inputs)
        if device == "cuda":
            torch.cuda.synchronize()
        ok = matches(fn, inputs, got, bool(flops) or getattr(fn, "sums", False))
        row = {"workload": name, "device": device, "kiln_correct": ok,
               "kiln_compile_s": kiln_compile_s, "ideal_bytes": ideal_bytes}
        if flops:
            row["flops"] = flops[0]
        row["eager_ms"] = timeit(fn, inputs, device)
        row["kiln_ms"] = timeit(compiled, inputs, device)
        if flops and device == "cuda":
            # Kiln's own tensor-core products, epilogues fused into them, and
            # its own attention kernel.
            own = kiln.compile(fn, inputs,
                               options={"matmul-kernels": True, "attention-kernels": True,
                                        **args.own_options})
            row["kiln_tc_correct"] = matches(fn, inputs, own(*inputs), True)
            row["kiln_tc_ms"] = timeit(own, inputs, device)
        if not args.no_inductor:
            torch._dynamo.reset()
            inductor = torch.compile(fn)
            start = time.perf_counter()
            inductor(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()
            row["inductor_compile_s"] = time.perf_counter() - start
            row["inductor_ms"] = timeit(inductor, inputs, device)
            if flops and args.max_autotune:
                torch._dynamo.reset()
                tuned = torch.compile(fn, mode="max-autotune-no-cudagraphs")
                tuned(*inputs)
                row["inductor_tuned_ms"] = timeit(tuned, inputs, device)
        results.append(row)

    # The floor's rate, on the CPU as on the GPU: memory-bound rows report
    # their share of it.
    copy_rate = copy_bandwidth(device)
    print(f"torch {torch.__version__}, {platform.node()}, device {device}"
          + (f" ({torch.cuda.get_device_name()})" if device == "cuda" else ""))
    header = f"{'workload':38} {'eager ms':>9} {'inductor ms':>12} {'kiln ms':>8} " \
             f"{'kiln/eager':>10} {'kiln/ind.':>9} {'kiln rate':>18} {'ok':>3}"
    print(header)
    for r in results:
        ind = r.get("inductor_ms")
        if "flops" in r:
            rate = f"{r['flops'] / (r['kiln_ms'] * 1e-3) / 1e12:6.1f} TF/s"
        else:
            rate = f"{r['ideal_bytes'] / (r['kiln_ms'] * 1e-3) / 1e9:6.0f} GB/s"
            if copy_rate:
                rate += f" ({r['ideal_bytes'] / (r['kiln_ms'] * 1e-3) / copy_rate:4.0%})"
        ratio = f"{ind / r['kiln_ms']:8.2f}x" if ind else "        -"
        print(f"{r['workload']:38} {r['eager_ms']:9.3f} "
              f"{(f'{ind:12.3f}' if ind else '           -')} {r['kiln_ms']:8.3f} "
              f"{r['eager_ms'] / r['kiln_ms']:9.2f}x "
              f"{ratio} {rate:>18} "
              f"{'yes' if r['kiln_correct'] else 'NO':>3}")
    products = [r for r in results if "kiln_tc_ms" in r]
    if products:
        print(f"\n{'matrix products':38} {'eager':>13} {'inductor':>13} {'max-autotune':>13} "
              f"{'kiln cuBLASLt':>13} {'kiln own':>13} {'own ok':>6}   (ms, TF/s)")
        for r in products:
            cells = []
            for key in ("eager_ms", "inductor_ms", "inductor_tuned_ms", "kiln_ms", "kiln_tc_ms"):
                ms = r.get(key)
                cells.append(f"{ms:6.3f} {r['flops'] / (ms * 1e-3) / 1e12:6.1f}" if ms
                             else f"{'-':>13}")
            print(f"{r['workload']:38} " + " ".join(cells)
                  + f" {'yes' if r['kiln_tc_correct'] else 'NO':>6}")
    if copy_rate:
        print(f"(a copy of 1 GiB measured {copy_rate / 1e9:.0f} GB/s in this run; "
              "GB/s counts each input read once and each output written once, with the "
              "share of the copy's rate; TF/s counts the products' flops)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "copy_bytes_per_s": copy_rate,
                       "results": results}, f, indent=1)
    return 0 if all(r["kiln_correct"] and r.get("kiln_tc_correct", True)
                    for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
