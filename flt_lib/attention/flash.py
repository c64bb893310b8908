"""Attention without the T x T matrix (5.9): the online softmax, FlashAttention's
tiling, and a blocked fast path for outputs without weights.

:func:`flt_lib.attention.scoring.attention` forms every score ``q_i . k_t`` at once,
keeps the (T_q, T_k) weights, and saves them for the backward pass. Nothing forces
this: the softmax's normaliser can be accumulated one block of keys at a time, provided
the partial sums are rescaled whenever the running maximum grows (the *online softmax*,
Milakov & Gimelshein 2018). FlashAttention (Dao, Fu, Ermon, Rudra & Ré 2022) does this
for the whole attention output, tile by tile, and saves only the output and one
log-normaliser per query for the backward pass, which recomputes the tiles. Its loop
order here is that of FlashAttention-2 (Dao 2024): queries outside, keys inside.

- :func:`online_softmax_stats` / :func:`online_softmax`: one pass over the scores
  (eq-attn-online-softmax);
- :func:`flash_forward`, :func:`flash_backward`, :func:`tiled_attention`: tiled
  attention with the memory of the inputs, an autograd function whose saved tensors
  are ``O(T d)`` (eq-attn-flash-update);
- :func:`blocked_attention` / :func:`fast_attention`: outputs only, in blocks of
  queries that skip the keys a causal mask hides (the fast path of 5.9).
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_int, check_real, check_tensor
from flt_lib.attention.scoring import _check_qk

__all__ = [
    "blocked_attention",
    "fast_attention",
    "flash_backward",
    "flash_forward",
    "online_softmax",
    "online_softmax_stats",
    "tiled_attention",
]


def online_softmax_stats(
    x: torch.Tensor, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Running maximum ``m`` and normaliser ``l = sum_t exp(x_t - m)`` in one pass over
    blocks of the last dimension (eq-attn-online-softmax; Milakov & Gimelshein 2018).

    Args:
        x: scores, shape (..., T), finite.
        block: entries read per step, >= 1.

    Returns:
        ``(m, l)``, each of shape (...): ``softmax(x) = exp(x - m) / l``.
    """
    m = torch.full(x.shape[:-1], -math.inf, dtype=x.dtype, device=x.device)
    l = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for j in range(0, x.shape[-1], block):
        x_j = x[..., j : j + block]                      # (..., b)
        m_new = torch.maximum(m, x_j.amax(dim=-1))
        # the old sum was taken relative to m: rescale it to m_new, then add the block
        l = l * torch.exp(m - m_new) + torch.exp(x_j - m_new[..., None]).sum(dim=-1)
        m = m_new
    return m, l


def online_softmax(x: torch.Tensor, *, block: int) -> torch.Tensor:
    """Softmax over the last dimension from the one-pass statistics of
    :func:`online_softmax_stats`.

    Args:
        x: scores, shape (..., T), floating point and finite, T >= 1.
        block: entries read per step, >= 1.

    Returns:
        Probabilities, shape (..., T); equal to ``torch.softmax(x, -1)``.
    """
    x = check_tensor(x, "x", floating=True)
    if x.ndim < 1 or x.shape[-1] < 1:
        raise ValueError(
            f"x must have shape (..., T) with T >= 1, got {tuple(x.shape)}"
        )
    if not bool(torch.isfinite(x).all()):
        raise ValueError("x must be finite (mask scores before, not with -inf)")
    block = check_int(block, "block", min_value=1)
    m, l = online_softmax_stats(x, block)
    return torch.exp(x - m[..., None]) / l[..., None]


def _tile_mask(i: int, j: int, b_q: int, b_k: int, shift: int, device) -> torch.Tensor:
    """True where query ``i + r`` may see key ``j + c``: ``j + c <= i + r + shift``."""
    rows = torch.arange(i, i + b_q, device=device)[:, None]
    cols = torch.arange(j, j + b_k, device=device)[None, :]
    return cols <= rows + shift  # (b_q, b_k)


def flash_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float,
                  causal: bool, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Tiled attention forward pass (eq-attn-flash-update; Dao et al. 2022): outputs and
    log-normalisers, never holding more than one (block, block) tile of scores.

    Args:
        q, k, v: shapes (..., T_q, d_k), (..., T_k, d_k), (..., T_k, d_v).
        scale: multiplies ``q . k``.
        causal: query ``i`` sees keys ``t <= i + T_k - T_q``.
        block: tile side.

    Returns:
        ``(out, lse)``: shapes (..., T_q, d_v) and (..., T_q), with
        ``lse_i = log sum_t exp(s_it)``.
    """
    T_q, T_k, shift = q.shape[-2], k.shape[-2], k.shape[-2] - q.shape[-2]
    out = q.new_empty(*q.shape[:-1], v.shape[-1])                  # (..., T_q, d_v)
    lse = q.new_empty(q.shape[:-1])                                # (..., T_q)
    for i in range(0, T_q, block):
        q_i = q[..., i : i + block, :] * scale                     # (..., b_q, d_k)
        m = q_i.new_full(q_i.shape[:-1], -math.inf)                # running max
        l = q_i.new_zeros(q_i.shape[:-1])                          # running normaliser
        o = q_i.new_zeros(*q_i.shape[:-1], v.shape[-1])            # unnormalised output
        for j in range(0, min(T_k, i + block + shift) if causal else T_k, block):
            s = q_i @ k[..., j : j + block, :].transpose(-2, -1)   # (..., b_q, b_k)
            if causal:
                s = s.masked_fill(~_tile_mask(i, j, *s.shape[-2:], shift, s.device),
                                  -math.inf)
            m_new = torch.maximum(m, s.amax(dim=-1))
            p = torch.exp(s - m_new[..., None])                    # (..., b_q, b_k)
            c = torch.exp(m - m_new)                               # rescales the past
            l = c * l + p.sum(dim=-1)
            o = c[..., None] * o + p @ v[..., j : j + block, :]
            m = m_new
        out[..., i : i + block, :] = o / l[..., None]
        lse[..., i : i + block] = m + torch.log(l)
    return out, lse


def flash_backward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
    lse: torch.Tensor, d_out: torch.Tensor, scale: float, causal: bool, block: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tiled backward pass (Dao et al. 2022, Algorithm 4; loop order of Dao 2024):
    recomputes each tile's weights from ``lse`` instead of reading saved ones.

    Args:
        q, k, v, out, lse: the inputs and both results of :func:`flash_forward`.
        d_out: gradient of the loss with respect to ``out``, shape (..., T_q, d_v).
        scale, causal, block: as in :func:`flash_forward`.

    Returns:
        ``(dq, dk, dv)``, shaped like ``q``, ``k``, ``v``.
    """
    T_q, T_k, shift = q.shape[-2], k.shape[-2], k.shape[-2] - q.shape[-2]
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    delta = (d_out * out).sum(dim=-1)                   # (..., T_q): sum_t a_it dp_it
    for i in range(0, T_q, block):
        q_i, do_i = q[..., i : i + block, :] * scale, d_out[..., i : i + block, :]
        for j in range(0, min(T_k, i + block + shift) if causal else T_k, block):
            k_j, v_j = k[..., j : j + block, :], v[..., j : j + block, :]
            s = q_i @ k_j.transpose(-2, -1)                         # (..., b_q, b_k)
            if causal:
                s = s.masked_fill(~_tile_mask(i, j, *s.shape[-2:], shift, s.device),
                                  -math.inf)
            a = torch.exp(s - lse[..., i : i + block, None])        # the tile's weights
            dv[..., j : j + block, :] += a.transpose(-2, -1) @ do_i
            ds = a * (do_i @ v_j.transpose(-2, -1) - delta[..., i : i + block, None])
            dq[..., i : i + block, :] += ds @ k_j * scale
            dk[..., j : j + block, :] += ds.transpose(-2, -1) @ q_i
    return dq, dk, dv


class _TiledAttention(torch.autograd.Function):
    """Autograd wrapper: saves q, k, v, out and lse (O(T d)), recomputes the rest."""

    @staticmethod
    def forward(ctx, q, k, v, scale, causal, block):  # noqa: D102
        out, lse = flash_forward(q, k, v, scale, causal, block)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.config = (scale, causal, block)
        return out

    @staticmethod
    def backward(ctx, d_out):  # noqa: D102
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = flash_backward(q, k, v, out, lse, d_out, *ctx.config)
        return dq, dk, dv, None, None, None


def _check_qkv(
    q: object, k: object, v: object, causal: object, scale: object
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, bool, float]:
    q, k = _check_qk(q, k)  # the checks of scoring.attention
    v = check_tensor(v, "v", floating=True)
    if q.shape[-2] < 1 or k.shape[-2] < 1 or q.numel() == 0:
        raise ValueError(
            f"q and k must hold at least one token each, got shapes {tuple(q.shape)} "
            f"and {tuple(k.shape)}"
        )
    if v.ndim != k.ndim or v.shape[:-1] != k.shape[:-1]:
        raise ValueError(
            f"v must have shape (..., T_k, d_v) = {(*k.shape[:-1], 'd_v')} to match k "
            f"of shape {tuple(k.shape)}, got {tuple(v.shape)}"
        )
    if len({q.dtype, k.dtype, v.dtype}) != 1:
        raise TypeError(
            f"q, k and v must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    if causal and k.shape[-2] < q.shape[-2]:
        raise ValueError(
            f"causal attention needs T_k >= T_q (the queries are the last T_q tokens), "
            f"got T_q = {q.shape[-2]} and T_k = {k.shape[-2]}"
        )
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    else:
        scale = check_real(scale, "scale", min_value=0.0, strict_min=True)
    return q, k, v, causal, scale


def tiled_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    block: int = 64,
) -> torch.Tensor:
    """FlashAttention: ``softmax(q k^T * scale) v`` computed tile by tile, with a
    backward pass that saves only ``O(T d)`` numbers (Dao et al. 2022;
    eq-attn-flash-update).

    Equals :func:`flt_lib.attention.scoring.attention` (with ``mask=causal_mask(T_q,
    T_k)`` when ``causal``) up to rounding, in the output and in its gradients.

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k).
        v: values, shape (..., T_k, d_v).
        causal: if True, query ``i`` sees keys ``t <= i + T_k - T_q`` (needs
            ``T_k >= T_q``).
        scale: multiplies ``q . k``; None means ``1/sqrt(d_k)``.
        block: side of a tile of scores, >= 1.

    Returns:
        Outputs, shape (..., T_q, d_v). No weights: they are never stored.
    """
    q, k, v, causal, scale = _check_qkv(q, k, v, causal, scale)
    block = check_int(block, "block", min_value=1)
    return _TiledAttention.apply(q, k, v, scale, causal, block)


def blocked_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, causal: bool,
    block: int,
) -> torch.Tensor:
    """Attention outputs, one block of queries of a few heads at a time (the fast path
    of 5.9).

    A step's scores, at most ``2**17`` numbers, stay in cache; with ``causal`` the keys
    after the block are never read, which halves the work at large T.

    Args:
        q, k, v: shapes (..., T_q, d_k), (..., T_k, d_k), (..., T_k, d_v).
        scale, causal: as in :func:`flash_forward`.
        block: queries per step.

    Returns:
        Outputs, shape (..., T_q, d_v).
    """
    lead, T_q, T_k = q.shape[:-2], q.shape[-2], k.shape[-2]
    q, k, v = (t.reshape(-1, *t.shape[-2:]) for t in (q, k, v))          # (n, T, d)
    out = q.new_empty(*q.shape[:-1], v.shape[-1])                   # (n, T_q, d_v)
    rows = min(block, T_q)
    heads = max(1, 2**17 // (rows * T_k))                       # heads per step
    hide = ~torch.ones(rows, rows, dtype=torch.bool, device=q.device).tril()
    for h in range(0, q.shape[0], heads):
        for i in range(0, T_q, rows):
            r = min(rows, T_q - i)
            end = i + r + T_k - T_q if causal else T_k         # keys the block may see
            q_i = q[h : h + heads, i : i + r] * scale                 # (heads, r, d_k)
            s = q_i @ k[h : h + heads, :end].transpose(-2, -1)        # (heads, r, end)
            if causal:             # only the last r keys can be in a query's future
                s[..., end - r :].masked_fill_(hide[:r, :r], -math.inf)
            a = torch.softmax(s, dim=-1)                              # (heads, r, end)
            out[h : h + heads, i : i + r] = a @ v[h : h + heads, :end]
    return out.view(*lead, T_q, v.shape[-1])


def fast_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    block: int = 128,
) -> torch.Tensor:
    """Attention outputs without the weights, in blocks of queries
    (:func:`blocked_attention`): the path to use when no figure needs ``A``.

    Equals ``scoring.attention(q, k, v, mask=causal_mask(T_q, T_k) if causal else
    None)[0]`` up to rounding, and supports autograd (it is built of differentiable
    operations), but saves the blocks' weights for the backward pass; for ``O(T d)``
    saved memory use :func:`tiled_attention`.

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k).
        v: values, shape (..., T_k, d_v).
        causal: if True, query ``i`` sees keys ``t <= i + T_k - T_q``.
        scale: multiplies ``q . k``; None means ``1/sqrt(d_k)``.
        block: queries per block, >= 1.

    Returns:
        Outputs, shape (..., T_q, d_v).
    """
    q, k, v, causal, scale = _check_qkv(q, k, v, causal, scale)
    block = check_int(block, "block", min_value=1)
    return blocked_attention(q, k, v, scale, causal, block)
