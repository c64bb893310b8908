"""Attention as a soft dictionary lookup: scoring functions and the one attention kernel
(5.1).

Conventions: tokens are rows. Queries ``q`` have shape (..., T_q, d_k), keys ``k``
(..., T_k, d_k) and values ``v`` (..., T_k, d_v); the leading dimensions (batch, heads)
are shared. A boolean ``mask`` is True where a query **may** attend to a key
(torch's convention). Attention weights ``A`` have shape (..., T_q, T_k) and every row
sums to one.

:func:`attention` is the book's single implementation of softmax attention: every later
section (multi-head attention, positions, the transformer block, encoder-decoder, BERT,
ViT, induction heads, attention as convolution) calls it.

References: Luong, Pham & Manning (2015) for dot-product scores; Vaswani et al. (2017)
for the scaled dot product. Bahdanau, Cho & Bengio's additive scores are implemented in
Chapter 4, :func:`flt_lib.recurrent.seq2seq.additive_attention`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "ScoreStats",
    "attention",
    "attention_from_scores",
    "causal_mask",
    "dot_product_scores",
    "score_statistics",
    "softmax_jacobian",
]


def _check_qk(q: object, k: object) -> tuple[torch.Tensor, torch.Tensor]:
    q = check_tensor(q, "q", floating=True)
    k = check_tensor(k, "k", floating=True)
    if q.ndim < 2:
        raise ValueError(
            f"q must have at least 2 dimensions (..., T_q, d_k), got shape "
            f"{tuple(q.shape)}"
        )
    if k.ndim != q.ndim or k.shape[:-2] != q.shape[:-2] or k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"k must have shape (..., T_k, d_k) = "
            f"{(*q.shape[:-2], 'T_k', q.shape[-1])} to match "
            f"q of shape {tuple(q.shape)}, got {tuple(k.shape)}"
        )
    return q, k


def dot_product_scores(
    q: torch.Tensor, k: torch.Tensor, *, scale: float | None = None
) -> torch.Tensor:
    """Scores ``q_i . k_t * scale``; the default scale is ``1/sqrt(d_k)``
    (eq-attn-scores).

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k).
        scale: multiplies every score; None means ``1/sqrt(d_k)`` (the scaled dot
            product), ``1.0`` gives the plain dot product.

    Returns:
        Scores, shape (..., T_q, T_k).
    """
    q, k = _check_qk(q, k)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    else:
        scale = check_real(scale, "scale", min_value=0.0, strict_min=True)
    return (q * scale) @ k.transpose(-2, -1)  # (..., T_q, T_k)


def causal_mask(
    T_q: int, T_k: int | None = None, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """Boolean mask, True where query ``i`` may attend to key ``t``:
    ``t <= i + (T_k - T_q)``.

    With ``T_k = T_q`` this is the lower-triangular mask of a decoder: a token sees
    itself and its past. With ``T_k > T_q`` (queries are the last ``T_q`` of ``T_k``
    tokens, as when a key-value cache holds the past) the diagonal is shifted
    accordingly.

    Args:
        T_q: number of queries, >= 1.
        T_k: number of keys, >= T_q; None means ``T_q``.
        device: where to create the mask.

    Returns:
        Boolean tensor, shape (T_q, T_k).
    """
    T_q = check_int(T_q, "T_q", min_value=1)
    T_k = T_q if T_k is None else check_int(T_k, "T_k", min_value=T_q)
    return _causal_mask(T_q, T_k, device=device)


def _causal_mask(
    T_q: int, T_k: int, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """The check-free core of :func:`causal_mask` (arguments already checked)."""
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(
        diagonal=T_k - T_q
    )


def _check_mask(mask: object, T_q: int, T_k: int) -> torch.Tensor:
    """Check a mask's type and shape, and, for a mask on the CPU, that no row is all
    False (such a query would get NaN weights). On an accelerator the row test is
    skipped: it would read the mask back to the host on every call."""
    mask = check_tensor(mask, "mask")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}"
        )
    if mask.ndim < 2 or mask.shape[-1] != T_k or mask.shape[-2] not in (1, T_q):
        raise ValueError(
            f"mask must have shape (..., T_q, T_k) = (..., {T_q}, {T_k}) "
            f"(or (..., 1, {T_k})), "
            f"got {tuple(mask.shape)}"
        )
    if mask.device.type == "cpu" and not bool(mask.any(dim=-1).all()):
        raise ValueError(
            "mask must let every query attend to at least one key; a row is all False"
        )
    return mask


def attention_from_scores(
    scores: torch.Tensor, v: torch.Tensor, *, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Row softmax of the scores, then a mix of the values: ``softmax(S) V``
    (eq-attn-lookup).

    Masked entries get weight exactly zero.

    Args:
        scores: scores ``S``, shape (..., T_q, T_k).
        v: values, shape (..., T_k, d_v).
        mask: optional boolean mask broadcastable to (..., T_q, T_k); True = may attend.

    Returns:
        ``(out, A)``: the outputs ``A V``, shape (..., T_q, d_v), and the weights ``A``,
        shape (..., T_q, T_k).
    """
    scores = check_tensor(scores, "scores", floating=True)
    v = check_tensor(v, "v", floating=True)
    if scores.ndim < 2 or v.ndim < 2 or v.shape[-2] != scores.shape[-1]:
        raise ValueError(
            f"v must have shape (..., T_k, d_v) with T_k the last dimension of scores "
            f"{tuple(scores.shape)}, got {tuple(v.shape)}"
        )
    if mask is not None:
        mask = _check_mask(mask, *scores.shape[-2:])
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
    return weights @ v, weights  # (..., T_q, d_v)


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
    bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention ``softmax(q k^T / sqrt(d_k) + bias) v``
    (eq-attn-sdpa).

    The book's one attention kernel (Vaswani et al. 2017, eq. 1). It equals
    ``torch.nn.functional.scaled_dot_product_attention`` but also returns the weights.

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k).
        v: values, shape (..., T_k, d_v).
        mask: optional boolean mask broadcastable to (..., T_q, T_k); True = may attend.
        scale: multiplies ``q . k``; None means ``1/sqrt(d_k)``.
        bias: optional additive score bias broadcastable to (..., T_q, T_k) (relative
            positions, ALiBi, the positional scores of attention-as-convolution).

    Returns:
        ``(out, A)``: outputs, shape (..., T_q, d_v), and weights, shape
        (..., T_q, T_k).
    """
    q, k = _check_qk(q, k)
    v = check_tensor(v, "v", floating=True)
    if v.ndim < 2 or v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v must have shape (..., T_k, d_v) with T_k = {k.shape[-2]} keys, "
            f"got {tuple(v.shape)}"
        )
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    else:
        scale = check_real(scale, "scale", min_value=0.0, strict_min=True)
    if bias is not None:
        check_tensor(bias, "bias", floating=True)
    if mask is not None:
        _check_mask(mask, q.shape[-2], k.shape[-2])
    return _attention(q, k, v, mask, scale, bias)


def _attention(q, k, v, mask, scale, bias):
    # q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v)
    scores = (q * scale) @ k.transpose(-2, -1)            # (..., T_q, T_k)
    if bias is not None:
        scores += bias                                    # relative positions, ALiBi
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))         # True = may attend
    A = torch.softmax(scores, dim=-1)                     # each row sums to one
    return A @ v, A                                       # (..., T_q, d_v), weights


def softmax_jacobian(p: torch.Tensor) -> torch.Tensor:
    """Jacobian ``diag(p) - p p^T`` of the softmax at probabilities ``p``
    (eq-attn-softmax-jac).

    Args:
        p: probability vectors, shape (..., T).

    Returns:
        Jacobians ``d softmax / d scores``, shape (..., T, T).
    """
    p = check_tensor(p, "p", floating=True)
    if p.ndim < 1:
        raise ValueError(
            f"p must have at least 1 dimension (..., T), got shape {tuple(p.shape)}"
        )
    return _softmax_jacobian(p)


def _softmax_jacobian(p: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`softmax_jacobian` (arguments already checked)."""
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., T, T)


@dataclass(frozen=True)
class ScoreStats:
    """Statistics of attention scores ``q . k`` for Gaussian queries and keys (5.1)."""

    d: int                 # dimension of queries and keys
    scaled: bool           # True if the scores were divided by sqrt(d)
    score_var: float       # empirical variance of the scores (before any scaling)
    max_weight: float      # mean over queries of the largest attention weight
    # mean Frobenius norm of the softmax Jacobian diag(p) - p p^T
    jacobian_norm: float


def score_statistics(
    d: int, *, T: int, n_queries: int, scaled: bool, generator: torch.Generator
) -> ScoreStats:
    """Draw ``q, k_1..k_T ~ N(0, I_d)`` and measure scores, peak weight and softmax
    Jacobian.

    Args:
        d: dimension, >= 1.
        T: keys per query, >= 2.
        n_queries: number of independent queries, >= 2.
        scaled: divide the scores by ``sqrt(d)`` before the softmax (eq-attn-sdpa) or
            not.
        generator: CPU generator.

    Returns:
        A :class:`ScoreStats`.
    """
    d = check_int(d, "d", min_value=1)
    T = check_int(T, "T", min_value=2)
    n_queries = check_int(n_queries, "n_queries", min_value=2)
    check_generator(generator)
    return _score_statistics(
        d, T=T, n_queries=n_queries, scaled=scaled, generator=generator
    )


def _score_statistics(
    d: int, *, T: int, n_queries: int, scaled: bool, generator: torch.Generator
) -> ScoreStats:
    """The check-free core of :func:`score_statistics` (arguments already checked)."""
    raw = []
    # in chunks, so that memory stays small at large d
    for start in range(0, n_queries, 256):
        n = min(256, n_queries - start)
        q = torch.randn(n, 1, d, generator=generator, dtype=torch.float64)  # (n, 1, d)
        k = torch.randn(n, T, d, generator=generator, dtype=torch.float64)  # (n, T, d)
        raw.append(dot_product_scores(q, k, scale=1.0).squeeze(-2))  # (n, T)
    raw = torch.cat(raw)  # (n_queries, T)
    p = torch.softmax(raw / math.sqrt(d) if scaled else raw, dim=-1)  # (n_queries, T)
    # ||diag(p) - p p^T||_F^2 = sum p_i^2 - 2 sum p_i^3 + (sum p_i^2)^2,
    # without forming J
    p2 = (p**2).sum(-1)
    jac = (p2 - 2 * (p**3).sum(-1) + p2**2).clamp_min(0).sqrt()  # (n_queries,)
    return ScoreStats(
        d=d, scaled=bool(scaled), score_var=raw.var().item(),
        max_weight=p.max(dim=-1).values.mean().item(), jacobian_norm=jac.mean().item(),
    )
