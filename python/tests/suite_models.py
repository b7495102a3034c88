"""A suite of PyTorch functions and modules for testing Kiln end to end.

Each case is a function or an ``nn.Module`` with the inputs to capture it on:
MLPs, convolutions with batch norm, residual and attention blocks,
normalisations, embeddings, pooling, indexing, every kind of reduction,
views, slicing and dtype casts. ``test_import_suite.py`` imports every case
and has kiln-opt verify it; compilation tests can run the same cases.

``make()`` builds a case's callable and inputs afresh (seeded, so the same
every time); modules are in eval mode, so batch norm and dropout are the
inference ops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["CASES", "Case"]


@dataclass(frozen=True)
class Case:
    """A suite entry.

    Attributes:
        name: a unique identifier.
        build: returns ``(callable, example inputs)``.
        xfail: why Kiln cannot import this case yet, naming the failing op,
            or None when it imports and verifies.
    """

    name: str
    build: Callable[[], Tuple[Callable, Sequence[Any]]]
    xfail: Optional[str] = None

    def make(self) -> Tuple[Callable, Sequence[Any]]:
        """The case's callable and example inputs, the same at every call."""
        torch.manual_seed(0)
        fn, inputs = self.build()
        if isinstance(fn, nn.Module):
            fn.eval()
        return fn, tuple(inputs)


CASES: Dict[str, Case] = {}


def case(name: str = None, xfail: Optional[str] = None):
    """Registers the decorated builder as a case, named after it by default."""
    def register(build):
        key = name or build.__name__
        assert key not in CASES, f"duplicate suite case '{key}'"
        CASES[key] = Case(key, build, xfail)
        return build
    return register


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


# ===--- Modules ------------------------------------------------------------=== #


class MLP(nn.Module):
    def __init__(self, sizes=(32, 64, 64, 10)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class ConvBnRelu(nn.Module):
    def __init__(self, cin=3, cout=8):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class ResidualBlock(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class Attention(nn.Module):
    """Multi-head self-attention, scaled dot product by matmul and softmax."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        qkv = self.qkv(x).view(batch, seq, 3, self.heads, dim // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, seq, dim))


class TransformerLayer(nn.Module):
    """Pre-norm transformer layer: attention and a GELU MLP, both residual."""

    def __init__(self, dim=32):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class EmbeddingWithPositions(nn.Module):
    """Token embedding plus sinusoidal positional encoding."""

    def __init__(self, vocab=100, dim=16, max_len=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        position = torch.arange(max_len).unsqueeze(1)
        freq = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        encoding = torch.zeros(max_len, dim)
        encoding[:, 0::2] = torch.sin(position * freq)
        encoding[:, 1::2] = torch.cos(position * freq)
        self.register_buffer("encoding", encoding)

    def forward(self, tokens):
        return self.embed(tokens) * math.sqrt(self.embed.embedding_dim) \
            + self.encoding[: tokens.shape[1]]


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(self.pool(x), 1))


class GRUCellLike(nn.Module):
    """The gate arithmetic of a GRU cell, on linear layers."""

    def __init__(self, dim=16):
        super().__init__()
        self.input = nn.Linear(dim, 3 * dim)
        self.hidden = nn.Linear(dim, 3 * dim)

    def forward(self, x, h):
        xr, xz, xn = self.input(x).chunk(3, dim=-1)
        hr, hz, hn = self.hidden(h).chunk(3, dim=-1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


# ===--- Networks -------------------------------------------------------------=== #


@case()
def mlp():
    return MLP(), [randn(8, 32)]


@case()
def conv_bn_relu():
    return ConvBnRelu(), [randn(2, 3, 16, 16)]


@case()
def residual_block():
    return ResidualBlock(), [randn(2, 8, 8, 8)]


@case()
def attention_block():
    return Attention(), [randn(2, 10, 32)]


@case()
def transformer_layer():
    return TransformerLayer(), [randn(2, 10, 32)]


@case()
def attention_with_padding_mask():
    # nn.MultiheadAttention turns the padding mask into an additive one with
    # masked_fill_ on a fresh tensor; lengths of at least 1 keep every row
    # of the softmax finite.
    class PaddedAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(16, 4)

        def forward(self, x, lengths):
            padding = torch.arange(x.shape[0], device=x.device) >= lengths[:, None]
            return self.attention(x, x, x, key_padding_mask=padding, need_weights=False)[0]

    return PaddedAttention(), [randn(6, 3, 16), torch.tensor([6, 1, 4])]


@case()
def lstm():
    # Traced as its cells (kiln.recurrent), on every device and torch.
    return nn.LSTM(8, 16, batch_first=True), [randn(3, 5, 8)]


@case()
def gru():
    return nn.GRU(8, 16, batch_first=True), [randn(3, 5, 8)]


@case()
def embedding_positional():
    return EmbeddingWithPositions(), [torch.randint(0, 100, (2, 12))]


@case()
def small_cnn():
    return SmallCNN(), [randn(2, 3, 17, 17)]


@case()
def gru_cell_gates():
    return GRUCellLike(), [randn(4, 16), randn(4, 16)]


@case()
def mlp_with_parameters_as_inputs():
    def fn(x, w1, b1, w2):
        return torch.relu(x @ w1 + b1) @ w2

    return fn, [randn(8, 16), randn(16, 32), randn(32), randn(32, 4)]


@case()
def batched_matmul_bias():
    return (lambda a, b, c: torch.baddbmm(c, a, b, alpha=0.5)), \
        [randn(3, 4, 5), randn(3, 5, 6), randn(3, 4, 6)]


# ===--- Normalisation and activations -----------------------------------------=== #


@case()
def layer_norm():
    return nn.LayerNorm(16), [randn(4, 8, 16)]


@case()
def group_norm():
    return nn.GroupNorm(2, 8), [randn(2, 8, 4, 4)]


@case()
def batch_norm_1d():
    return nn.BatchNorm1d(12), [randn(6, 12)]


@case()
def rms_norm():
    def fn(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    return fn, [randn(4, 16), randn(16)]


@case()
def softmax_and_log_softmax():
    return (lambda x: (F.softmax(x, dim=-1), F.log_softmax(x, dim=1))), [randn(4, 10)]


@case()
def activations():
    def fn(x):
        return (F.gelu(x), F.silu(x), F.elu(x), F.leaky_relu(x, 0.2), F.hardswish(x),
                F.softplus(x), F.mish(x), F.hardtanh(x))

    return fn, [randn(4, 8)]


@case()
def dropout_eval():
    return nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5)), [randn(3, 8)]


# ===--- Elementwise --------------------------------------------------------------=== #


@case()
def elementwise_math():
    def fn(x, y):
        return (torch.exp(x) + torch.log(y.abs() + 1), torch.sqrt(y.abs()) * torch.sin(x),
                torch.tanh(x) - torch.sigmoid(y), torch.pow(y.abs(), 1.5), torch.atan2(x, y))

    return fn, [randn(4, 5), randn(4, 5)]


@case()
def comparisons_and_where():
    def fn(x, y):
        mask = (x > y) & (x != 0) | ~(y >= 1)
        return torch.where(mask, x, y), torch.clamp(x, -0.5, 0.5), torch.maximum(x, y)

    return fn, [randn(6), randn(6)]


@case()
def integer_arithmetic():
    def fn(a, b):
        return a // 3, a % 5, a * b - 7, torch.bitwise_xor(a, b), 10 - a, a // b

    return fn, [torch.randint(-50, 50, (8,)), torch.randint(1, 50, (8,))]


@case()
def scalar_rsub_and_division():
    return (lambda x: (1.0 - x, 2.0 / (x + 3.0), x.reciprocal())), [randn(5)]


# ===--- Reductions ------------------------------------------------------------------=== #


@case()
def reductions_sum_mean_prod():
    def fn(x):
        return x.sum(), x.sum(dim=1), x.mean(dim=(0, 2), keepdim=True), x.prod(dim=2)

    return fn, [randn(3, 4, 5)]


@case()
def reductions_max_min():
    def fn(x):
        values, indices = x.max(dim=1)
        return values, indices, x.amin(dim=0), x.amax(), x.argmax(dim=-1), x.min(dim=0)[1]

    return fn, [randn(4, 6)]


@case()
def reductions_var_std():
    def fn(x):
        return x.var(dim=1), x.std(dim=0, unbiased=False), torch.var_mean(x, dim=1)

    return fn, [randn(5, 7)]


@case()
def reductions_logical():
    return (lambda x: ((x > 0).any(dim=1), (x > -3).all(), (x > 0).sum(dim=0))), [randn(4, 5)]


@case()
def reductions_logsumexp_norm():
    return (lambda x: (torch.logsumexp(x, dim=1), x.norm(dim=-1),
                       torch.linalg.vector_norm(x, ord=1))), [randn(4, 5)]


@case()
def cumulative_sum_prod():
    return (lambda x: (torch.cumsum(x, dim=1), torch.cumprod(x, dim=0))), [randn(3, 4)]


@case()
def sort_and_topk():
    return (lambda x: (torch.sort(x, dim=-1, descending=True), torch.topk(x, 3))), \
        [randn(4, 8)]


# ===--- Views, slicing, shapes ---------------------------------------------------=== #


@case()
def views_and_reshapes():
    def fn(x):
        return (x.view(4, 6), x.reshape(-1), x.permute(2, 0, 1), x.transpose(0, 1),
                x.unsqueeze(1).squeeze(1), x.flatten(1), x.unsqueeze(0).squeeze())

    return fn, [randn(2, 3, 4)]


@case()
def slicing():
    def fn(x):
        return x[1:3], x[:, ::2], x[..., -1], x[0], x.narrow(1, 1, 2), x[:, None, 1:]

    return fn, [randn(4, 5)]


@case()
def expand_repeat_cat_stack():
    def fn(x, y):
        return (x.expand(3, 4, 5), x.repeat(2, 1, 2), torch.cat([x, y], dim=1),
                torch.stack([x, x], dim=0), torch.split(y, [1, 2], dim=1),
                x.repeat(3, 1, 1, 2), x.repeat(0, 2, 1))

    return fn, [randn(1, 4, 5), randn(1, 3, 5)]


@case()
def chunk_and_unbind():
    return (lambda x: (*x.chunk(2, dim=1), *x.unbind(0))), [randn(3, 4)]


@case()
def flip_roll_pad():
    def fn(x):
        return torch.flip(x, [0, 1]), F.pad(x, (1, 2)), F.pad(x.unsqueeze(0), (1, 1), "reflect")

    return fn, [randn(3, 4)]


@case()
def contiguous_after_transpose():
    return (lambda x: x.transpose(0, 1).contiguous() + 1), [randn(3, 5)]


# ===--- Indexing ---------------------------------------------------------------------=== #


@case()
def gather_scatter():
    def fn(x, index, src):
        return (torch.gather(x, 1, index), x.scatter(1, index, src),
                x.scatter_add(1, index, src), x.scatter(1, index, 0.5))

    return fn, [randn(3, 5), torch.tensor([[0, 1], [2, 3], [4, 0]]), randn(3, 2)]


@case()
def index_select_and_advanced_indexing():
    def fn(x, idx):
        return x.index_select(0, idx), x[idx], x[:, idx], x[idx, idx]

    return fn, [randn(4, 4), torch.tensor([0, 2, 3])]


@case()
def index_put():
    # Replacing at duplicate indices is undefined (in PyTorch too): the
    # replacing put takes one index, the accumulating one all.
    def fn(x, idx, values):
        return (x.index_put((idx[:1],), values[:1]),
                x.index_put((idx,), values, accumulate=True))

    return fn, [randn(5, 3), torch.tensor([0, 3]), randn(2, 3)]


@case()
def masked_fill():
    return (lambda x: x.masked_fill(x < 0, 0.0)), [randn(4, 4)]


@case()
def embedding_lookup():
    return (lambda w, i: F.embedding(i, w)), [randn(10, 4), torch.tensor([[1, 2], [9, 0]])]


@case()
def one_hot_by_comparison():
    return (lambda labels: (labels.unsqueeze(-1) == torch.arange(5, device=labels.device))
                            .to(torch.float32)), \
        [torch.tensor([0, 3, 4, 1])]


# ===--- Pooling and convolution --------------------------------------------------=== #


@case()
def pooling():
    def fn(x):
        return (F.max_pool2d(x, 2), F.avg_pool2d(x, 3, stride=1, padding=1),
                F.adaptive_avg_pool2d(x, (2, 2)))

    return fn, [randn(2, 3, 8, 8)]


@case()
def conv1d_and_transposed_conv():
    class Convs(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 6, 3, padding=1)
            self.deconv = nn.ConvTranspose2d(3, 2, 2, stride=2)

        def forward(self, x, y):
            return self.conv(x), self.deconv(y)

    return Convs(), [randn(2, 4, 10), randn(1, 3, 4, 4)]


@case()
def upsample_nearest_and_bilinear():
    def fn(x):
        return (F.interpolate(x, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=(6, 6), mode="bilinear", align_corners=False))

    return fn, [randn(1, 2, 3, 3)]


@case()
def resampling_of_sequences_volumes_and_bicubic():
    def fn(x, v, h):
        return (F.interpolate(x, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=11, mode="linear"),
                F.interpolate(v, scale_factor=(1, 2, 2), mode="nearest"),
                F.interpolate(v, scale_factor=2, mode="trilinear", align_corners=True),
                F.interpolate(h, size=(7, 9), mode="bicubic"))

    return fn, [randn(2, 3, 8), randn(1, 2, 3, 4, 5), randn(1, 2, 5, 6)]


# ===--- dtypes ----------------------------------------------------------------------=== #


@case()
def dtype_casts():
    def fn(x, i):
        return x.to(torch.float16), x.to(torch.int32), i.to(torch.float64), \
            x.bool(), i.to(torch.uint8), x.to(torch.bfloat16).float()

    return fn, [randn(6), torch.randint(0, 100, (6,))]


@case()
def bfloat16_linear():
    return nn.Sequential(nn.Linear(8, 4), nn.ReLU()).to(torch.bfloat16), \
        [randn(2, 8, dtype=torch.bfloat16)]


@case()
def mixed_promotion():
    return (lambda h, i, d: (h * i, i / 2, h + d)), \
        [randn(4, dtype=torch.float16), torch.arange(4, dtype=torch.int32),
         torch.tensor(2.0, dtype=torch.float64)]


# ===--- Creation --------------------------------------------------------------------=== #


@case()
def creation_ops():
    def fn(x):
        d = x.device
        return (x + torch.ones(4, device=d), torch.zeros_like(x),
                torch.full((2, 4), 3.0, device=d), torch.arange(0, 8, 2, device=d),
                x * torch.tensor(2.0))

    return fn, [randn(2, 4)]


# ===--- Less common arguments ------------------------------------------------=== #


@case()
def convolution_variants():
    def fn(x, w, x3, w3, xt, wt):
        return (F.conv2d(x, w, stride=2, padding=2, dilation=2, groups=2), F.conv3d(x3, w3),
                F.conv_transpose2d(xt, wt, stride=2, output_padding=1))

    return fn, [randn(1, 4, 9, 9), randn(6, 2, 3, 3), randn(1, 2, 4, 4, 4),
                randn(3, 2, 2, 2, 2), randn(1, 2, 3, 3), randn(2, 3, 3, 3)]


@case()
def pooling_variants():
    def fn(x, y):
        return (F.max_pool2d(x, 3, stride=2, ceil_mode=True),
                F.max_pool2d(x, 2, return_indices=True),
                F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
                F.avg_pool2d(x, 2, divisor_override=3), F.avg_pool1d(y, 2), F.max_pool1d(y, 2),
                F.adaptive_avg_pool1d(y, 3))

    return fn, [randn(1, 2, 7, 7), randn(1, 2, 7)]


@case()
def causal_attention_mask():
    def fn(q, k, v):
        mask = torch.triu(torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool,
                                     device=q.device), 1)
        scores = (q @ k.transpose(-1, -2)).masked_fill(mask, float("-inf"))
        return torch.softmax(scores / math.sqrt(q.shape[-1]), -1) @ v

    return fn, [randn(2, 5, 8), randn(2, 5, 8), randn(2, 5, 8)]


@case()
def matmul_variants():
    def fn(a3, b3, m, v):
        return (torch.bmm(a3, b3), a3 @ m, m.t() @ v, v @ v, torch.einsum("bij,bjk->bik", a3, b3),
                F.linear(a3, m.t(), v))

    return fn, [randn(2, 3, 4), randn(2, 4, 5), randn(4, 4), randn(4)]


@case()
def normalization_variants():
    def fn(x, w, y, mean, var):
        return (F.group_norm(x, 2), F.layer_norm(x, (3, 5), w), F.instance_norm(x),
                F.batch_norm(y, None, None, training=True), F.batch_norm(y, mean, var))

    return fn, [randn(2, 4, 3, 5), randn(3, 5), randn(4, 3), torch.zeros(3), torch.ones(3)]


@case()
def reduction_arguments():
    def fn(x, i, u):
        return (x.argmax(1, keepdim=True), x.argmax(), torch.topk(x, 2, dim=0, largest=False),
                torch.logsumexp(x, (0, 1), keepdim=True), torch.var(x, dim=(0,), correction=0),
                i.prod(), x.mean(dtype=torch.float64), (x > 0).sum(), u.any(0),
                torch.cumsum(i, 0), torch.cumsum(x, 1, dtype=torch.float64),
                torch.std_mean(x, dim=1))

    return fn, [randn(3, 4), torch.arange(1, 5, dtype=torch.int16),
                torch.ones(3, 2, dtype=torch.uint8)]


@case()
def zero_dim_and_empty_tensors():
    def fn(s, e, x):
        return s.sum(), s.amax(), s.mean(), e.sum(0), torch.cat([e, x]), s * x

    return fn, [torch.tensor(3.0), randn(0, 3), randn(2, 3)]


@case()
def complex_arithmetic():
    return (lambda z, w: (z.abs(), z * w, torch.exp(z), z + 1.0)), \
        [torch.randn(4, dtype=torch.complex64), torch.randn(4, dtype=torch.complex64)]


@case()
def masks_and_boolean_indexing():
    # x[m] itself is refused: its size depends on m's values.
    def fn(x, m, i, s):
        return (x.masked_fill(m, 1.5), x.index_put((m,), torch.tensor(0.0)), torch.tril(x.view(2, 2)),
                x.scatter_reduce(0, i, s, "amax", include_self=False), F.threshold(x, 0.1, 20.0))

    return fn, [randn(4), torch.tensor([True, False, True, True]), torch.tensor([0, 1, 0, 3]),
                randn(4)]


@case()
def advanced_indexing_positions():
    def fn(x, i, j, v, g):
        return (x[:, i, :], x[j, :, j],
                x.index_put((j, torch.tensor([1, 3], device=x.device), j), v[:, 0],
                            accumulate=True),
                torch.gather(g, -1, torch.tensor([[0], [1], [3]], device=g.device)))

    return fn, [randn(3, 4, 3), torch.tensor([[0, 1], [2, 3]]), torch.tensor([0, 2]),
                randn(2, 4), randn(3, 4)]


@case()
def scatter_views():
    def fn(x, row, cols, diag_source):
        return (torch.select_scatter(x, row, 0, 1), torch.slice_scatter(x, cols, 1, 0, 4, 2),
                torch.diagonal(x, 1), torch.diagonal(diag_source, 0, 1, 2))

    return fn, [randn(3, 4), randn(4), randn(3, 2), randn(2, 3, 3)]


@case()
def as_strided_of_a_value():
    # torch 2.x records the storage that as_strided reads; on torch 1.13 the
    # op that made the operand (a multiplication, which aliases nothing)
    # and its contiguous layout say it owns it.
    def fn(x):
        return (x * 2).as_strided((2, 3), (1, 2), 1) + 1

    return fn, [randn(3, 4)]


@case()
def padding_and_resampling():
    def fn(x, img, cols):
        return (F.pad(x, (-1, 2, 1, 0), value=2.0), F.pad(img, (1, 1, 1, 1), mode="replicate"),
                F.interpolate(img, scale_factor=2, mode="bilinear", align_corners=True),
                F.unfold(img, 2), F.fold(cols, (3, 3), 2))

    return fn, [randn(3, 4), randn(1, 1, 3, 3), randn(1, 4, 4)]


@case()
def losses():
    def fn(logits, target, a, b):
        return F.cross_entropy(logits, target), F.mse_loss(a, b), F.l1_loss(a, b)

    return fn, [randn(3, 5), torch.tensor([1, 0, 4]), randn(3, 5), randn(3, 5)]


@case()
def more_losses():
    # cosine_similarity clamps in place; torch 1.13 has no decomposition of
    # smooth_l1_loss. (Label smoothing averages with masked_select, whose
    # size tracing bakes in: refused.)
    def fn(logits, target, a, b):
        return (F.cross_entropy(logits, target), F.smooth_l1_loss(a, b),
                F.smooth_l1_loss(a, b, beta=0.5, reduction="sum"),
                F.smooth_l1_loss(a, b, beta=0.0, reduction="none"), F.cosine_similarity(a, b))

    return fn, [randn(3, 5), torch.tensor([1, 0, 4]), randn(3, 5), randn(3, 5)]


@case()
def writes_through_boolean_masks():
    # x[mask] = v of one value is where(mask, v, x), whatever the mask
    # selects.
    def fn(x, mask, i):
        y = x.clone()
        y[mask] = 0.5
        z = i.clone()
        z[mask[:, 0]] = 7
        w = x.clone()
        w[x < 0] = -1
        v = x.clone()
        v.index_put_((mask,), torch.tensor(2.0, device=x.device), accumulate=True)
        return y, z, w, v

    return fn, [randn(3, 4), torch.rand(3, 4) > 0.5, torch.randint(0, 9, (3, 5))]


@case()
def adaptive_max_pooling_index_add_linspace():
    # Kiln decomposes adaptive max pooling (windows that divide and that
    # do not; the indices too) and index_add (torch 1.13's decomposition
    # does not trace); torch 1.13's linspace converts with prims.to_dtype.
    def fn(x, source, index):
        values, indices = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
        return (values, indices, F.adaptive_max_pool2d(x, (2, 4)),
                x.index_add(3, index, source, alpha=0.5),
                x * torch.linspace(-1, 1, 8, device=x.device))

    return fn, [randn(2, 3, 7, 8), randn(2, 3, 7, 5), torch.tensor([0, 7, 2, 2, 7])]


@case()
def embedding_bags():
    # Bags by offsets (an empty one, the last offset ending the last bag),
    # of a 2-d input, with per-sample weights and a padding index; sums,
    # means and maxima.
    def fn(weight, flat, grid, sample_weights):
        # Constants: the suite draws other values for integer inputs.
        offsets = torch.tensor([0, 2, 2, 5], device=weight.device)
        last = torch.tensor([0, 3, 3, 7], device=weight.device)
        return (F.embedding_bag(flat, weight, offsets, mode="sum"),
                F.embedding_bag(flat, weight, offsets, mode="max"),
                F.embedding_bag(flat, weight, last, mode="mean", include_last_offset=True),
                F.embedding_bag(grid, weight, mode="mean", padding_idx=3),
                F.embedding_bag(grid, weight, mode="max"),
                F.embedding_bag(flat, weight, offsets, mode="sum",
                                per_sample_weights=sample_weights))

    return fn, [randn(10, 4), torch.tensor([1, 3, 3, 9, 0, 2, 7]),
                torch.tensor([[3, 3, 1], [2, 3, 5], [3, 3, 3]]), randn(7)]


@case()
def affine_grids():
    def fn(theta, theta3):
        return (F.affine_grid(theta, (2, 3, 5, 4), align_corners=False),
                F.affine_grid(theta, (2, 1, 1, 4), align_corners=True),
                F.affine_grid(theta3, (2, 1, 3, 4, 5), align_corners=False))

    return fn, [randn(2, 2, 3), randn(2, 3, 4)]


@case()
def parametric_activations():
    # PReLU's weight is a constant that torch 1.13 traces without a value.
    return nn.Sequential(nn.Linear(8, 8), nn.PReLU(), nn.Linear(8, 8), nn.PReLU(8)), \
        [randn(4, 8)]


@case()
def integer_and_promotion_edges():
    def fn(a, b8, f):
        return (a / a, torch.div(a, a, rounding_mode="trunc"), a % b8, a ** 2, torch.erf(a),
                torch.isnan(a), torch.clamp(a, min=2), torch.where(f > 0, f, torch.tensor(1)),
                torch.pow(2.0, f), torch.fmod(f, 1.5), f + torch.full((4,), 2, device=f.device))

    return fn, [torch.arange(1, 5), torch.arange(1, 5, dtype=torch.int8), randn(4)]
