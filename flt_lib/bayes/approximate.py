"""Cheaper stand-ins for the posterior of a network (Appendix A.7).

- ``ensemble``: train ``C`` networks from random starts; with ``anchored=True`` every
  member solves a perturbed MAP problem, data ``y + e`` and prior mean ``theta_0`` drawn
  afresh (eq-bayes-perturb), which samples the posterior exactly for a linear model
  (Papandreou & Yuille, 2010; Osband et al., 2018; Pearce et al., 2020); without it,
  a deep ensemble (Lakshminarayanan et al., 2017) with our Gaussian likelihood.
- ``laplace``: a Gaussian at the MAP with the generalised Gauss-Newton precision
  ``J^T J / noise_var + diag(1 / prior_var)`` (MacKay, 1992), and ``laplace_samples``,
  its linearised predictive.
- ``mean_field_vi``: a diagonal Gaussian fitted by maximising the evidence lower bound
  with reparameterised gradients (Bayes by Backprop; Blundell et al., 2015).
- ``mc_dropout``: a network trained with dropout on its hidden units and predicting with
  random masks (Gal & Ghahramani, 2016).

Every method returns function values ``f`` (S, m) at test inputs, to be scored by
``predictive_log_lik`` and ``interval_coverage`` with the same noise model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.bayes import bnn
from flt_lib.bayes.linear import GaussianPosterior

__all__ = [
    "Fit",
    "ensemble",
    "laplace",
    "laplace_samples",
    "MeanField",
    "mean_field_vi",
    "mc_dropout",
    "mc_dropout_samples",
    "predictive_log_lik",
    "interval_coverage",
]

# parameters (C, d) -> predictions on the training inputs (C, n)
Predict = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Fit:
    """Trained parameters and the final objective of each member."""

    theta: torch.Tensor  # (C, d) trained parameters, one row per member
    loss: torch.Tensor  # (C,) final objective (negative log density, up to a constant)


def _check_post_and_point(post, point, name: str) -> torch.Tensor:
    """Check that ``post`` is a network posterior and ``point`` a (d,) float vector."""
    if not isinstance(post, bnn.BNNRegression):
        raise TypeError(f"post must be a BNNRegression, got {type(post).__name__}")
    return check_tensor(
        point,
        name,
        shape=(post.dim,),
        floating=True,
        shape_doc=f"(d,) = ({post.dim},)",
    )


def _lbfgs(
    loss_fn: Callable[[torch.Tensor], torch.Tensor], theta0: torch.Tensor, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Minimise a sum of per-member losses (C,) by full-batch L-BFGS."""
    theta = theta0.clone().requires_grad_(True)
    opt = torch.optim.LBFGS(
        [theta],
        lr=1.0,
        max_iter=steps,
        history_size=20,
        tolerance_grad=1e-12,
        tolerance_change=1e-15,
        line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = loss_fn(theta).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        return theta.detach(), loss_fn(theta).detach()


def ensemble(
    predict: Predict,
    y: torch.Tensor,
    *,
    prior_var: torch.Tensor,
    noise_var: float,
    n_members: int,
    steps: int,
    generator: torch.Generator,
    anchored: bool = True,
) -> Fit:
    """Train an ensemble of MAP estimates, optionally perturbed (eq-bayes-perturb).

    Each member starts at ``theta_0 ~ N(0, diag(prior_var))``. Anchored, it minimises
    ``|y + e - predict(theta)|^2 / (2 noise_var)
    + sum (theta - theta_0)^2 / (2 prior_var)``
    with ``e ~ N(0, noise_var I)``; the draws are made in the order of
    :func:`flt_lib.bayes.linear.sample_then_optimise` (all ``theta_0``, then all ``e``),
    so that with the same generator a linear model gives the same samples. Unanchored,
    it minimises the negative log posterior from ``theta_0``.

    Args:
        predict: ``theta (C, d) -> predictions on the training inputs (C, n)``.
        y: training targets, shape (n,).
        prior_var: prior variances, shape (d,).
        noise_var: observation noise variance ``> 0``.
        n_members: ``C >= 1``.
        steps: L-BFGS iterations ``>= 1``.
        generator: CPU generator.
        anchored: perturb data and prior mean (default) or not.

    Returns:
        A :class:`Fit` with ``theta`` (C, d).
    """
    y = check_tensor(y, "y", ndim=1, floating=True, shape_doc="(n,)")
    pv = check_tensor(prior_var, "prior_var", ndim=1, floating=True, shape_doc="(d,)")
    nv = check_real(noise_var, "noise_var", min_value=0.0, strict_min=True)
    C = check_int(n_members, "n_members", min_value=1)
    steps = check_int(steps, "steps", min_value=1)
    check_generator(generator)
    return _ensemble(predict, y, pv, nv, C, steps, generator, anchored)


def _ensemble(
    predict: Predict, y: torch.Tensor, pv: torch.Tensor, nv: float, C: int, steps: int,
    generator: torch.Generator, anchored: bool,
) -> Fit:
    d, n = pv.shape[0], y.shape[0]
    theta0 = pv.sqrt() * torch.randn(C, d, generator=generator, dtype=y.dtype)  # (C, d)
    e = math.sqrt(nv) * torch.randn(C, n, generator=generator, dtype=y.dtype)  # (C, n)
    target, anchor = (y + e, theta0) if anchored else (y.expand(C, n), 0 * theta0)

    def loss(theta: torch.Tensor) -> torch.Tensor:  # (C,)
        return ((target - predict(theta)) ** 2).sum(1) / (2 * nv) + (
            (theta - anchor) ** 2 / (2 * pv)
        ).sum(1)

    return Fit(*_lbfgs(loss, theta0, steps))


def laplace(post: bnn.BNNRegression, theta_map: torch.Tensor) -> GaussianPosterior:
    """Laplace approximation
    ``N(theta_MAP, (J^T J / noise_var + diag(1/prior_var))^-1)``.

    The precision is the generalised Gauss-Newton approximation of the Hessian of the
    negative log posterior at the MAP (eq-bayes-laplace; MacKay, 1992): always positive
    definite, and exact for a linear model.

    Args:
        post: the network posterior.
        theta_map: the MAP estimate, shape (d,).

    Returns:
        A :class:`flt_lib.bayes.linear.GaussianPosterior`.
    """
    theta_map = _check_post_and_point(post, theta_map, "theta_map")
    return _laplace(post, theta_map)


def _laplace(post: bnn.BNNRegression, theta_map: torch.Tensor) -> GaussianPosterior:
    J = _jacobian(post, theta_map, post.x)  # (n, d)
    precision = J.T @ J / post.noise_var + torch.diag(1 / post.prior_var)
    return GaussianPosterior(
        theta_map, torch.cholesky_inverse(torch.linalg.cholesky(precision))
    )


def _jacobian(
    post: bnn.BNNRegression, theta: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """d f(x_i) / d theta at one parameter vector: (m, d)."""
    return torch.autograd.functional.jacobian(
        lambda t: bnn.forward(t[None], x, post.n_hidden)[0], theta
    )


def laplace_samples(
    post: bnn.BNNRegression,
    approx: GaussianPosterior,
    x: torch.Tensor,
    *,
    n_samples: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Function draws of the linearised Laplace predictive
    ``f(x; mu) + J(x) (theta - mu)``.

    Args:
        post: the network posterior.
        approx: the Gaussian from :func:`laplace`.
        x: test inputs, shape (m,).
        n_samples: ``S >= 1``.
        generator: CPU generator.

    Returns:
        Function values, shape (S, m).
    """
    if not isinstance(approx, GaussianPosterior):
        raise TypeError(
            f"approx must be a GaussianPosterior, got {type(approx).__name__}"
        )
    x = check_tensor(x, "x", ndim=1, floating=True, shape_doc="(m,)")
    S = check_int(n_samples, "n_samples", min_value=1)
    check_generator(generator)
    mu = approx.mean
    z = torch.randn(S, mu.shape[0], generator=generator, dtype=mu.dtype)
    delta = z @ torch.linalg.cholesky(approx.cov).T  # (S, d)
    f0 = bnn.forward(mu[None], x, post.n_hidden)  # (1, m)
    return f0 + delta @ _jacobian(post, mu, x).T  # (S, m)


@dataclass(frozen=True)
class MeanField:
    """A diagonal Gaussian ``N(mean, diag(sd^2))`` and its training curve."""

    mean: torch.Tensor  # (d,) variational mean
    sd: torch.Tensor  # (d,) variational standard deviations
    elbo: torch.Tensor  # (steps,) Monte-Carlo ELBO at each step, up to a constant


def mean_field_vi(
    post: bnn.BNNRegression,
    init: torch.Tensor,
    *,
    steps: int,
    lr: float,
    n_mc: int,
    generator: torch.Generator,
    init_sd: float = 1e-2,
) -> MeanField:
    """Fit ``q = N(m, diag(s^2))`` by maximising the ELBO (Blundell et al., 2015).

    ``ELBO = E_q[log p(D | theta)] - KL(q || prior)``: the expectation by ``n_mc``
    reparameterised draws ``theta = m + s * eps``, the KL between Gaussians in closed
    form; ``s = softplus(rho)``; Adam on ``(m, rho)``.

    Args:
        post: the network posterior.
        init: starting mean, shape (d,) (for example the MAP).
        steps: Adam steps ``>= 1``.
        lr: Adam learning rate ``> 0``.
        n_mc: Monte-Carlo draws per step ``>= 1``.
        generator: CPU generator.
        init_sd: starting standard deviation of every coordinate ``> 0``.

    Returns:
        A :class:`MeanField`.
    """
    init = _check_post_and_point(post, init, "init")
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    n_mc = check_int(n_mc, "n_mc", min_value=1)
    check_generator(generator)
    init_sd = check_real(init_sd, "init_sd", min_value=0.0, strict_min=True)
    m = init.clone().requires_grad_(True)
    rho = torch.full_like(init, math.log(math.expm1(init_sd))).requires_grad_(True)
    opt = torch.optim.Adam([m, rho], lr=lr)
    pv, elbos = post.prior_var, []
    for _ in range(steps):
        s = torch.nn.functional.softplus(rho)  # (d,)
        eps = torch.randn(n_mc, init.shape[0], generator=generator, dtype=init.dtype)
        exp_ll = post.log_likelihood(m + s * eps).mean()  # E_q log p(D|theta)
        kl = (
            0.5 * ((s**2 + m**2) / pv - 1 - torch.log(s**2 / pv)).sum()
        )  # KL(q || prior)
        elbo = exp_ll - kl
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
        elbos.append(elbo.item())
    s = torch.nn.functional.softplus(rho).detach()
    return MeanField(m.detach(), s, torch.tensor(elbos, dtype=init.dtype))


def _masks(
    S: int, H: int, p: float, generator: torch.Generator, dtype: torch.dtype
) -> torch.Tensor:
    """Inverted-dropout masks (S, H): 0 with probability p, else 1 / (1 - p)."""
    keep = torch.rand(S, H, generator=generator, dtype=dtype) >= p
    return keep.to(dtype) / (1 - p)


def mc_dropout(
    post: bnn.BNNRegression,
    init: torch.Tensor,
    *,
    p: float,
    steps: int,
    lr: float,
    n_masks: int,
    generator: torch.Generator,
) -> Fit:
    """Train one network with dropout on its hidden units (Gal & Ghahramani, 2016).

    Each Adam step minimises the mean over ``n_masks`` fresh masks of
    ``-log p(D | theta, mask)``, plus ``-log p(theta)`` (weight decay).

    Args:
        post: the network posterior (likelihood and prior).
        init: starting parameters, shape (d,).
        p: dropout probability in (0, 1).
        steps: Adam steps ``>= 1``.
        lr: Adam learning rate ``> 0``.
        n_masks: masks per step ``>= 1``.
        generator: CPU generator.

    Returns:
        A :class:`Fit` with ``theta`` (1, d).
    """
    init = _check_post_and_point(post, init, "init")
    p = check_real(p, "p", min_value=0.0, max_value=1.0, strict_min=True)
    if p >= 1:
        raise ValueError(f"p must be < 1, got {p}")
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    K = check_int(n_masks, "n_masks", min_value=1)
    check_generator(generator)
    theta = init[None].clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    for _ in range(steps):
        mask = _masks(K, post.n_hidden, p, generator, init.dtype)
        loss = (
            -post.log_likelihood(theta.expand(K, -1), mask).mean()
            - post.log_prior(theta)[0]
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return Fit(theta.detach(), -post.log_prob(theta).detach())


def mc_dropout_samples(
    post: bnn.BNNRegression,
    fit: Fit,
    x: torch.Tensor,
    *,
    p: float,
    n_samples: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Function draws ``f(x; theta, mask_s)`` with ``n_samples`` random dropout masks.

    Args:
        post: the network posterior (for ``n_hidden``).
        fit: the result of :func:`mc_dropout`.
        x: test inputs, shape (m,).
        p: the dropout probability used in training.
        n_samples: ``S >= 1``.
        generator: CPU generator.

    Returns:
        Function values, shape (S, m).
    """
    if not isinstance(fit, Fit):
        raise TypeError(f"fit must be a Fit, got {type(fit).__name__}")
    x = check_tensor(x, "x", ndim=1, floating=True, shape_doc="(m,)")
    p = check_real(p, "p", min_value=0.0, max_value=1.0, strict_min=True)
    S = check_int(n_samples, "n_samples", min_value=1)
    check_generator(generator)
    mask = _masks(S, post.n_hidden, p, generator, x.dtype)
    return bnn.forward(fit.theta[:1].expand(S, -1), x, post.n_hidden, mask)


def predictive_log_lik(f: torch.Tensor, y: torch.Tensor, noise_var: float) -> float:
    """Mean test log-likelihood of the mixture ``(1/S) sum_s N(y; f_s(x), noise_var)``.

    Args:
        f: function draws at the test inputs, shape (S, m).
        y: test targets, shape (m,).
        noise_var: observation noise variance ``> 0``.

    Returns:
        The test log-likelihood ``(1/m) sum_i log (1/S) sum_s N(y_i; f_si, noise_var)``.
    """
    f = check_tensor(f, "f", ndim=2, floating=True, shape_doc="(S, m)")
    y = check_tensor(
        y, "y", shape=(f.shape[1],), floating=True, shape_doc="(m,) like f"
    )
    nv = check_real(noise_var, "noise_var", min_value=0.0, strict_min=True)
    log_n = -((y - f) ** 2) / (2 * nv) - 0.5 * math.log(2 * math.pi * nv)  # (S, m)
    return (torch.logsumexp(log_n, 0) - math.log(f.shape[0])).mean().item()


def interval_coverage(
    f: torch.Tensor, y: torch.Tensor, noise_var: float, level: float = 0.9
) -> float:
    """Fraction of test targets inside the central ``level`` interval of the predictive.

    The interval is ``mean +- z sqrt(var_f + noise_var)`` with
    ``z = Phi^-1((1 + level)/2)``, the predictive's mean and variance taken from the
    draws (moment matching).

    Args:
        f: function draws at the test inputs, shape (S, m).
        y: test targets, shape (m,).
        noise_var: observation noise variance ``> 0``.
        level: nominal coverage in (0, 1).

    Returns:
        The empirical coverage in [0, 1].
    """
    f = check_tensor(f, "f", ndim=2, floating=True, shape_doc="(S, m)")
    y = check_tensor(
        y, "y", shape=(f.shape[1],), floating=True, shape_doc="(m,) like f"
    )
    nv = check_real(noise_var, "noise_var", min_value=0.0, strict_min=True)
    level = check_real(level, "level", min_value=0.0, max_value=1.0, strict_min=True)
    if level >= 1:
        raise ValueError(f"level must be < 1, got {level}")
    z = torch.special.ndtri(torch.tensor((1 + level) / 2, dtype=f.dtype))
    half = z * (f.var(0, correction=0) + nv).sqrt()  # (m,)
    return ((y - f.mean(0)).abs() <= half).to(f.dtype).mean().item()
