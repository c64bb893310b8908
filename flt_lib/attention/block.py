"""The transformer block (5.4): LayerNorm, the position-wise FFN, residual connections.

A block applies two (encoder) or three (decoder) sublayers, each wrapped in a residual
connection and a LayerNorm, in one of two orders:

- Post-LN (Vaswani et al. 2017): ``x <- LN(x + f(x))``;
- Pre-LN: ``x <- x + f(LN(x))``, in use in tensor2tensor (Vaswani et al. 2018),
  Baevski & Auli (2019) and GPT-2 (Radford et al. 2019), studied for deep models by
  Wang et al. (2019) and analysed at initialisation by Xiong et al. (2020).

``norm="none"`` keeps the residual but drops the normalisation, and ``skip=False`` drops
the residual (pure attention, for rank collapse). LayerNorm is the book's
:func:`flt_lib.training.normalisation.layer_norm` (Section 3.6) applied to every token.

Also here: stacks of pure attention layers and the residual ``X - 1 xbar^T`` that
measures their rank collapse (Dong, Cordonnier & Loukas 2021).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)
from flt_lib.attention.multi_head import MultiHeadAttention, from_torch, init_linear
from flt_lib.attention.scoring import attention

__all__ = [
    "BlockOutput",
    "FeedForward",
    "TokenLayerNorm",
    "TransformerBlock",
    "block_from_torch",
    "pure_attention_stack",
    "random_attention_weights",
    "relative_residual",
    "xavier_init_",
]

NORMS = ("pre", "post", "none")


class TokenLayerNorm(nn.Module):
    """LayerNorm over the last axis of (B, T, d): each token is standardised on its own.

    The normalisation of eq-attn-layernorm.

    It computes :func:`flt_lib.training.normalisation.layer_norm` (Section 3.6) on every
    token, with torch's fused kernel ``F.layer_norm`` for speed; the tests check that
    the two agree.
    """

    def __init__(self, d: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d = check_int(d, "d", min_value=2)
        self.eps = check_real(eps, "eps", min_value=0.0)
        self.gamma = nn.Parameter(torch.ones(d))
        self.beta = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Map (..., d) to (..., d); x ->
        ``gamma (x - mean) / sqrt(var + eps) + beta``."""
        check_tensor(x, "x", floating=True)
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(
                f"x must have last dimension d = {self.d}, got shape {tuple(x.shape)}"
            )
        return F.layer_norm(x, (self.d,), self.gamma, self.beta, self.eps)


class FeedForward(nn.Module):
    """The position-wise network ``FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2``
    (eq-attn-block)."""

    def __init__(self, d_model: int, d_ff: int, *, generator: torch.Generator) -> None:
        super().__init__()
        check_int(d_model, "d_model", min_value=1)
        check_int(d_ff, "d_ff", min_value=1)
        self.W_1 = init_linear(nn.Linear(d_model, d_ff), generator=generator)
        self.W_2 = init_linear(nn.Linear(d_ff, d_model), generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Map (B, T, d_model) to (B, T, d_model), the same network at every
        position."""
        return self.W_2(torch.relu(self.W_1(x)))  # (B, T, d_model)


@dataclass(frozen=True)
class BlockOutput:
    """What a :class:`TransformerBlock` returns."""

    x: torch.Tensor                     # (B, T, d_model) the block's output
    self_weights: torch.Tensor          # (B, h, T, T) self-attention weights
    # (B, h, T, T_mem) cross-attention weights, or None
    cross_weights: torch.Tensor | None


class TransformerBlock(nn.Module):
    """A transformer block: self-attention, optional cross-attention, optional FFN
    (eq-attn-block).

    Args:
        d_model: token width.
        n_heads: attention heads.
        d_ff: hidden width of the FFN; 0 means no FFN (an attention-only block).
        norm: ``"pre"``, ``"post"`` or ``"none"`` (see the module docstring).
        skip: keep the residual connections (False: pure attention).
        cross: add a cross-attention sublayer (a decoder block).
        rope_base: if given, rotary positions with this base in the self-attention.
        generator: draws the initial weights.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        *,
        norm: str = "pre",
        skip: bool = True,
        cross: bool = False,
        rope_base: float | None = None,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        self.norm = str(check_choice(norm, "norm", NORMS))
        self.skip = bool(skip)
        d_ff = check_int(d_ff, "d_ff", min_value=0)
        self.self_attn = MultiHeadAttention(d_model, n_heads, rope_base=rope_base,
                                            generator=generator)
        self.cross_attn = None
        if cross:
            self.cross_attn = MultiHeadAttention(d_model, n_heads, generator=generator)
        self.ffn = FeedForward(d_model, d_ff, generator=generator) if d_ff else None
        n_sub = 1 + bool(cross) + bool(d_ff)
        n_norms = n_sub if norm != "none" else 0
        self.norms = nn.ModuleList(TokenLayerNorm(d_model) for _ in range(n_norms))

    def sublayer(
        self, i: int, x: torch.Tensor, f: Callable[[torch.Tensor], torch.Tensor]
    ) -> torch.Tensor:
        """Sublayer ``i`` around ``f``: ``x + f(LN(x))`` (pre), ``LN(x + f(x))`` (post)
        or ``x + f(x)`` (none); without the skip, ``f(LN(x))``, ``LN(f(x))`` or
        ``f(x)``."""
        return self.write(i, x, f(self.read(i, x)))

    def read(self, i: int, x: torch.Tensor) -> torch.Tensor:
        """What sublayer ``i`` reads from the stream ``x``: ``LN(x)`` (Pre-LN) or
        ``x``."""
        return self.norms[i](x) if self.norm == "pre" else x

    def write(self, i: int, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """How sublayer ``i``'s output ``y`` rejoins the stream ``x``: ``x + y`` (or
        ``y`` without the skip), then ``LN`` in a Post-LN block."""
        y = x + y if self.skip else y
        return self.norms[i](y) if self.norm == "post" else y

    def forward(
        self,
        x: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        memory: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
    ) -> BlockOutput:
        """Apply the block.

        Args:
            x: tokens, shape (B, T, d_model).
            mask: self-attention mask (T, T), True = may attend (e.g.
                :func:`causal_mask`).
            memory: the encoder's output (B, T_mem, d_model), required iff
                ``cross=True``.
            memory_mask: cross-attention mask (T, T_mem) or (B, 1, 1, T_mem).
            bias: additive self-attention score bias broadcastable to (B, h, T, T),
                e.g. :func:`flt_lib.attention.positions.alibi_bias`.

        Returns:
            A :class:`BlockOutput`.
        """
        check_tensor(x, "x", ndim=3, floating=True, shape_doc="(B, T, d_model)")
        if (memory is None) != (self.cross_attn is None):
            raise ValueError(
                "memory must be given exactly when the block has cross-attention "
                "(cross=True)"
            )
        return self._forward(x, mask, memory, memory_mask, bias)

    def _forward(self, x, mask, memory, memory_mask, bias):
        # Pre-LN: x <- x + f(LN(x));  Post-LN: x <- LN(x + f(x));  x: (B, T, d_model)
        a, A_self = self.self_attn(self.read(0, x), mask=mask, bias=bias)  # f = MHA
        x = self.write(0, x, a)
        A_cross, i = None, 1
        if self.cross_attn is not None:                        # f = cross-attention
            c, A_cross = self.cross_attn(self.read(1, x), memory, mask=memory_mask)
            x, i = self.write(1, x, c), 2
        if self.ffn is not None:                               # f = FFN
            x = self.write(i, x, self.ffn(self.read(i, x)))
        return BlockOutput(x=x, self_weights=A_self, cross_weights=A_cross)


def random_attention_weights(n_layers: int, d: int, *, generator: torch.Generator,
                             dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Independent ``W_Q, W_K, W_V`` per layer with i.i.d. ``N(0, 1/d)`` entries.

    Returns:
        Weights, shape (n_layers, 3, d, d): ``[l, 0]`` is ``W_Q``, ``[l, 1]`` is ``W_K``
        and ``[l, 2]`` is ``W_V`` of layer ``l``.
    """
    n_layers = check_int(n_layers, "n_layers", min_value=1)
    d = check_int(d, "d", min_value=1)
    check_generator(generator)
    return torch.randn(n_layers, 3, d, d, generator=generator, dtype=dtype) / d**0.5


def block_from_torch(
    layer: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer,
) -> TransformerBlock:
    """A :class:`TransformerBlock` holding copies of a torch encoder or decoder layer's
    weights, LayerNorm gains and shifts included.

    The layer must use ReLU, ``batch_first=True`` and no dropout at evaluation; its
    ``norm_first`` picks Pre-LN or Post-LN. Torch's ``norm1, norm2(, norm3)`` become the
    block's norms in sublayer order (self-attention, cross-attention, FFN).
    """
    if not isinstance(layer, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        raise TypeError(
            "layer must be a torch.nn.TransformerEncoderLayer or "
            f"TransformerDecoderLayer, got {type(layer).__name__}"
        )
    cross = isinstance(layer, nn.TransformerDecoderLayer)
    w = layer.linear1.weight
    ours = TransformerBlock(
        layer.self_attn.embed_dim,
        layer.self_attn.num_heads,
        layer.linear1.out_features,
        norm="pre" if layer.norm_first else "post", cross=cross,
        generator=torch.Generator().manual_seed(0),
    ).to(dtype=w.dtype, device=w.device)
    ours.self_attn = from_torch(layer.self_attn)
    if cross:
        ours.cross_attn = from_torch(layer.multihead_attn)
    norms = [layer.norm1, layer.norm2] + ([layer.norm3] if cross else [])
    with torch.no_grad():
        for mine, theirs in zip(ours.norms, norms):
            mine.gamma.copy_(theirs.weight)
            mine.beta.copy_(theirs.bias)
            mine.eps = theirs.eps
        ffns = ((ours.ffn.W_1, layer.linear1), (ours.ffn.W_2, layer.linear2))
        for mine, theirs in ffns:
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)
    return ours


def pure_attention_stack(
    X: torch.Tensor, weights: torch.Tensor, *, skip: bool
) -> torch.Tensor:
    """Apply single-head self-attention layers
    ``X <- softmax(X W_Q (X W_K)^T / sqrt d) X W_V``.

    No FFN and no normalisation: the self-attention network (SAN) of Dong, Cordonnier &
    Loukas (2021); with ``skip=True`` each layer adds its input back,
    ``X <- X + SA(X)``.

    Args:
        X: one sequence, shape (n, d).
        weights: per-layer ``(W_Q, W_K, W_V)``, shape (n_layers, 3, d, d) (see
            :func:`random_attention_weights`).
        skip: add the residual connection.

    Returns:
        The representations after every layer, shape (n_layers + 1, n, d); entry 0 is
        ``X``.
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    d = X.shape[1]
    weights = check_tensor(
        weights,
        "weights",
        ndim=4,
        shape=(None, 3, d, d),
        floating=True,
        shape_doc=f"(n_layers, 3, d, d) with d = {d}",
    )
    return _pure_attention_stack(X, weights, skip)


def _pure_attention_stack(X, weights, skip):
    out = [X]
    for W_Q, W_K, W_V in weights.to(device=X.device, dtype=X.dtype):
        head, _ = attention(X @ W_Q, X @ W_K, X @ W_V)  # (n, d)
        X = head + X if skip else head
        out.append(X)
    return torch.stack(out)


def relative_residual(X: torch.Tensor) -> torch.Tensor:
    """Relative distance to rank one, ``||X - 1 xbar^T|| / ||X||`` with ``xbar`` the
    mean token.

    The norm is the composite ``||M||_{1,inf} = sqrt(||M||_1 ||M||_inf)`` of Dong et al.
    (2021) (max column sum times max row sum); zero exactly when every token is the
    same.

    Args:
        X: token matrices, shape (..., n, d).

    Returns:
        Ratios, shape (...,).
    """
    X = check_tensor(X, "X", floating=True)
    if X.ndim < 2:
        raise ValueError(f"X must have shape (..., n, d), got {tuple(X.shape)}")
    return _relative_residual(X)


def _relative_residual(X: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`relative_residual` (arguments already checked)."""
    def norm(M: torch.Tensor) -> torch.Tensor:
        l1 = M.abs().sum(-2).amax(-1)  # max column sum
        linf = M.abs().sum(-1).amax(-1)  # max row sum
        return (l1 * linf).sqrt()

    return norm(X - X.mean(dim=-2, keepdim=True)) / norm(X)


def xavier_init_(model: nn.Module, *, generator: torch.Generator) -> nn.Module:
    """Re-draw every ``nn.Linear`` weight of ``model`` from Xavier's uniform law, biases
    zero.

    ``U(-a, a)`` with ``a = sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio 2010), the
    initialisation of the transformers studied by Xiong et al. (2020). Returns
    ``model``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_generator(generator)
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                a = (6.0 / (layer.in_features + layer.out_features)) ** 0.5
                w = (torch.rand(layer.weight.shape, generator=generator) * 2 - 1) * a
                layer.weight.copy_(w)
                if layer.bias is not None:
                    layer.bias.zero_()
    return model
