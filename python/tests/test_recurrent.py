"""Recurrent layers and cells (kiln.recurrent): LSTM, GRU and Elman RNNs,
their options (layers, directions, projections, biases, batch-first,
unbatched input) and their gradients, against eager on fresh inputs, on the
CPU and the GPU."""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.importer import as_composites  # noqa: E402

nn = torch.nn

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU on this machine"))]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def _check(module, inputs, device, tmp_path, atol=1e-5):
    """Compiles `module` in eval mode on `inputs()` and compares it with
    eager on another draw."""
    module = module.to(device).eval()
    compiled = kiln.compile(module, [x.to(device) for x in inputs()], cache_dir=tmp_path)
    fresh = [x.to(device) for x in inputs()]
    got, want = compiled(*fresh), module(*fresh)
    flat_got = torch.utils._pytree.tree_flatten(got)[0]
    flat_want = torch.utils._pytree.tree_flatten(want)[0]
    assert len(flat_got) == len(flat_want)
    for g, w in zip(flat_got, flat_want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=atol)


LAYERS = {
    "lstm": lambda: nn.LSTM(6, 8),
    "lstm_two_layers_bidirectional": lambda: nn.LSTM(6, 8, num_layers=2, bidirectional=True),
    "lstm_projected_batch_first": lambda: nn.LSTM(6, 8, proj_size=5, batch_first=True),
    "lstm_without_biases": lambda: nn.LSTM(6, 8, bias=False, num_layers=2),
    "gru_bidirectional_batch_first": lambda: nn.GRU(6, 8, bidirectional=True,
                                                    batch_first=True),
    "gru_two_layers": lambda: nn.GRU(6, 8, num_layers=2, dropout=0.5),
    "rnn_tanh": lambda: nn.RNN(6, 8, num_layers=2, bidirectional=True),
    "rnn_relu_without_biases": lambda: nn.RNN(6, 8, nonlinearity="relu", bias=False),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_recurrent_layers(name, device, tmp_path):
    """Every output (sequence, final hidden and cell states) of a layer
    with its initial states zero (none given), in eval mode (dropout off)."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    _check(LAYERS[name](), lambda: [torch.randn(5, 3, 6, generator=generator)],
           device, tmp_path)


def test_recurrent_layers_with_initial_states(device, tmp_path):
    """Initial hidden and cell states, read per layer and direction."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(2)
    lstm = nn.LSTM(4, 7, num_layers=2, bidirectional=True, batch_first=True)

    class WithStates(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lstm

        def forward(self, x, h, c):
            return self.lstm(x, (h, c))

    _check(WithStates(), lambda: [torch.randn(3, 6, 4, generator=generator),
                                  torch.randn(4, 3, 7, generator=generator),
                                  torch.randn(4, 3, 7, generator=generator)],
           device, tmp_path)


def test_unbatched_sequences_and_cells(device, tmp_path):
    """An unbatched sequence through a GRU, and LSTM, GRU and RNN cells
    stepped by hand."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(3)

    class Cells(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(5, 6)
            self.lstm_cell = nn.LSTMCell(5, 6)
            self.gru_cell = nn.GRUCell(5, 6)
            self.rnn_cell = nn.RNNCell(5, 6, nonlinearity="relu")

        def forward(self, sequence, x):
            out, h = self.gru(sequence)
            state = (h, torch.zeros_like(h))
            for _ in range(2):
                state = self.lstm_cell(x, state)
            return out, state, self.gru_cell(x, state[0]), self.rnn_cell(x)

    _check(Cells(), lambda: [torch.randn(4, 5, generator=generator),
                             torch.randn(1, 5, generator=generator)], device, tmp_path)


def test_training_an_lstm(device, tmp_path):
    """The gradients of a two-layer bidirectional LSTM's loss with respect
    to its input, initial states and every weight, through autograd's graph
    of the cells. The layer is called as nn.LSTM calls it, on weights that
    are the function's inputs."""
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(4)
    shapes = [p.shape for p in nn.LSTM(4, 6, num_layers=2, bidirectional=True).parameters()]

    def fn(x, h0, c0, *weights):
        out, h, c = torch._VF.lstm(x, (h0, c0), weights, True, 2, 0.0, True, True, False)
        loss = out.pow(2).sum() + h.sum() + c.mean()
        return torch.autograd.grad(loss, [x, h0, c0, *weights])

    def inputs():
        tensors = [torch.randn(5, 2, 4, generator=generator),
                   torch.randn(4, 2, 6, generator=generator),
                   torch.randn(4, 2, 6, generator=generator)]
        tensors += [torch.randn(shape, generator=generator) * 0.3 for shape in shapes]
        return [t.to(device).requires_grad_() for t in tensors]

    compiled = kiln.compile(fn, inputs(), cache_dir=tmp_path)
    fresh = inputs()
    for got, want in zip(compiled(*fresh), fn(*fresh)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_as_composites_matches_pytorch_eagerly():
    """Outside tracing too, as_composites computes what PyTorch's kernels do:
    dropout between layers included, with the same random stream."""
    torch.manual_seed(0)
    gru = nn.GRU(3, 4, num_layers=3, dropout=0.3).train()
    x = torch.randn(6, 2, 3)
    torch.manual_seed(5)
    want = gru(x)
    torch.manual_seed(5)
    with as_composites():
        got = gru(x)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
    # Cells called with ATen's argument names.
    cell = nn.GRUCell(3, 4)
    arguments = dict(input=x[0], hx=torch.randn(2, 4), w_ih=cell.weight_ih,
                     w_hh=cell.weight_hh, b_ih=cell.bias_ih, b_hh=cell.bias_hh)
    with as_composites():
        got = torch.gru_cell(**arguments)
    torch.testing.assert_close(got, torch.gru_cell(**arguments))


def test_packed_sequences_go_to_pytorch():
    """as_composites leaves a packed sequence's layer to PyTorch's kernel
    (which reads its batch sizes, so it does not trace), and an empty
    sequence, which PyTorch's refuses."""
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 4).eval()
    x = torch.randn(4, 2, 3)
    packed = nn.utils.rnn.pack_padded_sequence(x, [4, 2])
    want = nn.utils.rnn.pad_packed_sequence(lstm(packed)[0])[0]
    with as_composites():
        got = nn.utils.rnn.pad_packed_sequence(lstm(packed)[0])[0]
        with pytest.raises(RuntimeError, match="sequence length to be larger than 0"):
            lstm(torch.randn(0, 2, 3))
    torch.testing.assert_close(got, want)


def test_dynamic_batches_and_static_sequences(tmp_path):
    """A layer unrolls over its time steps: its batch may be dynamic, its
    sequence length may not, which the refusal says."""
    torch.manual_seed(0)
    lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True).eval()
    compiled = kiln.compile(lstm, [torch.randn(3, 5, 4)], dynamic={0: [0]}, cache_dir=tmp_path)
    for batch in (2, 7):
        x = torch.randn(batch, 5, 4)
        for got, want in zip(torch.utils._pytree.tree_flatten(compiled(x))[0],
                             torch.utils._pytree.tree_flatten(lstm(x))[0]):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(kiln.KilnImportError, match="the sequence length must stay static"):
        kiln.compile(lstm, [torch.randn(3, 5, 4)], dynamic={0: [1]}, cache_dir=tmp_path)
