"""Tests for flt_lib.bayes.linear: the Gaussian posterior against ridge, samplers against closed forms."""

import math

import pytest
import torch

from flt_lib.bayes import linear
from flt_lib.rng import torch_generator
from flt_lib.training import regularisation


def _data(n=30, d=4, seed=0):
    g = torch_generator(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = X @ torch.randn(d, generator=g, dtype=torch.float64) + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)
    return X, y


def test_posterior_mean_is_ridge_with_lambda_noise_over_prior():
    X, y = _data()
    prior_var, noise_var = 2.0, 0.09
    post = linear.blr_posterior(X, y, prior_var=prior_var, noise_var=noise_var)
    n = X.shape[0]
    # Chapter 3's ridge minimises |Xw - y|^2 / (2n) + (lambda/2)|w|^2: lambda = noise_var / (n prior_var).
    ridge = regularisation.ridge_solution(X, y, weight_decay=noise_var / (n * prior_var))
    assert torch.allclose(post.mean, ridge, atol=1e-10, rtol=0)
    precision = X.T @ X / noise_var + torch.eye(4, dtype=X.dtype) / prior_var
    assert torch.allclose(post.cov, torch.linalg.inv(precision), atol=1e-12)


def _z_scores_cov(S, cov):
    """Entrywise z-scores of the sample covariance of iid Gaussian draws S (N, d)."""
    N = S.shape[0]
    emp = torch.cov(S.T)
    se = torch.sqrt((cov.diagonal()[:, None] * cov.diagonal()[None, :] + cov**2) / N)
    return ((emp - cov) / se).abs()


def test_sample_then_optimise_has_the_posterior_moments():
    X, y = _data()
    post = linear.blr_posterior(X, y, prior_var=1.0, noise_var=0.25)
    S = linear.sample_then_optimise(X, y, prior_var=1.0, noise_var=0.25, n_samples=20000,
                                    generator=torch_generator(1))
    z_mean = (S.mean(0) - post.mean) / (post.cov.diagonal() / S.shape[0]).sqrt()
    assert z_mean.abs().max() < 4.5
    assert _z_scores_cov(S, post.cov).max() < 4.5
    # A wrong noise variance would move the covariance by many standard errors.
    wrong = linear.blr_posterior(X, y, prior_var=1.0, noise_var=0.35)
    assert _z_scores_cov(S, wrong.cov).max() > 10


def test_sample_gaussian_moments():
    cov = torch.tensor([[1.0, 0.8], [0.8, 2.0]], dtype=torch.float64)
    S = linear.sample_gaussian(torch.tensor([1.0, -1.0], dtype=torch.float64), cov, 20000, generator=torch_generator(2))
    assert S.shape == (20000, 2)
    assert _z_scores_cov(S, cov).max() < 4.5


def test_predictive_matches_quadratic_form():
    X, y = _data()
    post = linear.blr_posterior(X, y, prior_var=1.0, noise_var=0.1)
    Xt = torch.randn(5, 4, generator=torch_generator(3), dtype=torch.float64)
    mean, var = linear.blr_predictive(post, Xt, noise_var=0.1)
    loop = torch.stack([x @ post.cov @ x for x in Xt]) + 0.1
    assert torch.allclose(mean, Xt @ post.mean) and torch.allclose(var, loop, atol=1e-12)


def test_reweighting_posterior_draws_halves_the_variance():
    mean = torch.zeros(2, dtype=torch.float64)
    cov = torch.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=torch.float64)
    S = linear.sample_gaussian(mean, cov, 40000, generator=torch_generator(4))
    x = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    f = S @ x.T                                                   # (S, 1)
    exact = (x @ cov @ x.T).item()
    _, var_plain = linear.ensemble_predictive(f)
    lw = -0.5 * ((S @ torch.linalg.inv(cov)) * S).sum(1)          # log posterior density
    _, var_w = linear.ensemble_predictive(f, lw)
    ess = linear.kish_ess(lw)
    assert abs(var_plain.item() / exact - 1) < 4 * math.sqrt(2 / S.shape[0])
    assert abs(var_w.item() / exact - 0.5) < 4 * 0.5 * math.sqrt(2 / ess)


def test_kish_ess_extremes():
    assert linear.kish_ess(torch.zeros(10, dtype=torch.float64)) == pytest.approx(10.0)
    assert linear.kish_ess(torch.tensor([0.0, -1e3, -1e3], dtype=torch.float64)) == pytest.approx(1.0)


def test_bad_inputs():
    X, y = _data()
    with pytest.raises(ValueError, match="X must be a 2-D tensor"):
        linear.blr_posterior(X[0], y, prior_var=1.0, noise_var=1.0)
    with pytest.raises(ValueError, match="prior_var must be > 0"):
        linear.blr_posterior(X, y, prior_var=0.0, noise_var=1.0)
    with pytest.raises(TypeError, match="post must be a GaussianPosterior"):
        linear.blr_predictive("post", X)
    post = linear.blr_posterior(X, y, prior_var=1.0, noise_var=1.0)
    with pytest.raises(ValueError, match="X_test must have shape"):
        linear.blr_predictive(post, torch.ones(3, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        linear.sample_gaussian(post.mean, post.cov, 0, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        linear.sample_then_optimise(X, y, prior_var=1.0, noise_var=1.0, n_samples=2, generator=0)
    with pytest.raises(ValueError, match="log_weights must have shape"):
        linear.ensemble_predictive(torch.ones(4, 2, dtype=torch.float64), torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="log_weights must be a 1-D tensor"):
        linear.kish_ess(torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="cov must have shape"):
        linear.GaussianPosterior(torch.zeros(2, dtype=torch.float64), torch.eye(3, dtype=torch.float64))
