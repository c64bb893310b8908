"""Self-attention, cross-attention and multi-head attention (5.2).

A multi-head attention layer projects the query sequence ``X_q`` (B, T_q, d_model) and
the key-value sequence ``X_kv`` (B, T_k, d_kv) with one matrix each (``W_q``, ``W_k``,
``W_v``, all with ``h d_k = d_model`` outputs), splits the projections into ``h`` heads
of width ``d_k``, runs :func:`flt_lib.attention.scoring.attention` on every head at
once, concatenates the heads and mixes them with ``W_o`` (Vaswani et al. 2017,
section 3.2.2). Self-attention is the case ``X_kv = X_q``; cross-attention
(an encoder-decoder's) has ``X_kv`` from another sequence.

Weights are stored as ``nn.Linear`` layers (``y = x W^T + b``) so that they copy
one-to-one from and to ``torch.nn.MultiheadAttention`` (:func:`from_torch`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.attention.positions import rotary
from flt_lib.attention.scoring import attention

__all__ = [
    "MultiHeadAttention",
    "equivariance_gap",
    "from_torch",
    "heads_one_by_one",
    "init_linear",
    "merge_heads",
    "split_heads",
]


def init_linear(layer: nn.Linear, *, generator: torch.Generator) -> nn.Linear:
    """Re-draw an ``nn.Linear``'s weight and bias from
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.

    This is PyTorch's default initialisation, drawn from an explicit generator so that a
    model is the same on every device and in every call order. Returns the layer
    (changed in place).
    """
    if not isinstance(layer, nn.Linear):
        raise TypeError(f"layer must be a torch.nn.Linear, got {type(layer).__name__}")
    check_generator(generator)
    bound = 1.0 / math.sqrt(layer.in_features)
    with torch.no_grad():
        for p in (layer.weight, layer.bias):
            if p is not None:
                u = torch.rand(p.shape, generator=generator, dtype=p.dtype)
                p.copy_(u * 2 * bound - bound)
    return layer


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Reshape (B, T, h d_k) into h heads (B, h, T, d_k).

    Head ``j`` gets the columns ``j d_k, ..., (j+1) d_k - 1``.
    """
    x = check_tensor(x, "x", ndim=3, shape_doc="(B, T, h d_k)")
    n_heads = check_int(n_heads, "n_heads", min_value=1)
    if x.shape[2] % n_heads:
        raise ValueError(
            f"the last dimension of x ({x.shape[2]}) must be divisible by "
            f"n_heads={n_heads}"
        )
    return _split_heads(x, n_heads)


def _split_heads(x, n_heads):
    B, T, width = x.shape
    return x.view(B, T, n_heads, width // n_heads).transpose(1, 2)  # (B, h, T, d_k)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads, (B, h, T, d_k) -> (B, T, h d_k); inverse of
    :func:`split_heads`."""
    x = check_tensor(x, "x", ndim=4, shape_doc="(B, h, T, d_k)")
    B, h, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_k)


class MultiHeadAttention(nn.Module):
    """Multi-head attention ``concat(head_1, ..., head_h) W_o`` (eq-attn-mha).

    Head ``j`` is ``attention(X_q W_q^j, X_kv W_k^j, X_kv W_v^j)``.

    Args:
        d_model: width of the queries and of the output; ``d_model = h d_k``.
        n_heads: number of heads ``h``; must divide ``d_model``.
        d_kv: width of the key-value input (cross-attention from another sequence);
            default ``d_model``.
        bias: whether the four projections have biases (torch's default: yes).
        rope_base: if given, rotate queries and keys by rotary position embeddings with
            this frequency base (5.3; self-attention only).
        generator: draws the initial weights (PyTorch's default scheme, see
            :func:`init_linear`).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        d_kv: int | None = None,
        bias: bool = True,
        rope_base: float | None = None,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        self.d_model = check_int(d_model, "d_model", min_value=1)
        self.n_heads = check_int(n_heads, "n_heads", min_value=1)
        if d_model % n_heads:
            raise ValueError(
                f"n_heads must divide d_model, got d_model={d_model}, n_heads={n_heads}"
            )
        self.d_k = d_model // n_heads
        self.d_kv = d_model if d_kv is None else check_int(d_kv, "d_kv", min_value=1)
        if rope_base is not None:
            rope_base = check_real(
                rope_base, "rope_base", min_value=1.0, strict_min=True
            )
        self.rope_base = rope_base
        check_generator(generator)
        self.W_q = init_linear(
            nn.Linear(d_model, d_model, bias=bias), generator=generator
        )
        self.W_k = init_linear(
            nn.Linear(self.d_kv, d_model, bias=bias), generator=generator
        )
        self.W_v = init_linear(
            nn.Linear(self.d_kv, d_model, bias=bias), generator=generator
        )
        self.W_o = init_linear(
            nn.Linear(d_model, d_model, bias=bias), generator=generator
        )

    def project_kv(self, x_kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of a sequence, split into heads: two tensors
        (B, h, T_k, d_k).

        A decoder caches these (the key-value cache of 5.5): they depend on a token and
        the tokens before it only, so they never need recomputing.
        """
        check_tensor(
            x_kv,
            "x_kv",
            ndim=3,
            shape=(None, None, self.d_kv),
            floating=True,
            shape_doc=f"(B, T_k, d_kv) with d_kv = {self.d_kv}",
        )
        k = split_heads(self.W_k(x_kv), self.n_heads)  # (B, h, T_k, d_k)
        v = split_heads(self.W_v(x_kv), self.n_heads)  # (B, h, T_k, d_k)
        return k, v

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
        kv: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``x_q`` to ``x_kv`` (self-attention when ``x_kv`` is None).

        Args:
            x_q: queries' input, shape (B, T_q, d_model).
            x_kv: keys' and values' input, shape (B, T_k, d_kv); None means ``x_q``.
            mask: boolean mask broadcastable to (B, h, T_q, T_k); True = may attend.
            bias: additive score bias broadcastable to (B, h, T_q, T_k).
            kv: precomputed ``(k, v)`` from :meth:`project_kv`, each (B, h, T_k, d_k),
                used instead of ``x_kv`` (a cache).

        Returns:
            ``(out, A)``: output (B, T_q, d_model) and weights (B, h, T_q, T_k).
        """
        check_tensor(
            x_q,
            "x_q",
            ndim=3,
            shape=(None, None, self.d_model),
            floating=True,
            shape_doc=f"(B, T_q, d_model) with d_model = {self.d_model}",
        )
        if kv is not None and x_kv is not None:
            raise ValueError(
                "give either x_kv or kv (cached keys and values), not both"
            )
        if self.rope_base is not None and (x_kv is not None or kv is not None):
            raise ValueError(
                "rotary positions support self-attention only "
                "(x_kv and kv must be None)"
            )
        return self._forward(x_q, x_kv, mask, bias, kv)

    def _forward(self, x_q, x_kv, mask, bias, kv):
        q = split_heads(self.W_q(x_q), self.n_heads)  # (B, h, T_q, d_k)
        k, v = kv if kv is not None else self.project_kv(x_q if x_kv is None else x_kv)
        if self.rope_base is not None:
            q, k = rotary(q, base=self.rope_base), rotary(k, base=self.rope_base)
        # (B, h, T_q, d_k) and weights (B, h, T_q, T_k)
        out, weights = attention(q, k, v, mask=mask, bias=bias)
        return self.W_o(merge_heads(out)), weights


def heads_one_by_one(
    mha: MultiHeadAttention,
    x_q: torch.Tensor,
    x_kv: torch.Tensor | None = None,
    *,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same layer computed head by head, each with its own slices of the weights.

    Head ``j`` uses rows ``j d_k .. (j+1) d_k - 1`` of ``W_q, W_k, W_v`` and the
    matching columns of ``W_o``: ``out = sum_j head_j W_o^j + b_o``. A loop, for
    checking that the reshape of :func:`split_heads` computes the same thing.

    Returns:
        ``(out, A)`` as :meth:`MultiHeadAttention.forward`.
    """
    if not isinstance(mha, MultiHeadAttention):
        raise TypeError(f"mha must be a MultiHeadAttention, got {type(mha).__name__}")
    return _heads_one_by_one(mha, x_q, x_kv, mask=mask)


def _heads_one_by_one(
    mha: MultiHeadAttention,
    x_q: torch.Tensor,
    x_kv: torch.Tensor | None = None,
    *,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The check-free core of :func:`heads_one_by_one` (arguments already checked)."""
    x_kv = x_q if x_kv is None else x_kv
    out = mha.W_o.bias.clone() if mha.W_o.bias is not None else 0.0
    all_weights = []
    for j in range(mha.n_heads):
        rows = slice(j * mha.d_k, (j + 1) * mha.d_k)

        def proj(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
            b = layer.bias[rows] if layer.bias is not None else 0.0
            return x @ layer.weight[rows].T + b  # (B, T, d_k)

        q, k, v = proj(mha.W_q, x_q), proj(mha.W_k, x_kv), proj(mha.W_v, x_kv)
        if mha.rope_base is not None:
            q, k = rotary(q, base=mha.rope_base), rotary(k, base=mha.rope_base)
        head, weights = attention(q, k, v, mask=mask)  # (B, T_q, d_k), (B, T_q, T_k)
        out = out + head @ mha.W_o.weight[:, rows].T  # (B, T_q, d_model)
        all_weights.append(weights)
    return out, torch.stack(all_weights, dim=1)


def from_torch(torch_mha: nn.MultiheadAttention) -> MultiHeadAttention:
    """A :class:`MultiHeadAttention` holding copies of a
    ``torch.nn.MultiheadAttention``'s weights.

    Works for ``batch_first`` layers with equal or different key/value widths
    (``kdim = vdim``).
    """
    if not isinstance(torch_mha, nn.MultiheadAttention):
        raise TypeError(
            f"torch_mha must be a torch.nn.MultiheadAttention, got "
            f"{type(torch_mha).__name__}"
        )
    if torch_mha.kdim != torch_mha.vdim:
        raise ValueError(
            f"kdim must equal vdim, got kdim={torch_mha.kdim}, vdim={torch_mha.vdim}"
        )
    E = torch_mha.embed_dim
    has_bias = torch_mha.in_proj_bias is not None
    ours = MultiHeadAttention(
        E,
        torch_mha.num_heads,
        d_kv=torch_mha.kdim,
        bias=has_bias,
        generator=torch.Generator().manual_seed(0),
    )
    ours = ours.to(
        dtype=torch_mha.out_proj.weight.dtype, device=torch_mha.out_proj.weight.device
    )
    if torch_mha._qkv_same_embed_dim:
        w_q, w_k, w_v = torch_mha.in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = (
            torch_mha.q_proj_weight,
            torch_mha.k_proj_weight,
            torch_mha.v_proj_weight,
        )
    with torch.no_grad():
        for layer, w in ((ours.W_q, w_q), (ours.W_k, w_k), (ours.W_v, w_v)):
            layer.weight.copy_(w)
        ours.W_o.weight.copy_(torch_mha.out_proj.weight)
        if has_bias:
            for layer, b in zip(
                (ours.W_q, ours.W_k, ours.W_v), torch_mha.in_proj_bias.chunk(3)
            ):
                layer.bias.copy_(b)
            ours.W_o.bias.copy_(torch_mha.out_proj.bias)
    return ours


def equivariance_gap(
    f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, perm: torch.Tensor
) -> float:
    """``max |f(x[:, perm]) - f(x)[:, perm]|``, zero exactly when ``f`` commutes with
    ``perm``.

    Args:
        f: maps a sequence batch (B, T, d) to (B, T, d_out).
        x: inputs, shape (B, T, d).
        perm: a permutation of ``0..T-1``, long tensor (T,).

    Returns:
        The largest absolute difference (eq-attn-equivariance).
    """
    x = check_tensor(x, "x", ndim=3, shape_doc="(B, T, d)")
    perm = check_tensor(
        perm, "perm", shape=(x.shape[1],), shape_doc=f"(T,) = ({x.shape[1]},)"
    )
    is_perm = torch.equal(perm.sort().values.cpu(), torch.arange(x.shape[1]))
    if perm.is_floating_point() or not is_perm:
        raise ValueError(
            f"perm must be a permutation of 0..{x.shape[1] - 1}, "
            f"got {perm.tolist()}"
        )
    return _equivariance_gap(f, x, perm)


def _equivariance_gap(
    f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, perm: torch.Tensor
) -> float:
    """The check-free core of :func:`equivariance_gap` (arguments already checked)."""
    perm = perm.to(x.device)
    return (f(x[:, perm]) - f(x)[:, perm]).abs().max().item()
