"""Softmax regression: a stable log-sum-exp, softmax, cross-entropy, and gradient
descent.

Section 2.1 of the book. Class labels are integers in ``{0, ..., k-1}``; soft targets
(for label smoothing and distillation, Section 3.6) are rows of probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_int, check_real, check_tensor

__all__ = [
    "SoftmaxFit",
    "cross_entropy",
    "cross_entropy_naive",
    "logsumexp",
    "logsumexp_naive",
    "softmax",
    "softmax_regression_gd",
]


def logsumexp_naive(z: torch.Tensor) -> torch.Tensor:
    """``log sum_j exp(z_j)`` over the last axis, computed literally (overflows for
    large z).

    Shown in the book only as the thing not to do.

    Args:
        z: logits, shape (..., k).

    Returns:
        Shape (...,).
    """
    z = check_tensor(z, "z", floating=True)
    if z.ndim == 0:
        raise ValueError("z must have at least 1 dimension (..., k), got a scalar")
    return torch.log(torch.exp(z).sum(dim=-1))


def logsumexp(z: torch.Tensor) -> torch.Tensor:
    """Stable ``log sum_j exp(z_j)`` over the last axis, by shifting with the maximum.

    Uses ``LSE(z) = c + log sum_j exp(z_j - c)`` with ``c = max_j z_j``, so every
    exponent is ``<= 0`` and the sum lies in ``[1, k]`` (book eq. ``eq-ff-lse-shift``).

    Args:
        z: logits, shape (..., k).

    Returns:
        Shape (...,).
    """
    z = check_tensor(z, "z", floating=True)
    if z.ndim == 0:
        raise ValueError("z must have at least 1 dimension (..., k), got a scalar")
    c = z.max(dim=-1, keepdim=True).values  # (..., 1)
    c = torch.where(torch.isfinite(c), c, torch.zeros_like(c))
    return (c + torch.log(torch.exp(z - c).sum(dim=-1, keepdim=True))).squeeze(-1)


def softmax(z: torch.Tensor) -> torch.Tensor:
    """Stable softmax over the last axis: ``exp(z - LSE(z))``.

    Args:
        z: logits, shape (..., k).

    Returns:
        Probabilities, shape (..., k), each row summing to 1.
    """
    return torch.exp(z - logsumexp(z).unsqueeze(-1))


def _check_logits_labels(
    logits: object, labels: object
) -> tuple[torch.Tensor, torch.Tensor]:
    logits = check_tensor(logits, "logits", ndim=2, floating=True, shape_doc="(n, k)")
    labels = check_tensor(labels, "labels", ndim=1, shape_doc="(n,)")
    if labels.is_floating_point() or labels.dtype == torch.bool:
        raise TypeError(f"labels must have an integer dtype, got {labels.dtype}")
    if labels.shape[0] != logits.shape[0]:
        raise ValueError(
            f"labels must have one entry per row of logits (n={logits.shape[0]}), got "
            f"{labels.shape[0]}"
        )
    k = logits.shape[1]
    if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= k):
        raise ValueError(f"labels must lie in {{0, ..., {k - 1}}}, got values outside")
    return logits, labels


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of softmax probabilities, computed stably.

    Implements ``(1/n) sum_i [LSE(z_i) - z_{i, y_i}]`` (book eq.
    ``eq-ff-cross-entropy``).

    Args:
        logits: scores ``z``, shape (n, k).
        labels: integer classes in {0, ..., k-1}, shape (n,).

    Returns:
        A scalar tensor.
    """
    logits, labels = _check_logits_labels(logits, labels)
    # Subtract the row maximum first: LSE(z) - z_y = LSE(z - c) - (z_y - c), and the
    # right-hand side never forms the large number c + LSE(z - c).
    shifted = logits - logits.max(dim=1, keepdim=True).values  # (n, k), entries <= 0
    picked = shifted.gather(1, labels.unsqueeze(1)).squeeze(1)  # (n,)
    return (torch.log(torch.exp(shifted).sum(dim=1)) - picked).mean()


def cross_entropy_naive(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy as ``-log(exp(z_y) / sum_j exp(z_j))``, literally (unstable).

    Args:
        logits: scores, shape (n, k).
        labels: integer classes, shape (n,).

    Returns:
        A scalar tensor (``inf`` or ``nan`` once ``exp`` overflows or underflows).
    """
    logits, labels = _check_logits_labels(logits, labels)
    e = torch.exp(logits)  # (n, k)
    p = e.gather(1, labels.unsqueeze(1)).squeeze(1) / e.sum(dim=1)  # (n,)
    return (-torch.log(p)).mean()


@dataclass(frozen=True)
class SoftmaxFit:
    """What :func:`softmax_regression_gd` returns."""

    W: torch.Tensor  # (K, d) weights; the logits are X W^T + b
    b: torch.Tensor  # (K,) biases
    # (T + 1,) mean cross-entropy H(q, softmax(z / T)) before each step
    losses: torch.Tensor


def softmax_regression_gd(
    X: torch.Tensor,
    targets: torch.Tensor,
    *,
    lr: float,
    steps: int,
    temperature: float = 1.0,
) -> SoftmaxFit:
    """Full-batch gradient descent from zero on ``T^2 mean_i H(q_i, softmax((W x_i + b)
    / T))``.

    The gradient of the cross-entropy with respect to the logits is ``(p_T - q) / T``
    (eq. ``eq-distil-gradient``); the loss is multiplied by ``T^2``, as Hinton et al.
    (2015) recommend, so that gradient magnitudes do not shrink like ``1 / T^2`` when
    the temperature is raised. With ``T = 1`` and one-hot targets this is softmax
    regression (eq. ``eq-ff-cross-entropy``).

    Args:
        X: inputs, shape (n, d).
        targets: target distributions q (rows summing to 1), shape (n, K).
        lr: step size ``> 0``.
        steps: number of gradient steps ``T >= 0``.
        temperature: ``T > 0`` used in training (the model's own logits are ``W x +
            b``).

    Returns:
        A :class:`SoftmaxFit`.
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    q = check_tensor(
        targets, "targets", ndim=2, shape=(X.shape[0], None), shape_doc="(n, K)"
    )
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=0)
    T = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    n, d = X.shape
    K = q.shape[1]
    W, b = X.new_zeros(K, d), X.new_zeros(K)
    losses = X.new_empty(steps + 1)
    for t in range(steps + 1):
        log_p = torch.log_softmax((X @ W.T + b) / T, dim=1)  # (n, K) log p_T
        losses[t] = -(q * log_p).sum(1).mean()
        if t == steps:
            break
        G = T * (log_p.exp() - q) / n  # (n, K): T^2 (p_T - q) / T / n
        W = W - lr * G.T @ X
        b = b - lr * G.sum(0)
    return SoftmaxFit(W=W, b=b, losses=losses)
