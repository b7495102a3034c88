"""Recurrent layers (``nn.LSTM``, ``nn.GRU``, ``nn.RNN`` and their cells) as
the arithmetic of their cells, for tracing.

PyTorch's own kernels of these layers depend on the device and the torch
version: fused CUDA cells (``_thnn_fused_lstm_cell``, whose gradient reads an
opaque workspace), oneDNN's ``mkldnn_rnn_layer``, cuDNN's flattened weights,
or CPU composites that write gates in place. While tracing, the layers'
``torch._VF`` functions run the implementations here instead
(kiln.importer.as_composites): one input projection per layer and direction
(a single matrix product over every time step), then each time step's gates
in pointwise ops that autograd differentiates like any others. The results are PyTorch's, to
rounding: the gates are computed in the same order as its CPU cells.

Packed sequences (``torch._VF.lstm(data, batch_sizes, ...)``) and empty
sequences go to PyTorch's kernels unchanged.
"""

from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

State = Any  # A hidden state: a tensor, or LSTM's (h, c).
Step = Callable[[torch.Tensor, State, torch.Tensor, Optional[torch.Tensor],
                 Optional[torch.Tensor]], Tuple[torch.Tensor, State]]


def _lstm_step(x_gates: torch.Tensor, state: State, w_hh: torch.Tensor,
               b_hh: Optional[torch.Tensor], w_hr: Optional[torch.Tensor]
               ) -> Tuple[torch.Tensor, State]:
    """One LSTM time step from the input's share of the gates, `x_gates`
    (input, forget, cell and output gates, in that order)."""
    h, c = state
    i, f, g, o = (x_gates + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:  # proj_size > 0.
        h = F.linear(h, w_hr)
    return h, (h, c)


def _gru_step(x_gates: torch.Tensor, h: State, w_hh: torch.Tensor,
              b_hh: Optional[torch.Tensor], w_hr: Optional[torch.Tensor]
              ) -> Tuple[torch.Tensor, State]:
    """One GRU time step: reset and update gates, then the new gate, whose
    hidden share the reset gate scales (bias included, as PyTorch's)."""
    x_r, x_z, x_n = x_gates.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    reset = (x_r + h_r).sigmoid()
    update = (x_z + h_z).sigmoid()
    new = (x_n + h_n * reset).tanh()
    h = (h - new) * update + new
    return h, h


def _elman_step(activation: Callable[[torch.Tensor], torch.Tensor]) -> Step:
    def step(x_gates, h, w_hh, b_hh, w_hr):
        h = activation(x_gates + F.linear(h, w_hh, b_hh))
        return h, h
    return step


def _layers(step: Step, x: torch.Tensor, initial: Sequence[State],
            params: Sequence[torch.Tensor], has_biases: bool, num_layers: int,
            dropout: float, train: bool, bidirectional: bool,
            batch_first: bool) -> Tuple[torch.Tensor, List[State]]:
    """A stack of recurrent layers over `x` (time-major unless
    `batch_first`): the last layer's output and each layer and direction's
    final state. `initial` holds the initial states in the same order."""
    directions = 2 if bidirectional else 1
    per_direction = len(params) // (num_layers * directions)
    if batch_first:
        x = x.transpose(0, 1)
    steps = x.shape[0]
    finals: List[State] = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            weights = params[index * per_direction:(index + 1) * per_direction]
            w_ih, w_hh = weights[0], weights[1]
            b_ih, b_hh = (weights[2], weights[3]) if has_biases else (None, None)
            # A projection (LSTM's proj_size) is the direction's last weight.
            w_hr = weights[-1] if len(weights) == (5 if has_biases else 3) else None
            x_gates = F.linear(x, w_ih, b_ih)
            state = initial[index]
            out: List[Optional[torch.Tensor]] = [None] * steps
            for t in (reversed(range(steps)) if direction else range(steps)):
                out[t], state = step(x_gates[t], state, w_hh, b_hh, w_hr)
            outputs.append(torch.stack(out))
            finals.append(state)
        x = outputs[0] if directions == 1 else torch.cat(outputs, -1)
        if dropout and train and layer < num_layers - 1:
            x = torch.dropout(x, dropout, train)
    return (x.transpose(0, 1) if batch_first else x), finals


def _lstm(x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    h0, c0 = hx
    output, finals = _layers(_lstm_step, x, list(zip(h0.unbind(0), c0.unbind(0))), params,
                             has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return (output, torch.stack([h for h, _ in finals]), torch.stack([c for _, c in finals]))


def _recurrent(step: Step) -> Callable:
    def layers(x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first):
        output, finals = _layers(step, x, hx.unbind(0), params, has_biases, num_layers,
                                 dropout, train, bidirectional, batch_first)
        return output, torch.stack(finals)
    return layers


def _cell(step: Step) -> Callable:
    def cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # ATen's argument names.
        return step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, None)[1]
    return cell


_LAYERS = {
    torch._VF.lstm: _lstm,
    torch._VF.gru: _recurrent(_gru_step),
    torch._VF.rnn_tanh: _recurrent(_elman_step(torch.tanh)),
    torch._VF.rnn_relu: _recurrent(_elman_step(torch.relu)),
}
_CELLS = {
    torch._VF.lstm_cell: _cell(_lstm_step),
    torch._VF.gru_cell: _cell(_gru_step),
    torch._VF.rnn_tanh_cell: _cell(_elman_step(torch.tanh)),
    torch._VF.rnn_relu_cell: _cell(_elman_step(torch.relu)),
}


def _is_layer_call(args: Sequence[Any], kwargs: dict) -> bool:
    """Whether a layer function was called on a padded batch (input, hx,
    params, ...) of at least one time step, not on a packed sequence
    (data, batch_sizes, hx, params, ...)."""
    return not kwargs and len(args) == 9 and isinstance(args[0], torch.Tensor) \
        and isinstance(args[2], (list, tuple)) and args[0].dim() == 3 \
        and args[0].shape[1 if args[8] else 0] > 0


def cells_of(func: Callable, args: Sequence[Any], kwargs: dict) -> Optional[Callable]:
    """The implementation here of a call of `func` (a ``torch._VF``
    recurrent layer or cell), or None if PyTorch's kernel should run."""
    if func in _LAYERS and _is_layer_call(args, kwargs):
        return _LAYERS[func]
    return _CELLS.get(func)
