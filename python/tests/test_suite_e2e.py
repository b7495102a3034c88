"""The import suite, compiled and run: every case that Kiln lowers matches
eager PyTorch; every other case is refused with a located error that names
the first op without a lowering (never a crash, never a wrong answer).

RUNS lists the cases that lower today, so that one that stops lowering
fails here; a case that starts lowering fails too, until it joins RUNS.
"""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.diagnostics import KilnError  # noqa: E402
from suite_models import CASES  # noqa: E402
from e2e_support import DEVICES, poisoned_like  # noqa: E402

RUNS = {
    "activations", "adaptive_max_pooling_index_add_linspace", "advanced_indexing_positions",
    "affine_grids", "attention_block", "batch_norm_1d", "batched_matmul_bias",
    "attention_with_padding_mask", "bfloat16_linear", "causal_attention_mask", "chunk_and_unbind",
    "comparisons_and_where", "complex_arithmetic", "contiguous_after_transpose",
    "conv1d_and_transposed_conv", "conv_bn_relu", "convolution_variants",
    "creation_ops", "cumulative_sum_prod", "dropout_eval", "dtype_casts", "elementwise_math",
    "embedding_bags", "embedding_lookup", "embedding_positional", "expand_repeat_cat_stack",
    "flip_roll_pad", "gather_scatter", "group_norm", "gru", "gru_cell_gates", "index_put",
    "index_select_and_advanced_indexing",
    "integer_and_promotion_edges", "integer_arithmetic", "layer_norm", "losses", "lstm",
    "masked_fill", "masks_and_boolean_indexing", "matmul_variants", "mixed_promotion", "mlp", "more_losses",
    "mlp_with_parameters_as_inputs", "normalization_variants", "one_hot_by_comparison",
    "padding_and_resampling", "parametric_activations", "pooling", "pooling_variants", "reductions_logical",
    "reductions_logsumexp_norm",
    "reduction_arguments", "reductions_max_min", "reductions_sum_mean_prod",
    "reductions_var_std", "residual_block", "rms_norm",
    "scalar_rsub_and_division", "slicing", "small_cnn", "softmax_and_log_softmax",
    "scatter_views", "sort_and_topk",
    "transformer_layer", "upsample_nearest_and_bilinear",
    "resampling_of_sequences_volumes_and_bicubic", "views_and_reshapes",
    "writes_through_boolean_masks",
    "zero_dim_and_empty_tensors", "as_strided_of_a_value",
}

# (rtol, atol) against eager: matrix products and reductions sum in another
# order; bf16 results may differ by a rounding.
TOLERANCES = {
    torch.float32: (1e-4, 1e-4),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 5e-2),
    torch.complex64: (1e-4, 1e-4),
    torch.complex128: (1e-10, 1e-10),
}



IMPORTED = sorted(name for name, case in CASES.items() if case.xfail is None)


def on_device(fn, inputs, device):
    if isinstance(fn, torch.nn.Module):
        fn = fn.to(device)
    return fn, [t.to(device) for t in inputs]


def fresh_like(tensor, generator):
    """Other inputs of the same kind: normal floats (non-negative where the
    example's are, as variances must be), integers in the example's range
    (indices stay valid, divisors non-zero)."""
    if tensor.dtype.is_floating_point:
        value = torch.randn(tensor.shape, generator=generator)
        if tensor.numel() and bool((tensor >= 0).all()):
            value = value.abs()
        return value.to(tensor.dtype)
    if tensor.dtype.is_complex:
        return torch.randn(tensor.shape, dtype=tensor.dtype, generator=generator)
    if tensor.dtype == torch.bool:
        return torch.randint(0, 2, tensor.shape, generator=generator).bool()
    if not tensor.numel():
        return tensor.clone()
    low, high = int(tensor.min()), int(tensor.max()) + 1
    return torch.randint(low, high, tensor.shape, generator=generator).to(tensor.dtype)


def assert_matches(got, expected):
    """Kiln's results are eager's: dtypes and shapes exactly, values within
    the dtype's tolerance (exactly for integers and bools)."""
    assert len(got) == len(expected)
    for g, w in zip(got, expected):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype in TOLERANCES:
            rtol, atol = TOLERANCES[w.dtype]
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol)
        else:
            assert torch.equal(g, w)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", IMPORTED)
def test_suite_case(name, device, tmp_path):
    if name not in RUNS and device != "cpu":
        pytest.skip("refused on every device alike (functions may hold CPU tensors); "
                    "checked on the CPU")
    fn, example = CASES[name].make()
    fn, example = on_device(fn, example, device)
    if name not in RUNS:
        with pytest.raises(KilnError, match=r"error: kiln-fx-to-loop: no lowering for 'fx\.\w+'"):
            kiln.compile(fn, example, cache_dir=tmp_path)
        return
    compiled = kiln.compile(fn, example, cache_dir=tmp_path)
    generator = torch.Generator().manual_seed(1)
    inputs = [fresh_like(t.cpu(), generator).to(device) for t in example]
    import torch.utils._pytree as pytree

    with torch.no_grad():
        expected = pytree.tree_flatten(fn(*inputs))[0]
    # Results land in poisoned buffers, so that unwritten elements show.
    got = compiled.artifact(*inputs, *compiled.constants,
                            out=[poisoned_like(e) for e in expected])
    if device == "cuda":
        torch.cuda.synchronize()
    assert_matches(got, expected)


HAS_DYNAMO = hasattr(torch, "compile")


@pytest.mark.skipif(not HAS_DYNAMO, reason="torch.compile needs torch 2.x")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(RUNS))
def test_suite_case_through_dynamo(name, device, tmp_path):
    """The cases that lower, captured by TorchDynamo and AOTAutograd (torch
    2.x) instead of make_fx: `torch.compile(backend="kiln")` with fallback
    an error compiles every op of each (library calls allowed) and matches
    eager on fresh inputs."""
    import torch.utils._pytree as pytree

    import kiln.backend  # noqa: F401  (registers "kiln")

    fn, example = CASES[name].make()
    fn, example = on_device(fn, example, device)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="kiln",
                             options={"cache_dir": tmp_path, "fallback": "error"})
    generator = torch.Generator().manual_seed(1)
    inputs = [fresh_like(t.cpu(), generator).to(device) for t in example]
    with torch.no_grad():
        expected = pytree.tree_flatten(fn(*inputs))[0]
        got = pytree.tree_flatten(compiled(*inputs))[0]
    assert_matches(got, expected)


def test_cases_that_run_move_to_the_device():
    """A case that runs on every device holds its modules and tensors as an
    nn.Module does, which on_device moves, not in a function's closure."""
    for name in sorted(RUNS):
        fn, _ = CASES[name].make()
        if isinstance(fn, torch.nn.Module):
            continue
        held = [type(cell.cell_contents).__name__ for cell in fn.__closure__ or ()
                if isinstance(cell.cell_contents, (torch.nn.Module, torch.Tensor))]
        assert not held, f"suite case {name} holds {held} in a closure"
