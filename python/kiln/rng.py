"""Random ops with run-time seeds.

Kiln draws random numbers from a counter-based generator (Philox4x32-10):
an element's sample is a function of a seed, the op's stream (``offset``)
and the element's index, so compiled code can compute it anywhere, in any
order. The seed is a zero-dim int64 tensor that the graph reads like any
input, drawn from PyTorch's generator at every call (draw_seed), so that
each call samples anew and ``torch.manual_seed`` makes runs repeatable.

In an FX graph, a random ATen op whose fx op takes a seed
(``aten.native_dropout``, ``aten.rand``, ...) becomes a call of ``seeded``::

    seeded("aten.native_dropout.default", seed, 0, x, 0.1, True)

which names the op (by name: FX graphs print their arguments as code), the
seed node and the stream; run by PyTorch (as a fallback), it calls the op as
it was, on PyTorch's own generator.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

import torch
import torch.fx

from kiln._fx_signatures import OPS as _FX_SIGNATURES


def seeded(op: str, seed: torch.Tensor, offset: int, *args: Any, **kwargs: Any) -> Any:
    """``op(*args, **kwargs)``: the random op named `op` that Kiln draws from
    `seed` in stream `offset`. PyTorch runs it on its own generator."""
    del seed, offset
    return RANDOM_OPS[op](*args, **kwargs)


def draw_seed(device: str) -> torch.Tensor:
    """A fresh seed for the random ops of a graph: a zero-dim int64 tensor
    on `device`, from PyTorch's generator for that device."""
    info = torch.iinfo(torch.int64)
    return torch.randint(info.min, info.max, (), dtype=torch.int64, device=device)


def _random_ops() -> Dict[str, Any]:
    """The ATen overloads whose fx ops take a seed operand, by name."""
    ops = {}
    for name, (_, _, args, _) in _FX_SIGNATURES.items():
        if any(kind == "operand" and arg == "seed" for kind, arg, _ in args):
            _, packet, overload = name.split(".")
            op = getattr(getattr(torch.ops.aten, packet, None), overload, None)
            if op is not None:
                ops[name] = op
    return ops


RANDOM_OPS: Dict[str, Any] = _random_ops()
_RANDOM_OVERLOADS = frozenset(RANDOM_OPS.values())


def aten_target(node: torch.fx.Node) -> Any:
    """The ATen op a node calls: its target, or a seeded call's op."""
    if node.op == "call_function" and node.target is seeded:
        return RANDOM_OPS[node.args[0]]
    return node.target


def seed_random_ops(gm: torch.fx.GraphModule,
                    make_seed: Callable[[torch.fx.Graph], torch.fx.Node]) -> bool:
    """Rewrites each random op of `gm` into a ``seeded`` call of a stream of
    its own (0, 1, ...) of one seed, which ``make_seed(graph)`` inserts (it
    is called once, if the graph has a random op). Returns whether it did."""
    graph = gm.graph
    random_nodes = [n for n in graph.nodes
                    if n.op == "call_function" and n.target in _RANDOM_OVERLOADS]
    if not random_nodes:
        return False
    seed = make_seed(graph)
    for offset, node in enumerate(random_nodes):
        node.args = (str(node.target), seed, offset, *node.args)
        node.target = seeded
    gm.recompile()
    return True
