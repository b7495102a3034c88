"""Attention's training step on CUDA: forward and backward.

Kiln runs a graph of the flash-attention op and its gradient (the ops of a
training step's attention): its forward kernel storing the logsumexp, the
delta reduction and its two gradient kernels. Eager and Inductor run
scaled_dot_product_attention and its autograd backward (PyTorch's fastest
fused kernels). Each shape gets three rows: the forward alone, the backward
alone (from the forward's saved outputs) and the whole step; Inductor compiles
the step. Same inputs, same run; TF/s count the forward's 4·B·H·L·S·E flops
and the backward's 10·B·H·L·S·E (half of both for causal rows).

    PYTHONPATH=python python3 bench/attention_gradients.py [--kiln-options JSON]
"""

import argparse
import json
import sys

import torch

from bench import timeit
from kiln.compiler import compile_graph_text
from kiln.runtime import Artifact

SHAPES = [((16, 16, 1024, 64), False), ((16, 16, 1024, 64), True),
          ((8, 32, 4096, 128), False), ((8, 32, 4096, 128), True)]


def graph_texts(batch, heads, seq, head, causal):
    """The step's graph, and its forward and backward alone."""
    q = f"tensor<{batch}x{heads}x{seq}x{head}xbf16>"
    lse = f"tensor<{batch}x{heads}x{seq}xf32>"
    flag = "true" if causal else "false"
    forward = (f"fx.scaled_dot_product_flash_attention_for_cpu %q, %k, %v {{is_causal = {flag}}}"
               f" : ({q}, {q}, {q}) -> ({q}, {lse})")
    backward = (f"fx.scaled_dot_product_flash_attention_for_cpu_backward %do, %q, %k, %v, %o, %lse"
                f" {{dropout_p = 0.0 : f64, is_causal = {flag}}}"
                f" : ({q}, {q}, {q}, {q}, {q}, {lse}) -> ({q}, {q}, {q})")
    step = f"""fx.graph @forward(%q: {q}, %k: {q}, %v: {q}, %do: {q}) -> ({q}, {q}, {q}, {q}) {{
  %o, %lse = {forward}
  %1:3 = {backward}
  fx.output %o, %1#0, %1#1, %1#2 : {q}, {q}, {q}, {q}
}}
"""
    forward_only = f"""fx.graph @forward(%q: {q}, %k: {q}, %v: {q}) -> ({q}, {lse}) {{
  %o, %lse = {forward}
  fx.output %o, %lse : {q}, {lse}
}}
"""
    backward_only = f"""fx.graph @forward(%do: {q}, %q: {q}, %k: {q}, %v: {q}, %o: {q}, %lse: {lse}) -> ({q}, {q}, {q}) {{
  %1:3 = {backward}
  fx.output %1#0, %1#1, %1#2 : {q}, {q}, {q}
}}
"""
    return step, forward_only, backward_only


def eager_backend(q, k, v, causal):
    """The fused kernel PyTorch picks for these inputs (flash, cuDNN...)."""
    try:
        from torch.nn.attention import SDPBackend
        return SDPBackend(torch._fused_sdp_choice(q, k, v, is_causal=causal)).name
    except (ImportError, AttributeError, TypeError, ValueError) as error:
        return f"unknown ({error})"


def relative_error(got, want):
    return ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--kiln-options", type=json.loads, default={},
                        help='Kiln\'s pipeline options as JSON, e.g. '
                             '\'{"warpgroup-attention-gradients": true}\'')
    parser.add_argument("--only", default="",
                        help="time only the shapes whose name (16x16x1024x64 causal, say) "
                             "contains this")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'workload':38} {'eager ms':>9} {'inductor ms':>12} {'kiln ms':>8} "
          f"{'kiln/eager':>10} {'kiln/ind.':>9} {'kiln TF/s':>9} {'eager TF/s':>10} "
          f"{'error':>8}")
    failed = False
    for (batch, heads, seq, head), causal in SHAPES:
        if args.only not in f"{batch}x{heads}x{seq}x{head}{' causal' if causal else ''}":
            continue
        generator = torch.Generator().manual_seed(seq + causal)
        inputs = [torch.randn(batch, heads, seq, head, generator=generator)
                  .to("cuda", torch.bfloat16) for _ in range(4)]
        step_text, forward_text, backward_text = graph_texts(batch, heads, seq, head, causal)
        kiln_step, kiln_forward, kiln_backward = (
            Artifact(compile_graph_text(text, target="cuda", options=args.kiln_options))
            for text in (step_text, forward_text, backward_text))

        def step(q, k, v, do):
            leaves = [t.detach().requires_grad_() for t in (q, k, v)]
            out = torch.nn.functional.scaled_dot_product_attention(*leaves,
                                                                   is_causal=causal)
            return (out, *torch.autograd.grad(out, leaves, do))

        def forward(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

        # The backward alone: autograd's graph is kept, so each call runs only
        # the gradient kernels (and Kiln's delta reduction).
        leaves = [t.detach().requires_grad_() for t in inputs[:3]]
        eager_out = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=causal)

        def backward(do):
            return torch.autograd.grad(eager_out, leaves, do, retain_graph=True)

        q, k, v, do = inputs
        print(f"# eager's SDPA backend here: {eager_backend(q, k, v, causal)}", flush=True)
        out, lse = kiln_forward(q, k, v)
        phases = [("forward", forward, kiln_forward, (q, k, v), 4),
                  ("backward", backward, kiln_backward, (do, q, k, v, out, lse), 10),
                  ("step", step, kiln_step, inputs, 14)]
        for phase, eager_fn, kiln_fn, kiln_inputs, flops_per in phases:
            eager_inputs = (do,) if phase == "backward" else kiln_inputs
            got = kiln_fn(*kiln_inputs)
            want = eager_fn(*eager_inputs)
            if phase == "forward":
                got, want = got[:1], (want,)
            error = max(relative_error(g, w) for g, w in zip(got, want))
            failed |= error > 4e-2
            eager_ms = timeit(eager_fn, eager_inputs, "cuda")
            kiln_ms = timeit(kiln_fn, kiln_inputs, "cuda")
            inductor_ms = None
            if phase == "step" and not args.no_inductor:
                torch._dynamo.reset()
                inductor = torch.compile(step)
                inductor(*inputs)
                inductor_ms = timeit(inductor, inputs, "cuda")
            flops = flops_per * batch * heads * seq * seq * head // (2 if causal else 1)
            name = f"SDPA {phase} {batch}x{heads}x{seq}x{head}{' causal' if causal else ''}"
            ratio = f"{inductor_ms / kiln_ms:8.2f}x" if inductor_ms else "        -"
            print(f"{name:38} {eager_ms:9.3f} "
                  f"{(f'{inductor_ms:12.3f}' if inductor_ms else '           -')} {kiln_ms:8.3f} "
                  f"{eager_ms / kiln_ms:9.2f}x {ratio} {flops / kiln_ms / 1e9:9.1f} "
                  f"{flops / eager_ms / 1e9:10.1f} {error:8.1e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
