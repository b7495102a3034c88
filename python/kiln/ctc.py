"""The connectionist temporal classification loss (``F.ctc_loss``) as ops
that Kiln compiles, for tracing (kiln.importer.as_composites).

The loss is the negative log of the total probability of the alignments of
each target sequence with its input: the forward (alpha) recursion of Graves
et al. (2006) over the target's labels with a blank before, between and after
them, unrolled over the input's time steps, in log space. Every sample runs
all time steps: past its input length its alphas stop changing, and its
labels past its target length are blanks, which positions that the loss reads
never depend on. Lengths may be tensors (data, not sizes), so one trace
serves every length.

Autograd differentiates the recursion. PyTorch's own gradient with respect
to ``log_probs`` is Graves' with respect to the logits under a softmax (eq.
16): it adds ``exp(log_probs)`` at every time step within the input, which
the gradient of a ``log_softmax`` before the loss then cancels. The loss
here adds a term whose value is zero and whose gradient is that, so that it
returns PyTorch's gradients whatever comes before it.
"""

from typing import Any, Sequence, Union

import math

import torch

Lengths = Union[torch.Tensor, Sequence[int]]
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _log_add(*terms: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(terms))), -inf where every term is, with gradients that
    stay finite there (0, not the NaN of exp(-inf - -inf))."""
    top = terms[0]
    for term in terms[1:]:
        top = torch.maximum(top, term)
    impossible = top == float("-inf")
    shift = torch.where(impossible, torch.zeros_like(top), top)
    total = sum(torch.exp(term - shift) for term in terms)
    total = torch.where(impossible, torch.ones_like(total), total)
    return torch.where(impossible, top, shift + torch.log(total))


def _as_lengths(lengths: Lengths, like: torch.Tensor, what: str,
               bound: int) -> torch.Tensor:
    """Lengths as a tensor on `like`'s device; listed ones checked against
    `bound` (tensors are data, read only when the loss runs)."""
    if isinstance(lengths, torch.Tensor):
        if lengths.is_floating_point() or lengths.is_complex():
            raise ValueError(f"ctc_loss: {what} must be integers, got {lengths.dtype}")
        return lengths.to(device=like.device, dtype=torch.long).reshape(-1)
    lengths = [int(n) for n in (lengths if isinstance(lengths, (list, tuple)) else [lengths])]
    if any(n < 0 or n > bound for n in lengths):
        raise ValueError(f"ctc_loss: {what} {lengths} must lie in [0, {bound}]")
    return torch.tensor(lengths, dtype=torch.long, device=like.device)


def _padded_labels(targets: torch.Tensor, target_lengths: torch.Tensor, longest: int,
                   batch: int, blank: int) -> torch.Tensor:
    """[N, S]: each sample's labels, blanks past its target length. Targets
    come padded ([N, S]) or concatenated ([sum of lengths]); concatenated
    ones are read at each sample's offset, up to `longest` labels (the
    longest listed length, or the total where the lengths are data)."""
    targets = targets.long()
    if targets.dim() == 1:
        total = targets.shape[0]
        offsets = torch.cumsum(target_lengths, 0) - target_lengths
        positions = offsets[:, None] + torch.arange(longest, device=targets.device)
        targets = targets.index_select(0, positions.clamp(0, total - 1).reshape(-1)).reshape(
            batch, longest) if total and longest else targets.new_zeros(batch, 0)
    within = torch.arange(targets.shape[1], device=targets.device) < target_lengths[:, None]
    return torch.where(within, targets, torch.full_like(targets, blank))


def ctc_loss_reduced(log_probs: torch.Tensor, targets: torch.Tensor, input_lengths: Lengths,
                     target_lengths: Lengths, blank: int = 0, reduction: int = 1,
                     zero_infinity: bool = False) -> torch.Tensor:
    """torch.ctc_loss: `reduction` 0 (none), 1 (mean over the batch of
    each loss over its target length) or 2 (sum)."""
    if log_probs.dim() not in (2, 3):
        raise ValueError(f"ctc_loss: log_probs must be [T, N, C] or [T, C], "
                         f"got {list(log_probs.shape)}")
    if not log_probs.is_floating_point():
        raise ValueError(f"ctc_loss: log_probs must be floating point, got {log_probs.dtype}")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1)
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise ValueError(f"ctc_loss: blank {blank} is not a class of {classes}")
    concatenated = targets.dim() == 1 and not unbatched
    longest = targets.shape[-1]
    if concatenated and not isinstance(target_lengths, torch.Tensor):
        longest = max([int(n) for n in target_lengths] or [0])
    input_lengths = _as_lengths(input_lengths, log_probs, "input lengths", steps)
    target_lengths = _as_lengths(target_lengths, log_probs, "target lengths",
                                 targets.shape[0] if concatenated else targets.shape[-1])
    labels = _padded_labels(targets.to(log_probs.device), target_lengths, longest, batch,
                            blank)

    # The extended labels: blank, l1, blank, l2, ..., blank.
    blanks = torch.full_like(labels, blank)
    extended = torch.cat([torch.stack([blanks, labels], -1).reshape(batch, -1),
                          torch.full((batch, 1), blank, dtype=labels.dtype,
                                     device=labels.device)], 1)
    positions = extended.shape[1]
    before_last = torch.cat([torch.full_like(extended[:, :2], blank), extended[:, :-2]], 1)
    # A label may follow the label two positions before it directly, past
    # the blank between, unless the two are the same.
    skips = (extended != blank) & (extended != before_last)
    emitted = log_probs.gather(2, extended.unsqueeze(0).expand(steps, batch, positions))

    never = torch.full_like(emitted[0], float("-inf"))
    position = torch.arange(positions, device=log_probs.device)
    alpha = torch.where(position < 2, emitted[0], never)
    for t in range(1, steps):
        stay = alpha
        advance = torch.cat([never[:, :1], alpha[:, :-1]], 1)
        skip = torch.where(skips, torch.cat([never[:, :2], alpha[:, :-2]], 1), never)
        step = _log_add(stay, advance, skip) + emitted[t]
        alpha = torch.where((t < input_lengths)[:, None], step, alpha)
    last = (2 * target_lengths)[:, None]
    ends = [alpha.gather(1, last), torch.where(
        last > 0, alpha.gather(1, (last - 1).clamp(min=0)), never[:, :1])]
    loss = -_log_add(*ends).squeeze(1)
    # No time step: no alignment, unless the target is empty too.
    loss = torch.where(input_lengths > 0, loss,
                       torch.where(target_lengths > 0, -never[:, 0], torch.zeros_like(loss)))

    # Zero in value; exp(log_probs) in gradient where t < the input length
    # (the module docstring says why), and where exp(log_probs) is finite.
    detached = log_probs.detach()
    within = (torch.arange(steps, device=log_probs.device)[:, None] < input_lengths)[..., None]
    finite = within & (detached > float("-inf")) & \
        (detached < math.log(torch.finfo(log_probs.dtype).max))
    zeros = torch.zeros_like(log_probs)
    offset = torch.where(finite, log_probs - detached, zeros)
    loss = loss + (offset * torch.exp(torch.where(finite, detached, zeros))).sum((0, 2))

    if zero_infinity:
        loss = torch.where(loss == float("inf"), torch.zeros_like(loss), loss)
    if reduction == 1:
        loss = (loss / target_lengths.clamp(min=1).to(loss.dtype)).mean()
    elif reduction == 2:
        loss = loss.sum()
    elif unbatched:
        loss = loss.squeeze(0)
    return loss


def ctc_loss(log_probs: torch.Tensor, targets: torch.Tensor, input_lengths: Lengths,
             target_lengths: Lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Any:
    """torch.nn.functional.ctc_loss (module docstring)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"ctc_loss: reduction is one of {sorted(_REDUCTIONS)}, got {reduction!r}")
    return ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank,
                            _REDUCTIONS[reduction], zero_infinity)
