"""Test problems for the methods of Sections 3.2 and 3.3: quadratics and Rosenbrock.

Quadratics ``h(x) = 0.5 x^T A x - b^T x + c`` (``Quadratic``), least squares written as
one, their spectral constants (smoothness, strong convexity, PL), random quadratics and
low-rank designs with a prescribed spectrum, and Rosenbrock's valley with its gradient.
Part of :mod:`flt_lib.optim.gd`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.rng import random_orthogonal

__all__ = [
    "Quadratic",
    "least_squares",
    "low_rank_design",
    "minimum_value",
    "quadratic_grad",
    "quadratic_value",
    "random_spectrum_quadratic",
    "rosenbrock",
    "rosenbrock_grad",
    "spectrum_constants",
]


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
    return _least_squares(X, y)


def _least_squares(X: torch.Tensor, y: torch.Tensor) -> Quadratic:
    """The check-free core of :func:`least_squares` (arguments already checked)."""
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
