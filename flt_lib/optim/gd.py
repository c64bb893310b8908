"""Gradient descent, heavy ball and Nesterov on smooth functions (Sections 3.2 and 3.3).

The test problems are quadratics ``h(x) = 0.5 x^T A x - b^T x`` with symmetric positive
semidefinite ``A`` (smoothness constant ``L = lambda_max(A)``) and least squares ``h(w)
= ||X w - y||^2 / (2n)``, which is a quadratic with ``A = X^T X / n``. The methods take
any gradient function, so they work on other smooth problems too.

References: Polyak (1963) for gradient descent under the PL inequality, Polyak (1964)
for the heavy-ball method, Nesterov (1983, 2004) for the accelerated method, Karimi,
Nutini & Schmidt (2016) for PL versus strong convexity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)
from flt_lib.rng import random_orthogonal

__all__ = [
    "Quadratic",
    "critical_point_bound",
    "gradient_descent",
    "heavy_ball",
    "least_squares",
    "low_rank_design",
    "minimum_value",
    "nesterov",
    "quadratic_grad",
    "quadratic_value",
    "random_spectrum_quadratic",
    "rosenbrock",
    "rosenbrock_grad",
    "spectrum_constants",
    "steps_to_tolerance",
    "tuned_parameters",
]

GradFn = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Quadratic:
    """The quadratic ``h(x) = 0.5 x^T A x - b^T x + c``; checked on construction."""

    A: torch.Tensor  # (d, d) symmetric positive semidefinite Hessian
    b: torch.Tensor  # (d,) linear term
    c: float = 0.0  # constant offset (lets least squares keep its true value)

    def __post_init__(self) -> None:
        check_tensor(self.A, "A", ndim=2, floating=True, shape_doc="(d, d)")
        if self.A.shape[0] != self.A.shape[1]:
            raise ValueError(
                f"A must be square (d, d), got shape {tuple(self.A.shape)}"
            )
        check_tensor(
            self.b, "b", shape=(self.A.shape[0],), floating=True, shape_doc="(d,)"
        )
        scale = 1.0 + self.A.abs().max().item()
        if not torch.allclose(self.A, self.A.T, rtol=0.0, atol=1e-10 * scale):
            gap = (self.A - self.A.T).abs().max().item()
            raise ValueError(f"A must be symmetric, got max |A - A^T| = {gap:.2e}")
        object.__setattr__(self, "c", check_real(self.c, "c"))


def quadratic_value(q: Quadratic, x: torch.Tensor) -> torch.Tensor:
    """Value ``0.5 x^T A x - b^T x + c`` at a point or a batch of points.

    Args:
        q: the quadratic.
        x: points, shape (d,) or (T, d).

    Returns:
        Values, shape () or (T,).
    """
    return 0.5 * ((x @ q.A) * x).sum(-1) - x @ q.b + q.c


def quadratic_grad(q: Quadratic, x: torch.Tensor) -> torch.Tensor:
    """Gradient ``A x - b`` at a point or a batch of points, shape like ``x``: (d,) or
    (T, d)."""
    return x @ q.A - q.b  # A is symmetric


def least_squares(X: torch.Tensor, y: torch.Tensor) -> Quadratic:
    """The least-squares objective ``||X w - y||^2 / (2n)`` written as a
    :class:`Quadratic`.

    Args:
        X: design matrix, shape (n, d).
        y: targets, shape (n,).

    Returns:
        The quadratic with ``A = X^T X / n``, ``b = X^T y / n``, ``c = ||y||^2 / (2n)``.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    n = X.shape[0]
    A = X.T @ X / n  # (d, d)
    return Quadratic(
        A=0.5 * (A + A.T), b=X.T @ y / n, c=float((y @ y).item()) / (2 * n)
    )


def minimum_value(q: Quadratic) -> float:
    """Minimum value ``h^*`` of a quadratic (finite when ``b`` lies in the range of
    ``A``).

    Computed at the minimum-norm minimiser ``A^+ b`` (pseudoinverse, float64).
    """
    x_star = torch.linalg.pinv(q.A.double(), hermitian=True) @ q.b.double()
    return float(
        quadratic_value(Quadratic(q.A.double(), q.b.double(), q.c), x_star).item()
    )


def spectrum_constants(
    A: torch.Tensor, *, rtol: float = 1e-9
) -> tuple[float, float, float]:
    """Smoothness ``L``, smallest eigenvalue, and smallest *nonzero* eigenvalue of
    ``A``.

    For a quadratic, ``L = lambda_max``. The strong-convexity constant is ``lambda_min``
    (zero if ``A`` is singular), while the PL constant is the smallest eigenvalue above
    ``rtol * L`` (Karimi et al. 2016): eigen-directions with eigenvalue 0 change neither
    ``h`` nor the gradient.

    Args:
        A: symmetric positive semidefinite matrix, shape (d, d).
        rtol: eigenvalues below ``rtol * lambda_max`` count as zero.

    Returns:
        ``(L, lambda_min, mu_pl)`` as floats.
    """
    check_tensor(A, "A", ndim=2, floating=True, shape_doc="(d, d)")
    rtol = check_real(rtol, "rtol", min_value=0.0, strict_min=True)
    eig = torch.linalg.eigvalsh(A.double().cpu())
    L = float(eig[-1])
    if L <= 0:
        raise ValueError(f"A must have a positive eigenvalue, got lambda_max = {L}")
    nonzero = eig[eig > rtol * L]
    return L, float(eig[0]), float(nonzero[0])


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
    root = math.sqrt(L / mu)  # sqrt(kappa)
    if method == "gd":
        return 2.0 / (L + mu), 0.0
    if method == "heavy_ball":
        return (
            4.0 / (math.sqrt(L) + math.sqrt(mu)) ** 2,
            ((root - 1.0) / (root + 1.0)) ** 2,
        )
    return 1.0 / L, (root - 1.0) / (root + 1.0)


def random_spectrum_quadratic(
    eigenvalues: torch.Tensor, *, generator: torch.Generator
) -> Quadratic:
    """A quadratic ``0.5 x^T A x`` (``b = 0``) with ``A = Q diag(eigenvalues) Q^T`` and
    a random rotation ``Q``.

    Args:
        eigenvalues: the spectrum of ``A``, shape (d,), entries >= 0.
        generator: CPU generator for the random rotation (QR of a Gaussian matrix).

    Returns:
        A :class:`Quadratic` on the device and dtype of ``eigenvalues``.
    """
    check_tensor(eigenvalues, "eigenvalues", ndim=1, floating=True, shape_doc="(d,)")
    check_generator(generator)
    if (eigenvalues < 0).any():
        raise ValueError(
            f"eigenvalues must be >= 0, got minimum {eigenvalues.min().item()}"
        )
    d = eigenvalues.shape[0]
    Q = random_orthogonal(d, d, generator=generator).to(eigenvalues)  # (d, d)
    A = (Q * eigenvalues) @ Q.T
    return Quadratic(A=0.5 * (A + A.T), b=torch.zeros_like(eigenvalues), c=0.0)


def low_rank_design(
    n: int, d: int, singular_values: torch.Tensor, *, generator: torch.Generator
) -> torch.Tensor:
    """A design matrix ``X = U diag(s) V^T`` with prescribed nonzero singular values and
    rank ``r < d``.

    Least squares on such an ``X`` is PL but not strongly convex: ``X^T X / n`` has
    ``d - r`` zero eigenvalues (Karimi et al. 2016).

    Args:
        n: number of rows, >= r.
        d: number of columns, >= r.
        singular_values: the r nonzero singular values ``s``, shape (r,), all > 0.
        generator: CPU generator for the random orthonormal factors ``U`` (n, r), ``V``
            (d, r).

    Returns:
        ``X``, shape (n, d), float64 on the CPU.
    """
    check_tensor(
        singular_values, "singular_values", ndim=1, floating=True, shape_doc="(r,)"
    )
    r = singular_values.shape[0]
    n = check_int(n, "n", min_value=max(r, 1))
    d = check_int(d, "d", min_value=max(r, 1))
    check_generator(generator)
    if (singular_values <= 0).any():
        raise ValueError(
            f"singular_values must be > 0, got minimum {singular_values.min().item()}"
        )
    U = random_orthogonal(n, r, generator=generator)  # (n, r)
    V = random_orthogonal(d, r, generator=generator)  # (d, r)
    return (U * singular_values.double().cpu()) @ V.T  # (n, d)


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


def rosenbrock(x: torch.Tensor, *, a: float = 1.0, c: float = 10.0) -> torch.Tensor:
    """Rosenbrock's curved valley ``h(x) = (a - x_1)^2 + c (x_2 - x_1^2)^2`` (minimum 0
    at (a, a^2)).

    A standard smooth, non-convex test problem whose minimum lies at the end of a narrow
    parabolic valley (Rosenbrock 1960); ``c = 100`` is the classic, the book uses ``c =
    10``.

    Args:
        x: points, shape (2,) or (..., 2).
        a: position of the minimum along ``x_1``.
        c: steepness of the valley walls, > 0.

    Returns:
        Values, shape () or (...,).
    """
    check_tensor(x, "x", floating=True)
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"x must have shape (2,) or (..., 2), got {tuple(x.shape)}")
    a, c = check_real(a, "a"), check_real(c, "c", min_value=0.0, strict_min=True)
    x1, x2 = x[..., 0], x[..., 1]
    return (a - x1) ** 2 + c * (x2 - x1**2) ** 2


def rosenbrock_grad(
    x: torch.Tensor, *, a: float = 1.0, c: float = 10.0
) -> torch.Tensor:
    """Gradient of :func:`rosenbrock`, ``(-2 (a - x_1) - 4 c x_1 (x_2 - x_1^2), 2 c (x_2
    - x_1^2))``.

    Args:
        x: points, shape (2,) or (..., 2).
        a: position of the minimum along ``x_1``.
        c: steepness of the valley walls, > 0.

    Returns:
        Gradients, same shape as ``x``.
    """
    check_tensor(x, "x", floating=True)
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"x must have shape (2,) or (..., 2), got {tuple(x.shape)}")
    a, c = check_real(a, "a"), check_real(c, "c", min_value=0.0, strict_min=True)
    x1, x2 = x[..., 0], x[..., 1]
    valley = x2 - x1**2  # (...,)
    return torch.stack([-2 * (a - x1) - 4 * c * x1 * valley, 2 * c * valley], dim=-1)
