"""Positional information for attention (5.3): sinusoidal, rotary and ALiBi encodings.

Attention without positions is permutation equivariant, so it cannot tell where a token
sits. This module holds the encodings that break that symmetry, the rotation that makes
sinusoidal positions *relative*, and the "output your own position" task on which order
is invisible.

Conventions: positions are ``t = 0, 1, ..., T-1``; frequencies are
``omega_k = base^(-2k/d)`` for ``k = 0, ..., d/2 - 1`` (Vaswani et al. 2017), and
coordinates ``2k`` and ``2k+1`` hold ``sin(t omega_k)`` and ``cos(t omega_k)``.

References: Vaswani et al. (2017); Su et al. (2024), RoFormer (rotary embeddings);
Press, Smith & Lewis (2022), ALiBi; Yun et al. (2020) and Kazemnejad et al. (2023) on
positions and order.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "alibi_bias",
    "binary_encoding",
    "frequencies",
    "own_position_data",
    "position_mse_bound",
    "relative_rotation",
    "rotary",
    "sinusoidal_encoding",
]


def _check_even(d: object) -> int:
    d = check_int(d, "d", min_value=2)
    if d % 2:
        raise ValueError(f"d must be even (sin/cos pairs), got {d}")
    return d


def frequencies(
    d: int, *, base: float = 10000.0, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """The angular frequencies ``omega_k = base^(-2k/d)``, ``k = 0..d/2-1``,
    shape (d/2,)."""
    d = _check_even(d)
    base = check_real(base, "base", min_value=1.0, strict_min=True)
    return base ** (-torch.arange(0, d, 2, dtype=dtype) / d)


def sinusoidal_encoding(
    T: int, d: int, *, base: float = 10000.0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Sinusoidal positions ``P[t, 2k] = sin(t w_k)``, ``P[t, 2k+1] = cos(t w_k)``.

    Here ``w_k = base^(-2k/d)`` (:func:`frequencies`); eq-attn-sinusoidal.

    Args:
        T: number of positions, >= 1.
        d: encoding dimension, even.
        base: the constant 10000 of Vaswani et al. (2017).
        dtype: dtype of the result (computed in float64).

    Returns:
        The encoding matrix ``P``, shape (T, d); row ``t`` is ``p_t``.
    """
    T = check_int(T, "T", min_value=1)
    return _sinusoidal_encoding(T, d, base, dtype)


def _sinusoidal_encoding(T, d, base, dtype):
    # (T, d/2)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * frequencies(d, base=base)
    # (T, d) interleaved
    P = torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(T, d)
    return P.to(dtype)


def binary_encoding(T: int, bits: int) -> torch.Tensor:
    """Binary counting: ``B[t, j]`` is bit ``j`` of ``t`` (least significant first),
    (T, bits)."""
    T = check_int(T, "T", min_value=1)
    bits = check_int(bits, "bits", min_value=1)
    if T > 2**bits:
        raise ValueError(
            f"bits must be large enough to count to T - 1 = {T - 1}, got bits={bits}"
        )
    t = torch.arange(T)[:, None]
    return ((t >> torch.arange(bits)) & 1).float()  # (T, bits)


def relative_rotation(k: int, d: int, *, base: float = 10000.0) -> torch.Tensor:
    """The block-diagonal rotation ``R_k`` with ``p_{t+k} = R_k p_t`` for all ``t``.

    The relative-position property (eq-attn-relative).

    Block ``j`` is ``[[cos(k w_j), sin(k w_j)], [-sin(k w_j), cos(k w_j)]]`` acting on
    the pair ``(sin(t w_j), cos(t w_j))``; it does not depend on ``t``.

    Args:
        k: the offset (any integer, negative allowed).
        d: encoding dimension, even.
        base: as in :func:`sinusoidal_encoding`.

    Returns:
        ``R_k``, shape (d, d), float64 and orthogonal.
    """
    k = check_int(k, "k")
    return _relative_rotation(k, d, base)


def _relative_rotation(k, d, base):
    # (d/2,)
    c, s = (k * frequencies(d, base=base)).cos(), (k * frequencies(d, base=base)).sin()
    # (d/2, 2, 2)
    blocks = torch.stack([torch.stack([c, s], -1), torch.stack([-s, c], -1)], -2)
    return torch.block_diag(*blocks)


def rotary(x: torch.Tensor, *, base: float = 10000.0, offset: int = 0) -> torch.Tensor:
    """Rotary position embedding: rotate pair ``(x_2j, x_2j+1)`` of token ``t`` by
    ``t omega_j``.

    Applied to queries and keys, it makes ``<rotary(q)_m, rotary(k)_n>`` depend on the
    positions only through ``n - m`` (Su et al. 2024, eq-attn-rope).

    Args:
        x: queries or keys, shape (..., T, d) with ``d`` even.
        base: frequency base.
        offset: position of the first token (for a decoder that has already seen
            ``offset``).

    Returns:
        The rotated tensor, same shape and dtype as ``x``.
    """
    x = check_tensor(x, "x", floating=True)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., T, d), got {tuple(x.shape)}")
    _check_even(x.shape[-1])
    offset = check_int(offset, "offset", min_value=0)
    return _rotary(x, base, offset)


def _rotary(x, base, offset):
    d, T = x.shape[-1], x.shape[-2]
    t = torch.arange(offset, offset + T, dtype=torch.float64, device=x.device)
    # (T, d/2)
    angles = (t[:, None] * frequencies(d, base=base).to(x.device)).to(x.dtype)
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def alibi_bias(
    T: int, n_heads: int, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """ALiBi score bias ``-m_h (i - j)`` for keys ``j <= i`` (Press et al. 2022).

    Head ``h = 1..H`` has slope ``m_h = 2^(-8h/H)``. Future keys get ``-inf``
    (a causal mask), so the bias is meant for decoders. Each head's bias depends on
    ``i - j`` only.

    Args:
        T: sequence length, >= 1.
        n_heads: number of heads, >= 1.
        dtype: floating dtype of the result.

    Returns:
        Bias, shape (n_heads, T, T), to pass as ``bias=`` to
        :func:`flt_lib.attention.scoring.attention`.
    """
    T = check_int(T, "T", min_value=1)
    n_heads = check_int(n_heads, "n_heads", min_value=1)
    # (H,)
    slopes = 2.0 ** (-8.0 * torch.arange(1, n_heads + 1, dtype=torch.float64) / n_heads)
    i = torch.arange(T, dtype=torch.float64)
    dist = i[:, None] - i[None, :]  # (T, T): i - j
    bias = -slopes[:, None, None] * dist  # (H, T, T)
    return bias.masked_fill(dist < 0, float("-inf")).to(dtype)


def own_position_data(
    B: int, n: int, *, vocab: int, generator: torch.Generator, bos: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The task "output your own position": i.i.d. uniform tokens, target ``t`` at
    position ``t``.

    Args:
        B: batch size, >= 1.
        n: sequence length, >= 1.
        vocab: tokens are drawn uniformly from ``0..vocab-1``.
        generator: CPU generator.
        bos: if given, a beginning-of-sequence token id prepended to every sequence (its
            own target is 0, and it is not counted in the loss by the book's
            experiments).

    Returns:
        ``(tokens, targets)``: long tensor (B, n) or (B, n+1) with BOS, and float
        targets ``1..n`` (0 for BOS) of the same shape.
    """
    B = check_int(B, "B", min_value=1)
    n = check_int(n, "n", min_value=1)
    vocab = check_int(vocab, "vocab", min_value=1)
    check_generator(generator)
    tokens = torch.randint(0, vocab, (B, n), generator=generator)
    targets = torch.arange(1, n + 1, dtype=torch.float32).expand(B, n)
    if bos is not None:
        bos = check_int(bos, "bos", min_value=0)
        tokens = torch.cat([torch.full((B, 1), bos), tokens], dim=1)
        targets = torch.cat([torch.zeros(B, 1), targets], dim=1)
    return tokens, targets.clone()


def position_mse_bound(n: int) -> float:
    """Lower bound ``(n^2 - 1)/12`` on the mean squared error of any
    permutation-equivariant model on the own-position task (thm-attn-order-invisible):
    the variance of a uniform position."""
    n = check_int(n, "n", min_value=1)
    return _position_mse_bound(n)


def _position_mse_bound(n: int) -> float:
    """The check-free core of :func:`position_mse_bound` (arguments already checked)."""
    return (n * n - 1) / 12
