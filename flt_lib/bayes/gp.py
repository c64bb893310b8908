"""Gaussian-process regression in closed form (Appendix A.5; Rasmussen & Williams, 2006,
ch. 2, 5).

A GP prior ``f ~ GP(0, k)`` with Gaussian noise of variance ``s2`` gives, on training
inputs with kernel matrix ``K`` and test inputs with cross-kernel ``K_*`` and kernel
``K_**``,

    mean = K_* (K + s2 I)^{-1} y,    cov = K_** - K_* (K + s2 I)^{-1} K_*^T

(eq-bayes-gp-posterior)

and the log marginal likelihood ``log N(y; 0, K + s2 I)`` (eq-bayes-gp-lml). Everything
is computed from one Cholesky factor of ``K + s2 I``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.bayes.linear import sample_gaussian

__all__ = [
    "rbf_kernel",
    "linear_kernel",
    "GPPosterior",
    "gp_posterior",
    "log_marginal_likelihood",
    "sample_gp",
]


def _pair(X1: object, X2: object) -> tuple[torch.Tensor, torch.Tensor]:
    X1 = check_tensor(X1, "X1", ndim=2, floating=True, shape_doc="(n1, d)")
    d = X1.shape[1]
    X2 = check_tensor(X2, "X2", shape=(None, d), floating=True, shape_doc=f"(n2, {d})")
    return X1, X2


def rbf_kernel(
    X1: torch.Tensor, X2: torch.Tensor, *, lengthscale: float, variance: float = 1.0
) -> torch.Tensor:
    """Squared-exponential kernel ``variance exp(-|x - x'|^2 / (2 lengthscale^2))``
    (eq-bayes-rbf).

    Args:
        X1: inputs, shape (n1, d).
        X2: inputs, shape (n2, d).
        lengthscale: ``ell > 0``.
        variance: prior variance of ``f(x)``, ``> 0``.

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    X1, X2 = _pair(X1, X2)
    ell = check_real(lengthscale, "lengthscale", min_value=0.0, strict_min=True)
    var = check_real(variance, "variance", min_value=0.0, strict_min=True)
    return _rbf_kernel(X1, X2, ell, var)


def _rbf_kernel(X1, X2, ell, var):
    sq = (X1**2).sum(1)[:, None] + (X2**2).sum(1)[None, :] - 2 * X1 @ X2.T   # (n1, n2)
    return var * torch.exp(-sq.clamp_min(0.0) / (2 * ell**2))


def linear_kernel(
    X1: torch.Tensor, X2: torch.Tensor, *, variance: float = 1.0
) -> torch.Tensor:
    """Kernel ``(sigma^2 / d) x^T x'`` of a linear unit with ``N(0, sigma^2/d)``
    weights.

    This is the covariance of eq-bayes-linear-gp.

    Args:
        X1: inputs, shape (n1, d).
        X2: inputs, shape (n2, d).
        variance: ``sigma^2 > 0``.

    Returns:
        The kernel matrix ``(sigma^2 / d) X1 X2^T``, shape (n1, n2).
    """
    X1, X2 = _pair(X1, X2)
    var = check_real(variance, "variance", min_value=0.0, strict_min=True)
    return _linear_kernel(X1, X2, var=var)


def _linear_kernel(X1: torch.Tensor, X2: torch.Tensor, *, var: float) -> torch.Tensor:
    """The check-free core of :func:`linear_kernel` (arguments already checked)."""
    return var / X1.shape[1] * X1 @ X2.T  # (n1, n2)


@dataclass(frozen=True)
class GPPosterior:
    """The posterior of f at the test inputs: a Gaussian N(mean, cov)."""

    mean: torch.Tensor  # (m,) posterior mean of f at the test inputs
    cov: torch.Tensor   # (m, m) posterior covariance of f (without observation noise)

    @property
    def var(self) -> torch.Tensor:
        """Posterior variances of f, shape (m,), clamped at zero against round-off."""
        return self.cov.diagonal().clamp_min(0.0)


def _chol(K: torch.Tensor, noise_var: float) -> torch.Tensor:
    n = K.shape[0]
    A = K + noise_var * torch.eye(n, dtype=K.dtype, device=K.device)
    L, info = torch.linalg.cholesky_ex(A)
    if info.item() != 0:
        raise ValueError(
            "K_train + noise_var I is not positive definite; increase noise_var"
        )
    return L


def _check_train(K_train: object, y: object) -> tuple[torch.Tensor, torch.Tensor]:
    K = check_tensor(K_train, "K_train", ndim=2, floating=True, shape_doc="(n, n)")
    n = K.shape[0]
    check_tensor(K, "K_train", shape=(n, n), shape_doc="(n, n)")
    y = check_tensor(y, "y", shape=(n,), floating=True, shape_doc=f"(n,) = ({n},)")
    return K, y


def gp_posterior(
    K_train: torch.Tensor,
    y: torch.Tensor,
    K_cross: torch.Tensor,
    K_test: torch.Tensor,
    *,
    noise_var: float,
) -> GPPosterior:
    """GP regression: posterior mean and covariance of f at test inputs
    (eq-bayes-gp-posterior).

    Args:
        K_train: kernel on the training inputs, shape (n, n).
        y: training targets, shape (n,).
        K_cross: test-train kernel, shape (m, n).
        K_test: kernel on the test inputs, shape (m, m).
        noise_var: observation-noise variance ``s2 >= 0`` (0 needs K_train positive
            definite).

    Returns:
        A :class:`GPPosterior` with mean (m,) and covariance (m, m).
    """
    K, y = _check_train(K_train, y)
    n = K.shape[0]
    Ks = check_tensor(
        K_cross, "K_cross", shape=(None, n), floating=True, shape_doc=f"(m, {n})"
    )
    m = Ks.shape[0]
    Kss = check_tensor(
        K_test, "K_test", shape=(m, m), floating=True, shape_doc=f"({m}, {m})"
    )
    s2 = check_real(noise_var, "noise_var", min_value=0.0)
    return _gp_posterior(y, Ks, Kss, s2, K)


def _gp_posterior(y, Ks, Kss, s2, K):
    L = _chol(K, s2)                                                 # (n, n)
    alpha = torch.cholesky_solve(y[:, None], L)[:, 0]                # (K + s2 I)^{-1} y
    V = torch.linalg.solve_triangular(L, Ks.T, upper=False)          # (n, m)
    return GPPosterior(Ks @ alpha, Kss - V.T @ V)


def log_marginal_likelihood(
    K_train: torch.Tensor, y: torch.Tensor, *, noise_var: float
) -> float:
    """Log evidence ``log N(y; 0, K + s2 I)`` from one Cholesky factor
    (eq-bayes-gp-lml).

    It is ``-y^T a / 2 - sum_i log L_ii - n log(2 pi) / 2`` with
    ``a = (K + s2 I)^{-1} y``.

    Args:
        K_train: kernel on the training inputs, shape (n, n).
        y: training targets, shape (n,).
        noise_var: ``s2 >= 0``.

    Returns:
        The log marginal likelihood (a float).
    """
    K, y = _check_train(K_train, y)
    s2 = check_real(noise_var, "noise_var", min_value=0.0)
    return _log_marginal_likelihood(y, K, s2)


def _log_marginal_likelihood(y, K, s2):
    L = _chol(K, s2)
    alpha = torch.cholesky_solve(y[:, None], L)[:, 0]
    n = K.shape[0]
    return (
        -0.5 * y @ alpha - L.diagonal().log().sum() - 0.5 * n * math.log(2 * math.pi)
    ).item()


def sample_gp(
    K: torch.Tensor, n_samples: int, *, generator: torch.Generator, jitter: float = 1e-9
) -> torch.Tensor:
    """Draws of ``f ~ N(0, K)`` on a set of inputs, via the Cholesky factor of
    ``K + jitter I``.

    Args:
        K: kernel matrix, shape (n, n), positive semi-definite.
        n_samples: number of functions ``S >= 1``.
        generator: CPU generator.
        jitter: small diagonal term ``>= 0`` that keeps the factorisation stable.

    Returns:
        Function values, shape (S, n).
    """
    K = check_tensor(K, "K", ndim=2, floating=True, shape_doc="(n, n)")
    n = K.shape[0]
    check_tensor(K, "K", shape=(n, n), shape_doc="(n, n)")
    n_samples = check_int(n_samples, "n_samples", min_value=1)
    check_generator(generator)
    jitter = check_real(jitter, "jitter", min_value=0.0)
    _chol(K, jitter)  # a clear error if K + jitter I is not positive definite
    return _sample_gp(K, n_samples, generator, jitter)


def _sample_gp(K, n_samples, generator, jitter):
    n = K.shape[0]
    mean = torch.zeros(n, dtype=K.dtype, device=K.device)
    cov = K + jitter * torch.eye(n, dtype=K.dtype, device=K.device)
    return sample_gaussian(mean, cov, n_samples, generator=generator)
