"""Kiln's own decompositions of ATen ops that the fx dialect lacks and that
torch 1.13 does not decompose (or decomposes into something that does not
trace): the gradients of resampling, grid sampling and padding, adaptive
max pooling, affine grids, embedding bags and index_add. Each is written in
ops the fx dialect has; kiln.importer adds them to DECOMPOSITIONS.

Resampling and padding read each output position from input positions that
depend on that position's index along one dimension only, so their gradients
are separable: along each dimension in turn, the gradient's slices are
summed into the input positions they were read from (``index_add``, a
``scatter_add``).
"""

import functools
import operator
import warnings
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

aten = torch.ops.aten


def index_add(x: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor,
              alpha: float = 1) -> torch.Tensor:
    """Tensor.index_add as a scatter_add of `source` at `index` broadcast
    over its other dimensions (torch 1.13's decomposition does not trace)."""
    if x.dim() == 0:
        return index_add(x.reshape(1), 0, index, source.reshape(-1), alpha).reshape(())
    dim %= x.dim()
    shape = [1] * source.dim()
    shape[dim] = -1
    positions = index.long().view(shape).expand(source.shape)
    return x.scatter_add(dim, positions, source * alpha if alpha != 1 else source)


def _sum_into(grad: torch.Tensor, dim: int, positions: torch.Tensor, size: int,
              weights: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The gradient of reading, along `dim`, input position ``positions[o]``
    (of `size`) at each output position o (times ``weights[o]``): each
    slice of `grad` summed into the position it was read from."""
    if weights is not None:
        shape = [1] * grad.dim()
        shape[dim] = -1
        grad = grad * weights.view(shape)
    result_shape = list(grad.shape)
    result_shape[dim] = size
    return index_add(grad.new_zeros(result_shape), dim, positions, grad)


def _scale(scales: Optional[Sequence[Optional[float]]], index: int) -> Optional[float]:
    return scales[index] if scales is not None else None


def _nearest_sources(out_size: int, in_size: int, scale: Optional[float],
                     device: torch.device) -> torch.Tensor:
    """The input position that nearest resampling reads at each output
    position, as PyTorch computes it on `device`: floor(o * s) in f32, s
    being 1/scale when the caller gave a scale factor and in/out otherwise,
    at most in - 1; the CPU kernel reads o when out == in and o / 2 when
    out == 2 in, whatever the scale."""
    out = torch.arange(out_size, device=device)
    if torch.device(device).type == "cpu" and out_size in (in_size, 2 * in_size):
        return out if out_size == in_size else out // 2
    step = 1.0 / scale if scale else in_size / out_size
    return (out.float() * step).floor().long().clamp(max=in_size - 1)


def _source_coordinates(out_size: int, in_size: int, align_corners: bool,
                        scale: Optional[float], like: torch.Tensor) -> torch.Tensor:
    """Where each output position reads along one dimension, as PyTorch
    computes it (area_pixel_compute_source_index), in f64 for f64 `like`
    and f32 otherwise, before linear modes clamp it at 0."""
    dtype = torch.float64 if like.dtype == torch.float64 else torch.float32
    out = torch.arange(out_size, device=like.device, dtype=dtype)
    if align_corners:
        return out * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    step = 1.0 / scale if scale else in_size / out_size
    return (out + 0.5) * step - 0.5


# The input positions that one output position reads along one dimension
# and their weights: [(positions, weights)] over the output positions.
Taps = List[Tuple[torch.Tensor, torch.Tensor]]


def _linear_taps(out_size: int, in_size: int, align_corners: bool,
                 scale: Optional[float], like: torch.Tensor) -> Taps:
    """The two input positions that linear resampling reads at each output
    position and their weights; where the sizes are equal, the position
    itself, whatever the scale (PyTorch's compute_source_index_and_lambda)."""
    if out_size == in_size:
        same = torch.arange(out_size, device=like.device)
        ones = torch.ones(out_size, device=like.device, dtype=like.dtype)
        return [(same, ones), (same, torch.zeros_like(ones))]
    source = _source_coordinates(out_size, in_size, align_corners, scale,
                                 like).clamp(min=0)
    low = source.floor().long()
    high = low + (low < in_size - 1).long()
    high_weight = source - low.to(source.dtype)
    return [(low, 1 - high_weight), (high, high_weight)]


def _cubic_taps(out_size: int, in_size: int, align_corners: bool,
                scale: Optional[float], like: torch.Tensor) -> Taps:
    """The four input positions that bicubic resampling reads at each output
    position, from one before the source coordinate's floor to two after,
    clamped to the input, with Keys' weights (A = -0.75), as PyTorch's."""
    source = _source_coordinates(out_size, in_size, align_corners, scale, like)
    floor = source.floor()
    t = source - floor
    a = -0.75

    def near(d: torch.Tensor) -> torch.Tensor:  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: torch.Tensor) -> torch.Tensor:  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far((1 - t) + 1))
    return [((floor.long() + offset).clamp(0, in_size - 1), weight)
            for offset, weight in zip((-1, 0, 1, 2), weights)]


def _resampling_backward(grad: torch.Tensor, input_size: Sequence[int],
                         read: Callable[[torch.Tensor, int, int, int, Optional[float]],
                                        torch.Tensor],
                         scales: Optional[Sequence[Optional[float]]]) -> torch.Tensor:
    """The gradient of a separable resampling of the trailing dimensions:
    `read` sums `grad` along one dimension into the input's size."""
    spatial = len(input_size) - 2
    for index in range(spatial):
        dim = grad.dim() - spatial + index
        grad = read(grad, dim, grad.shape[dim], input_size[dim], _scale(scales, index))
    return grad


def _nearest_backward(grad: torch.Tensor, output_size: Optional[Sequence[int]],
                      input_size: Sequence[int],
                      scale_factors: Optional[Sequence[float]]) -> torch.Tensor:
    def read(grad: torch.Tensor, dim: int, out_size: int, in_size: int,
             scale: Optional[float]) -> torch.Tensor:
        return _sum_into(grad, dim, _nearest_sources(out_size, in_size, scale, grad.device),
                         in_size)

    # CUDA's 2-d kernel copies the gradient through where no size changes,
    # whatever the scale factors.
    if grad.device.type == "cuda" and len(input_size) == 4 \
            and list(grad.shape) == list(input_size):
        return grad.clone()
    return _resampling_backward(grad, input_size, read, scale_factors)


def _interpolation_backward(taps: Callable[..., Taps]) -> Callable:
    """The gradient of linear (bilinear, trilinear) or bicubic resampling:
    along each dimension, the gradient times each tap's weight summed into
    the tap's positions."""
    def backward(grad: torch.Tensor, output_size: Optional[Sequence[int]],
                 input_size: Sequence[int], align_corners: bool,
                 scale_factors: Optional[Sequence[float]]) -> torch.Tensor:
        def read(grad: torch.Tensor, dim: int, out_size: int, in_size: int,
                 scale: Optional[float]) -> torch.Tensor:
            sums = [_sum_into(grad, dim, positions, in_size, weights.to(grad.dtype))
                    for positions, weights in taps(out_size, in_size, align_corners,
                                                   scale, grad)]
            return functools.reduce(operator.add, sums)

        # PyTorch's bicubic gradient passes through where no size changes.
        if taps is _cubic_taps and list(grad.shape) == list(input_size):
            return grad.clone()
        return _resampling_backward(grad, input_size, read, scale_factors)

    return backward


def _smooth_l1_loss_backward(grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                             reduction: int, beta: float) -> torch.Tensor:
    """The gradient of smooth_l1_loss (importer._smooth_l1_loss): the
    difference over `beta` where it is below `beta`, its sign elsewhere."""
    difference = x - y
    if beta == 0:
        slope = torch.sign(difference)
    else:
        slope = torch.where(difference.abs() < beta, difference / beta, torch.sign(difference))
    scale = grad / x.numel() if reduction == 1 else grad
    return slope * scale


def _with_scales(count: int) -> Callable:
    """An overload's arguments ``..., scales_h=None, scales_w=None`` as the
    ``.vec`` overload's ``scale_factors`` list."""
    def scales(values: Sequence[Optional[float]]) -> Optional[List[Optional[float]]]:
        values = list(values) + [None] * (count - len(values))
        return None if all(v is None for v in values) else values
    return scales


def _padding_backward(source: Callable[[torch.Tensor, int], torch.Tensor]) -> Callable:
    """The gradient of a padding whose output position o, `before` positions
    before the input along a dimension of n, reads ``source(o - before, n)``
    (reflection, replication): summed back along each padded dimension."""
    def backward(grad: torch.Tensor, input: torch.Tensor,
                 padding: Sequence[int]) -> torch.Tensor:
        # `padding` lists (before, after) pairs from the last dimension.
        for pair in range(len(padding) // 2):
            dim = grad.dim() - 1 - pair
            size = input.shape[dim]
            positions = torch.arange(grad.shape[dim], device=grad.device) - padding[2 * pair]
            grad = _sum_into(grad, dim, source(positions, size), size)
        return grad
    return backward


def _reflected(positions: torch.Tensor, size: int) -> torch.Tensor:
    """Positions reflected into [0, size) about the edges (not repeating
    them), as reflection padding reads."""
    positions = positions.abs()
    return torch.where(positions >= size, 2 * (size - 1) - positions, positions)


def _replicated(positions: torch.Tensor, size: int) -> torch.Tensor:
    return positions.clamp(0, size - 1)


def _adaptive_windows(in_size: int, out_size: int,
                      device: torch.device) -> Tuple[torch.Tensor, int]:
    """The input positions of adaptive pooling's windows, [out * K] for the
    longest window K: window o covers [floor(o*in/out), ceil((o+1)*in/out)),
    shorter ones repeating their last position (which changes no maximum,
    nor which element is its first)."""
    longest = max(-(-(o + 1) * in_size // out_size) - o * in_size // out_size
                  for o in range(out_size))
    # Computed by ops, not a constant: a tensor made from a list traces as a
    # detached constant.
    out = torch.arange(out_size, device=device)
    starts = out * in_size // out_size
    ends = ((out + 1) * in_size + out_size - 1) // out_size
    positions = torch.minimum(starts.unsqueeze(1) + torch.arange(longest, device=device),
                              ends.unsqueeze(1) - 1)
    return positions.reshape(-1), longest


def adaptive_max_pool2d(x: torch.Tensor,
                        output_size: Sequence[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    """Adaptive max pooling as a maximum over gathered windows: the values,
    and the position in the input's plane (h * W + w) of each window's
    first maximum."""
    *lead, height, width = x.shape
    out_h, out_w = output_size
    rows, row_window = _adaptive_windows(height, out_h, x.device)
    columns, column_window = _adaptive_windows(width, out_w, x.device)
    windows = x.index_select(-2, rows).index_select(-1, columns)
    windows = windows.view(*lead, out_h, row_window, out_w, column_window)
    windows = windows.transpose(-3, -2).reshape(*lead, out_h, out_w,
                                                row_window * column_window)
    values, which = windows.max(-1)
    row = rows.view(out_h, 1, row_window).expand(out_h, out_w, row_window)
    column = columns.view(1, out_w, column_window).expand(out_h, out_w, column_window)
    batch = [1] * len(lead)
    row = row.reshape(*batch, out_h, out_w, row_window).expand(*which.shape, row_window)
    column = column.reshape(*batch, out_h, out_w, column_window).expand(
        *which.shape, column_window)
    h = row.gather(-1, (which // column_window).unsqueeze(-1)).squeeze(-1)
    w = column.gather(-1, (which % column_window).unsqueeze(-1)).squeeze(-1)
    return values, h * width + w


def _adaptive_max_pool2d_backward(grad: torch.Tensor, input: torch.Tensor,
                                  indices: torch.Tensor) -> torch.Tensor:
    """Each window's gradient summed into the position of its maximum."""
    plane = input.shape[-2] * input.shape[-1]
    flat = grad.new_zeros(*input.shape[:-2], plane)
    return flat.scatter_add(-1, indices.flatten(-2), grad.flatten(-2)).view(input.shape)


def _grid_steps(steps: int, align_corners: bool, like: torch.Tensor) -> torch.Tensor:
    """Normalized coordinates of `steps` pixels in [-1, 1]: the centres of
    the corner pixels at -1 and 1 with `align_corners`, else their outer
    edges (PyTorch's linspace_from_neg_one)."""
    if steps <= 1:
        return torch.zeros(steps, dtype=like.dtype, device=like.device)
    coordinates = torch.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return coordinates if align_corners else coordinates * ((steps - 1) / steps)


def _base_grid(size: Sequence[int], align_corners: bool, like: torch.Tensor) -> torch.Tensor:
    """[1, pixels, k + 1]: the homogeneous coordinates (x, y[, z], 1) of each
    pixel of an image of `size`, x varying along the last dimension."""
    spatial = list(size[2:])
    axes = [_grid_steps(steps, align_corners, like) for steps in reversed(spatial)]
    shape = spatial + [1]
    coordinates = []
    for index, axis in enumerate(axes):
        view = [1] * len(spatial) + [1]
        view[len(spatial) - 1 - index] = -1
        coordinates.append(axis.view(view).expand(shape))
    coordinates.append(torch.ones(shape, dtype=like.dtype, device=like.device))
    return torch.cat(coordinates, -1).view(1, -1, len(spatial) + 1)


def affine_grid_generator(theta: torch.Tensor, size: Sequence[int],
                          align_corners: bool) -> torch.Tensor:
    """The sampling grid of affine transforms `theta` ([N, 2, 3], or [N, 3,
    4] for volumes): each pixel's homogeneous coordinates times theta
    transposed."""
    base = _base_grid(size, align_corners, theta)
    grid = base.expand(theta.shape[0], -1, -1).bmm(theta.transpose(1, 2))
    return grid.view(theta.shape[0], *size[2:], len(size) - 2)


def affine_grid(theta: torch.Tensor, size: Sequence[int],
                align_corners: Optional[bool] = None) -> torch.Tensor:
    """torch.nn.functional.affine_grid through affine_grid_generator above:
    PyTorch's argument checks and warnings, and a grid that autograd
    differentiates as the product it is."""
    if align_corners is None:
        warnings.warn("affine_grid: align_corners defaults to False (since PyTorch 1.3.0); "
                      "pass it explicitly")
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"affine_grid: theta must be floating point, got {theta.dtype}")
    _check_affine_grid(theta, size)
    if align_corners and min(size[2:]) == 1:
        warnings.warn("affine_grid: a grid of unit size with align_corners=True is "
                      "not an intended use (its behaviour changed in PyTorch 1.3.0)")
    elif min(size) <= 0:
        raise ValueError(f"affine_grid: sizes must be positive, got {list(size)}")
    return affine_grid_generator(theta, list(size), align_corners)


def _check_affine_grid(theta: torch.Tensor, size: Sequence[int]) -> None:
    """What affine_grid_generator requires of its arguments."""
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid: sizes are 4-d or 5-d, got {list(size)}")
    rows = len(size) - 2
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (rows, rows + 1):
        raise ValueError(f"affine_grid: expected theta of shape Nx{rows}x{rows + 1} for "
                         f"size {list(size)}, got {list(theta.shape)}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta holds {theta.shape[0]} transforms for a "
                           f"batch of {size[0]}")


def checked_affine_grid_generator(theta: torch.Tensor, size: Sequence[int],
                                  align_corners: bool) -> torch.Tensor:
    """torch.affine_grid_generator, its arguments checked."""
    _check_affine_grid(theta, size)
    return affine_grid_generator(theta, list(size), align_corners)


def affine_grid_generator_backward(grad: torch.Tensor, size: Sequence[int],
                                   align_corners: bool) -> torch.Tensor:
    """The gradient of affine_grid_generator's `theta`: the grid's gradient
    transposed times each pixel's homogeneous coordinates (PyTorch's own
    builds those coordinates by writes, which functionalization cannot
    differentiate)."""
    base = _base_grid(size, align_corners, grad)
    spatial = len(size) - 2
    flat = grad.reshape(grad.shape[0], -1, spatial)
    return flat.transpose(1, 2).bmm(base.expand(grad.shape[0], -1, -1))


# Past any entry's position.
_NO_ENTRY = 1 << 62


def embedding_bag(weight: torch.Tensor, indices: torch.Tensor, offsets: torch.Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Optional[torch.Tensor] = None,
                  include_last_offset: bool = False, padding_idx: int = -1
                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The sums (mode 0), means (1) or maxima (2) of the rows of `weight`
    that each bag of `indices` picks, bag b starting at ``offsets[b]``
    (``include_last_offset``: the last offset ends the last bag, and entries
    after it count for nothing); entries equal to `padding_idx` count for
    nothing, and an empty bag is zeros. The bag of each entry is the number
    of bags begun by it (a cumulative sum of the starts). Also returns each
    entry's bag, each bag's size and the row of each maximum (the first of
    equal ones in the bag, as PyTorch's kernel keeps; for an empty bag 0 on
    the CPU and -1 on CUDA; 0 in other modes), which the gradients read."""
    entries = indices.shape[0]
    # Each entry's position, by ops whose sizes and bounds do not depend on
    # the batch, which may be dynamic.
    position = torch.ones_like(indices, dtype=torch.long).cumsum(0) - 1
    counted = indices != padding_idx if padding_idx >= 0 else \
        torch.ones_like(indices, dtype=torch.bool)
    if include_last_offset:
        counted = counted & (position < offsets[-1:].long())
        offsets = offsets[:-1]
    offsets = offsets.long()
    bags = offsets.shape[0]
    # Each bag's start a 1 at its entry (the first at 0, as PyTorch
    # requires); an empty bag at the end starts past the last entry, which
    # the slice drops.
    starts = torch.zeros(entries + 1, dtype=torch.long, device=indices.device).scatter_add(
        0, offsets, torch.ones_like(offsets))[:-1]
    bag = starts.cumsum(0) - 1
    rows = weight.index_select(0, indices.long())
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    rows = rows * counted.unsqueeze(1).to(rows.dtype)
    sizes = torch.zeros(bags, dtype=torch.long, device=indices.device).scatter_add(
        0, bag, counted.long())
    width = weight.shape[1]
    positions = bag.unsqueeze(1).expand(entries, width)
    if mode == 2:
        # PyTorch's kernel keeps a bag's first entry and takes each later
        # one that is greater: a NaN first entry stays, later NaNs never win.
        with warnings.catch_warnings():  # scatter_reduce is "in beta" on torch 1.13.
            warnings.simplefilter("ignore")
            start = torch.full((bags,), _NO_ENTRY, dtype=torch.long,
                               device=indices.device).scatter_reduce(
                0, bag, torch.where(counted, position, torch.full_like(position, _NO_ENTRY)),
                "amin")
            nonempty = (sizes > 0).unsqueeze(1)
            # Positions valid at any size (an empty bag reads position 0 of
            # the entries with a 0 after the last, and keeps row 0).
            rows_of = torch.cat([indices.long(), indices.new_zeros(1, dtype=torch.long)])
            start = torch.where(sizes > 0, start, torch.zeros_like(start))
            first_rows = torch.where(sizes > 0, rows_of.index_select(0, start),
                                     torch.zeros_like(start))
            nan_first = weight.index_select(0, first_rows).isnan() & nonempty
            candidates = torch.where(counted.unsqueeze(1) & ~rows.isnan(), rows,
                                     torch.full_like(rows, float("-inf")))
            maxima = weight.new_full((bags, width), float("-inf")).scatter_reduce(
                0, positions, candidates, "amax")
            # The first entry of the bag that holds each maximum.
            first = torch.where(
                counted.unsqueeze(1) & (candidates == maxima.index_select(0, bag)),
                position.unsqueeze(1).expand(entries, width),
                torch.full_like(positions, _NO_ENTRY))
            first = torch.full((bags, width), _NO_ENTRY, dtype=torch.long,
                               device=indices.device).scatter_reduce(0, positions, first, "amin")
        found = nonempty & (first < _NO_ENTRY)
        first = torch.where(found, first, torch.zeros_like(first))
        # An empty bag's row: 0 on the CPU, -1 on CUDA, as each kernel writes.
        none = torch.full_like(first, -1 if indices.device.type == "cuda" else 0)
        which = torch.where(found, rows_of.index_select(0, first.flatten()).view(bags, width),
                            none)
        which = torch.where(nan_first, first_rows.unsqueeze(1).expand(bags, width), which)
        output = torch.where(nan_first, torch.full_like(maxima, float("nan")),
                             torch.where(nonempty, maxima, weight.new_zeros(bags, width)))
    else:
        output = weight.new_zeros(bags, width).scatter_add(0, positions, rows)
        if mode == 1:
            output = output / sizes.clamp(min=1).unsqueeze(1).to(output.dtype)
        which = torch.zeros(bags, dtype=torch.long, device=indices.device)
    return output, bag, sizes, which



def embedding_bag_dense_backward(grad: torch.Tensor, indices: torch.Tensor,
                                 offset2bag: torch.Tensor, bag_size: torch.Tensor,
                                 maximum_indices: torch.Tensor, num_weights: int,
                                 scale_grad_by_freq: bool, mode: int,
                                 per_sample_weights: Optional[torch.Tensor],
                                 padding_idx: int = -1) -> torch.Tensor:
    """The weight's gradient of embedding_bag (given embedding_bag's other
    results): each entry's bag gradient (over the bag's size for means,
    times its weight) summed into its row, or for maxima each bag's gradient
    into the rows its maxima came from; padding entries and empty bags add
    nothing. `scale_grad_by_freq` is refused: PyTorch's CPU kernel scales
    rows by other rows' counts, which Kiln would not match."""
    if scale_grad_by_freq:
        raise NotImplementedError("Kiln does not compile the gradient of embedding_bag with "
                                  "scale_grad_by_freq=True")
    width = grad.shape[1]
    zeros = grad.new_zeros(num_weights, width)
    if mode == 2:
        # Each bag's gradient into the rows of its maxima (none for an empty
        # bag, whose row is 0).
        found = (bag_size > 0).unsqueeze(1).to(grad.dtype)
        return zeros.scatter_add(0, maximum_indices.clamp(min=0), grad * found)
    counted = (indices != padding_idx) if padding_idx >= 0 else \
        torch.ones_like(indices, dtype=torch.bool)
    scale = counted.to(grad.dtype)
    if mode == 1:
        scale = scale / bag_size.index_select(0, offset2bag).clamp(min=1).to(grad.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    rows = indices.long()
    terms = grad.index_select(0, offset2bag) * scale.unsqueeze(1)
    return zeros.scatter_add(0, rows.unsqueeze(1).expand(-1, width), terms)


def embedding_bag_backward(grad: torch.Tensor, indices: torch.Tensor, offsets: torch.Tensor,
                           offset2bag: torch.Tensor, bag_size: torch.Tensor,
                           maximum_indices: torch.Tensor, num_weights: int,
                           scale_grad_by_freq: bool, mode: int, sparse: bool,
                           per_sample_weights: Optional[torch.Tensor],
                           padding_idx: int = -1) -> torch.Tensor:
    """The weight's gradient of embedding_bag as torch 2.x's autograd
    records it: the dense one (embedding_bag_dense_backward); a sparse
    gradient is refused."""
    if sparse:
        raise NotImplementedError("Kiln does not compile the sparse gradient of embedding_bag "
                                  "(sparse=True)")
    return embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                        num_weights, scale_grad_by_freq, mode,
                                        per_sample_weights, padding_idx)


def embedding_bag_per_sample_weights_backward(
        grad: torch.Tensor, weight: torch.Tensor, indices: torch.Tensor,
        offsets: torch.Tensor, offset2bag: torch.Tensor, mode: int,
        padding_idx: int = -1) -> torch.Tensor:
    """The gradient of embedding_bag's per-sample weights (sums only): each
    entry's bag gradient dotted with the row it picks, 0 for padding."""
    terms = (grad.index_select(0, offset2bag) * weight.index_select(0, indices.long())).sum(1)
    if padding_idx >= 0:
        terms = torch.where(indices != padding_idx, terms, torch.zeros_like(terms))
    return terms


def _grid_source(coordinate: torch.Tensor, size: int, padding_mode: int,
                 align_corners: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """PyTorch's grid_sampler_compute_source_index_set_grad: where the
    normalized grid `coordinate` samples a dimension of `size` pixels,
    after zeros (0), border (1) or reflection (2) padding, and the
    derivative of that position with respect to the coordinate."""
    if align_corners:
        source, slope = (coordinate + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        source, slope = ((coordinate + 1) * size - 1) / 2, size / 2
    slope = torch.full_like(source, slope)
    if padding_mode == 2:
        # Reflect about the corner pixels' centres (aligned) or their outer
        # edges: the distance from the low bound folds into the span.
        low, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
        if span <= 0:
            source, slope = torch.zeros_like(source), torch.zeros_like(slope)
        else:
            distance = source - low
            sign = torch.where(distance < 0, -torch.ones_like(source), torch.ones_like(source))
            distance = distance.abs()
            extra = torch.fmod(distance, span)
            even = torch.remainder(torch.floor(distance / span), 2) == 0
            source = torch.where(even, extra + low, span - extra + low)
            slope = slope * torch.where(even, sign, -sign)
    if padding_mode in (1, 2):
        inside = (source > 0) & (source < size - 1)
        slope = torch.where(inside, slope, torch.zeros_like(slope))
        source = source.clamp(0, size - 1)
    return source, slope


def grid_sampler_2d_backward(grad: torch.Tensor, input: torch.Tensor, grid: torch.Tensor,
                             interpolation_mode: int, padding_mode: int, align_corners: bool,
                             output_mask: Sequence[bool]
                             ) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
    """The gradients of grid_sampler_2d with bilinear (0) or nearest (1)
    interpolation, as PyTorch's kernels compute them: the input's is each
    output's gradient times each in-bounds tap's weight, summed into the
    tap's pixel; the grid's (bilinear) is the taps' values times the
    weights' derivatives, times the source position's derivative (nearest:
    zero). Bicubic's is refused."""
    if interpolation_mode not in (0, 1):
        raise NotImplementedError("Kiln does not compile the gradient of bicubic grid "
                                  "sampling")
    batch, channels, height, width = input.shape
    ix, x_slope = _grid_source(grid[..., 0], width, padding_mode, align_corners)
    iy, y_slope = _grid_source(grid[..., 1], height, padding_mode, align_corners)
    flat_input = input.reshape(batch, channels, height * width)
    flat_grad = grad.reshape(batch, channels, -1)

    def tap(x: torch.Tensor, y: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """The flat pixel index of (x, y) broadcast over the channels, and
        whether it lies in the input (N, C, Ho * Wo each)."""
        inside = (x >= 0) & (x < width) & (y >= 0) & (y < height)
        index = (y.clamp(0, height - 1) * width + x.clamp(0, width - 1)).long()
        shape = (batch, channels, index[0].numel())
        return (index.reshape(batch, 1, -1).expand(shape),
                inside.reshape(batch, 1, -1).expand(shape))

    if interpolation_mode == 1:
        index, inside = tap(torch.round(ix), torch.round(iy))
        grad_input = flat_input.new_zeros(flat_input.shape).scatter_add(
            2, index, torch.where(inside, flat_grad, torch.zeros_like(flat_grad)))
        return (grad_input.view(input.shape) if output_mask[0] else None,
                torch.zeros_like(grid) if output_mask[1] else None)
    west, north = torch.floor(ix), torch.floor(iy)
    east, south = west + 1, north + 1
    # (x, y, weight, d weight / d ix, d weight / d iy) of each tap.
    taps = [(west, north, (east - ix) * (south - iy), -(south - iy), -(east - ix)),
            (east, north, (ix - west) * (south - iy), south - iy, -(ix - west)),
            (west, south, (east - ix) * (iy - north), -(iy - north), east - ix),
            (east, south, (ix - west) * (iy - north), iy - north, ix - west)]
    grad_input = flat_input.new_zeros(flat_input.shape) if output_mask[0] else None
    grad_x = grad_y = None
    for x, y, weight, d_x, d_y in taps:
        index, inside = tap(x, y)
        if grad_input is not None:
            grad_input = grad_input.scatter_add(2, index, torch.where(
                inside, flat_grad * weight.reshape(batch, 1, -1), torch.zeros_like(flat_grad)))
        if output_mask[1]:
            value = torch.where(inside, flat_input.gather(2, index), torch.zeros_like(flat_grad))
            through = (value * flat_grad).sum(1).view(ix.shape)
            grad_x = through * d_x if grad_x is None else grad_x + through * d_x
            grad_y = through * d_y if grad_y is None else grad_y + through * d_y
    grad_grid = torch.stack([grad_x * x_slope, grad_y * y_slope], -1) if output_mask[1] \
        else None
    return grad_input.view(input.shape) if grad_input is not None else None, grad_grid


def table() -> Dict[object, Callable]:
    """ATen overload -> Kiln's decomposition."""
    decompositions: Dict[object, Callable] = {
        aten.index_add.default: index_add,
        aten.smooth_l1_loss_backward.default: _smooth_l1_loss_backward,
        aten.affine_grid_generator.default: affine_grid_generator,
        aten.affine_grid_generator_backward.default: affine_grid_generator_backward,
        aten.grid_sampler_2d_backward.default: grid_sampler_2d_backward,
        aten._embedding_bag.default: embedding_bag,
        aten._embedding_bag_forward_only.default: embedding_bag,
        aten._embedding_bag_backward.default: embedding_bag_backward,
        aten._embedding_bag_dense_backward.default: embedding_bag_dense_backward,
        aten._embedding_bag_per_sample_weights_backward.default:
            embedding_bag_per_sample_weights_backward,
        aten.adaptive_max_pool2d.default: adaptive_max_pool2d,
        aten.adaptive_max_pool2d_backward.default: _adaptive_max_pool2d_backward,
    }
    for spatial, name, taps in ((1, "upsample_linear1d_backward", _linear_taps),
                                (2, "upsample_bilinear2d_backward", _linear_taps),
                                (3, "upsample_trilinear3d_backward", _linear_taps),
                                (2, "upsample_bicubic2d_backward", _cubic_taps)):
        packet, backward = getattr(aten, name), _interpolation_backward(taps)
        if hasattr(packet, "vec"):  # torch 1.13's; later versions have none.
            decompositions[packet.vec] = backward
        decompositions[packet.default] = (
            lambda grad, output_size, input_size, align_corners, *scales, count=spatial,
            backward=backward: backward(grad, output_size, input_size, align_corners,
                                        _with_scales(count)(scales)))
    for spatial, name in ((1, "upsample_nearest1d_backward"), (2, "upsample_nearest2d_backward"),
                          (3, "upsample_nearest3d_backward")):
        packet = getattr(aten, name)
        if hasattr(packet, "vec"):
            decompositions[packet.vec] = _nearest_backward
        decompositions[packet.default] = (
            lambda grad, output_size, input_size, *scales, count=spatial: _nearest_backward(
                grad, output_size, input_size, _with_scales(count)(scales)))
    for spatial in (1, 2, 3):
        decompositions[getattr(aten, f"reflection_pad{spatial}d_backward").default] = \
            _padding_backward(_reflected)
        decompositions[getattr(aten, f"replication_pad{spatial}d_backward").default] = \
            _padding_backward(_replicated)
    return decompositions
