"""Logistic regression: the loss, its gradient, and gradient descent (Section 2.1).

Labels are ``y01`` in ``{0, 1}``. (With labels ``y = 2 y01 - 1`` in ``{-1, +1}`` the
same loss reads ``mean log(1 + exp(-y z))``.) This module holds the book's one
implementation of gradient descent on the logistic loss; Section 3.5 reuses it with
weight decay and with data augmentation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_generator,
    check_int,
    check_real,
    check_tensor,
    check_xy,
)

__all__ = ["LogisticFit", "logistic_gd", "logistic_grad", "logistic_loss"]


def _check_labels01(X: object, y01: object) -> tuple[torch.Tensor, torch.Tensor]:
    X, y01 = check_xy(X, y01, "y01")
    if not bool(((y01 == 0) | (y01 == 1)).all()):
        values = y01.unique().tolist()[:6]
        raise ValueError(f"y01 must contain only 0s and 1s, got values {values}")
    return X, y01


def _check_w(w: object, d: int) -> torch.Tensor:
    return check_tensor(w, "w", shape=(d,), floating=True, shape_doc=f"(d,) with d={d}")


def logistic_loss(X: torch.Tensor, y01: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the logistic model ``P(y=1 | x) = sigmoid(w.x)``.

    Implements ``L(w) = (1/n) sum_i [log(1 + exp(z_i)) - y_i z_i]`` with ``z = X w``,
    computed with ``softplus`` so that it is finite for any logits (book eq.
    ``eq-ff-logistic-loss``).

    Args:
        X: inputs, shape (n, d).
        y01: labels in {0, 1} (floating dtype), shape (n,).
        w: weights, shape (d,).

    Returns:
        A scalar tensor.
    """
    X, y01 = _check_labels01(X, y01)
    z = X @ _check_w(w, X.shape[1])  # (n,) logits
    return (torch.nn.functional.softplus(z) - y01 * z).mean()


def logistic_grad(X: torch.Tensor, y01: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Closed-form gradient of :func:`logistic_loss`: ``X^T (sigmoid(X w) - y) / n``.

    Book eq. ``eq-ff-logistic-grad``.

    Args:
        X: inputs, shape (n, d).
        y01: labels in {0, 1} (floating dtype), shape (n,).
        w: weights, shape (d,).

    Returns:
        The gradient, shape (d,).
    """
    X, y01 = _check_labels01(X, y01)
    w = _check_w(w, X.shape[1])
    return _logistic_grad(X, y01, w)


def _logistic_grad(X: torch.Tensor, y01: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`logistic_grad` (arguments already checked)."""
    return X.T @ (torch.sigmoid(X @ w) - y01) / X.shape[0]


@dataclass(frozen=True)
class LogisticFit:
    """What :func:`logistic_gd` returns."""

    w: torch.Tensor  # (d,) final weights
    b: torch.Tensor  # () final bias (zero unless fit_bias)
    # (T + 1,) logistic loss on the (unaugmented) data before each step
    losses: torch.Tensor


def logistic_gd(
    X: torch.Tensor,
    y01: torch.Tensor,
    *,
    lr: float,
    steps: int,
    weight_decay: float = 0.0,
    fit_bias: bool = False,
    augment: Callable[[torch.Tensor, torch.Generator], torch.Tensor] | None = None,
    generator: torch.Generator | None = None,
) -> LogisticFit:
    """Full-batch gradient descent on the logistic loss from ``w = 0``, ``b = 0``.

    Each step computes the residual ``r = sigmoid(X w + b) - y`` and updates ``w <- w -
    lr (X^T r / n + lambda w)`` and ``b <- b - lr mean(r)``, the gradient of eq.
    ``eq-ff-logistic-loss`` plus ``(lambda / 2) ||w||^2`` (eq. ``eq-ff-logistic-grad``).
    With ``augment``, every step replaces ``X`` by ``augment(X, generator=generator)``,
    a fresh
    random transformation of each example (on-the-fly data augmentation).

    Args:
        X: inputs, shape (n, d).
        y01: labels in {0, 1}, shape (n,).
        lr: step size ``eta > 0``.
        steps: number of iterations ``T >= 0``.
        weight_decay: ``lambda >= 0`` on ``w`` (the bias is not decayed).
        fit_bias: whether to learn a bias ``b``.
        augment: maps ``(X, generator)`` to transformed inputs of the same shape, or
            None.
        generator: CPU generator passed to ``augment`` (required with ``augment``).

    Returns:
        A :class:`LogisticFit`.
    """
    X, y01 = _check_labels01(X, y01)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=0)
    lam = check_real(weight_decay, "weight_decay", min_value=0.0)
    if augment is not None:
        if not callable(augment):
            raise TypeError(
                f"augment must be callable or None, got {type(augment).__name__}"
            )
        check_generator(generator)
    n, d = X.shape
    w, b = X.new_zeros(d), X.new_zeros(())
    losses = X.new_empty(steps + 1)
    for t in range(steps + 1):
        z = X @ w + b  # (n,) logits on the training data
        losses[t] = (torch.nn.functional.softplus(z) - y01 * z).mean()
        if t == steps:
            break
        Xt = X if augment is None else augment(X, generator=generator)  # (n, d)
        zt = z if augment is None else Xt @ w + b  # (n,)
        r = torch.sigmoid(zt) - y01  # (n,) n times d loss / d logit
        w = w - lr * (Xt.T @ r / n + lam * w)
        if fit_bias:
            b = b - lr * r.mean()
    return LogisticFit(w=w, b=b, losses=losses)
