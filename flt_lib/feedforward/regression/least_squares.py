"""Least squares: the loss, the normal equations, and gradient descent (Section 2.1).

This module holds the book's one implementation of gradient descent on least squares.
Later sections reuse it: Section 3.4 compares it with SGD, and Section 3.5 adds weight
decay and a norm constraint to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_real, check_tensor, check_int, check_xy

__all__ = ["LeastSquaresGD", "least_squares_gd", "least_squares_normal", "mse_loss"]


def _check_w(w: object, d: int, name: str = "w") -> torch.Tensor:
    return check_tensor(
        w, name, shape=(d,), floating=True, shape_doc=f"(d,) with d={d}"
    )


def mse_loss(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Halved mean squared error of the linear model ``x -> w.x``.

    Implements ``L(w) = (1 / 2n) * ||X w - y||^2`` (book eq. ``eq-ff-ls-loss``).

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        w: weights, shape (d,).

    Returns:
        A scalar tensor.
    """
    X, y = check_xy(X, y)
    w = _check_w(w, X.shape[1])
    return _mse_loss(X, y, w)


def _mse_loss(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`mse_loss` (arguments already checked)."""
    r = X @ w - y  # (n,)
    return 0.5 * (r @ r) / X.shape[0]


def least_squares_normal(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Least-squares weights from the normal equations ``X^T X w = X^T y``.

    Requires ``X`` to have full column rank (``n >= d`` and no collinear columns), so
    that ``X^T X`` is invertible (book eq. ``eq-ff-normal-equations``).

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).

    Returns:
        The minimiser ``w* = (X^T X)^{-1} X^T y``, shape (d,).
    """
    X, y = check_xy(X, y)
    n, d = X.shape
    if n < d:
        raise ValueError(
            f"X must have at least as many rows as columns (n >= d), got n={n}, d={d}"
        )
    gram = X.T @ X  # (d, d)
    return torch.linalg.solve(gram, X.T @ y)


@dataclass(frozen=True)
class LeastSquaresGD:
    """What :func:`least_squares_gd` returns."""

    w: torch.Tensor  # (d,) the final iterate w_T
    path: torch.Tensor  # (T + 1, d) the iterates w_0, ..., w_T
    # (T + 1,) the data loss L(w_t) = ||X w_t - y||^2 / (2n), no penalty
    losses: torch.Tensor


def least_squares_gd(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lr: float,
    steps: int,
    w0: torch.Tensor | None = None,
    weight_decay: float = 0.0,
    radius: float | None = None,
) -> LeastSquaresGD:
    """Gradient descent on least squares, with optional weight decay and norm
    constraint.

    The update is ``w <- (1 - lr * lambda) w - lr * X^T (X w - y) / n`` (eq.
    ``eq-gd-update`` on ``eq-ff-ls-loss``; with ``lambda > 0`` it is gradient descent on
    the ridge objective, eq. ``eq-reg-weight-decay``). With a ``radius`` every step is
    followed by the projection onto the ball ``||w|| <= radius`` (projected gradient
    descent, eq. ``eq-reg-ball``).

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        lr: step size ``eta > 0``; plain GD converges for ``eta < 2 / lambda_max(X^T X /
            n)``.
        steps: number of iterations ``T >= 0``.
        w0: starting point, shape (d,); default zero.
        weight_decay: ``lambda >= 0``.
        radius: if given (> 0), project onto the ball of this radius after every step.

    Returns:
        A :class:`LeastSquaresGD` with the final weights, the whole path and the losses.
    """
    X, y = check_xy(X, y)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=0)
    lam = check_real(weight_decay, "weight_decay", min_value=0.0)
    if radius is not None:
        radius = check_real(radius, "radius", min_value=0.0, strict_min=True)
    w0 = None if w0 is None else _check_w(w0, X.shape[1], "w0")
    return _least_squares_gd(X, y, lr=lr, steps=steps, w0=w0, lam=lam, radius=radius)


def _least_squares_gd(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lr: float,
    steps: int,
    w0: torch.Tensor | None = None,
    lam: float = 0.0,
    radius: float | None = None,
) -> LeastSquaresGD:
    """The check-free core of :func:`least_squares_gd` (arguments already checked)."""
    n, d = X.shape
    w = X.new_zeros(d) if w0 is None else w0.to(X).clone()  # (d,)
    path = X.new_empty(steps + 1, d)  # (T+1, d)
    losses = X.new_empty(steps + 1)  # (T+1,)
    for t in range(steps + 1):
        r = X @ w - y  # (n,) residual
        path[t], losses[t] = w, 0.5 * (r @ r) / n
        if t == steps:
            break
        w = (1.0 - lr * lam) * w - lr * (X.T @ r) / n  # the gradient step
        if radius is not None and w.norm() > radius:
            w = w * (radius / w.norm())  # projection onto the ball ||w|| <= radius
    return LeastSquaresGD(w=w, path=path, losses=losses)
