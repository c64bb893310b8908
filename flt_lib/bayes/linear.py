"""Bayesian linear regression: the one posterior we can write down (Appendix A.1).

Model: ``y = X w + noise``, ``noise ~ N(0, noise_var I_n)``, prior
``w ~ N(0, prior_var I_d)``. The posterior is Gaussian,

    Sigma = (X^T X / noise_var + I / prior_var)^{-1},  mu = Sigma X^T y / noise_var,

(eq-bayes-blr-posterior)

and its mean is the ridge (weight-decay) solution with
``lambda = noise_var / prior_var``. The module also draws exact posterior samples two
ways, and forms Monte-Carlo predictive distributions from samples, with or without
importance weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_generator,
    check_int,
    check_real,
    check_tensor,
    check_xy,
)

__all__ = [
    "GaussianPosterior",
    "blr_posterior",
    "blr_predictive",
    "sample_gaussian",
    "sample_then_optimise",
    "ensemble_predictive",
    "kish_ess",
]


@dataclass(frozen=True)
class GaussianPosterior:
    """A Gaussian posterior N(mean, cov) over the weights."""

    mean: torch.Tensor  # (d,) posterior mean, the MAP estimate
    cov: torch.Tensor   # (d, d) posterior covariance

    def __post_init__(self) -> None:
        check_tensor(self.mean, "mean", ndim=1, floating=True, shape_doc="(d,)")
        d = self.mean.shape[0]
        check_tensor(
            self.cov, "cov", shape=(d, d), floating=True, shape_doc=f"({d}, {d})"
        )


def _variances(prior_var: object, noise_var: object) -> tuple[float, float]:
    prior_var = check_real(prior_var, "prior_var", min_value=0.0, strict_min=True)
    noise_var = check_real(noise_var, "noise_var", min_value=0.0, strict_min=True)
    return prior_var, noise_var


def blr_posterior(
    X: torch.Tensor, y: torch.Tensor, *, prior_var: float, noise_var: float
) -> GaussianPosterior:
    """Posterior of Bayesian linear regression (eq-bayes-blr-posterior).

    Args:
        X: design matrix, shape (n, d), one example per row.
        y: targets, shape (n,).
        prior_var: prior variance ``sigma^2 > 0`` of every weight.
        noise_var: noise variance ``gamma^2 > 0``.

    Returns:
        The :class:`GaussianPosterior` with mean (d,) and covariance (d, d).
    """
    X, y = check_xy(X, y)
    return _blr_posterior(X, y, prior_var, noise_var)


def _blr_posterior(X, y, prior_var, noise_var):
    prior_var, noise_var = _variances(prior_var, noise_var)
    d = X.shape[1]
    precision = (
        X.T @ X / noise_var + torch.eye(d, dtype=X.dtype, device=X.device) / prior_var
    )
    cov = torch.cholesky_inverse(torch.linalg.cholesky(precision))        # (d, d) Sigma
    return GaussianPosterior(cov @ (X.T @ y) / noise_var, cov)


def blr_predictive(
    post: GaussianPosterior, X_test: torch.Tensor, *, noise_var: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Predictive mean ``x^T mu`` and variance ``x^T Sigma x + noise_var``.

    This is eq-bayes-blr-predictive.

    Args:
        post: the weight posterior.
        X_test: test inputs, shape (m, d).
        noise_var: add the observation noise (0 gives the variance of the function
            value).

    Returns:
        ``(mean, var)``, each of shape (m,).
    """
    if not isinstance(post, GaussianPosterior):
        raise TypeError(f"post must be a GaussianPosterior, got {type(post).__name__}")
    d = post.mean.shape[0]
    X_test = check_tensor(
        X_test, "X_test", shape=(None, d), floating=True, shape_doc=f"(m, {d})"
    )
    noise_var = check_real(noise_var, "noise_var", min_value=0.0)
    var = ((X_test @ post.cov) * X_test).sum(1) + noise_var
    return X_test @ post.mean, var


def sample_gaussian(
    mean: torch.Tensor, cov: torch.Tensor, n_samples: int, *, generator: torch.Generator
) -> torch.Tensor:
    """Exact draws from ``N(mean, cov)`` as ``mean + L z`` with ``cov = L L^T``
    (Cholesky).

    Args:
        mean: shape (d,).
        cov: shape (d, d), symmetric positive definite.
        n_samples: number of draws ``S >= 1``.
        generator: CPU generator.

    Returns:
        Samples, shape (S, d), on the device of ``mean``.
    """
    mean = check_tensor(mean, "mean", ndim=1, floating=True, shape_doc="(d,)")
    d = mean.shape[0]
    cov = check_tensor(cov, "cov", shape=(d, d), floating=True, shape_doc=f"({d}, {d})")
    n_samples = check_int(n_samples, "n_samples", min_value=1)
    check_generator(generator)
    L = torch.linalg.cholesky(cov)
    # (S, d)
    z = torch.randn(n_samples, d, generator=generator, dtype=mean.dtype).to(mean.device)
    return mean + z @ L.T


def sample_then_optimise(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    prior_var: float,
    noise_var: float,
    n_samples: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Exact posterior draws by solving randomly perturbed ridge problems
    (eq-bayes-perturb).

    Draw ``w0 ~ N(0, prior_var I)`` and ``e ~ N(0, noise_var I)``, and return the
    minimiser of ``|y + e - X w|^2 / noise_var + |w - w0|^2 / prior_var``: a Gaussian
    with exactly the posterior's mean and covariance (Papandreou & Yuille, 2010).

    Args:
        X: design matrix, shape (n, d).
        y: targets, shape (n,).
        prior_var: ``sigma^2 > 0``.
        noise_var: ``gamma^2 > 0``.
        n_samples: number of draws ``S >= 1``.
        generator: CPU generator.

    Returns:
        Samples, shape (S, d).
    """
    X, y = check_xy(X, y)
    prior_var, noise_var = _variances(prior_var, noise_var)
    n_samples = check_int(n_samples, "n_samples", min_value=1)
    check_generator(generator)
    return _sample_then_optimise(X, y, prior_var, noise_var, n_samples, generator)


def _sample_then_optimise(X, y, prior_var, noise_var, n_samples, generator):
    n, d = X.shape
    post = blr_posterior(X, y, prior_var=prior_var, noise_var=noise_var)
    gain = post.cov @ X.T / noise_var                               # (d, n): y -> mean
    w0 = torch.randn(n_samples, d, generator=generator, dtype=X.dtype).to(X.device)
    e = torch.randn(n_samples, n, generator=generator, dtype=X.dtype).to(X.device)
    w0, e = prior_var**0.5 * w0, noise_var**0.5 * e                 # (S, d), (S, n)
    residual = y + e - w0 @ X.T                                     # (S, n)
    return w0 + residual @ gain.T                                   # ridge step from w0


def ensemble_predictive(
    f_samples: torch.Tensor, log_weights: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and variance of predictions ``f(x; theta_s)`` over draws
    (eq-bayes-mc-predictive).

    With ``log_weights = None`` every draw counts once (the correct estimate for draws
    from the posterior). With weights the draws are averaged with the self-normalised
    weights ``softmax(log_weights)``: passing the log posterior density here is a
    common slip that targets a density proportional to the *squared* posterior.

    Args:
        f_samples: predictions, shape (S, m): one row per draw, one column per test
            input.
        log_weights: optional unnormalised log weights, shape (S,).

    Returns:
        ``(mean, var)``, each of shape (m,).
    """
    f = check_tensor(f_samples, "f_samples", ndim=2, floating=True, shape_doc="(S, m)")
    if log_weights is not None:
        log_weights = check_tensor(
            log_weights,
            "log_weights",
            shape=(f.shape[0],),
            floating=True,
            shape_doc="(S,)",
        )
    return _ensemble_predictive(f, log_weights)


def _ensemble_predictive(
    f: torch.Tensor, log_weights: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The check-free core of :func:`ensemble_predictive`."""
    if log_weights is None:
        w = torch.full((f.shape[0],), 1.0 / f.shape[0], dtype=f.dtype, device=f.device)
    else:
        w = torch.softmax(log_weights, dim=0)
    mean = w @ f                                                               # (m,)
    return mean, w @ (f - mean) ** 2


def kish_ess(log_weights: torch.Tensor) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of importance weights.

    Args:
        log_weights: unnormalised log weights, shape (S,).

    Returns:
        A number in [1, S].
    """
    lw = check_tensor(
        log_weights, "log_weights", ndim=1, floating=True, shape_doc="(S,)"
    )
    w = torch.softmax(lw, dim=0)
    return (1.0 / (w**2).sum()).item()
