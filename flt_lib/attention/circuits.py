"""What a transformer can compute (5.7): induction heads, and attention as convolution.

Induction heads (Olsson et al. 2022): on a sequence ``... [A][B] ... [A]`` a two-layer
attention-only model learns to predict ``[B]``: a *previous-token head* in layer 1
writes into each position the token before it, and an *induction head* in layer 2
attends from the final ``[A]`` to the position whose previous token is ``[A]``, and
copies the token found there. Sanford, Hsu & Telgarsky (2024) prove that one layer
cannot do this unless it is much larger.

Attention as convolution (Cordonnier, Loukas & Jaggi 2020): on an image, ``K^2`` heads
whose scores depend only on the relative position ``delta`` of key and query, as
``-alpha ||delta - Delta_h||^2``, attend (for large ``alpha``) to the single pixel at
offset ``Delta_h``; with value-output matrices equal to the kernel's slices at
``Delta_h`` the layer is a ``K x K`` convolution, up to an error that decays like
``e^(-alpha)``.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.attention.scoring import attention_from_scores

__all__ = [
    "conv_as_attention",
    "induction_data",
    "quadratic_position_scores",
    "torus_offsets",
]


def induction_data(
    B: int, T: int, *, vocab: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random sequences ``... [A][B] ... [A]`` whose label is ``[B]``
    (eq-attn-induction-task).

    Each sequence draws a trigger ``A`` and fills positions ``0..T-2`` with symbols
    uniform on the other ``vocab - 1`` symbols; then ``A`` is written at one uniformly
    random position ``i <= T-3`` and at the last position ``T-1``. So ``A`` occurs
    exactly twice, and the label is the symbol ``B`` at ``i + 1`` (never ``A``). Chance
    accuracy is ``1/(vocab - 1)``.

    Returns:
        ``(tokens, labels)``: long tensors (B, T) and (B,).
    """
    B = check_int(B, "B", min_value=1)
    T = check_int(T, "T", min_value=3)
    vocab = check_int(vocab, "vocab", min_value=2)
    check_generator(generator)
    return _induction_data(B, T, vocab, generator)


def _induction_data(B, T, vocab, generator):
    a = torch.randint(0, vocab, (B, 1), generator=generator)
    r = torch.randint(0, vocab - 1, (B, T), generator=generator)
    x = r + (r >= a).long()  # uniform on the symbols other than A
    i = torch.randint(0, T - 2, (B,), generator=generator)  # first occurrence of A
    rows = torch.arange(B)
    x[rows, i] = a[:, 0]
    x[:, -1] = a[:, 0]
    return x, x[rows, i + 1]


def torus_offsets(H: int, W: int) -> torch.Tensor:
    """Relative positions ``delta = key - query`` on an ``H x W`` torus, the short way
    round.

    Pixels are numbered row-major, ``n = r W + c``.

    Returns:
        Long tensor (H W, H W, 2): entry ``[q, k]`` is ``(dr, dc)`` with
        ``-H/2 < dr <= H/2`` and ``-W/2 < dc <= W/2``.
    """
    H = check_int(H, "H", min_value=1)
    W = check_int(W, "W", min_value=1)
    r, c = torch.arange(H).repeat_interleave(W), torch.arange(W).repeat(H)  # (N,)

    def wrap(d: torch.Tensor, n: int) -> torch.Tensor:
        return (d + (n - 1) // 2) % n - (n - 1) // 2

    return torch.stack(
        [wrap(r[None] - r[:, None], H), wrap(c[None] - c[:, None], W)], dim=-1
    )


def quadratic_position_scores(
    offsets: torch.Tensor, shifts: torch.Tensor, alpha: float
) -> torch.Tensor:
    """Scores ``-alpha ||delta - Delta_h||^2`` of Cordonnier et al.'s quadratic
    encoding.

    The content-free scores of eq-attn-quadratic.

    Args:
        offsets: relative positions ``delta``, shape (N, N, 2) (see
            :func:`torus_offsets`).
        shifts: the heads' centres ``Delta_h``, shape (n_heads, 2).
        alpha: sharpness, > 0.

    Returns:
        Scores, shape (n_heads, N, N), float64.
    """
    offsets = check_tensor(offsets, "offsets", ndim=3, shape=(None, None, 2),
                           shape_doc="(N, N, 2)")
    shifts = check_tensor(
        shifts, "shifts", ndim=2, shape=(None, 2), shape_doc="(n_heads, 2)"
    )
    alpha = check_real(alpha, "alpha", min_value=0.0, strict_min=True)
    return _quadratic_position_scores(offsets, shifts, alpha)


def _quadratic_position_scores(offsets, shifts, alpha):
    diff = offsets[None].double() - shifts[:, None, None, :].double()  # (h, N, N, 2)
    return -alpha * (diff**2).sum(-1)


def conv_as_attention(
    image: torch.Tensor, kernel: torch.Tensor, alpha: float
) -> torch.Tensor:
    """A ``K x K`` convolution (circular padding) computed by ``K^2`` content-free
    attention heads.

    Head ``h`` has centre ``Delta_h = (a - K//2, b - K//2)`` for kernel entry
    ``(a, b)``, scores :func:`quadratic_position_scores` (no queries or keys:
    ``W_q = W_k = 0``), and value-output matrix ``kernel[:, :, a, b]^T``; the heads'
    outputs are summed (eq-attn-conv-heads).

    Args:
        image: shape (C_in, H, W).
        kernel: shape (C_out, C_in, K, K), ``K`` odd; applied as ``F.conv2d`` applies it
            (cross-correlation).
        alpha: sharpness of the attention, > 0; the result tends to the convolution as
            ``alpha -> inf``.

    Returns:
        The output, shape (C_out, H, W), float64.
    """
    image = check_tensor(
        image, "image", ndim=3, floating=True, shape_doc="(C_in, H, W)"
    )
    C_in = image.shape[0]
    kernel = check_tensor(
        kernel,
        "kernel",
        ndim=4,
        shape=(None, C_in, None, None),
        floating=True,
        shape_doc=f"(C_out, C_in, K, K) with C_in = {C_in}",
    )
    K = kernel.shape[-1]
    if kernel.shape[-2] != K or K % 2 == 0:
        raise ValueError(
            f"kernel must be square with an odd side K, got {tuple(kernel.shape[-2:])}"
        )
    return _conv_as_attention(image, kernel, alpha)


def _conv_as_attention(image, kernel, alpha):
    _, H, W = image.shape  # (C_in, H, W)
    K = kernel.shape[-1]
    a, b = torch.meshgrid(torch.arange(K), torch.arange(K), indexing="ij")
    shifts = torch.stack([a.flatten(), b.flatten()], dim=1) - K // 2  # (K^2, 2)
    # (K^2, N, N)
    scores = quadratic_position_scores(torus_offsets(H, W), shifts, alpha)
    X = image.double().flatten(1).T  # (N, C_in) one token per pixel
    # (K^2, C_in, C_out), head h's slice
    W_vo = kernel.double().flatten(2).permute(2, 1, 0)
    values = X.to(image.device) @ W_vo.to(image.device)  # (K^2, N, C_out)
    heads, _ = attention_from_scores(scores.to(image.device), values)  # (K^2, N, C_out)
    return heads.sum(0).T.reshape(-1, H, W)
