"""Gradient descent, heavy ball and Nesterov, their tuned parameters and their bounds.

The methods take any gradient function and return the whole trajectory;
``tuned_parameters`` gives each its best step size and momentum on a quadratic,
``critical_point_bound`` is the iteration bound of lem-gd-critical, and
``steps_to_tolerance`` reads a trajectory's error curve. Part of
:mod:`flt_lib.optim.gd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from flt_lib._validate import check_choice, check_int, check_real, check_tensor

__all__ = [
    "critical_point_bound",
    "gradient_descent",
    "heavy_ball",
    "nesterov",
    "steps_to_tolerance",
    "tuned_parameters",
]


GradFn = Callable[[torch.Tensor], torch.Tensor]


def _iterate(
    update: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    x0: torch.Tensor,
    steps: int,
) -> torch.Tensor:
    """Run ``x_{t+1} = update(x_t, x_{t-1})`` from ``x_{-1} = x_0``; return ``x_0, ...,
    x_T``."""
    traj = x0.new_empty(steps + 1, x0.shape[0])  # (T+1, d)
    traj[0] = x0
    x_prev, x = x0, x0
    for t in range(steps):
        x_prev, x = x, update(x, x_prev)
        traj[t + 1] = x
    return traj


def gradient_descent(
    grad_fn: GradFn, x0: torch.Tensor, *, lr: float, steps: int
) -> torch.Tensor:
    """Gradient descent ``x_{t+1} = x_t - lr * grad h(x_t)`` (eq. ``eq-gd-update``).

    Args:
        grad_fn: maps a point (d,) to the gradient (d,).
        x0: starting point, shape (d,).
        lr: step size ``eta > 0``.
        steps: number of iterations ``T >= 0``.

    Returns:
        The trajectory ``x_0, ..., x_T``, shape (T + 1, d).
    """
    x0, lr, _, steps = _check_method(x0, lr, 0.0, steps)
    return _gradient_descent(grad_fn, x0, lr=lr, steps=steps)


def _gradient_descent(
    grad_fn: GradFn, x0: torch.Tensor, *, lr: float, steps: int
) -> torch.Tensor:
    """The check-free core of :func:`gradient_descent` (arguments already checked)."""
    return _iterate(lambda x, x_prev: x - lr * grad_fn(x), x0, steps)


def heavy_ball(
    grad_fn: GradFn, x0: torch.Tensor, *, lr: float, momentum: float, steps: int
) -> torch.Tensor:
    """Polyak's heavy ball ``x_{t+1} = x_t - lr grad h(x_t) + beta (x_t - x_{t-1})``.

    Started with ``x_{-1} = x_0`` (eq. ``eq-acc-heavy-ball``; Polyak 1964).

    Args:
        grad_fn: maps a point (d,) to the gradient (d,).
        x0: starting point, shape (d,).
        lr: step size ``eta > 0``.
        momentum: ``beta`` in [0, 1).
        steps: number of iterations ``T >= 0``.

    Returns:
        The trajectory, shape (T + 1, d).
    """
    x0, lr, beta, steps = _check_method(x0, lr, momentum, steps)
    return _heavy_ball(grad_fn, x0, lr=lr, beta=beta, steps=steps)


def _heavy_ball(
    grad_fn: GradFn, x0: torch.Tensor, *, lr: float, beta: float, steps: int
) -> torch.Tensor:
    """The check-free core of :func:`heavy_ball` (arguments already checked)."""
    return _iterate(
        lambda x, x_prev: x - lr * grad_fn(x) + beta * (x - x_prev), x0, steps
    )


def nesterov(
    grad_fn: GradFn, x0: torch.Tensor, *, lr: float, momentum: float, steps: int
) -> torch.Tensor:
    """Nesterov's method: ``y_t = x_t + beta (x_t - x_{t-1})``, ``x_{t+1} = y_t - lr
    grad h(y_t)``.

    This is the constant-momentum form for ``mu``-strongly convex (or PL) problems
    (eq. ``eq-acc-nesterov``; Nesterov 1983; 2004, Sec. 2.2), with ``x_{-1} = x_0``.

    Args:
        grad_fn: maps a point (d,) to the gradient (d,).
        x0: starting point, shape (d,).
        lr: step size ``eta > 0``.
        momentum: ``beta`` in [0, 1).
        steps: number of iterations ``T >= 0``.

    Returns:
        The trajectory of the ``x_t``, shape (T + 1, d).
    """
    x0, lr, beta, steps = _check_method(x0, lr, momentum, steps)
    return _nesterov(grad_fn, x0, lr=lr, beta=beta, steps=steps)


def _nesterov(
    grad_fn: GradFn, x0: torch.Tensor, *, lr: float, beta: float, steps: int
) -> torch.Tensor:
    """The check-free core of :func:`nesterov` (arguments already checked)."""
    def update(x: torch.Tensor, x_prev: torch.Tensor) -> torch.Tensor:
        y = x + beta * (x - x_prev)  # look ahead
        return y - lr * grad_fn(y)  # gradient step at the look-ahead point

    return _iterate(update, x0, steps)


def _check_method(x0, lr, momentum, steps):
    check_tensor(x0, "x0", ndim=1, floating=True, shape_doc="(d,)")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    momentum = check_real(momentum, "momentum", min_value=0.0, max_value=1.0)
    if momentum == 1.0:
        raise ValueError(f"momentum must be < 1, got {momentum}")
    return x0, lr, momentum, check_int(steps, "steps", min_value=0)


def tuned_parameters(L: float, mu: float, *, method: str) -> tuple[float, float]:
    """Step size and momentum that give each method its best rate on ``mu <= A <= L``
    quadratics.

    - ``"gd"``: ``eta = 2/(L + mu)``, contraction ``(kappa - 1)/(kappa + 1)`` per step;
    - ``"heavy_ball"``: ``eta = 4/(sqrt L + sqrt mu)^2``, ``beta = ((sqrt kappa -
      1)/(sqrt kappa + 1))^2`` (Polyak 1964), rate ``(sqrt kappa - 1)/(sqrt kappa +
      1)``;
    - ``"nesterov"``: ``eta = 1/L``, ``beta = (sqrt kappa - 1)/(sqrt kappa + 1)``
      (Nesterov 2004, Sec. 2.2), rate ``1 - 1/sqrt kappa``.

    Args:
        L: smoothness constant, > 0.
        mu: strong-convexity / PL constant, 0 < mu <= L.
        method: "gd", "heavy_ball" or "nesterov".

    Returns:
        ``(lr, momentum)``.
    """
    L = check_real(L, "L", min_value=0.0, strict_min=True)
    mu = check_real(mu, "mu", min_value=0.0, strict_min=True, max_value=L)
    check_choice(method, "method", ["gd", "heavy_ball", "nesterov"])
    return _tuned_parameters(L, mu, method=method)


def _tuned_parameters(L: float, mu: float, *, method: str) -> tuple[float, float]:
    """The check-free core of :func:`tuned_parameters` (arguments already checked)."""
    root = math.sqrt(L / mu)  # sqrt(kappa)
    if method == "gd":
        return 2.0 / (L + mu), 0.0
    if method == "heavy_ball":
        return (
            4.0 / (math.sqrt(L) + math.sqrt(mu)) ** 2,
            ((root - 1.0) / (root + 1.0)) ** 2,
        )
    return 1.0 / L, (root - 1.0) / (root + 1.0)


def critical_point_bound(L: float, gap: float, eps: float) -> float:
    """Iterations after which GD with ``eta = 1/L`` has met ``||grad h|| <= eps``: ``2 L
    gap / eps^2``.

    (Lemma ``lem-gd-critical``; ``gap = h(x_0) - h^*`` or ``h(x_0)`` minus any lower
    bound.)

    Args:
        L: smoothness constant, > 0.
        gap: initial suboptimality, >= 0.
        eps: gradient-norm target, > 0.

    Returns:
        The bound, a float.
    """
    L = check_real(L, "L", min_value=0.0, strict_min=True)
    gap = check_real(gap, "gap", min_value=0.0)
    eps = check_real(eps, "eps", min_value=0.0, strict_min=True)
    return 2.0 * L * gap / eps**2


def steps_to_tolerance(errors: torch.Tensor, *, tol: float) -> int:
    """First index ``t`` with ``errors[t] <= tol``, or -1 if the tolerance is never
    reached.

    Args:
        errors: a sequence of nonnegative errors, shape (T + 1,).
        tol: the tolerance, > 0.

    Returns:
        The index, an int.
    """
    check_tensor(errors, "errors", ndim=1, shape_doc="(T + 1,)")
    tol = check_real(tol, "tol", min_value=0.0, strict_min=True)
    hit = torch.nonzero(errors <= tol)
    return int(hit[0, 0]) if hit.numel() else -1
