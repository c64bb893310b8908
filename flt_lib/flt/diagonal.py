"""Diagonal linear networks: the kernel and rich regimes in the simplest model.

Woodworth et al. (2020) study the linear predictor ``x -> <beta, x>`` written as ``beta
= u * u - v * v`` (entrywise squares), trained by gradient descent on the square loss
from ``u = v = alpha * 1`` (so ``beta = 0`` at initialisation). On an underdetermined
problem (``n < d``) gradient flow converges to the interpolant that minimises

    Q_alpha(beta) = alpha^2 * sum_i q(beta_i / alpha^2),
    q(z) = 2 - sqrt(4 + z^2) + z arcsinh(z / 2),

which behaves like the l2 norm when alpha is large (kernel regime) and like the l1 norm
when alpha is small (rich regime). The module holds the data, the model, the closed-form
limits and a training function that returns a history.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "DiagonalHistory",
    "diagonal_beta",
    "min_l1_interpolant",
    "min_l2_interpolant",
    "q_potential",
    "sparse_regression_data",
    "train_diagonal",
]


def sparse_regression_data(
    n: int, d: int, k: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Underdetermined noiseless sparse regression ``y = X beta*``.

    ``X`` has i.i.d. N(0, 1) entries; ``beta*`` has ``k`` non-zero entries (the first
    ``k``), each equal to ``1 / sqrt(k)`` times a random sign, so ``||beta*|| = 1``.

    Args:
        n: number of examples.
        d: dimension, ``d >= k``.
        k: sparsity, ``1 <= k <= d``.
        generator: CPU generator.

    Returns:
        ``(X, y, beta_star)`` with shapes (n, d), (n,), (d,), on the CPU.
    """
    n = check_int(n, "n", min_value=1)
    d = check_int(d, "d", min_value=1)
    k = check_int(k, "k", min_value=1, max_value=d)
    check_generator(generator)
    X = torch.randn(n, d, generator=generator)  # (n, d)
    signs = torch.randint(0, 2, (k,), generator=generator).to(X) * 2 - 1
    beta_star = torch.zeros(d)
    beta_star[:k] = signs / math.sqrt(k)
    return X, X @ beta_star, beta_star


def diagonal_beta(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The linear predictor ``beta = u^2 - v^2`` of a diagonal network.

    Args:
        u: positive-path weights, shape (d,).
        v: negative-path weights, shape (d,).

    Returns:
        ``beta``, shape (d,).
    """
    check_tensor(u, "u", ndim=1, floating=True, shape_doc="(d,)")
    check_tensor(v, "v", shape=(u.shape[0],), floating=True, shape_doc="(d,)")
    return u * u - v * v


def min_l2_interpolant(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Minimum Euclidean-norm solution ``X^T (X X^T)^{-1} y`` of ``X beta = y`` (n < d).

    Args:
        X: design, shape (n, d), full row rank.
        y: targets, shape (n,).

    Returns:
        ``beta``, shape (d,).
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    if X.shape[0] > X.shape[1]:
        raise ValueError(
            f"X must have n <= d (underdetermined), got shape {tuple(X.shape)}"
        )
    return X.T @ torch.linalg.solve(X @ X.T, y)


def min_l1_interpolant(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Minimum l1-norm solution of ``X beta = y`` (basis pursuit), by linear
    programming.

    Solves ``min sum(p + q)`` s.t. ``X (p - q) = y``, ``p, q >= 0`` with
    ``scipy.optimize.linprog`` (imported here, so scipy is needed only for this
    function).

    Args:
        X: design, shape (n, d).
        y: targets, shape (n,).

    Returns:
        ``beta``, shape (d,), same dtype and device as ``X``.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    import numpy as np
    from scipy.optimize import linprog

    A = X.detach().cpu().double().numpy()
    b = y.detach().cpu().double().numpy()
    d = A.shape[1]
    res = linprog(
        np.ones(2 * d),
        A_eq=np.hstack([A, -A]),
        b_eq=b,
        bounds=(0, None),
        method="highs",
    )
    if not res.success:
        raise ValueError(f"X beta = y has no solution found by linprog: {res.message}")
    beta = res.x[:d] - res.x[d:]
    return torch.as_tensor(beta, dtype=X.dtype, device=X.device)


def q_potential(beta: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """Woodworth et al.'s implicit-bias potential ``Q_alpha(beta)`` (eq-flt-q-alpha).

    ``Q_alpha(beta) = alpha^2 sum_i q(beta_i / alpha^2)``, ``q(z) = 2 - sqrt(4 + z^2) +
    z arcsinh(z/2)``. For large alpha, ``Q_alpha ~ ||beta||^2 / (4 alpha^2)``; for small
    alpha, ``Q_alpha ~ ||beta||_1 log(1/alpha^2)``.

    Args:
        beta: predictor, shape (d,).
        alpha: initialisation scale, ``> 0``.

    Returns:
        A scalar tensor.
    """
    check_tensor(beta, "beta", ndim=1, floating=True, shape_doc="(d,)")
    alpha = check_real(alpha, "alpha", min_value=0.0, strict_min=True)
    return _q_potential(beta, alpha=alpha)


def _q_potential(beta: torch.Tensor, *, alpha: float) -> torch.Tensor:
    """The check-free core of :func:`q_potential` (arguments already checked)."""
    z = beta / alpha**2
    return alpha**2 * (2 - torch.sqrt(4 + z**2) + z * torch.asinh(z / 2)).sum()


@dataclass(frozen=True)
class DiagonalHistory:
    """What :func:`train_diagonal` records (first step, last step, every
    ``record_every`` steps)."""

    steps: list[int]  # the recorded step numbers
    train_loss: list[float]  # (1/(2n)) ||X beta - y||^2
    l1: list[float]  # ||beta||_1
    l2: list[float]  # ||beta||_2
    beta: torch.Tensor  # (d,) final predictor u^2 - v^2
    u: torch.Tensor  # (d,) final positive-path weights
    v: torch.Tensor  # (d,) final negative-path weights


def train_diagonal(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    alpha: float,
    lr: float,
    steps: int,
    record_every: int = 0,
) -> DiagonalHistory:
    """Gradient descent on ``L = (1/(2n)) ||X (u^2 - v^2) - y||^2`` from ``u = v = alpha
    1``.

    Gradients are in closed form (eq-flt-diagonal-gd): with ``r = X beta - y`` and ``g =
    X^T r / n``, ``dL/du = 2 u g`` and ``dL/dv = -2 v g`` (Woodworth et al., 2020).

    Args:
        X: design, shape (n, d).
        y: targets, shape (n,).
        alpha: initialisation scale, ``> 0``.
        lr: learning rate, ``> 0``.
        steps: number of steps, ``>= 1``.
        record_every: record every this many steps (0: only first and last).

    Returns:
        A :class:`DiagonalHistory`.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    alpha = check_real(alpha, "alpha", min_value=0.0, strict_min=True)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    record_every = check_int(record_every, "record_every", min_value=0)
    return _train_diagonal(
        X, y, alpha=alpha, lr=lr, steps=steps, record_every=record_every
    )


def _train_diagonal(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    alpha: float,
    lr: float,
    steps: int,
    record_every: int = 0,
) -> DiagonalHistory:
    """The check-free core of :func:`train_diagonal` (arguments already checked)."""
    n, d = X.shape
    u = torch.full((d,), alpha, dtype=X.dtype, device=X.device)
    v = u.clone()
    rec: dict[str, list] = {k: [] for k in ("t", "loss", "l1", "l2")}
    for t in range(steps + 1):
        beta = u * u - v * v  # (d,)
        r = X @ beta - y  # (n,)
        if t == 0 or t == steps or (record_every and t % record_every == 0):
            rec["t"].append(t)
            rec["loss"].append(0.5 * r.pow(2).mean().item())
            rec["l1"].append(beta.abs().sum().item())
            rec["l2"].append(beta.norm().item())
        if t == steps:
            break
        g = X.T @ r / n  # (d,)
        u, v = u - lr * 2 * u * g, v + lr * 2 * v * g
    return DiagonalHistory(
        steps=rec["t"],
        train_loss=rec["loss"],
        l1=rec["l1"],
        l2=rec["l2"],
        beta=u * u - v * v,
        u=u,
        v=v,
    )
