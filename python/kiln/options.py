"""Kiln's options: one set for ``torch.compile(backend="kiln", options=...)``
and ``kiln.compile(..., options=...)``.

Each key of the dict is either a field of Options (``fallback``,
``cuda_graphs``, ...; documented with its default in docs/TorchCompile.md)
or an option of the target's pipeline (``openmp``, ``block-size``,
``device-asserts``, as ``kiln-compile --pipeline-options`` takes them),
which may also be given together under ``pipeline_options``. Every key is
checked before anything is captured or compiled, and a misspelt one names
the closest option of either kind.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields as dataclass_fields, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from kiln.compiler import check_pipeline_options

__all__ = ["DEFAULT_CUDA_GRAPH_LIMIT", "DEFAULT_LIBRARY_OPS", "KILN_COMPILE_OPTIONS", "Options"]

# Ops that run in PyTorch's vendor-library kernels by default (library_ops):
# cuDNN's and oneDNN's convolutions, and CUDA's fused attention. Kiln lowers
# the convolutions and the memory-efficient kernel and its gradient (as its
# own flash-attention kernels, still slower than PyTorch's; without that
# kernel among the library ops the backend traces scaled_dot_product_attention
# as it); cuDNN's and flash attention it does not (they are not fx ops), but
# a compiler calls such kernels by choice, as Inductor does. On CUDA,
# attention written out (products around a softmax) becomes
# scaled_dot_product_attention while that op is a library op
# (kiln.attention).
DEFAULT_LIBRARY_OPS = (
    "aten.convolution.default", "aten.convolution_backward.default",
    "aten._scaled_dot_product_efficient_attention.default",
    "aten._scaled_dot_product_efficient_attention_backward.default",
    "aten._scaled_dot_product_cudnn_attention.default",
    "aten._scaled_dot_product_cudnn_attention_backward.default",
    "aten._scaled_dot_product_flash_attention.default",
    "aten._scaled_dot_product_flash_attention_backward.default",
    "aten.scaled_dot_product_attention.default")

# Sets of symbolic sizes a graph records as CUDA graphs before the rest run
# without graphs (cuda_graph_limit): every set keeps its own graph and
# buffers in the pool.
DEFAULT_CUDA_GRAPH_LIMIT = 8

# Options that mean something to kiln.compile, which compiles a whole
# function into one artifact (no PyTorch ops between regions, no CUDA graphs
# of its own): the others are the torch.compile backend's.
KILN_COMPILE_OPTIONS = ("pipeline_options", "cache_dir")


@dataclass(frozen=True)
class Options:
    """How Kiln compiles: each field is an option, documented with its
    default in docs/TorchCompile.md."""

    fallback: str = "eager"
    pipeline_options: Optional[Mapping[str, Any]] = None
    cache_dir: Optional[Path] = None
    library_ops: Sequence[str] = DEFAULT_LIBRARY_OPS
    channels_last: Optional[bool] = None
    check_numerics: Any = False
    check_tolerance: Optional[float] = None
    check_granularity: str = "regions"
    cuda_graphs: bool = False
    cuda_graph_limit: int = DEFAULT_CUDA_GRAPH_LIMIT
    clone_outputs: bool = False
    merge_products: bool = True
    direct_convolutions: bool = False
    cudnn_in_regions: Any = "auto"
    recompute: bool = True
    pad_products: bool = True

    @staticmethod
    def parse(options: Optional[Mapping[str, Any]]) -> "Options":
        """Options from an ``options`` dict: Options' fields by name, and
        every other key an option of the target's pipeline (check_pipeline
        checks those against the target). Values of the fields are checked
        here; a wrong value is an error, not silently ignored."""
        options = dict(options or {})
        names = {f.name for f in dataclass_fields(Options)}
        fields = {key: value for key, value in options.items() if key in names}
        loose = {key: value for key, value in options.items() if key not in names}
        if loose:
            given = dict(fields.get("pipeline_options") or {})
            both = sorted(set(given) & set(loose))
            if both:
                raise ValueError(f"Kiln pipeline options {both} given twice: at the top "
                                 "level and in pipeline_options")
            fields["pipeline_options"] = {**given, **loose}
        pipeline = fields.get("pipeline_options")
        if pipeline is not None and not isinstance(pipeline, Mapping):
            raise ValueError("Kiln option pipeline_options: expected a dict of the "
                             f"target pipeline's options, not {pipeline!r}")
        parsed = Options(**fields)
        if parsed.fallback not in ("eager", "error"):
            raise ValueError(f"Kiln option fallback={parsed.fallback!r}: "
                             "expected 'eager' or 'error'")
        if parsed.channels_last not in (None, True, False):
            raise ValueError("Kiln option channels_last: expected None, True or "
                             f"False, not {parsed.channels_last!r}")
        if parsed.check_numerics not in (False, "warn", "error"):
            raise ValueError(f"Kiln option check_numerics={parsed.check_numerics!r}: "
                             "expected False, 'warn' or 'error'")
        if parsed.check_granularity not in ("regions", "ops"):
            raise ValueError("Kiln option check_granularity="
                             f"{parsed.check_granularity!r}: expected 'regions' or 'ops'")
        tolerance = parsed.check_tolerance
        if tolerance is not None and (isinstance(tolerance, bool) or
                                      not isinstance(tolerance, (int, float)) or
                                      not tolerance >= 0):
            raise ValueError(f"Kiln option check_tolerance={tolerance!r}: "
                             "expected None or a number of at least 0")
        if parsed.cudnn_in_regions not in (True, False, "auto"):
            raise ValueError("Kiln option cudnn_in_regions: expected True, False or "
                             f"'auto', not {parsed.cudnn_in_regions!r}")
        for flag in ("cuda_graphs", "clone_outputs", "merge_products", "direct_convolutions",
                     "recompute", "pad_products"):
            if getattr(parsed, flag) not in (True, False):
                raise ValueError(f"Kiln option {flag}: expected True or False, not "
                                 f"{getattr(parsed, flag)!r}")
        limit = parsed.cuda_graph_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"Kiln option cuda_graph_limit={limit!r}: expected an "
                             "integer of at least 1")
        if isinstance(parsed.library_ops, str) or not all(
                isinstance(op, str) for op in parsed.library_ops):
            raise ValueError("Kiln option library_ops: expected a list of ATen "
                             f"op names, not {parsed.library_ops!r}")
        # A list of the default ops is the default.
        return replace(parsed, library_ops=tuple(parsed.library_ops))

    def check_pipeline(self, target: str) -> None:
        """Raises ValueError unless the pipeline options are options of
        `target`'s pipeline ("cpu" or "cuda"), naming the closest pipeline
        option to a misspelt one, or the closest of Options' fields."""
        try:
            check_pipeline_options(target, self.pipeline_options)
        except ValueError as error:
            names = [f.name for f in dataclass_fields(Options)]
            hints = []
            for key, value in (self.pipeline_options or {}).items():
                close = difflib.get_close_matches(key, names, n=1, cutoff=0.75)
                if not close:
                    continue
                try:
                    check_pipeline_options(target, {key: value})
                except ValueError:
                    hints.append(f"is {key!r} the Kiln option {close[0]!r}?")
            raise ValueError("; ".join([str(error), *hints])) from None

    def for_kiln_compile(self, cache_dir: Optional[Path]) -> "Options":
        """These options as kiln.compile takes them (with its `cache_dir`
        argument): options of the torch.compile backend alone, given other
        values than their defaults, are errors."""
        default = Options()
        backend_only = sorted(
            f.name for f in dataclass_fields(Options)
            if f.name not in KILN_COMPILE_OPTIONS
            and getattr(self, f.name) != getattr(default, f.name))
        if backend_only:
            raise ValueError(f"Kiln options {backend_only} apply to torch.compile's "
                             "backend, not to kiln.compile (which compiles the whole "
                             "function into one artifact)")
        if cache_dir is not None and self.cache_dir is not None and \
                Path(cache_dir) != Path(self.cache_dir):
            raise ValueError("kiln.compile: cache_dir given twice, as an argument and "
                             "as an option")
        return replace(self, cache_dir=cache_dir if cache_dir is not None else self.cache_dir)
