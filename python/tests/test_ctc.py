"""The CTC loss (kiln.ctc): values and gradients against eager on fresh
inputs, padded and concatenated targets, lengths as tensors (one trace
serves every length) and as lists, impossible alignments, on the CPU and the
GPU."""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402

F = torch.nn.functional

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU on this machine"))]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


T, N, C, S = 10, 4, 6, 4


def _batch(generator, device, impossible=True):
    """Logits, padded targets (labels 1..C-1, blank 0) and lengths; with
    `impossible`, the last sample's input is too short for its target."""
    logits = torch.randn(T, N, C, generator=generator)
    targets = torch.randint(1, C, (N, S), generator=generator)
    inputs = torch.randint(T // 2, T + 1, (N,), generator=generator)
    lengths = torch.randint(0, S + 1, (N,), generator=generator)
    if impossible:
        inputs[-1], lengths[-1] = 2, S
    return [t.to(device) for t in (logits, targets, inputs, lengths)]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss(reduction, zero_infinity, device, tmp_path):
    """The loss of log_softmax'd logits: an impossible alignment's loss is
    inf, or 0 with zero_infinity."""
    generator = torch.Generator().manual_seed(0)

    def fn(logits, targets, inputs, lengths):
        return F.ctc_loss(logits.log_softmax(2), targets, inputs, lengths,
                          reduction=reduction, zero_infinity=zero_infinity)

    compiled = kiln.compile(fn, _batch(generator, device), cache_dir=tmp_path)
    for _ in range(2):  # Lengths are data: other lengths, the same artifact.
        fresh = _batch(generator, device)
        torch.testing.assert_close(compiled(*fresh), fn(*fresh), rtol=1e-5, atol=1e-5)


def test_ctc_loss_gradients(device, tmp_path):
    """The gradients of the logits (through log_softmax) and, as PyTorch
    gives them, of the log-probabilities themselves (Graves' eq. 16, which
    adds exp(log_probs) within each input)."""
    generator = torch.Generator().manual_seed(1)

    def fn(logits, log_probs, targets, inputs, lengths):
        through_softmax = F.ctc_loss(logits.log_softmax(2), targets, inputs, lengths,
                                     zero_infinity=True)
        direct = F.ctc_loss(log_probs, targets, inputs, lengths, reduction="sum",
                            zero_infinity=True)
        return torch.autograd.grad(through_softmax + direct, [logits, log_probs])

    def inputs():
        logits, targets, lengths_in, lengths = _batch(generator, device)
        log_probs = torch.randn(T, N, C, generator=generator).to(device).log_softmax(2)
        return [logits.requires_grad_(), log_probs.requires_grad_(), targets, lengths_in,
                lengths]

    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    fresh = inputs()
    for got, want in zip(compiled(*fresh), fn(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_ctc_loss_of_concatenated_targets_and_listed_lengths(device, tmp_path):
    """Targets concatenated into one sequence, with lengths as Python lists
    (constants of the trace), repeated labels (which need a blank between)
    and an empty target; and an unbatched sample."""
    generator = torch.Generator().manual_seed(2)
    target_lengths, input_lengths = [3, 1, 0, 4], [10, 4, 3, 9]

    def fn(log_probs, targets):
        return (F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none"),
                F.ctc_loss(log_probs[:, 0], targets[:3], torch.tensor(10), torch.tensor(3),
                           blank=5))

    def inputs():
        log_probs = torch.randn(T, N, C, generator=generator).log_softmax(2)
        targets = torch.randint(1, C - 1, (sum(target_lengths),), generator=generator)
        targets[5] = targets[4]  # The last sample's first two labels repeat.
        return [log_probs.to(device), targets.to(device)]

    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    fresh = inputs()
    for got, want in zip(compiled(*fresh), fn(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_ctc_loss_arguments_are_checked(tmp_path):
    """Listed lengths are checked when tracing; lengths must be integers;
    float targets are labels, as PyTorch takes them."""
    log_probs, targets = torch.randn(T, N, C).log_softmax(2), torch.randint(1, C, (N, S))
    lengths = [torch.full((N,), T), torch.full((N,), S)]
    cases = [(lambda x, y: F.ctc_loss(x, y, *lengths, reduction="average"), "reduction"),
             (lambda x, y: F.ctc_loss(x, y, *lengths, blank=6), "blank 6 is not a class"),
             (lambda x, y: F.ctc_loss(x, y, [T + 1] * N, [S] * N),
              r"input lengths \[11, 11, 11, 11\] must lie in \[0, 10\]"),
             (lambda x, y: F.ctc_loss(x, y, [T] * N, [S + 1] * N), "target lengths"),
             (lambda x, y: F.ctc_loss(x, y, lengths[0].float(), lengths[1]),
              "input lengths must be integers")]
    for fn, message in cases:
        with pytest.raises(ValueError, match=message):
            kiln.compile(fn, [log_probs, targets], cache_dir=tmp_path)
    fn = lambda x, y: F.ctc_loss(x, y.float(), *lengths)  # noqa: E731
    compiled = kiln.compile(fn, [log_probs, targets], cache_dir=tmp_path)
    torch.testing.assert_close(compiled(log_probs, targets), fn(log_probs, targets))


def test_ctc_loss_of_large_log_probabilities(tmp_path):
    """Scores past log(float max) (raw logits passed by mistake): the loss
    is PyTorch's, not NaN."""
    fn = lambda x, y: F.ctc_loss(x, y, [T] * N, [S] * N, reduction="none")  # noqa: E731
    inputs = [torch.randn(T, N, C) * 5 + 90, torch.randint(1, C, (N, S))]
    compiled = kiln.compile(fn, inputs, cache_dir=tmp_path)
    inputs[0] = torch.randn(T, N, C) * 5 + 90
    torch.testing.assert_close(compiled(*inputs), fn(*inputs))
