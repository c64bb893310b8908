"""Posterior distributions the samplers of Appendix A are run on.

Each target is a frozen dataclass holding its parameters (or its data) with two pure
methods, ``log_prob(theta)`` (up to an additive constant) and ``grad_log_prob(theta)``,
both vectorised over ``C`` chains: ``theta`` has shape (C, d). The data-dependent
targets also accept ``batch``, a (C, B) tensor of data indices, and then return the
unbiased minibatch estimate of the gradient that SGLD uses (Welling & Teh, 2011):

    grad log p(theta) + (n / B) sum_{i in batch} grad log p(x_i | theta).

(eq-bayes-sgld-grad)

- :class:`Gaussian`: a multivariate normal, given by its mean and precision;
- :class:`MixturePosterior`: the two-parameter Gaussian-mixture posterior of
  Welling & Teh (2011);
- :class:`LogisticPosterior`: Bayesian logistic regression with a Gaussian prior;
- :func:`grid_posterior`: a normalised 2-D grid approximation, the reference for 2-D
  targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.bayes.mcmc import LogProb

__all__ = [
    "Gaussian",
    "MixturePosterior",
    "welling_teh_data",
    "LogisticPosterior",
    "GridPosterior",
    "grid_posterior",
]


def _check_theta(theta: object, d: int) -> torch.Tensor:
    return check_tensor(theta, "theta", shape=(None, d), floating=True,
                        shape_doc=f"(C, d) with d = {d}")


def _check_batch(batch: object, C: int, n: int) -> torch.Tensor:
    batch = check_tensor(batch, "batch", shape=(C, None), shape_doc="(C, B)")
    if batch.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"batch must hold integer indices, got dtype {batch.dtype}")
    if batch.numel() and (batch.min() < 0 or batch.max() >= n):
        raise ValueError(
            f"batch indices must lie in [0, {n}), got [{batch.min()}, {batch.max()}]"
        )
    return batch


@dataclass(frozen=True)
class Gaussian:
    """The Gaussian target N(mean, precision^{-1})."""

    mean: torch.Tensor       # (d,) the mean
    # (d, d) the inverse covariance, symmetric positive definite
    precision: torch.Tensor

    def __post_init__(self) -> None:
        check_tensor(self.mean, "mean", ndim=1, floating=True, shape_doc="(d,)")
        d = self.mean.shape[0]
        check_tensor(self.precision, "precision", shape=(d, d), floating=True,
                     shape_doc=f"({d}, {d})")
        if not torch.allclose(self.precision, self.precision.T, rtol=1e-10, atol=1e-12):
            raise ValueError("precision must be symmetric")
        if torch.linalg.eigvalsh(self.precision).min() <= 0:
            raise ValueError("precision must be positive definite")

    @classmethod
    def from_cov(cls, mean: torch.Tensor, cov: torch.Tensor) -> "Gaussian":
        """Build N(mean, cov) from its covariance (d, d)."""
        check_tensor(cov, "cov", ndim=2, floating=True, shape_doc="(d, d)")
        prec = torch.linalg.inv(cov)
        return cls(mean, 0.5 * (prec + prec.T))

    @property
    def cov(self) -> torch.Tensor:
        """The covariance matrix (d, d)."""
        return torch.linalg.inv(self.precision)

    def log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        """``-(theta - mean)^T P (theta - mean) / 2`` for states (C, d);
        returns (C,)."""
        z = _check_theta(theta, self.mean.shape[0]) - self.mean                # (C, d)
        return -0.5 * ((z @ self.precision) * z).sum(1)

    def grad_log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        """``-P (theta - mean)`` for states (C, d); returns (C, d)."""
        return -(_check_theta(theta, self.mean.shape[0]) - self.mean) @ self.precision


@dataclass(frozen=True)
class MixturePosterior:
    """Posterior of (theta_1, theta_2) in the two-component mixture of
    Welling & Teh (2011).

    The data are x_i ~ N(theta_1, var_x)/2 + N(theta_1 + theta_2, var_x)/2.
    The priors are theta_1 ~ N(0, var1) and theta_2 ~ N(0, var2); Welling & Teh (2011)
    use var1 = 10, var2 = 1, var_x = 2.
    """

    x: torch.Tensor      # (n,) the observations
    var1: float = 10.0   # prior variance of theta_1
    var2: float = 1.0    # prior variance of theta_2
    var_x: float = 2.0   # variance of each mixture component

    def __post_init__(self) -> None:
        check_tensor(self.x, "x", ndim=1, floating=True, shape_doc="(n,)")
        for name in ("var1", "var2", "var_x"):
            check_real(getattr(self, name), name, min_value=0.0, strict_min=True)

    def _components(self, theta: torch.Tensor, x: torch.Tensor):
        """Log-densities of the two components up to a shared constant, each (C, m)."""
        a = -0.5 * (x - theta[:, :1]) ** 2 / self.var_x
        b = -0.5 * (x - theta[:, :1] - theta[:, 1:]) ** 2 / self.var_x
        return a, b

    def _log_prior(self, theta: torch.Tensor) -> torch.Tensor:
        return -0.5 * (theta[:, 0] ** 2 / self.var1 + theta[:, 1] ** 2 / self.var2)

    def log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        """Log posterior up to a constant for states (C, 2); returns (C,)."""
        theta = _check_theta(theta, 2)
        a, b = self._components(theta, self.x[None, :])                         # (C, n)
        return self._log_prior(theta) + torch.logaddexp(a, b).sum(1)

    def grad_log_prob(
        self, theta: torch.Tensor, batch: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Gradient for states (C, 2), exact or from a minibatch (C, B)
        (eq-bayes-sgld-grad)."""
        theta = _check_theta(theta, 2)
        n = self.x.shape[0]
        if batch is None:
            x, scale = self.x[None, :], 1.0                                     # (1, n)
        else:
            batch = _check_batch(batch, theta.shape[0], n)
            x, scale = self.x[batch], n / batch.shape[1]                        # (C, B)
        a, b = self._components(theta, x)
        r = torch.sigmoid(b - a)                         # responsibility of component 2
        ga = (x - theta[:, :1]) / self.var_x
        gb = (x - theta[:, :1] - theta[:, 1:]) / self.var_x
        g1 = ((1 - r) * ga + r * gb).sum(1)
        g2 = (r * gb).sum(1)
        prior = torch.stack([-theta[:, 0] / self.var1, -theta[:, 1] / self.var2], 1)
        return prior + scale * torch.stack([g1, g2], 1)


def welling_teh_data(
    n: int,
    *,
    generator: torch.Generator,
    theta: tuple[float, float] = (0.0, 1.0),
    var_x: float = 2.0,
) -> torch.Tensor:
    """Draw ``n`` points from the mixture
    ``N(theta_1, var_x)/2 + N(theta_1 + theta_2, var_x)/2``.

    Args:
        n: number of points (Welling & Teh use 100).
        generator: CPU generator.
        theta: the true ``(theta_1, theta_2)`` (Welling & Teh: (0, 1)).
        var_x: variance of each component.

    Returns:
        Observations, shape (n,), float64.
    """
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    var_x = check_real(var_x, "var_x", min_value=0.0, strict_min=True)
    t1, t2 = (check_real(v, "theta", min_value=None) for v in theta)
    second = torch.rand(n, generator=generator, dtype=torch.float64) < 0.5
    noise = math.sqrt(var_x) * torch.randn(n, generator=generator, dtype=torch.float64)
    return t1 + t2 * second.to(torch.float64) + noise


@dataclass(frozen=True)
class LogisticPosterior:
    """Bayesian logistic regression with a Gaussian prior.

    theta ~ N(0, prior_var I) and P(y | x, theta) = sigmoid(y x^T theta).
    """

    X: torch.Tensor         # (n, d) inputs, one example per row
    y: torch.Tensor         # (n,) labels in {-1, +1}
    prior_var: float = 1.0  # variance of the Gaussian prior on every weight

    def __post_init__(self) -> None:
        check_tensor(self.X, "X", ndim=2, floating=True, shape_doc="(n, d)")
        check_tensor(
            self.y, "y", shape=(self.X.shape[0],), floating=True, shape_doc="(n,)"
        )
        if not ((self.y == 1) | (self.y == -1)).all():
            raise ValueError("y must contain only -1 and +1")
        check_real(self.prior_var, "prior_var", min_value=0.0, strict_min=True)

    def log_prob(self, theta: torch.Tensor) -> torch.Tensor:
        """Log posterior up to a constant for states (C, d); returns (C,)."""
        theta = _check_theta(theta, self.X.shape[1])
        margins = (theta @ self.X.T) * self.y                                   # (C, n)
        log_lik = torch.nn.functional.logsigmoid(margins).sum(1)
        return -0.5 * (theta**2).sum(1) / self.prior_var + log_lik

    def grad_log_prob(
        self, theta: torch.Tensor, batch: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Gradient for states (C, d), exact or from a minibatch (C, B)
        (eq-bayes-sgld-grad)."""
        theta = _check_theta(theta, self.X.shape[1])
        n = self.X.shape[0]
        if batch is None:
            margins = (theta @ self.X.T) * self.y                               # (C, n)
            lik = (torch.sigmoid(-margins) * self.y) @ self.X                   # (C, d)
        else:
            batch = _check_batch(batch, theta.shape[0], n)
            Xb, yb = self.X[batch], self.y[batch]                    # (C, B, d), (C, B)
            margins = torch.einsum("cbd,cd->cb", Xb, theta) * yb
            lik = n / batch.shape[1] * torch.einsum(
                "cb,cbd->cd", torch.sigmoid(-margins) * yb, Xb
            )
        return -theta / self.prior_var + lik


@dataclass(frozen=True)
class GridPosterior:
    """A 2-D density normalised on a regular grid."""

    points: torch.Tensor   # (G*G, 2) the grid points
    weights: torch.Tensor  # (G*G,) their probabilities, summing to one

    @property
    def mean(self) -> torch.Tensor:
        """Posterior mean, shape (2,)."""
        return self.weights @ self.points

    def prob(self, mask: torch.Tensor) -> float:
        """Posterior probability of the grid points where ``mask`` (G*G,) is True."""
        return self.weights[mask].sum().item()


def grid_posterior(
    log_prob: LogProb, lo: tuple[float, float], hi: tuple[float, float], n_grid: int
) -> GridPosterior:
    """Normalise ``exp(log_prob)`` on an ``n_grid x n_grid`` grid over the box
    ``[lo, hi]``.

    Args:
        log_prob: log density up to a constant, ``(C, 2) -> (C,)``.
        lo: lower corner ``(theta_1, theta_2)``.
        hi: upper corner; the box must hold essentially all the mass.
        n_grid: points per axis, ``>= 2``.

    Returns:
        A :class:`GridPosterior` (float64).
    """
    n_grid = check_int(n_grid, "n_grid", min_value=2)
    if not (len(lo) == len(hi) == 2 and lo[0] < hi[0] and lo[1] < hi[1]):
        raise ValueError(
            f"lo and hi must be 2-D corners with lo < hi, got {lo} and {hi}"
        )
    a = torch.linspace(lo[0], hi[0], n_grid, dtype=torch.float64)
    b = torch.linspace(lo[1], hi[1], n_grid, dtype=torch.float64)
    pts = torch.cartesian_prod(a, b)                                          # (G*G, 2)
    lp = log_prob(pts)
    w = torch.softmax(lp, dim=0)
    return GridPosterior(pts, w)
